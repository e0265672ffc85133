// SPDX-License-Identifier: Apache-2.0
#include "node.hpp"

#include <algorithm>

#include "crc.hpp"

namespace ni {

// ------------------------------------------------------------------ memory
uint8_t Memory::get(uint64_t a) const {
  auto it = pages_.find(a >> 12);
  return it == pages_.end() ? 0 : it->second[a & 0xFFF];
}
void Memory::set(uint64_t a, uint8_t v) {
  auto& pg = pages_[a >> 12];
  if (pg.empty()) pg.assign(4096, 0);
  pg[a & 0xFFF] = v;
}
Bytes Memory::read(uint64_t a, size_t n) const {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = get(a + i);
  return b;
}
void Memory::write(uint64_t a, const Bytes& b) {
  for (size_t i = 0; i < b.size(); ++i) set(a + i, b[i]);
}

// ------------------------------------------------------------------ host link
Bytes HostLink::withDigest(const Bytes& tlp) {
  // The NI does not check ECRC (PCIe lets a receiver ignore the digest), so the value is
  // a CRC-32 of the TLP as it is, not ECRC's (which masks the fields a switch may change).
  Bytes t = tlp;
  if (t.size() > 2) t[2] |= 0x80;
  const uint32_t ecrc = crc32(t.data(), t.size());
  for (int i = 3; i >= 0; --i) t.push_back(static_cast<uint8_t>(ecrc >> (8 * i)));
  return t;
}

Beat HostLink::currentBeat() const {
  const Bytes& t = outQ_.front();
  Beat b;
  b.data.assign(bpb_, 0);
  for (unsigned j = 0; j < bpb_ && off_ + j < t.size(); ++j) {
    b.data[j] = t[off_ + j];
    b.keep |= uint64_t{1} << j;
  }
  b.last = off_ + bpb_ >= t.size();
  const TlpShape& s = shapes_.front();
  if (s.holeBeat >= 0 && off_ == static_cast<size_t>(s.holeBeat) * bpb_) b.keep &= ~s.holeKeep;
  return b;
}

void HostLink::advance() {
  off_ += bpb_;
  if (off_ >= outQ_.front().size()) {
    outQ_.pop_front();
    shapes_.pop_front();
    off_ = 0;
  }
}

bool HostLink::collect(const Beat& b, Bytes* tlp, bool* nullified) {
  for (unsigned j = 0; j < bpb_; ++j)
    if (b.keep >> j & 1) rx_.push_back(b.data[j]);
  if (!b.last) return false;
  *tlp = std::move(rx_);
  *nullified = b.user;
  rx_.clear();
  return true;
}

// ------------------------------------------------------------------ node
Node::Node(unsigned index, unsigned bpb, uint64_t seed, unsigned cpus, unsigned rails)
    : index_(index), cpus_(cpus), nextTag_(cpus, 0), reqRoom_(rails, true), rng_(seed) {
  for (unsigned p = 0; p < cpus * rails; ++p) ports_.emplace_back(bpb);
}

uint16_t Node::allocTag(unsigned cpu) {
  // 8-bit tags: 0x00-0xFF. 10-bit tags: 0x100-0x3FF (PCIe forbids T9:T8 = 00 to a
  // requester using 10-bit tags).
  const unsigned first = tenBitTags_ ? 0x100 : 0, count = tenBitTags_ ? 0x300 : 0x100;
  uint16_t& next = nextTag_[cpu];  // offset from first
  for (unsigned i = 0; i < count; ++i) {
    const uint16_t t = static_cast<uint16_t>(first + next % count);
    next = static_cast<uint16_t>((next + 1) % count);
    if (!tags_.count(cpu << 10 | t)) return t;
  }
  return static_cast<uint16_t>(first + next);  // every tag of one CPU in flight: the caller should not do that
}

namespace {
// A CPU's request as the root complex sends it: the 3 DW header below 4 GiB (PCIe).
Bytes requestTlp(Tlp t) {
  t.threeDw = t.addr < (uint64_t{1} << 32);
  return encodeTlp(t);
}
}  // namespace

void Node::store(uint64_t addr, const Bytes& data, Via via) {
  size_t off = 0;
  while (off < data.size()) {
    const uint64_t a = addr + off;
    const size_t n = requestChunk(a, data.size() - off, maxPayload_);
    Bytes chunk(data.begin() + static_cast<long>(off), data.begin() + static_cast<long>(off + n));
    link(via).toNi.pushTlp(requestTlp(makeMWr(cpuReqId(via.cpu), 0, a, chunk)));
    ++st_.tlpsToNi;
    st_.storeBytes += n;
    off += n;
  }
}

uint64_t Node::newLoad(size_t len, LoadCb cb) {
  const uint64_t id = nextLoadId_++;
  PendingLoad& pl = loads_[id];
  pl.remaining = len;
  pl.data.assign(len, 0);
  pl.cb = std::move(cb);
  pl.issued = now_;
  return id;
}

void Node::load(uint64_t addr, size_t len, LoadCb cb, Via via) {
  const unsigned cpu = via.cpu;
  const uint64_t id = newLoad(len, std::move(cb));
  size_t off = 0;
  while (off < len) {
    const uint64_t a = addr + off;
    const size_t n = requestChunk(a, len - off, maxPayload_);
    const uint16_t tag = allocTag(cpu);
    tags_[cpu << 10 | tag] = TagUse{id, off, n};
    link(via).toNi.pushTlp(requestTlp(makeMRd(cpuReqId(cpu), tag, a, static_cast<uint16_t>(n))));
    ++st_.tlpsToNi;
    off += n;
  }
}

void Node::issueAnswered(Tlp t, size_t answerBytes, LoadCb cb, Via via) {
  const uint64_t id = newLoad(answerBytes, std::move(cb));
  t.tag = allocTag(via.cpu);
  tags_[via.cpu << 10 | t.tag] = TagUse{id, 0, answerBytes};
  link(via).toNi.pushTlp(requestTlp(t));
  ++st_.tlpsToNi;
}

void Node::atomic(TlpKind kind, uint64_t addr, const Bytes& operands, LoadCb cb, Via via) {
  const Tlp t = makeAtomic(kind, cpuReqId(via.cpu), 0, addr, operands);
  issueAnswered(t, std::max(4u, atomicOperandBytes(t)), std::move(cb), via);  // a malformed one is answered with UR
}

void Node::confirmedStore(uint64_t addr, const Bytes& data, LoadCb cb, Via via) {
  issueAnswered(makeDMWr(cpuReqId(via.cpu), 0, addr, data), 8, std::move(cb), via);
  st_.storeBytes += data.size();
}

void Node::csrWrite(uint32_t off, uint32_t value, Via via) {
  store(kCsrBase + off, le32(value), via);
}

void Node::csrRead(uint32_t off, std::function<void(uint32_t, bool)> cb, Via via) {
  load(kCsrBase + off, 4, [cb](const LoadResult& r) {
    cb(r.ok ? static_cast<uint32_t>(getLe(r.data.data(), 4)) : 0, r.ok);
  }, via);
}

bool Node::idle() const {
  for (const Port& p : ports_)
    if (p.toNi.hasBeat() || !p.memToNi.empty() || p.memLink.hasBeat() || p.fromNi.receiving()) return false;
  return loads_.empty();
}

void Node::fillNicIn(NicIn& in, unsigned rail) {
  // Root complex toward the NI, on each link: whole TLPs, memory completions and CPU
  // requests taking turns when both wait. A request starts only when the NI has room
  // for all of it, so it never blocks the completions behind it.
  for (unsigned i = 0; i < cpus_; ++i) {
    Port& p = link({i, rail});
    if (p.sending == Src::None) {
      const bool mem = !p.memToNi.empty() && p.memToNi.front().first <= now_;
      const bool cpu = p.toNi.hasBeat() && reqRoom_[rail];
      if (mem && (!cpu || p.lastSent == Src::Cpu)) {
        p.memLink.pushTlp(p.memToNi.front().second);
        p.memToNi.pop_front();
        p.sending = p.lastSent = Src::Mem;
      } else if (cpu) {
        p.sending = p.lastSent = Src::Cpu;
      }
    }
    HostPortIn& h = in.host[i];
    h.inValid = p.sending != Src::None;
    if (h.inValid) h.in = (p.sending == Src::Mem ? p.memLink : p.toNi).currentBeat();
    if (h.inValid && p.held && p.sending == Src::Cpu && p.toNi.shape().withdraw) {
      h.inValid = false;  // a broken host: tvalid withdrawn before the handshake
      p.toNi.shape().withdraw = false;
    }
    p.outReady = !p.stopped &&
                 (stallProb_ <= 0.0 || std::uniform_real_distribution<double>(0, 1)(rng_) >= stallProb_);
    h.outReady = p.outReady;
  }
}

void Node::afterCycle(const NicIn& in, const NicOut& out, unsigned rail) {
  reqRoom_[rail] = out.hostReqRoom;
  for (unsigned i = 0; i < cpus_; ++i) {
    Port& p = link({i, rail});
    const HostPortIn& hi = in.host[i];
    const HostPortOut& ho = out.host[i];
    p.held = hi.inValid && !ho.inReady;
    if (hi.inValid && ho.inReady) {
      HostLink& l = p.sending == Src::Mem ? p.memLink : p.toNi;
      const bool last = hi.in.last;
      l.advance();
      if (last) p.sending = Src::None;
    }
    if (!ho.outValid || !hi.outReady) continue;
    Bytes raw;
    bool nullified = false;
    if (!p.fromNi.collect(ho.out, &raw, &nullified)) continue;
    ++st_.tlpsFromNi;
    if (nullified) {
      ++st_.nullified;  // a nullified TLP is discarded by the root complex
    } else if (auto t = decodeTlp(raw)) {
      if (!t->isCompletion()) {
        memoryAccept(*t, p, i);
      } else if (t->requester == cpuReqId(i)) {
        if (cpuCplObserver_) cpuCplObserver_(*t);
        ++st_.cpuCompletions[i];
        cpuCompletion(*t, i);
      } else {
        ++st_.unexpectedCpl;
        if (t->requester >> 8 < cpus_ && (t->requester & 0xFF) == kCpuReqId) ++st_.wrongPort;
      }
    } else {
      ++st_.undecodable;
    }
  }
}

void Node::endCycle() {
  // Completion timeout of the CPU (PCIe requesters have one too).
  for (auto it = loads_.begin(); it != loads_.end();) {
    if (now_ - it->second.issued > cplTimeout_) {
      LoadResult r;
      r.timedOut = true;
      ++st_.timeouts;
      for (auto t = tags_.begin(); t != tags_.end();) t = (t->second.load == it->first) ? tags_.erase(t) : std::next(t);
      auto cb = std::move(it->second.cb);
      it = loads_.erase(it);
      if (cb) cb(r);
    } else {
      ++it;
    }
  }
  ++now_;
}

void Node::memoryAccept(const Tlp& t, Port& port, unsigned cpu) {
  if (memRequestObserver_) memRequestObserver_(t);
  if (t.kind == TlpKind::DMWr && loseDmwr_ > 0 && std::uniform_real_distribution<double>(0, 1)(rng_) < loseDmwr_) {
    ++st_.memLost;
    return;
  }
  if (t.kind == TlpKind::MWr || t.kind == TlpKind::DMWr) {
    const size_t n = t.data.size();
    for (size_t i = 0; i < n; ++i) {
      const size_t dw = i / 4;
      const uint8_t be = (dw == 0) ? t.firstBe : (dw == n / 4 - 1 ? t.lastBe : 0xF);
      if (be >> (i % 4) & 1) mem_.set(t.addr + i, t.data[i]);
    }
    ++st_.memWrites;
    if (memWriteObserver_) memWriteObserver_(t, cpu);
    // A DMWr is confirmed once applied: the confirmation names the address written.
    if (t.kind == TlpKind::DMWr)
      port.memToNi.push_back({now_ + memLatency_, encodeTlp(makeWriteConfirmation(kMemCplId, t.requester, t.tag, t.addr))});
  } else if (t.kind == TlpKind::MRd) {
    const size_t n = (t.lengthDw == 0 ? 1024u : t.lengthDw) * 4u;
    // One completion for the whole read: its Lower Address names the first enabled
    // byte and its Byte Count the enabled bytes; the data starts at the aligned DW.
    Tlp c = makeCplD(kMemCplId, t.requester, t.tag, t.addr | firstEnabledByte(t.firstBe), mem_.read(t.addr, n));
    c.byteCount = static_cast<uint16_t>(enabledSpan(t) & 0xFFF);
    Bytes bytes = encodeTlp(c);
    const int fault = readCplFault_ ? readCplFault_(t) : 0;
    if (fault < 0) bytes.resize(bytes.size() - std::min(bytes.size(), static_cast<size_t>(-fault)));
    for (int i = 0; i < fault; ++i) bytes.push_back(static_cast<uint8_t>(0xA5 ^ i));
    port.memToNi.push_back({now_ + memLatency_, bytes});
    ++st_.memReads;
  } else if (isAtomic(t.kind)) {
    // The memory system executes the AtomicOp in one step and returns the old value.
    Tlp c;
    if (atomicWellFormed(t)) {
      const unsigned op = atomicOperandBytes(t);
      const Bytes old = mem_.read(t.addr, op);
      mem_.write(t.addr, atomicResult(t, old));
      c = makeCplD(kMemCplId, t.requester, t.tag, t.addr, old);
    } else {
      c = makeCpl(kMemCplId, t.requester, t.tag, CplStatus::UR, 4, t.addr & 0x7F);
    }
    port.memToNi.push_back({now_ + memLatency_, encodeTlp(c)});
    ++st_.memAtomics;
  }
}

void Node::cpuCompletion(const Tlp& t, unsigned cpu) {
  auto it = tags_.find(cpu << 10 | t.tag);
  if (it == tags_.end()) {
    ++st_.unexpectedCpl;
    return;
  }
  const TagUse use = it->second;
  tags_.erase(it);
  auto lit = loads_.find(use.load);
  if (lit == loads_.end()) return;
  PendingLoad& pl = lit->second;
  if (t.status != CplStatus::SC || t.kind != TlpKind::CplD) {
    pl.failed = true;
    pl.status = t.status;
  } else {
    // The data starts at the DW holding the first byte asked for (Lower Address).
    const size_t skip = t.lowerAddr & 3;
    const size_t have = t.data.size() > skip ? t.data.size() - skip : 0;
    std::copy_n(t.data.begin() + static_cast<long>(skip), std::min(use.len, have),
                pl.data.begin() + static_cast<long>(use.off));
  }
  pl.remaining -= std::min(pl.remaining, use.len);
  if (pl.remaining == 0) finishLoad(use.load);
}

void Node::finishLoad(uint64_t id) {
  auto it = loads_.find(id);
  LoadResult r;
  r.ok = !it->second.failed;
  r.status = it->second.status;
  r.data = std::move(it->second.data);
  auto cb = std::move(it->second.cb);
  loads_.erase(it);
  ++st_.loadsDone;
  if (!r.ok) ++st_.loadErrors;
  if (cb) cb(r);
}

}  // namespace ni

// SPDX-License-Identifier: Apache-2.0
#include "fabric.hpp"

#include <algorithm>
#include <cmath>

#include "address_map.hpp"
#include "fabric_pkt.hpp"

namespace ni {

Fabric::Fabric(const FabricConfig& c) : cfg_(c), ports_(c.ports), faultRng_(c.faults.seed) {
  for (auto& p : ports_) p.creditsToGive[0] = p.creditsToGive[1] = c.inputCredits;
  if (cfg_.topology.dims.empty() || cfg_.topology.nodes() != c.ports) cfg_.topology = Topology::crossbar(c.ports);
  if (!cfg_.topology.direct()) return;
  const unsigned np = cfg_.topology.ports();
  sw_.resize(c.ports);
  for (auto& w : sw_) {
    w.in.resize(np * kVcs);
    w.out.resize(np);
    w.rr.assign(np, 0);
    for (auto& l : w.out)
      for (unsigned v = 0; v < kVcs; ++v) l.credits[v] = c.inputCredits;
  }
}

void Fabric::free(const Slot& s) {
  if (s.kind == Slot::Kind::Ni) {
    ++ports_[s.sw].creditsToGive[s.vc & 1];
    --ports_[s.sw].held[s.vc & 1];
  } else if (s.kind == Slot::Kind::Link) creditsBack_.push_back({now_ + cfg_.linkLatency, s.sw, s.port, s.vc});
}

void Fabric::retrainLinks() {
  for (auto& p : ports_) {
    if (p.sending) free(p.cur.slot);
    p.sending = false;
    p.rx.clear();
    for (unsigned v = 0; v < 2; ++v) {
      p.creditsToGive[v] = cfg_.inputCredits - p.held[v];
      p.niCredits[v] = 0;
    }
  }
}

double Fabric::busiestLink() const {
  uint64_t most = 0;
  for (auto& w : sw_)
    for (auto& l : w.out) most = std::max(most, l.busy);
  return now_ ? double(most) / double(now_) : 0.0;
}

uint64_t Fabric::packetLifetime(size_t maxPacketBytes) const {
  const double bw = cfg_.linkBytesPerCycle > 0 ? std::min<double>(cfg_.linkBytesPerCycle, cfg_.bytesPerBeat)
                                               : double(cfg_.bytesPerBeat);
  const auto packetCycles = static_cast<uint64_t>(std::ceil(double(maxPacketBytes) / bw));
  const Topology& t = cfg_.topology;
  // Inputs of a switch: port x virtual channel (both classes; a ring's two per class).
  const uint64_t inputs = t.direct() ? uint64_t{t.ports()} * kVcs : uint64_t{cfg_.ports} * 2;
  uint64_t switches = 1;  // on the longest route
  if (t.direct())
    for (unsigned d : t.dims) switches += d / 2;
  const uint64_t perSwitch = uint64_t{cfg_.inputCredits} * inputs * packetCycles;
  return switches * perSwitch + (switches + 1) * cfg_.linkLatency;
}

// Into switch `sw`'s input from its NI, toward node `dst`.
void Fabric::toSwitch(unsigned sw, unsigned dst, Pkt pkt) {
  const unsigned cls = pkt.vc & 1;
  sw_[sw].in[cls].push_back(Hop{std::move(pkt), dst, cfg_.topology.route(sw, dst), cls, -1});
  ++sw_[sw].queued;
}

// Every switch output takes one packet whose time has come, round robin over the
// switch's inputs: to the NI's output queue (the packet keeps its buffer slot until
// it has left toward the NI), or over a link when the link is free and the next
// switch has a slot in the packet's next virtual channel.
void Fabric::stepSwitches() {
  const Topology& t = cfg_.topology;
  const unsigned np = t.ports(), nin = np * kVcs;
  const double bw = cfg_.linkBytesPerCycle > 0 ? cfg_.linkBytesPerCycle : double(cfg_.bytesPerBeat);
  for (unsigned s = 0; s < sw_.size(); ++s) {
    Switch& w = sw_[s];
    if (!w.queued) continue;
    for (unsigned o = 0; o < np; ++o) {
      if (o > 0 && w.out[o].busyUntil > now_) continue;
      for (unsigned k = 0; k < nin; ++k) {
        const unsigned i = (w.rr[o] + k) % nin;
        auto& q = w.in[i];
        if (q.empty() || q.front().pkt.ready > now_ || q.front().out != o) continue;
        if (o == 0) {
          Pkt p = std::move(q.front().pkt);
          q.pop_front();
          p.ready = now_;
          enqueue(s, std::move(p));
        } else {
          // The next virtual channel: the upper one of the class once the packet has
          // crossed this ring's dateline (a new dimension starts on the lower one).
          const int dim = static_cast<int>((o - 1) / 2);
          const bool cross = t.crossesDateline(s, o);
          const Hop& f = q.front();
          const unsigned dl = cfg_.datelineVcs && (cross || (f.dim == dim && f.vc >= 2)) ? 1 : 0;
          const unsigned vc = (f.pkt.vc & 1) + 2 * dl;
          Link& l = w.out[o];
          if (l.credits[vc] == 0) continue;
          Hop h = std::move(q.front());
          q.pop_front();
          --l.credits[vc];
          const auto ser = static_cast<uint64_t>(std::ceil(double(h.pkt.bytes.size()) / bw));
          l.busyUntil = now_ + ser;
          l.busy += ser;
          ++l.packets;
          ++st_.linkHops;
          if (cross) ++st_.datelineHops;
          free(h.pkt.slot);
          h.pkt.slot = Slot{Slot::Kind::Link, s, o, vc};
          h.pkt.ready = now_ + ser + cfg_.linkLatency;
          h.vc = vc;
          h.dim = dim;
          const unsigned to = t.neighbour(s, o);
          h.out = t.route(to, h.dst);
          Switch& next = sw_[to];
          next.in[Topology::opposite(o) * kVcs + vc].push_back(std::move(h));
          ++next.queued;
        }
        --w.queued;
        w.rr[o] = (i + 1) % nin;
        break;
      }
    }
  }
}

void Fabric::endCycle() {
  if (!sw_.empty()) stepSwitches();
  while (!creditsBack_.empty() && creditsBack_.front().at <= now_) {
    const CreditBack& c = creditsBack_.front();
    ++sw_[c.sw].out[c.port].credits[c.vc];
    creditsBack_.pop_front();
  }
  ++now_;
}

bool Fabric::linkDown(unsigned port) const {
  for (const auto& d : cfg_.faults.linkDown)
    if (d.port == port && now_ >= d.from && (d.until == 0 || now_ < d.until)) return true;
  return false;
}

// Into the output queue of port `dst`; a reordered packet overtakes the one queued before it.
void Fabric::enqueue(unsigned dst, Pkt pkt) {
  ++st_.delivered;
  if (cfg_.capturePoint == CaptureWriter::Point::Rx)
    tap_.write(static_cast<uint64_t>(static_cast<double>(now_) * cfg_.clockNs), pkt.bytes, dst, CaptureWriter::Point::Rx);
  FabError err;
  const auto d = decodeFabric(pkt.bytes, &err);
  if (!d && (err == FabError::BadIcrc || err == FabError::BadVcrc || err == FabError::BadLength ||
             err == FabError::Truncated))
    ++st_.crcErrors;
  if (d && d->isCont()) ++st_.continuations;
  auto& q = ports_[dst].out[pkt.vc];
  if (!q.empty() && chance(cfg_.faults.reorder)) {
    q.insert(q.end() - 1, std::move(pkt));
    ++st_.reordered;
  } else {
    q.push_back(std::move(pkt));
  }
}

bool Fabric::idle() const {
  for (auto& p : ports_)
    if (!p.rx.empty() || p.sending || !p.out[0].empty() || !p.out[1].empty()) return false;
  for (auto& w : sw_)
    if (w.queued) return false;
  return true;
}

void Fabric::fillNicIn(unsigned port, NicIn& in) {
  Port& p = ports_[port];
  // Credits owed to the NI for our input buffers: one pulse per VC per cycle.
  in.fabTxCredit = 0;
  for (unsigned v = 0; v < 2; ++v)
    if (p.creditsToGive[v]) in.fabTxCredit |= static_cast<uint8_t>(1u << v);
  // Link bandwidth toward the switch: accept a beat only with budget.
  if (cfg_.linkBytesPerCycle > 0) p.rxBudget = std::min(p.rxBudget + cfg_.linkBytesPerCycle, 2.0 * cfg_.bytesPerBeat);
  in.fabOutReady = cfg_.linkBytesPerCycle <= 0 || p.rxBudget >= cfg_.bytesPerBeat;
  // Toward the NI: start a packet of a VC that has NI credit, responses first.
  if (!p.sending) {
    for (int v = 1; v >= 0; --v) {
      if (!p.out[v].empty() && p.niCredits[v] > 0 && p.out[v].front().ready <= now_) {
        p.cur = std::move(p.out[v].front());
        p.out[v].pop_front();
        --p.niCredits[v];
        p.sending = true;
        p.off = 0;
        break;
      }
    }
  }
  if (cfg_.linkBytesPerCycle > 0) p.txBudget = std::min(p.txBudget + cfg_.linkBytesPerCycle, 2.0 * cfg_.bytesPerBeat);
  in.fabInValid = p.sending && (cfg_.linkBytesPerCycle <= 0 || p.txBudget >= cfg_.bytesPerBeat);
  if (in.fabInValid) {
    Beat b;
    b.data.assign(cfg_.bytesPerBeat, 0);
    for (unsigned j = 0; j < cfg_.bytesPerBeat && p.off + j < p.cur.bytes.size(); ++j) {
      b.data[j] = p.cur.bytes[p.off + j];
      b.keep |= uint64_t{1} << j;
    }
    b.last = p.off + cfg_.bytesPerBeat >= p.cur.bytes.size();
    b.dest = p.cur.vc;
    in.fabIn = b;
  }
}

void Fabric::afterCycle(unsigned port, const NicIn& in, const NicOut& out) {
  Port& p = ports_[port];
  for (unsigned v = 0; v < 2; ++v) {
    if (in.fabTxCredit >> v & 1) --p.creditsToGive[v];
    if (out.fabRxCredit >> v & 1) ++p.niCredits[v];
  }
  if (out.fabOutValid && in.fabOutReady) {
    if (cfg_.linkBytesPerCycle > 0) p.rxBudget -= cfg_.bytesPerBeat;
    for (unsigned j = 0; j < cfg_.bytesPerBeat; ++j)
      if (out.fabOut.keep >> j & 1) p.rx.push_back(out.fabOut.data[j]);
    p.rxVc = out.fabOut.dest;
    if (out.fabOut.last) {
      ingress(port, std::move(p.rx), p.rxVc);
      p.rx.clear();
    }
  }
  if (in.fabInValid && out.fabInReady) {
    if (cfg_.linkBytesPerCycle > 0) p.txBudget -= cfg_.bytesPerBeat;
    p.off += cfg_.bytesPerBeat;
    if (in.fabIn.last) {
      p.sending = false;
      free(p.cur.slot);  // the buffer slot it held in the switch frees up
    }
  }
}

void Fabric::ingress(unsigned port, Bytes pkt, uint8_t vc) {
  Port& src = ports_[port];
  if (src.corrupt > 0 && pkt.size() > 20) {
    --src.corrupt;
    pkt[pkt.size() / 2] ^= 0x10;  // one payload bit: caught by ICRC/VCRC at the receiver
    ++st_.corrupted;
  }
  if (cfg_.capturePoint == CaptureWriter::Point::Tx)
    tap_.write(static_cast<uint64_t>(static_cast<double>(now_) * cfg_.clockNs), pkt, port, CaptureWriter::Point::Tx);
  if (ingressObserver_) ingressObserver_(pkt, port);
  ++st_.packets;
  st_.bytes += pkt.size();
  ++st_.perVc[vc & 1];
  st_.perVcBytes[vc & 1] += pkt.size();
  const FabricFaults& f = cfg_.faults;
  if (f.any()) {
    const bool down = linkDown(port);
    if (down || chance(f.drop)) {
      ++(down ? st_.linkDownDrops : st_.faultDrops);
      ++src.creditsToGive[vc & 1];
      return;
    }
    if (chance(f.corrupt) && !pkt.empty()) {
      const size_t bit = std::uniform_int_distribution<size_t>(0, pkt.size() * 8 - 1)(faultRng_);
      pkt[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
      ++st_.corrupted;
    }
  }
  // Toward node dst: its output queue on the crossbar, else into the network at this
  // port's switch.
  auto deliver = [&](unsigned dst, Pkt p) {
    if (sw_.empty()) enqueue(dst, std::move(p));
    else toSwitch(port, dst, std::move(p));
  };
  const uint16_t dlid = pkt.size() >= 8 ? static_cast<uint16_t>(getBe(&pkt[2], 2)) : 0;
  if (dlid >= 0xC000) {
    // Multicast: a copy into each member's output queue, and the input slot is free at once.
    ++src.creditsToGive[vc & 1];
    auto g = groups_.find(dlid);
    unsigned copies = 0;
    if (g != groups_.end())
      for (unsigned m : g->second)
        if (m != port && m < ports_.size()) {
          deliver(m, Pkt{pkt, static_cast<uint8_t>(vc & 1), Slot{}, now_ + cfg_.linkLatency});
          ++copies;
        }
    st_.mcastCopies += copies;
    if (!copies) ++st_.mcastDropped;
    return;
  }
  if (dlid == 0 || dlid > ports_.size()) {
    ++st_.dropped;  // no such node: the switch drops it
    ++src.creditsToGive[vc & 1];
    return;
  }
  if (f.any() && linkDown(dlid - 1)) {
    ++st_.linkDownDrops;
    ++src.creditsToGive[vc & 1];
    return;
  }
  if (chance(f.duplicate)) {
    deliver(dlid - 1, Pkt{pkt, static_cast<uint8_t>(vc & 1), Slot{}, now_ + cfg_.linkLatency});
    ++st_.duplicates;
  }
  ++src.held[vc & 1];
  deliver(dlid - 1, Pkt{std::move(pkt), static_cast<uint8_t>(vc & 1), Slot{Slot::Kind::Ni, port, 0, vc & 1u},
                        now_ + cfg_.linkLatency});
}

}  // namespace ni

// SPDX-License-Identifier: Apache-2.0
#include "fabric_fuzz.hpp"

#include <verilated.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <memory>
#include <random>

#include "address_map.hpp"
#include "clocked.hpp"
#include "driver.hpp"
#include "fabric_pkt.hpp"
#include "ni_regs.hpp"
#include "nic_model.hpp"
#include "node.hpp"
#include "tlp.hpp"

namespace ni::fuzz {

namespace {

constexpr unsigned kNode = 4;  // the NI under test
constexpr uint16_t kLid = lidOf(kNode);
constexpr unsigned kPeerNode = 8;  // where the CPU's own requests go; only the input answers them
constexpr uint16_t kPeerLid = lidOf(kPeerNode);
constexpr uint16_t kGroup = 0xC005;
constexpr uint64_t kIntrAddr = 0xFEE0'0000ull;
constexpr size_t kLenMask = 0x3FF;
constexpr uint64_t kStuckCycles = 20000;   // no fabric input taken for this long: a hang
constexpr uint64_t kSettleCycles = 60000;  // to settle after the input (timers included)
const double kStall[4] = {0.0, 0.1, 0.4, 0.8};

// What this node exports: memory IDs 0 to 2. ID 3 is programmed but not valid.
const std::array<MemRegion, 4> kRegions = {{
    {true, 0x0000'0010'0000'0000ull, 64 << 10, true, true, true},
    {true, 0x0000'0020'0040'0000ull, 8 << 10, true, true, false},
    {true, 0x0000'0030'0000'0000ull, 16 << 10, true, false, false},
    {false, 0x0000'0040'0000'0000ull, 16 << 10, true, true, true},
}};

struct Record {
  Bytes bytes;  // as the NI gets them (sealed if asked)
  uint8_t vc = 0;
  bool bubbles = false;
  unsigned gap = 0;
};

std::vector<Record> parse(const uint8_t* d, size_t n, uint8_t* profile) {
  std::vector<Record> v;
  *profile = n ? d[0] : 0;
  for (InputRecord& in : inputRecords(d, n)) {
    const uint8_t ctrl = in.ctrl;
    Record r;
    r.bytes = std::move(in.body);
    if (ctrl & 1) sealFabric(r.bytes);
    if (r.bytes.empty()) continue;
    r.vc = ctrl >> 1 & 1;
    r.bubbles = ctrl >> 2 & 1;
    r.gap = 16u * (ctrl >> 3);
    v.push_back(std::move(r));
  }
  return v;
}

// The fabric end of the NI: plays the records into its receive port under the
// credits it grants, and takes (and credits) what it sends.
class FabricEnd {
 public:
  FabricEnd(unsigned bpb, double stall) : in_(bpb), out_(bpb), stall_(stall), rng_(1) {}

  void queue(std::vector<Record> rs) { pending_.insert(pending_.end(), rs.begin(), rs.end()); }
  bool sourceDone() const { return pending_.empty() && !active_; }
  bool idle() const { return sourceDone() && !out_.receiving(); }
  unsigned credits(unsigned vc) const { return credits_[vc]; }
  uint64_t taken() const { return taken_; }
  std::vector<Bytes>& sent() { return sent_; }

  void fill(NicIn& in, uint64_t cycle) {
    if (!active_ && !pending_.empty()) {
      Record& r = pending_.front();
      if (r.gap) {
        --r.gap;
      } else if (credits_[r.vc]) {
        --credits_[r.vc];
        if (log_) {
          const auto p = decodeFabric(r.bytes);
          std::fprintf(stderr, "%8llu fabric -> NI  %s\n", static_cast<unsigned long long>(cycle),
                       p ? describe(*p).c_str() : "(does not decode)");
        }
        in_.pushTlp(r.bytes);
        vc_ = r.vc;
        bubbles_ = r.bubbles;
        active_ = true;
        pending_.pop_front();
      }
    }
    if (active_ && (holding_ || !bubbles_ || !(cycle & 1))) {
      in.fabInValid = holding_ = true;
      in.fabIn = in_.currentBeat();
      in.fabIn.dest = vc_;
    }
    in.fabOutReady = !(stall_ > 0 && std::uniform_real_distribution<double>(0, 1)(rng_) < stall_);
    for (unsigned v = 0; v < 2; ++v)
      if (toGive_[v]) in.fabTxCredit |= static_cast<uint8_t>(1u << v);
  }

  void after(const NicIn& in, const NicOut& out, uint64_t cycle) {
    for (unsigned v = 0; v < 2; ++v) {
      if (in.fabTxCredit >> v & 1) --toGive_[v];
      if (out.fabRxCredit >> v & 1) ++credits_[v];
    }
    if (in.fabInValid && out.fabInReady) {
      const bool last = in.fabIn.last;
      in_.advance();
      holding_ = false;
      ++taken_;
      if (last) active_ = false;
    }
    if (out.fabOutValid && in.fabOutReady) {
      Bytes pkt;
      bool unused = false;
      if (out_.collect(out.fabOut, &pkt, &unused)) {
        ++toGive_[out.fabOut.dest & 1];
        if (log_) {
          const auto p = decodeFabric(pkt);
          std::fprintf(stderr, "%8llu NI -> fabric  %s\n", static_cast<unsigned long long>(cycle),
                       p ? describe(*p).c_str() : "(does not decode)");
        }
        sent_.push_back(std::move(pkt));
      }
    }
  }

 private:
  HostLink in_, out_;  // bytes <-> beats, as on the host link
  double stall_;
  std::mt19937_64 rng_;
  std::deque<Record> pending_;
  bool active_ = false, holding_ = false, bubbles_ = false;
  uint8_t vc_ = 0;
  unsigned credits_[2] = {0, 0};  // granted by the NI, not yet used
  unsigned toGive_[2] = {4, 4};   // credits of our input buffers we still owe the NI
  uint64_t taken_ = 0;            // beats the NI took
  std::vector<Bytes> sent_;
  const bool log_ = std::getenv("NI_FUZZ_LOG") != nullptr;
};

bool allows(const MemRegion& r, MemOp op) {
  return op == MemOp::Read ? r.read : op == MemOp::Write ? r.write : r.atomic;
}

// A packet whose framing the NI must refuse: the golden decoder finds its length or
// CRCs wrong, or it is longer than the NI's largest packet.
bool frameBad(const Bytes& b, unsigned maxPayload) {
  FabError err = FabError::None;
  decodeFabric(b, &err);
  return err == FabError::Truncated || err == FabError::BadLength || err == FabError::BadIcrc ||
         err == FabError::BadVcrc || b.size() > maxPayload + kFabHdrBytes + 16 + kTrailerBytes;
}

class Run {
 public:
  Run(unsigned dataBits, uint8_t profile)
      : ctx_(std::make_unique<VerilatedContext>()),
        nic_(makeNic(dataBits, ctx_.get(), "fuzz")),
        node_(kNode, nic_->bytesPerBeat(), 1),
        fab_(nic_->bytesPerBeat(), kStall[profile >> 2 & 3]),
        clock_(ctx_.get()) {
    ctx_->fatalOnError(false);
    ctx_->randReset(0);
    clock_.add(nic_.get());
    node_.setHostBackpressure(kStall[profile & 3]);
    node_.setCompletionTimeout(kSettleCycles / 2);
    node_.onMemoryRequest([this](const Tlp& t) { checkAccess(t); });
  }

  Outcome play(std::vector<Record> records) {
    configure();
    issueCpuRequests();
    for (const Record& r : records) fed_.push_back(r.bytes);
    out_.packets = static_cast<unsigned>(records.size());
    fab_.queue(std::move(records));
    // The input is taken, whatever it holds ...
    uint64_t lastTaken = 0, since = 0;
    while (!fab_.sourceDone() && !rtlError()) {
      tick();
      if (fab_.taken() != lastTaken) lastTaken = fab_.taken(), since = 0;
      if (++since > kStuckCycles) return fail("hang: the fabric port took nothing for " + std::to_string(kStuckCycles) +
                                              " cycles");
    }
    // ... the NI settles: every receive slot free again, every CPU request answered ...
    unsigned quiet = 0;
    const bool settled = runUntil([&] {
      const bool idle = fab_.idle() && node_.idle() && fab_.credits(0) == rxCredits_ && fab_.credits(1) == rxCredits_;
      quiet = idle ? quiet + 1 : 0;
      return quiet > 64;
    }, kSettleCycles);
    if (!settled)
      return fail("hang: not settled " + std::to_string(kSettleCycles) + " cycles after the input (credits " +
                  std::to_string(fab_.credits(0)) + "/" + std::to_string(fab_.credits(1)) + " of " +
                  std::to_string(rxCredits_) + ", CPU requests open " + std::to_string(node_.outstandingLoads()) + ")");
    checkCpuRequests();
    checkSentPackets();
    checkCounters();
    // ... and still serves a well-formed write from a source the input never named.
    probe();
    out_.cycles = clock_.cycles();
    return out_;
  }

 private:
  bool rtlError() {
    if (ctx_->gotError() && !rtlReported_) {
      rtlReported_ = true;
      violation("RTL assertion failed at cycle " + std::to_string(clock_.cycles()) + " (message above)");
    }
    return ctx_->gotError();
  }
  void violation(const std::string& s) { out_.violations.push_back(s); }
  Outcome fail(const std::string& s) {
    violation(s);
    out_.cycles = clock_.cycles();
    return out_;
  }

  void tick() {
    NicIn in;
    node_.fillNicIn(in);
    fab_.fill(in, clock_.cycles());
    nic_->drive(in);
    const NicOut o = nic_->read();
    clock_.cycle();
    node_.afterCycle(in, o);
    node_.endCycle();
    fab_.after(in, o, clock_.cycles());
  }
  bool runUntil(const std::function<bool()>& done, uint64_t max) {
    for (uint64_t c = 0; c < max; ++c) {
      if (done()) return true;
      if (rtlError()) return false;
      tick();
    }
    return done();
  }
  uint32_t csr(uint32_t off) {
    bool done = false, ok = false;
    uint32_t v = 0;
    node_.csrRead(off, [&](uint32_t value, bool good) { v = value, ok = good, done = true; });
    if (!runUntil([&] { return done; }, kSettleCycles) || !ok)
      violation("the host port did not answer a read of register 0x" + hex(off));
    return v;
  }
  static std::string hex(uint64_t v) {
    char b[24];
    std::snprintf(b, sizeof b, "%llx", static_cast<unsigned long long>(v));
    return b;
  }

  void configure() {
    clock_.reset(4);
    const driver::CsrWrite wr = [this](uint32_t off, uint32_t v) { node_.csrWrite(off, v); };
    wr(regs::NODE_ID, kLid);
    for (unsigned i = 0; i < kRegions.size(); ++i) driver::setMemId(wr, i, kRegions[i]);
    driver::setMulticastMember(wr, 0, kGroup);
    Window w;
    w.base = kApertureBase;
    w.size = 0x10000;
    w.dstNode = kPeerNode;
    w.atomic = true;
    w.confAt = ConfAt::Memory;
    driver::setWindow(wr, 0, w);
    // Short timers, so that requests nobody answers end within the settling time.
    wr(regs::RETX_TIMEOUT, 256);
    wr(regs::RETX_LIMIT, 1);
    wr(regs::MEM_TIMEOUT, 256);
    wr(regs::MEM_LIMIT, 1);
    wr(regs::INTR_ADDR_LO, static_cast<uint32_t>(kIntrAddr));
    wr(regs::INTR_ADDR_HI, 0);
    wr(regs::INTR_DATA, 0xF00D);
    wr(regs::INTR_MASK, 0xFFF);
    rxCredits_ = csr(regs::CAPS) >> 24;
    peers_ = csr(regs::CAPS3) >> 8 & 0xFF;
  }

  // The CPU's own traffic to the peer: a read, an atomic, a memory-confirmed write
  // and a plain write. Answers come only from the input, or the NI gives up on them.
  void issueCpuRequests() {
    auto cb = [this](unsigned i) {
      return [this, i](const LoadResult& r) {
        ++answers_[i];
        if (r.timedOut) violation("CPU request " + std::to_string(i) + " was never answered (completion timeout)");
      };
    };
    node_.load(kApertureBase + 0x100, 64, cb(0));
    node_.atomic(TlpKind::FetchAdd, kApertureBase + 0x200, Bytes(8, 1), cb(1));
    node_.confirmedStore(kApertureBase + 0x300, Bytes(16, 0xA5), cb(2));
    node_.store(kApertureBase + 0x400, Bytes(32, 0x5A));
  }

  // Every request the NI makes of memory lies inside a region exported for it.
  void checkAccess(const Tlp& t) {
    if (t.kind == TlpKind::MWr && t.addr == kIntrAddr && t.data.size() == 4) {
      ++interrupts_;
      return;
    }
    const MemOp op = memOpOf(t);
    const size_t n = accessBytes(t);
    for (const MemRegion& r : kRegions)
      if (r.valid && allows(r, op) && t.addr >= r.base && t.addr + n <= r.base + r.size) return;
    violation("the NI sent memory " + describe(t) + ", outside every region exported for it");
  }

  void checkCpuRequests() {
    for (unsigned i = 0; i < 3; ++i)
      if (answers_[i] != 1)
        violation("CPU request " + std::to_string(i) + " answered " + std::to_string(answers_[i]) + " times");
    const NodeStats& s = node_.stats();
    if (s.undecodable) violation(std::to_string(s.undecodable) + " TLPs to the host did not decode");
    if (s.unexpectedCpl) violation(std::to_string(s.unexpectedCpl) + " completions to the host matched no request");
  }

  void checkSentPackets() {
    for (const Bytes& b : fab_.sent()) {
      FabError err = FabError::None;
      const auto p = decodeFabric(b, &err);
      if (!p) violation(std::string("the NI sent a fabric packet that does not decode: ") + toString(err));
      else if (p->slid != kLid) violation("the NI sent a packet with SLID " + std::to_string(p->slid));
    }
  }

  void checkCounters() {
    const uint64_t rx = csr(regs::RX_PKTS), tx = csr(regs::TX_PKTS);
    const uint64_t crc = csr(regs::CRC_ERR_CNT), bad = csr(regs::BAD_PKT_CNT), memid = csr(regs::MEMID_ERR_CNT),
                   bounds = csr(regs::BOUNDS_ERR_CNT), dup = csr(regs::DUP_CNT), oos = csr(regs::OOS_CNT),
                   nakTx = csr(regs::NAK_TX_CNT), nakRx = csr(regs::NAK_RX_CNT), served = csr(regs::RD_SERVED_CNT),
                   intr = csr(regs::INTR_CNT), status = csr(regs::STATUS);
    auto expect = [&](bool cond, const std::string& what) {
      if (!cond) violation("counters: " + what);
    };
    uint64_t framingBad = 0;
    for (const Bytes& b : fed_) framingBad += frameBad(b, nic_->maxPayload());
    expect(rx == fed_.size(), "RX_PKTS " + std::to_string(rx) + " != " + std::to_string(fed_.size()) + " packets played");
    expect(tx == fab_.sent().size(), "TX_PKTS " + std::to_string(tx) + " != " + std::to_string(fab_.sent().size()) +
                                         " packets the fabric took");
    expect(crc <= framingBad, "CRC_ERR_CNT " + std::to_string(crc) + " > " + std::to_string(framingBad) +
                                  " packets with wrong framing (a good packet refused as corrupt)");
    expect(crc + bad >= framingBad, "CRC_ERR_CNT + BAD_PKT_CNT " + std::to_string(crc + bad) + " < " +
                                        std::to_string(framingBad) + " packets with wrong framing");
    expect(crc + bad + memid + bounds + dup + oos <= rx,
           "more packets dropped than received: RX " + std::to_string(rx) + ", CRC " + std::to_string(crc) + ", BAD " +
               std::to_string(bad) + ", MEMID " + std::to_string(memid) + ", BOUNDS " + std::to_string(bounds) +
               ", DUP " + std::to_string(dup) + ", OOS " + std::to_string(oos));
    expect(nakTx <= rx && nakRx <= rx && served <= rx, "more NAKs or served reads than packets received");
    expect(intr == interrupts_, "INTR_CNT " + std::to_string(intr) + " != " + std::to_string(interrupts_) +
                                    " interrupt writes memory saw");
    // Each sticky STATUS bit is set exactly when its counter moved.
    const std::pair<unsigned, uint64_t> bits[] = {{regs::STATUS_CRC_ERR_LSB, crc},    {regs::STATUS_MEMID_ERR_LSB, memid},
                                                  {regs::STATUS_BOUNDS_ERR_LSB, bounds}, {regs::STATUS_NAK_RX_LSB, nakRx},
                                                  {regs::STATUS_BAD_PKT_LSB, bad}};
    for (const auto& [bit, count] : bits)
      expect(bool(status >> bit & 1) == (count != 0),
             "STATUS bit " + std::to_string(bit) + " disagrees with its counter (" + std::to_string(count) + ")");
    for (uint32_t off : {regs::WIN_MISS_CNT, regs::PERM_CNT, regs::MALFORMED_CNT, regs::UNSUP_CNT, regs::CPL_UNEXP_CNT})
      expect(csr(off) == 0, "host-side error counter 0x" + hex(off) + " moved (the CPU sent nothing wrong)");
  }

  void probe() {
    std::array<bool, 256> used{};
    for (const Bytes& b : fed_)
      if (b.size() >= 8 && b[6] == 0) used[b[7]] = true;
    uint16_t slid = 0;
    for (uint16_t l = 1; l < std::min(peers_, 256u) && !slid; ++l)
      if (l != kLid && l != kPeerLid && !used[l]) slid = l;
    if (!slid) return;  // the input named every source: nothing left to probe with
    FabricPacket p;
    p.dlid = kLid;
    p.slid = slid;
    p.psn = 0;
    p.tehFlags = kTehRxXlate;
    p.memid = 0;
    const Bytes data = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    const uint64_t off = 0x80;
    p.payload = encodeTlp(makeMWr(0x0200, 0, off, data));
    const size_t before = fab_.sent().size();
    fab_.queue({Record{encodeFabric(p)}});
    const bool acked = runUntil([&] {
      for (size_t i = before; i < fab_.sent().size(); ++i) {
        const auto a = decodeFabric(fab_.sent()[i]);
        if (a && a->opcode == kOpRcAck && a->dlid == slid && a->psn == 0 && a->syndrome == kAethAck) return true;
      }
      return false;
    }, kSettleCycles);
    if (!acked) violation("a well-formed write after the input was not ACKed (source LID " + std::to_string(slid) + ")");
    // The ACK may leave before the write reaches memory.
    if (!runUntil([&] { return node_.memory().read(kRegions[0].base + off, data.size()) == data; }, kSettleCycles))
      violation("a well-formed write after the input did not land");
  }

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<NicModel> nic_;
  Node node_;
  FabricEnd fab_;
  ClockDriver clock_;
  Outcome out_;
  std::vector<Bytes> fed_;
  unsigned rxCredits_ = 0, peers_ = 0;
  unsigned answers_[3] = {0, 0, 0};
  uint64_t interrupts_ = 0;
  bool rtlReported_ = false;
};

}  // namespace

std::vector<InputRecord> inputRecords(const uint8_t* d, size_t n) {
  std::vector<InputRecord> v;
  size_t i = 1;  // after the profile byte
  while (i + 3 <= n) {
    InputRecord r;
    r.ctrl = d[i];
    const size_t len = std::min<size_t>((d[i + 1] | size_t{d[i + 2]} << 8) & kLenMask, n - i - 3);
    i += 3;
    r.body.assign(d + i, d + i + len);
    i += len;
    v.push_back(std::move(r));
  }
  return v;
}

void appendRecord(Bytes* in, uint8_t ctrl, const Bytes& body) {
  in->push_back(ctrl);
  in->push_back(static_cast<uint8_t>(body.size()));
  in->push_back(static_cast<uint8_t>(body.size() >> 8));
  in->insert(in->end(), body.begin(), body.end());
}

Outcome runFabricInput(const uint8_t* data, size_t size, unsigned dataBits) {
  uint8_t profile = 0;
  std::vector<Record> records = parse(data, size, &profile);
  Run run(dataBits, profile);
  return run.play(std::move(records));
}

// ------------------------------------------------------------------ seed inputs
namespace {

class InputBuilder {
 public:
  explicit InputBuilder(uint8_t profile = 0) { in_.push_back(profile); }
  // A packet as the codec builds it, sealed again by the harness (so that mutations
  // of its header and payload keep right CRCs).
  InputBuilder& packet(const FabricPacket& p, unsigned gap16 = 0, bool bubbles = false) {
    Bytes b = encodeFabric(p);
    b.resize(b.size() - kTrailerBytes);
    return raw(b, true, p.vl & 1, gap16, bubbles);
  }
  InputBuilder& raw(const Bytes& b, bool seal, uint8_t vc = 0, unsigned gap16 = 0, bool bubbles = false) {
    appendRecord(&in_, static_cast<uint8_t>((seal ? 1 : 0) | vc << 1 | (bubbles ? 4 : 0) | (gap16 & 31) << 3), b);
    return *this;
  }
  Bytes done() const { return in_; }

 private:
  Bytes in_;
};

FabricPacket request(uint16_t slid, uint32_t psn, const Tlp& t, uint16_t memid = 0, uint8_t flags = kTehRxXlate) {
  FabricPacket p;
  p.dlid = kLid;
  p.slid = slid;
  p.psn = psn;
  p.tehFlags = flags;
  p.memid = memid;
  p.payload = encodeTlp(t);
  return p;
}

FabricPacket response(uint32_t psn, const Tlp& t) {
  FabricPacket p = answerPacket(kLid, kPeerLid, kOpTunnelRsp, psn);
  p.payload = encodeTlp(t);
  return p;
}

FabricPacket ack(uint32_t psn, uint8_t syndrome) {
  FabricPacket p = answerPacket(kLid, kPeerLid, kOpRcAck, psn);
  p.syndrome = syndrome;
  return p;
}

Bytes pattern(size_t n, uint8_t start) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(start + i);
  return b;
}

}  // namespace

std::vector<std::pair<std::string, Bytes>> seedInputs() {
  constexpr uint16_t kReq = 0x0300;  // requester ID of a remote CPU
  const uint64_t phys1 = kRegions[1].base;
  std::vector<std::pair<std::string, Bytes>> v;
  v.emplace_back("requests", InputBuilder()
                                 .packet(request(3, 0, makeMWr(kReq, 0, 0x40, pattern(64, 1))))
                                 .packet(request(3, 1, makeMRd(kReq, 1, 0x40, 64)))
                                 .packet(request(3, 2, makeAtomic(TlpKind::FetchAdd, kReq, 2, 0x100, pattern(8, 1))))
                                 .packet(request(3, 3, makeAtomic(TlpKind::Swap, kReq, 3, 0x104, pattern(4, 9))))
                                 .packet(request(3, 4, makeAtomic(TlpKind::Cas, kReq, 4, 0x110, pattern(16, 3))))
                                 .packet(request(3, 5, makeDMWr(kReq, 5, 0x200, pattern(32, 7)), 0,
                                                 kTehRxXlate | kTehConfNi))
                                 .packet(request(3, 6, makeDMWr(kReq, 6, 0x300, pattern(16, 7)), 0,
                                                 kTehRxXlate | kTehConfMem))
                                 .done());
  v.emplace_back("sender_translated", InputBuilder(0x5)
                                          .packet(request(4, 0, makeMWr(kReq, 0, phys1 + 0x10, pattern(32, 2)), 1, 0))
                                          .packet(request(4, 1, makeMRd(kReq, 1, kRegions[2].base + 0x1000, 128), 2, 0))
                                          .packet(request(4, 2, makeMWr(kReq, 0, phys1 - 0x1000, pattern(8, 2)), 1, 0))
                                          .done());
  v.emplace_back("refused", InputBuilder()
                                .packet(request(6, 0, makeMWr(kReq, 0, 0x10, pattern(16, 1)), 3))
                                .packet(request(6, 1, makeMWr(kReq, 0, 0x10, pattern(16, 1)), 2))
                                .packet(request(6, 2, makeMRd(kReq, 2, 0x3000, 64), 1))
                                .packet(request(6, 3, makeAtomic(TlpKind::FetchAdd, kReq, 3, 0x8, pattern(8, 1)), 1))
                                .packet(request(6, 4, makeMRd(kReq, 4, 0, 16), 99))
                                .done());
  // Answers to the CPU's own requests, after they left: PSNs 0-3 to the peer, tags 2-4
  // (the two register reads of the set-up took tags 0 and 1).
  v.emplace_back("answers", InputBuilder()
                                .packet(response(0, makeCplD(kMemCplId, kCpuReqId, 2, 0x100, pattern(64, 4))), 16)
                                .packet(response(1, makeCplD(kMemCplId, kCpuReqId, 3, 0x200, pattern(8, 4))))
                                .packet(response(2, makeWriteConfirmation(kMemCplId, kCpuReqId, 4, 0x300)))
                                .packet(ack(3, kAethAck))
                                .packet(ack(3, kAethAck))
                                .done());
  // Answers at the right PSNs that are not the requests' answers: other tags, another
  // requester, a write inside a response.
  v.emplace_back("foreign_answers",
                 InputBuilder()
                     .packet(response(0, makeCplD(kMemCplId, kCpuReqId, 0, 0x100, pattern(64, 4))), 16)
                     .packet(response(1, makeCplD(kMemCplId, 0x0700, 3, 0x200, pattern(8, 4))))
                     .packet(response(2, makeMWr(kCpuReqId, 4, kRegions[0].base, pattern(16, 4))))
                     .done());
  v.emplace_back("naks", InputBuilder(0x3)
                             .packet(ack(0, kAethNakPsnSeq), 8)
                             .packet(ack(1, kAethNakRemAccess), 8)
                             .packet(ack(2, kAethNakInvReq), 8)
                             .done());
  // Right CRCs around TLPs that disagree with their Length: the answer to the CPU's
  // read cut short, a write one DW longer than it says, a read with a data DW.
  FabricPacket shortAnswer = response(0, makeCplD(kMemCplId, kCpuReqId, 2, 0x100, pattern(64, 4)));
  shortAnswer.payload.resize(shortAnswer.payload.size() - 40);
  FabricPacket longWrite = request(12, 0, makeMWr(kReq, 0, 0x700, pattern(32, 6)));
  longWrite.payload.insert(longWrite.payload.end(), 4, 0xEE);
  FabricPacket readWithData = request(12, 1, makeMRd(kReq, 1, 0x700, 32));
  readWithData.payload.insert(readWithData.payload.end(), 4, 0xEE);
  v.emplace_back("length_mismatch",
                 InputBuilder().packet(shortAnswer, 16).packet(longWrite).packet(readWithData).done());
  FabricPacket group = request(7, 0, makeMWr(kReq, 0, 0x500, pattern(32, 3)));
  group.dlid = kGroup;
  FabricPacket groupRead = request(7, 1, makeMRd(kReq, 1, 0x500, 32));
  groupRead.dlid = kGroup;
  v.emplace_back("multicast", InputBuilder().packet(group).packet(groupRead).done());
  v.emplace_back("sequence", InputBuilder(0x8)
                                 .packet(request(10, 0, makeMWr(kReq, 0, 0x600, pattern(16, 5))))
                                 .packet(request(10, 0, makeMWr(kReq, 0, 0x600, pattern(16, 5))))
                                 .packet(request(10, 4, makeMWr(kReq, 0, 0x610, pattern(16, 5))), 0, true)
                                 .packet(request(10, 1, makeAtomic(TlpKind::FetchAdd, kReq, 1, 0x620, pattern(8, 1))))
                                 .packet(request(10, 1, makeAtomic(TlpKind::FetchAdd, kReq, 1, 0x620, pattern(8, 1))))
                                 .packet(request(10, 9, makeMWr(kReq, 0, 0x630, pattern(16, 5)), 0,
                                                 kTehRxXlate | kTehSync))
                                 .done());
  // Continuations: after a write (delivered), a duplicate, one ahead, one after a read
  // (nothing to continue), one running off the end of the region's page.
  auto cont = [](uint16_t slid, uint32_t psn, size_t n) {
    FabricPacket p;
    p.dlid = kLid;
    p.slid = slid;
    p.psn = psn;
    p.opcode = kOpTunnelCont;
    p.payload = pattern(n, static_cast<uint8_t>(psn));
    return p;
  };
  v.emplace_back("continuations", InputBuilder()
                                      .packet(request(13, 0, makeMWr(kReq, 0, 0xF00, pattern(64, 1))))
                                      .packet(cont(13, 1, 128))
                                      .packet(cont(13, 1, 128))
                                      .packet(cont(13, 5, 16))
                                      .packet(cont(13, 2, 256))
                                      .packet(request(13, 3, makeMRd(kReq, 1, 0x40, 64)))
                                      .packet(cont(13, 4, 32))
                                      .packet(cont(14, 0, 32))
                                      .done());
  FabricPacket wrongDlid = request(11, 0, makeMWr(kReq, 0, 0x10, pattern(8, 1)));
  wrongDlid.dlid = kLid + 1;
  FabricPacket otherOpcode = wrongDlid;
  otherOpcode.dlid = kLid;
  otherOpcode.opcode = 0x04;
  Bytes noBth = encodeFabric(request(11, 0, makeMWr(kReq, 0, 0x10, pattern(8, 1))));
  noBth.resize(noBth.size() - kTrailerBytes);
  noBth[1] = static_cast<uint8_t>(noBth[1] & 0xFC);  // LNH: not an IBA transport header
  Bytes corrupt = encodeFabric(request(11, 0, makeMWr(kReq, 0, 0x10, pattern(8, 1))));
  corrupt[40] ^= 0x10;
  v.emplace_back("malformed", InputBuilder(0xA)
                                  .packet(wrongDlid)
                                  .packet(otherOpcode)
                                  .raw(noBth, true)
                                  .raw(corrupt, false)
                                  .raw(pattern(10, 0), true)
                                  .raw(pattern(100, 7), false, 1, 0, true)
                                  .raw(Bytes(600, 0x11), true)
                                  .packet(request(11, 0, makeMWr(kReq, 0, 0x10, pattern(8, 1))))
                                  .done());
  return v;
}

}  // namespace ni::fuzz

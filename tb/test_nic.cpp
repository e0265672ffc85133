// SPDX-License-Identifier: Apache-2.0
// nic_top alone, at every built data width: host and fabric BFMs on its ports,
// scoreboards against the golden codecs and the reference NI.
#include <gtest/gtest.h>

#include <set>

#include "crc.hpp"
#include "nic_harness.hpp"
#include "ni_regs.hpp"
#include "ref_ni.hpp"
#include "verilated_fixture.hpp"

using namespace ni;
using tb::NicHarness;

namespace {

constexpr uint16_t kPeerLid = 9;
constexpr unsigned kPeerNode = kPeerLid - 1;

class NicTest : public tb::VerilatedTest, public ::testing::WithParamInterface<unsigned> {
 protected:
  void SetUp() override {
    VerilatedTest::SetUp();
    h = std::make_unique<NicHarness>(GetParam(), ctx(), &rng());
    attach(h->nic.get());
    reset();
    // Configured before anything arrives: csrWrite only queues the TLP, and a packet
    // sent at once can be classified (at 128 bits and up, with its first beat) before
    // the write takes effect. The read returns after it (PCIe ordering).
    h->csrWrite(regs::NODE_ID, NicHarness::kLid);
    EXPECT_EQ(csrRead(regs::NODE_ID), NicHarness::kLid);
  }

  void step() { h->step([this] { cycle(); }); }
  template <class F>
  bool runUntil(F done, uint64_t max = 20000) {
    for (uint64_t i = 0; i < max; ++i) {
      if (done()) return true;
      step();
    }
    return done();
  }
  void settle(unsigned n = 200) {
    for (unsigned i = 0; i < n; ++i) step();
  }

  uint32_t csrRead(uint32_t off) {
    const uint8_t tag = nextTag++;
    h->hostIn.push(encodeTlp(makeMRd(kCpuReqId, tag, kCsrBase + off, 4)));
    Tlp t;
    uint32_t v = 0;
    bool got = runUntil([&] {
      while (h->popHostTlp(&t)) {
        if (t.kind == TlpKind::CplD && t.tag == tag) {
          v = static_cast<uint32_t>(getLe(t.data.data(), 4));
          return true;
        }
        stray.push_back(t);
      }
      return false;
    });
    EXPECT_TRUE(got) << "no completion for CSR read of 0x" << std::hex << off;
    return v;
  }

  // Fabric packets the NI sent, decoded; failures to decode are test failures.
  std::vector<FabricPacket> fabricOut() {
    std::vector<FabricPacket> v;
    for (auto& p : h->fabOut.packets()) {
      FabError err;
      auto d = decodeFabric(p.bytes, &err);
      EXPECT_TRUE(d) << "NI sent an undecodable packet: " << toString(err);
      if (d) v.push_back(*d);
    }
    h->fabOut.packets().clear();
    return v;
  }

  // Host TLPs that were delivered (not nullified).
  std::vector<Tlp> hostDelivered() {
    std::vector<Tlp> v = stray;
    stray.clear();
    Tlp t;
    bool nul = false;
    while (!h->hostOut.packets().empty()) {
      if (h->popHostTlp(&t, &nul) && !nul) v.push_back(t);
    }
    return v;
  }

  void setWindow(unsigned i, const Window& w) {
    ref.setWindow(i, w);
    driver::setWindow(h->writer(), i, w);
  }
  void setMemId(unsigned id, const MemRegion& m) {
    ref.regions[id] = m;
    driver::setMemId(h->writer(), id, m);
  }

  FabricPacket tunnelFromPeer(const Tlp& t, uint16_t memid, bool rxXlate, uint32_t psn) {
    FabricPacket p;
    p.dlid = NicHarness::kLid;
    p.slid = kPeerLid;
    p.opcode = t.isCompletion() ? kOpTunnelRsp : kOpTunnelReq;
    p.vl = p.sl = t.isCompletion() ? 1 : 0;
    p.psn = psn;
    p.tehFlags = rxXlate ? kTehRxXlate : 0;
    p.memid = memid;
    p.payload = encodeTlp(t);
    return p;
  }

  // The tunneled completion this NI sends back to the peer.
  static FabricPacket responseToPeer(const Tlp& cpl, uint32_t psn) {
    FabricPacket e = answerPacket(kPeerLid, NicHarness::kLid, kOpTunnelRsp, psn);
    e.payload = encodeTlp(cpl);
    return e;
  }

  Bytes randomBytes(size_t n) {
    Bytes b(n);
    for (auto& x : b) x = static_cast<uint8_t>(rng()());
    return b;
  }
  // A well-formed FetchAdd, Swap or CAS of a random operand size at an aligned address near addr.
  Tlp randomAtomic(uint16_t req, uint8_t tag, uint64_t addr) {
    static const TlpKind kinds[] = {TlpKind::FetchAdd, TlpKind::Swap, TlpKind::Cas};
    const TlpKind k = kinds[rng()() % 3];
    const unsigned op = 4u << (rng()() % (k == TlpKind::Cas ? 3 : 2));
    return makeAtomic(k, req, tag, addr & ~uint64_t{op - 1}, randomBytes(k == TlpKind::Cas ? 2 * op : op));
  }

  std::unique_ptr<NicHarness> h;
  RefNi ref;
  std::vector<Tlp> stray;
  uint8_t nextTag = 0x40;
};

Window windowTo(uint64_t base, uint64_t size, bool rx, uint16_t memid, uint64_t remote = 0) {
  Window w;
  w.base = base;
  w.size = size;
  w.dstNode = kPeerNode;
  w.rxXlate = rx;
  w.memid = memid;
  w.remote = remote;
  return w;
}

// The addresses are typed here from docs/registers.md, not taken from the generated
// header (sim/ni_regs.hpp comes from the same source as the register block); the
// static_asserts tie the two together.
TEST_P(NicTest, RegistersReadBack) {
  constexpr uint32_t kId = 0x000, kCaps = 0x004, kNodeId = 0x008, kCaps2 = 0x00C, kRxPkts = 0x024,
                     kArtXlateLo7 = 0x110 + 7 * 0x20, kFabCredits = 0x338;
  static_assert(regs::ID == kId && regs::CAPS == kCaps && regs::NODE_ID == kNodeId && regs::CAPS2 == kCaps2 &&
                    regs::RX_PKTS == kRxPkts && regs::ART_XLATE_LO(7) == kArtXlateLo7 &&
                    regs::FAB_CREDITS == kFabCredits,
                "the generated register map moved a register docs/registers.md places");
  EXPECT_EQ(csrRead(kId), 0x4E490001u);
  const uint32_t caps = csrRead(kCaps);
  EXPECT_EQ(caps & 0xFF, h->bpb);
  EXPECT_EQ((caps >> 8) & 0xFF, kNumArt);
  EXPECT_EQ((caps >> 16) & 0xFF, kNumMemId);
  EXPECT_EQ(caps >> 24, 3u);  // RxCredits
  EXPECT_EQ(csrRead(kCaps2), kMaxPayload);
  EXPECT_EQ(csrRead(kNodeId), NicHarness::kLid);
  // Idle: the NI holds every credit the harness's fabric gave it, on both VCs.
  const uint32_t given = (NicHarness::kFabCredits - h->toGive[0]) | (NicHarness::kFabCredits - h->toGive[1]) << 8;
  EXPECT_EQ(given, NicHarness::kFabCredits | NicHarness::kFabCredits << 8);
  EXPECT_EQ(csrRead(kFabCredits), given);
  h->csrWrite(kArtXlateLo7, 0xFFFFFFFF);
  EXPECT_EQ(csrRead(kArtXlateLo7), 0xFFFFF000u) << "low 12 bits are 4 KiB granular";
  h->csrWrite(kRxPkts, 0);
  EXPECT_EQ(csrRead(kRxPkts), 0u);
}

TEST_P(NicTest, EncapsulatesWritesReadsAndAtomicsBitExact) {
  Window w0 = windowTo(kApertureBase, 0x10000, true, 3), w1 = windowTo(kApertureBase + 0x10000, 0x8000, false, 0,
                                                                        0x0000'0123'4560'0000ull);
  w0.atomic = w1.atomic = true;
  setWindow(0, w0);
  setWindow(1, w1);
  h->hostIn.setIdle(0.3);
  h->fabOut.setStall(0.3);
  std::vector<Bytes> expect;
  uint32_t psn = 0;
  for (int i = 0; i < 300; ++i) {
    const bool second = rng()() & 1;
    const uint64_t base = second ? kApertureBase + 0x10000 : kApertureBase;
    const size_t len = 4 * (1 + rng()() % 64);
    uint64_t addr = base + (rng()() % 0x8000) / 4 * 4;
    if ((addr & 0xFFF) + len > 4096) addr &= ~uint64_t{0xFFF};
    const unsigned kind = rng()() % 4;
    Tlp t = kind == 0 ? makeMRd(kCpuReqId, static_cast<uint8_t>(i), addr, static_cast<uint16_t>(len))
          : kind == 1 ? randomAtomic(kCpuReqId, static_cast<uint8_t>(i), addr & ~uint64_t{0xF})
                      : makeMWr(kCpuReqId, 0, addr, randomBytes(len));
    const auto r = ref.route(t);
    ASSERT_EQ(r.err, RefNi::SendErr::Ok);
    expect.push_back(encodeFabric(RefNi::encapsulate(t, r, NicHarness::kLid, psn++)));
    h->hostIn.push(encodeTlp(t));
  }
  ASSERT_TRUE(runUntil([&] { return h->fabOut.packets().size() >= expect.size(); }, 200000));
  settle();
  ASSERT_EQ(h->fabOut.packets().size(), expect.size());
  for (size_t i = 0; i < expect.size(); ++i) {
    EXPECT_EQ(h->fabOut.packets()[i].bytes, expect[i])
        << "packet " << i << " differs at byte " << firstDifference(h->fabOut.packets()[i].bytes, expect[i])
        << " seed " << seed();
    EXPECT_EQ(h->fabOut.packets()[i].dest, 0) << "requests travel on VC0";
  }
}

TEST_P(NicTest, DecapsulatesRequestsWithReceiverTranslation) {
  setMemId(2, MemRegion{true, 0x0000'0042'0000'0000ull, 0x20000, true, true, true});
  settle(100);
  h->fabIn.setIdle(0.3);
  h->hostOut.setStall(0.3);
  std::vector<Tlp> expect;
  for (int i = 0; i < 200; ++i) {
    const size_t len = 4 * (1 + rng()() % 64);
    uint64_t off = (rng()() % 0x20000) / 4 * 4;
    if ((off & 0xFFF) + len > 4096) off &= ~uint64_t{0xFFF};
    const unsigned kind = rng()() % 4;
    Tlp t = kind == 0 ? makeMRd(0x0200 + i, static_cast<uint8_t>(i), off, static_cast<uint16_t>(len))
          : kind == 1 ? randomAtomic(static_cast<uint16_t>(0x0200 + i), static_cast<uint8_t>(i), off & ~uint64_t{0xF})
                      : makeMWr(0x0200, 0, off, randomBytes(len));
    h->sendFabric(tunnelFromPeer(t, 2, true, static_cast<uint32_t>(i)));
    Tlp e = t;
    e.addr = ref.land(true, 2, t.addr, accessBytes(t), memOpOf(t)).addr;
    // The NI reads and updates local memory under its own ID; the tag is its to choose.
    if (t.kind != TlpKind::MWr) e.requester = kNiReqId;
    expect.push_back(e);
  }
  std::vector<Tlp> got;
  ASSERT_TRUE(runUntil([&] {
    for (auto& t : hostDelivered()) {
      got.push_back(t);
      if (t.kind == TlpKind::MRd) {
        // Answer each read and atomic at once so the NI's read tags recycle.
        h->hostIn.push(encodeTlp(makeCplD(kMemCplId, t.requester, t.tag, t.addr, Bytes(t.lengthDw * 4, 0))));
      } else if (isAtomic(t.kind)) {
        h->hostIn.push(encodeTlp(makeCplD(kMemCplId, t.requester, t.tag, t.addr, Bytes(atomicOperandBytes(t), 0))));
      }
    }
    return got.size() >= expect.size();
  }, 400000)) << got.size() << " of " << expect.size();
  for (size_t i = 0; i < expect.size(); ++i) {
    Tlp e = expect[i];
    if (e.kind != TlpKind::MWr) {
      EXPECT_LT(got[i].tag, 16) << "tag outside the NI's read tracker";
      e.tag = got[i].tag;
    }
    EXPECT_EQ(encodeTlp(got[i]), encodeTlp(e)) << "TLP " << i << ": " << describe(got[i]) << " vs " << describe(e);
  }
}

TEST_P(NicTest, ServesRemoteReadAndRestoresRequesterTag) {
  setMemId(1, MemRegion{true, 0x0000'0010'0000'0000ull, 0x1000, true, false});
  settle(100);
  h->sendFabric(tunnelFromPeer(makeMRd(0x0000, 0x77, 0x40, 16), 1, true, 0));
  Tlp rd;
  ASSERT_TRUE(runUntil([&] { return h->popHostTlp(&rd); }));
  ASSERT_EQ(rd.kind, TlpKind::MRd);
  EXPECT_EQ(rd.requester, kNiReqId);
  EXPECT_EQ(rd.addr, 0x0000'0010'0000'0040ull);
  const Bytes data = randomBytes(16);
  h->hostIn.push(encodeTlp(makeCplD(kMemCplId, kNiReqId, rd.tag, rd.addr, data)));
  ASSERT_TRUE(runUntil([&] { return !h->fabOut.packets().empty(); }));
  const auto out = fabricOut();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(encodeFabric(out[0]), encodeFabric(responseToPeer(makeCplD(kMemCplId, 0x0000, 0x77, rd.addr, data), 0)));
  EXPECT_EQ(csrRead(regs::RD_SERVED_CNT), 1u);
}

TEST_P(NicTest, ServesRemoteAtomicAndReturnsOriginalValue) {
  setMemId(1, MemRegion{true, 0x0000'0010'0000'0000ull, 0x1000, true, true, true});
  setMemId(2, MemRegion{true, 0x0000'0020'0000'0000ull, 0x1000, true, true, false});  // no atomics
  settle(100);
  const Tlp cas = makeAtomic(TlpKind::Cas, 0x0000, 0x55, 0x80, randomBytes(16));
  h->sendFabric(tunnelFromPeer(cas, 1, true, 0));
  Tlp at;
  ASSERT_TRUE(runUntil([&] { return h->popHostTlp(&at); }));
  ASSERT_EQ(at.kind, TlpKind::Cas);
  EXPECT_EQ(at.requester, kNiReqId);
  EXPECT_EQ(at.addr, 0x0000'0010'0000'0080ull);
  EXPECT_EQ(at.data, cas.data) << "operands pass unchanged";
  const Bytes old = randomBytes(8);
  h->hostIn.push(encodeTlp(makeCplD(kMemCplId, kNiReqId, at.tag, at.addr, old)));
  // The same atomic against a memory ID without atomic permission: UR back to the requester.
  const Tlp fa = makeAtomic(TlpKind::FetchAdd, 0x0000, 0x56, 0x100, randomBytes(4));
  h->sendFabric(tunnelFromPeer(fa, 2, true, 1));
  ASSERT_TRUE(runUntil([&] { return h->fabOut.packets().size() >= 2; }));
  auto out = fabricOut();
  ASSERT_EQ(out.size(), 2u);
  // Each answer carries its request's PSN, and the requester matches it by that PSN: the
  // refusal (made by the receiver) may leave before the memory's answer (which crosses
  // the host receive path behind it).
  if (out[0].psn > out[1].psn) std::swap(out[0], out[1]);
  EXPECT_EQ(encodeFabric(out[0]), encodeFabric(responseToPeer(makeCplD(kMemCplId, 0x0000, 0x55, at.addr, old), 0)))
      << "original value back under the requester's tag";
  EXPECT_EQ(encodeFabric(out[1]), encodeFabric(responseToPeer(makeCpl(kNiReqId, 0x0000, 0x56, CplStatus::UR, 4, 0x00), 1)))
      << "refused atomic answered with UR";
  EXPECT_EQ(csrRead(regs::RD_SERVED_CNT), 1u);
  EXPECT_EQ(csrRead(regs::MEMID_ERR_CNT), 1u);
}

TEST_P(NicTest, DeliversAwaitedCompletionUnchangedAndDropsItsDuplicate) {
  h->autoAnswer = false;
  setWindow(0, windowTo(kApertureBase, 0x4000, true, 1));
  settle(100);
  h->hostIn.push(encodeTlp(makeMRd(kCpuReqId, 0x21, kApertureBase + 0x1040, 64)));
  ASSERT_TRUE(runUntil([&] { return !h->fabOut.packets().empty(); }));
  const auto req = fabricOut();
  ASSERT_EQ(req.size(), 1u);
  // A completion nobody waits for (another PSN) is dropped; the awaited one passes
  // unchanged, once: its duplicate is dropped too.
  Tlp c = makeCplD(kMemCplId, kCpuReqId, 0x21, 0x1040, randomBytes(64));
  h->sendFabric(tunnelFromPeer(c, 0, false, req[0].psn + 1));
  h->sendFabric(tunnelFromPeer(c, 0, false, req[0].psn));
  h->sendFabric(tunnelFromPeer(c, 0, false, req[0].psn));
  settle(300);
  const auto host = hostDelivered();
  ASSERT_EQ(host.size(), 1u);
  EXPECT_EQ(encodeTlp(host[0]), encodeTlp(c));
  EXPECT_EQ(csrRead(regs::DUP_CNT), 2u);
}

// With the fabric stalled, requests started under request room still enter whole
// (so memory's completions behind them are never blocked); room then stays low
// until the fabric moves again, and nothing is lost.
// Write combining: contiguous posted writes through combining windows share packets.
// Runs through two combining windows to different memory IDs, a window that does not
// combine, gaps, partial-BE writes, reads, page ends and flush writes: the packets
// must be exactly those of the golden combiner (RefCombiner), in order.
TEST_P(NicTest, CombinesContiguousWritesBitExact) {
  Window a = windowTo(kApertureBase, 0x4000, true, 3), b = windowTo(kApertureBase + 0x4000, 0x4000, true, 5),
         plain = windowTo(kApertureBase + 0x8000, 0x4000, false, 0, 0x0000'0042'0000'0000ull);
  a.combine = b.combine = true;
  const Window wins[3] = {a, b, plain};
  for (unsigned i = 0; i < 3; ++i) setWindow(i, wins[i]);
  driver::setCombineTimeout(h->writer(), 0xFFFF);  // packets close by the rules, not by time
  settle(100);
  fabricOut();
  h->hostIn.setIdle(0.3);
  h->fabOut.setStall(0.3);
  RefCombiner golden(kMaxPayload);
  uint64_t next[3] = {wins[0].base + 0x40, wins[1].base, wins[2].base};
  unsigned w = 0;
  for (int i = 0; i < 600; ++i) {
    auto& r = rng();
    if (r() % 100 < 10) w = static_cast<unsigned>(r() % 3);
    const unsigned kind = static_cast<unsigned>(r() % 100);
    if (kind < 3) {  // flush register: the open packet leaves once everything before it is in
      driver::flushCombiner(h->writer());
      golden.flush();
      continue;
    }
    if (r() % 100 < 5) next[w] += 4 * (1 + r() % 4);                       // a gap
    if (r() % 100 < 2) next[w] = (next[w] | 0xFFF) + 1 - 8 * (1 + r() % 4);  // toward a page end
    if (next[w] + 64 > wins[w].base + wins[w].size) next[w] = wins[w].base;
    size_t len = kind < 8 ? 1 + r() % 7 : 4 * (1 + r() % (kind < 12 ? kMaxPayload / 4 : 4));  // partial BEs
    if ((next[w] & 0xFFF) + len > 4096) len = 4096 - (next[w] & 0xFFF);
    Tlp t = kind < 10 ? makeMRd(kCpuReqId, static_cast<uint8_t>(i), next[w], 8)
                      : makeMWr(kCpuReqId, 0, next[w], randomBytes(len));
    if (t.kind == TlpKind::MWr) next[w] += (len + 3) / 4 * 4;
    const auto route = ref.route(t);
    ASSERT_EQ(route.err, RefNi::SendErr::Ok);
    golden.request(t, route, wins[w].combine);
    h->hostIn.push(encodeTlp(t));
  }
  driver::flushCombiner(h->writer());
  golden.flush();
  std::vector<Bytes> expect;
  for (size_t i = 0; i < golden.sent.size(); ++i)
    expect.push_back(encodeFabric(golden.sent[i].packet(NicHarness::kLid, static_cast<uint32_t>(i))));
  ASSERT_TRUE(runUntil([&] { return h->fabOut.packets().size() >= expect.size(); }, 400000));
  settle();
  ASSERT_EQ(h->fabOut.packets().size(), expect.size()) << "seed " << seed();
  for (size_t i = 0; i < expect.size(); ++i)
    ASSERT_EQ(h->fabOut.packets()[i].bytes, expect[i])
        << "packet " << i << " differs at byte " << firstDifference(h->fabOut.packets()[i].bytes, expect[i])
        << " seed " << seed();
  EXPECT_EQ(csrRead(regs::WC_MERGED_CNT), golden.merged);
  EXPECT_GT(golden.merged, 100u) << "the stimulus must exercise combining";
}

// The idle timeout sends an open packet WC_TIMEOUT cycles after the last write came in;
// a window re-program (ART_CTRL write) sends it at once.
TEST_P(NicTest, CombinerTimeoutAndReprogramSendTheOpenPacket) {
  Window a = windowTo(kApertureBase, 0x4000, true, 3);
  a.combine = true;
  setWindow(0, a);
  constexpr unsigned kTimeout = 300;
  driver::setCombineTimeout(h->writer(), kTimeout);
  settle(100);
  fabricOut();
  for (int i = 0; i < 4; ++i) h->hostIn.push(encodeTlp(makeMWr(kCpuReqId, 0, kApertureBase + 8 * i, randomBytes(8))));
  ASSERT_TRUE(runUntil([&] { return h->hostIn.empty(); }));
  const uint64_t sentAt = cycles();
  ASSERT_TRUE(runUntil([&] { return !h->fabOut.packets().empty(); }, 5000));
  const uint64_t waited = cycles() - sentAt;
  EXPECT_GE(waited, kTimeout) << "sent before the timeout";
  EXPECT_LE(waited, kTimeout + 40) << "sent long after the timeout";
  auto out = fabricOut();
  ASSERT_EQ(out.size(), 1u) << "four contiguous 8-byte writes make one packet";
  EXPECT_EQ(out[0].payload.size(), 16u + 32u);

  // Re-program while a packet is open: the packet goes out under the old mapping, the
  // write after the re-program under the new one.
  driver::setCombineTimeout(h->writer(), 0xFFFF);
  h->hostIn.push(encodeTlp(makeMWr(kCpuReqId, 0, kApertureBase + 0x100, randomBytes(8))));
  Window moved = a;
  moved.memid = 4;
  setWindow(0, moved);
  h->hostIn.push(encodeTlp(makeMWr(kCpuReqId, 0, kApertureBase + 0x108, randomBytes(8))));
  driver::flushCombiner(h->writer());
  ASSERT_TRUE(runUntil([&] { return h->fabOut.packets().size() >= 2; }, 5000));
  settle();
  out = fabricOut();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].memid, 3u);
  EXPECT_EQ(out[1].memid, 4u);
  EXPECT_EQ(out[0].payload.size(), 24u);
  EXPECT_EQ(out[1].payload.size(), 24u);
}

// A malformed write (length field larger than its data) aimed at an open packet is
// dropped and counted; the packet keeps the good writes around it.
TEST_P(NicTest, MalformedWriteDoesNotSpoilACombinedPacket) {
  Window a = windowTo(kApertureBase, 0x4000, true, 3);
  a.combine = true;
  setWindow(0, a);
  driver::setCombineTimeout(h->writer(), 0xFFFF);
  settle(100);
  fabricOut();
  const Bytes d0 = randomBytes(8), d1 = randomBytes(8);
  h->hostIn.push(encodeTlp(makeMWr(kCpuReqId, 0, kApertureBase, d0)));
  Bytes bad = encodeTlp(makeMWr(kCpuReqId, 0, kApertureBase + 8, randomBytes(8)));
  bad[3] = 4;  // says 16 bytes, carries 8
  h->hostIn.push(bad);
  h->hostIn.push(encodeTlp(makeMWr(kCpuReqId, 0, kApertureBase + 8, d1)));
  driver::flushCombiner(h->writer());
  ASSERT_TRUE(runUntil([&] { return !h->fabOut.packets().empty(); }, 5000));
  settle();
  auto out = fabricOut();
  ASSERT_EQ(out.size(), 1u);
  Bytes data = d0;
  data.insert(data.end(), d1.begin(), d1.end());
  Tlp want = makeMWr(kCpuReqId, 0, 0, data);
  EXPECT_EQ(out[0].payload, encodeTlp(want));
  EXPECT_EQ(csrRead(regs::MALFORMED_CNT), 1u);
  EXPECT_EQ(csrRead(regs::WC_MERGED_CNT), 1u);
}

// Confirmed writes at the sending end, one window per confirmation point
// (docs/architecture.md#confirmed-writes): the CPU gets one CplD per write whose
// data names its own address, at the moment the point is reached.
TEST_P(NicTest, ConfirmsWritesAtEachConfirmationPoint) {
  h->autoAnswer = false;
  Window wa = windowTo(kApertureBase, 0x4000, true, 1);  // sending NI; DMWr only
  Window wb = windowTo(kApertureBase + 0x10000, 0x4000, false, 0, 0x0000'0033'0000'0000ull);
  wb.confirmAll = true;  // every write, confirmed by the receiving NI
  wb.confAt = ConfAt::ReceiverNi;
  Window wc = windowTo(kApertureBase + 0x20000, 0x4000, true, 3);
  wc.confAt = ConfAt::Memory;
  setWindow(0, wa);
  setWindow(1, wb);
  setWindow(2, wc);
  settle(100);
  const uint64_t aA = kApertureBase + 0x1040, aB = kApertureBase + 0x12080, aC = kApertureBase + 0x230C0;
  const Tlp dA = makeDMWr(kCpuReqId, 0x50, aA, randomBytes(32));
  const Tlp dB = makeMWr(kCpuReqId, 0x51, aB, randomBytes(8));
  const Tlp dC = makeDMWr(kCpuReqId, 0x52, aC, randomBytes(64));
  for (const Tlp& t : {dA, dB, dC}) h->hostIn.push(encodeTlp(t));
  ASSERT_TRUE(runUntil([&] { return h->fabOut.packets().size() >= 3; }));
  settle(50);
  // The fabric packets, bit exact: an MWr for the sending NI's point, DMWr with the point in the TEH else.
  const auto out = fabricOut();
  ASSERT_EQ(out.size(), 3u);
  const Tlp* sent[] = {&dA, &dB, &dC};
  for (unsigned i = 0; i < 3; ++i)
    EXPECT_EQ(encodeFabric(out[i]), encodeFabric(RefNi::encapsulate(*sent[i], ref.route(*sent[i]), NicHarness::kLid, i)))
        << "packet " << i;
  // Only the sending NI's point is reached yet: one confirmation, of the first write.
  std::vector<Tlp> cpl = hostDelivered();
  ASSERT_EQ(cpl.size(), 1u);
  EXPECT_EQ(encodeTlp(cpl[0]), encodeTlp(makeWriteConfirmation(kNiReqId, kCpuReqId, 0x50, aA)));
  // The receiving NI's ACK of the second write (it covers the first, an MWr, too).
  FabricPacket ack = answerPacket(NicHarness::kLid, kPeerLid, kOpRcAck, 1);
  ack.syndrome = kAethAck;
  h->sendFabric(ack);
  ASSERT_TRUE(runUntil([&] { return !h->hostOut.packets().empty(); }));
  settle(20);
  cpl = hostDelivered();
  ASSERT_EQ(cpl.size(), 1u);
  EXPECT_EQ(encodeTlp(cpl[0]), encodeTlp(makeWriteConfirmation(kNiReqId, kCpuReqId, 0x51, aB)));
  // Memory's confirmation of the third, naming the offset in memory ID 3 (the receiving
  // NI translated it back): this NI names the CPU's address.
  const uint64_t off = ref.route(dC).tlpAddr;
  h->sendFabric(tunnelFromPeer(makeWriteConfirmation(kMemCplId, kCpuReqId, 0x52, off), 0, false, 2));
  ASSERT_TRUE(runUntil([&] { return !h->hostOut.packets().empty(); }));
  settle(20);
  cpl = hostDelivered();
  ASSERT_EQ(cpl.size(), 1u);
  EXPECT_EQ(encodeTlp(cpl[0]), encodeTlp(makeWriteConfirmation(kMemCplId, kCpuReqId, 0x52, aC)));
  EXPECT_EQ(csrRead(regs::CONF_CNT), 2u) << "the NI confirmed two itself";
  EXPECT_EQ(csrRead(regs::RETX_FAIL_CNT), 0u);
}

// The receiving end: a receiving-NI confirmed write is ACKed at once and goes to
// memory as a DMWr whose confirmation ends at the NI; a memory-confirmed write's
// confirmation goes back translated to the offset, and a duplicate gets it again.
TEST_P(NicTest, ServesConfirmedWritesForAPeer) {
  setMemId(3, MemRegion{true, 0x0000'0042'0000'0000ull, 0x4000, true, true, false});
  settle(100);
  FabricPacket pb = tunnelFromPeer(makeDMWr(0x0000, 0x61, 0x80, randomBytes(16)), 3, true, 0);
  pb.tehFlags |= kTehConfNi;
  h->sendFabric(pb);
  Tlp w;
  ASSERT_TRUE(runUntil([&] { return h->popHostTlp(&w); }));
  EXPECT_EQ(w.kind, TlpKind::DMWr);
  EXPECT_EQ(w.requester, kNiReqId);
  EXPECT_EQ(w.addr, 0x0000'0042'0000'0080ull);
  ASSERT_TRUE(runUntil([&] { return !h->fabOut.packets().empty(); }));
  auto out = fabricOut();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].opcode, kOpRcAck);
  EXPECT_EQ(out[0].syndrome, kAethAck);
  EXPECT_EQ(out[0].psn, 0u);
  h->hostIn.push(encodeTlp(makeWriteConfirmation(kMemCplId, kNiReqId, w.tag, w.addr)));
  settle(200);
  EXPECT_TRUE(h->fabOut.packets().empty()) << "memory's confirmation ends at the NI";
  // Memory-confirmed: the confirmation goes back with the offset and the requester's tag.
  FabricPacket pc = tunnelFromPeer(makeDMWr(0x0000, 0x62, 0x1100, randomBytes(8)), 3, true, 1);
  pc.tehFlags |= kTehConfMem;
  h->sendFabric(pc);
  ASSERT_TRUE(runUntil([&] { return h->popHostTlp(&w); }));
  EXPECT_EQ(w.kind, TlpKind::DMWr);
  EXPECT_EQ(w.addr, 0x0000'0042'0000'1100ull);
  h->hostIn.push(encodeTlp(makeWriteConfirmation(kMemCplId, kNiReqId, w.tag, w.addr)));
  ASSERT_TRUE(runUntil([&] { return !h->fabOut.packets().empty(); }));
  settle(50);
  out = fabricOut();
  ASSERT_EQ(out.size(), 1u);
  const Bytes first = encodeFabric(responseToPeer(makeWriteConfirmation(kMemCplId, 0x0000, 0x62, 0x1100), 1));
  EXPECT_EQ(encodeFabric(out[0]), first);
  // Its duplicate (the confirmation was lost): answered with the same bytes, not written again.
  h->sendFabric(pc);
  ASSERT_TRUE(runUntil([&] { return !h->fabOut.packets().empty(); }));
  settle(50);
  out = fabricOut();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(encodeFabric(out[0]), first);
  EXPECT_TRUE(hostDelivered().empty()) << "the duplicate is not written again";
}

// Claim 18: the receiving NI keeps a copy of a write it confirmed until memory confirms
// it, and issues it to memory again when memory stays silent for MEM_TIMEOUT cycles;
// after MEM_LIMIT issues it gives up (MEM_FAIL_CNT, STATUS.mem_fail, interrupt) and the
// tracker tag is free again. A refusal by memory is a failure too.
TEST_P(NicTest, KeepsAConfirmedWriteUntilMemoryTakesIt) {
  setMemId(3, MemRegion{true, 0x0000'0042'0000'0000ull, 0x4000, true, true, false});
  h->csrWrite(regs::MEM_TIMEOUT, 300);
  h->csrWrite(regs::MEM_LIMIT, 2);
  h->csrWrite(regs::INTR_ADDR_LO, 0xFEE0'0080);
  h->csrWrite(regs::INTR_ADDR_HI, 1);
  h->csrWrite(regs::INTR_DATA, 0x0000'005A);
  h->csrWrite(regs::INTR_MASK, regs::STATUS_MEM_FAIL_MASK);
  settle(100);
  auto confirmedByUs = [&](uint8_t tag, uint64_t off, uint32_t psn) {
    FabricPacket p = tunnelFromPeer(makeDMWr(0x0000, tag, off, randomBytes(24)), 3, true, psn);
    p.tehFlags |= kTehConfNi;
    h->sendFabric(p);
  };
  auto nextToMemory = [&](Tlp* w, uint64_t* at) {
    const bool got = runUntil([&] { return h->popHostTlp(w); }, 2000);
    *at = cycles();
    return got;
  };
  // 1. Memory answers the second issue.
  confirmedByUs(0x61, 0x80, 0);
  Tlp w1, again;
  uint64_t t1 = 0, t2 = 0;
  ASSERT_TRUE(nextToMemory(&w1, &t1));
  ASSERT_TRUE(nextToMemory(&again, &t2)) << "issued again after MEM_TIMEOUT";
  EXPECT_EQ(encodeTlp(again), encodeTlp(w1)) << "the same TLP, tag and all";
  EXPECT_GE(t2 - t1, 300u);
  EXPECT_LT(t2 - t1, 400u);
  h->hostIn.push(encodeTlp(makeWriteConfirmation(kMemCplId, kNiReqId, w1.tag, w1.addr)));
  settle(800);
  EXPECT_TRUE(hostDelivered().empty()) << "confirmed: not issued a third time";
  EXPECT_EQ(csrRead(regs::MEM_REISSUE_CNT), 1u);
  EXPECT_EQ(csrRead(regs::MEM_FAIL_CNT), 0u);
  // 2. Memory never answers: issued 1 + MEM_LIMIT times, then given up.
  confirmedByUs(0x62, 0x100, 1);
  Tlp w2;
  uint64_t t = 0;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(nextToMemory(&w2, &t)) << "issue " << i;
  settle(800);
  std::vector<Tlp> got = hostDelivered();
  ASSERT_EQ(got.size(), 1u) << "nothing more to memory; the interrupt";
  EXPECT_EQ(encodeTlp(got[0]), encodeTlp(makeMWr(kNiReqId, 0, 0x1'FEE0'0080ull, le32(0x5A))));
  EXPECT_EQ(csrRead(regs::MEM_REISSUE_CNT), 3u);
  EXPECT_EQ(csrRead(regs::MEM_FAIL_CNT), 1u);
  EXPECT_TRUE(csrRead(regs::STATUS) & regs::STATUS_MEM_FAIL_MASK);
  // Its tracker tag is free again: the next request memory answers takes it.
  h->sendFabric(tunnelFromPeer(makeMRd(0x0000, 0x63, 0x200, 8), 3, true, 2));
  Tlp rd;
  ASSERT_TRUE(runUntil([&] { return h->popHostTlp(&rd); }));
  EXPECT_EQ(rd.kind, TlpKind::MRd);
  EXPECT_EQ(rd.tag, w2.tag) << "the lowest free tag: the one given up";
  // 3. Memory refuses a kept write: a failure, no further issue.
  h->hostIn.push(encodeTlp(makeCplD(kMemCplId, kNiReqId, rd.tag, 0x200, randomBytes(8))));
  confirmedByUs(0x64, 0x300, 3);
  Tlp w3;
  ASSERT_TRUE(nextToMemory(&w3, &t));
  h->hostIn.push(encodeTlp(makeCpl(kMemCplId, kNiReqId, w3.tag, CplStatus::UR, 24, 0)));
  settle(1000);
  got = hostDelivered();
  ASSERT_EQ(got.size(), 1u) << "the interrupt, nothing to memory";
  EXPECT_EQ(got[0].kind, TlpKind::MWr);
  EXPECT_EQ(csrRead(regs::MEM_FAIL_CNT), 2u);
  EXPECT_EQ(csrRead(regs::MEM_REISSUE_CNT), 3u);
  EXPECT_EQ(csrRead(regs::CPL_UNEXP_CNT), 0u);
}

// After the last resend the CPU gets a Completer Abort for its confirmed write, the
// failure is counted, and the NI raises its interrupt (an MWr of INTR_DATA).
TEST_P(NicTest, ConfirmedWriteThatFailsEndsInAbortAndInterrupt) {
  h->autoAnswer = false;
  Window wb = windowTo(kApertureBase, 0x4000, true, 1);
  wb.confAt = ConfAt::ReceiverNi;
  setWindow(0, wb);
  h->csrWrite(regs::RETX_TIMEOUT, 200);
  h->csrWrite(regs::RETX_LIMIT, 2);
  h->csrWrite(regs::INTR_ADDR_LO, 0xFEE0'0040);
  h->csrWrite(regs::INTR_ADDR_HI, 0x0000'0001);
  h->csrWrite(regs::INTR_DATA, 0x0000'00A5);
  h->csrWrite(regs::INTR_MASK, regs::STATUS_RETX_FAIL_MASK);
  settle(100);
  h->hostIn.push(encodeTlp(makeDMWr(kCpuReqId, 0x70, kApertureBase + 0x44, randomBytes(4))));
  std::vector<Tlp> got;
  ASSERT_TRUE(runUntil([&] {
    for (auto& t : hostDelivered()) got.push_back(t);
    return got.size() >= 2;
  }, 5000));
  settle(50);
  EXPECT_EQ(h->fabOut.packets().size(), 3u) << "sent, resent twice";
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(encodeTlp(got[0]), encodeTlp(makeCpl(kNiReqId, kCpuReqId, 0x70, CplStatus::CA, 4, 0x44)));
  EXPECT_EQ(encodeTlp(got[1]), encodeTlp(makeMWr(kNiReqId, 0, 0x1'FEE0'0040ull, le32(0xA5)))) << "the interrupt";
  EXPECT_EQ(csrRead(regs::RETX_FAIL_CNT), 1u);
  EXPECT_EQ(csrRead(regs::INTR_CNT), 1u);
  EXPECT_TRUE(csrRead(regs::STATUS) & regs::STATUS_RETX_FAIL_MASK);
}

// An ACK or NAK naming a PSN this NI has not sent to its source (stale, or forged with a
// good CRC) is ignored and counted (ACK_UNSENT_CNT): two writes to LID 9 (PSNs 0, 1),
// then an ACK of PSN 2, an ACK of PSN 0x400 and a NAK of PSN 5 from LID 9: none releases
// the writes, whose timer resends both; an ACK of PSN 1 then ends them (no failure).
TEST_P(NicTest, AnAckForAPsnNotSentReleasesNothing) {
  h->autoAnswer = false;
  setWindow(0, windowTo(kApertureBase, 0x4000, true, 1));
  h->csrWrite(regs::RETX_TIMEOUT, 1000);
  settle(100);
  h->hostIn.push(encodeTlp(makeMWr(kCpuReqId, 0, kApertureBase + 0x80, randomBytes(8))));
  h->hostIn.push(encodeTlp(makeMWr(kCpuReqId, 0, kApertureBase + 0x100, randomBytes(8))));
  ASSERT_TRUE(runUntil([&] { return h->fabOut.packets().size() >= 2; }, 3000));
  auto sent = fabricOut();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[1].psn, 1u);
  for (const auto& [psn, syndrome] : {std::pair<uint32_t, uint8_t>{2, kAethAck}, {0x400, kAethAck},
                                       {5, kAethNakPsnSeq}}) {
    FabricPacket a = answerPacket(NicHarness::kLid, kPeerLid, kOpRcAck, psn);
    a.syndrome = syndrome;
    h->sendFabric(a);
  }
  settle(200);
  EXPECT_EQ(csrRead(regs::ACK_UNSENT_CNT), 3u);
  ASSERT_TRUE(runUntil([&] { return h->fabOut.packets().size() >= 2; }, 3000)) << "the writes were not resent";
  sent = fabricOut();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].psn, 0u);
  EXPECT_EQ(sent[1].psn, 1u);
  FabricPacket ack = answerPacket(NicHarness::kLid, kPeerLid, kOpRcAck, 1);
  ack.syndrome = kAethAck;
  h->sendFabric(ack);
  settle(3000);
  EXPECT_TRUE(fabricOut().empty()) << "resent after the ACK of PSN 1";
  EXPECT_EQ(csrRead(regs::RETX_FAIL_CNT), 0u);
  EXPECT_EQ(csrRead(regs::ACK_UNSENT_CNT), 3u);
}

// A window to a LID without a PSN sequence (9 + NumPeers, as CAPS3 gives it: past the
// peers, with the index of LID 9): its read ends in CA at once and its write fails,
// neither leaves the NI, and LID 9's sequence is untouched (its write gets PSN 0). An
// ACK from that LID answers nothing: LID 9's write is resent when its timer runs out.
TEST_P(NicTest, RequestsToALidWithoutASequenceFailAtOnce) {
  h->autoAnswer = false;
  const uint16_t kNoPeerLid = static_cast<uint16_t>(
      kPeerLid + ((csrRead(regs::CAPS3) & regs::CAPS3_PEERS_MASK) >> regs::CAPS3_PEERS_LSB));
  ASSERT_GT(kNoPeerLid, kPeerLid) << "CAPS3 names no peers";
  setWindow(0, windowTo(kApertureBase, 0x4000, true, 1));
  Window w = windowTo(kApertureBase + 0x4000, 0x4000, true, 1);
  w.dstNode = kNoPeerLid - 1;
  setWindow(1, w);
  h->csrWrite(regs::RETX_TIMEOUT, 1000);
  settle(100);
  h->hostIn.push(encodeTlp(makeMRd(kCpuReqId, 0x71, kApertureBase + 0x4044, 4)));
  h->hostIn.push(encodeTlp(makeMWr(kCpuReqId, 0, kApertureBase + 0x4080, randomBytes(8))));
  h->hostIn.push(encodeTlp(makeMWr(kCpuReqId, 0, kApertureBase + 0x80, randomBytes(8))));
  std::vector<Tlp> got;
  ASSERT_TRUE(runUntil([&] {
    for (auto& t : hostDelivered()) got.push_back(t);
    return !got.empty() && !h->fabOut.packets().empty();
  }, 3000));
  settle(100);
  for (auto& t : hostDelivered()) got.push_back(t);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(encodeTlp(got[0]), encodeTlp(makeCpl(kNiReqId, kCpuReqId, 0x71, CplStatus::CA, 4, 0x44)));
  auto sent = fabricOut();
  ASSERT_EQ(sent.size(), 1u) << "only the write to LID 9 leaves";
  EXPECT_EQ(sent[0].dlid, kPeerLid);
  EXPECT_EQ(sent[0].psn, 0u) << "LID 9's sequence untouched";
  EXPECT_EQ(csrRead(regs::RETX_FAIL_CNT), 2u);
  EXPECT_TRUE(csrRead(regs::STATUS) & regs::STATUS_RETX_FAIL_MASK);
  // An ACK of PSN 0 from LID 73: LID 9's write stays, and its timer resends it.
  h->sendFabric(answerPacket(NicHarness::kLid, kNoPeerLid, kOpRcAck, 0));
  ASSERT_TRUE(runUntil([&] { return !h->fabOut.packets().empty(); }, 3000)) << "LID 9's write was not resent";
  sent = fabricOut();
  EXPECT_EQ(sent[0].dlid, kPeerLid);
  EXPECT_EQ(sent[0].psn, 0u);
}

TEST_P(NicTest, RequestRoomMeansAStartedRequestNeverStalls) {
  setWindow(0, windowTo(kApertureBase, 0x10000, true, 1));
  settle(100);
  h->gateOnRoom = true;
  h->fabOut.setStall(1.0);
  for (int i = 0; i < 40; ++i)
    h->hostIn.push(encodeTlp(makeMWr(kCpuReqId, 0, kApertureBase + 0x100 * i, randomBytes(kMaxPayload))));
  settle(3000);
  EXPECT_EQ(h->hostInMidStalls, 0u) << "a request started under room was held back";
  EXPECT_FALSE(h->hostReqRoom);
  EXPECT_GE(40u - h->hostIn.pending(), 2u) << "room for at least two whole requests";
  EXPECT_GT(h->hostIn.pending(), 0u) << "the test must fill the request path";
  h->fabOut.setStall(0.0);
  ASSERT_TRUE(runUntil([&] { return h->fabOut.packets().size() >= 40; }, 200000));
  EXPECT_EQ(h->hostInMidStalls, 0u);
}

TEST_P(NicTest, HostBadInputIsCountedAndAnswered) {
  setWindow(0, windowTo(kApertureBase, 0x4000, true, 1));
  Window ro = windowTo(kApertureBase + 0x4000, 0x1000, true, 1);
  ro.write = false;
  setWindow(1, ro);
  settle(100);
  // Write outside every window: dropped, counted, status bit.
  h->hostIn.push(encodeTlp(makeMWr(kCpuReqId, 0, kApertureBase + 0x100000, Bytes(8, 1))));
  // Read outside every window: Unsupported Request completion with its tag.
  h->hostIn.push(encodeTlp(makeMRd(kCpuReqId, 0x31, kApertureBase + 0x100000, 8)));
  // Write into a read-only window.
  h->hostIn.push(encodeTlp(makeMWr(kCpuReqId, 0, kApertureBase + 0x4000, Bytes(8, 2))));
  // Unknown TLP type (a message).
  Bytes msg = encodeTlp(makeMWr(kCpuReqId, 0, kApertureBase, Bytes(4, 3)));
  msg[0] = 0x30;
  h->hostIn.push(msg);
  // Atomic into a window that does not allow atomics: UR, permission counted.
  h->hostIn.push(encodeTlp(makeAtomic(TlpKind::FetchAdd, kCpuReqId, 0x32, kApertureBase, Bytes(8, 4))));
  // Confirmed write (DMWr) to the registers: UR, unsupported.
  h->hostIn.push(encodeTlp(makeDMWr(kCpuReqId, 0x33, kCsrBase + 0x10, Bytes(4, 4))));
  // Length field larger than the data: malformed; it hit a window, so the packet is stomped.
  Bytes shortMwr = encodeTlp(makeMWr(kCpuReqId, 0, kApertureBase + 0x80, Bytes(16, 5)));
  shortMwr.resize(shortMwr.size() - 8);
  h->hostIn.push(shortMwr);
  // Crosses a 4 KiB boundary: malformed.
  h->hostIn.push(encodeTlp(makeMWr(kCpuReqId, 0, kApertureBase + 0xFF8, Bytes(16, 6))));
  // And a good write after all that.
  h->hostIn.push(encodeTlp(makeMWr(kCpuReqId, 0, kApertureBase + 0x200, Bytes(8, 7))));
  settle(600);

  std::vector<Tlp> cpl = hostDelivered();
  ASSERT_EQ(cpl.size(), 3u);
  EXPECT_EQ(cpl[0].kind, TlpKind::Cpl);
  EXPECT_EQ(cpl[0].status, CplStatus::UR);
  EXPECT_EQ(cpl[0].tag, 0x31);
  EXPECT_EQ(cpl[1].status, CplStatus::UR);
  EXPECT_EQ(cpl[1].tag, 0x32);
  EXPECT_EQ(cpl[2].status, CplStatus::UR);
  EXPECT_EQ(cpl[2].tag, 0x33);
  EXPECT_EQ(csrRead(regs::WIN_MISS_CNT), 2u);
  EXPECT_EQ(csrRead(regs::PERM_CNT), 2u);
  EXPECT_EQ(csrRead(regs::MALFORMED_CNT), 3u);
  EXPECT_EQ(csrRead(regs::UNSUP_CNT), 1u);
  const uint32_t st = csrRead(regs::STATUS);
  EXPECT_TRUE(st & regs::STATUS_WIN_MISS_MASK);
  EXPECT_TRUE(st & regs::STATUS_PERM_MASK);
  EXPECT_TRUE(st & regs::STATUS_MALFORMED_MASK);
  EXPECT_TRUE(st & regs::STATUS_UNSUPPORTED_MASK);
  h->csrWrite(regs::STATUS, regs::STATUS_WIN_MISS_MASK);
  EXPECT_FALSE(csrRead(regs::STATUS) & regs::STATUS_WIN_MISS_MASK) << "write 1 clears";

  // Fabric: the malformed write left with its ICRC stomped (receivers drop it and NAK
  // it 0x61, not resent), as long as its PktLen and its TLP's Length say (padded up to
  // the Length), so no receiver takes it for a packet damaged on the way; the good
  // write is intact.
  ASSERT_EQ(h->fabOut.packets().size(), 2u);
  FabError err;
  Bytes stomped = h->fabOut.packets()[0].bytes;
  EXPECT_FALSE(decodeFabric(stomped, &err));
  EXPECT_EQ(err, FabError::BadIcrc);
  EXPECT_EQ(stomped.size(), 4u * (getBe(&stomped[4], 2) & 0x7FF) + 2) << "PktLen covers the packet";
  const size_t t = stomped.size() - kTrailerBytes;
  const uint32_t icrc = static_cast<uint32_t>(getLe(&stomped[t], 4));
  EXPECT_EQ(icrc, ~computeIcrc(stomped.data(), t)) << "stomped ICRC is the inverted good one";
  auto good = decodeFabric(h->fabOut.packets()[1].bytes, &err);
  ASSERT_TRUE(good) << toString(err);
  EXPECT_EQ(decodeTlp(good->payload)->data, Bytes(8, 7));
}

// Issue 79: a host that withdraws tvalid before the handshake (an AXI4-Stream
// violation) under back-pressure. The NI never wedges and sends nothing half-formed:
// each TLP with a withdrawn beat is malformed (counted, its packet stomped), every
// other one leaves intact, and the NI serves its registers after.
TEST_P(NicTest, HostWithdrawingValidCostsOnlyItsTlps) {
  setWindow(0, windowTo(kApertureBase, 0x100000, true, 1));
  settle(100);
  h->hostIn.sentWithdrawn().clear();
  h->fabOut.setStall(0.6);
  h->hostIn.setWithdraw(0.3);
  const unsigned n = 120;
  std::vector<Bytes> data(n);
  for (unsigned i = 0; i < n; ++i) {
    data[i] = randomBytes(4 * (1 + rng()() % 40));
    h->hostIn.push(encodeTlp(makeMWr(kCpuReqId, 0, kApertureBase + 0x1000 * i, data[i])));
  }
  ASSERT_TRUE(runUntil([&] { return h->hostIn.empty(); }, 400000)) << "the host port wedged";
  h->hostIn.setWithdraw(0);
  h->fabOut.setStall(0);
  // One packet per write, stomped or not, in PSN order (nothing ACKs them, so the NI
  // resends them and the last writes wait for the slots of the first, which fail at the
  // resend limit: a resend repeats its PSN and is left out).
  std::vector<Bytes> sent;
  size_t seen = 0;
  auto collect = [&] {
    const auto& out = h->fabOut.packets();
    for (; seen < out.size(); ++seen)
      if (getBe(&out[seen].bytes[17], 3) == sent.size()) sent.push_back(out[seen].bytes);
    return sent.size() == n;
  };
  runUntil(collect, 200000);
  const auto& withdrawn = h->hostIn.sentWithdrawn();
  ASSERT_EQ(withdrawn.size(), n);
  const unsigned bad = static_cast<unsigned>(std::count(withdrawn.begin(), withdrawn.end(), true));
  EXPECT_GT(bad, 0u);
  EXPECT_LT(bad, n);
  ASSERT_EQ(sent.size(), n);
  for (unsigned i = 0; i < n; ++i) {
    FabError err;
    const auto p = decodeFabric(sent[i], &err);
    if (withdrawn[i]) {
      EXPECT_FALSE(p) << "write " << i << " had a withdrawn beat";
      continue;
    }
    ASSERT_TRUE(p) << "write " << i << ": " << toString(err);
    const auto t = decodeTlp(p->payload);
    ASSERT_TRUE(t);
    EXPECT_EQ(t->addr & 0xFFFFF, 0x1000u * i) << "write " << i << ": its offset in the window";
    EXPECT_EQ(t->data, data[i]) << "write " << i;
  }
  EXPECT_EQ(csrRead(regs::MALFORMED_CNT), bad);
}

// Issue 79: header fields the NI used to accept whatever they held. Each packet is
// well formed otherwise, CRCs right: dropped unanswered, counted (BAD_PKT_CNT; a
// P_Key outside the partition also PKEY_ERR_CNT); none takes a PSN, so the good
// request after them is taken in sequence.
TEST_P(NicTest, FabricHeaderFieldsAndPartitionAreChecked) {
  const uint64_t memBase = 0x0000'0010'0000'0000ull;
  setMemId(1, MemRegion{true, memBase, 0x2000, true, true});
  settle(100);
  auto reseal = [](Bytes& b) {  // the CRCs of a packet whose header was changed
    b.resize(b.size() - kTrailerBytes);
    sealFabric(b);
  };
  auto request = [&](uint8_t fill) { return tunnelFromPeer(makeMWr(0, 0, 0x100, Bytes(8, fill)), 1, true, 0); };
  struct Case {
    const char* what;
    bool pkey;                                // counted as a partition violation
    std::function<void(FabricPacket&)> field; // a field set before encoding
    std::function<void(Bytes&)> bytes;        // or header bits set after it
  };
  const Case cases[] = {
      {"LVer 1", false, nullptr, [](Bytes& b) { b[0] |= 0x01; }},
      {"TVer 1", false, nullptr, [](Bytes& b) { b[9] |= 0x01; }},
      {"PadCnt 1", false, nullptr, [](Bytes& b) { b[9] |= 0x10; }},
      {"DestQP 0x11", false, [](FabricPacket& p) { p.destQp = 0x11; }, nullptr},
      {"DestQP 0xFFFFFF", false, [](FabricPacket& p) { p.destQp = 0xFFFFFF; }, nullptr},
      {"P_Key 0x0000", true, [](FabricPacket& p) { p.pkey = 0x0000; }, nullptr},
      {"P_Key 0x8000", true, [](FabricPacket& p) { p.pkey = 0x8000; }, nullptr},
      {"P_Key of another partition", true, [](FabricPacket& p) { p.pkey = 0x8123; }, nullptr},
  };
  unsigned n = 0, pkeys = 0;
  for (const Case& c : cases) {
    FabricPacket p = request(static_cast<uint8_t>(0xB0 + n));
    if (c.field) c.field(p);
    Bytes b = encodeFabric(p);
    if (c.bytes) {
      c.bytes(b);
      reseal(b);
    }
    h->sendFabricRaw(b, 0);
    ++n;
    pkeys += c.pkey;
  }
  settle(400);
  EXPECT_TRUE(hostDelivered().empty()) << "a packet with a bad header reached memory";
  EXPECT_TRUE(fabricOut().empty()) << "a packet with a bad header was answered";
  EXPECT_EQ(csrRead(regs::BAD_PKT_CNT), n);
  EXPECT_EQ(csrRead(regs::PKEY_ERR_CNT), pkeys);
  EXPECT_EQ(csrRead(regs::CRC_ERR_CNT), 0u);
  // 0x7FFF, a limited member of the default partition, talks to this full member.
  FabricPacket lim = request(0xC1);
  lim.pkey = 0x7FFF;
  h->sendFabric(lim);
  settle(300);
  auto got = hostDelivered();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].data, Bytes(8, 0xC1));
  auto acks = fabricOut();
  ASSERT_EQ(acks.size(), 1u);
  EXPECT_EQ(acks[0].psn, 0u);
  EXPECT_EQ(acks[0].pkey, 0xFFFFu) << "answers carry this NI's P_Key";
  // Made a limited member itself, the NI refuses the limited member and stamps its own.
  h->csrWrite(regs::P_KEY, 0x7FFF);
  settle(100);
  FabricPacket lim2 = request(0xC2);
  lim2.pkey = 0x7FFF;
  lim2.psn = 1;
  h->sendFabric(lim2);
  settle(300);
  EXPECT_TRUE(hostDelivered().empty());
  EXPECT_EQ(csrRead(regs::PKEY_ERR_CNT), pkeys + 1);
  FabricPacket full = request(0xC3);
  full.psn = 1;
  h->sendFabric(full);
  settle(300);
  got = hostDelivered();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].data, Bytes(8, 0xC3));
  acks = fabricOut();
  ASSERT_EQ(acks.size(), 1u);
  EXPECT_EQ(acks[0].pkey, 0x7FFFu);
}

// Issue 79: poisoned TLPs (EP) are passed on poisoned, as a PCIe switch does, and
// counted at both ends; a poisoned register write is not applied.
TEST_P(NicTest, PoisonedTlpsArePassedOnPoisonedAndCounted) {
  const uint64_t memBase = 0x0000'0010'0000'0000ull;
  setMemId(1, MemRegion{true, memBase, 0x2000, true, true});
  setWindow(0, windowTo(kApertureBase, 0x4000, true, 1));
  settle(100);
  const uint32_t limit = csrRead(regs::RETX_LIMIT);
  Bytes w = encodeTlp(makeMWr(kCpuReqId, 0, kApertureBase + 0x40, Bytes(16, 0x5C)));
  w[2] |= 0x40;
  h->hostIn.push(w);
  Bytes csr = encodeTlp(makeMWr(kCpuReqId, 0, kCsrBase + regs::RETX_LIMIT, le32(limit + 5)));
  csr[2] |= 0x40;
  h->hostIn.push(csr);
  settle(300);
  auto out = h->fabOut.packets();
  ASSERT_EQ(out.size(), 1u);
  const auto p = decodeFabric(out[0].bytes);
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->payload[2] & 0x40) << "EP kept on the way out";
  h->fabOut.packets().clear();
  EXPECT_EQ(csrRead(regs::RETX_LIMIT), limit) << "a poisoned register write was applied";
  EXPECT_EQ(csrRead(regs::POISON_HOST_CNT), 2u);
  // From the fabric: delivered to memory still poisoned.
  FabricPacket in = tunnelFromPeer(makeMWr(0, 0, 0x100, Bytes(8, 0x6D)), 1, true, 0);
  in.payload[2] |= 0x40;
  h->sendFabric(in);
  settle(300);
  ASSERT_EQ(h->hostOut.packets().size(), 1u);
  EXPECT_TRUE(h->hostOut.packets().front().bytes[2] & 0x40) << "EP kept toward memory";
  EXPECT_EQ(csrRead(regs::POISON_FAB_CNT), 1u);
}

// Issue 79: fabric packets far longer than any the NI sends, CRCs right: one of
// 8 KiB + headers (more than PktLen's 11 bits of words can say) and one of 1 KiB of data
// at MaxPayload 256 (PktLen right). Each is dropped and counted, nothing reaches memory,
// every receive credit comes back, and the NI serves its peer and its registers after.
TEST_P(NicTest, OversizeFabricPacketsAreDroppedAndTheNiServesOn) {
  const uint64_t memBase = 0x0000'0010'0000'0000ull;
  setMemId(1, MemRegion{true, memBase, 0x4000, true, true});
  settle(200);
  const unsigned credits[2] = {h->rxCredits[0], h->rxCredits[1]};
  h->sendFabricRaw(encodeFabric(tunnelFromPeer(makeMWr(0, 0, 0x100, Bytes(8192, 0x11)), 1, true, 0)), 0);
  h->sendFabricRaw(encodeFabric(tunnelFromPeer(makeMWr(0, 0, 0x100, Bytes(1024, 0x22)), 1, true, 0)), 0);
  settle(4000);
  EXPECT_TRUE(hostDelivered().empty()) << "an oversize packet reached memory";
  EXPECT_EQ(csrRead(regs::BAD_PKT_CNT) + csrRead(regs::CRC_ERR_CNT), 2u);
  EXPECT_EQ(h->rxCredits[0], credits[0]) << "a receive credit was not returned";
  EXPECT_EQ(h->rxCredits[1], credits[1]);
  fabricOut();  // NAKs of the PSN expected, if any
  h->sendFabric(tunnelFromPeer(makeMWr(0, 0, 0x200, Bytes(64, 0x33)), 1, true, 0));
  settle(400);
  const auto got = hostDelivered();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].data, Bytes(64, 0x33));
  const auto acks = fabricOut();
  ASSERT_EQ(acks.size(), 1u);
  EXPECT_EQ(acks[0].opcode, kOpRcAck);
  EXPECT_EQ(acks[0].syndrome, kAethAck);
}

TEST_P(NicTest, FabricBadInputIsDroppedCountedAndAnswered) {
  setMemId(1, MemRegion{true, 0x0000'0010'0000'0000ull, 0x2000, true, true});
  settle(100);
  const uint64_t memBase = 0x0000'0010'0000'0000ull;
  // PSNs follow the peer's sequence: a request refused for its content takes its
  // place in it, a damaged or misaddressed one does not.
  // 1. Corrupted request: nullified or dropped, CRC error, NAK (the PSN expected) to the sender.
  Bytes bad = encodeFabric(tunnelFromPeer(makeMWr(0, 0, 0x100, Bytes(32, 1)), 1, true, 0));
  bad[50] ^= 0x04;
  h->sendFabricRaw(bad, 0);
  // 2. Unknown memory ID, write: NAK remote access error.
  h->sendFabric(tunnelFromPeer(makeMWr(0, 0, 0x100, Bytes(8, 2)), 9, true, 0));
  // 3. Unknown memory ID, read: UR completion back through the tunnel.
  h->sendFabric(tunnelFromPeer(makeMRd(0x0000, 0x55, 0x100, 8), 9, true, 1));
  // 4. Out of bounds.
  h->sendFabric(tunnelFromPeer(makeMWr(0, 0, 0x2000, Bytes(8, 3)), 1, true, 2));
  // 5. Not for us.
  FabricPacket other = tunnelFromPeer(makeMWr(0, 0, 0x100, Bytes(8, 4)), 1, true, 3);
  other.dlid = 77;
  h->sendFabric(other);
  // 6. Opcode we do not speak (valid CRCs).
  FabricPacket unk = tunnelFromPeer(makeMWr(0, 0, 0x100, Bytes(8, 5)), 1, true, 3);
  unk.opcode = 0x04;  // RC SEND only
  h->sendFabric(unk);
  // 7. Truncated: LRH length larger than the bytes.
  Bytes trunc = encodeFabric(tunnelFromPeer(makeMWr(0, 0, 0x100, Bytes(16, 6)), 1, true, 3));
  trunc.resize(trunc.size() - 8);
  h->sendFabricRaw(trunc, 0);
  // 8. A good write still lands.
  h->sendFabric(tunnelFromPeer(makeMWr(0, 0, 0x180, Bytes(8, 9)), 1, true, 3));
  // 9. Its duplicate is ACKed again, not applied.
  h->sendFabric(tunnelFromPeer(makeMWr(0, 0, 0x180, Bytes(8, 9)), 1, true, 3));
  // 10, 11. Ahead of the sequence (a gap): dropped; the gap is NAKed once.
  h->sendFabric(tunnelFromPeer(makeMWr(0, 0, 0x1C0, Bytes(8, 10)), 1, true, 9));
  h->sendFabric(tunnelFromPeer(makeMWr(0, 0, 0x1C0, Bytes(8, 11)), 1, true, 10));
  // 12. The next in sequence lands.
  h->sendFabric(tunnelFromPeer(makeMWr(0, 0, 0x1C0, Bytes(8, 12)), 1, true, 4));
  settle(2000);

  const auto host = hostDelivered();
  ASSERT_EQ(host.size(), 2u) << "only the good writes reach the host, once";
  EXPECT_EQ(host[0].addr, memBase + 0x180);
  EXPECT_EQ(host[0].data, Bytes(8, 9));
  EXPECT_EQ(host[1].addr, memBase + 0x1C0);
  EXPECT_EQ(host[1].data, Bytes(8, 12));

  const auto out = fabricOut();
  ASSERT_EQ(out.size(), 9u);
  std::multiset<uint32_t> naksSeq, naksAcc, acks;
  int urs = 0;
  for (auto& p : out) {
    EXPECT_EQ(p.dlid, kPeerLid);
    EXPECT_EQ(p.vl, 1) << "responses travel on VC1";
    if (p.opcode == kOpRcAck) {
      if (p.syndrome == kAethNakPsnSeq) naksSeq.insert(p.psn);
      if (p.syndrome == kAethNakRemAccess) naksAcc.insert(p.psn);
      if (p.syndrome == kAethAck) acks.insert(p.psn);
    } else {
      ASSERT_EQ(p.opcode, kOpTunnelRsp);
      auto c = decodeTlp(p.payload);
      ASSERT_TRUE(c);
      EXPECT_EQ(c->status, CplStatus::UR);
      EXPECT_EQ(c->tag, 0x55);
      ++urs;
    }
  }
  EXPECT_EQ(naksSeq, (std::multiset<uint32_t>{0, 3, 4}));
  EXPECT_EQ(naksAcc, (std::multiset<uint32_t>{0, 2}));
  EXPECT_EQ(acks, (std::multiset<uint32_t>{3, 3, 4}));
  EXPECT_EQ(urs, 1);
  EXPECT_EQ(csrRead(regs::CRC_ERR_CNT), 2u);
  EXPECT_EQ(csrRead(regs::MEMID_ERR_CNT), 2u);
  EXPECT_EQ(csrRead(regs::BOUNDS_ERR_CNT), 1u);
  EXPECT_EQ(csrRead(regs::BAD_PKT_CNT), 2u);
  EXPECT_EQ(csrRead(regs::NAK_TX_CNT), 5u);
  EXPECT_EQ(csrRead(regs::DUP_CNT), 1u);
  EXPECT_EQ(csrRead(regs::OOS_CNT), 2u);
  EXPECT_EQ(csrRead(regs::RX_PKTS), 12u);
}

TEST_P(NicTest, DamagedPacketsNakTheirOwnSourcesSequence) {
  // A damaged request is NAKed with the PSN its source is expected to send next: that
  // source's, not the one of the packet before it (at 64 bits the receiver reads the
  // source from its header capture, a beat after it arrives). A fragment that ends in
  // its first beat is not NAKed there at all: its source is not yet captured.
  setMemId(1, MemRegion{true, 0x0000'0010'0000'0000ull, 0x2000, true, true});
  settle(100);
  constexpr uint16_t kOtherLid = 5;
  FabricPacket other = tunnelFromPeer(makeMWr(0, 0, 0x100, Bytes(8, 1)), 1, true, 0);
  other.slid = kOtherLid;  // its source now expects PSN 1; kPeerLid's still 0
  h->sendFabric(other);
  const Bytes whole = encodeFabric(tunnelFromPeer(makeMWr(0, 0, 0x140, Bytes(8, 2)), 1, true, 0));
  h->sendFabricRaw(Bytes(whole.begin(), whole.begin() + 8), 0);   // one beat at every width
  h->sendFabricRaw(Bytes(whole.begin(), whole.begin() + 16), 0);  // two beats at 64 bits
  settle(1000);
  EXPECT_EQ(hostDelivered().size(), 1u) << "only the good write lands";
  unsigned naks = 0;
  for (const auto& p : fabricOut()) {
    if (p.dlid != kPeerLid) continue;
    EXPECT_EQ(p.opcode, kOpRcAck);
    EXPECT_EQ(p.syndrome, kAethNakPsnSeq);
    EXPECT_EQ(p.psn, 0u) << "the PSN the damaged packet's own source is expected to send";
    ++naks;
  }
  if (GetParam() == 64) EXPECT_EQ(naks, 1u) << "the two-beat fragment only";
  else EXPECT_GE(naks, 1u);
  EXPECT_EQ(csrRead(regs::CRC_ERR_CNT), 2u);
}

TEST_P(NicTest, IcrcCatchesCorruptionBehindAGoodVcrc) {
  // A switch that corrupts a packet in its buffer and recomputes the link CRC:
  // the VCRC is good, only the end-to-end ICRC shows the damage.
  setMemId(1, MemRegion{true, 0x0000'0010'0000'0000ull, 0x2000, true, true});
  settle(100);
  Bytes b = encodeFabric(tunnelFromPeer(makeMWr(0, 0, 0x100, Bytes(32, 1)), 1, true, 0));
  b[50] ^= 0x04;
  const uint16_t v = crc16Vcrc(b.data(), b.size() - 2);
  b[b.size() - 2] = static_cast<uint8_t>(v);
  b[b.size() - 1] = static_cast<uint8_t>(v >> 8);
  h->sendFabricRaw(b, 0);
  settle(300);
  EXPECT_TRUE(hostDelivered().empty());
  EXPECT_EQ(csrRead(regs::CRC_ERR_CNT), 1u);
  const auto out = fabricOut();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].opcode, kOpRcAck);
  EXPECT_EQ(out[0].syndrome, kAethNakPsnSeq);
  EXPECT_EQ(out[0].psn, 0u) << "the PSN expected next";
}

TEST_P(NicTest, NakReceivedIsCounted) {
  FabricPacket nak = answerPacket(NicHarness::kLid, kPeerLid, kOpRcAck, 3);
  nak.syndrome = kAethNakPsnSeq;
  h->sendFabric(nak);
  settle(100);
  EXPECT_EQ(csrRead(regs::NAK_RX_CNT), 1u);
  EXPECT_TRUE(csrRead(regs::STATUS) & regs::STATUS_NAK_RX_MASK);
}

TEST_P(NicTest, UnexpectedCompletionIsCounted) {
  h->hostIn.push(encodeTlp(makeCplD(kMemCplId, kNiReqId, 3, 0, Bytes(4, 0))));
  settle(50);
  EXPECT_EQ(csrRead(regs::CPL_UNEXP_CNT), 1u);
  EXPECT_TRUE(fabricOut().empty());
}

TEST_P(NicTest, BackToBackWritesKeepFabricPortBusy) {
  // Performance is part of correctness: with no idles and no back-pressure the
  // fabric port carries one beat every cycle while writes stream in.
  setWindow(0, windowTo(kApertureBase, 0x100000, true, 1));
  settle(100);
  const int n = 64;
  for (int i = 0; i < n; ++i) h->hostIn.push(encodeTlp(makeMWr(kCpuReqId, 0, kApertureBase + 256 * i, Bytes(256, 1))));
  const uint64_t beats0 = h->fabOutBeats;
  uint64_t first = 0, last = 0;
  ASSERT_TRUE(runUntil([&] {
    if (!first && h->fabOutBeats > beats0) first = h->now;
    if (h->fabOut.packets().size() >= size_t(n)) { last = h->now; return true; }
    return false;
  }));
  const double util = double(h->fabOutBeats - beats0) / double(last - first + 1);
  EXPECT_GE(util, 0.97) << "fabric beats per cycle";
}

TEST_P(NicTest, CombinedStoreStreamsTakeABeatEveryCycle) {
  // A full combined packet closes with its last beat (no flush cycle), so a stream
  // of contiguous stores enters the host port at one beat per cycle at every width.
  Window w = windowTo(kApertureBase, 0x100000, true, 1);
  w.combine = true;
  setWindow(0, w);
  settle(100);
  for (const unsigned bytes : {8u, 64u}) {
    fabricOut();
    const unsigned n = 512;
    for (unsigned i = 0; i < n; ++i)
      h->hostIn.push(encodeTlp(makeMWr(kCpuReqId, 0, kApertureBase + 0x10000 + uint64_t(bytes) * i, Bytes(bytes, 2))));
    const uint64_t start = h->now;
    ASSERT_TRUE(runUntil([&] { return h->hostIn.empty(); }));
    const double beats = double((16 + bytes + h->bpb - 1) / h->bpb) * n;
    EXPECT_GE(beats / double(h->now - start), 0.99) << bytes << "-byte stores: host beats per cycle";
    settle(200);
    EXPECT_EQ(fabricOut().size(), size_t(n * bytes / kMaxPayload)) << "full packets only";
  }
}

INSTANTIATE_TEST_SUITE_P(Widths, NicTest, ::testing::Values(64u, 128u, 256u, 512u),
                         [](const auto& info) { return "W" + std::to_string(info.param); });

}  // namespace

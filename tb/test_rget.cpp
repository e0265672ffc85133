// SPDX-License-Identifier: Apache-2.0
// Remote gets in a multi-node system: the self-paced rendezvous of seed 003
// (sim/rget.hpp). Each node sends a message to the next: its CPU posts an RTS, the
// target's CPU takes it and makes one receive post, and from then on the two DMA
// engines hand descriptors back and forth by remote gets until the message has moved,
// portion by portion. Checked: every byte at the target when its reception counter
// reaches zero, the origin's completion record when its counter does, the remote-get
// counts, and the CPU's register writes per message: the same for 1 portion as for 17.
#include <gtest/gtest.h>

#include <map>

#include "dma.hpp"
#include "driver.hpp"
#include "ni_regs.hpp"
#include "rget.hpp"
#include "system.hpp"
#include "verilated_fixture.hpp"

using namespace ni;

namespace {

struct Param {
  unsigned nodes;
  unsigned width;
};

// Every node's memory map (the same at all nodes) and memory IDs.
constexpr uint64_t kSendBuf = 0x2000'0000, kRecvBuf = 0x4000'0000, kBufBytes = 0x80'0000;
constexpr uint64_t kScratch = 0x5000'0000, kScratchBytes = 0x1'0000;
constexpr uint64_t kDescArea = 0x5100'0000, kDescAreaBytes = 0x4'0000;
constexpr uint64_t kDoneArea = 0x5200'0000, kStage = 0x5300'0000;
constexpr uint64_t kRing = 0x1000'0000, kRemRing = 0x1001'0000, kRcvRing = 0x1100'0000;
constexpr uint16_t kRecvMid = 1, kScratchMid = 4, kSendMid = 5, kDescMid = 6, kDoneMid = 7;
constexpr unsigned kSwFifo = 0, kRemFifo = 7, kRtsFifo = 0, kRecvCnt = 1, kDoneCnt = 2;
constexpr uint16_t kRingSlots = 64, kRemSlots = 16, kRcvSlots = 16;

class RgetSystemTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    seed = tb::envU64("NI_SEED", 1);
    rng.seed(seed);
    SystemConfig c;
    c.nodes = GetParam().nodes;
    c.dataBits = GetParam().width;
    c.seed = seed;
    c.hostStall = 0.1;
    sys = std::make_unique<System>(c);
    sys->reset();
    for (unsigned n = 0; n < sys->size(); ++n) {
      sys->setMemId(n, kRecvMid, MemRegion{true, kRecvBuf, kBufBytes, false, true});
      sys->setMemId(n, kScratchMid, MemRegion{true, kScratch, kScratchBytes, true, true});
      sys->setMemId(n, kSendMid, MemRegion{true, kSendBuf, kBufBytes, true, false});
      sys->setMemId(n, kDescMid, MemRegion{true, kDescArea, kDescAreaBytes, true, false});
      sys->setMemId(n, kDoneMid, MemRegion{true, kDoneArea, 0x1000, false, true});
      driver::setInjFifo(sys->csrWriter(n), kSwFifo, kRing, kRingSlots);
      driver::setInjFifo(sys->csrWriter(n), kRemFifo, kRemRing, kRemSlots, true);
      driver::setRcvFifo(sys->csrWriter(n), kRtsFifo, kRcvRing, kRcvSlots);
      rings.emplace_back(kRing, kRingSlots);
      rcv.emplace_back(kRcvRing, kRcvSlots, sys->config().maxPayload);
    }
    ASSERT_TRUE(sys->drain());
  }
  void TearDown() override {
    EXPECT_FALSE(sys->rtlError()) << "an RTL assertion failed";
    if (HasFailure()) std::cerr << "[ reproduce ] NI_SEED=" << seed << "\n";
  }
  Memory& mem(unsigned n) { return sys->node(n).memory(); }
  // The CPU's register writes, counted per node.
  driver::CsrWrite cpu(unsigned n) {
    return [this, n](uint32_t off, uint32_t v) {
      ++csrWrites[n];
      sys->csrWriter(n)(off, v);
    };
  }
  uint16_t injHead(unsigned n, unsigned f) { return static_cast<uint16_t>(sys->readCsr(n, regs::INJ_HEAD(f))); }
  // Posts messages into node n's doorbell-fed FIFO and rings its doorbell once.
  void post(unsigned n, const std::vector<std::pair<DmaDescriptor, Bytes>>& msgs) {
    const uint16_t head = injHead(n, kSwFifo);
    for (const auto& [d, data] : msgs)
      ASSERT_TRUE(rings[n].post(d, data, head, [this, n](uint64_t a, const Bytes& b) { mem(n).write(a, b); }));
    driver::ringDoorbell(cpu(n), kSwFifo, rings[n].tail());
  }

  struct Message {
    unsigned origin, target;
    uint32_t tag, len, portion;
    uint64_t slot;  // message index: where its buffers and areas are
    Bytes data;
    bool rtsTaken = false;
    uint32_t portions = 0;
  };
  // The origin's one action: the RTS (a send of 64 bytes to the target's FIFO 0), with
  // the counter its completion copy will decrement.
  void sendRts(Message& m) {
    mem(m.origin).write(kSendBuf + m.slot * 0x10'0000, m.data);
    RtsMessage r;
    r.tag = m.tag;
    r.len = m.len;
    r.originLid = lidOf(m.origin);
    r.originFifo = kRemFifo;
    r.doneCnt = kDoneCnt;
    r.srcMid = kSendMid;
    r.srcOff = m.slot * 0x10'0000;
    r.scratchMid = kScratchMid;
    r.scratchOff = m.slot * 0x1000;
    r.scratchSlots = 64;
    r.doneMid = kDoneMid;
    r.doneOff = m.slot * 64;
    driver::loadCounter(cpu(m.origin), kDoneCnt, kDescBytes);
    DmaDescriptor d;
    d.op = static_cast<uint8_t>(DmaOp::Send);
    d.flags = kDescInline;
    d.dest = lidOf(m.target);
    d.qid = kRtsFifo;
    d.len = kDescBytes;
    d.tag = m.tag;
    post(m.origin, {{d, r.encode()}});
  }
  // The target's one action, once the RTS is in its reception FIFO: the receive post
  // (descriptor area, scratch for the origin, counter, one doorbell).
  bool receivePost(Message& m) {
    auto e = rcv[m.target].take([this, &m](uint64_t a, size_t n) { return mem(m.target).read(a, n); },
                                [this, &m](uint64_t a, const Bytes& b) { mem(m.target).write(a, b); });
    if (!e) return false;
    EXPECT_EQ(e->hdr.srcLid, lidOf(m.origin));
    const RtsMessage rts = RtsMessage::decode(e->data.data());
    EXPECT_EQ(rts.tag, m.tag);
    driver::releaseRcvSlots(cpu(m.target), kRtsFifo, rcv[m.target].head());
    RndvTarget t;
    t.lid = lidOf(m.target);
    t.fifo = kRemFifo;
    t.recvMid = kRecvMid;
    t.recvOff = m.slot * 0x10'0000;
    t.rcvCnt = kRecvCnt;
    t.descMid = kDescMid;
    t.descOff = m.slot * 0x4000;
    t.portion = rndvPortion(rts.len, m.portion, rts.scratchSlots);
    RndvPlan plan = planRendezvous(rts, t);
    m.portions = plan.portions;
    mem(m.target).write(kDescArea + t.descOff, plan.descArea);
    // The scratch bytes go to the origin by a put from a staging buffer; the first
    // block by a remote get straight from the descriptor area.
    const uint64_t stage = kStage + m.slot * 0x2000;
    mem(m.target).write(stage, plan.scratch);
    plan.putScratch.src = stage;
    plan.rgetFirst.src = kDescArea + t.descOff;
    driver::loadCounter(cpu(m.target), kRecvCnt, rts.len);
    post(m.target, {{plan.putScratch, {}}, {plan.rgetFirst, {}}});
    return true;
  }
  uint32_t cnt(unsigned n, uint32_t off) { return sys->readCsr(n, off); }

  uint64_t seed = 1;
  std::mt19937_64 rng;
  std::unique_ptr<System> sys;
  std::vector<InjRing> rings;
  std::vector<RcvRing> rcv;
  std::map<unsigned, unsigned> csrWrites;
};

// Each node sends messages to the next one (with two nodes, both ways at once), one
// at a time per pair: 1, 2, 5 and 17 portions, lengths not a multiple of a portion.
TEST_P(RgetSystemTest, SelfPacedRendezvousMovesMessagesWithOneActionPerSide) {
  const unsigned nodes = sys->size();
  const uint32_t kPortion = 4096;
  const uint32_t lens[] = {1024, 2 * kPortion, 4 * kPortion + 20, 16 * kPortion + 4};
  std::map<uint32_t, std::pair<unsigned, unsigned>> writesByPortions;  // portions -> {origin, target} writes
  for (uint64_t k = 0; k < std::size(lens); ++k) {
    std::vector<Message> msgs;
    for (unsigned o = 0; o < nodes; ++o) {
      Message m;
      m.origin = o;
      m.target = (o + 1) % nodes;
      m.tag = static_cast<uint32_t>(0x100 * (o + 1) + k);
      m.len = lens[k];
      m.portion = kPortion;
      m.slot = k;
      m.data.resize(m.len);
      for (auto& b : m.data) b = static_cast<uint8_t>(rng());
      msgs.push_back(std::move(m));
    }
    csrWrites.clear();
    std::map<unsigned, unsigned> originWrites, targetWrites;
    for (auto& m : msgs) sendRts(m);
    for (auto& m : msgs) originWrites[m.origin] = csrWrites[m.origin];
    csrWrites.clear();
    // Targets take their RTS as it arrives: the only CPU work at the target.
    for (uint64_t c = 0; c < 200'000; c += 100) {
      bool all = true;
      for (auto& m : msgs) {
        if (!m.rtsTaken) m.rtsTaken = receivePost(m);
        all = all && m.rtsTaken;
      }
      if (all) break;
      sys->runUntil([] { return false; }, 100);
    }
    for (auto& m : msgs) ASSERT_TRUE(m.rtsTaken) << "no RTS arrived at node " << m.target;
    for (auto& m : msgs) targetWrites[m.target] = csrWrites[m.target];
    csrWrites.clear();
    // From here the NIs alone: no CPU writes until both counters are at zero.
    for (auto& m : msgs) {
      ASSERT_TRUE(sys->waitCounter(m.target, kRecvCnt, 3'000'000)) << "message " << m.tag << " never completed";
      ASSERT_TRUE(sys->waitCounter(m.origin, kDoneCnt, 1'000'000)) << "origin of " << m.tag << " never told";
    }
    for (auto& [n, w] : csrWrites) EXPECT_EQ(w, 0u) << "node " << n << " wrote a register during the transfer";
    ASSERT_TRUE(sys->drain());
    for (auto& m : msgs) {
      SCOPED_TRACE("message " + std::to_string(m.tag));
      EXPECT_EQ(mem(m.target).read(kRecvBuf + m.slot * 0x10'0000, m.len), m.data);
      const Bytes rec = mem(m.origin).read(kDoneArea + m.slot * 64, 8);
      EXPECT_EQ(getLe(&rec[0], 4), m.tag) << "completion record at the origin";
      EXPECT_EQ(getLe(&rec[4], 4), m.len);
      EXPECT_EQ(m.portions, (m.len + kPortion - 1) / kPortion);
      writesByPortions[m.portions] = {originWrites[m.origin], targetWrites[m.target]};
    }
    for (unsigned n = 0; n < nodes; ++n) {
      EXPECT_EQ(cnt(n, regs::INJ_STATUS(kRemFifo)) & regs::INJ_STATUS_ERR_MASK, 0u) << "node " << n;
      EXPECT_EQ(cnt(n, regs::INJ_STATUS(kSwFifo)) & regs::INJ_STATUS_ERR_MASK, 0u) << "node " << n;
    }
  }
  // Remote gets taken: per message 2 descriptors per portion at the origin, one less
  // than the portions at the target.
  uint32_t wantRx = 0;
  for (uint32_t len : lens) {
    const uint32_t p = (len + kPortion - 1) / kPortion;
    wantRx += 2 * p + (p - 1);
  }
  uint32_t rx = 0;
  for (unsigned n = 0; n < nodes; ++n) rx += cnt(n, regs::RGET_RX_CNT);
  EXPECT_EQ(rx, wantRx * nodes);
  // The CPU's writes per message do not grow with the portions: origin (counter load,
  // doorbell) and target (slot release, counter load, doorbell).
  for (auto& [p, w] : writesByPortions) {
    EXPECT_EQ(w.first, 2u) << p << " portions: origin";
    EXPECT_EQ(w.second, 3u) << p << " portions: target";
  }
  EXPECT_EQ(writesByPortions.size(), std::size(lens));
}

INSTANTIATE_TEST_SUITE_P(Widths, RgetSystemTest,
                         ::testing::Values(Param{2, 64}, Param{4, 512}),
                         [](const auto& info) {
                           return std::to_string(info.param.nodes) + "N_W" + std::to_string(info.param.width);
                         });

}  // namespace

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
#include "runtime.hpp"
#include "system.hpp"
#include "verilated_fixture.hpp"

using namespace ni;

namespace {

struct Param {
  unsigned nodes;
  unsigned width;
};

constexpr unsigned kRecvCnt = 1, kDoneCnt = 2;

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
    RuntimeLayout l;
    l.portion = 4096;
    for (unsigned n = 0; n < sys->size(); ++n) rt.emplace_back(*sys, n, cpu(n), l);
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
  uint32_t csr(unsigned n, uint32_t off) { return sys->readCsr(n, off); }

  struct Message {
    unsigned origin, target;
    uint32_t tag, len;
    uint64_t slot;  // where its buffers and areas are
    Bytes data;
    bool rtsTaken = false;
    uint32_t portions = 0;
  };
  // The target's one action, once the RTS is in its control FIFO: the receive post.
  bool receivePost(Message& m) {
    auto& q = rt[m.target].pendingRts();
    if (q.empty()) return false;
    const RtsMessage rts = q.front();
    q.pop_front();
    EXPECT_EQ(rts.tag, m.tag);
    EXPECT_EQ(rts.originLid, lidOf(m.origin));
    m.portions = rt[m.target].recvPost(rts, m.slot, kRecvCnt);
    return true;
  }

  uint64_t seed = 1;
  std::mt19937_64 rng;
  std::unique_ptr<System> sys;
  std::vector<Runtime> rt;
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
      m.slot = k;
      m.data.resize(m.len);
      for (auto& b : m.data) b = static_cast<uint8_t>(rng());
      msgs.push_back(std::move(m));
    }
    csrWrites.clear();
    std::map<unsigned, unsigned> originWrites, targetWrites;
    for (auto& m : msgs) {
      mem(m.origin).write(rt[m.origin].sendAddr(m.slot), m.data);
      rt[m.origin].rtsSend(m.target, m.tag, m.slot, m.len, kDoneCnt);
    }
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
      EXPECT_EQ(mem(m.target).read(rt[m.target].recvAddr(m.slot), m.len), m.data);
      const Bytes rec = mem(m.origin).read(rt[m.origin].layout().doneArea + m.slot * 64, 8);
      EXPECT_EQ(getLe(&rec[0], 4), m.tag) << "completion record at the origin";
      EXPECT_EQ(getLe(&rec[4], 4), m.len);
      EXPECT_EQ(m.portions, (m.len + kPortion - 1) / kPortion);
      writesByPortions[m.portions] = {originWrites[m.origin], targetWrites[m.target]};
    }
    for (unsigned n = 0; n < nodes; ++n) {
      for (unsigned f : {rt[n].layout().swFifo, rt[n].layout().remFifo})
        EXPECT_EQ(csr(n, regs::INJ_STATUS(f)) & regs::INJ_STATUS_ERR_MASK, 0u) << "node " << n << " FIFO " << f;
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
  for (unsigned n = 0; n < nodes; ++n) rx += csr(n, regs::RGET_RX_CNT);
  EXPECT_EQ(rx, wantRx * nodes);
  // The CPU's writes per message do not grow with the portions: origin (counter load,
  // doorbell) and target (slot release, counter load, doorbell).
  for (auto& [p, w] : writesByPortions) {
    EXPECT_EQ(w.first, 2u) << p << " portions: origin";
    EXPECT_EQ(w.second, 3u) << p << " portions: target";
  }
  EXPECT_EQ(writesByPortions.size(), std::size(lens));
}

// Remote gets a target may not take end in errors both sides see, and stop nothing else:
// one for a doorbell-fed FIFO is refused (NAK 0x62: the target counts MEMID_ERR_CNT, the
// sender NAK_RX_CNT); a descriptor that would read target memory outside its readable
// memory IDs (code 7), or that is not a one-slot descriptor (code 8), stops the target's
// remote-fed FIFO (status, DMA_ERR_CNT, interrupt), whose runtime reports it to the node
// the descriptor would have served and resets the FIFO. Nothing lands; rendezvous both
// ways work afterwards.
TEST_P(RgetSystemTest, RemoteGetsATargetMayNotTakeEndInErrorsBothSidesSee) {
  const unsigned a = 0, b = 1;
  const RuntimeLayout& l = rt[a].layout();
  constexpr uint64_t kIrq = 0x5400'0000;
  auto wrB = sys->csrWriter(b);
  wrB(regs::INTR_ADDR_LO, static_cast<uint32_t>(kIrq));
  wrB(regs::INTR_ADDR_HI, 0);
  wrB(regs::INTR_DATA, 0xD3A);
  wrB(regs::INTR_MASK, regs::STATUS_DMA_ERR_MASK);
  ASSERT_TRUE(sys->drain());
  // A remote get from a's doorbell-fed FIFO carrying one descriptor (inline).
  auto rget = [&](unsigned fifo, const DmaDescriptor& carried) {
    DmaDescriptor d;
    d.op = static_cast<uint8_t>(DmaOp::Rget);
    d.flags = kDescInline;
    d.dest = lidOf(b);
    d.qid = static_cast<uint16_t>(fifo);
    d.len = kDescBytes;
    rt[a].post({{d, carried.encode()}});
  };
  DmaDescriptor put;  // would push 64 bytes of b's memory to a
  put.op = static_cast<uint8_t>(DmaOp::Put);
  put.flags = kDescSrcMid;
  put.srcMid = static_cast<uint8_t>(l.recvMid);  // write-only at b: not readable
  put.src = 0;
  put.len = 64;
  put.dest = lidOf(a);
  put.qid = l.recvMid;
  put.dst = 0;
  put.tag = 0xBAD1;

  // 1. Into a FIFO of b that is not remote-fed: refused.
  const uint32_t nakA = csr(a, regs::NAK_RX_CNT), memidB = csr(b, regs::MEMID_ERR_CNT);
  rget(3, put);
  ASSERT_TRUE(sys->drain());
  EXPECT_EQ(csr(b, regs::MEMID_ERR_CNT), memidB + 1);
  EXPECT_EQ(csr(a, regs::NAK_RX_CNT), nakA + 1);
  EXPECT_NE(csr(a, regs::STATUS) & regs::STATUS_NAK_RX_MASK, 0u);
  EXPECT_EQ(csr(b, regs::INJ_HEAD(3)), 0u);
  EXPECT_EQ(csr(b, regs::RGET_RX_CNT), 0u);

  // 2. and 3. Into b's remote-fed FIFO: a source b does not let be read, an inline descriptor.
  DmaDescriptor inl = put;
  inl.flags = kDescInline;
  inl.slots = 2;
  inl.tag = 0xBAD2;
  const std::pair<DmaDescriptor, DmaErr> cases[] = {{put, DmaErr::Range}, {inl, DmaErr::Remote}};
  unsigned errs = 0;
  for (const auto& [carried, code] : cases) {
    SCOPED_TRACE(static_cast<int>(code));
    mem(b).write(kIrq, Bytes(4, 0));
    rget(l.remFifo, carried);
    ASSERT_TRUE(sys->drain());
    ++errs;
    const uint32_t st = csr(b, regs::INJ_STATUS(l.remFifo));
    EXPECT_TRUE(st & regs::INJ_STATUS_ERR_MASK);
    EXPECT_EQ((st & regs::INJ_STATUS_CODE_MASK) >> regs::INJ_STATUS_CODE_LSB, static_cast<uint32_t>(code));
    EXPECT_EQ(csr(b, regs::DMA_ERR_CNT), errs);
    EXPECT_NE(csr(b, regs::STATUS) & regs::STATUS_DMA_ERR_MASK, 0u);
    EXPECT_EQ(getLe(mem(b).read(kIrq, 4).data(), 4), 0xD3Au) << "the interrupt at b";
    EXPECT_EQ(rt[b].checkRemoteFifo(), code);
    ASSERT_TRUE(sys->drain());
    auto& e = rt[a].remoteErrors();
    ASSERT_EQ(e.size(), 1u) << "a hears of it";
    EXPECT_EQ(e.front().reporterLid, lidOf(b));
    EXPECT_EQ(e.front().code, static_cast<uint8_t>(code));
    EXPECT_EQ(e.front().tag, carried.tag);
    e.pop_front();
    EXPECT_EQ(csr(b, regs::INJ_STATUS(l.remFifo)) & regs::INJ_STATUS_ERR_MASK, 0u) << "reset";
  }
  EXPECT_EQ(mem(a).read(rt[a].recvAddr(0), 64), Bytes(64, 0)) << "nothing landed at a";
  EXPECT_EQ(csr(b, regs::RGET_RX_CNT), 2u);

  // Both ways afterwards: a rendezvous of 3 portions each.
  std::vector<Bytes> data;
  for (unsigned o : {a, b}) {
    data.push_back(Bytes(3 * 4096 - 8));
    for (auto& x : data.back()) x = static_cast<uint8_t>(rng());
    mem(o).write(rt[o].sendAddr(1), data.back());
    rt[o].rtsSend(1 - o, 0x77 + o, 1, static_cast<uint32_t>(data.back().size()), kDoneCnt);
  }
  for (unsigned t : {b, a}) {
    ASSERT_TRUE(sys->runUntil([&] { return !rt[t].pendingRts().empty(); }, 100'000));
    rt[t].recvPost(rt[t].pendingRts().front(), 1, kRecvCnt);
    rt[t].pendingRts().pop_front();
  }
  for (unsigned t : {b, a}) ASSERT_TRUE(sys->waitCounter(t, kRecvCnt));
  ASSERT_TRUE(sys->drain());
  EXPECT_EQ(mem(b).read(rt[b].recvAddr(1), data[0].size()), data[0]);
  EXPECT_EQ(mem(a).read(rt[a].recvAddr(1), data[1].size()), data[1]);
}

// Eager messages into keyed eager buffers (seed 000 claims 13-14): node 0 allocates its
// eager reception FIFO, keys it and announces it to the others, which send it messages
// of 8 bytes to 4 KiB with the key: every one arrives whole. A message with a wrong key
// is refused before anything is written (KEY_ERR_CNT at node 0, a NAK at the sender,
// nothing in the FIFO), and the messages after it still arrive.
TEST_P(RgetSystemTest, EagerMessagesCarryTheKeyOfTheirBuffers) {
  const unsigned nodes = sys->size();
  constexpr uint16_t kKey = 0x6A5C;
  std::vector<unsigned> peers;
  for (unsigned n = 1; n < nodes; ++n) peers.push_back(n);
  rt[0].openEager(kKey, peers);
  for (unsigned n : peers) {
    ASSERT_TRUE(sys->runUntil([&] { return rt[n].eagerPeers().count(0) > 0; }, 100'000)) << "announce to " << n;
    EXPECT_EQ(rt[n].eagerPeers().at(0).key, kKey);
  }
  std::map<std::pair<uint16_t, uint32_t>, Bytes> sent;
  const size_t lens[] = {8, 256, 200, 4096, 64};
  const uint32_t nak = csr(1, regs::NAK_RX_CNT);
  uint32_t refused = 0;  // packets of the message with the stale key: each is refused
  for (unsigned n : peers) {
    for (size_t k = 0; k < std::size(lens); ++k) {
      Bytes data(lens[k]);
      for (auto& x : data) x = static_cast<uint8_t>(rng());
      const uint32_t tag = static_cast<uint32_t>(n << 8 | k);
      if (n == 1 && k == 2) {  // a stale key: refused
        rt[n].eagerSend(0, tag, data, static_cast<uint16_t>(kKey ^ 0x0100));
        DmaDescriptor d;
        d.len = static_cast<uint32_t>(data.size());
        refused = static_cast<uint32_t>(dmaPackets(d, data, 0, 0, sys->config().maxPayload).size());
        continue;
      }
      rt[n].eagerSend(0, tag, data);
      sent[{lidOf(n), tag}] = data;
    }
  }
  ASSERT_TRUE(sys->drain());
  auto& got = rt[0].eagerReceived();
  EXPECT_EQ(got.size(), sent.size());
  for (const auto& m : got) {
    auto it = sent.find({m.srcLid, m.tag});
    ASSERT_NE(it, sent.end()) << "tag " << m.tag << " from " << m.srcLid;
    EXPECT_EQ(m.data, it->second) << "tag " << m.tag;
    sent.erase(it);
  }
  EXPECT_TRUE(sent.empty());
  EXPECT_GT(refused, 1u);
  EXPECT_EQ(csr(0, regs::KEY_ERR_CNT), refused);
  EXPECT_EQ(csr(1, regs::NAK_RX_CNT), nak + refused) << "the sender is told";
  EXPECT_EQ(csr(0, regs::MEMID_ERR_CNT), 0u);
}

INSTANTIATE_TEST_SUITE_P(Widths, RgetSystemTest,
                         ::testing::Values(Param{2, 64}, Param{4, 512}),
                         [](const auto& info) {
                           return std::to_string(info.param.nodes) + "N_W" + std::to_string(info.param.width);
                         });

}  // namespace

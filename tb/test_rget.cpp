// SPDX-License-Identifier: Apache-2.0
// Remote gets and the message protocols in a multi-node system (sim/runtime.hpp): the
// self-paced rendezvous of seed 003 (sim/rget.hpp), the NI's choice between eager and
// rendezvous by length, keyed eager buffers, tag matching, one-sided put and get, and
// the bad cases (remote gets a target may not take, an RTS it cannot place).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>

#include "dma.hpp"
#include "driver.hpp"
#include "ni_regs.hpp"
#include "rget.hpp"
#include "runtime.hpp"
#include "system.hpp"
#include "system_fixture.hpp"

using namespace ni;

namespace {

struct Param {
  unsigned nodes;
  unsigned width;
  unsigned maxPayload = 256;  // 4096: remote gets whose fetches are 4 KiB DMA reads
};

constexpr unsigned kRecvCnt = 1, kDoneCnt = 2;
constexpr uint32_t kThreshold = 512;  // RNDV_THRESHOLD in these tests

class RgetSystemTest : public tb::SystemFixture<Param> {
 protected:
  void SetUp() override {
    SystemConfig c;
    c.nodes = GetParam().nodes;
    c.dataBits = GetParam().width;
    c.maxPayload = GetParam().maxPayload;
    c.hostStall = 0.1;
    startSystem(c);
    layout.portion = 4096;
    layout.rndvThreshold = kThreshold;
    layout.stallCycles = 100'000;
    startRuntimes();
  }
  void startRuntimes() {
    rt.clear();
    for (unsigned n = 0; n < sys->size(); ++n) rt.emplace_back(*sys, n, cpu(n), layout);
    ASSERT_TRUE(sys->drain());
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
  // The packets an eager send of `data` leaves as (the descriptor the runtime posts).
  size_t eagerPackets(const Bytes& data) {
    DmaDescriptor d;
    d.op = static_cast<uint8_t>(DmaOp::Send);
    d.flags = kDescInline;
    d.len = static_cast<uint32_t>(data.size());
    return dmaPackets(d, data, 0, 0, sys->config().maxPayload).size();
  }

  struct Message {
    unsigned origin, target;
    uint32_t tag, len;
    uint64_t slot;  // where its buffers and areas are
    Bytes data;
    unsigned send = 0, recv = 0;  // the runtimes' request numbers
  };
  Message makeMessage(unsigned origin, unsigned target, uint32_t tag, uint32_t len, uint64_t slot) {
    Message m{origin, target, tag, len, slot, randomBytes(len)};
    mem(origin).write(rt[origin].sendAddr(slot), m.data);
    return m;
  }
  // Polls the runtimes until done() or maxCycles.
  bool progressUntil(const std::function<bool()>& done, uint64_t maxCycles = 2'000'000) {
    for (uint64_t c = 0; c < maxCycles; c += 200) {
      if (done()) return true;
      sys->runUntil([] { return false; }, 200);
      if (sys->rtlError()) return false;
    }
    return done();
  }

  // A program written once against the runtime, unchanged on any number of nodes:
  // every node sends its right neighbour an eager and a rendezvous message and its
  // left neighbour a short one, receiving with receives posted before the messages come
  // (one from any source) and after (the RTS waits unexpected); it puts a block into
  // its right neighbour's memory and gets one from its left neighbour's. Every byte
  // checked.
  void ringProgram() {
    using St = Runtime::Status;
    const unsigned nodes = sys->size();
    constexpr uint32_t kEager = 200, kRndv = 20 * 1024, kShort = 8, kPut = 1024, kGet = 2048;
    constexpr unsigned kPutCnt = 7, kGetCnt = 8;
    struct Node {
      Message toRight, rndvRight, toLeft;
      unsigned recvEager = 0, recvRndv = 0, recvShort = 0;
      Bytes putData, getData;
    };
    std::vector<Node> at(nodes);
    auto right = [&](unsigned n) { return (n + 1) % nodes; };
    auto left = [&](unsigned n) { return (n + nodes - 1) % nodes; };
    for (unsigned n = 0; n < nodes; ++n) {
      Node& x = at[n];
      x.toRight = makeMessage(n, right(n), 0x1000 + n, kEager, 0);
      x.rndvRight = makeMessage(n, right(n), 0x2000 + n, kRndv, 1);
      x.toLeft = makeMessage(n, left(n), 0x3000 + n, kShort, 2);
      x.putData = makeMessage(n, right(n), 0, kPut, 3).data;  // at sendAddr(3)
      x.getData = makeMessage(n, left(n), 0, kGet, 4).data;   // at sendAddr(4): the left neighbour gets it
      driver::loadCounter(sys->csrWriter(n), kPutCnt, kPut);
    }
    // Receives before the messages: eager from the left, the short one from any source.
    for (unsigned n = 0; n < nodes; ++n) {
      at[n].recvEager = rt[n].irecv(left(n), 0x1000 + left(n), 0, kEager, kRecvCnt);
      at[n].recvShort = rt[n].irecv(std::nullopt, 0x3000 + right(n), 2, 64, kRecvCnt);
    }
    for (unsigned n = 0; n < nodes; ++n) {
      for (Message* m : {&at[n].toRight, &at[n].rndvRight, &at[n].toLeft})
        m->send = rt[n].isend(m->target, m->tag, m->slot, m->len, 3 + static_cast<unsigned>(m->slot));
      rt[n].put(right(n), 3 * rt[n].layout().bufStride, rt[n].layout().recvMid, 3 * rt[n].layout().bufStride, kPut,
                6, kPutCnt);
      rt[n].get(left(n), rt[n].layout().sendMid, 4 * rt[n].layout().bufStride, 4 * rt[n].layout().bufStride, kGet,
                kGetCnt);
    }
    // The rendezvous receive after its RTS has come.
    sys->runUntil([] { return false; }, 2000);
    for (unsigned n = 0; n < nodes; ++n) at[n].recvRndv = rt[n].irecv(left(n), 0x2000 + left(n), 1, kRndv, kRecvCnt);
    ASSERT_TRUE(progressUntil([&] {
      for (unsigned n = 0; n < nodes; ++n) {
        for (unsigned r : {at[n].recvEager, at[n].recvRndv, at[n].recvShort})
          if (rt[n].recvStatus(r) != St::Done) return false;
        for (Message* m : {&at[n].toRight, &at[n].rndvRight, &at[n].toLeft})
          if (rt[n].sendStatus(m->send) != St::Done) return false;
        if (!rt[n].counterZero(kPutCnt) || !rt[n].counterZero(kGetCnt)) return false;
      }
      return true;
    }, 20'000'000)) << "the program did not finish";
    ASSERT_TRUE(sys->drain());
    const uint64_t stride = rt[0].layout().bufStride;
    for (unsigned n = 0; n < nodes; ++n) {
      SCOPED_TRACE("node " + std::to_string(n));
      const Node& l = at[left(n)];
      EXPECT_EQ(mem(n).read(rt[n].recvAddr(0), kEager), l.toRight.data);
      EXPECT_EQ(mem(n).read(rt[n].recvAddr(1), kRndv), l.rndvRight.data);
      EXPECT_TRUE(rt[n].received(at[n].recvRndv).rendezvous);
      EXPECT_FALSE(rt[n].received(at[n].recvEager).rendezvous);
      EXPECT_EQ(mem(n).read(rt[n].recvAddr(2), kShort), at[right(n)].toLeft.data);
      EXPECT_EQ(rt[n].received(at[n].recvShort).from, right(n));
      EXPECT_EQ(mem(n).read(rt[n].recvAddr(0) + 3 * stride, kPut), l.putData) << "put from the left";
      EXPECT_EQ(mem(n).read(rt[n].recvAddr(0) + 4 * stride, kGet), l.getData) << "got from the left";
    }
  }

  RuntimeLayout layout;
  std::vector<Runtime> rt;
  std::map<unsigned, unsigned> csrWrites;
};

// Each node sends messages to the next one (with two nodes, both ways at once), one
// at a time per pair: 1, 2, 5 and 17 portions, lengths not a multiple of a portion,
// all above the threshold, so the NI sends an RTS for each. The origin's one action is
// the send, the target's the receive post its runtime makes when the RTS matches its
// posted receive; from then on the two DMA engines hand descriptors back and forth by
// remote gets until the message has moved, portion by portion. Checked: every byte at
// the target when its reception counter reaches zero, the origin's injection counter
// and completion record, the remote-get counts, and the CPU's register writes per
// message: the same for 1 portion as for 17.
TEST_P(RgetSystemTest, SelfPacedRendezvousMovesMessagesWithOneActionPerSide) {
  const unsigned nodes = sys->size();
  const uint32_t kPortion = 4096;
  const uint32_t lens[] = {1024, 2 * kPortion, 4 * kPortion + 20, 16 * kPortion + 4};
  std::map<uint32_t, std::pair<unsigned, unsigned>> writesByPortions;  // portions -> {origin, target} writes
  for (uint64_t k = 0; k < std::size(lens); ++k) {
    std::vector<Message> msgs;
    for (unsigned o = 0; o < nodes; ++o)
      msgs.push_back(makeMessage(o, (o + 1) % nodes, static_cast<uint32_t>(0x100 * (o + 1) + k), lens[k], k));
    for (auto& m : msgs) m.recv = rt[m.target].irecv(m.origin, m.tag, m.slot, lens[k], kRecvCnt);
    csrWrites.clear();
    std::map<unsigned, unsigned> originWrites, targetWrites;
    const uint32_t rts = csr(0, regs::RTS_TX_CNT);
    for (auto& m : msgs) m.send = rt[m.origin].isend(m.target, m.tag, m.slot, m.len, kDoneCnt);
    for (auto& m : msgs) originWrites[m.origin] = csrWrites[m.origin];
    csrWrites.clear();
    // Targets take their RTS as it arrives: the only CPU work at the target.
    ASSERT_TRUE(progressUntil([&] {
      return std::all_of(msgs.begin(), msgs.end(), [&](Message& m) { return rt[m.target].matched(m.recv); });
    })) << "an RTS never arrived";
    for (auto& m : msgs) targetWrites[m.target] = csrWrites[m.target];
    EXPECT_EQ(csr(0, regs::RTS_TX_CNT), rts + 1) << "node 0 sent its message as an RTS";
    csrWrites.clear();
    // From here the NIs alone: the CPUs keep polling their runtimes (whose progress
    // engine would post whatever a portion needed), and write no register until both
    // counters of every message are at zero.
    auto atZero = [&](unsigned n, unsigned cnt) { return (csr(n, regs::CNT_ZERO) >> cnt & 1) != 0; };
    ASSERT_TRUE(progressUntil([&] {
      bool done = true;
      for (auto& m : msgs) done = done && atZero(m.target, kRecvCnt) && atZero(m.origin, kDoneCnt);
      if (done) return true;
      for (auto& m : msgs) {
        rt[m.target].recvStatus(m.recv);
        rt[m.origin].sendStatus(m.send);
      }
      return false;
    }, 3'000'000)) << "a message never completed";
    for (auto& [n, w] : csrWrites) EXPECT_EQ(w, 0u) << "node " << n << " wrote a register during the transfer";
    ASSERT_TRUE(sys->drain());
    for (auto& m : msgs) {
      SCOPED_TRACE("message " + std::to_string(m.tag));
      EXPECT_EQ(rt[m.target].recvStatus(m.recv), Runtime::Status::Done);
      EXPECT_EQ(rt[m.origin].sendStatus(m.send), Runtime::Status::Done);
      const Runtime::Received& got = rt[m.target].received(m.recv);
      EXPECT_TRUE(got.rendezvous);
      EXPECT_EQ(got.from, m.origin);
      EXPECT_EQ(got.len, m.len);
      EXPECT_EQ(mem(m.target).read(rt[m.target].recvAddr(m.slot), m.len), m.data);
      const Bytes rec = mem(m.origin).read(rt[m.origin].layout().doneArea + m.slot * 64, 8);
      EXPECT_EQ(getLe(&rec[0], 4), m.tag) << "completion record at the origin";
      EXPECT_EQ(getLe(&rec[4], 4), m.len);
      EXPECT_EQ(got.portions, (m.len + kPortion - 1) / kPortion);
      writesByPortions[got.portions] = {originWrites[m.origin], targetWrites[m.target]};
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
  auto rget = [&](unsigned fifo, const DmaDescriptor& carried) { rt[a].remoteGet(b, fifo, carried); };
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
  std::vector<Message> msgs{makeMessage(a, b, 0x77, 3 * 4096 - 8, 1), makeMessage(b, a, 0x78, 3 * 4096 - 8, 1)};
  for (auto& m : msgs) {
    m.recv = rt[m.target].irecv(m.origin, m.tag, m.slot, m.len, kRecvCnt);
    m.send = rt[m.origin].isend(m.target, m.tag, m.slot, m.len, kDoneCnt);
  }
  for (auto& m : msgs) {
    ASSERT_TRUE(progressUntil([&] { return rt[m.target].recvStatus(m.recv) == Runtime::Status::Done; }));
    EXPECT_EQ(mem(m.target).read(rt[m.target].recvAddr(m.slot), m.len), m.data);
  }
}

// A remote-fed FIFO made smaller than where its tail stood, then reset: node 0 gets
// five blocks from node 1 (five descriptors into node 1's remote-fed FIFO of 64 slots),
// node 1 makes the FIFO 4 slots and resets it, and node 0 gets three more. Both the
// engine's tail and the receiver's restart at slot 0: the three land, nothing is
// written past the new ring, and the FIFO is not in error.
TEST_P(RgetSystemTest, RemoteFedFifoMadeSmallerRestartsAtSlotZero) {
  const unsigned a = 0, b = 1;
  const RuntimeLayout& l = rt[b].layout();
  constexpr unsigned kCnt = 9;
  constexpr uint32_t kLen = 512;
  auto getBlock = [&](unsigned k) {
    const Message m = makeMessage(b, a, 0, kLen, k);
    rt[a].get(b, l.sendMid, k * l.bufStride, k * l.bufStride, kLen, kCnt);
    ASSERT_TRUE(progressUntil([&] { return rt[a].counterZero(kCnt); })) << "get " << k;
    EXPECT_EQ(mem(a).read(rt[a].recvAddr(k), kLen), m.data) << "get " << k;
  };
  for (unsigned k = 0; k < 5; ++k) getBlock(k);
  ASSERT_TRUE(sys->drain());
  EXPECT_EQ(csr(b, regs::INJ_HEAD(l.remFifo)), 5u);
  auto wrB = sys->csrWriter(b);
  wrB(regs::INJ_CTRL(l.remFifo), 0);
  wrB(regs::INJ_SIZE(l.remFifo), 4);
  wrB(regs::INJ_CTRL(l.remFifo),
      regs::INJ_CTRL_ENABLE_MASK | regs::INJ_CTRL_RESET_MASK | regs::INJ_CTRL_REMOTE_MASK);
  ASSERT_TRUE(sys->drain());
  EXPECT_EQ(csr(b, regs::INJ_HEAD(l.remFifo)), 0u);
  for (unsigned k = 5; k < 8; ++k) getBlock(k);
  ASSERT_TRUE(sys->drain());
  EXPECT_EQ(csr(b, regs::INJ_HEAD(l.remFifo)), 3u);
  EXPECT_EQ(csr(b, regs::INJ_STATUS(l.remFifo)), 0u);
  EXPECT_EQ(csr(b, regs::DMA_ERR_CNT), 0u);
  EXPECT_EQ(mem(b).read(l.remRing + 5 * 64, 3 * 64), Bytes(3 * 64, 0)) << "slots past the new ring";
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
  struct Sent {
    Bytes data;
    unsigned recv;
    uint64_t slot;
  };
  std::map<std::pair<unsigned, uint32_t>, Sent> sent;  // {origin, tag}
  const size_t lens[] = {8, 256, 200, 4096, 64};
  uint64_t slot = 0;
  const uint32_t nak = csr(1, regs::NAK_RX_CNT);
  uint32_t refused = 0;  // packets of the message with the stale key: each is refused
  for (unsigned n : peers) {
    for (size_t k = 0; k < std::size(lens); ++k) {
      const Bytes data = randomBytes(lens[k]);
      const uint32_t tag = static_cast<uint32_t>(n << 8 | k);
      if (n == 1 && k == 2) {  // a stale key: refused
        rt[n].eagerSend(0, tag, data, static_cast<uint16_t>(kKey ^ 0x0100));
        refused = static_cast<uint32_t>(eagerPackets(data));
        continue;
      }
      rt[n].eagerSend(0, tag, data);
      sent[{n, tag}] = Sent{data, rt[0].irecv(n, tag, slot, 4096, kRecvCnt), slot};
      ++slot;
    }
  }
  ASSERT_TRUE(sys->drain());
  for (const auto& [from, m] : sent) {
    SCOPED_TRACE("tag " + std::to_string(from.second));
    ASSERT_EQ(rt[0].recvStatus(m.recv), Runtime::Status::Done);
    EXPECT_EQ(rt[0].received(m.recv).len, m.data.size());
    EXPECT_FALSE(rt[0].received(m.recv).rendezvous);
    EXPECT_EQ(mem(0).read(rt[0].recvAddr(m.slot), m.data.size()), m.data);
  }
  EXPECT_GE(refused, sys->config().maxPayload > 256 ? 1u : 2u) << "the stale key's message is several packets";
  EXPECT_EQ(csr(0, regs::KEY_ERR_CNT), refused);
  EXPECT_EQ(csr(1, regs::NAK_RX_CNT), nak + refused) << "the sender is told";
  EXPECT_EQ(csr(0, regs::MEMID_ERR_CNT), 0u);
  // A rendezvous into the keyed buffers: the RTS carries the key too.
  Message m = makeMessage(1, 0, 0x4D, 3 * kThreshold, slot);
  m.recv = rt[0].irecv(1, m.tag, m.slot, m.len, kRecvCnt);
  m.send = rt[1].isend(0, m.tag, m.slot, m.len, kDoneCnt);
  ASSERT_TRUE(progressUntil([&] { return rt[0].recvStatus(m.recv) == Runtime::Status::Done; }));
  EXPECT_TRUE(rt[0].received(m.recv).rendezvous);
  EXPECT_EQ(mem(0).read(rt[0].recvAddr(m.slot), m.len), m.data);
  EXPECT_EQ(csr(0, regs::KEY_ERR_CNT), refused);
}

// An RTS the target cannot place ends in an error both sides see, and nothing moves: a
// message longer than the receive it matched (the receive ends Truncated, the origin's
// send Refused, told by a control message), and one longer than any receive buffer
// (refused as it arrives, before any receive). An eager message longer than its receive
// ends Truncated at the receiver (its sender is done). Rendezvous both ways afterwards.
TEST_P(RgetSystemTest, RtsTheTargetCannotPlaceIsRefusedAndBothSidesSeeIt) {
  const unsigned a = 0, b = 1;
  using St = Runtime::Status;
  auto settle = [&](Runtime& side, auto pending) {
    return progressUntil([&] {
      rt[a].progress();
      rt[b].progress();
      return !pending(side);
    });
  };
  Message big = makeMessage(a, b, 0x51, 64 * 1024, 2);
  big.recv = rt[b].irecv(a, big.tag, big.slot, 16 * 1024, kRecvCnt);
  big.send = rt[a].isend(b, big.tag, big.slot, big.len, kDoneCnt);
  ASSERT_TRUE(settle(rt[a], [&](Runtime& r) { return r.sendStatus(big.send) == St::Pending; }));
  EXPECT_EQ(rt[a].sendStatus(big.send), St::Refused);
  EXPECT_EQ(rt[b].recvStatus(big.recv), St::Truncated);
  EXPECT_EQ(rt[b].received(big.recv).len, big.len);
  EXPECT_TRUE(rt[b].received(big.recv).rendezvous);
  // Longer than any receive buffer: refused on arrival.
  const uint32_t huge = static_cast<uint32_t>(rt[a].layout().bufStride + 64);
  const unsigned hugeSend = rt[a].isend(b, 0x52, 3, huge, kDoneCnt);
  ASSERT_TRUE(settle(rt[a], [&](Runtime& r) { return r.sendStatus(hugeSend) == St::Pending; }));
  EXPECT_EQ(rt[a].sendStatus(hugeSend), St::Refused);
  EXPECT_EQ(rt[b].refusedOnArrival(), 1u);
  // Eager, longer than its receive.
  Message small = makeMessage(a, b, 0x53, 256, 4);
  small.recv = rt[b].irecv(a, small.tag, small.slot, 64, kRecvCnt);
  small.send = rt[a].isend(b, small.tag, small.slot, small.len, kDoneCnt);
  ASSERT_TRUE(settle(rt[b], [&](Runtime& r) { return r.recvStatus(small.recv) == St::Pending; }));
  EXPECT_EQ(rt[b].recvStatus(small.recv), St::Truncated);
  EXPECT_EQ(rt[a].sendStatus(small.send), St::Done);
  ASSERT_TRUE(sys->drain());
  EXPECT_EQ(csr(a, regs::RGET_RX_CNT), 0u) << "no remote get for a refused message";
  EXPECT_EQ(csr(b, regs::RGET_RX_CNT), 0u);
  EXPECT_EQ(mem(b).read(rt[b].recvAddr(big.slot), 256), Bytes(256, 0)) << "nothing landed";
  EXPECT_EQ(mem(b).read(rt[b].recvAddr(small.slot), 256), Bytes(256, 0));
  // Both ways afterwards, in the same slots.
  std::vector<Message> msgs{makeMessage(a, b, 0x61, 64 * 1024, 2), makeMessage(b, a, 0x62, 64 * 1024, 2)};
  for (auto& m : msgs) {
    m.recv = rt[m.target].irecv(m.origin, m.tag, m.slot, m.len, kRecvCnt);
    m.send = rt[m.origin].isend(m.target, m.tag, m.slot, m.len, kDoneCnt);
  }
  for (auto& m : msgs) {
    ASSERT_TRUE(progressUntil([&] { return rt[m.target].recvStatus(m.recv) == St::Done; }));
    EXPECT_EQ(mem(m.target).read(rt[m.target].recvAddr(m.slot), m.len), m.data);
    ASSERT_TRUE(progressUntil([&] { return rt[m.origin].sendStatus(m.send) == St::Done; }));
  }
}

// Buffer provisioning (seed 002): a gather list that fits the receiver's eager buffers
// is packed into one eager send; one larger than them, or with a piece larger than
// them, gets a buffer the receiver provisions (memory ID, key, counter) and acknowledges;
// the pieces are put into it and the receiver copies the message out, unregisters the
// buffer and frees it. A request the receiver cannot satisfy (larger than its heap; a
// fifth while its four memory IDs are taken) is refused and the sender's send ends
// Refused; what was granted completes, and afterwards a new request is granted again.
TEST_P(RgetSystemTest, LargeGatherListsGetAProvisionedBuffer) {
  using St = Runtime::Status;
  using Piece = Runtime::Piece;
  const unsigned a = 0, b = sys->size() - 1;
  const RuntimeLayout& l = rt[a].layout();
  uint32_t tag = 0x700;
  // Pieces of a's send buffers from slot `slot` on, one per 64 KiB, random bytes; the
  // message they make.
  auto gather = [&](uint64_t slot, const std::vector<uint32_t>& lens, Bytes* msg) {
    std::vector<Piece> pieces;
    for (size_t i = 0; i < lens.size(); ++i) {
      Piece p{slot * l.bufStride + i * 0x1'0000, lens[i]};
      const Bytes d = randomBytes(lens[i]);
      mem(a).write(l.sendBuf + p.srcOff, d);
      msg->insert(msg->end(), d.begin(), d.end());
      pieces.push_back(p);
    }
    return pieces;
  };
  struct Op {
    Bytes msg;
    unsigned send = 0, recv = 0;
    uint64_t slot = 0;
  };
  auto start = [&](uint64_t slot, const std::vector<uint32_t>& lens) {
    Op o;
    o.slot = slot;
    const std::vector<Piece> pieces = gather(slot, lens, &o.msg);
    o.recv = rt[b].irecv(a, tag, slot, static_cast<uint32_t>(o.msg.size()), kRecvCnt);
    o.send = rt[a].isendv(b, tag++, pieces, 8 + static_cast<unsigned>(slot));
    return o;
  };
  auto settled = [&](const std::vector<Op*>& ops) {
    return progressUntil([&] {
      rt[b].progress();
      for (Op* o : ops)
        if (rt[a].sendStatus(o->send) == St::Pending) return false;
      return true;
    });
  };
  auto landed = [&](const Op& o) {
    EXPECT_EQ(rt[a].sendStatus(o.send), St::Done);
    ASSERT_TRUE(progressUntil([&] { return rt[b].recvStatus(o.recv) == St::Done; }));
    EXPECT_EQ(rt[b].received(o.recv).len, o.msg.size());
    EXPECT_EQ(mem(b).read(rt[b].recvAddr(o.slot), o.msg.size()), o.msg);
  };
  const uint32_t rts = csr(a, regs::RTS_TX_CNT);
  // Fits the eager buffers (4 KiB): one eager send, no provisioning.
  Op small = start(0, {64, 128, 100});
  // Larger than them, and one piece larger than them.
  Op big = start(1, {8192, 4096 - 64, 1000});
  Op onePiece = start(2, {5000});
  for (Op* o : {&small, &big, &onePiece}) ASSERT_TRUE(settled({o}));
  for (Op* o : {&small, &big, &onePiece}) landed(*o);
  EXPECT_EQ(rt[b].provisionsOpen(), 0u) << "every provisioned buffer freed";
  for (unsigned i = 0; i < l.provMids; ++i)
    EXPECT_EQ(csr(b, regs::MEMID_CTRL(l.provMidFirst + i)) & regs::MEMID_CTRL_VALID_MASK, 0u) << "unregistered";
  EXPECT_EQ(csr(a, regs::RTS_TX_CNT), rts) << "gather lists never go by rendezvous";
  // Larger than the receiver's heap: refused.
  Op huge = start(3, {4u << 20, 4u << 20, 4u << 20, 4u << 20, 1u << 20});
  ASSERT_TRUE(settled({&huge}));
  EXPECT_EQ(rt[a].sendStatus(huge.send), St::Refused);
  EXPECT_EQ(rt[b].provisionsRefused(), 1u);
  // Five at once for four memory IDs: the fifth refused, the four land.
  std::vector<Op> five;
  for (uint64_t s = 4; s < 9; ++s) five.push_back(start(s, {16384, 600}));
  std::vector<Op*> ptrs;
  for (Op& o : five) ptrs.push_back(&o);
  ASSERT_TRUE(settled(ptrs));
  EXPECT_EQ(rt[a].sendStatus(five.back().send), St::Refused);
  EXPECT_EQ(rt[b].provisionsRefused(), 2u);
  for (size_t i = 0; i + 1 < five.size(); ++i) landed(five[i]);
  EXPECT_EQ(rt[b].provisionsOpen(), 0u);
  // Resources back: granted again.
  Op again = start(9, {12288, 64});
  ASSERT_TRUE(settled({&again}));
  landed(again);
  EXPECT_EQ(csr(b, regs::KEY_ERR_CNT), 0u);
}

// A chain whose origin is cut off for good in the middle of a message: the origin's
// puts and remote gets toward the target are given up (RETX_FAIL_CNT,
// STATUS.retx_fail at the origin), the target's reception counter stops, and its
// receive ends Failed once the counter has stood still for stallCycles; the origin's
// send, whose next descriptors never come, ends Failed the same way.
// Neither side hangs, and with more nodes the target's buffer then takes another
// node's message.
TEST_P(RgetSystemTest, ChainWhoseOriginIsCutOffFailsOnBothSides) {
  using St = Runtime::Status;
  const unsigned o = 0, t = 1;
  layout.stallCycles = 20'000;  // the origin's resends give up after 4,000 cycles
  startRuntimes();
  for (unsigned n = 0; n < sys->size(); ++n) {
    sys->node(n).csrWrite(regs::RETX_TIMEOUT, 1000);
    sys->node(n).csrWrite(regs::RETX_LIMIT, 3);
  }
  Message m = makeMessage(o, t, 0x91, 64 * 1024, 5);  // 16 portions
  m.recv = rt[t].irecv(o, m.tag, m.slot, m.len, kRecvCnt);
  m.send = rt[o].isend(t, m.tag, m.slot, m.len, kDoneCnt);
  ASSERT_TRUE(progressUntil([&] { return rt[t].matched(m.recv) && csr(t, regs::CNT_VALUE(kRecvCnt)) < m.len; }));
  FabricFaults f;
  f.linkDown.push_back({o, sys->fabric().now(), UINT64_MAX});
  sys->fabric().setFaults(f);
  ASSERT_TRUE(progressUntil([&] {
    return rt[t].recvStatus(m.recv) != St::Pending && rt[o].sendStatus(m.send) != St::Pending;
  }, 5'000'000)) << "a side hangs";
  EXPECT_EQ(rt[t].recvStatus(m.recv), St::Failed);
  EXPECT_EQ(rt[o].sendStatus(m.send), St::Failed);
  EXPECT_GT(csr(t, regs::CNT_VALUE(kRecvCnt)), 0u) << "the message was cut short";
  EXPECT_GT(csr(o, regs::RETX_FAIL_CNT), 0u) << "the origin's requests to the target were given up";
  EXPECT_TRUE(csr(o, regs::STATUS) & regs::STATUS_RETX_FAIL_MASK);
  if (sys->size() > 2) {
    Message next = makeMessage(2, t, 0x92, 12 * 1024, 5);
    next.recv = rt[t].irecv(2, next.tag, next.slot, next.len, kRecvCnt);
    next.send = rt[2].isend(t, next.tag, next.slot, next.len, kDoneCnt);
    ASSERT_TRUE(progressUntil([&] { return rt[t].recvStatus(next.recv) == St::Done; }));
    EXPECT_EQ(mem(t).read(rt[t].recvAddr(next.slot), next.len), next.data);
  }
}

// The protocols under the faulty fabric of the reliability issue (1 % drops, 0.5 %
// corruption, duplication and reordering): the ring program, an RTS its target cannot
// place, a provisioning request its receiver cannot satisfy, an eager message with a
// wrong key and a remote get reading outside the target's readable memory end as they
// do on a clean fabric, and every byte of what moved is right.
TEST_P(RgetSystemTest, ProtocolsAndTheirErrorsHoldUnderAFaultyFabric) {
  using St = Runtime::Status;
  FabricFaults f;
  f.seed = seed;
  // Packets of up to 4 KiB are fewer: four times the rates to hit as many of them.
  const double scale = sys->config().maxPayload > 256 ? 4 : 1;
  f.drop = 0.01 * scale;
  f.corrupt = 0.005 * scale;
  f.duplicate = 0.005 * scale;
  f.reorder = 0.005 * scale;
  sys->fabric().setFaults(f);
  ringProgram();
  const unsigned a = 0, b = 1;
  Message big = makeMessage(a, b, 0x51, 32 * 1024, 5);
  big.recv = rt[b].irecv(a, big.tag, big.slot, 8 * 1024, kRecvCnt);
  big.send = rt[a].isend(b, big.tag, big.slot, big.len, kDoneCnt);
  const unsigned huge = rt[a].isendv(b, 0x52, {{6 * rt[a].layout().bufStride, 32u << 20}}, 9);
  ASSERT_TRUE(progressUntil([&] {
    rt[b].progress();
    return rt[a].sendStatus(big.send) != St::Pending && rt[a].sendStatus(huge) != St::Pending;
  }));
  EXPECT_EQ(rt[a].sendStatus(big.send), St::Refused);
  EXPECT_EQ(rt[b].recvStatus(big.recv), St::Truncated);
  EXPECT_EQ(rt[a].sendStatus(huge), St::Refused);
  EXPECT_EQ(rt[b].provisionsRefused(), 1u);
  // A wrong key: every packet refused (a duplicate may be refused twice), nothing lands.
  rt[b].openEager(0x3C3C, {a});
  ASSERT_TRUE(progressUntil([&] { return rt[a].eagerPeers().count(b) > 0; }));
  const unsigned keyed = rt[b].irecv(a, 0x53, 7, 4096, kRecvCnt);
  rt[a].eagerSend(b, 0x53, Bytes(1000, 0x5A), 0x3C3D);
  const size_t keyedPkts = eagerPackets(Bytes(1000, 0x5A));
  // A remote get whose put would read b's memory outside its readable memory IDs.
  DmaDescriptor put = DmaDescriptor::fromMid(DmaOp::Put, lidOf(a), layout.recvMid, layout.recvMid, 0, 64);
  put.tag = 0x54;
  rt[a].remoteGet(b, layout.remFifo, put);
  ASSERT_TRUE(progressUntil([&] { return rt[b].checkRemoteFifo() == DmaErr::Range; }));
  ASSERT_TRUE(progressUntil([&] { return !rt[a].remoteErrors().empty(); }));
  EXPECT_EQ(rt[a].remoteErrors().front().tag, 0x54u);
  ASSERT_TRUE(sys->drain());
  EXPECT_GE(csr(b, regs::KEY_ERR_CNT), keyedPkts) << "the 1000-byte message's packets";
  EXPECT_FALSE(rt[b].matched(keyed));
  uint32_t retx = 0;
  for (unsigned n = 0; n < sys->size(); ++n) retx += csr(n, regs::RETX_CNT);
  EXPECT_GT(retx, 0u) << "the fabric lost nothing: the test proves nothing";
  EXPECT_GT(sys->fabric().stats().faultDrops, 0u);
}

// The ring program (ringProgram) on 2 to 64 nodes.
class RuntimeProgramTest : public RgetSystemTest {};
TEST_P(RuntimeProgramTest, RingProgramRunsUnchangedOnAnyNodeCount) { ringProgram(); }

std::string paramName(const ::testing::TestParamInfo<Param>& info) {
  return std::to_string(info.param.nodes) + "N_W" + std::to_string(info.param.width) +
         (info.param.maxPayload != 256 ? "_MTU" + std::to_string(info.param.maxPayload) : "");
}
INSTANTIATE_TEST_SUITE_P(Widths, RgetSystemTest, ::testing::Values(Param{2, 64}, Param{4, 512}, Param{2, 64, 4096}),
                         paramName);
INSTANTIATE_TEST_SUITE_P(Nodes, RuntimeProgramTest,
                         ::testing::Values(Param{2, 64}, Param{5, 128}, Param{16, 64}, Param{64, 64}), paramName);

}  // namespace

// SPDX-License-Identifier: Apache-2.0
// The DMA engine in a multi-node system: descriptors produced into injection FIFOs
// in host memory (sim/dma.hpp InjRing), doorbells through the registers, messages
// moved by the NIs alone. Scoreboard: every put's bytes at its target, nothing
// else written there, the host's own tunneled stores unharmed beside them; every
// send's entries in the target's reception FIFO, once each, in their FIFO's order;
// every raw datagram whole in its target's raw reception FIFO, or dropped and counted.
#include <gtest/gtest.h>

#include <cstdio>
#include <deque>
#include <filesystem>
#include <map>
#include <tuple>

#include "dma.hpp"
#include "driver.hpp"
#include "ni_regs.hpp"
#include "system.hpp"
#include "system_fixture.hpp"
#include "verilated_fixture.hpp"

using namespace ni;

namespace {

struct Param {
  unsigned nodes;
  unsigned width;
  const char* config = "default";  // NI parameter set (rtl/ni_configs.json)
  unsigned maxPayload = 256;        // 4096: DMA reads of up to 4 KiB, completions of 514 beats
};

constexpr uint64_t kRegion = 0x4000'0000;   // memory ID 1 at every node: puts land here
constexpr uint64_t kStoreRegion = 0x5000'0000;  // memory ID 2: the CPUs' stores
constexpr uint64_t kCopyRegion = 0x6000'0000;   // memory ID 3: local copies land here
constexpr uint64_t kCopyRegionBytes = 0x4'0000;
constexpr uint64_t kRingBase = 0x1000'0000;
constexpr uint64_t kSrcBase = 0x2000'0000;
constexpr uint16_t kRingSlots = 64;
constexpr unsigned kFifos = 8;
constexpr uint64_t kRcvBase = 0x3000'0000;
constexpr unsigned kRcvFifos = 4;

class DmaSystemTest : public tb::SystemFixture<Param> {
 protected:
  void SetUp() override {
    SystemConfig c;
    c.nodes = GetParam().nodes;
    c.dataBits = GetParam().width;
    c.niConfig = GetParam().config;
    c.maxPayload = GetParam().maxPayload;
    c.hostStall = 0.1;
    startSystem(c);
    for (unsigned n = 0; n < sys->size(); ++n) {
      sys->setMemId(n, 1, MemRegion{true, kRegion, 0x80'0000, true, true});
      sys->setMemId(n, 2, MemRegion{true, kStoreRegion, 0x10000, true, true});
      sys->setMemId(n, 3, MemRegion{true, kCopyRegion, kCopyRegionBytes, true, true});
      for (unsigned f = 0; f < kFifos; ++f) {
        driver::setInjFifo(sys->csrWriter(n), f, ringBase(f), kRingSlots);
        rings[n].emplace_back(ringBase(f), kRingSlots);
      }
    }
    ASSERT_TRUE(sys->drain());
  }
  static uint64_t ringBase(unsigned f) { return kRingBase + uint64_t{f} * 0x10000; }
  static uint64_t rcvBase(unsigned q) { return kRcvBase + uint64_t{q} * 0x10'0000; }
  uint16_t head(unsigned n, unsigned f) { return static_cast<uint16_t>(sys->readCsr(n, regs::INJ_HEAD(f))); }

  struct Put {
    unsigned target;
    uint64_t dst;
    Bytes data;
  };
  // Posts a message from node n's FIFO f (data inline, or written at d.src); the
  // caller rings the doorbell.
  bool post(unsigned n, unsigned f, DmaDescriptor d, const Bytes& data) {
    d.len = static_cast<uint32_t>(data.size());
    if (!d.isInline()) sys->node(n).memory().write(d.src, data);
    auto write = [this, n](uint64_t a, const Bytes& b) { sys->node(n).memory().write(a, b); };
    return rings[n][f].post(d, data, head(n, f), write);
  }
  // A put to memory ID 1 of its target (data inline, or read from src).
  static DmaDescriptor putOf(const Put& p, bool inl, uint64_t src) {
    DmaDescriptor d;
    d.op = static_cast<uint8_t>(DmaOp::Put);
    d.flags = inl ? kDescInline : 0;
    d.dest = lidOf(p.target);
    d.qid = 1;
    d.dst = p.dst;
    d.src = src;
    return d;
  }
  bool post(unsigned n, unsigned f, const Put& p, bool inl, uint64_t src) { return post(n, f, putOf(p, inl, src), p.data); }
  // The consumer at node t takes the next entry of its reception FIFO `r`, if there is one.
  std::optional<RcvRing::Entry> take(unsigned t, RcvRing& r) {
    Memory& mem = sys->node(t).memory();
    return r.take([&mem](uint64_t a, size_t len) { return mem.read(a, len); },
                  [&mem](uint64_t a, const Bytes& b) { mem.write(a, b); });
  }
  // The reception-FIFO entries a send leaves at its target (the payloads of its
  // packets), or a raw datagram (its raw packet behind the entry header).
  std::vector<Bytes> entriesOf(DmaDescriptor d, const Bytes& data, unsigned from) {
    d.len = static_cast<uint32_t>(data.size());
    std::vector<Bytes> out;
    for (const FabricPacket& p : dmaPackets(d, data, lidOf(from), 0, sys->config().maxPayload))
      out.push_back(p.raw ? rawFifoEntry(encodeFabric(p)) : decodeTlp(p.payload)->data);
    return out;
  }
  // Runs until every FIFO of every node is empty, then until the system is at rest.
  bool runUntilFifosEmpty(uint64_t limit = 3'000'000) {
    const uint64_t end = sys->cycle() + limit;
    while (sys->cycle() < end) {
      sys->runUntil([] { return false; }, 2000);
      bool empty = true;
      for (unsigned n = 0; n < sys->size() && empty; ++n)
        for (unsigned f = 0; f < kFifos && empty; ++f) empty = head(n, f) == rings[n][f].tail();
      if (empty) return sys->drain();
    }
    return false;
  }

  void putsFromAllFifosLand();
  std::map<unsigned, std::vector<InjRing>> rings;
};

// Every node puts messages from all eight FIFOs to random peers (inline and from
// memory, 4 bytes to 2 KiB, across 4 KiB pages), while its CPU also stores through a
// combining window: every put lands byte for byte, and so does every store (the
// stores' continuation packets continue the right write with DMA packets between them).
void DmaSystemTest::putsFromAllFifosLand() {
  const unsigned n = sys->size();
  constexpr unsigned kPerFifo = 6;
  std::vector<Put> puts;
  for (unsigned s = 0; s < n; ++s) {
    Window w;
    w.base = kApertureBase;
    w.size = 0x10000;
    w.dstNode = (s + 1) % n;
    w.memid = 2;
    w.combine = true;  // the stores travel as combined runs (continuation packets) between DMA packets
    sys->setWindow(s, 0, w);
    for (unsigned f = 0; f < kFifos; ++f) {
      for (unsigned k = 0; k < kPerFifo; ++k) {
        Put p;
        p.target = (s + 1 + rng() % (n - 1)) % n;
        const size_t len = rng() % 4 == 0 ? 8 : 4 * (1 + rng() % 512);
        p.data = randomBytes(len);
        p.dst = (uint64_t{(s * kFifos + f) * kPerFifo + k} << 13) + 64 * (rng() % 64);
        const bool inl = len <= 7 * 64 && rng() % 2;
        const uint64_t src = kSrcBase + (uint64_t{f * kPerFifo + k} << 13) + 64 * (rng() % 64);
        ASSERT_TRUE(post(s, f, p, inl, src));
        puts.push_back(p);
      }
      driver::ringDoorbell(sys->csrWriter(s), f, rings[s][f].tail());
    }
  }
  std::vector<Bytes> stores(n);
  for (unsigned s = 0; s < n; ++s) {
    stores[s] = randomBytes(2048);
    for (unsigned k = 0; k < 2048 / 64; ++k)
      sys->node(s).store(kApertureBase + 0x400 + 64 * k, Bytes(stores[s].begin() + 64 * k, stores[s].begin() + 64 * (k + 1)));
  }
  ASSERT_TRUE(runUntilFifosEmpty());
  EXPECT_GT(sys->fabric().stats().continuations, 0u) << "the stores must travel as continuations";
  for (const Put& p : puts)
    EXPECT_EQ(sys->node(p.target).memory().read(kRegion + p.dst, p.data.size()), p.data)
        << "put of " << p.data.size() << " bytes to node " << p.target << " at 0x" << std::hex << p.dst;
  for (unsigned s = 0; s < n; ++s) {
    EXPECT_EQ(sys->node((s + 1) % n).memory().read(kStoreRegion + 0x400, 2048), stores[s]) << "store from " << s;
    EXPECT_EQ(sys->readCsr(s, regs::DMA_ERR_CNT), 0u);
    for (unsigned f = 0; f < kFifos; ++f) EXPECT_EQ(sys->readCsr(s, regs::INJ_STATUS(f)), 0u);
  }
}
TEST_P(DmaSystemTest, PutsFromAllFifosOfEveryNodeLand) { putsFromAllFifosLand(); }

// The same with a root complex that puts a TLP digest on every TLP (ECRC generation
// on): the DMA engine's reads are answered by completions with digests, which the NI
// ignores (issue 79; SystemTest.TlpDigestsAreIgnoredAndTakenOff has the other TLPs).
TEST_P(DmaSystemTest, PutsLandWhenCompletionsCarryTlpDigests) {
  for (unsigned i = 0; i < sys->size(); ++i) sys->node(i).setDigest(true);
  putsFromAllFifosLand();
  for (unsigned i = 0; i < sys->size(); ++i) EXPECT_EQ(sys->readCsr(i, regs::MALFORMED_CNT), 0u) << "node " << i;
}

// A bad descriptor stops its FIFO (status with the code, head on the bad slot, the
// error counted and interrupted) while another FIFO of the same node goes on; after
// a reset the FIFO takes new messages.
TEST_P(DmaSystemTest, BadDescriptorStopsOnlyItsFifoUntilReset) {
  const unsigned n = sys->size();
  constexpr uint64_t kIrqAddr = 0x7000'0000;
  auto wr = sys->csrWriter(0);
  wr(regs::INTR_ADDR_LO, static_cast<uint32_t>(kIrqAddr));
  wr(regs::INTR_ADDR_HI, 0);
  wr(regs::INTR_DATA, 0xD0A);
  wr(regs::INTR_MASK, regs::STATUS_DMA_ERR_MASK);
  auto memWrite = [this](uint64_t a, const Bytes& b) { sys->node(0).memory().write(a, b); };
  // FIFO 0: one good put, then an unknown operation.
  Put good{1, 0x100, randomBytes(64)};
  ASSERT_TRUE(post(0, 0, good, true, 0));
  DmaDescriptor bad;
  bad.op = 7;
  bad.len = 8;
  bad.dest = lidOf(1);
  const uint16_t badSlot = rings[0][0].tail();
  ASSERT_TRUE(rings[0][0].post(bad, Bytes(8, 0), head(0, 0), memWrite));
  driver::ringDoorbell(wr, 0, rings[0][0].tail());
  // FIFO 1: messages before and after.
  std::vector<Put> others;
  for (unsigned k = 0; k < 10; ++k) {
    Put p{1 + k % (n - 1), 0x10000 + k * 0x1000, randomBytes(4 * (1 + rng() % 200))};
    ASSERT_TRUE(post(0, 1, p, false, kSrcBase + k * 0x1000));
    others.push_back(p);
  }
  driver::ringDoorbell(wr, 1, rings[0][1].tail());
  sys->runUntil([this] { return false; }, 20000);
  ASSERT_TRUE(sys->drain());
  const uint32_t st = sys->readCsr(0, regs::INJ_STATUS(0));
  EXPECT_EQ(st & regs::INJ_STATUS_ERR_MASK, regs::INJ_STATUS_ERR_MASK);
  EXPECT_EQ((st & regs::INJ_STATUS_CODE_MASK) >> regs::INJ_STATUS_CODE_LSB, uint32_t(DmaErr::Op));
  EXPECT_EQ(head(0, 0), badSlot);
  EXPECT_EQ(sys->readCsr(0, regs::DMA_ERR_CNT), 1u);
  EXPECT_NE(sys->readCsr(0, regs::STATUS) & regs::STATUS_DMA_ERR_MASK, 0u);
  EXPECT_EQ(sys->node(0).memory().read(kIrqAddr, 4), (Bytes{0x0A, 0x0D, 0, 0}));
  EXPECT_EQ(sys->node(1).memory().read(kRegion + good.dst, 64), good.data);
  EXPECT_EQ(head(0, 1), rings[0][1].tail());
  for (const Put& p : others) EXPECT_EQ(sys->node(p.target).memory().read(kRegion + p.dst, p.data.size()), p.data);
  // Reset: the bad descriptor is dropped, the error cleared, new messages go.
  driver::resetInjFifo(wr, 0);
  ASSERT_TRUE(sys->drain());
  EXPECT_EQ(sys->readCsr(0, regs::INJ_STATUS(0)), 0u);
  Put after{2 % n, 0x200, randomBytes(100 * 4)};
  ASSERT_TRUE(post(0, 0, after, true, 0));
  driver::ringDoorbell(wr, 0, rings[0][0].tail());
  ASSERT_TRUE(runUntilFifosEmpty());
  EXPECT_EQ(sys->node(after.target).memory().read(kRegion + after.dst, after.data.size()), after.data);
}

// A broken root complex answers DMA reads with completions whose bytes disagree with
// their Length (4 and 12 bytes short, 8 long). Each is counted MALFORMED and reaches
// the DMA engine as long as its Length says, marked bad: its read fails as a refused
// one does (the FIFO stops with code Mem, the error counted), and nothing of it is
// written at the target (a packet already started leaves stomped, and the receiver
// drops it). Another FIFO of the same node streams on meanwhile; after a reset each
// stopped FIFO sends again.
TEST_P(DmaSystemTest, MalformedReadCompletionFailsOnlyItsMessage) {
  const unsigned n = sys->size();
  const int faults[] = {-4, -12, 8};
  const unsigned badFifos[] = {0, 2, 4};
  std::map<uint64_t, int> faultAt;  // source address of each bad put's data read -> fault
  std::vector<Put> bad;
  for (unsigned i = 0; i < 3; ++i) {
    const uint64_t src = kSrcBase + 0x10'0000 + uint64_t{i} * 0x1000;
    Put p{1 + i % (n - 1), 0x40'0000 + uint64_t{i} * 0x1000, randomBytes(64)};  // inside memory ID 1's 8 MiB
    ASSERT_TRUE(post(0, badFifos[i], p, false, src));
    driver::ringDoorbell(sys->csrWriter(0), badFifos[i], rings[0][badFifos[i]].tail());
    faultAt[src] = faults[i];
    bad.push_back(p);
  }
  unsigned faulted = 0;
  sys->node(0).setReadCompletionFault([&](const Tlp& rd) {
    auto it = faultAt.find(rd.addr);
    if (it == faultAt.end()) return 0;
    const int f = it->second;
    faultAt.erase(it);
    ++faulted;
    return f;
  });
  std::vector<Put> others;
  for (unsigned k = 0; k < 12; ++k) {
    Put p{1 + k % (n - 1), 0x10000 + k * 0x1000, randomBytes(4 * (1 + rng() % 200))};
    ASSERT_TRUE(post(0, 1, p, false, kSrcBase + k * 0x1000));
    others.push_back(p);
  }
  driver::ringDoorbell(sys->csrWriter(0), 1, rings[0][1].tail());
  sys->runUntil([] { return false; }, 20000);
  ASSERT_TRUE(sys->drain());
  EXPECT_EQ(head(0, 1), rings[0][1].tail()) << "the other FIFO served all its puts";
  EXPECT_EQ(faulted, 3u) << "every bad put's read was answered by a broken completion";
  for (unsigned i = 0; i < 3; ++i) {
    const uint32_t st = sys->readCsr(0, regs::INJ_STATUS(badFifos[i]));
    EXPECT_EQ(st & regs::INJ_STATUS_ERR_MASK, regs::INJ_STATUS_ERR_MASK) << "FIFO " << badFifos[i];
    EXPECT_EQ((st & regs::INJ_STATUS_CODE_MASK) >> regs::INJ_STATUS_CODE_LSB, uint32_t(DmaErr::Mem));
    EXPECT_EQ(sys->node(bad[i].target).memory().read(kRegion + bad[i].dst, 64), Bytes(64, 0))
        << "nothing of the failed put lands (fault " << faults[i] << ")";
  }
  EXPECT_EQ(sys->readCsr(0, regs::MALFORMED_CNT), 3u);
  EXPECT_EQ(sys->readCsr(0, regs::DMA_ERR_CNT), 3u);
  for (const Put& p : others) EXPECT_EQ(sys->node(p.target).memory().read(kRegion + p.dst, p.data.size()), p.data);
  // Reset: each stopped FIFO sends again.
  std::vector<Put> after;
  for (unsigned i = 0; i < 3; ++i) {
    driver::resetInjFifo(sys->csrWriter(0), badFifos[i]);
    ASSERT_TRUE(sys->drain());
    EXPECT_EQ(sys->readCsr(0, regs::INJ_STATUS(badFifos[i])), 0u);
    Put p{1 + i % (n - 1), 0x50'0000 + uint64_t{i} * 0x1000, randomBytes(256)};
    ASSERT_TRUE(post(0, badFifos[i], p, false, kSrcBase + 0x20'0000 + uint64_t{i} * 0x1000));
    driver::ringDoorbell(sys->csrWriter(0), badFifos[i], rings[0][badFifos[i]].tail());
    after.push_back(p);
  }
  ASSERT_TRUE(runUntilFifosEmpty());
  for (const Put& p : after) EXPECT_EQ(sys->node(p.target).memory().read(kRegion + p.dst, p.data.size()), p.data);
}

// Counters the NIs do not have (they have 32): a put naming reception counter 40 at its
// target is refused there (NAK 0x62, MEMID_ERR_CNT), writes nothing and moves no
// counter; a put naming injection counter 40 stops its FIFO with code 9 before any of
// it leaves. The put after the refused one, from the same FIFO, lands.
TEST_P(DmaSystemTest, CountersTheNiDoesNotHaveAreRefused) {
  auto wr = sys->csrWriter(0);
  driver::loadCounter(sys->csrWriter(1), 8, 1000);
  const Put refused{1, 0x300, randomBytes(64)}, good{1, 0x400, randomBytes(64)}, stopped{1, 0x500, randomBytes(64)};
  DmaDescriptor remote = putOf(refused, true, 0);
  remote.flags |= kDescRcvCnt;
  remote.rcvCnt = 40;
  ASSERT_TRUE(post(0, 0, remote, refused.data));
  ASSERT_TRUE(post(0, 0, good, true, 0));
  DmaDescriptor local = putOf(stopped, true, 0);
  local.flags |= kDescInjCnt;
  local.injCnt = 40;
  const uint16_t badSlot = rings[0][0].tail();
  ASSERT_TRUE(post(0, 0, local, stopped.data));
  driver::ringDoorbell(wr, 0, rings[0][0].tail());
  sys->runUntil([this] { return false; }, 20000);
  ASSERT_TRUE(sys->drain());
  EXPECT_EQ(sys->readCsr(1, regs::MEMID_ERR_CNT), 1u);
  EXPECT_EQ(sys->readCsr(0, regs::NAK_RX_CNT), 1u);
  EXPECT_EQ(sys->readCsr(0, regs::RETX_FAIL_CNT), 0u);
  EXPECT_EQ(sys->node(1).memory().read(kRegion + refused.dst, 64), Bytes(64, 0)) << "the refused put";
  EXPECT_EQ(sys->node(1).memory().read(kRegion + good.dst, 64), good.data);
  EXPECT_EQ(sys->node(1).memory().read(kRegion + stopped.dst, 64), Bytes(64, 0)) << "the put stopped at its FIFO";
  EXPECT_EQ(sys->readCsr(1, regs::CNT_VALUE(8)), 1000u) << "no counter moved (40 is not 8 modulo 32)";
  const uint32_t st = sys->readCsr(0, regs::INJ_STATUS(0));
  EXPECT_EQ(st & regs::INJ_STATUS_ERR_MASK, regs::INJ_STATUS_ERR_MASK);
  EXPECT_EQ((st & regs::INJ_STATUS_CODE_MASK) >> regs::INJ_STATUS_CODE_LSB, uint32_t(DmaErr::Counter));
  EXPECT_EQ(head(0, 0), badSlot);
  EXPECT_EQ(sys->readCsr(0, regs::DMA_ERR_CNT), 1u);
}

// Sends from four FIFOs of every node to random reception FIFOs of random peers:
// FIFOs of 8 slots that a slow consumer empties two entries at a time, so senders
// meet full FIFOs (RNR NAK) and wait. Every entry arrives once, byte for byte, in
// its source FIFO's order; nothing is refused or given up; each RNR NAK sent is
// received; the NI's tail ends where the consumer's head is.
TEST_P(DmaSystemTest, SendsWaitForFullReceptionFifosAndArriveInOrder) {
  const unsigned n = sys->size();
  constexpr uint16_t kRcvSlots = 8;
  constexpr unsigned kSendFifos = 4, kPerFifo = 8;
  std::vector<std::vector<RcvRing>> rcv(n);
  for (unsigned t = 0; t < n; ++t) {
    for (unsigned q = 0; q < kRcvFifos; ++q) {
      driver::setRcvFifo(sys->csrWriter(t), q, rcvBase(q), kRcvSlots);
      rcv[t].emplace_back(rcvBase(q), kRcvSlots, sys->config().maxPayload);
    }
  }
  // {target, reception FIFO, source LID, source FIFO} -> entries in order.
  std::map<std::tuple<unsigned, unsigned, unsigned, unsigned>, std::deque<Bytes>> expect;
  size_t total = 0;
  for (unsigned s = 0; s < n; ++s) {
    for (unsigned f = 0; f < kSendFifos; ++f) {
      for (unsigned k = 0; k < kPerFifo; ++k) {
        DmaDescriptor d;
        d.op = static_cast<uint8_t>(DmaOp::Send);
        const unsigned t = (s + 1 + rng() % (n - 1)) % n;
        d.dest = lidOf(t);
        d.qid = static_cast<uint16_t>(rng() % kRcvFifos);
        d.tag = (f << 16) | k;
        const Bytes data = randomBytes(rng() % 3 == 0 ? 8 : 4 * (1 + rng() % 200));
        d.flags = data.size() <= 7 * 64 && rng() % 2 ? kDescInline : 0;
        d.src = kSrcBase + (uint64_t{f * kPerFifo + k} << 13) + 64 * (rng() % 64);
        ASSERT_TRUE(post(s, f, d, data));
        for (Bytes& e : entriesOf(d, data, s)) {
          expect[{t, d.qid, lidOf(s), f}].push_back(std::move(e));
          ++total;
        }
      }
      driver::ringDoorbell(sys->csrWriter(s), f, rings[s][f].tail());
    }
  }
  size_t got = 0;
  const uint64_t end = sys->cycle() + 5'000'000;
  while (got < total && sys->cycle() < end && !HasFailure()) {
    sys->runUntil([] { return false; }, 1000);
    for (unsigned t = 0; t < n; ++t) {
      for (unsigned q = 0; q < kRcvFifos; ++q) {
        unsigned taken = 0;
        while (taken < 2) {
          const auto e = take(t, rcv[t][q]);
          if (!e) break;
          ++taken;
          ++got;
          auto& queue = expect[{t, q, e->hdr.srcLid, e->hdr.tag >> 16}];
          ASSERT_FALSE(queue.empty()) << "unexpected entry at node " << t << " FIFO " << q << " from LID "
                                      << e->hdr.srcLid << " tag 0x" << std::hex << e->hdr.tag;
          EXPECT_EQ(e->raw(), queue.front()) << "entry at node " << t << " FIFO " << q << " tag 0x" << std::hex
                                             << e->hdr.tag << " offset " << std::dec << e->hdr.offset;
          queue.pop_front();
        }
        if (taken) driver::releaseRcvSlots(sys->csrWriter(t), q, rcv[t][q].head());
      }
    }
  }
  ASSERT_EQ(got, total) << "entries consumed";
  ASSERT_TRUE(runUntilFifosEmpty());
  uint64_t rnrTx = 0, rnrRx = 0;
  for (unsigned t = 0; t < n; ++t) {
    for (unsigned q = 0; q < kRcvFifos; ++q)
      EXPECT_EQ(sys->readCsr(t, regs::RFIFO_TAIL(q)), rcv[t][q].head()) << "node " << t << " FIFO " << q;
    rnrTx += sys->readCsr(t, regs::RNR_TX_CNT);
    rnrRx += sys->readCsr(t, regs::RNR_RX_CNT);
    EXPECT_EQ(sys->readCsr(t, regs::RETX_FAIL_CNT), 0u);
    EXPECT_EQ(sys->readCsr(t, regs::MEMID_ERR_CNT), 0u);
    EXPECT_EQ(sys->readCsr(t, regs::DMA_ERR_CNT), 0u);
  }
  EXPECT_GT(rnrTx, 0u) << "the FIFOs must have filled up";
  EXPECT_EQ(rnrTx, rnrRx);
  std::cout << "entries " << total << ", RNR NAKs " << rnrTx << "\n";
}

// A send to a reception FIFO that is disabled or does not exist is refused at the
// target (NAK 0x62, MEMID_ERR_CNT) and nothing is written; the sends after it from
// the same FIFO arrive.
TEST_P(DmaSystemTest, SendToDisabledOrMissingReceptionFifoIsRefused) {
  const unsigned mp = sys->config().maxPayload;
  driver::setRcvFifo(sys->csrWriter(1), 0, rcvBase(0), 16);
  RcvRing ring(rcvBase(0), 16, mp);
  std::vector<Bytes> want;
  for (uint16_t q : {uint16_t{0}, uint16_t{2}, uint16_t{9}, uint16_t{0}}) {
    DmaDescriptor d;
    d.op = static_cast<uint8_t>(DmaOp::Send);
    d.flags = kDescInline;
    d.dest = lidOf(1);
    d.qid = q;
    d.tag = q;
    const Bytes data = randomBytes(64);
    ASSERT_TRUE(post(0, 0, d, data));
    if (q == 0) want.push_back(entriesOf(d, data, 0).at(0));
  }
  driver::ringDoorbell(sys->csrWriter(0), 0, rings[0][0].tail());
  ASSERT_TRUE(runUntilFifosEmpty());
  for (const Bytes& w : want) {
    const auto e = take(1, ring);
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->raw(), w);
  }
  EXPECT_FALSE(take(1, ring).has_value());
  EXPECT_EQ(sys->node(1).memory().read(rcvBase(2), mp), Bytes(mp, 0)) << "the disabled FIFO's memory";
  EXPECT_EQ(sys->readCsr(1, regs::MEMID_ERR_CNT), 2u);
  EXPECT_EQ(sys->readCsr(1, regs::RFIFO_TAIL(0)), 2u);
  EXPECT_EQ(sys->readCsr(0, regs::NAK_RX_CNT), 2u);
  EXPECT_EQ(sys->readCsr(0, regs::RETX_FAIL_CNT), 0u);
}

// Ring bases written off their slot boundary (against INJ_BASE_LO's and
// RFIFO_BASE_LO's documentation): the NIs use them without the low bits. Node 0's FIFO
// 3 is given its ring's address + 0x24 and node 1's reception FIFO 0 its ring's
// + 0x1C; sends and a put from the aligned ring land, the entries in the aligned
// reception ring.
TEST_P(DmaSystemTest, RingBasesAreUsedWithoutTheirBitsBelowASlot) {
  const unsigned mp = sys->config().maxPayload;
  driver::setInjFifo(sys->csrWriter(0), 3, ringBase(3) + 0x24, kRingSlots);
  driver::setRcvFifo(sys->csrWriter(1), 0, rcvBase(0) + 0x1C, 16);
  RcvRing ring(rcvBase(0), 16, mp);
  std::vector<Bytes> want;
  for (unsigned k = 0; k < 4; ++k) {
    DmaDescriptor d;
    d.op = static_cast<uint8_t>(DmaOp::Send);
    d.flags = k % 2 ? kDescInline : 0;
    d.src = kSrcBase + k * 0x1000;
    d.dest = lidOf(1);
    d.tag = k;
    const Bytes data = randomBytes(4 * (1 + rng() % 100));
    ASSERT_TRUE(post(0, 3, d, data));
    for (Bytes& e : entriesOf(d, data, 0)) want.push_back(std::move(e));
  }
  Put put{1, 0x3000, randomBytes(256)};
  ASSERT_TRUE(post(0, 3, put, true, 0));
  driver::ringDoorbell(sys->csrWriter(0), 3, rings[0][3].tail());
  ASSERT_TRUE(runUntilFifosEmpty());
  EXPECT_EQ(sys->readCsr(0, regs::INJ_STATUS(3)), 0u);
  for (const Bytes& w : want) {
    const auto e = take(1, ring);
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->raw(), w);
  }
  EXPECT_FALSE(take(1, ring).has_value());
  EXPECT_EQ(sys->node(1).memory().read(kRegion + put.dst, put.data.size()), put.data);
  EXPECT_EQ(sys->readCsr(0, regs::DMA_ERR_CNT), 0u);
}

// A reception FIFO made smaller than where its tail stood while it ran (against
// RFIFO_SIZE's documentation): node 1's FIFO 0 of 16 slots takes 10 sends, then is
// made 8 slots. The next two sends are refused (MEMID_ERR_CNT, NAKs at the sender) and
// nothing is written past the ring; after a reset the FIFO takes sends at slot 0.
TEST_P(DmaSystemTest, ReceptionFifoMadeSmallerThanItsTailTakesNothingUntilReset) {
  const unsigned mp = sys->config().maxPayload;
  auto wr1 = sys->csrWriter(1);
  auto send = [&](unsigned k, std::vector<Bytes>* want) {
    DmaDescriptor d;
    d.op = static_cast<uint8_t>(DmaOp::Send);
    d.flags = kDescInline;
    d.dest = lidOf(1);
    d.tag = k;
    const Bytes data = randomBytes(64);
    ASSERT_TRUE(post(0, 0, d, data));
    if (want) want->push_back(entriesOf(d, data, 0).at(0));
  };
  auto sendAll = [&](unsigned from, unsigned to, std::vector<Bytes>* want) {
    for (unsigned k = from; k < to; ++k) send(k, want);
    driver::ringDoorbell(sys->csrWriter(0), 0, rings[0][0].tail());
    ASSERT_TRUE(runUntilFifosEmpty());
  };
  auto takeAll = [&](RcvRing& ring, const std::vector<Bytes>& want) {
    for (const Bytes& w : want) {
      const auto e = take(1, ring);
      ASSERT_TRUE(e.has_value());
      EXPECT_EQ(e->raw(), w);
    }
    EXPECT_FALSE(take(1, ring).has_value());
    driver::releaseRcvSlots(wr1, 0, ring.head());
  };
  driver::setRcvFifo(wr1, 0, rcvBase(0), 16);
  RcvRing ring(rcvBase(0), 16, mp);
  std::vector<Bytes> want;
  sendAll(0, 10, &want);
  takeAll(ring, want);
  wr1(regs::RFIFO_SIZE(0), 8);
  sendAll(10, 12, nullptr);
  EXPECT_EQ(sys->readCsr(1, regs::MEMID_ERR_CNT), 2u);
  EXPECT_EQ(sys->readCsr(0, regs::NAK_RX_CNT), 2u);
  EXPECT_EQ(sys->readCsr(1, regs::RFIFO_TAIL(0)), 10u);
  EXPECT_EQ(sys->node(1).memory().read(rcvBase(0) + 10 * mp, 2 * mp), Bytes(2 * mp, 0)) << "past the ring";
  driver::setRcvFifo(wr1, 0, rcvBase(0), 8);
  RcvRing small(rcvBase(0), 8, mp);
  want.clear();
  sendAll(12, 15, &want);
  takeAll(small, want);
  EXPECT_EQ(sys->readCsr(1, regs::MEMID_ERR_CNT), 2u);
  EXPECT_EQ(sys->readCsr(0, regs::RETX_FAIL_CNT), 0u);
}

// Byte counters: node s's FIFO 0 sends puts and sends to node s + 1 that name
// injection counter 3 at s and reception counter 5 at s + 1, both loaded with the
// message bytes. With the last message held back, each counter stands at that
// message's length; once it is sent, each reaches zero (CNT_ZERO, STATUS, an
// interrupt write), and when the CPU sees the reception counter at zero, every
// byte is already in memory (the check runs at once, without letting the system
// settle). Loading a counter again clears its hit-zero bit.
TEST_P(DmaSystemTest, CountersReachZeroWhenAllBytesHaveLeftAndArrived) {
  const unsigned n = sys->size();
  constexpr unsigned kInjCnt = 3, kRcvCnt = 5, kMsgs = 6;
  constexpr uint64_t kIrqAddr = 0x7000'0000;
  struct Msg {
    DmaDescriptor d;
    Bytes data;
  };
  std::vector<std::vector<Msg>> msgs(n);
  std::vector<RcvRing> rcv;
  for (unsigned s = 0; s < n; ++s) {
    auto wr = sys->csrWriter(s);
    driver::setRcvFifo(wr, 0, rcvBase(0), 64);
    rcv.emplace_back(rcvBase(0), 64, sys->config().maxPayload);
    wr(regs::INTR_ADDR_LO, static_cast<uint32_t>(kIrqAddr));
    wr(regs::INTR_ADDR_HI, 0);
    wr(regs::INTR_DATA, 0xC000 + s);
    wr(regs::INTR_MASK, regs::STATUS_CNT_ZERO_MASK);
    uint32_t total = 0;
    for (unsigned k = 0; k < kMsgs; ++k) {
      Msg m;
      const bool put = k == kMsgs - 1 || rng() % 2;  // the last one a put of 1 KiB or more
      m.d.op = static_cast<uint8_t>(put ? DmaOp::Put : DmaOp::Send);
      m.d.flags = kDescInjCnt | kDescRcvCnt;
      m.d.injCnt = kInjCnt;
      m.d.rcvCnt = kRcvCnt;
      m.d.dest = lidOf((s + 1) % n);
      m.d.qid = put ? 1 : 0;
      m.d.dst = uint64_t{k} << 12;
      m.d.tag = k;
      m.data = randomBytes(k == kMsgs - 1 ? 1024 + 4 * (rng() % 256) : 4 * (1 + rng() % 256));
      if (m.data.size() <= 7 * 64 && rng() % 2) m.d.flags |= kDescInline;
      m.d.src = kSrcBase + (uint64_t{k} << 13);
      total += static_cast<uint32_t>(m.data.size());
      msgs[s].push_back(m);
    }
    driver::loadCounter(wr, kInjCnt, total);
    driver::loadCounter(sys->csrWriter((s + 1) % n), kRcvCnt, total);
  }
  ASSERT_TRUE(sys->drain());
  for (unsigned s = 0; s < n; ++s) {
    for (unsigned k = 0; k + 1 < kMsgs; ++k) ASSERT_TRUE(post(s, 0, msgs[s][k].d, msgs[s][k].data));
    driver::ringDoorbell(sys->csrWriter(s), 0, rings[s][0].tail());
  }
  ASSERT_TRUE(runUntilFifosEmpty());
  for (unsigned s = 0; s < n; ++s) {
    const uint32_t last = static_cast<uint32_t>(msgs[(s + n - 1) % n].back().data.size());
    EXPECT_EQ(sys->readCsr(s, regs::CNT_VALUE(kRcvCnt)), last) << "reception counter at " << s;
    EXPECT_EQ(sys->readCsr(s, regs::CNT_VALUE(kInjCnt)), msgs[s].back().data.size()) << "injection counter at " << s;
    EXPECT_EQ(sys->readCsr(s, regs::CNT_ZERO), 0u);
    EXPECT_EQ(sys->readCsr(s, regs::STATUS) & regs::STATUS_CNT_ZERO_MASK, 0u);
  }
  for (unsigned s = 0; s < n; ++s) {
    ASSERT_TRUE(post(s, 0, msgs[s].back().d, msgs[s].back().data));
    driver::ringDoorbell(sys->csrWriter(s), 0, rings[s][0].tail());
  }
  for (unsigned t = 0; t < n; ++t) {
    ASSERT_TRUE(sys->waitCounter(t, kRcvCnt)) << "reception counter at " << t;
    // Seen at zero: every byte sent to t is in its memory now.
    Memory& mem = sys->node(t).memory();
    const unsigned from = (t + n - 1) % n;
    for (const Msg& m : msgs[from]) {
      if (m.d.isPut()) {
        EXPECT_EQ(mem.read(kRegion + m.d.dst, m.data.size()), m.data) << "put " << m.d.tag << " at " << t;
        continue;
      }
      for (const Bytes& want : entriesOf(m.d, m.data, from)) {
        const auto e = take(t, rcv[t]);
        ASSERT_TRUE(e.has_value()) << "send " << m.d.tag << " at " << t;
        EXPECT_EQ(e->raw(), want);
      }
    }
  }
  for (unsigned s = 0; s < n; ++s) ASSERT_TRUE(sys->waitCounter(s, kInjCnt)) << "injection counter at " << s;
  ASSERT_TRUE(sys->drain());
  for (unsigned s = 0; s < n; ++s) {
    EXPECT_EQ(sys->readCsr(s, regs::CNT_ZERO), (1u << kInjCnt) | (1u << kRcvCnt));
    EXPECT_EQ(sys->readCsr(s, regs::CNT_VALUE(kRcvCnt)), 0u);
    EXPECT_NE(sys->readCsr(s, regs::STATUS) & regs::STATUS_CNT_ZERO_MASK, 0u);
    const uint32_t irq = 0xC000 + s;
    EXPECT_EQ(sys->node(s).memory().read(kIrqAddr, 4), (Bytes{static_cast<uint8_t>(irq), static_cast<uint8_t>(irq >> 8), 0, 0}));
    driver::loadCounter(sys->csrWriter(s), kRcvCnt, 100);
    EXPECT_EQ(sys->readCsr(s, regs::CNT_ZERO), 1u << kInjCnt) << "a load clears the hit-zero bit";
    EXPECT_EQ(sys->readCsr(s, regs::CNT_VALUE(kRcvCnt)), 100u);
  }
}

// Local copies: FIFO 2 of every node copies messages (inline and from memory, 4 bytes
// to 2 KiB, across pages) into its own memory ID 3, naming injection counter 7 and
// reception counter 9 of the same node, both loaded with the bytes. No packet enters
// the fabric; when the CPU sees the reception counter at zero every byte is in place
// (checked at once). A copy past the end of its memory ID, or to a memory ID that
// does not allow writes, stops FIFO 3 (ERR_RANGE) and writes nothing.
TEST_P(DmaSystemTest, LocalCopiesLandInOwnMemoryWithoutTheFabric) {
  const unsigned n = sys->size();
  constexpr unsigned kInjCnt = 7, kRcvCnt = 9, kMsgs = 12;
  struct Copy {
    DmaDescriptor d;
    Bytes data;
  };
  std::vector<std::vector<Copy>> copies(n);
  for (unsigned s = 0; s < n; ++s) {
    uint32_t total = 0;
    for (unsigned k = 0; k < kMsgs; ++k) {
      Copy c;
      c.d.op = static_cast<uint8_t>(DmaOp::Copy);
      c.d.flags = kDescInjCnt | kDescRcvCnt;
      c.d.injCnt = kInjCnt;
      c.d.rcvCnt = kRcvCnt;
      c.d.qid = 3;
      c.d.dst = (uint64_t{k} << 13) + 64 * (rng() % 64);
      c.data = randomBytes(rng() % 4 == 0 ? 8 : 4 * (1 + rng() % 512));
      if (c.data.size() <= 7 * 64 && rng() % 2) c.d.flags |= kDescInline;
      c.d.src = kSrcBase + (uint64_t{k} << 13) + 64 * (rng() % 64);
      total += static_cast<uint32_t>(c.data.size());
      copies[s].push_back(c);
    }
    driver::loadCounter(sys->csrWriter(s), kInjCnt, total);
    driver::loadCounter(sys->csrWriter(s), kRcvCnt, total);
  }
  ASSERT_TRUE(sys->drain());
  const uint64_t fabricPackets = sys->fabric().stats().packets;
  for (unsigned s = 0; s < n; ++s) {
    for (const Copy& c : copies[s]) ASSERT_TRUE(post(s, 2, c.d, c.data));
    driver::ringDoorbell(sys->csrWriter(s), 2, rings[s][2].tail());
  }
  for (unsigned s = 0; s < n; ++s) {
    ASSERT_TRUE(sys->waitCounter(s, kRcvCnt)) << "reception counter at " << s;
    for (const Copy& c : copies[s])
      EXPECT_EQ(sys->node(s).memory().read(kCopyRegion + c.d.dst, c.data.size()), c.data)
          << "copy of " << c.data.size() << " bytes at node " << s << " offset 0x" << std::hex << c.d.dst;
  }
  ASSERT_TRUE(runUntilFifosEmpty());
  EXPECT_EQ(sys->fabric().stats().packets, fabricPackets) << "a local copy must not use the fabric";
  for (unsigned s = 0; s < n; ++s) {
    EXPECT_EQ(sys->readCsr(s, regs::CNT_ZERO), (1u << kInjCnt) | (1u << kRcvCnt));
    EXPECT_EQ(sys->readCsr(s, regs::INJ_STATUS(2)), 0u);
  }
  // Bad copies on FIFO 3 of node 0; FIFO 2 goes on with a good one.
  Memory& mem = sys->node(0).memory();
  for (const auto& [memid, dst] : {std::pair<uint16_t, uint64_t>{3, kCopyRegionBytes - 64},
                                   std::pair<uint16_t, uint64_t>{4, 0}}) {
    SCOPED_TRACE("memory ID " + std::to_string(memid));
    if (memid == 4) sys->setMemId(0, 4, MemRegion{true, 0x6800'0000, 0x1000, true, false});  // read-only
    DmaDescriptor bad;
    bad.op = static_cast<uint8_t>(DmaOp::Copy);
    bad.flags = kDescInline;
    bad.qid = memid;
    bad.dst = dst;
    const uint16_t badSlot = rings[0][3].tail();
    ASSERT_TRUE(post(0, 3, bad, randomBytes(128)));
    driver::ringDoorbell(sys->csrWriter(0), 3, rings[0][3].tail());
    Copy good{copies[0][0].d, randomBytes(256)};
    good.d.flags = kDescInline;
    ASSERT_TRUE(post(0, 2, good.d, good.data));
    driver::ringDoorbell(sys->csrWriter(0), 2, rings[0][2].tail());
    sys->runUntil([] { return false; }, 5000);
    ASSERT_TRUE(sys->drain());
    const uint32_t st = sys->readCsr(0, regs::INJ_STATUS(3));
    EXPECT_EQ((st & regs::INJ_STATUS_CODE_MASK) >> regs::INJ_STATUS_CODE_LSB, uint32_t(DmaErr::Range));
    EXPECT_EQ(head(0, 3), badSlot);
    EXPECT_EQ(mem.read(kCopyRegion + kCopyRegionBytes - 64, 64), Bytes(64, 0)) << "nothing of the bad copy written";
    EXPECT_EQ(mem.read(0x6800'0000, 128), Bytes(128, 0)) << "nothing of the bad copy written";
    EXPECT_EQ(mem.read(kCopyRegion + good.d.dst, 256), good.data);
    driver::resetInjFifo(sys->csrWriter(0), 3);  // head := tail, where the producer goes on
    ASSERT_TRUE(sys->drain());
  }
  EXPECT_EQ(sys->readCsr(0, regs::DMA_ERR_CNT), 2u);
}

// A raw datagram as a producer would post it: an Ethernet frame (MAC addresses, IPv4
// EtherType, payload) carried as a bridged frame, or an IPv6 datagram (version 6,
// payload length); 4-byte multiples up to the raw limit.
DmaDescriptor rawDesc(uint16_t dest, bool ethernet) {
  DmaDescriptor d;
  d.op = static_cast<uint8_t>(DmaOp::Raw);
  d.dest = dest;
  d.qid = ethernet ? kEtherTypeBridged : kEtherTypeIpv6;
  return d;
}
Bytes rawDatagram(std::mt19937_64& rng, bool ethernet, uint32_t maxBytes) {
  const uint32_t min = ethernet ? 60 : 40;
  Bytes b(min + 4 * (rng() % ((maxBytes - min) / 4 + 1)));
  for (auto& x : b) x = static_cast<uint8_t>(rng());
  if (ethernet) {
    putBe(&b[12], 2, kEtherTypeIpv4);
  } else {
    b[0] = 0x60;
    putBe(&b[4], 2, b.size() - 40);
  }
  return b;
}

// Every node sends raw Ethernet frames and IPv6 datagrams (inline and from memory) from
// one FIFO to random peers while the peers consume their raw reception FIFO: each
// arrives once, whole (LRH, RWH, datagram behind an entry header marked raw), in its
// source's order; nothing is dropped, resent or answered.
TEST_P(DmaSystemTest, RawDatagramsLandWholeInTheRawFifo) {
  const unsigned n = sys->size();
  const unsigned mp = sys->config().maxPayload;
  constexpr unsigned kRawRcv = 2, kPerNode = 12;
  constexpr uint16_t kRcvSlots = 128;  // room for all: a full raw FIFO drops (tested below)
  std::vector<RcvRing> rcv;
  for (unsigned t = 0; t < n; ++t) {
    driver::setRcvFifo(sys->csrWriter(t), kRawRcv, rcvBase(kRawRcv), kRcvSlots);
    driver::setRawFifo(sys->csrWriter(t), kRawRcv);
    rcv.emplace_back(rcvBase(kRawRcv), kRcvSlots, mp);
  }
  std::map<std::pair<unsigned, uint16_t>, std::deque<Bytes>> expect;  // {target, source LID} -> entries
  size_t total = 0;
  for (unsigned s = 0; s < n; ++s) {
    for (unsigned k = 0; k < kPerNode; ++k) {
      const unsigned t = (s + 1 + rng() % (n - 1)) % n;
      const bool eth = k % 2 == 0;
      DmaDescriptor d = rawDesc(lidOf(t), eth);
      const Bytes data = rawDatagram(rng, eth, rawMaxBytes(mp));
      // Inline only what leaves the 64-slot ring room for the others (at MaxPayload
      // 4096 a datagram may take most of it).
      d.flags = rng() % 2 && data.size() <= 1024 ? kDescInline : 0;
      // A raw datagram's source stays inside a 4 KiB page.
      d.src = kSrcBase + (uint64_t{k} << 13) + 64 * (rng() % std::min<size_t>(32, (4096 - data.size()) / 64 + 1));
      ASSERT_TRUE(post(s, 5, d, data));
      expect[{t, lidOf(s)}].push_back(entriesOf(d, data, s).at(0));
      ++total;
    }
    driver::ringDoorbell(sys->csrWriter(s), 5, rings[s][5].tail());
  }
  size_t got = 0;
  const uint64_t end = sys->cycle() + 2'000'000;
  while (got < total && sys->cycle() < end && !HasFailure()) {
    sys->runUntil([] { return false; }, 500);
    for (unsigned t = 0; t < n; ++t) {
      bool took = false;
      while (const auto e = take(t, rcv[t])) {
        took = true;
        ++got;
        EXPECT_EQ(e->hdr.msgLen, 0u) << "a raw entry is marked by message length 0";
        auto& queue = expect[{t, e->hdr.srcLid}];
        ASSERT_FALSE(queue.empty()) << "unexpected raw entry at node " << t << " from LID " << e->hdr.srcLid;
        EXPECT_EQ(e->raw(), queue.front()) << "raw entry at node " << t << " from LID " << e->hdr.srcLid;
        queue.pop_front();
      }
      if (took) driver::releaseRcvSlots(sys->csrWriter(t), kRawRcv, rcv[t].head());
    }
  }
  ASSERT_EQ(got, total) << "raw entries consumed";
  ASSERT_TRUE(runUntilFifosEmpty());
  uint64_t rx = 0;
  for (unsigned t = 0; t < n; ++t) {
    rx += sys->readCsr(t, regs::RAW_RX_CNT);
    EXPECT_EQ(sys->readCsr(t, regs::RAW_DROP_CNT), 0u);
    EXPECT_EQ(sys->readCsr(t, regs::NAK_TX_CNT), 0u);
    EXPECT_EQ(sys->readCsr(t, regs::BAD_PKT_CNT), 0u);
    EXPECT_EQ(sys->readCsr(t, regs::DMA_ERR_CNT), 0u);
    EXPECT_EQ(sys->readCsr(t, regs::RETX_CNT), 0u) << "raw packets are never resent";
  }
  EXPECT_EQ(rx, total);
}

// Raw packets have no sequence and no answer: one that finds its FIFO full, raw
// reception off, or that was damaged on the way is dropped and counted at the target
// (RAW_DROP_CNT, CRC_ERR_CNT); the next one lands, and a put beside them is unharmed.
TEST_P(DmaSystemTest, RawDatagramsWithoutRoomOrDamagedAreDroppedAndCounted) {
  const unsigned mp = sys->config().maxPayload;
  constexpr unsigned kRawRcv = 1;
  constexpr uint16_t kRcvSlots = 4;  // 3 entries
  driver::setRcvFifo(sys->csrWriter(1), kRawRcv, rcvBase(kRawRcv), kRcvSlots);
  driver::setRawFifo(sys->csrWriter(1), kRawRcv);
  RcvRing rcv(rcvBase(kRawRcv), kRcvSlots, mp);
  std::deque<Bytes> landed;  // what the FIFO must hold, in order
  auto send = [&](bool lands) {
    DmaDescriptor d = rawDesc(lidOf(1), rng() % 2);
    const Bytes data = rawDatagram(rng, d.qid == kEtherTypeBridged, rawMaxBytes(mp));
    d.flags = kDescInline;
    ASSERT_TRUE(post(0, 4, d, data));
    driver::ringDoorbell(sys->csrWriter(0), 4, rings[0][4].tail());
    if (lands) landed.push_back(entriesOf(d, data, 0).at(0));
    ASSERT_TRUE(runUntilFifosEmpty());
  };
  // A put from another FIFO goes on beside them.
  const Put put{1, 0x2000, randomBytes(1024)};
  ASSERT_TRUE(post(0, 0, put, false, kSrcBase + 0x10'0000));
  driver::ringDoorbell(sys->csrWriter(0), 0, rings[0][0].tail());
  for (unsigned k = 0; k < 5; ++k) send(k < 3);  // the FIFO holds 3: two dropped
  EXPECT_EQ(sys->readCsr(1, regs::RAW_RX_CNT), 3u);
  EXPECT_EQ(sys->readCsr(1, regs::RAW_DROP_CNT), 2u);
  driver::setRawFifo(sys->csrWriter(1), kRawRcv, false);
  send(false);
  EXPECT_EQ(sys->readCsr(1, regs::RAW_DROP_CNT), 3u) << "raw reception off";
  while (const auto e = take(1, rcv)) {
    ASSERT_FALSE(landed.empty()) << "an entry that should have been dropped";
    EXPECT_EQ(e->raw(), landed.front());
    landed.pop_front();
  }
  EXPECT_TRUE(landed.empty());
  driver::releaseRcvSlots(sys->csrWriter(1), kRawRcv, rcv.head());
  driver::setRawFifo(sys->csrWriter(1), kRawRcv);
  sys->fabric().corruptNext(0, 1);
  send(false);
  EXPECT_EQ(sys->readCsr(1, regs::CRC_ERR_CNT), 1u) << "the damaged raw packet";
  send(true);
  const auto e = take(1, rcv);
  ASSERT_TRUE(e) << "the raw packet after the damaged one";
  EXPECT_EQ(e->raw(), landed.front());
  EXPECT_FALSE(take(1, rcv)) << "nothing of the damaged packet";
  EXPECT_EQ(sys->readCsr(1, regs::RAW_RX_CNT), 4u);
  EXPECT_EQ(sys->readCsr(1, regs::RAW_DROP_CNT), 3u);
  EXPECT_EQ(sys->node(1).memory().read(kRegion + put.dst, put.data.size()), put.data) << "the put beside them";
  EXPECT_EQ(sys->readCsr(0, regs::DMA_ERR_CNT), 0u);
}

// The raw packets the NIs send, captured on the fabric, read in Wireshark as IB raw
// packets whose RWH EtherType leads to the frame inside: a bridged Ethernet frame
// carrying IPv6/UDP, and a bare IPv6 datagram (tshark, as users look at captures).
TEST(DmaCapture, RawPacketsDecodeInTsharkAsEthernetAndIpv6) {
  const auto path = std::filesystem::temp_directory_path() / "ni_raw_capture.pcapng";
  SystemConfig c;
  c.nodes = 2;
  c.pcapPath = path.string();
  System sys(c);
  sys.reset();
  const unsigned mp = sys.config().maxPayload;
  driver::setInjFifo(sys.csrWriter(0), 0, kRingBase, 16);
  driver::setRcvFifo(sys.csrWriter(1), 0, kRcvBase, 8);
  driver::setRawFifo(sys.csrWriter(1), 0);
  InjRing ring(kRingBase, 16);
  Bytes ip6(48, 0);  // IPv6 ::1 -> ::2, UDP 4660 -> 22136, no payload
  ip6[0] = 0x60;
  ip6[5] = 8;
  ip6[6] = 17;
  ip6[7] = 64;
  ip6[23] = 1;
  ip6[39] = 2;
  const Bytes udp = {0x12, 0x34, 0x56, 0x78, 0, 8, 0, 0};
  std::copy(udp.begin(), udp.end(), ip6.begin() + 40);
  Bytes frame = {0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x86, 0xDD};  // MACs, EtherType IPv6
  frame.insert(frame.end(), ip6.begin(), ip6.end());
  frame.resize(64, 0);
  auto write = [&sys](uint64_t a, const Bytes& b) { sys.node(0).memory().write(a, b); };
  for (const auto& [type, data] : {std::pair<uint16_t, Bytes>{kEtherTypeBridged, frame}, {kEtherTypeIpv6, ip6}}) {
    DmaDescriptor d;
    d.op = static_cast<uint8_t>(DmaOp::Raw);
    d.flags = kDescInline;
    d.dest = lidOf(1);
    d.qid = type;
    d.len = static_cast<uint32_t>(data.size());
    ASSERT_TRUE(ring.post(d, data, static_cast<uint16_t>(sys.readCsr(0, regs::INJ_HEAD(0))), write));
  }
  driver::ringDoorbell(sys.csrWriter(0), 0, ring.tail());
  ASSERT_TRUE(sys.runUntil([&] { return sys.readCsr(1, regs::RAW_RX_CNT) == 2; }, 20000));
  ASSERT_EQ(mp, 256u);
  sys.fabric().tap().close();
  const std::string cmd = "tshark -r " + path.string() +
                          " -T fields -e infiniband.lrh.lnh -e infiniband.rwh.etype -e eth.type -e ipv6.dst"
                          " -e udp.dstport 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[256];
  while (fgets(buf, sizeof buf, p)) out += buf;
  ASSERT_EQ(pclose(p), 0) << "tshark failed (make setup installs it)";
  EXPECT_EQ(out, "0x00\t0x6558\t0x86dd\t::2\t22136\n0x00\t0x86dd\t\t::2\t22136\n");
  std::filesystem::remove(path);
}

INSTANTIATE_TEST_SUITE_P(Widths, DmaSystemTest,
                         ::testing::Values(Param{8, 64}, Param{4, 128}, Param{4, 256}, Param{8, 512},
                                           Param{4, 64, "small"}, Param{4, 64, "default", 4096}),
                         [](const ::testing::TestParamInfo<Param>& i) {
                           return tb::systemParamName(i.param.nodes, i.param.width, i.param.maxPayload, i.param.config);
                         });

}  // namespace

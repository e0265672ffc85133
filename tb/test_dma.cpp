// SPDX-License-Identifier: Apache-2.0
// The DMA engine in a multi-node system: descriptors produced into injection FIFOs
// in host memory (sim/dma.hpp InjRing), doorbells through the registers, messages
// moved by the NIs alone. Scoreboard: every put's bytes at its target, nothing
// else written there, the host's own tunneled stores unharmed beside them.
#include <gtest/gtest.h>

#include <map>

#include "dma.hpp"
#include "driver.hpp"
#include "ni_regs.hpp"
#include "system.hpp"
#include "verilated_fixture.hpp"

using namespace ni;

namespace {

struct Param {
  unsigned nodes;
  unsigned width;
};

constexpr uint64_t kRegion = 0x4000'0000;   // memory ID 1 at every node: puts land here
constexpr uint64_t kStoreRegion = 0x5000'0000;  // memory ID 2: the CPUs' stores
constexpr uint64_t kRingBase = 0x1000'0000;
constexpr uint64_t kSrcBase = 0x2000'0000;
constexpr uint16_t kRingSlots = 64;
constexpr unsigned kFifos = 8;

class DmaSystemTest : public ::testing::TestWithParam<Param> {
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
      sys->setMemId(n, 1, MemRegion{true, kRegion, 0x80'0000, true, true});
      sys->setMemId(n, 2, MemRegion{true, kStoreRegion, 0x10000, true, true});
      for (unsigned f = 0; f < kFifos; ++f) {
        driver::setInjFifo(sys->csrWriter(n), f, ringBase(f), kRingSlots);
        rings[n].emplace_back(ringBase(f), kRingSlots);
      }
    }
    ASSERT_TRUE(sys->drain());
  }
  void TearDown() override {
    EXPECT_FALSE(sys->rtlError()) << "an RTL assertion failed";
    if (HasFailure()) std::cerr << "[ reproduce ] NI_SEED=" << seed << "\n";
  }
  static uint64_t ringBase(unsigned f) { return kRingBase + uint64_t{f} * 0x10000; }
  Bytes randomBytes(size_t n) {
    Bytes b(n);
    for (auto& x : b) x = static_cast<uint8_t>(rng());
    return b;
  }
  uint16_t head(unsigned n, unsigned f) { return static_cast<uint16_t>(sys->readCsr(n, regs::INJ_HEAD(f))); }

  struct Put {
    unsigned target;
    uint64_t dst;
    Bytes data;
  };
  // Posts a put from node n's FIFO f; the caller rings the doorbell.
  bool post(unsigned n, unsigned f, const Put& p, bool inl, uint64_t src) {
    DmaDescriptor d;
    d.op = static_cast<uint8_t>(DmaOp::Put);
    d.flags = inl ? kDescInline : 0;
    d.dest = lidOf(p.target);
    d.qid = 1;
    d.len = static_cast<uint32_t>(p.data.size());
    d.dst = p.dst;
    d.src = src;
    if (!inl) sys->node(n).memory().write(src, p.data);
    auto write = [this, n](uint64_t a, const Bytes& b) { sys->node(n).memory().write(a, b); };
    return rings[n][f].post(d, p.data, head(n, f), write);
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

  uint64_t seed = 1;
  std::mt19937_64 rng;
  std::unique_ptr<System> sys;
  std::map<unsigned, std::vector<InjRing>> rings;
};

// Every node puts messages from all eight FIFOs to random peers (inline and from
// memory, 4 bytes to 2 KiB, across 4 KiB pages), while its CPU also stores through a
// combining window: every put lands byte for byte, and so does every store (the
// stores' continuation packets continue the right write with DMA packets between them).
TEST_P(DmaSystemTest, PutsFromAllFifosOfEveryNodeLand) {
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

INSTANTIATE_TEST_SUITE_P(Widths, DmaSystemTest,
                         ::testing::Values(Param{8, 64}, Param{4, 128}, Param{4, 256}, Param{8, 512}),
                         [](const ::testing::TestParamInfo<Param>& i) {
                           return "N" + std::to_string(i.param.nodes) + "_W" + std::to_string(i.param.width);
                         });

}  // namespace

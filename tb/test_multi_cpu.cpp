// SPDX-License-Identifier: Apache-2.0
// System tests of NIs with several host ports (nic_top HostPorts 2 and 4): a CPU per
// port on every node, all issuing at once. Every completion, confirmation and CSR
// read must return to the CPU that asked (the scoreboard of the soak checks the
// data); a CPU that hangs is declared down and the others go on; a completion that
// names no port is dropped and counted.
// And nodes with several NIs (rails), each on its own fabric plane: the runtime's
// striped puts and per-destination messages land byte for byte, over every plane.
#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>

#include "dma.hpp"
#include "driver.hpp"
#include "ni_regs.hpp"
#include "soak.hpp"
#include "system_fixture.hpp"
#include "workloads.hpp"

using namespace ni;

namespace {

class MultiCpuTest : public tb::SystemFixture<unsigned> {
 protected:
  void SetUp() override {
    SystemConfig c;
    c.nodes = 2;
    c.hostPorts = GetParam();
    c.hostStall = 0.1;
    startSystem(c);
    // Node 1's memory ID 0 behind window 0 of node 0.
    sys->setMemId(1, 0, MemRegion{true, 0x4000'0000ull, 0x100000, true, true, true});
    Window w;
    w.base = kApertureBase;
    w.size = 0x100000;
    w.dstNode = 1;
    w.memid = 0;
    sys->setWindow(0, 0, w);
    EXPECT_TRUE(sys->drain());
  }
  unsigned cpus() const { return GetParam(); }
  void expectNoStrayCompletion() {
    for (unsigned i = 0; i < sys->size(); ++i) {
      EXPECT_EQ(sys->node(i).stats().wrongPort, 0u) << "node " << i;
      EXPECT_EQ(sys->node(i).stats().unexpectedCpl, 0u) << "node " << i;
    }
  }
};

// The soak's scoreboard with every operation from a random CPU of its node, on a
// faulty fabric: reads, confirmed writes and atomics all come back to their CPU. A
// fixture of its own: the soak sets up its own windows on 4 nodes.
class MultiCpuSoakTest : public tb::SystemFixture<unsigned> {};

TEST_P(MultiCpuSoakTest, EveryCpuGetsItsOwnAnswersUnderTheSoak) {
  const unsigned cpus = GetParam();
  SystemConfig c;
  c.nodes = 4;
  c.hostPorts = cpus;
  c.hostStall = 0.1;
  c.faults = soakFaults(tb::envU64("NI_SEED", 1));
  startSystem(c);
  SoakConfig sc;
  sc.ops = 1500;
  sc.seed = seed;
  const SoakResult r = runSoak(*sys, sc);
  EXPECT_TRUE(r.ok()) << "failed " << r.failed << " lost " << r.lost << " twice " << r.appliedTwice << " corrupted "
                      << r.corrupted << " confirmed twice " << r.confirmedTwice << " unconfirmed " << r.unconfirmed
                      << " wrong address " << r.wrongAddress << "; seed " << seed;
  EXPECT_EQ(r.writes + r.reads + r.atomics, sc.ops);
  for (unsigned i = 0; i < sys->size(); ++i) {
    const NodeStats& st = sys->node(i).stats();
    EXPECT_EQ(st.wrongPort, 0u) << "node " << i;
    EXPECT_EQ(st.unexpectedCpl, 0u) << "node " << i;
    // Each CPU picks its operations at random, and a node's share of the soak depends on
    // its destinations' confirmation points and the faults it meets (tens to hundreds):
    // every CPU gets answers, at least an eighth of its fair share of its node's.
    uint64_t total = 0;
    for (unsigned p = 0; p < cpus; ++p) total += st.cpuCompletions[p];
    for (unsigned p = 0; p < cpus; ++p) {
      EXPECT_GT(st.cpuCompletions[p], 0u) << "node " << i << " CPU " << p;
      EXPECT_GE(st.cpuCompletions[p] * 8 * cpus, total) << "node " << i << " CPU " << p << " of " << total;
    }
  }
}

// Register reads from every CPU at once: each gets its own answer.
TEST_P(MultiCpuTest, RegisterReadsReturnToTheCpuThatRead) {
  std::vector<uint32_t> got(cpus(), 0);
  for (int round = 0; round < 10; ++round)
    for (unsigned p = 0; p < cpus(); ++p)
      sys->node(0).csrRead(regs::CAPS5, [&got, p](uint32_t v, bool ok) { got[p] += ok ? (v >> 8 & 0xFF) : 1000; }, p);
  ASSERT_TRUE(sys->drain());
  for (unsigned p = 0; p < cpus(); ++p) EXPECT_EQ(got[p], 10 * cpus()) << "CPU " << p;
  expectNoStrayCompletion();
}

// CPU 1 of node 0 hangs (stops taking the NI's beats) with a read outstanding. After
// HOST_STALL cycles its port is declared down and the other CPUs' reads, stores and
// register reads go on; brought up again, CPU 1 works.
TEST_P(MultiCpuTest, AHungCpuIsDeclaredDownAndTheOthersGoOn) {
  Node& n0 = sys->node(0);
  n0.csrWrite(regs::HOST_STALL, 2000);
  n0.setCompletionTimeout(50'000);
  ASSERT_TRUE(sys->drain());
  const Bytes content = randomBytes(4096);
  sys->node(1).memory().write(0x4000'0000ull, content);
  n0.setLinkStopped(1, true);
  bool hungDone = false;
  n0.load(kApertureBase, 256, [&](const LoadResult& r) {
    hungDone = true;
    EXPECT_TRUE(r.timedOut) << "the hung CPU cannot have taken its answer";
  }, 1);
  unsigned others = 0, expected = 0;
  for (int round = 0; round < 20; ++round)
    for (unsigned p = 0; p < cpus(); ++p) {
      if (p == 1) continue;
      const uint64_t off = 256 * ((round * cpus() + p) % 16);
      ++expected;
      n0.load(kApertureBase + off, 256, [&, off](const LoadResult& r) {
        EXPECT_TRUE(r.ok);
        EXPECT_EQ(r.data, Bytes(content.begin() + long(off), content.begin() + long(off + 256)));
        ++others;
      }, p);
      n0.store(kApertureBase + 0x10000 + off, Bytes(64, static_cast<uint8_t>(p)), p);
    }
  ASSERT_TRUE(sys->runUntil([&] { return others == expected && hungDone; }, 200'000));
  EXPECT_EQ(sys->readCsr(0, regs::HOST_PORT_DOWN), 1u << 1);
  EXPECT_EQ(sys->readCsr(0, regs::HOST_DROP_CNT), 1u) << "the one TLP for CPU 1: all but the beat it holds";

  // CPU 1 comes back, takes the beat it held (the TLP is closed nullified), and is
  // brought up by software.
  n0.setLinkStopped(1, false);
  ASSERT_TRUE(sys->drain());
  EXPECT_EQ(n0.stats().nullified, 1u);
  EXPECT_EQ(sys->readCsr(0, regs::HOST_DROP_CNT), 1u);
  n0.csrWrite(regs::HOST_PORT_UP, 1u << 1);
  ASSERT_TRUE(sys->drain());
  EXPECT_EQ(sys->readCsr(0, regs::HOST_PORT_DOWN), 0u);
  bool ok = false;
  n0.load(kApertureBase + 0x100, 128, [&](const LoadResult& r) {
    ok = r.ok && r.data == Bytes(content.begin() + 0x100, content.begin() + 0x180);
  }, 1);
  ASSERT_TRUE(sys->drain());
  EXPECT_TRUE(ok) << "CPU 1 works again";
  EXPECT_EQ(n0.stats().wrongPort, 0u);
}

// A read whose Requester ID names bus 7 (no such port): its completion is dropped and
// counted; the CPUs' own reads before and after it are answered.
TEST_P(MultiCpuTest, ACompletionNamingNoPortIsDroppedAndCounted) {
  Node& n0 = sys->node(0);
  unsigned answered = 0;
  n0.load(kApertureBase, 64, [&](const LoadResult& r) { answered += r.ok; }, cpus() - 1);
  n0.sendRawTlp(encodeTlp(makeMRd(0x0700, 0x11, kApertureBase + 0x40, 64)), 0);
  n0.load(kApertureBase + 0x80, 64, [&](const LoadResult& r) { answered += r.ok; }, 0);
  ASSERT_TRUE(sys->drain());
  EXPECT_EQ(answered, 2u);
  EXPECT_EQ(sys->readCsr(0, regs::HOST_PORT_ERR_CNT), 1u);
  EXPECT_EQ(sys->readCsr(0, regs::HOST_PORT_DOWN), 0u);
  expectNoStrayCompletion();
}

// Interrupts return on the port of the request that caused them, with each CPU's own
// interrupt registers (banked: a CPU reads and writes its own copy): a store that
// hits no window, a bad doorbell and a counter brought to zero by a FIFO's local copy
// interrupt only the CPU that sent the store, rang the doorbell or loaded the counter;
// a stray completion (no CPU's request) interrupts every CPU whose mask selects it.
TEST_P(MultiCpuTest, InterruptsGoToTheCpuWhoseRequestCausedThem) {
  Node& n0 = sys->node(0);
  constexpr uint64_t kIrqBase = 0x7000'0000ull, kCopyRegion = 0x5000'0000ull, kRings = 0x4800'0000ull;
  const unsigned last = cpus() - 1;
  sys->setMemId(0, 1, MemRegion{true, kCopyRegion, 0x10000, true, true, true});
  for (unsigned p = 0; p < cpus(); ++p) {
    n0.csrWrite(regs::INTR_ADDR_LO, static_cast<uint32_t>(kIrqBase + 0x40 * p), p);
    n0.csrWrite(regs::INTR_ADDR_HI, 0, p);
    n0.csrWrite(regs::INTR_DATA, 0x100 + p, p);
    const uint32_t unexp = p == last ? 0 : regs::STATUS_CPL_UNEXP_MASK;  // the last CPU masks it
    n0.csrWrite(regs::INTR_MASK,
                regs::STATUS_WIN_MISS_MASK | regs::STATUS_DMA_ERR_MASK | regs::STATUS_CNT_ZERO_MASK | unexp, p);
  }
  ASSERT_TRUE(sys->drain());
  std::vector<uint32_t> seen(cpus(), 0);
  for (unsigned p = 0; p < cpus(); ++p)
    n0.csrRead(regs::INTR_DATA, [&seen, p](uint32_t v, bool ok) { seen[p] = ok ? v : 0xDEAD; }, p);
  ASSERT_TRUE(sys->drain());
  for (unsigned p = 0; p < cpus(); ++p) EXPECT_EQ(seen[p], 0x100 + p) << "CPU " << p << " sees its own INTR_DATA";

  // Interrupt writes as they arrive: (link, address, data).
  std::vector<std::tuple<unsigned, uint64_t, uint32_t>> irqs;
  n0.onMemoryWrite([&](const Tlp& t, unsigned cpu) {
    if (t.addr >= kIrqBase && t.addr < kIrqBase + 0x1000)
      irqs.emplace_back(cpu, t.addr, static_cast<uint32_t>(getLe(t.data.data(), 4)));
  });
  auto expectOnly = [&](const std::vector<unsigned>& to, const std::string& what) {
    std::vector<std::tuple<unsigned, uint64_t, uint32_t>> want;
    for (unsigned p : to) want.emplace_back(p, kIrqBase + 0x40 * p, 0x100 + p);
    std::sort(irqs.begin(), irqs.end());
    EXPECT_EQ(irqs, want) << what;
    irqs.clear();
  };
  for (unsigned q = 0; q < cpus(); ++q) {
    const std::string cpu = " from CPU " + std::to_string(q);
    n0.store(kApertureBase + 0x1000'0000ull, Bytes(8, 1), q);  // no window
    ASSERT_TRUE(sys->drain());
    expectOnly({q}, "window miss" + cpu);
    n0.csrWrite(regs::INJ_TAIL(q), 5, q);  // the ring has no slots: FIFO q stops in error
    ASSERT_TRUE(sys->drain());
    expectOnly({q}, "bad doorbell" + cpu);

    // CPU q sets up FIFO 4 + q and loads counter q; the FIFO's local copy brings the
    // counter to zero.
    auto wr = [&n0, q](uint32_t off, uint32_t v) { n0.csrWrite(off, v, q); };
    const unsigned f = 4 + q;
    InjRing ring(kRings + 0x1000 * f, 16);
    driver::setInjFifo(wr, f, kRings + 0x1000 * f, 16);
    driver::loadCounter(wr, q, 256);
    DmaDescriptor d;
    d.op = static_cast<uint8_t>(DmaOp::Copy);
    d.flags = kDescInjCnt;
    d.injCnt = static_cast<uint8_t>(q);
    d.qid = 1;
    d.dst = 0x400 * q;
    d.len = 256;
    d.src = kRings + 0x8000 + 0x400 * q;
    const Bytes data = randomBytes(256);
    n0.memory().write(d.src, data);
    ASSERT_TRUE(ring.post(d, data, 0, [&n0](uint64_t a, const Bytes& b) { n0.memory().write(a, b); }));
    driver::ringDoorbell(wr, f, ring.tail());
    ASSERT_TRUE(sys->runUntil([&] { return sys->readCsr(0, regs::CNT_ZERO) >> q & 1; }, 50'000));
    ASSERT_TRUE(sys->drain());
    EXPECT_EQ(n0.memory().read(kCopyRegion + d.dst, 256), data);
    expectOnly({q}, "counter at zero" + cpu);
  }
  std::vector<unsigned> all;
  for (unsigned p = 0; p < last; ++p) all.push_back(p);
  n0.sendRawTlp(encodeTlp(makeCplD(0, kNiReqId, 0x35, 0, Bytes(4, 0))), last);  // answers no read of the NI
  ASSERT_TRUE(sys->drain());
  expectOnly(all, "stray completion");
  EXPECT_EQ(sys->readCsr(0, regs::INTR_CNT), 3 * cpus() + last);
  EXPECT_EQ(sys->readCsr(0, regs::DMA_ERR_CNT), cpus());
  expectNoStrayCompletion();
}

class RailsTest : public tb::SystemFixture<unsigned> {
 protected:
  void SetUp() override {
    SystemConfig c;
    c.nodes = 4;
    c.rails = GetParam();
    c.hostStall = 0.1;
    startSystem(c);
  }
  // Packets each plane carried.
  std::vector<uint64_t> planePackets() {
    std::vector<uint64_t> v;
    for (unsigned r = 0; r < sys->rails(); ++r) v.push_back(sys->fabric(r).stats().packets);
    return v;
  }
};

// All-to-all by puts of 128 KiB (striped: a piece per rail) and 4 KiB (whole, over the
// destination's rail): every byte checked at its receiver; every plane carries its share.
TEST_P(RailsTest, StripedAndPerDestinationPutsLandOverEveryPlane) {
  Messaging msg(*sys, Transport::Put, 128 << 10);
  for (uint32_t bytes : {4u << 10, 128u << 10}) {
    const std::vector<uint64_t> before = planePackets();
    const WorkloadRow r = msg.allToAll(bytes);
    EXPECT_TRUE(r.ok) << r.error << "; seed " << seed;
    const std::vector<uint64_t> after = planePackets();
    uint64_t all = 0;
    for (unsigned k = 0; k < sys->rails(); ++k) all += after[k] - before[k];
    for (unsigned k = 0; k < sys->rails(); ++k) {
      EXPECT_GT(after[k] - before[k], 0u) << bytes << " B: plane " << k << " idle";
      if (bytes >= Messaging::kStripeMin)
        EXPECT_NEAR(double(after[k] - before[k]) / double(all), 1.0 / sys->rails(), 0.02) << "plane " << k;
    }
  }
}

// Eager sends and rendezvous (RTS, remote gets) over the rail of their destination
// (node % rails): every DMA packet a plane carries belongs to a message whose receiver
// is on that rail. Sends, the RTS and the data of a remote get go from the sender to
// the receiver (the packet's DLID); a remote get, and the put of its descriptor chain
// into the sender's scratch memory ID, go from the receiver to the sender (its SLID).
TEST_P(RailsTest, SendsAndRendezvousGoOverTheirDestinationsRail) {
  const unsigned rails = sys->rails();
  std::vector<unsigned> checked(rails, 0), wrongRail(rails, 0);
  for (unsigned k = 0; k < rails; ++k) {
    sys->fabric(k).onIngress([&, k](const Bytes& pkt, unsigned) {
      const auto p = decodeFabric(pkt);
      if (!p || p->opcode != kOpTunnelReq || !(p->tehFlags & kTehDma)) return;
      const bool toSender = (p->tehFlags & kTehRget) || p->memid == RuntimeLayout{}.scratchMid;
      const unsigned receiver = toSender ? p->slid - 1u : p->dlid - 1u;
      ++checked[k];
      wrongRail[k] += receiver % rails != k;
    });
  }
  for (Transport t : {Transport::Eager, Transport::Rendezvous}) {
    Messaging msg(*sys, t, 16 << 10);
    const WorkloadRow r = msg.allToAll(16 << 10);
    EXPECT_TRUE(r.ok) << transportName(t) << ": " << r.error << "; seed " << seed;
  }
  for (unsigned k = 0; k < rails; ++k) {
    sys->fabric(k).onIngress(nullptr);
    EXPECT_GT(checked[k], 0u) << "plane " << k << " carried no DMA packet";
    EXPECT_EQ(wrongRail[k], 0u) << "plane " << k << ": DMA packets of messages to another rail's nodes";
  }
}

INSTANTIATE_TEST_SUITE_P(Rails, RailsTest, ::testing::Values(1u, 2u),
                         [](const ::testing::TestParamInfo<unsigned>& i) { return "R" + std::to_string(i.param); });

INSTANTIATE_TEST_SUITE_P(Ports, MultiCpuSoakTest, ::testing::Values(2u, 4u),
                         [](const ::testing::TestParamInfo<unsigned>& i) { return "P" + std::to_string(i.param); });
INSTANTIATE_TEST_SUITE_P(Ports, MultiCpuTest, ::testing::Values(2u, 4u),
                         [](const ::testing::TestParamInfo<unsigned>& i) { return "P" + std::to_string(i.param); });

}  // namespace

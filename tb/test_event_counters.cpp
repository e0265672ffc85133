// SPDX-License-Identifier: Apache-2.0
// Unit test of ni_event_counters alone (Vni_event_counters: five counters at the
// scattered word addresses 0x06, 0xA0, 0x11, 0x2F, 0x03) against a model of plain 32-bit
// counters: events on any counters in any cycle (every counter in every cycle for long
// stretches: nothing may be lost), clears (one or several in a cycle, with or without
// the counter's event), and a read of a random word address every cycle, whose value the
// next cycle must be the model's as of the read's cycle.
#include <gtest/gtest.h>

#include <array>

#include "Vni_event_counters.h"
#include "verilated_fixture.hpp"

using namespace ni;

namespace {

constexpr unsigned kN = 5;
constexpr std::array<uint32_t, kN> kAddrs = {0x06, 0xA0, 0x11, 0x2F, 0x03};  // as CMakeLists.txt builds it

class EventCountersTest : public tb::VerilatedTest {
 protected:
  void SetUp() override {
    VerilatedTest::SetUp();
    dut = std::make_unique<tb::VlClocked<Vni_event_counters>>(ctx(), "evt");
    attach(dut.get());
    reset();
  }
  int indexOf(uint32_t addr) const {
    for (unsigned k = 0; k < kN; ++k)
      if (kAddrs[k] == addr) return static_cast<int>(k);
    return -1;
  }
  // One cycle with these events, clears and read; checks the read's answer the cycle
  // after, and the model follows.
  void step(unsigned inc, unsigned clr, uint32_t rdAddr, const char* what) {
    auto& m = dut->m;
    m.inc_i = inc;
    m.clr_i = clr;
    m.rd_addr_i = rdAddr;
    dut->eval();
    const int k = indexOf(rdAddr);
    ASSERT_EQ(m.rd_hit_o, k >= 0) << what << " addr 0x" << std::hex << rdAddr;
    const uint32_t expect = k >= 0 ? val[k] : 0;
    for (unsigned i = 0; i < kN; ++i) {
      if (clr >> i & 1) val[i] = 0;  // a clear wins over the event of its cycle
      else val[i] += inc >> i & 1;
    }
    cycle();
    dut->eval();
    if (k >= 0) ASSERT_EQ(m.rd_value_o, expect) << what << " counter " << k << " cycle " << cycles() << " seed " << seed();
  }
  uint32_t randomAddr() {
    return rng()() % 3 ? kAddrs[rng()() % kN] : static_cast<uint32_t>(rng()() % 256);
  }

  std::unique_ptr<tb::VlClocked<Vni_event_counters>> dut;
  std::array<uint32_t, kN> val{};
};

TEST_F(EventCountersTest, EveryCounterCountingInEveryCycleLosesNothing) {
  for (int c = 0; c < 3000; ++c) step(0x1F, 0, kAddrs[c % kN], "all counting");
  for (unsigned k = 0; k < kN; ++k) step(0, 0, kAddrs[k], "settled");
  for (unsigned k = 0; k < kN; ++k) EXPECT_EQ(val[k], 3000u);
}

TEST_F(EventCountersTest, RandomEventsClearsAndReadsMatchTheModel) {
  unsigned clears = 0;
  for (int c = 0; c < 40000; ++c) {
    // Stretches of every counter counting, of sparse events, of frequent clears.
    const unsigned phase = (c / 2000) % 3;
    unsigned inc = 0, clr = 0;
    for (unsigned i = 0; i < kN; ++i) {
      if (phase == 0 || rng()() % 100 < 40) inc |= 1u << i;
      if (rng()() % 100 < (phase == 2 ? 20 : 2)) clr |= 1u << i;
    }
    clears += __builtin_popcount(clr);
    step(inc, clr, randomAddr(), "random");
  }
  EXPECT_GT(clears, 1000u);
}

TEST_F(EventCountersTest, AResetClearsEveryCounter) {
  for (int c = 0; c < 200; ++c) step(0x1F, 0, kAddrs[c % kN], "before the reset");
  reset();
  val = {};
  for (unsigned k = 0; k < kN; ++k) step(0, 0, kAddrs[k], "after the reset");
  for (int c = 0; c < 100; ++c) step(1u << (c % kN), 0, randomAddr(), "counting again");
}

}  // namespace

// SPDX-License-Identifier: Apache-2.0
// Unit test of ni_event_counters alone (Vni_event_counters: five counters at the
// scattered addresses 0x06, 0xA0, 0x11, 0x2F, 0x03) against a model of plain 32-bit
// counters: events on any counters in any cycle (every counter in every cycle for long
// stretches: nothing may be lost), and a request every cycle: a write that clears the
// counter it names (with or without that counter's event), or a read of a random
// address, whose answer two cycles later must be the model's as of the end of the
// read's cycle (0 for an address that names no counter).
#include <gtest/gtest.h>

#include <array>
#include <deque>

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
  // One cycle with these events and a request (a write clears, else a read); checks the
  // answer of the read two cycles before, and the model follows.
  void step(unsigned inc, bool write, uint32_t addr, const char* what) {
    auto& m = dut->m;
    m.inc_i = inc;
    m.wr_i = write;
    m.addr_i = addr;
    dut->eval();
    if (pending.size() == 2) {
      const Answer a = pending.front();
      pending.pop_front();
      if (a.read) {
        ASSERT_EQ(m.rd_value_o, a.value) << what << ": a read of counter " << a.counter << " two cycles before, cycle "
                                         << cycles() << " seed " << seed();
      }
    }
    const int k = indexOf(addr);
    for (unsigned i = 0; i < kN; ++i) {
      if (write && static_cast<int>(i) == k) val[i] = 0;  // a clear wins over the event of its cycle
      else val[i] += inc >> i & 1;
    }
    // A write has no answer (the register block takes none then).
    pending.push_back({!write, k, k >= 0 ? val[k] : 0});
    cycle();
  }
  uint32_t randomAddr() {
    return rng()() % 3 ? kAddrs[rng()() % kN] : static_cast<uint32_t>(rng()() % 256);
  }
  // Idle cycles with reads of every counter: every answer checked.
  void settle(const char* what) {
    for (unsigned k = 0; k < kN + 2; ++k) step(0, false, kAddrs[k % kN], what);
  }

  std::unique_ptr<tb::VlClocked<Vni_event_counters>> dut;
  std::array<uint32_t, kN> val{};
  struct Answer {
    bool read;       // the request was a read
    int counter;     // the counter it named (-1: none)
    uint32_t value;  // the answer it must get
  };
  std::deque<Answer> pending;  // the last two requests' answers
};

TEST_F(EventCountersTest, EveryCounterCountingInEveryCycleLosesNothing) {
  for (int c = 0; c < 3000; ++c) step(0x1F, false, kAddrs[c % kN], "all counting");
  settle("settled");
  for (unsigned k = 0; k < kN; ++k) EXPECT_EQ(val[k], 3000u);
}

TEST_F(EventCountersTest, RandomEventsClearsAndReadsMatchTheModel) {
  unsigned clears = 0, clearsWithEvent = 0;
  for (int c = 0; c < 40000; ++c) {
    // Stretches of every counter counting, of sparse events, of frequent clears.
    const unsigned phase = (c / 2000) % 3;
    unsigned inc = 0;
    for (unsigned i = 0; i < kN; ++i) {
      if (phase == 0 || rng()() % 100 < 40) inc |= 1u << i;
    }
    const bool write = rng()() % 100 < (phase == 2 ? 40 : 3);
    const uint32_t addr = randomAddr();
    const int k = indexOf(addr);
    clears += write && k >= 0;
    clearsWithEvent += write && k >= 0 && (inc >> k & 1);
    step(inc, write, addr, "random");
    if (HasFatalFailure()) return;
  }
  settle("random, settled");
  EXPECT_GT(clears, 1000u);
  EXPECT_GT(clearsWithEvent, 500u);
}

TEST_F(EventCountersTest, AResetClearsEveryCounter) {
  for (int c = 0; c < 200; ++c) step(0x1F, false, kAddrs[c % kN], "before the reset");
  reset();
  val = {};
  pending.clear();
  settle("after the reset");
  for (int c = 0; c < 100; ++c) step(1u << (c % kN), false, randomAddr(), "counting again");
  settle("counting again, settled");
}

}  // namespace

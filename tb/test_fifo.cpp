// SPDX-License-Identifier: Apache-2.0
// Unit test of ni_fifo alone (Width 16; Depth 5, a depth that is not a power of
// two, read asynchronously, and Depth 17, read through the registered read port of
// a block RAM) against std::deque, with random pushes and pops; both the plain FIFO
// and the fall-through one (an empty FIFO shows the word being written), and one that
// writes its free slot in every cycle it is not full (FreeWrite: the data input changes
// every cycle, pushed or not). ni_skid, the skid register, behaves as a FIFO of two
// without fall-through whose input's ready is a register.
#include <gtest/gtest.h>

#include <deque>

#include "Vni_fifo.h"
#include "Vni_fifo_free.h"
#include "Vni_fifo_ft.h"
#include "Vni_fifo_ram.h"
#include "Vni_fifo_ram_ft.h"
#include "Vni_skid.h"
#include "verilated_fixture.hpp"

using namespace ni;

namespace {

class FifoTest : public tb::VerilatedTest {
 protected:
  template <class M>
  void runAgainstDeque(bool fallThrough, size_t depth, bool readyRegistered = false) {
    tb::VlClocked<M> dut(ctx(), "fifo");
    attach(&dut);
    reset();
    std::deque<uint16_t> model;
    unsigned pops = 0, fullSeen = 0, passed = 0;
    for (int i = 0; i < 20000; ++i) {
      const bool push = rng()() % 100 < (i < 10000 ? 60 : 40);
      const bool pop = rng()() % 100 < 50;
      const uint16_t v = static_cast<uint16_t>(rng()());
      dut.m.wdata_i = v;
      dut.m.wvalid_i = push;
      dut.m.rready_i = pop;
      dut.eval();
      if (readyRegistered) {  // the input's ready does not follow the output's
        dut.m.rready_i = !pop;
        dut.eval();
        const bool other = dut.m.wready_o;
        dut.m.rready_i = pop;
        dut.eval();
        ASSERT_EQ(other, bool(dut.m.wready_o)) << "wready_o follows rready_i, cycle " << i;
      }
      const bool pass = fallThrough && model.empty() && push;  // the word shows at once
      ASSERT_EQ(bool(dut.m.rvalid_o), !model.empty() || pass) << "cycle " << i << " seed " << seed();
      ASSERT_EQ(bool(dut.m.wready_o), model.size() < depth) << "cycle " << i;
      if (!model.empty()) ASSERT_EQ(dut.m.rdata_o, model.front()) << "cycle " << i;
      if (pass) ASSERT_EQ(dut.m.rdata_o, v) << "cycle " << i;
      const bool didPop = pop && (!model.empty() || pass);
      const bool didPush = push && model.size() < depth;
      fullSeen += model.size() == depth;
      passed += pass && pop;
      if (didPush) model.push_back(v);
      cycle();
      if (didPop) { model.pop_front(); ++pops; }
    }
    EXPECT_GT(fullSeen, 100u) << "the test must reach full";
    EXPECT_GT(pops, 5000u);
    if (fallThrough) EXPECT_GT(passed, 500u) << "the fall-through path must be used";
  }
};

TEST_F(FifoTest, MatchesDequeUnderRandomTraffic) { runAgainstDeque<Vni_fifo>(false, 5); }
TEST_F(FifoTest, FreeSlotWrittenEveryCycleMatchesDequeUnderRandomTraffic) {
  runAgainstDeque<Vni_fifo_free>(false, 5);
}
TEST_F(FifoTest, FallThroughMatchesDequeUnderRandomTraffic) { runAgainstDeque<Vni_fifo_ft>(true, 5); }
TEST_F(FifoTest, RamReadMatchesDequeUnderRandomTraffic) { runAgainstDeque<Vni_fifo_ram>(false, 17); }
TEST_F(FifoTest, RamReadFallThroughMatchesDequeUnderRandomTraffic) { runAgainstDeque<Vni_fifo_ram_ft>(true, 17); }
TEST_F(FifoTest, SkidRegisterMatchesDequeUnderRandomTraffic) { runAgainstDeque<Vni_skid>(false, 2, true); }

}  // namespace

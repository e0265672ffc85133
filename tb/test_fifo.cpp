// SPDX-License-Identifier: Apache-2.0
// Unit test of ni_fifo alone (Width 16, Depth 5: a depth that is not a power of
// two) against std::deque, with random pushes and pops.
#include <gtest/gtest.h>

#include <deque>

#include "Vni_fifo.h"
#include "verilated_fixture.hpp"

using namespace ni;

namespace {

using FifoDut = tb::VlClocked<Vni_fifo>;

class FifoTest : public tb::VerilatedTest {};

TEST_F(FifoTest, MatchesDequeUnderRandomTraffic) {
  FifoDut dut(ctx(), "fifo");
  attach(&dut);
  reset();
  std::deque<uint16_t> model;
  unsigned pushes = 0, pops = 0, fullSeen = 0;
  for (int i = 0; i < 20000; ++i) {
    const bool push = rng()() % 100 < (i < 10000 ? 60 : 40);
    const bool pop = rng()() % 100 < 50;
    const uint16_t v = static_cast<uint16_t>(rng()());
    dut.m.wdata_i = v;
    dut.m.wvalid_i = push;
    dut.m.rready_i = pop;
    dut.eval();
    ASSERT_EQ(bool(dut.m.rvalid_o), !model.empty()) << "cycle " << i << " seed " << seed();
    ASSERT_EQ(bool(dut.m.wready_o), model.size() < 5) << "cycle " << i;
    if (!model.empty()) ASSERT_EQ(dut.m.rdata_o, model.front()) << "cycle " << i;
    const bool didPop = pop && !model.empty();
    const bool didPush = push && model.size() < 5;
    fullSeen += model.size() == 5;
    cycle();
    if (didPop) { model.pop_front(); ++pops; }
    if (didPush) { model.push_back(v); ++pushes; }
  }
  EXPECT_GT(fullSeen, 100u) << "the test must reach full";
  EXPECT_GT(pops, 5000u);
}

}  // namespace

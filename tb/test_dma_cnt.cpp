// SPDX-License-Identifier: Apache-2.0
// Unit test of ni_dma_cnt alone (32 counters) against a model of the rules: random
// loads (some of 0), injection and reception decrements of 1 to 4096 bytes, often
// both in one cycle and for the same counter, counters driven past 0. Each cycle:
// every value, every hit-zero bit and the hit event match the model.
#include <gtest/gtest.h>

#include <array>

#include "Vni_dma_cnt.h"
#include "verilated_ports.hpp"
#include "verilated_fixture.hpp"

using namespace ni;
using ni::getField;
using ni::setField;

namespace {

constexpr unsigned kCnt = 32;

class DmaCntTest : public tb::VerilatedTest {};

TEST_F(DmaCntTest, CountersFollowLoadsAndDecrements) {
  tb::VlClocked<Vni_dma_cnt> dut(ctx(), "cnt");
  attach(&dut);
  reset();
  auto& m = dut.m;
  auto& r = rng();
  std::array<uint32_t, kCnt> val{};
  std::array<bool, kCnt> zero{};
  unsigned hits = 0, both = 0, loads = 0;
  for (int c = 0; c < 50000; ++c) {
    // A few counters in play at a time, so that they reach zero often.
    auto pick = [&] { return static_cast<unsigned>(r() % 4 ? r() % 4 : r() % kCnt); };
    m.load_i = 0;
    const bool load = r() % 100 < 8;
    const unsigned li = pick();
    const uint32_t lv = r() % 10 == 0 ? 0 : static_cast<uint32_t>(r() % 20000);
    if (load) {
      m.load_i = 1u << li;
      m.load_value_i = lv;
    }
    const bool inj = r() % 100 < 40, rcv = r() % 100 < 40, loc = r() % 100 < 30;
    const unsigned ii = pick(), ri = r() % 3 == 0 ? ii : pick(), oi = r() % 3 == 0 ? ri : pick();
    const unsigned ib = 1 + static_cast<unsigned>(r() % 4096), rb = 1 + static_cast<unsigned>(r() % 4096),
                   ob = 1 + static_cast<unsigned>(r() % 4096);
    m.inj_valid_i = inj;
    m.inj_id_i = ii;
    m.inj_bytes_i = ib;
    m.rcv_valid_i = rcv;
    m.rcv_id_i = ri;
    m.rcv_bytes_i = rb;
    m.loc_valid_i = loc;
    m.loc_id_i = oi;
    m.loc_bytes_i = ob;
    dut.eval();
    // The outputs are the registers: this cycle's load and decrements show from the next.
    ASSERT_EQ(getField(m.value_o, 32 * li, 32), val[li]) << "cycle " << c << " seed " << seed();
    ASSERT_EQ(getField(m.zero_o, li, 1), zero[li]) << "cycle " << c << " seed " << seed();
    // Model: the decrements of this cycle, then the load (which wins).
    std::array<uint64_t, kCnt> dec{};
    if (inj) dec[ii] += ib;
    if (rcv) dec[ri] += rb;
    if (loc) dec[oi] += ob;
    both += (inj && rcv && ii == ri) + (rcv && loc && ri == oi);
    bool hit = false;
    for (unsigned i = 0; i < kCnt; ++i) {
      if (dec[i] && val[i]) {
        val[i] = val[i] > dec[i] ? static_cast<uint32_t>(val[i] - dec[i]) : 0;
        if (val[i] == 0 && !(load && li == i)) {  // a load in the same cycle wins
          zero[i] = true;
          hit = true;
        }
      }
    }
    ASSERT_EQ(bool(m.ev_zero_o), hit) << "cycle " << c << " seed " << seed();
    hits += hit;
    if (load) {
      val[li] = lv;
      zero[li] = false;
      ++loads;
    }
    cycle();
    for (unsigned i = 0; i < kCnt; ++i) {
      ASSERT_EQ(getField(m.value_o, 32 * i, 32), val[i]) << "counter " << i << " cycle " << c << " seed " << seed();
      ASSERT_EQ(getField(m.zero_o, i, 1), zero[i]) << "hit-zero " << i << " cycle " << c << " seed " << seed();
    }
  }
  EXPECT_GT(hits, 500u);
  EXPECT_GT(both, 500u) << "both decrements of one counter in one cycle";
  EXPECT_GT(loads, 2000u);
}

}  // namespace

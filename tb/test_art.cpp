// SPDX-License-Identifier: Apache-2.0
// Unit test of ni_art (the ART lookup) alone, against the reference model.
#include <gtest/gtest.h>

#include "Vni_art.h"
#include "ref_ni.hpp"
#include "verilated_ports.hpp"
#include "verilated_fixture.hpp"

using namespace ni;

namespace {

using ni::setField;

class ArtTest : public tb::VerilatedTest {
 protected:
  void SetUp() override {
    VerilatedTest::SetUp();
    dut = std::make_unique<Vni_art>(ctx(), "art");
  }
  void load(const RefNi& ref) {
    dut->valid_i = dut->rx_xlate_i = dut->perm_r_i = dut->perm_w_i = dut->perm_a_i = 0;
    for (unsigned i = 0; i < kNumArt; ++i) {
      const Window& w = ref.windows[i];
      if (ref.windowValid[i]) dut->valid_i |= 1u << i;
      if (w.rxXlate) dut->rx_xlate_i |= 1u << i;
      if (w.read) dut->perm_r_i |= 1u << i;
      if (w.write) dut->perm_w_i |= 1u << i;
      if (w.atomic) dut->perm_a_i |= 1u << i;
      setField(dut->base_i, 52 * i, 52, w.base >> 12);
      setField(dut->limit_i, 52 * i, 52, (w.base + w.size) >> 12);
      setField(dut->xlate_i, 52 * i, 52, w.remote >> 12);
      setField(dut->node_i, 16 * i, 16, lidOf(w.dstNode));
      setField(dut->memid_i, 16 * i, 16, w.memid);
    }
  }
  std::unique_ptr<Vni_art> dut;
};

TEST_F(ArtTest, MatchesReferenceOnRandomTables) {
  for (int table = 0; table < 200; ++table) {
    RefNi ref;
    for (unsigned i = 0; i < kNumArt; ++i) {
      if (rng()() % 4 == 0) continue;
      Window w;
      w.base = kApertureBase + ((rng()() % 64) << 12);
      w.size = (1 + rng()() % 8) << 12;
      w.dstNode = static_cast<unsigned>(rng()() % 8);
      w.rxXlate = rng()() & 1;
      w.remote = (rng()() & 0xFFFFFFFFFull) << 12;
      w.memid = static_cast<uint16_t>(rng()() % 16);
      w.read = rng()() & 1;
      w.write = rng()() & 1;
      w.atomic = rng()() & 1;
      ref.setWindow(i, w);
    }
    load(ref);
    for (int k = 0; k < 100; ++k) {
      const uint64_t addr = kApertureBase + (rng()() % (80 << 12)) / 4 * 4;
      dut->addr_i = addr;
      dut->eval();
      const auto rw = ref.route(addr, 4, true);
      const auto rr = ref.route(addr, 4, false);
      const bool hit = rw.err != RefNi::SendErr::Miss;
      ASSERT_EQ(bool(dut->hit_o), hit) << std::hex << addr << " seed " << seed();
      if (!hit) continue;
      EXPECT_EQ(dut->index_o, rw.window);
      EXPECT_EQ(dut->node_o, lidOf(rw.dstNode));
      EXPECT_EQ(dut->memid_o, rw.memid);
      EXPECT_EQ(bool(dut->rx_xlate_o), rw.rxXlate);
      EXPECT_EQ(dut->out_addr_o, rw.tlpAddr) << std::hex << addr;
      EXPECT_EQ(bool(dut->perm_w_o), rw.err == RefNi::SendErr::Ok);
      EXPECT_EQ(bool(dut->perm_r_o), rr.err == RefNi::SendErr::Ok);
    }
  }
}

TEST_F(ArtTest, LowestIndexWinsOnOverlap) {
  RefNi ref;
  Window a;
  a.base = kApertureBase;
  a.size = 0x4000;
  a.dstNode = 1;
  Window b = a;
  b.dstNode = 2;
  ref.setWindow(5, a);
  ref.setWindow(3, b);
  load(ref);
  dut->addr_i = kApertureBase + 0x1000;
  dut->eval();
  EXPECT_EQ(dut->index_o, 3u);
  EXPECT_EQ(dut->node_o, lidOf(2));
}

TEST_F(ArtTest, LimitIsExclusiveAndBaseInclusive) {
  RefNi ref;
  Window a;
  a.base = kApertureBase + 0x3000;
  a.size = 0x2000;
  ref.setWindow(0, a);
  load(ref);
  const std::pair<uint64_t, bool> probes[] = {{a.base - 4, false}, {a.base, true}, {a.base + 0x1FFC, true},
                                              {a.base + 0x2000, false}};
  for (auto [addr, hit] : probes) {
    dut->addr_i = addr;
    dut->eval();
    EXPECT_EQ(bool(dut->hit_o), hit) << std::hex << addr;
  }
}

}  // namespace

// SPDX-License-Identifier: Apache-2.0
// Unit test of ni_art (the ART lookup pipeline) alone, against the reference model:
// tables written as the register block commits them (registers, then the ART_CTRL
// pulse), lookups streamed one per cycle with random gaps, answers checked in order.
#include <gtest/gtest.h>

#include <deque>

#include "Vni_art.h"
#include "ref_ni.hpp"
#include "verilated_fixture.hpp"
#include "verilated_ports.hpp"

using namespace ni;

namespace {

using ni::getField;
using ni::setField;

constexpr uint64_t kLatency = 1;  // cycles from a lookup to its answer (rtl/tunnel/ni_art.sv)
constexpr uint64_t kUpdate = 2;   // cycles from an ART_CTRL write to its entry in the table

class ArtTest : public tb::VerilatedTest {
 protected:
  void SetUp() override {
    VerilatedTest::SetUp();
    dut = std::make_unique<tb::VlClocked<Vni_art>>(ctx(), "art");
    attach(dut.get());
    reset();
  }
  // ART_CTRL[i] written: in that cycle the pulse and window i's staged values as
  // ni_csr_regs hands them over; the flags (ART_CTRL's registers) change at its end.
  // The update then runs to its end (busy, then done once, kUpdate cycles after the
  // write), and the window's destination is in win_node_o.
  void commit(unsigned i, const Window& w, bool valid) {
    auto& m = dut->m;
    m.wr_i = 1u << i;
    m.wbase_i = w.base >> 12;
    m.wlimit_i = (w.base + w.size) >> 12;
    m.wxlate_i = w.remote >> 12;
    m.wnode_i = lidOf(w.dstNode);
    m.wmemid_i = w.memid;
    cycle();
    m.wr_i = 0;
    m.wbase_i = m.wlimit_i = m.wxlate_i = 0xDEADBEEFull;  // taken in the write's cycle only
    m.wnode_i = m.wmemid_i = 0xBAD;
    auto bit = [i](auto& v, bool on) { v = on ? (v | (1u << i)) : (v & ~(1u << i)); };
    bit(m.valid_i, valid);
    bit(m.rx_xlate_i, w.rxXlate);
    bit(m.perm_r_i, w.read);
    bit(m.perm_w_i, w.write);
    bit(m.perm_a_i, w.atomic);
    unsigned done = 0;
    for (uint64_t k = 1; k < kUpdate + 3; ++k) {
      dut->eval();
      EXPECT_EQ(bool(m.busy_o), k < kUpdate) << "cycle " << k << " after the write";
      if (m.upd_done_o) {
        ++done;
        EXPECT_EQ(k, kUpdate) << "upd_done";
      }
      cycle();
    }
    EXPECT_EQ(done, 1u);
    EXPECT_EQ(getField(m.win_node_o, 16 * i, 16), lidOf(w.dstNode)) << "window " << i;
  }
  void load(const RefNi& ref) {
    for (unsigned i = 0; i < kNumArt; ++i) commit(i, ref.windows[i], ref.windowValid[i]);
  }
  // The tunneled address as ni_host_rx forms it from the ART's answer: the page plus
  // the answer's delta (52 bits), the offset unchanged.
  static uint64_t outAddr(uint64_t addr, uint64_t delta) {
    constexpr uint64_t kPageMask = (uint64_t(1) << 52) - 1;
    return ((((addr >> 12) + delta) & kPageMask) << 12) | (addr & 0xFFF);
  }
  // Looks the addresses up, one per cycle unless gaps (a random idle cycle with that
  // probability); returns the answers in order.
  struct Answer {
    bool hit;
    unsigned index, node, memid;
    bool rxXlate, r, w, a;
    uint64_t out, back;
  };
  std::vector<Answer> lookUp(const std::vector<uint64_t>& addrs, double gaps = 0) {
    auto& m = dut->m;
    std::vector<Answer> got;
    std::deque<uint64_t> sentAt;
    size_t next = 0;
    for (uint64_t c = 0; got.size() < addrs.size() && c < 100000; ++c) {
      const bool go = next < addrs.size() && std::uniform_real_distribution<>(0, 1)(rng()) >= gaps;
      m.look_valid_i = go;
      m.addr_i = go ? addrs[next] : 0xDEAD'BEEF'0000ull;
      dut->eval();
      if (m.res_valid_o) {
        EXPECT_FALSE(sentAt.empty());
        if (!sentAt.empty()) {
          EXPECT_EQ(c - sentAt.front(), kLatency) << "answer latency";
          sentAt.pop_front();
        }
        // Answers come in order: this one is for addrs[got.size()].
        got.push_back({bool(m.hit_o), m.index_o, m.node_o, m.memid_o, bool(m.rx_xlate_o), bool(m.perm_r_o),
                       bool(m.perm_w_o), bool(m.perm_a_o), outAddr(addrs[got.size()], m.delta_o), m.back_page_o});
      }
      if (go) {
        sentAt.push_back(c);
        ++next;
      }
      cycle();
    }
    m.look_valid_i = 0;
    return got;
  }
  void expectLike(const RefNi& ref, uint64_t addr, const Answer& a) {
    const auto rw = ref.route(addr, 4, true);
    const auto rr = ref.route(addr, 4, false);
    const bool hit = rw.err != RefNi::SendErr::Miss;
    ASSERT_EQ(a.hit, hit) << std::hex << addr << " seed " << std::dec << seed();
    if (!hit) return;
    EXPECT_EQ(a.index, rw.window);
    EXPECT_EQ(a.node, lidOf(rw.dstNode));
    EXPECT_EQ(a.memid, rw.memid);
    EXPECT_EQ(a.rxXlate, rw.rxXlate);
    EXPECT_EQ(a.out, rw.tlpAddr) << std::hex << addr;
    EXPECT_EQ(a.back, pagesBack(addr, rw.tlpAddr)) << std::hex << addr;
    EXPECT_EQ(a.w, rw.err == RefNi::SendErr::Ok);
    EXPECT_EQ(a.r, rr.err == RefNi::SendErr::Ok);
  }
  static Window randomWindow(std::mt19937_64& r) {
    Window w;
    w.base = kApertureBase + ((r() % 64) << 12);
    w.size = (1 + r() % 8) << 12;
    w.dstNode = static_cast<unsigned>(r() % 8);
    w.rxXlate = r() & 1;
    w.remote = (r() & 0xFFFFFFFFFull) << 12;
    w.memid = static_cast<uint16_t>(r() % 16);
    w.read = r() & 1;
    w.write = r() & 1;
    w.atomic = r() & 1;
    return w;
  }
  std::unique_ptr<tb::VlClocked<Vni_art>> dut;
};

TEST_F(ArtTest, MatchesReferenceOnRandomTables) {
  for (int table = 0; table < 60 && !HasFailure(); ++table) {
    RefNi ref;
    for (unsigned i = 0; i < kNumArt; ++i)
      if (rng()() % 4 != 0) ref.setWindow(i, randomWindow(rng()));
    load(ref);
    std::vector<uint64_t> addrs;
    for (int k = 0; k < 100; ++k) addrs.push_back(kApertureBase + (rng()() % (80 << 12)) / 4 * 4);
    const auto got = lookUp(addrs, table % 2 ? 0.3 : 0.0);
    ASSERT_EQ(got.size(), addrs.size());
    for (size_t k = 0; k < addrs.size(); ++k) expectLike(ref, addrs[k], got[k]);
  }
}

// A lookup started after a window's update sees all of the new window; the update
// changes nothing of the other windows.
TEST_F(ArtTest, UpdatedWindowTakesEffectWhole) {
  RefNi ref;
  for (unsigned i = 0; i < kNumArt; ++i) ref.setWindow(i, randomWindow(rng()));
  load(ref);
  std::vector<uint64_t> addrs;
  for (int k = 0; k < 200; ++k) addrs.push_back(kApertureBase + (rng()() % (80 << 12)) / 4 * 4);
  for (int round = 0; round < 20 && !HasFailure(); ++round) {
    const unsigned i = static_cast<unsigned>(rng()() % kNumArt);
    const bool valid = rng()() % 4 != 0;
    Window w = randomWindow(rng());
    if (valid) ref.setWindow(i, w);
    else ref.windowValid[i] = false;
    commit(i, valid ? w : ref.windows[i], valid);
    const auto got = lookUp(addrs);
    ASSERT_EQ(got.size(), addrs.size());
    for (size_t k = 0; k < addrs.size(); ++k) expectLike(ref, addrs[k], got[k]);
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
  const auto got = lookUp({kApertureBase + 0x1000});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].index, 3u);
  EXPECT_EQ(got[0].node, lidOf(2));
}

TEST_F(ArtTest, LimitIsExclusiveAndBaseInclusive) {
  RefNi ref;
  Window a;
  a.base = kApertureBase + 0x3000;
  a.size = 0x2000;
  ref.setWindow(0, a);
  load(ref);
  const std::vector<uint64_t> probes = {a.base - 4, a.base, a.base + 0x1FFC, a.base + 0x2000};
  const bool hit[] = {false, true, true, false};
  const auto got = lookUp(probes);
  ASSERT_EQ(got.size(), probes.size());
  for (size_t k = 0; k < probes.size(); ++k) EXPECT_EQ(got[k].hit, hit[k]) << std::hex << probes[k];
}

}  // namespace

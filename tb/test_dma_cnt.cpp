// SPDX-License-Identifier: Apache-2.0
// Unit tests of ni_dma_cnt alone (32 counters in RAM, one update pipeline) against a
// model of the rules, cycle by cycle: the decrements of a cycle (all three sources
// may name one counter) are applied first, stopping at 0 (the one that reaches 0 is
// a hit), then a load of that cycle. The block finds a counter's new value a few
// cycles after its decrements, so each cycle checks that what it shows (the answer to
// the last cycle's read of a random counter, every hit-zero bit) is what the model held
// in one of the kLag cycles before (the read's: before its request), and never from
// before the counter's last load; after a quiet spell
// every value, every hit-zero bit and the number of hit events match exactly.
#include <gtest/gtest.h>

#include <array>
#include <deque>

#include "Vni_dma_cnt.h"
#include "verilated_fixture.hpp"

using namespace ni;

namespace {

constexpr unsigned kCnt = 32;
// Cycles a shown value may trail the model: the round-robin visit (kCnt, longer
// while loads take the pipeline's first stage) and the four stages.
constexpr uint64_t kLag = 2 * kCnt + 8;

struct State {
  uint32_t val = 0;
  bool zero = false;
};

class DmaCntTest : public tb::VerilatedTest {
 protected:
  struct Step {
    bool load = false;
    unsigned li = 0;
    uint32_t lv = 0;
    bool valid[3] = {};
    unsigned id[3] = {};
    unsigned bytes[3] = {};
  };

  // A step with a load of counter idx, and one with a decrement by source src (0:
  // injection, 1: reception, 2: local copy), added to step s.
  static Step withLoad(unsigned idx, uint32_t value, Step s) {
    s.load = true;
    s.li = idx;
    s.lv = value;
    return s;
  }
  static Step withLoad(unsigned idx, uint32_t value) { return withLoad(idx, value, Step()); }
  static Step withDec(int src, unsigned idx, unsigned bytes, Step s) {
    s.valid[src] = true;
    s.id[src] = idx;
    s.bytes[src] = bytes;
    return s;
  }
  static Step withDec(int src, unsigned idx, unsigned bytes) { return withDec(src, idx, bytes, Step()); }

  void start() {
    dut_ = std::make_unique<tb::VlClocked<Vni_dma_cnt>>(ctx(), "cnt");
    attach(dut_.get());
    reset();
    for (auto& h : hist_) h.assign(1, {0, State{}});
    for (auto& h : zhist_) h.assign(1, {0, false});
  }

  // Drives one cycle, checks what the block shows before its edge, then steps the model.
  void step(const Step& s, unsigned rd) {
    auto& m = dut_->m;
    m.load_i = s.load;
    m.load_idx_i = s.li;
    m.load_value_i = s.lv;
    m.inj_valid_i = s.valid[0];
    m.inj_id_i = s.id[0];
    m.inj_bytes_i = s.bytes[0];
    m.rcv_valid_i = s.valid[1];
    m.rcv_id_i = s.id[1];
    m.rcv_bytes_i = s.bytes[1];
    m.loc_valid_i = s.valid[2];
    m.loc_id_i = s.id[2];
    m.loc_bytes_i = s.bytes[2];
    m.rd_idx_i = rd;
    dut_->eval();
    const uint64_t now = cycles();
    // The answer to the last cycle's read, against the states its counter could show then.
    if (pending_) {
      bool seen = false;
      for (const auto& e : pendingHist_) seen |= e.second.val == m.rd_value_o;
      ASSERT_TRUE(seen) << "counter " << pendingIdx_ << " reads " << m.rd_value_o << " (model "
                        << pendingHist_.back().second.val << ") requested in cycle " << now - 1 << " seed " << seed();
    }
    pending_ = true;
    pendingIdx_ = rd;
    pendingHist_ = hist_[rd];
    for (unsigned i = 0; i < kCnt; ++i) {
      const bool z = (m.zero_o >> i) & 1u;
      bool seen = false;
      for (const auto& e : zhist_[i]) seen |= e.second == z;
      ASSERT_TRUE(seen) << "hit-zero " << i << " is " << z << " cycle " << now << " seed " << seed();
    }
    events_ += m.ev_zero_o;
    // Model: this cycle's decrements, then its load.
    std::array<uint64_t, kCnt> dec{};
    for (int k = 0; k < 3; ++k) {
      if (s.valid[k]) dec[s.id[k]] += s.bytes[k];
    }
    for (unsigned i = 0; i < kCnt; ++i) {
      State st = hist_[i].back().second;
      bool changed = false;
      if (dec[i] && st.val) {
        st.val = st.val > dec[i] ? static_cast<uint32_t>(st.val - dec[i]) : 0;
        if (st.val == 0) {
          st.zero = true;
          ++hits_;
        }
        changed = true;
      }
      if (s.load && s.li == i) {
        st = State{s.lv, false};
        hist_[i].clear();  // nothing from before a load may show
        zhist_[i].clear();
        changed = true;
      }
      if (changed || hist_[i].empty()) hist_[i].push_back({now + 1, st});
      if (zhist_[i].empty() || st.zero != zhist_[i].back().second) zhist_[i].push_back({now + 1, st.zero});
      // Keep what the window still needs: the newest state older than it, and later ones.
      while (hist_[i].size() > 1 && hist_[i][1].first + kLag <= now + 1) hist_[i].pop_front();
      while (zhist_[i].size() > 1 && zhist_[i][1].first + kLag <= now + 1) zhist_[i].pop_front();
    }
    cycle();
  }

  // Quiet cycles, then every counter, hit-zero bit and the hit count exactly.
  void settleAndCompare() {
    Step none;
    for (uint64_t c = 0; c < kLag; ++c) step(none, static_cast<unsigned>(c % kCnt));
    auto& m = dut_->m;
    pending_ = false;
    for (unsigned i = 0; i < kCnt; ++i) {
      m.rd_idx_i = i;
      cycle();  // the answer comes a cycle after the request
      EXPECT_EQ(m.rd_value_o, hist_[i].back().second.val) << "counter " << i << " seed " << seed();
      EXPECT_EQ(bool((m.zero_o >> i) & 1u), hist_[i].back().second.zero) << "hit-zero " << i << " seed " << seed();
    }
    EXPECT_EQ(events_, hits_) << "hit events, seed " << seed();
  }

  std::unique_ptr<tb::VlClocked<Vni_dma_cnt>> dut_;
  // Per counter, the states from each cycle on (oldest first) since its last load (a
  // read never shows an older value, nor a hit-zero bit from before it): the values,
  // and the hit-zero bits.
  std::array<std::deque<std::pair<uint64_t, State>>, kCnt> hist_;
  std::array<std::deque<std::pair<uint64_t, bool>>, kCnt> zhist_;
  uint64_t hits_ = 0, events_ = 0;
  // The read requested in the last step (answered in this one): its counter, and the
  // states that counter could show then.
  bool pending_ = false;
  unsigned pendingIdx_ = 0;
  std::deque<std::pair<uint64_t, State>> pendingHist_;
};

// Random loads (some of 0) and decrements of 1 to 4096 bytes, a few counters in play
// at a time so that they reach zero often, two or three sources often on one counter.
TEST_F(DmaCntTest, CountersFollowLoadsAndDecrements) {
  start();
  auto& r = rng();
  auto pick = [&] { return static_cast<unsigned>(r() % 4 ? r() % 4 : r() % kCnt); };
  unsigned both = 0, loads = 0;
  for (int c = 0; c < 50000; ++c) {
    Step s;
    s.load = r() % 100 < 8;
    s.li = pick();
    s.lv = r() % 10 == 0 ? 0 : static_cast<uint32_t>(r() % 20000);
    const unsigned pct[3] = {40, 40, 30};
    for (int k = 0; k < 3; ++k) {
      s.valid[k] = r() % 100 < pct[k];
      s.id[k] = (k > 0 && r() % 3 == 0) ? s.id[k - 1] : pick();
      s.bytes[k] = 1 + static_cast<unsigned>(r() % 4096);
    }
    both += (s.valid[0] && s.valid[1] && s.id[0] == s.id[1]) + (s.valid[1] && s.valid[2] && s.id[1] == s.id[2]);
    loads += s.load;
    step(s, r() % 2 ? s.li : pick());
    if (HasFatalFailure()) return;
  }
  settleAndCompare();
  EXPECT_GT(hits_, 500u);
  EXPECT_GT(both, 500u) << "two decrements of one counter in one cycle";
  EXPECT_GT(loads, 2000u);
}

// The worst case: all three sources decrement in every cycle, all 32 counters in
// play, the same counter often named by two or three; loads now and then.
TEST_F(DmaCntTest, EverySourceEveryCycle) {
  start();
  auto& r = rng();
  for (int c = 0; c < 40000; ++c) {
    Step s;
    s.load = r() % 100 < 3;
    s.li = static_cast<unsigned>(r() % kCnt);
    s.lv = static_cast<uint32_t>(r() % 400000);
    for (int k = 0; k < 3; ++k) {
      s.valid[k] = true;
      s.id[k] = (k > 0 && r() % 4 == 0) ? s.id[k - 1] : static_cast<unsigned>(r() % kCnt);
      s.bytes[k] = 1 + static_cast<unsigned>(r() % 8191);
    }
    step(s, static_cast<unsigned>(r() % kCnt));
    if (HasFatalFailure()) return;
  }
  settleAndCompare();
  EXPECT_GT(hits_, 500u);
}

// A load is read back in the cycle after it; decrements up to and including its own
// cycle count against the old value (here they reach 0: a hit), none against the new.
TEST_F(DmaCntTest, LoadReadsBackAndOldDecrementsStillHit) {
  start();
  auto& m = dut_->m;
  step(withLoad(5, 100), 5);
  Step rd;
  step(rd, 5);
  EXPECT_EQ(m.rd_value_o, 100u) << "the value loaded a cycle before";
  for (int i = 0; i < 40; ++i) step(rd, 5);
  // 60 bytes, then 40 in the load's own cycle: counter 5 reaches 0 before it is loaded
  // again.
  step(withDec(0, 5, 60), 5);
  step(withDec(1, 5, 40, withLoad(5, 7)), 5);
  step(rd, 5);
  EXPECT_EQ(m.rd_value_o, 7u);
  settleAndCompare();
  EXPECT_EQ(hits_, 1u);
  EXPECT_FALSE((m.zero_o >> 5) & 1u) << "the load cleared the hit-zero bit";
}

// Loads of one counter in consecutive cycles, each with decrements in its own cycle:
// every one of them is still in the update pipeline when the next arrives (its value
// and total are forwarded from the stages ahead). The decrements of a load's cycle
// count against the value before it: the third cycle's 60 bytes bring the second
// load's 50 to 0 (one hit, the bit left clear by the third load); the fourth cycle's
// 4 bytes count against the third load's 10.
TEST_F(DmaCntTest, BackToBackLoadsOfOneCounter) {
  start();
  auto& m = dut_->m;
  Step idle;
  for (int i = 0; i < 40; ++i) step(idle, 3);
  const uint32_t values[3] = {100, 50, 10};
  const unsigned bytes[3] = {60, 50, 60};
  for (int k = 0; k < 3; ++k) {
    step(withDec(k, 3, bytes[k], withLoad(3, values[k])), 3);  // a different source each time
    if (HasFatalFailure()) return;
  }
  EXPECT_EQ(m.rd_value_o, 50u) << "the second load's value: a read in the third load's cycle";
  step(withDec(0, 3, 4), 3);
  EXPECT_EQ(m.rd_value_o, 10u) << "the youngest load, a cycle after it";
  settleAndCompare();
  EXPECT_EQ(hits_, 1u);
  EXPECT_EQ(hist_[3].back().second.val, 6u);
  // Two loads a cycle apart (the second takes the first's value from two stages
  // ahead): 30, then 25 bytes (5 left), then a load of 8 whose cycle's 3 bytes leave
  // 2 of the 5 (no hit).
  step(withLoad(3, 30), 3);
  step(withDec(1, 3, 25), 3);
  step(withDec(2, 3, 3, withLoad(3, 8)), 3);
  settleAndCompare();
  EXPECT_EQ(hits_, 1u);
  EXPECT_EQ(hist_[3].back().second.val, 8u);
}

// A load in every cycle: counter 7 first, then twelve others. Every read of counter 7
// meanwhile answers its load's value, also the one requested while that load is in the
// last stage and eight more loads have followed it (their values wait beside it).
TEST_F(DmaCntTest, LoadInEveryCycleKeepsTheOldestReadable) {
  start();
  auto& m = dut_->m;
  step(withLoad(7, 1234), 7);
  for (unsigned k = 0; k < 12; ++k) {
    step(withLoad(8 + k, 100 + k), 7);
    if (HasFatalFailure()) return;
    EXPECT_EQ(m.rd_value_o, 1234u) << "read of counter 7, " << k + 1 << " cycles after its load";
  }
  settleAndCompare();
}

}  // namespace

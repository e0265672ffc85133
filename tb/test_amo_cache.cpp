// SPDX-License-Identifier: Apache-2.0
// Unit test of ni_amo_cache alone (8 peers) at 64 and 512 bits against a map of
// the last record per source: random writes (sources in and out of range,
// completions of 12 to 28 bytes), lookups by source and PSN (hit only for the
// kept PSN of that source, and only while the replay queue has room), replays
// queued on hits, and the replayed beats (the kept completion bytes, keep and last
// right, never bad) in the order of the replays, under random back-pressure.
#include <gtest/gtest.h>

#include <deque>
#include <map>

#include "Vni_amo_cache.h"
#include "Vni_amo_cache512.h"
#include "bytes.hpp"
#include "verilated_ports.hpp"
#include "verilated_fixture.hpp"

using namespace ni;
using ni::getField;
using ni::setField;

namespace {

constexpr unsigned kPeers = 8, kRecBytes = 28;

struct Record {
  uint32_t psn = 0;
  Bytes tlp;  // kRecBytes, the first `len` of them sent
  unsigned len = 0;
};

class AmoCacheTest : public tb::VerilatedTest {
 protected:
  template <class M, unsigned kBpb>
  void run();
};

template <class M, unsigned kBpb>
void AmoCacheTest::run() {
  tb::VlClocked<M> dut(ctx(), "amo");
  attach(&dut);
  reset();
  auto& m = dut.m;
  std::map<unsigned, Record> kept;
  // Replays queued, in order, with the cycle each was asked for; the front one is being
  // sent. A replay's first beat is offered kReplayCycles after it was asked for: the
  // record's block-RAM read, its output register, the replay queue.
  constexpr int kReplayCycles = 3;
  std::deque<std::pair<Bytes, int>> replays;
  size_t sentOff = 0;         // bytes of the front replay already taken
  unsigned hits = 0, fullMisses = 0, replayed = 0;
  // A LID without a PSN sequence: 0 or past the peers (LIDs 1..kPeers have one).
  auto outOfRange = [this] { return rng()() % 4 == 0 ? 0u : kPeers + 1 + static_cast<unsigned>(rng()() % 100); };
  for (int c = 0; c < 40000; ++c) {
    // Write a record now and then: a source in range, or beyond the peers (ignored).
    const bool wr = rng()() % 100 < 20;
    const unsigned wlid = rng()() % 10 ? 1 + rng()() % kPeers : outOfRange();
    Record w;
    w.psn = static_cast<uint32_t>(rng()() % 4);
    w.len = 12 + 4 * (rng()() % 5);
    w.tlp.resize(kRecBytes);
    for (auto& b : w.tlp) b = static_cast<uint8_t>(rng()());
    m.wr_valid_i = wr;
    m.wr_lid_i = wlid;
    m.wr_psn_i = w.psn;
    for (unsigned i = 0; i < kRecBytes; ++i) setField(m.wr_tlp_i, 8 * i, 8, w.tlp[i]);
    m.wr_len_i = w.len;
    // Look up a source (sometimes out of range) and a PSN that is often the kept one.
    const unsigned qlid = rng()() % 10 ? 1 + rng()() % kPeers : outOfRange();
    const uint32_t qpsn = static_cast<uint32_t>(rng()() % 4);
    m.q_lid_i = qlid;
    m.q_psn_i = qpsn;
    m.replay_i = 0;
    m.beat_ready_i = rng()() % 100 < 60;
    dut.eval();
    const auto k = kept.find(qlid);
    const bool stored = k != kept.end() && k->second.psn == qpsn;
    const bool room = replays.size() < 2;
    ASSERT_EQ(bool(m.q_hit_o), stored && room) << "lookup " << qlid << "/" << qpsn << " cycle " << c
                                                << " seed " << seed();
    fullMisses += stored && !room;
    if (m.q_hit_o) {
      ++hits;
      EXPECT_EQ(m.q_len_o, k->second.len);
      if (rng()() % 2) {
        m.replay_i = 1;
        replays.push_back({Bytes(k->second.tlp.begin(), k->second.tlp.begin() + k->second.len), c});
      }
    }
    dut.eval();
    // The beat offered: the next bytes of the oldest replay, once it has had its cycles.
    const bool due = !replays.empty() && replays.front().second + kReplayCycles <= c;
    ASSERT_EQ(bool(m.beat_valid_o), due) << "cycle " << c;
    if (m.beat_valid_o) {
      const Bytes& r = replays.front().first;
      for (unsigned j = 0; j < kBpb; ++j) {
        const bool in = sentOff + j < r.size();
        ASSERT_EQ(getField(m.beat_o, kBpb * 8 + j, 1), in ? 1u : 0u) << "keep lane " << j << " cycle " << c;
        if (in) ASSERT_EQ(getField(m.beat_o, 8 * j, 8), r[sentOff + j]) << "byte " << sentOff + j << " cycle " << c;
      }
      const bool last = sentOff + kBpb >= r.size();
      ASSERT_EQ(getField(m.beat_o, kBpb * 9, 1), last ? 1u : 0u) << "last, cycle " << c;
      ASSERT_EQ(getField(m.beat_o, kBpb * 9 + 1, 1), 0u) << "a replay is never bad";
      if (m.beat_ready_i) {
        sentOff += kBpb;
        if (last) {
          replays.pop_front();
          sentOff = 0;
          ++replayed;
        }
      }
    }
    cycle();
    if (wr && wlid >= 1 && wlid <= kPeers) kept[wlid] = w;
  }
  EXPECT_GT(hits, 2000u);
  EXPECT_GT(replayed, 1000u);
  EXPECT_GT(fullMisses, 20u) << "the replay queue must fill up";
}

TEST_F(AmoCacheTest, KeepsTheLastResultPerSourceAndReplaysItAt64Bits) { run<Vni_amo_cache, 8>(); }
TEST_F(AmoCacheTest, KeepsTheLastResultPerSourceAndReplaysItAt512Bits) { run<Vni_amo_cache512, 64>(); }

}  // namespace

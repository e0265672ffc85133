// SPDX-License-Identifier: Apache-2.0
// Unit test of ni_rd_tracker alone (4 tags) against a map: the lowest free tag is
// offered, a committed read is found by its tag with the requester's node, ID and
// tag, the request's PSN and whether it is an atomic; a release frees it, so does a
// drop (ni_mem_keep giving up), tags out of range and free tags miss, and a full
// tracker offers nothing.
#include <gtest/gtest.h>

#include <array>
#include <optional>

#include "Vni_rd_tracker.h"
#include "verilated_fixture.hpp"

using namespace ni;

namespace {

constexpr unsigned kTags = 4;

struct Entry {
  uint16_t node, reqid;
  uint16_t otag;  // 10 bits
  uint32_t psn;
  uint8_t kind;   // ni_pkg::TRK_*: read, atomic, memory-confirmed write, NI-confirmed write
  uint64_t page;  // 52 bits
};

class RdTrackerTest : public tb::VerilatedTest {};

TEST_F(RdTrackerTest, MatchesModelUnderRandomCommitsLookupsAndReleases) {
  tb::VlClocked<Vni_rd_tracker> dut(ctx(), "trk");
  attach(&dut);
  reset();
  std::array<std::optional<Entry>, kTags> model{};
  unsigned fullSeen = 0, hits = 0, releases = 0, drops = 0;
  for (int i = 0; i < 20000; ++i) {
    // Lookup: usually a tag in range, sometimes any 8-bit value.
    const uint8_t tag = static_cast<uint8_t>(rng()() % 4 ? rng()() % kTags : rng()() % 256);
    dut.m.lookup_tag_i = tag;
    dut.m.release_i = 0;
    dut.m.drop_i = 0;
    dut.m.commit_i = 0;
    dut.eval();
    std::optional<unsigned> lowestFree;
    for (unsigned t = 0; t < kTags && !lowestFree; ++t)
      if (!model[t]) lowestFree = t;
    ASSERT_EQ(bool(dut.m.free_avail_o), bool(lowestFree)) << "cycle " << i << " seed " << seed();
    if (lowestFree) ASSERT_EQ(dut.m.free_tag_o, *lowestFree) << "cycle " << i;
    fullSeen += !lowestFree;
    const bool hit = tag < kTags && model[tag];
    ASSERT_EQ(bool(dut.m.lookup_hit_o), hit) << "tag " << unsigned(tag) << " cycle " << i << " seed " << seed();
    if (hit) {
      ++hits;
      EXPECT_EQ(dut.m.lookup_node_o, model[tag]->node);
      EXPECT_EQ(dut.m.lookup_reqid_o, model[tag]->reqid);
      EXPECT_EQ(dut.m.lookup_otag_o, model[tag]->otag);
      EXPECT_EQ(dut.m.lookup_psn_o, model[tag]->psn);
      EXPECT_EQ(dut.m.lookup_kind_o, model[tag]->kind);
      EXPECT_EQ(dut.m.lookup_page_o, model[tag]->page);
    }
    // Release what was found (sometimes), commit the offered tag (sometimes), both in one cycle.
    const bool release = hit && rng()() % 100 < 40;
    const bool commit = lowestFree && rng()() % 100 < 45;
    Entry e{static_cast<uint16_t>(rng()()), static_cast<uint16_t>(rng()()), static_cast<uint16_t>(rng()() & 0x3FF),
            static_cast<uint32_t>(rng()() & 0xFFFFFF), static_cast<uint8_t>(rng()() % 4),
            rng()() & ((uint64_t{1} << 52) - 1)};
    dut.m.release_i = release;
    // Drop another held tag now and then (never the one released or committed).
    std::optional<unsigned> drop;
    const unsigned d = rng()() % kTags;
    if (model[d] && d != tag && rng()() % 100 < 10) drop = d;
    dut.m.drop_i = bool(drop);
    dut.m.drop_tag_i = drop.value_or(0);
    if (commit) {
      dut.m.commit_i = 1;
      dut.m.commit_tag_i = *lowestFree;
      dut.m.commit_node_i = e.node;
      dut.m.commit_reqid_i = e.reqid;
      dut.m.commit_otag_i = e.otag;
      dut.m.commit_psn_i = e.psn;
      dut.m.commit_kind_i = e.kind;
      dut.m.commit_page_i = e.page;
    }
    cycle();
    if (release) {
      model[tag].reset();
      ++releases;
    }
    if (drop) {
      model[*drop].reset();
      ++drops;
    }
    if (commit) model[*lowestFree] = e;
  }
  EXPECT_GT(drops, 200u);
  EXPECT_GT(fullSeen, 500u) << "the tracker must fill up";
  EXPECT_GT(hits, 5000u);
  EXPECT_GT(releases, 2000u);
}

}  // namespace

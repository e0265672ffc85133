// SPDX-License-Identifier: Apache-2.0
// Unit test of ni_mem_keep alone (64 bits, 2 slots of 6 beats) against a model of the
// writes it keeps. Decapsulated TLPs stream in with random idles, some flagged as
// writes this NI confirmed (tcni), some of those nullified; the host port stalls at
// random. The memory behind it loses some writes (no answer), answers the others
// after a random delay, now and then with a refusal, and answers every copy it got.
// Checked: the passing TLPs leave unchanged and in order; a copy is a kept write,
// issued only after MEM_TIMEOUT cycles without an answer and at most MEM_LIMIT times;
// each kept write ends exactly once (confirmed, refused, or given up with its tag
// dropped); a nullified write is never kept; a write to keep waits for a free slot.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "Vni_mem_keep.h"
#include "axis_bfm.hpp"
#include "verilated_fixture.hpp"
#include "verilated_ports.hpp"

using namespace ni;

namespace {

constexpr unsigned kBpb = 8, kSlots = 2, kSlotBeats = 6;
constexpr uint32_t kTimeout = 60;
constexpr uint8_t kLimit = 2;

struct In {
  Bytes bytes;
  bool cni = false, user = false;
};
enum class End { Open, Confirmed, Refused, Dropped };
struct Kept {
  Bytes bytes;
  unsigned copies = 0;
  uint64_t lastIssue = 0;  // cycle its last copy was first offered (the original: its last beat)
  End end = End::Open;
  uint64_t endCycle = 0;
};
struct Answer {
  uint64_t at;
  uint8_t tag;
  bool ok;
};

class MemKeepTest : public tb::VerilatedTest {};

TEST_F(MemKeepTest, KeepsIssuesAgainAndEndsEachWriteOnce) {
  tb::VlClocked<Vni_mem_keep> dut(ctx(), "keep");
  attach(&dut);
  auto& m = dut.m;
  m.timeout_i = kTimeout;
  m.limit_i = kLimit;
  reset();

  // Inputs: 1 to 6 beats; a kept write has a tag of its own (byte 6) below 200.
  std::vector<In> ins;
  uint8_t nextTag = 0;
  for (int i = 0; i < 500; ++i) {
    In in;
    in.bytes.resize(1 + rng()() % (kBpb * kSlotBeats));
    for (auto& b : in.bytes) b = static_cast<uint8_t>(rng()());
    in.cni = rng()() % 100 < 45 && nextTag < 200;
    in.user = rng()() % 100 < 10;
    if (in.bytes.size() < 8) in.bytes.resize(8);
    in.bytes[6] = in.cni ? nextTag++ : static_cast<uint8_t>(200 + rng()() % 56);
    ins.push_back(in);
  }
  tb::AxisSource src{kBpb, &rng(), 0.3};
  tb::AxisSink sink{kBpb, &rng(), 0.3};
  for (const auto& in : ins) src.push(in.bytes);

  std::map<uint8_t, Kept> kept;
  std::vector<Answer> answers;  // memory's answers on their way
  size_t inIdx = 0, outSeen = 0, passIdx = 0;
  unsigned reissues = 0, fails = 0, lost = 0, late = 0, stalledFirst = 0;
  bool inFirst = true, offering = false;
  uint64_t offerStart = 0;  // cycle the TLP now leaving was first offered (the DUT holds it from then)
  auto open = [&] {
    unsigned n = 0;
    for (const auto& [t, k] : kept) n += k.end == End::Open;
    return n;
  };
  auto done = [&] {
    if (!src.empty() || !answers.empty()) return false;
    for (const auto& [t, k] : kept)
      if (k.end == End::Open) return false;
    return true;
  };
  for (uint64_t c = 0; c < 400'000 && !done(); ++c) {
    Beat b;
    const bool v = src.offer(&b);
    m.s_axis_tvalid = v;
    toPort(m.s_axis_tdata, b.data.data(), v ? kBpb : 0);
    m.s_axis_tkeep = static_cast<uint8_t>(b.keep);
    m.s_axis_tlast = b.last;
    m.s_axis_tuser = v && b.last && ins[inIdx].user;
    m.s_axis_tcni = v && ins[inIdx].cni;
    m.m_axis_tready = sink.ready();
    // Memory's answer due now (one per cycle, oldest first).
    m.conf_valid_i = 0;
    auto due = std::find_if(answers.begin(), answers.end(), [&](const Answer& a) { return a.at <= c; });
    if (due != answers.end()) {
      m.conf_valid_i = 1;
      m.conf_tag_i = due->tag;
      m.conf_ok_i = due->ok;
    }
    dut.eval();
    const Beat ob = tb::offeredBeat(m, kBpb);
    const bool ov = m.m_axis_tvalid;
    if (ov && !offering) offerStart = c;
    offering = ov && !(m.m_axis_tready && ob.last);
    const bool taken = v && m.s_axis_tready;
    if (v && inFirst && ins[inIdx].cni && !m.s_axis_tready) stalledFirst += open() == kSlots;
    if (taken && inFirst && ins[inIdx].cni)
      ASSERT_LT(open(), kSlots) << "a write to keep passed with every slot taken, cycle " << c << " seed " << seed();
    // Events of this cycle, against the model before the clock edge.
    unsigned failsNow = 0;
    if (m.conf_valid_i) {
      auto k = kept.find(due->tag);
      if (k != kept.end() && k->second.end == End::Open) {
        k->second.end = due->ok ? End::Confirmed : End::Refused;
        k->second.endCycle = c;
        failsNow += !due->ok;
      } else {
        ++late;  // a copy's answer after the write ended: nothing happens
      }
      answers.erase(due);
    }
    if (m.drop_valid_o) {
      auto k = kept.find(m.drop_tag_o);
      ASSERT_NE(k, kept.end()) << "dropped a tag never kept: " << unsigned(m.drop_tag_o) << " seed " << seed();
      ASSERT_EQ(k->second.end, End::Open) << "dropped a write that had ended, tag " << unsigned(m.drop_tag_o);
      EXPECT_EQ(k->second.copies, kLimit) << "gave up before MEM_LIMIT copies, tag " << unsigned(m.drop_tag_o);
      EXPECT_GE(c - k->second.lastIssue, kTimeout) << "gave up early, tag " << unsigned(m.drop_tag_o);
      k->second.end = End::Dropped;
      k->second.endCycle = c;
      ++failsNow;
    }
    EXPECT_EQ(unsigned(m.ev_fail_o), failsNow) << "ev_fail_o at cycle " << c << " seed " << seed();
    reissues += m.ev_reissue_o;
    fails += m.ev_fail_o;
    cycle();
    if (taken) {
      inFirst = b.last;
      src.accepted();
      if (b.last) {
        // A kept write counts from its last beat; the memory sees it when it leaves.
        if (ins[inIdx].cni && !ins[inIdx].user) kept[ins[inIdx].bytes[6]] = Kept{ins[inIdx].bytes, 0, c, End::Open, 0};
        ++inIdx;
      }
    }
    if (sink.observe(ov, ob, c)) {
      const tb::Packet& p = sink.packets()[outSeen++];
      if (passIdx < inIdx && p.bytes == ins[passIdx].bytes) {
        EXPECT_EQ(p.user, ins[passIdx].user) << "nullify flag of input " << passIdx;
        ++passIdx;
      } else {
        // Not the next passing TLP: a copy of a kept write.
        ASSERT_GE(p.bytes.size(), 8u);
        auto k = kept.find(p.bytes[6]);
        ASSERT_NE(k, kept.end()) << "output " << outSeen - 1 << " is neither the next TLP nor a kept write, seed "
                                 << seed();
        EXPECT_EQ(p.bytes, k->second.bytes) << "copy of tag " << unsigned(p.bytes[6]);
        EXPECT_FALSE(p.user) << "a copy is never nullified";
        // Offered while the write was open (it may end while the copy goes out).
        EXPECT_TRUE(k->second.end == End::Open || offerStart <= k->second.endCycle)
            << "copy of a write that had ended, tag " << unsigned(p.bytes[6]) << " seed " << seed();
        EXPECT_GE(offerStart - k->second.lastIssue, kTimeout) << "copy before MEM_TIMEOUT, tag "
                                                               << unsigned(p.bytes[6]) << " seed " << seed();
        EXPECT_LT(k->second.copies, kLimit) << "more than MEM_LIMIT copies, tag " << unsigned(p.bytes[6]);
        ++k->second.copies;
        k->second.lastIssue = offerStart;
      }
      // Memory: every kept write or copy that arrives is lost (1 in 3) or answered.
      const uint8_t tag = p.bytes[6];
      if (kept.count(tag) && !p.user) {
        if (rng()() % 3 == 0) {
          ++lost;
        } else {
          answers.push_back({c + 1 + rng()() % 100, tag, rng()() % 10 != 0});
        }
      }
    }
  }
  ASSERT_TRUE(done()) << "writes still open or inputs left, seed " << seed();
  EXPECT_EQ(passIdx, ins.size()) << "every TLP passed, in order";
  EXPECT_EQ(outSeen, sink.packets().size());
  unsigned copies = 0, confirmed = 0, refused = 0, dropped = 0;
  for (const auto& [t, k] : kept) {
    copies += k.copies;
    confirmed += k.end == End::Confirmed;
    refused += k.end == End::Refused;
    dropped += k.end == End::Dropped;
  }
  EXPECT_EQ(reissues, copies) << "ev_reissue_o once per copy";
  EXPECT_EQ(fails, refused + dropped);
  // The run must have reached every case.
  EXPECT_GT(confirmed, 50u);
  EXPECT_GT(refused, 3u);
  EXPECT_GT(dropped, 3u);
  EXPECT_GT(copies, 30u);
  EXPECT_GT(late, 5u) << "answers after the write ended";
  EXPECT_GT(stalledFirst, 10u) << "writes that waited for a slot";
  EXPECT_GT(lost, 30u);
}

}  // namespace

// SPDX-License-Identifier: Apache-2.0
// Multi-node system tests: N nodes, each a CPU + memory + root complex with a
// Verilated NI, joined by the crossbar fabric model.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>

#include "ni_regs.hpp"
#include "soak.hpp"
#include "system.hpp"
#include "system_fixture.hpp"
#include "verilated_fixture.hpp"

using namespace ni;

namespace {

struct Param {
  unsigned nodes;
  unsigned width;
  unsigned maxPayload = 256;
  const char* config = "default";  // NI parameter set (rtl/ni_configs.json)
};

class SystemTest : public tb::SystemFixture<Param> {
 protected:
  void SetUp() override {
    SystemConfig c;
    c.nodes = GetParam().nodes;
    c.dataBits = GetParam().width;
    c.maxPayload = GetParam().maxPayload;
    c.niConfig = GetParam().config;
    c.hostStall = 0.2;
    startSystem(c);
  }

  bool drain() { return sys->drain(1'000'000); }
  // A window with receiver-side translation into memory ID `memid` of node `dst`.
  static Window windowTo(uint64_t base, uint64_t size, unsigned dst, uint16_t memid) {
    Window w;
    w.base = base;
    w.size = size;
    w.dstNode = dst;
    w.memid = static_cast<uint16_t>(memid);
    return w;
  }
  void randomTrafficMatchesScoreboard();
};

TEST_P(SystemTest, StoreThroughWindowLandsInRemoteMemory) {
  const unsigned n = sys->size();
  // Receiver-side translation: node 0 -> node n-1, memory ID 4.
  sys->setMemId(n - 1, 4, MemRegion{true, 0x2000'0000ull, 0x10000, true, true});
  Window w = windowTo(kApertureBase, 0x10000, n - 1, 4);
  sys->setWindow(0, 0, w);
  // Sender-side translation: node n-1 -> node 0 at 0x3000'0000, inside node 0's memory ID 4.
  sys->setMemId(0, 4, MemRegion{true, 0x3000'0000ull, 0x10000, true, true});
  Window s = w;
  s.dstNode = 0;
  s.rxXlate = false;
  s.remote = 0x3000'0000ull;
  sys->setWindow(n - 1, 0, s);
  ASSERT_TRUE(drain());
  const Bytes a = randomBytes(200), b = randomBytes(100);
  sys->node(0).store(kApertureBase + 0x1234, a);
  sys->node(n - 1).store(kApertureBase + 0x2000, b);
  ASSERT_TRUE(drain());
  EXPECT_EQ(sys->node(n - 1).memory().read(0x2000'1234, a.size()), a);
  EXPECT_EQ(sys->node(0).memory().read(0x3000'2000, b.size()), b);
}

// A reset of running NIs starts every source's sequence again at PSN 0 on both sides:
// the receiver's table of expected PSNs is a RAM that reset does not clear, so its
// entries from before must not count (a receiver that used them would take the new
// packets for duplicates, ACK them and drop them).
TEST_P(SystemTest, AResetOfRunningNisStartsTheirSequencesAgain) {
  const unsigned n = sys->size();
  const MemRegion region{true, 0x2000'0000ull, 0x10000, true, true};
  const Window w = windowTo(kApertureBase, 0x10000, n - 1, 4);
  auto program = [&] {
    sys->setMemId(n - 1, 4, region);
    sys->setWindow(0, 0, w);
    ASSERT_TRUE(drain());
  };
  program();
  const Bytes before = randomBytes(64);
  for (unsigned i = 0; i < 6; ++i) sys->node(0).store(kApertureBase + 0x400 * i, before);
  ASSERT_TRUE(drain());
  ASSERT_EQ(sys->node(n - 1).memory().read(0x2000'1400, before.size()), before);  // the PSNs moved on
  sys->reset();
  program();
  const Bytes a = randomBytes(200);
  sys->node(0).store(kApertureBase + 0x1234, a);
  ASSERT_TRUE(drain());
  EXPECT_EQ(sys->node(n - 1).memory().read(0x2000'1234, a.size()), a);
}

TEST_P(SystemTest, RemoteReadReturnsData) {
  const unsigned n = sys->size();
  sys->setMemId(1, 0, MemRegion{true, 0x4000'0000ull, 0x100000, true, false});
  Window w = windowTo(kApertureBase + 0x100000, 0x100000, 1, 0);
  for (unsigned s = 0; s < n; ++s) sys->setWindow(s, 2, w);
  const Bytes content = randomBytes(8192);
  sys->node(1).memory().write(0x4000'0000ull + 0x3000, content);
  ASSERT_TRUE(drain());
  unsigned done = 0;
  for (unsigned s = 0; s < n; ++s) {
    const size_t off = 64 * s, len = 1000 + 8 * s;  // spans several TLPs and a page boundary
    sys->node(s).load(w.base + 0x3000 + off, len, [&, off, len](const LoadResult& r) {
      EXPECT_TRUE(r.ok);
      EXPECT_EQ(r.data, Bytes(content.begin() + long(off), content.begin() + long(off + len)));
      ++done;
    });
  }
  ASSERT_TRUE(drain());
  EXPECT_EQ(done, n);
  EXPECT_EQ(sys->readCsr(1, regs::RD_SERVED_CNT) > 0, true);
}

// Every node fetch-adds 1 to one counter on node 0 many times, all at once: the
// old values returned must be exactly 0..total-1 (no update lost or repeated),
// and the counter ends at total.
TEST_P(SystemTest, ConcurrentFetchAddIsAtomic) {
  const unsigned n = sys->size();
  sys->setMemId(0, 5, MemRegion{true, 0x4800'0000ull, 0x1000, true, true, true});
  Window w = windowTo(kApertureBase + 0x200000, 0x1000, 0, 5);
  w.atomic = true;
  for (unsigned s = 0; s < n; ++s) sys->setWindow(s, 3, w);
  ASSERT_TRUE(drain());
  const unsigned perNode = 40, total = n * perNode;
  std::vector<uint64_t> seen;
  for (unsigned k = 0; k < perNode; ++k)
    for (unsigned s = 0; s < n; ++s)
      sys->node(s).atomic(TlpKind::FetchAdd, w.base + 0x40, Bytes{1, 0, 0, 0, 0, 0, 0, 0}, [&](const LoadResult& r) {
        ASSERT_TRUE(r.ok) << "status " << int(r.status) << " timed out " << r.timedOut << " data " << r.data.size();
        seen.push_back(getLe(r.data.data(), 8));
      });
  ASSERT_TRUE(drain());
  ASSERT_EQ(seen.size(), total);
  std::sort(seen.begin(), seen.end());
  for (unsigned i = 0; i < total; ++i) ASSERT_EQ(seen[i], i) << "old values must be 0.." << total - 1;
  EXPECT_EQ(getLe(sys->node(0).memory().read(0x4800'0040ull, 8).data(), 8), total);
}

// Swap and CAS of every operand size on slots private to each node, checked
// against the same operations applied to a golden memory; then the refusals:
// no atomic permission at either end, misaligned target, illegal size.
TEST_P(SystemTest, SwapAndCasReturnOldValuesAndRefusalsGetUr) {
  const unsigned n = sys->size();
  for (unsigned d = 0; d < n; ++d) {
    sys->setMemId(d, 6, MemRegion{true, 0x4900'0000ull, 0x1000, true, true, true});
    sys->setMemId(d, 7, MemRegion{true, 0x4A00'0000ull, 0x1000, true, true, false});
  }
  for (unsigned s = 0; s < n; ++s) {
    Window w = windowTo(kApertureBase + 0x300000, 0x1000, (s + 1) % n, 6);
    w.atomic = true;
    sys->setWindow(s, 4, w);
    w.base += 0x1000;
    w.memid = 7;  // the receiver refuses atomics here
    sys->setWindow(s, 5, w);
    w.base += 0x1000;
    w.memid = 6;
    w.atomic = false;  // the sender refuses atomics here
    sys->setWindow(s, 6, w);
  }
  ASSERT_TRUE(drain());
  std::map<std::pair<unsigned, uint64_t>, uint8_t> golden;  // (node, address) -> byte
  unsigned checked = 0;
  for (unsigned round = 0; round < 30; ++round) {
    for (unsigned s = 0; s < n; ++s) {
      const unsigned d = (s + 1) % n;
      const bool cas = rng() & 1;
      const unsigned op = 4u << (rng() % (cas ? 3 : 2));
      const uint64_t off = 0x100 * s + 16 * (rng() % 4);  // this node's slots
      Bytes operands = randomBytes(cas ? 2 * op : op);
      Bytes old(op);
      for (unsigned i = 0; i < op; ++i) old[i] = golden[{d, 0x4900'0000ull + off + i}];
      if (cas && rng() % 2) std::copy(old.begin(), old.end(), operands.begin());  // make the compare succeed
      const Tlp t = makeAtomic(cas ? TlpKind::Cas : TlpKind::Swap, 0, 0, off, operands);
      const Bytes after = atomicResult(t, old);
      for (unsigned i = 0; i < op; ++i) golden[{d, 0x4900'0000ull + off + i}] = after[i];
      sys->node(s).atomic(t.kind, kApertureBase + 0x300000 + off, operands, [&, old](const LoadResult& r) {
        EXPECT_TRUE(r.ok);
        EXPECT_EQ(r.data, old) << "old value, seed " << seed;
        ++checked;
      });
    }
    ASSERT_TRUE(drain());
  }
  EXPECT_EQ(checked, 30 * n);
  for (const auto& [key, v] : golden) ASSERT_EQ(sys->node(key.first).memory().get(key.second), v);

  std::vector<CplStatus> refused;
  auto expectUr = [&](const LoadResult& r) {
    EXPECT_FALSE(r.ok);
    EXPECT_FALSE(r.timedOut);
    refused.push_back(r.status);
  };
  const uint64_t base = kApertureBase + 0x300000;
  sys->node(0).atomic(TlpKind::FetchAdd, base + 0x1000, Bytes(8, 1), expectUr);  // receiver: no permission
  sys->node(0).atomic(TlpKind::FetchAdd, base + 0x2000, Bytes(8, 1), expectUr);  // sender: no permission
  sys->node(0).atomic(TlpKind::Swap, base + 0x4, Bytes(8, 1), expectUr);         // misaligned 8-byte operand
  sys->node(0).atomic(TlpKind::Cas, base, Bytes(12, 1), expectUr);               // no 6-byte operands
  ASSERT_TRUE(drain());
  ASSERT_EQ(refused.size(), 4u);
  for (auto st : refused) EXPECT_EQ(st, CplStatus::UR);
  EXPECT_EQ(sys->readCsr(1 % n, regs::MEMID_ERR_CNT), 1u);
  EXPECT_EQ(sys->readCsr(0, regs::PERM_CNT), 1u);
  EXPECT_EQ(sys->readCsr(0, regs::MALFORMED_CNT), 2u);
}

TEST_P(SystemTest, WindowsAndMemoryIdsReprogrammedAtRunTime) {
  sys->setMemId(1, 0, MemRegion{true, 0x5000'0000ull, 0x10000, true, true});
  Window w = windowTo(kApertureBase, 0x10000, 1, 0);
  sys->setWindow(0, 0, w);
  sys->node(0).store(kApertureBase + 0x10, Bytes(16, 0xA1));
  ASSERT_TRUE(drain());
  // Receiver points memory ID 0 elsewhere: later packets land there (claim 32).
  sys->setMemId(1, 0, MemRegion{true, 0x6000'0000ull, 0x10000, true, true});
  ASSERT_TRUE(drain());
  sys->node(0).store(kApertureBase + 0x10, Bytes(16, 0xB2));
  ASSERT_TRUE(drain());
  // Sender re-targets the window to another node (the last one).
  const unsigned last = sys->size() - 1;
  sys->setMemId(last, 0, MemRegion{true, 0x7000'0000ull, 0x10000, true, true});
  ASSERT_TRUE(drain());
  w.dstNode = last;
  sys->setWindow(0, 0, w);
  sys->node(0).store(kApertureBase + 0x20, Bytes(16, 0xC3));
  ASSERT_TRUE(drain());
  EXPECT_EQ(sys->node(1).memory().read(0x5000'0010, 16), Bytes(16, 0xA1));
  EXPECT_EQ(sys->node(1).memory().read(0x6000'0010, 16), Bytes(16, 0xB2));
  EXPECT_EQ(sys->node(last).memory().read(0x7000'0020, 16), Bytes(16, 0xC3));
}

// Receiver re-mapping under a burst (claim 32), on a reciprocal pathway: node a
// streams numbered 64-byte writes to node b back to back while b points its
// memory ID at a new region three times. Every write must land whole in exactly
// one region, regions in the order they were set, none refused. Then the same
// from b to a over the same pair of windows.
TEST_P(SystemTest, ReceiverRemapsMemoryIdUnderABurstBothWays) {
  constexpr unsigned kWrites = 120, kLen = 64, kRegions = 4;
  auto region = [](unsigned r) { return 0x5000'0000ull + r * 0x100'0000ull; };
  Window w = windowTo(kApertureBase, 0x10000, 1, 2);
  sys->setWindow(0, 0, w);
  w.dstNode = 0;
  sys->setWindow(1, 0, w);
  for (auto [a, b] : {std::pair<unsigned, unsigned>{0, 1}, {1, 0}}) {
    sys->setMemId(b, 2, MemRegion{true, region(0), 0x10000, true, true});
    ASSERT_TRUE(drain());
    auto payload = [a = a](unsigned seq) {
      Bytes p(kLen, static_cast<uint8_t>(0x80 | a));
      p[0] = static_cast<uint8_t>(seq);
      return p;
    };
    for (unsigned k = 0; k < kWrites; ++k) sys->node(a).store(kApertureBase + k * kLen, payload(k));
    for (unsigned r = 1; r < kRegions; ++r) {
      const unsigned k = r * kWrites / kRegions;  // re-map once this write has landed
      ASSERT_TRUE(sys->runUntil(
          [&] { return sys->node(b).memory().read(region(r - 1) + k * kLen, kLen) == payload(k); }, 1'000'000));
      sys->setMemId(b, 2, MemRegion{true, region(r), 0x10000, true, true});
    }
    ASSERT_TRUE(drain());
    unsigned stage = 0;
    std::vector<unsigned> count(kRegions, 0);
    for (unsigned k = 0; k < kWrites; ++k) {
      int found = -1;
      for (unsigned r = 0; r < kRegions; ++r)
        if (sys->node(b).memory().read(region(r) + k * kLen, kLen) == payload(k)) {
          EXPECT_EQ(found, -1) << "write " << k << " from node " << a << " landed twice";
          found = int(r);
        }
      ASSERT_NE(found, -1) << "write " << k << " from node " << a << " lost or torn";
      EXPECT_GE(unsigned(found), stage) << "write " << k << " went back to an older region";
      stage = std::max(stage, unsigned(found));
      ++count[unsigned(found)];
    }
    for (unsigned r = 0; r < kRegions; ++r) EXPECT_GT(count[r], 0u) << "region " << r << " from node " << a;
    EXPECT_EQ(sys->readCsr(b, regs::MEMID_ERR_CNT), 0u) << "a write was refused while re-mapping";
  }
}

// The sender re-targets a window while its earlier writes are still on the way:
// writes issued before the register write go to the old node, later ones to the new.
TEST_P(SystemTest, SenderRetargetsWindowInProgramOrder) {
  const unsigned n = sys->size(), to = n > 2 ? n - 1 : 1;
  const uint64_t oldBase = 0x5400'0000ull, newBase = n > 2 ? 0x5400'0000ull : 0x5600'0000ull;
  sys->setMemId(1, 2, MemRegion{true, oldBase, 0x10000, true, true});
  sys->setMemId(to, 3, MemRegion{true, newBase, 0x10000, true, true});
  Window w = windowTo(kApertureBase, 0x10000, 1, 2);
  sys->setWindow(0, 0, w);
  ASSERT_TRUE(drain());
  const Bytes first = randomBytes(60 * 64), second = randomBytes(60 * 64);
  sys->node(0).store(kApertureBase, first);
  w.dstNode = to;  // with two nodes: the same node, another memory ID
  w.memid = 3;
  sys->setWindow(0, 0, w);
  sys->node(0).store(kApertureBase + first.size(), second);
  ASSERT_TRUE(drain());
  EXPECT_EQ(sys->node(1).memory().read(oldBase, first.size()), first);
  const Bytes got = sys->node(to).memory().read(newBase + first.size(), second.size());
  EXPECT_EQ(got, second) << "differs at byte " << firstDifference(got, second);
  if (n > 2) EXPECT_EQ(sys->node(1).memory().read(oldBase + first.size(), second.size()), Bytes(second.size(), 0));
}

// A remote read whose memory ID is re-pointed while reads are in flight: each
// read is translated when its request is decapsulated, so every 256-byte read
// returns either all old-region or all new-region bytes, old before new.
TEST_P(SystemTest, ReadsInFlightDuringAMemoryIdChangeReturnOneRegion) {
  const uint64_t kOld = 0x6000'0000ull, kNew = 0x6800'0000ull;
  sys->setMemId(1, 3, MemRegion{true, kOld, 0x10000, true, true});
  Window w = windowTo(kApertureBase, 0x10000, 1, 3);
  sys->setWindow(0, 0, w);
  const Bytes a = randomBytes(0x10000), b = randomBytes(0x10000);
  sys->node(1).memory().write(kOld, a);
  sys->node(1).memory().write(kNew, b);
  ASSERT_TRUE(drain());
  constexpr unsigned kReads = 64;
  std::vector<int> from(kReads, -1);
  // A read every 40 cycles: several in flight, and node 1's host input not hogged
  // by completions (the root complex sends memory's completions first).
  for (unsigned k = 0; k < kReads; ++k) {
    sys->node(0).load(kApertureBase + k * 256, 256, [&, k](const LoadResult& r) {
      ASSERT_TRUE(r.ok);
      if (r.data == Bytes(a.begin() + k * 256, a.begin() + (k + 1) * 256)) from[k] = 0;
      if (r.data == Bytes(b.begin() + k * 256, b.begin() + (k + 1) * 256)) from[k] = 1;
    });
    if (k == kReads / 2) sys->setMemId(1, 3, MemRegion{true, kNew, 0x10000, true, true});
    for (int c = 0; c < 40; ++c) sys->tick();
  }
  ASSERT_TRUE(drain());
  int stage = 0;
  for (unsigned k = 0; k < kReads; ++k) {
    ASSERT_NE(from[k], -1) << "read " << k << " mixed the regions or failed";
    EXPECT_GE(from[k], stage) << "read " << k;
    stage = std::max(stage, from[k]);
  }
  EXPECT_EQ(from.front(), 0);
  EXPECT_EQ(from.back(), 1) << "reads decapsulated after the change use the new region";
}

// Ordering per source-destination pair (docs/architecture.md): posted writes
// arrive in the order they were issued, and a read does not pass the writes
// issued before it, with all nodes sending at once.
TEST_P(SystemTest, PostedWritesStayInOrderAndReadsDoNotPassThem) {
  const unsigned n = sys->size();
  for (unsigned d = 0; d < n; ++d) sys->setMemId(d, 4, MemRegion{true, 0x7000'0000ull, 0x100000, true, true});
  for (unsigned s = 0; s < n; ++s)
    for (unsigned d = 0; d < n; ++d) {
      if (s == d) continue;
      Window w = windowTo(kApertureBase + (uint64_t(d) << 20), 0x100000, d, 4);
      sys->setWindow(s, d, w);
    }
  ASSERT_TRUE(drain());
  // Each write carries (source, sequence number per destination) in its first bytes.
  std::vector<std::vector<int>> lastSeq(n, std::vector<int>(n, -1));
  unsigned outOfOrder = 0, observed = 0;
  for (unsigned d = 0; d < n; ++d)
    sys->node(d).onMemoryWrite([&, d](const Tlp& t, unsigned) {
      const unsigned src = t.data[0], seq = t.data[1] | t.data[2] << 8;
      if (int(seq) <= lastSeq[d][src]) ++outOfOrder;
      lastSeq[d][src] = int(seq);
      ++observed;
    });
  std::vector<std::vector<unsigned>> seq(n, std::vector<unsigned>(n, 0));
  unsigned readsOk = 0, reads = 0;
  for (unsigned round = 0; round < 60; ++round)
    for (unsigned s = 0; s < n; ++s) {
      unsigned d = unsigned(rng() % n);
      if (d == s) d = (d + 1) % n;
      // Source s owns 4 KiB at offset s * 4 KiB of every destination's region.
      const uint64_t slot = kApertureBase + (uint64_t(d) << 20) + s * 4096 + (rng() % 16) * 64;
      Bytes data = randomBytes(4 * (2 + rng() % 15));
      data[0] = static_cast<uint8_t>(s);
      data[1] = static_cast<uint8_t>(seq[s][d]);
      data[2] = static_cast<uint8_t>(seq[s][d] >> 8);
      ++seq[s][d];
      sys->node(s).store(slot, data);
      if (rng() % 4 == 0) {  // read it straight back: must see this write, not an older one
        ++reads;
        sys->node(s).load(slot, data.size(), [&, data](const LoadResult& r) {
          EXPECT_TRUE(r.ok);
          readsOk += r.data == data;
        });
      }
    }
  ASSERT_TRUE(drain());
  EXPECT_EQ(outOfOrder, 0u) << "posted writes of one source arrived out of order";
  EXPECT_EQ(observed, 60 * n);
  EXPECT_EQ(readsOk, reads) << "a read passed an earlier write";
  EXPECT_GT(reads, 5u);
}

// Multicast windows (switch replication): a write through a window to a group
// lands at every member, each at its own range (its own memory-ID region), and
// nowhere else. Reads and atomics to the window get UR. A group the switch has
// no members for drops the writes (counted by the fabric); a node the switch
// sends a group packet to without being a member drops it (BAD_PKT_CNT).
TEST_P(SystemTest, MulticastWritesReachEveryMemberAtItsOwnRange) {
  const unsigned n = sys->size();
  std::vector<unsigned> members;
  for (unsigned m = 1; m < (n > 2 ? n - 1 : n); ++m) members.push_back(m);
  auto base = [](unsigned m) { return 0x7800'0000ull + m * 0x10'0000ull; };
  for (unsigned m = 0; m < n; ++m) sys->setMemId(m, 8, MemRegion{true, base(m), 0x10000, true, true});
  sys->setMulticastGroup(0, 0xC001, members);
  Window w;
  w.base = kApertureBase + 0x800000;
  w.size = 0x10000;
  w.mcastLid = 0xC001;
  w.memid = 8;
  w.atomic = true;
  sys->setWindow(0, 7, w);
  Window empty = w;
  empty.base += 0x10000;
  empty.mcastLid = 0xC002;  // the switch knows no members
  sys->setWindow(0, 8, empty);
  Window stray = w;
  stray.base += 0x20000;
  stray.mcastLid = 0xC003;  // the switch sends it to node 1, whose NI is not a member
  sys->setWindow(0, 9, stray);
  sys->fabric().setGroup(0xC003, {1});
  ASSERT_TRUE(drain());

  const Bytes data = randomBytes(1000);
  sys->node(0).store(w.base + 0x100, data);
  ASSERT_TRUE(drain());
  for (unsigned m : members) EXPECT_EQ(sys->node(m).memory().read(base(m) + 0x100, data.size()), data) << "member " << m;
  if (n > 2) EXPECT_EQ(sys->node(n - 1).memory().read(base(n - 1) + 0x100, data.size()), Bytes(data.size(), 0));
  EXPECT_EQ(sys->node(0).memory().read(base(0) + 0x100, data.size()), Bytes(data.size(), 0)) << "not back to the sender";
  const uint64_t copies = sys->fabric().stats().mcastCopies;
  const unsigned packets = (1000 + GetParam().maxPayload - 1) / GetParam().maxPayload;
  EXPECT_EQ(copies, members.size() * packets) << "each packet replicated once per member";

  std::vector<LoadResult> refused;
  sys->node(0).load(w.base + 0x100, 8, [&](const LoadResult& r) { refused.push_back(r); });
  sys->node(0).atomic(TlpKind::FetchAdd, w.base + 0x200, Bytes(8, 1), [&](const LoadResult& r) { refused.push_back(r); });
  sys->node(0).store(empty.base, Bytes(64, 7));
  sys->node(0).store(stray.base, Bytes(64, 8));
  ASSERT_TRUE(drain());
  ASSERT_EQ(refused.size(), 2u);
  for (const auto& r : refused) {
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.status, CplStatus::UR);
  }
  EXPECT_EQ(sys->readCsr(0, regs::UNSUP_CNT), 2u);
  EXPECT_EQ(sys->fabric().stats().mcastDropped, 1u);
  EXPECT_EQ(sys->readCsr(1, regs::BAD_PKT_CNT), 1u);
  EXPECT_EQ(sys->node(1).memory().read(base(1) + 0x20000, 64), Bytes(64, 0));
  // And the group still works afterwards.
  sys->node(0).store(w.base + 0x2000, Bytes(32, 9));
  ASSERT_TRUE(drain());
  for (unsigned m : members) EXPECT_EQ(sys->node(m).memory().read(base(m) + 0x2000, 32), Bytes(32, 9));
}

// Multicast windows (NI replication): the sending NI sends one unicast copy per
// member, each to the member's own memory ID, so members need not agree on IDs or
// ranges, and the switch replicates nothing. Combining applies before replication.
// A group with no members refuses the writes (UNSUP_CNT); re-programming the group
// changes where later writes go.
TEST_P(SystemTest, ReplicatedMulticastSendsOneCopyPerMember) {
  const unsigned n = sys->size();
  std::vector<driver::GroupMember> members;
  auto base = [](unsigned m) { return 0x7000'0000ull + m * 0x10'0000ull; };
  for (unsigned m = 1; m < n; ++m) {
    const uint16_t memid = static_cast<uint16_t>(2 + m);  // a different memory ID at every member
    sys->setMemId(m, memid, MemRegion{true, base(m), 0x10000, true, true});
    members.push_back({m, memid});
  }
  if (members.size() > 4) members.resize(4);
  sys->setReplicatedGroup(0, 2, 0xC010, members);
  sys->setReplicatedGroup(0, 3, 0xC011, {});
  Window w;
  w.base = kApertureBase + 0x900000;
  w.size = 0x10000;
  w.mcastLid = 0xC010;
  w.memid = 1;  // replaced by each member's own
  w.combine = true;
  sys->setWindow(0, 7, w);
  Window empty = w;
  empty.base += 0x10000;
  empty.mcastLid = 0xC011;
  sys->setWindow(0, 8, empty);
  ASSERT_TRUE(drain());
  const uint32_t tx0 = sys->readCsr(0, regs::TX_PKTS);

  const Bytes data = randomBytes(1024);
  for (size_t off = 0; off < data.size(); off += 8)  // 8-byte stores, combined
    sys->node(0).store(w.base + 0x200 + off, Bytes(data.begin() + off, data.begin() + off + 8));
  ASSERT_TRUE(drain());
  for (const auto& m : members)
    EXPECT_EQ(sys->node(m.node).memory().read(base(m.node) + 0x200, data.size()), data) << "member " << m.node;
  EXPECT_EQ(sys->node(0).memory().read(base(0) + 0x200, data.size()), Bytes(data.size(), 0));
  EXPECT_EQ(sys->fabric().stats().mcastCopies, 0u) << "the switch replicates nothing";
  const unsigned packets = (1024 + GetParam().maxPayload - 1) / GetParam().maxPayload;
  EXPECT_EQ(sys->readCsr(0, regs::TX_PKTS) - tx0, members.size() * packets) << "one packet per member";

  sys->node(0).store(empty.base, Bytes(64, 7));
  ASSERT_TRUE(drain());
  EXPECT_EQ(sys->readCsr(0, regs::UNSUP_CNT), 1u);

  // Fewer members from now on: the dropped member keeps the old bytes.
  const auto dropped = members.back();
  members.pop_back();
  sys->setReplicatedGroup(0, 2, 0xC010, members);
  sys->node(0).store(w.base + 0x200, Bytes(32, 9));
  ASSERT_TRUE(drain());
  for (const auto& m : members) EXPECT_EQ(sys->node(m.node).memory().read(base(m.node) + 0x200, 32), Bytes(32, 9));
  EXPECT_EQ(sys->node(dropped.node).memory().read(base(dropped.node) + 0x200, 32), Bytes(data.begin(), data.begin() + 32));
}

// Every node writes random blocks to random peers through windows (both translation
// modes) and mixes in atomics on slots of its own, then reads everything back. The
// scoreboard is the reference NI plus a memory image per node; atomics return the old
// value the image held.
void SystemTest::randomTrafficMatchesScoreboard() {
  const unsigned n = sys->size();
  std::vector<RefNi> ref(n);
  for (auto& r : ref) r.maxPayload = GetParam().maxPayload;
  // Memory ID 1 + s at every node: 1 MiB at 0x1000'0000 + s MiB, source s's slot.
  for (unsigned d = 0; d < n; ++d)
    for (unsigned s = 0; s < n; ++s) {
      MemRegion m{true, 0x1000'0000ull + (uint64_t(s) << 20), uint64_t(1) << 20, true, true, true};
      sys->setMemId(d, 1 + s, m);
      ref[d].regions[1 + s] = m;
    }
  // Window d at node s: receiver translation into d's slot for s (memory ID 1 + s),
  // or sender translation to the same slot's physical address, alternating. No two
  // sources share a byte, so the image does not depend on the order in which sources arrive.
  for (unsigned s = 0; s < n; ++s)
    for (unsigned d = 0; d < n; ++d) {
      if (d == s) continue;
      Window w = windowTo(kApertureBase + (uint64_t(d) << 24) + (uint64_t(s) << 20), 1 << 20, d,
                          static_cast<uint16_t>(1 + s));
      w.rxXlate = (s + d) % 2 == 0;
      w.remote = 0x1000'0000ull + (uint64_t(s) << 20);
      w.atomic = true;
      w.combine = (s + 2 * d) % 3 != 0;  // most windows combine writes
      sys->setWindow(s, d, w);
      ref[s].setWindow(d, w);
    }
  ASSERT_TRUE(drain());
  std::vector<std::map<uint64_t, uint8_t>> expect(n);
  struct Access { unsigned src; uint64_t addr; size_t len; };
  std::vector<Access> written;
  unsigned atomicsDone = 0, atomicsIssued = 0;
  for (int i = 0; i < 80 * int(n); ++i) {
    const unsigned s = unsigned(rng() % n);
    unsigned d = unsigned(rng() % n);
    if (d == s) d = (d + 1) % n;
    if (rng() % 4 == 0) {
      // Atomic on one of 64 slots above the store area (only this source uses them).
      static const TlpKind kinds[] = {TlpKind::FetchAdd, TlpKind::Swap, TlpKind::Cas};
      const TlpKind k = kinds[rng() % 3];
      const unsigned op = 4u << (rng() % (k == TlpKind::Cas ? 3 : 2));
      const uint64_t addr = kApertureBase + (uint64_t(d) << 24) + (uint64_t(s) << 20) + 0xF0000 + 16 * (rng() % 64);
      const auto r = ref[s].route(addr, op, MemOp::Atomic);
      ASSERT_EQ(r.err, RefNi::SendErr::Ok);
      const auto l = ref[r.dstNode].land(r.rxXlate, r.memid, r.tlpAddr, op, MemOp::Atomic);
      ASSERT_EQ(l.err, RefNi::RecvErr::Ok);
      Bytes old(op);
      for (unsigned j = 0; j < op; ++j) {
        auto it = expect[r.dstNode].find(l.addr + j);
        old[j] = it == expect[r.dstNode].end() ? 0 : it->second;
      }
      Bytes operands = randomBytes(k == TlpKind::Cas ? 2 * op : op);
      if (k == TlpKind::Cas && rng() % 2) std::copy(old.begin(), old.end(), operands.begin());
      const Bytes after = atomicResult(makeAtomic(k, 0, 0, l.addr, operands), old);
      for (unsigned j = 0; j < op; ++j) expect[r.dstNode][l.addr + j] = after[j];
      ++atomicsIssued;
      sys->node(s).atomic(k, addr, operands, [&, old](const LoadResult& res) {
        EXPECT_TRUE(res.ok);
        EXPECT_EQ(res.data, old) << "atomic old value, seed " << seed;
        ++atomicsDone;
      });
      continue;
    }
    const size_t len = 4 * (1 + rng() % (GetParam().maxPayload > 256 ? 1200 : 200));
    const uint64_t addr = kApertureBase + (uint64_t(d) << 24) + (uint64_t(s) << 20) + (rng() % 0xF0000) / 4 * 4;
    const Bytes data = randomBytes(len);
    // A third of the blocks go as a run of 8-byte stores (what combining is for).
    const bool run = rng() % 3 == 0;
    for (size_t off = 0; off < len; off += run ? 8 : len)
      sys->node(s).store(addr + off, run ? Bytes(data.begin() + off, data.begin() + std::min(len, off + 8)) : data);
    // Scoreboard: split like the CPU splits, route and land through the reference.
    size_t off = 0;
    while (off < len) {
      const uint64_t a = addr + off;
      const size_t k = requestChunk(a, len - off, GetParam().maxPayload);
      const auto r = ref[s].route(a, k, true);
      ASSERT_EQ(r.err, RefNi::SendErr::Ok);
      const auto l = ref[r.dstNode].land(r.rxXlate, r.memid, r.tlpAddr, k, true);
      ASSERT_EQ(l.err, RefNi::RecvErr::Ok);
      for (size_t j = 0; j < k; ++j) expect[r.dstNode][l.addr + j] = data[off + j];
      off += k;
    }
    written.push_back({s, addr, len});
  }
  ASSERT_TRUE(drain()) << "system did not drain";
  EXPECT_EQ(atomicsDone, atomicsIssued);
  EXPECT_GT(atomicsIssued, 10 * n);
  for (unsigned d = 0; d < n; ++d)
    for (auto& [a, v] : expect[d]) ASSERT_EQ(sys->node(d).memory().get(a), v) << "node " << d << " addr " << std::hex << a;
  // Read back a sample through the same windows.
  unsigned ok = 0, issued = 0;
  for (size_t i = 0; i < written.size(); i += 3) {
    const Access& w = written[i];
    ++issued;
    sys->node(w.src).load(w.addr, w.len, [&, w](const LoadResult& r) {
      ASSERT_TRUE(r.ok);
      for (size_t j = 0; j < w.len; ++j) {
        const auto rt = ref[w.src].route(w.addr + j, 1, false);
        const auto l = ref[rt.dstNode].land(rt.rxXlate, rt.memid, rt.tlpAddr, 1, false);
        ASSERT_EQ(r.data[j], sys->node(rt.dstNode).memory().get(l.addr));
      }
      ++ok;
    });
  }
  ASSERT_TRUE(drain());
  EXPECT_EQ(ok, issued);
  for (unsigned s = 0; s < n; ++s) EXPECT_EQ(sys->node(s).stats().nullified, 0u);
}

TEST_P(SystemTest, RandomTrafficFromAllNodesMatchesScoreboard) { randomTrafficMatchesScoreboard(); }

// A root complex with ECRC generation on (issue 79): every TLP it sends carries a TLP
// digest. The NI does not check ECRC, so, as PCIe has such a receiver do, it ignores the
// digest: it takes it off what it passes on (TD cleared; the receiving node's codec
// refuses a digest) and counts nothing. Requests, memory's completions of the reads and
// atomics served for peers, register accesses.
TEST_P(SystemTest, TlpDigestsAreIgnoredAndTakenOff) {
  for (unsigned i = 0; i < sys->size(); ++i) sys->node(i).setDigest(true);
  randomTrafficMatchesScoreboard();
  const uint32_t limit = sys->readCsr(0, regs::RETX_LIMIT);
  sys->csrWriter(0)(regs::RETX_LIMIT, limit + 1);
  ASSERT_TRUE(drain());
  EXPECT_EQ(sys->readCsr(0, regs::RETX_LIMIT), limit + 1) << "a register write with a digest";
  for (unsigned i = 0; i < sys->size(); ++i) {
    EXPECT_EQ(sys->readCsr(i, regs::MALFORMED_CNT), 0u) << "node " << i;
    EXPECT_EQ(sys->readCsr(i, regs::NAK_RX_CNT), 0u) << "node " << i;
  }
}

TEST_P(SystemTest, BadInputHasDefinedOutcomes) {
  const unsigned n = sys->size();
  sys->setMemId(1, 0, MemRegion{true, 0x5000'0000ull, 0x4000, true, true});
  Window good = windowTo(kApertureBase, 0x4000, 1, 0);
  sys->setWindow(0, 0, good);
  Window noMem = good;
  noMem.base = kApertureBase + 0x10000;
  noMem.memid = 7;  // not valid at node 1
  sys->setWindow(0, 1, noMem);
  Window tooBig = good;
  tooBig.base = kApertureBase + 0x20000;
  tooBig.size = 0x10000;  // larger than the 16 KiB region behind it
  sys->setWindow(0, 2, tooBig);
  ASSERT_TRUE(drain());

  LoadResult missRead, memidRead;
  sys->node(0).load(kApertureBase + 0x900000, 8, [&](const LoadResult& r) { missRead = r; });  // no window
  sys->node(0).store(kApertureBase + 0x900000, Bytes(8, 1));                                 // no window
  sys->node(0).store(kApertureBase + 0x10000, Bytes(8, 2));                                  // bad memid
  sys->node(0).load(kApertureBase + 0x10000, 8, [&](const LoadResult& r) { memidRead = r; });
  sys->node(0).store(kApertureBase + 0x28000, Bytes(8, 3));                                  // out of bounds
  ASSERT_TRUE(drain());
  sys->fabric().corruptNext(0, 1);
  sys->node(0).store(kApertureBase + 0x100, Bytes(64, 4));                                   // corrupted on the way
  sys->node(0).store(kApertureBase + 0x200, Bytes(64, 5));                                   // fine
  ASSERT_TRUE(drain());

  EXPECT_FALSE(missRead.ok);
  EXPECT_EQ(missRead.status, CplStatus::UR);
  EXPECT_FALSE(memidRead.ok);
  EXPECT_EQ(memidRead.status, CplStatus::UR);
  EXPECT_EQ(sys->readCsr(0, regs::WIN_MISS_CNT), 2u);
  EXPECT_EQ(sys->readCsr(1, regs::MEMID_ERR_CNT), 2u);
  EXPECT_EQ(sys->readCsr(1, regs::BOUNDS_ERR_CNT), 1u);
  EXPECT_EQ(sys->readCsr(1, regs::CRC_ERR_CNT), 1u);
  EXPECT_GE(sys->readCsr(0, regs::NAK_RX_CNT), 3u) << "bad memid write, bounds, CRC (and the gap behind it)";
  EXPECT_GE(sys->readCsr(0, regs::RETX_CNT), 1u);
  EXPECT_EQ(sys->node(1).memory().read(0x5000'0100, 64), Bytes(64, 4)) << "the corrupted write was resent";
  EXPECT_EQ(sys->node(1).memory().read(0x5000'0200, 64), Bytes(64, 5));
  EXPECT_EQ(sys->fabric().stats().crcErrors, 1u);
  (void)n;
}


// The last write to a peer is lost on the way (its link is down for a moment): no
// packet behind it shows the gap, so only its resend timer brings it back, long after
// the models have gone quiet. It was confirmed at the sending NI at once; RETX_BUSY says
// it still awaits its ACK, and drain() (which reads RETX_BUSY, as a driver quiescing the
// NI would) returns only once it has landed.
TEST_P(SystemTest, LastWriteLostOnTheWayLandsBeforeTheSystemDrains) {
  const unsigned dst = sys->size() - 1;
  sys->setMemId(dst, 0, MemRegion{true, 0x5000'0000ull, 0x4000, true, true});
  Window w = windowTo(kApertureBase, 0x4000, dst, 0);
  w.confAt = ConfAt::SenderNi;
  sys->setWindow(0, 0, w);
  ASSERT_TRUE(drain());
  EXPECT_EQ(sys->readCsr(0, regs::RETX_BUSY), 0u);
  FabricFaults f;
  f.linkDown.push_back({0, sys->cycle(), sys->cycle() + 500});
  sys->fabric().setFaults(f);
  bool confirmed = false;
  LoadResult conf;
  sys->node(0).confirmedStore(kApertureBase + 0x40, Bytes(32, 7), [&](const LoadResult& r) {
    conf = r;
    confirmed = true;
  });
  ASSERT_TRUE(sys->runUntil([&] { return confirmed; }, 10000));
  EXPECT_TRUE(conf.ok);
  EXPECT_EQ(sys->readCsr(0, regs::RETX_BUSY), 1u) << "confirmed, not yet acknowledged";
  ASSERT_TRUE(drain());
  EXPECT_EQ(sys->fabric().stats().linkDownDrops, 1u) << "the write's packet was lost";
  EXPECT_EQ(sys->readCsr(0, regs::RETX_BUSY), 0u);
  EXPECT_EQ(sys->node(dst).memory().read(0x5000'0040, 32), Bytes(32, 7));
  EXPECT_EQ(sys->readCsr(0, regs::RETX_CNT), 1u) << "resent once, when its timer ran out";
}


// A TLP whose bytes disagree with its Length costs only itself (issue 79): counted
// MALFORMED at its NI and stomped or dropped, nothing of it lands, and the requests
// behind it to the same peer complete (the stomped packet's PktLen is right, so its
// receiver refuses it with NAK 0x61 and the sender does not resend it to the limit).
// Lengths: 4 or 12 bytes short, 4 bytes long, 4,154 bytes (a 64-byte Length), and
// over 8 KiB (where a 13-bit byte count wrapped); one into the registers.
TEST_P(SystemTest, MalformedTlpCostsOnlyItselfAndItsPeerKeepsServing) {
  const unsigned n = sys->size(), dst = n - 1;
  const uint64_t kBase = 0x5800'0000ull;
  sys->setMemId(dst, 4, MemRegion{true, kBase, 0x10000, true, true});
  Window w = windowTo(kApertureBase, 0x10000, dst, 4);
  sys->setWindow(0, 0, w);
  ASSERT_TRUE(drain());
  const uint32_t limitBefore = sys->readCsr(0, regs::RETX_LIMIT);
  const long deltas[] = {-4, -12, 4, 4154 - 80, 8192 + 16};
  unsigned k = 0, good = 0;
  for (long delta : deltas) {
    const uint64_t at = 0x1000 * (k + 1);
    Bytes tlp = encodeTlp(makeMWr(kCpuReqId, 0, w.base + at, randomBytes(64)));  // Length 16 DW
    tlp.resize(size_t(long(tlp.size()) + delta), 0x5A);
    sys->node(0).sendRawTlp(tlp);
    // Behind it: a confirmed store and a load to the same peer.
    const Bytes data = randomBytes(32);
    sys->node(0).confirmedStore(w.base + at + 0x800, data, [&](const LoadResult& r) { good += r.ok; });
    sys->node(0).load(w.base + at + 0x800, 32, [&, data](const LoadResult& r) { good += r.ok && r.data == data; });
    ++k;
  }
  {
    // Found by the host fuzzer: 18 bytes too long, with a hole in the beat where the
    // Length ends (so the bytes its keep marks fall short of that end), and byte enables
    // that keep it out of the combiner (which takes a malformed write out whole).
    const uint64_t at = 0x1000 * (k + 1);
    Bytes tlp = encodeTlp(makeMWr(kCpuReqId, 0, w.base + at, randomBytes(12)));  // 28 bytes
    tlp.resize(46, 0x5A);
    tlp[7] = 0x52;  // First BE 0x2, Last BE 0x5
    const unsigned bpb = sys->config().dataBits / 8;
    TlpShape hole;
    hole.holeBeat = static_cast<int>(28 / bpb);
    hole.holeKeep = uint64_t{0x75} << (24 % bpb);
    sys->node(0).sendRawTlp(tlp, {}, hole);
    const Bytes data = randomBytes(32);
    sys->node(0).confirmedStore(w.base + at + 0x800, data, [&](const LoadResult& r) { good += r.ok; });
    sys->node(0).load(w.base + at + 0x800, 32, [&, data](const LoadResult& r) { good += r.ok && r.data == data; });
    ++k;
  }
  // A register write whose Length is one DW, with 8 KiB of bytes behind it.
  Bytes csr = encodeTlp(makeMWr(kCpuReqId, 0, kCsrBase + regs::RETX_LIMIT, le32(77)));
  csr.resize(csr.size() + 8192, 0x11);
  sys->node(0).sendRawTlp(csr);
  ASSERT_TRUE(drain());
  EXPECT_EQ(good, 2 * k) << "requests behind a malformed TLP must complete";
  EXPECT_EQ(sys->readCsr(0, regs::MALFORMED_CNT), k + 1);
  EXPECT_EQ(sys->readCsr(0, regs::RETX_FAIL_CNT), 0u);
  EXPECT_EQ(sys->readCsr(0, regs::RETX_LIMIT), limitBefore) << "a malformed register write was applied";
  EXPECT_EQ(sys->readCsr(0, regs::STATUS) & (1u << 10), 0u) << "STATUS.retx_fail";
  // Nothing of the malformed writes landed (each aimed at the start of its page).
  for (unsigned i = 0; i < k; ++i)
    EXPECT_EQ(sys->node(dst).memory().read(kBase + 0x1000 * (i + 1), 64), Bytes(64, 0)) << "malformed write " << i;
  // The receiver still answers its own CPU and the sender.
  EXPECT_EQ(sys->readCsr(dst, regs::RETX_FAIL_CNT), 0u);
  const Bytes after = randomBytes(64);
  sys->node(0).store(w.base + 0x100, after);
  ASSERT_TRUE(drain());
  EXPECT_EQ(sys->node(dst).memory().read(kBase + 0x100, 64), after);
}

// Partitions (issue 79): P_KEY as in IB. Node 0 a full member of partition 1, nodes 1
// and 2 limited members of it, the rest in partition 2. A limited member reaches the
// full member; two limited members, or two partitions, do not: the receiver drops and
// counts every try, the sender gives the request up (CA for a load) and goes on.
TEST_P(SystemTest, PartitionKeysIsolateNodes) {
  const unsigned n = sys->size();
  if (n < 3) GTEST_SKIP() << "needs three nodes";
  const uint64_t kBase = 0x5900'0000ull;
  for (unsigned i = 0; i < n; ++i) {
    sys->node(i).csrWrite(regs::P_KEY, i == 0 ? 0x8001 : i <= 2 ? 0x0001 : 0x8002);
    sys->node(i).csrWrite(regs::RETX_LIMIT, 2);
    sys->node(i).setCompletionTimeout(20'000'000);  // the NI's answer, not the CPU's timeout
    sys->setMemId(i, 4, MemRegion{true, kBase, 0x10000, true, true});
  }
  Window to0 = windowTo(kApertureBase, 0x10000, 0, 4), to2 = windowTo(kApertureBase + 0x10000, 0x10000, 2, 4);
  sys->setWindow(1, 0, to0);
  sys->setWindow(1, 1, to2);
  if (n > 3) sys->setWindow(3, 0, to0);
  ASSERT_TRUE(drain());
  const Bytes a = randomBytes(64), b = randomBytes(64);
  unsigned ok0 = 0, ca2 = 0, ca3 = 0, answered = 0;
  std::string st2 = "none";
  sys->node(1).store(to0.base + 0x100, a);
  sys->node(1).load(to0.base + 0x100, 64, [&](const LoadResult& r) { ++answered; ok0 += r.ok && r.data == a; });
  sys->node(1).store(to2.base + 0x100, b);
  sys->node(1).load(to2.base + 0x200, 64, [&](const LoadResult& r) {
    ++answered;
    ca2 += !r.ok && r.status == CplStatus::CA;
    st2 = r.ok ? "ok" : r.timedOut ? "timed out" : "error " + std::to_string(int(r.status));
  });
  if (n > 3) sys->node(3).load(to0.base + 0x100, 64, [&](const LoadResult& r) {
    ++answered;
    ca3 += !r.ok && r.status == CplStatus::CA;
  });
  // The refused ones end when their resend timers run out (the models look idle meanwhile).
  ASSERT_TRUE(sys->runUntil([&] { return answered == (n > 3 ? 3u : 2u); }, 4'000'000));
  ASSERT_TRUE(drain());
  EXPECT_EQ(ok0, 1u) << "limited member to full member";
  EXPECT_EQ(sys->node(0).memory().read(kBase + 0x100, 64), a);
  EXPECT_EQ(ca2, 1u) << "limited member to limited member (status " << st2 << ")";
  EXPECT_EQ(sys->node(2).memory().read(kBase + 0x100, 64), Bytes(64, 0));
  EXPECT_GE(sys->readCsr(2, regs::PKEY_ERR_CNT), 2u);
  EXPECT_GT(sys->readCsr(1, regs::RETX_FAIL_CNT), 0u);
  if (n > 3) {
    EXPECT_EQ(ca3, 1u) << "another partition";
    EXPECT_GE(sys->readCsr(0, regs::PKEY_ERR_CNT), 1u);
  }
  // The sender's next request to the full member still lands.
  const Bytes c = randomBytes(32);
  sys->node(1).store(to0.base + 0x400, c);
  ASSERT_TRUE(drain());
  EXPECT_EQ(sys->node(0).memory().read(kBase + 0x400, 32), c);
}

// Every non-posted request the NI does not serve gets a completion (issue 79): I/O and
// configuration requests (3DW headers), and a memory read cut inside its header that
// still names its requester and tag. A root complex would otherwise wait for its
// completion timeout.
TEST_P(SystemTest, UnservedNonPostedRequestsGetUr) {
  auto threeDw = [](uint8_t ft, uint8_t tag, bool data) {
    Bytes b = {ft, 0, 0, 1, 0, 0, tag, 0x0F, 0x00, 0x00, 0x10, 0x00};
    if (data) b.insert(b.end(), {1, 2, 3, 4});
    return b;
  };
  const uint64_t before = sys->node(0).stats().cpuCompletions[0];
  const uint32_t unsupBefore = sys->readCsr(0, regs::UNSUP_CNT);
  const uint64_t afterCsrRead = sys->node(0).stats().cpuCompletions[0];
  sys->node(0).sendRawTlp(threeDw(0x02, 0x31, false));  // IORd
  sys->node(0).sendRawTlp(threeDw(0x42, 0x32, true));   // IOWr
  sys->node(0).sendRawTlp(threeDw(0x04, 0x33, false));  // CfgRd0
  sys->node(0).sendRawTlp(threeDw(0x05, 0x34, false));  // CfgRd1
  sys->node(0).sendRawTlp(threeDw(0x44, 0x35, true));   // CfgWr0
  sys->node(0).sendRawTlp(threeDw(0x45, 0x36, true));   // CfgWr1
  Bytes runt = encodeTlp(makeMRd(kCpuReqId, 0x37, kApertureBase, 64));
  runt.resize(12);  // cut inside its 16-byte header
  sys->node(0).sendRawTlp(runt);
  // Counted before drain(), whose RETX_BUSY reads are answered to CPU 0 too.
  auto urs = [&] { return sys->node(0).stats().cpuCompletions[0] - afterCsrRead; };
  ASSERT_TRUE(sys->runUntil([&] { return urs() >= 7; }, 100000));
  sys->runUntil([] { return false; }, 2000);  // and no more come
  EXPECT_EQ(urs(), 7u) << "one UR completion each";
  ASSERT_TRUE(drain());
  EXPECT_EQ(sys->readCsr(0, regs::UNSUP_CNT) - unsupBefore, 6u);
  EXPECT_GT(afterCsrRead, before);
}

// Requests with the 3 DW header (issue 79): the CPU's driver sends its requests below
// 4 GiB in the 3 DW form, as a root complex does, here through a window at 3 GiB (a
// 32-bit BAR): stores of every shape up to MaxPayload, loads of them back, a FetchAdd,
// a CAS and a confirmed store land and answer as their 4 DW forms do, and the register
// block sees none of them as unsupported. The NI's own requests to memory (the region
// is at 1.4 GiB) come in the 3 DW form too.
TEST_P(SystemTest, ThreeDwRequestsToAWindowBelow4GiBAreServed) {
  const unsigned dst = sys->size() - 1;
  const uint64_t kRegion = 0x5800'0000ull, kWin = 0xC000'0000ull;
  sys->setMemId(dst, 6, MemRegion{true, kRegion, 0x10000, true, true, true});
  Window w = windowTo(kWin, 0x10000, dst, 6);
  w.atomic = true;
  sys->setWindow(0, 4, w);
  ASSERT_TRUE(drain());
  unsigned memRequests = 0, wrongForm = 0;
  sys->node(dst).onMemoryRequest([&](const Tlp& t) {
    ++memRequests;
    wrongForm += t.threeDw != (t.addr < (uint64_t{1} << 32));
  });
  const uint32_t unsupBefore = sys->readCsr(0, regs::UNSUP_CNT);
  const uint32_t malformedBefore = sys->readCsr(0, regs::MALFORMED_CNT);
  std::vector<std::pair<uint64_t, Bytes>> stored;
  for (size_t len = 1, at = 0; len <= 260; len += 1 + len / 8) {
    const uint64_t off = at + len % 4;
    stored.push_back({off, randomBytes(len)});
    sys->node(0).store(kWin + off, stored.back().second);
    at = (off + len + 63) & ~uint64_t{63};
  }
  ASSERT_TRUE(drain());
  unsigned loaded = 0;
  for (const auto& [off, data] : stored) {
    EXPECT_EQ(sys->node(dst).memory().read(kRegion + off, data.size()), data) << "store of " << data.size();
    sys->node(0).load(kWin + off, data.size(), [&, d = data](const LoadResult& r) {
      EXPECT_TRUE(r.ok);
      EXPECT_EQ(r.data, d);
      ++loaded;
    });
  }
  ASSERT_TRUE(drain());
  EXPECT_EQ(loaded, stored.size());
  // An AtomicOp of each kind and a confirmed store, at 0xF000 of the region.
  sys->node(dst).memory().write(kRegion + 0xF000, le64(40));
  uint64_t oldAdd = 0, oldCas = 0;
  bool confirmed = false;
  sys->node(0).atomic(TlpKind::FetchAdd, kWin + 0xF000, le64(2), [&](const LoadResult& r) {
    EXPECT_TRUE(r.ok);
    oldAdd = getLe(r.data.data(), 8);
  });
  Bytes cas = le64(42);
  const Bytes swap = le64(7);
  cas.insert(cas.end(), swap.begin(), swap.end());
  sys->node(0).atomic(TlpKind::Cas, kWin + 0xF000, cas, [&](const LoadResult& r) {
    EXPECT_TRUE(r.ok);
    oldCas = getLe(r.data.data(), 8);
  });
  const Bytes conf = randomBytes(32);
  sys->node(0).confirmedStore(kWin + 0xF100, conf, [&](const LoadResult& r) { confirmed = r.ok; });
  ASSERT_TRUE(drain());
  EXPECT_EQ(oldAdd, 40u);
  EXPECT_EQ(oldCas, 42u);
  EXPECT_EQ(getLe(sys->node(dst).memory().read(kRegion + 0xF000, 8).data(), 8), 7u);
  EXPECT_TRUE(confirmed);
  EXPECT_EQ(sys->node(dst).memory().read(kRegion + 0xF100, 32), conf);
  EXPECT_EQ(sys->readCsr(0, regs::UNSUP_CNT), unsupBefore);
  EXPECT_EQ(sys->readCsr(0, regs::MALFORMED_CNT), malformedBefore);
  EXPECT_GT(memRequests, 2 * stored.size());
  EXPECT_EQ(wrongForm, 0u) << "the NI's requests: 3 DW below 4 GiB, 4 DW above";
}

// 10-bit tags (PCIe 4.0, issue 79): node 1's CPUs use them (tags 0x100-0x3FF), node 0's
// 8-bit ones. Every answer a CPU gets names its request's whole tag: register reads, a
// UR for a load outside every window and for an I/O read, a remote load, an atomic,
// and the confirmation of a confirmed store at each confirmation point. An answer with
// T9 or T8 lost would find no request waiting (the CPU counts it unexpected and its
// load never ends). The NI's non-posted requests to memory use its 8-bit tracker tags
// (a posted write keeps the requester's ID and tag, which nobody answers).
TEST_P(SystemTest, TenBitTagsComeBackInEveryAnswer) {
  const uint64_t kRegion = 0x6000'0000ull, kWin = 0x2'4000'0000ull;
  for (unsigned n = 0; n < 2; ++n) {
    sys->setMemId(n, 6, MemRegion{true, kRegion, 0x10000, true, true, true});
    for (unsigned k = 0; k < 4; ++k) {  // window 4: plain; 5-7: confirmed at the sender, receiver, memory
      Window w = windowTo(kWin + k * 0x10000, 0x10000, 1 - n, 6);
      w.atomic = true;
      if (k) {
        w.confirmAll = true;
        w.confAt = static_cast<ConfAt>(k - 1);
      }
      sys->setWindow(n, 4 + k, w);
    }
  }
  ASSERT_TRUE(drain());
  unsigned memTagTooWide = 0;
  for (unsigned n = 0; n < 2; ++n)
    sys->node(n).onMemoryRequest([&](const Tlp& t) { memTagTooWide += t.isNonPosted() && t.tag > 0xFF; });
  for (unsigned src = 0; src < 2; ++src) {
    SCOPED_TRACE(src ? "10-bit tags" : "8-bit tags");
    Node& cpu = sys->node(src);
    const unsigned dst = 1 - src;
    const uint64_t unexpectedBefore = cpu.stats().unexpectedCpl;
    EXPECT_EQ(sys->readCsr(src, regs::NODE_ID) & regs::NODE_ID_LID_MASK, src + 1) << "a register read";
    const uint32_t id = sys->readCsr(src, regs::ID);
    const Bytes data = randomBytes(48);
    sys->node(dst).memory().write(kRegion + 0x200, data);
    sys->node(dst).memory().write(kRegion + 0x300, le64(5));
    unsigned answered = 0, good = 0;
    auto expect = [&](const char* what, bool ok) {
      ++answered;
      good += ok;
      EXPECT_TRUE(ok) << what;
    };
    cpu.load(kWin + 0x200, 48, [&](const LoadResult& r) { expect("load", r.ok && r.data == data); });
    // A register read of bytes 2-3: its completion's Lower Address names byte 2 (the CPU
    // takes the data from there).
    cpu.load(kCsrBase + regs::ID + 2, 2, [&](const LoadResult& r) {
      expect("register read of bytes 2-3", r.ok && getLe(r.data.data(), 2) == id >> 16);
    });
    cpu.atomic(TlpKind::FetchAdd, kWin + 0x300, le64(3), [&](const LoadResult& r) {
      expect("FetchAdd", r.ok && getLe(r.data.data(), 8) == 5);
    });
    for (unsigned k = 1; k < 4; ++k)
      cpu.confirmedStore(kWin + k * 0x10000 + 0x400 + 64 * k, randomBytes(16),
                         [&](const LoadResult& r) { expect("confirmed store", r.ok); });
    cpu.load(kWin + 0x10'0000, 8, [&](const LoadResult& r) {
      expect("load outside every window: UR", !r.ok && r.status == CplStatus::UR);
    });
    ASSERT_TRUE(sys->runUntil([&] { return answered == 7; }, 200000)) << answered << " of 7 answered";
    EXPECT_EQ(good, 7u);
    // An I/O read (3 DW) under the CPU's largest tag: its UR completion carries it.
    const uint16_t ioTag = src ? 0x3FF : 0xFF;
    unsigned urTag = 0xFFFF;
    auto seen = [&](const Tlp& t) { if (t.isCompletion() && t.status == CplStatus::UR) urTag = t.tag; };
    cpu.onCpuCompletion(seen);
    Bytes ioRd = {0x02, static_cast<uint8_t>(src ? 0x88 : 0), 0, 1, 0, 0, 0xFF, 0x0F, 0x00, 0x00, 0x10, 0x00};
    cpu.sendRawTlp(ioRd);
    ASSERT_TRUE(sys->runUntil([&] { return urTag != 0xFFFF; }, 100000));
    EXPECT_EQ(urTag, ioTag);
    cpu.onCpuCompletion(nullptr);
    ASSERT_TRUE(drain());
    EXPECT_EQ(cpu.stats().unexpectedCpl - unexpectedBefore, 1u) << "the I/O read's UR only: no CPU waits for it";
  }
  EXPECT_EQ(memTagTooWide, 0u) << "the NI's non-posted requests to memory carry its 8-bit tags";
}

// Stores and loads of any length at any byte address (issue 78): every length that
// gives a TLP shape of its own (1 to MaxPayload + 4 bytes, every start offset in a
// DW), then longer ones that split into several TLPs, each once inside a 4 KiB page
// and once across a page boundary, through a window that combines writes and one
// that does not. The bytes must land exactly where they were addressed (the guard
// bytes around them untouched) and come back through the other window.
using UnalignedTest = SystemTest;

TEST_P(UnalignedTest, StoresAndLoadsOfEveryShapeLandByteExact) {
  const unsigned n = sys->size(), dst = n - 1;
  const uint64_t kRegion = 0x6000'0000ull, kSpan = 256ull << 20;
  sys->setMemId(dst, 6, MemRegion{true, kRegion, kSpan, true, true});
  const uint64_t winBase[2] = {kApertureBase + 0x1000'0000ull, kApertureBase + 0x2000'0000ull};
  for (unsigned c = 0; c < 2; ++c) {
    Window w = windowTo(winBase[c], kSpan, dst, 6);
    w.combine = c == 1;
    sys->setWindow(0, 4 + c, w);
  }
  ASSERT_TRUE(drain());
  // Every length up to 260 (every TLP shape at MaxPayload 256), then every 97th and
  // those around the powers of two (each meets every start offset), and random ones.
  // NI_UNALIGNED_ALL=1: every length 1-4096 (make sweep-unaligned, about 2 minutes).
  const bool all = tb::envU64("NI_UNALIGNED_ALL", 0) != 0;
  auto nearPowerOfTwo = [](size_t l) {
    for (size_t p = 512; p <= 4096; p *= 2)
      if (l + 1 >= p && l <= p + 1) return true;
    return false;
  };
  std::vector<size_t> lengths;
  for (size_t l = 1; l <= 4096; ++l)
    if (all || l <= 260 || l % 97 == 0 || nearPowerOfTwo(l)) lengths.push_back(l);
  for (int i = 0; i < 4; ++i) lengths.push_back(261 + rng() % (4096 - 261));
  struct Case { unsigned via; uint64_t off; Bytes data; };
  std::vector<Case> cases;
  uint64_t slot = 0;  // each case in an 8 KiB slot of its own
  for (size_t len : lengths)
    for (unsigned o = 0; o < 4; ++o)
      for (bool cross : {false, true}) {
        uint64_t start;
        if (cross) {
          // The page boundary 4k - o bytes after the start, inside the store.
          const uint64_t k = std::max<uint64_t>(1, (len / 2 + o) / 4);
          if (4 * k - o < 1 || 4 * k - o > len - 1) continue;
          start = 4096 - (4 * k - o);
        } else {
          if (len + o > 4096) continue;
          start = (len + o + 64 <= 4096 ? 64 : 0) + o;
        }
        // Short ones through both windows; of longer ones each case through one of them.
        for (unsigned via = 0; via < 2; ++via) {
          if (len > 260 && via != (len + o + cross) % 2) continue;
          cases.push_back(Case{via, slot * 8192 + start, randomBytes(len)});
          ++slot;
        }
      }
  ASSERT_LE(slot * 8192, kSpan);
  constexpr uint8_t kGuard = 0xA5;
  for (const Case& c : cases) {
    sys->node(dst).memory().write(kRegion + c.off - 8, Bytes(c.data.size() + 16, kGuard));
    sys->node(0).store(winBase[c.via] + c.off, c.data);
  }
  ASSERT_TRUE(drain());
  unsigned wrong = 0;
  for (const Case& c : cases) {
    const Bytes got = sys->node(dst).memory().read(kRegion + c.off - 8, c.data.size() + 16);
    Bytes want(8, kGuard);
    want.insert(want.end(), c.data.begin(), c.data.end());
    want.insert(want.end(), 8, kGuard);
    if (got != want && wrong++ < 5)
      ADD_FAILURE() << "store of " << c.data.size() << " B at offset 0x" << std::hex << c.off << std::dec
                    << (c.via ? " (combining window)" : "") << " landed wrong";
  }
  EXPECT_EQ(wrong, 0u) << "of " << cases.size() << " stores";
  // Read back through the window the store did not use, 8 loads in flight (at most
  // 17 TLPs each: the CPU has 256 tags).
  unsigned done = 0, bad = 0;
  for (const Case& c : cases) {
    sys->node(0).load(winBase[1 - c.via] + c.off, c.data.size(), [&, want = c.data, off = c.off](const LoadResult& r) {
      if ((!r.ok || r.data != want) && bad++ < 5) {
        size_t first = 0;
        while (first < want.size() && r.data[first] == want[first]) ++first;
        ADD_FAILURE() << "load of " << want.size() << " B at offset 0x" << std::hex << off << std::dec
                      << (r.ok ? " differs from byte " + std::to_string(first) : " failed, status " + std::to_string(int(r.status)));
      }
      ++done;
    });
    sys->runUntil([&] { return sys->node(0).outstandingLoads() <= 8; }, 1'000'000);
  }
  ASSERT_TRUE(drain());
  EXPECT_EQ(done, cases.size());
  EXPECT_EQ(bad, 0u) << "loads that came back wrong, of " << cases.size();
  EXPECT_EQ(sys->readCsr(0, regs::STATUS), 0u);
  EXPECT_EQ(sys->readCsr(dst, regs::STATUS), 0u);
}

// ---- Fabric faults (seeded from NI_SEED) and reliable delivery. Every node writes
// blocks to every peer through a window into its own slot there, and reads some
// back; the fabric loses, corrupts, duplicates and reorders packets or cuts a
// link. Nothing the NIs accepted may be lost or applied twice.
class FaultTest : public SystemTest {
 protected:
  static uint64_t slot(unsigned s) { return 0x3000'0000ull + (uint64_t(s) << 20); }
  // adjust: changes the window from s to d before it is set (e.g. its confirmation point).
  void meshWindows(bool atomics = false, const std::function<void(unsigned s, unsigned d, Window&)>& adjust = {}) {
    const unsigned n = sys->size();
    for (unsigned d = 0; d < n; ++d) {
      sys->node(d).onMemoryWrite([this, d](const Tlp& t, unsigned) { ++applied[{d, t.addr}]; });
      // Loads wait behind all the stores issued before them, resends included.
      sys->node(d).setCompletionTimeout(5'000'000);
      for (unsigned s = 0; s < n; ++s) {
        sys->setMemId(d, 1 + s, MemRegion{true, slot(s), 1 << 20, true, true, atomics});
        Window w = windowTo(kApertureBase + (uint64_t(d) << 20), 1 << 20, d, static_cast<uint16_t>(1 + s));
        w.atomic = atomics;
        if (adjust) adjust(s, d, w);
        if (s != d) sys->setWindow(s, d, w);
      }
    }
    ASSERT_TRUE(drain());
  }
  // Waits until every posted write has reached its memory. Posted writes leave the
  // CPU with nothing outstanding, so a fabric and nodes at rest can still hide a write
  // that waits in its sender for a resend; a read from every node to every peer does
  // not pass the writes before it, so its answer comes after all of them.
  bool fenceAndDrain() {
    const unsigned n = sys->size();
    for (unsigned s = 0; s < n; ++s)
      for (unsigned d = 0; d < n; ++d)
        if (s != d)
          sys->node(s).load(kApertureBase + (uint64_t(d) << 20), 4, [this](const LoadResult& r) { fenceFailed += !r.ok; });
    return drain() && fenceFailed == 0;
  }
  unsigned fenceFailed = 0;
  // Drop, corruption, duplication and reordering, each at `rate`.
  void everyFault(double rate) {
    FabricFaults f;
    f.seed = seed;
    f.drop = f.corrupt = f.duplicate = f.reorder = rate;
    sys->fabric().setFaults(f);
  }
  // `blocks` random blocks from every node to every peer, at distinct offsets; every
  // other round also reads back the block written the round before.
  void storeEverywhere(unsigned blocks, uint64_t base) {
    const unsigned n = sys->size();
    for (unsigned k = 0; k < blocks; ++k)
      for (unsigned s = 0; s < n; ++s)
        for (unsigned d = 0; d < n; ++d) {
          if (s == d) continue;
          const uint64_t off = base + k * 512;
          const Bytes b = randomBytes(64 + rng() % 448);
          sys->node(s).store(kApertureBase + (uint64_t(d) << 20) + off, b);
          written.push_back({s, d, off, b});
          tlps += tlpCount(slot(s) + off, b.size(), GetParam().maxPayload);
          if (k % 2 == 1) {
            const Written& prev = written[written.size() - 1 - (n - 1) * n];
            ++loads;
            sys->node(s).load(kApertureBase + (uint64_t(d) << 20) + prev.off, std::min<size_t>(prev.data.size(), 256),
                              [this, want = prev.data](const LoadResult& r) {
                                if (!r.ok) {
                                  ++loadErrors;
                                  std::cerr << "load failed: status " << int(r.status) << (r.timedOut ? " (CPU timeout)" : "")
                                            << " at cycle " << sys->cycle() << "\n";
                                }
                                else if (!std::equal(r.data.begin(), r.data.end(), want.begin())) ++loadsWrong;
                              });
          }
        }
  }
  // `writes` rounds of confirmed writes (4 to 256 bytes) from every node to every peer at
  // base + 256 k, recorded for expectNothingLostNothingTwice; `done` gets each answer
  // with the source and the CPU address.
  void confirmEverywhere(unsigned writes, uint64_t base,
                         const std::function<void(unsigned s, uint64_t addr, const LoadResult&)>& done) {
    const unsigned n = sys->size();
    for (unsigned k = 0; k < writes; ++k)
      for (unsigned s = 0; s < n; ++s)
        for (unsigned d = 0; d < n; ++d) {
          if (s == d) continue;
          const uint64_t off = base + k * 256;
          const uint64_t a = kApertureBase + (uint64_t(d) << 20) + off;
          const Bytes b = randomBytes(4 * (1 + rng() % 64));
          written.push_back({s, d, off, b});
          ++tlps;
          sys->node(s).confirmedStore(a, b, [done, s, a](const LoadResult& r) { done(s, a, r); });
        }
  }
  // MWr TLPs the CPU splits a store into.
  static unsigned tlpCount(uint64_t addr, size_t len, size_t maxPayload) {
    unsigned c = 0;
    while (len) {
      const size_t chunk = requestChunk(addr, len, maxPayload);
      addr += chunk;
      len -= chunk;
      ++c;
    }
    return c;
  }
  // Every block landed whole, every write TLP was applied once, every load got its data.
  void expectNothingLostNothingTwice() {
    expectEveryBlockLandedOnce();
    uint64_t total = 0;
    for (const auto& [k, c] : applied) total += c;
    EXPECT_EQ(total, tlps) << "seed " << seed;
  }
  // The same without counting TLPs (combined writes reach memory as fewer, larger ones).
  void expectEveryBlockLandedOnce() {
    for (const auto& w : written)
      EXPECT_EQ(sys->node(w.d).memory().read(slot(w.s) + w.off, w.data.size()), w.data)
          << w.s << "->" << w.d << " +" << w.off << " seed " << seed;
    for (const auto& [k, c] : applied)
      EXPECT_EQ(c, 1u) << "write to node " << k.first << " at 0x" << std::hex << k.second << " applied " << c << " times";
    EXPECT_EQ(loadErrors, 0u);
    EXPECT_EQ(loadsWrong, 0u);
    EXPECT_EQ(sumCsr(regs::RETX_FAIL_CNT), 0u);
  }
  uint64_t sumCsr(uint32_t off) {
    uint64_t t = 0;
    for (unsigned i = 0; i < sys->size(); ++i) t += sys->readCsr(i, off);
    return t;
  }
  struct Written {
    unsigned s, d;
    uint64_t off;
    Bytes data;
  };
  std::vector<Written> written;
  std::map<std::pair<unsigned, uint64_t>, unsigned> applied;
  uint64_t tlps = 0, loads = 0, loadErrors = 0, loadsWrong = 0;
};

TEST_P(FaultTest, CorruptedPacketsAreCaughtAndResent) {
  meshWindows();
  FabricFaults f;
  f.seed = seed;
  f.corrupt = 0.1;  // one random bit anywhere in the packet, LRH included (its length field too)
  sys->fabric().setFaults(f);
  storeEverywhere(20, 0);
  ASSERT_TRUE(drain()) << "the NIs must not hang on corrupted packets";
  const auto& st = sys->fabric().stats();
  EXPECT_GT(st.corrupted, 2u);
  EXPECT_EQ(sumCsr(regs::CRC_ERR_CNT), st.crcErrors) << "every bad packet delivered is caught, once";
  EXPECT_EQ(sumCsr(regs::RX_PKTS), st.delivered);
  EXPECT_GT(sumCsr(regs::RETX_CNT), 0u);
  expectNothingLostNothingTwice();
}

TEST_P(FaultTest, DropsDuplicatesAndReorderingLoseNothingAndApplyNothingTwice) {
  meshWindows();
  FabricFaults f;
  f.seed = seed;
  f.drop = 0.05;
  f.duplicate = 0.05;
  f.reorder = 0.1;
  sys->fabric().setFaults(f);
  storeEverywhere(20, 0);
  ASSERT_TRUE(drain());
  const auto& st = sys->fabric().stats();
  EXPECT_GT(st.faultDrops, 0u);
  EXPECT_GT(st.duplicates, 0u);
  EXPECT_EQ(sumCsr(regs::RX_PKTS), st.delivered) << "duplicates arrive as packets too";
  EXPECT_EQ(sumCsr(regs::CRC_ERR_CNT), 0u);
  EXPECT_GT(sumCsr(regs::RETX_CNT), 0u);
  EXPECT_GT(sumCsr(regs::DUP_CNT), 0u);
  expectNothingLostNothingTwice();
}

// Streams of contiguous 8-byte stores through combining windows travel as a full
// packet and then continuations; with drops, corruption, duplicates and reordering
// (go-back-N resends start in the middle of runs) every byte lands once, in place.
TEST_P(FaultTest, ContinuedStoreStreamsSurviveFaults) {
  meshWindows(false, [](unsigned, unsigned, Window& w) { w.combine = true; });
  everyFault(0.02);
  const unsigned n = sys->size();
  for (unsigned k = 0; k < 3; ++k)
    for (unsigned s = 0; s < n; ++s)
      for (unsigned d = 0; d < n; ++d) {
        if (s == d) continue;
        const uint64_t off = k * 4096 + 8 * (rng() % 64);
        const Bytes b = randomBytes(8 * (64 + rng() % 128));
        for (size_t i = 0; i < b.size(); i += 8)
          sys->node(s).store(kApertureBase + (uint64_t(d) << 20) + off + i, Bytes(b.begin() + i, b.begin() + i + 8));
        written.push_back({s, d, off, b});
      }
  ASSERT_TRUE(fenceAndDrain());
  expectEveryBlockLandedOnce();
  EXPECT_GT(sys->fabric().stats().continuations, 10u * n) << "runs must travel as continuations";
}

// Every node fetch-adds to its counter at every peer, many in flight, while the fabric
// drops, corrupts, duplicates and reorders: each add takes effect once, and each
// returns a distinct old value (a resent atomic whose response was lost gets its
// first result back from the target's ni_amo_cache; it does not add again).
TEST_P(FaultTest, AtomicsTakeEffectOnceAndReturnTheirFirstResult) {
  const unsigned n = sys->size();
  meshWindows(true);
  everyFault(0.05);
  constexpr unsigned kAdds = 24;
  constexpr uint64_t kCounter = 0x8000;
  std::map<std::pair<unsigned, unsigned>, std::vector<uint64_t>> olds;  // (source, target): old values
  unsigned failed = 0;
  for (unsigned k = 0; k < kAdds; ++k)
    for (unsigned s = 0; s < n; ++s)
      for (unsigned d = 0; d < n; ++d) {
        if (s == d) continue;
        sys->node(s).atomic(TlpKind::FetchAdd, kApertureBase + (uint64_t(d) << 20) + kCounter, Bytes{1, 0, 0, 0, 0, 0, 0, 0},
                            [&, s, d](const LoadResult& r) {
                              if (!r.ok) ++failed;
                              else olds[{s, d}].push_back(getLe(r.data.data(), 8));
                            });
      }
  ASSERT_TRUE(drain());
  EXPECT_EQ(failed, 0u) << "seed " << seed;
  for (unsigned s = 0; s < n; ++s)
    for (unsigned d = 0; d < n; ++d) {
      if (s == d) continue;
      EXPECT_EQ(getLe(sys->node(d).memory().read(slot(s) + kCounter, 8).data(), 8), kAdds)
          << s << "->" << d << ": every add once, seed " << seed;
      std::vector<uint64_t> o = olds[{s, d}];
      std::sort(o.begin(), o.end());
      std::vector<uint64_t> want(kAdds);
      std::iota(want.begin(), want.end(), 0);
      EXPECT_EQ(o, want) << s << "->" << d << ": each add returns its own old value, seed " << seed;
    }
  EXPECT_GT(sys->fabric().stats().faultDrops, 0u);
  EXPECT_GT(sumCsr(regs::RETX_CNT), 0u);
  EXPECT_EQ(sumCsr(regs::RETX_FAIL_CNT), 0u);
}

// Confirmed writes (DMWr) between every pair, each pair's window with one of the
// three confirmation points, while the fabric drops, corrupts, duplicates and
// reorders: every write is applied once, and its CPU gets exactly one confirmation,
// naming the address it wrote.
TEST_P(FaultTest, ConfirmedWritesAreAppliedAndConfirmedOnceAtEachPoint) {
  const unsigned n = sys->size();
  meshWindows(false, [](unsigned s, unsigned d, Window& w) { w.confAt = static_cast<ConfAt>((s + d) % 3); });
  everyFault(0.05);
  constexpr unsigned kWrites = 12;
  std::map<std::pair<unsigned, uint64_t>, unsigned> confirmed;  // (source, CPU address) -> confirmations
  unsigned failed = 0, wrong = 0;
  confirmEverywhere(kWrites, 0x10000, [&](unsigned s, uint64_t a, const LoadResult& r) {
    if (!r.ok) ++failed;
    else if (getLe(r.data.data(), 8) != a) ++wrong;
    ++confirmed[{s, a}];
  });
  ASSERT_TRUE(fenceAndDrain());  // writes the sending NI confirmed may still wait for a resend
  EXPECT_EQ(failed, 0u) << "seed " << seed;
  EXPECT_EQ(wrong, 0u) << "each confirmation names its write's address, seed " << seed;
  EXPECT_EQ(confirmed.size(), size_t{kWrites} * n * (n - 1));
  for (const auto& [k, c] : confirmed) EXPECT_EQ(c, 1u) << "confirmations of 0x" << std::hex << k.second << " from " << k.first;
  EXPECT_GT(sumCsr(regs::CONF_CNT), 0u);
  expectNothingLostNothingTwice();
}

// Claim 18 across the system: writes the receiving NI confirmed reach memory even when
// memory loses some of them, because the NI keeps each until memory confirms it.
TEST_P(FaultTest, WritesTheReceiverConfirmedSurviveAMemoryThatLosesSome) {
  const unsigned n = sys->size();
  meshWindows(false, [](unsigned, unsigned, Window& w) { w.confAt = ConfAt::ReceiverNi; });
  everyFault(0.02);
  for (unsigned i = 0; i < n; ++i) {
    sys->node(i).setMemoryLosesConfirmedWrites(0.2);
    sys->node(i).csrWrite(regs::MEM_TIMEOUT, 600);
    sys->node(i).csrWrite(regs::MEM_LIMIT, 16);
  }
  constexpr unsigned kWrites = 30;
  unsigned failed = 0, confirmations = 0;
  confirmEverywhere(kWrites, 0x20000, [&](unsigned, uint64_t, const LoadResult& r) {
    ++confirmations;
    failed += !r.ok;
  });
  ASSERT_TRUE(drain());
  EXPECT_EQ(confirmations, kWrites * n * (n - 1));
  EXPECT_EQ(failed, 0u) << "seed " << seed;
  // The system looks idle while the NIs wait for memory: give their timers the time
  // to run out (a copy can be lost again).
  auto memLost = [&] {
    uint64_t l = 0;
    for (unsigned i = 0; i < n; ++i) l += sys->node(i).stats().memLost;
    return l;
  };
  for (int round = 0; round < 40 && sumCsr(regs::MEM_REISSUE_CNT) < memLost(); ++round) {
    sys->runUntil([] { return false; }, 1000);
    ASSERT_TRUE(drain());
  }
  const uint64_t lost = memLost();
  EXPECT_GT(lost, 3u) << "memory must lose some, seed " << seed;
  EXPECT_EQ(sumCsr(regs::MEM_REISSUE_CNT), lost) << "one issue again per write memory lost";
  EXPECT_EQ(sumCsr(regs::MEM_FAIL_CNT), 0u);
  expectNothingLostNothingTwice();
}

TEST_P(FaultTest, LinkDownForAWhileLosesNothing) {
  const unsigned n = sys->size();
  meshWindows();
  FabricFaults f;
  const uint64_t now = sys->fabric().now();
  f.linkDown.push_back({n - 1, now, now + 3000});
  sys->fabric().setFaults(f);
  storeEverywhere(4, 0);
  ASSERT_TRUE(drain());
  EXPECT_GT(sys->fabric().stats().linkDownDrops, 0u);
  EXPECT_GT(sumCsr(regs::RETX_CNT), 0u);
  expectNothingLostNothingTwice();
}

TEST_P(FaultTest, LinkCutForGoodFailsItsRequestsWithinTheBound) {
  const unsigned n = sys->size();
  meshWindows();
  constexpr uint32_t kTimeout = 1000, kLimit = 3;
  for (unsigned i = 0; i < n; ++i) {
    sys->node(i).csrWrite(regs::RETX_TIMEOUT, kTimeout);
    sys->node(i).csrWrite(regs::RETX_LIMIT, kLimit);
  }
  FabricFaults f;
  f.linkDown.push_back({n - 1, sys->fabric().now(), UINT64_MAX});
  sys->fabric().setFaults(f);
  // Reads from every other node into the cut one: each ends in an error completion
  // no later than (limit + 1) x timeout after it left, plus queueing.
  unsigned failed = 0, answered = 0;
  uint64_t latest = 0;
  const uint64_t start = sys->fabric().now();
  for (unsigned s = 0; s + 1 < n; ++s)
    for (unsigned k = 0; k < 4; ++k)
      sys->node(s).load(kApertureBase + (uint64_t(n - 1) << 20) + 64 * k, 64, [&](const LoadResult& r) {
        ++answered;
        failed += !r.ok && r.status == CplStatus::CA;
        latest = std::max(latest, sys->fabric().now());
      });
  written.clear();
  storeEverywhere(2, 0x10000);
  ASSERT_TRUE(drain());
  EXPECT_EQ(answered, 4 * (n - 1));
  EXPECT_EQ(failed, 4 * (n - 1)) << "Completer Abort for every read into the cut node";
  EXPECT_LE(latest - start, uint64_t{kTimeout} * (kLimit + 1) + 4 * kTimeout) << "error completions within the bound";
  EXPECT_GT(sumCsr(regs::RETX_FAIL_CNT), 0u);
  EXPECT_TRUE(sys->readCsr(0, regs::STATUS) & regs::STATUS_RETX_FAIL_MASK);
  // Everyone else carries on.
  for (const auto& w : written)
    if (w.s != n - 1 && w.d != n - 1)
      EXPECT_EQ(sys->node(w.d).memory().read(slot(w.s) + w.off, w.data.size()), w.data) << w.s << "->" << w.d;
}

// The soak (make soak runs 1,000,000 operations) in short: 8 nodes, the soak's fault
// rates, random confirmed writes at all three points, reads and fetch-adds, each
// checked by the scoreboard in sim/soak.cpp.
TEST(SoakTest, ShortSoakAtTheSoakFaultRatesLosesNothing) {
  const uint64_t seed = tb::envU64("NI_SEED", 1);
  SystemConfig c;
  c.nodes = 8;
  c.seed = seed;
  c.hostStall = 0.1;
  c.faults = soakFaults(seed);
  System sys(c);
  sys.reset();
  SoakConfig sc;
  sc.ops = 4000;
  sc.seed = seed;
  const SoakResult r = runSoak(sys, sc);
  EXPECT_TRUE(r.drained) << "seed " << seed;
  EXPECT_EQ(r.writes + r.reads + r.atomics, sc.ops);
  EXPECT_GT(r.writes, sc.ops / 3);
  EXPECT_GT(r.atomics, sc.ops / 10);
  EXPECT_EQ(r.failed, 0u) << "seed " << seed;
  EXPECT_EQ(r.lost, 0u) << "seed " << seed;
  EXPECT_EQ(r.appliedTwice, 0u) << "seed " << seed;
  EXPECT_EQ(r.corrupted, 0u) << "seed " << seed;
  EXPECT_EQ(r.confirmedTwice, 0u) << "seed " << seed;
  EXPECT_EQ(r.unconfirmed, 0u) << "seed " << seed;
  EXPECT_EQ(r.wrongAddress, 0u) << "seed " << seed;
  EXPECT_GT(sys.fabric().stats().faultDrops, 10u) << "the faults must have hit";
  EXPECT_FALSE(sys.rtlError());
  if (HasFailure()) std::cerr << "[ reproduce ] NI_SEED=" << seed << "\n";
}

std::string paramName(const ::testing::TestParamInfo<Param>& i) {
  return tb::systemParamName(i.param.nodes, i.param.width, i.param.maxPayload, i.param.config);
}

INSTANTIATE_TEST_SUITE_P(Systems, SystemTest,
                         ::testing::Values(Param{2, 64}, Param{4, 64}, Param{8, 64}, Param{4, 128}, Param{4, 256},
                                           Param{4, 512}, Param{4, 64, 4096}, Param{4, 64, 256, "small"}),
                         paramName);
INSTANTIATE_TEST_SUITE_P(Systems, UnalignedTest,
                         ::testing::Values(Param{2, 64}, Param{2, 128}, Param{2, 256}, Param{2, 512},
                                           Param{2, 64, 4096}, Param{2, 64, 256, "small"}),
                         paramName);
INSTANTIATE_TEST_SUITE_P(Systems, FaultTest,
                         ::testing::Values(Param{2, 64}, Param{4, 64}, Param{4, 512}, Param{4, 64, 256, "small"}),
                         paramName);

}  // namespace

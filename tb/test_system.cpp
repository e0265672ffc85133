// SPDX-License-Identifier: Apache-2.0
// Multi-node system tests: N nodes, each a CPU + memory + root complex with a
// Verilated NI, joined by the crossbar fabric model.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "ni_regs.hpp"
#include "system.hpp"
#include "verilated_fixture.hpp"

using namespace ni;

namespace {

struct Param {
  unsigned nodes;
  unsigned width;
};

class SystemTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    seed = tb::envU64("NI_SEED", 1);
    rng.seed(seed);
    SystemConfig c;
    c.nodes = GetParam().nodes;
    c.dataBits = GetParam().width;
    c.seed = seed;
    c.hostStall = 0.2;
    sys = std::make_unique<System>(c);
    sys->reset();
  }
  void TearDown() override {
    EXPECT_FALSE(sys->rtlError()) << "an RTL assertion failed";
    if (HasFailure()) std::cerr << "[ reproduce ] NI_SEED=" << seed << "\n";
  }

  bool drain() { return sys->drain(1'000'000); }
  Bytes randomBytes(size_t n) {
    Bytes b(n);
    for (auto& x : b) x = static_cast<uint8_t>(rng());
    return b;
  }

  uint64_t seed = 1;
  std::mt19937_64 rng;
  std::unique_ptr<System> sys;
};

TEST_P(SystemTest, StoreThroughWindowLandsInRemoteMemory) {
  const unsigned n = sys->size();
  // Receiver-side translation: node 0 -> node n-1, memory ID 4.
  sys->setMemId(n - 1, 4, MemRegion{true, 0x2000'0000ull, 0x10000, true, true});
  Window w;
  w.base = kApertureBase;
  w.size = 0x10000;
  w.dstNode = n - 1;
  w.memid = 4;
  sys->setWindow(0, 0, w);
  // Sender-side translation: node n-1 -> node 0 at 0x3000'0000.
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

TEST_P(SystemTest, RemoteReadReturnsData) {
  const unsigned n = sys->size();
  sys->setMemId(1, 0, MemRegion{true, 0x4000'0000ull, 0x100000, true, false});
  Window w;
  w.base = kApertureBase + 0x100000;
  w.size = 0x100000;
  w.dstNode = 1;
  w.memid = 0;
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
  Window w;
  w.base = kApertureBase + 0x200000;
  w.size = 0x1000;
  w.dstNode = 0;
  w.memid = 5;
  w.atomic = true;
  for (unsigned s = 0; s < n; ++s) sys->setWindow(s, 3, w);
  ASSERT_TRUE(drain());
  const unsigned perNode = 40, total = n * perNode;
  std::vector<uint64_t> seen;
  for (unsigned k = 0; k < perNode; ++k)
    for (unsigned s = 0; s < n; ++s)
      sys->node(s).atomic(TlpKind::FetchAdd, w.base + 0x40, Bytes{1, 0, 0, 0, 0, 0, 0, 0}, [&](const LoadResult& r) {
        ASSERT_TRUE(r.ok);
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
    Window w;
    w.base = kApertureBase + 0x300000;
    w.size = 0x1000;
    w.dstNode = (s + 1) % n;
    w.memid = 6;
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
  Window w;
  w.base = kApertureBase;
  w.size = 0x10000;
  w.dstNode = 1;
  w.memid = 0;
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

TEST_P(SystemTest, RandomTrafficFromAllNodesMatchesScoreboard) {
  // Every node writes random blocks to random peers through windows (both
  // translation modes) and mixes in atomics on slots of its own, then reads
  // everything back. The scoreboard is the reference NI plus a memory image per
  // node; atomics return the old value the image held.
  const unsigned n = sys->size();
  std::vector<RefNi> ref(n);
  // Memory ID 1 + s at every node: 1 MiB at 0x1000'0000 + s MiB, source s's slot.
  for (unsigned d = 0; d < n; ++d)
    for (unsigned s = 0; s < n; ++s) {
      MemRegion m{true, 0x1000'0000ull + (uint64_t(s) << 20), uint64_t(1) << 20, true, true, true};
      sys->setMemId(d, 1 + s, m);
      ref[d].regions[1 + s] = m;
    }
  // Window d at node s: receiver translation into d's slot for s (memory ID 1 + s),
  // or sender translation to 0x2000'0000 + s MiB, alternating. No two sources share
  // a byte, so the image does not depend on the order in which sources arrive.
  for (unsigned s = 0; s < n; ++s)
    for (unsigned d = 0; d < n; ++d) {
      if (d == s) continue;
      Window w;
      w.base = kApertureBase + (uint64_t(d) << 24) + (uint64_t(s) << 20);
      w.size = 1 << 20;
      w.dstNode = d;
      w.rxXlate = (s + d) % 2 == 0;
      w.memid = static_cast<uint16_t>(1 + s);
      w.remote = 0x2000'0000ull + (uint64_t(s) << 20);
      w.atomic = true;
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
    const size_t len = 4 * (1 + rng() % 200);
    const uint64_t addr = kApertureBase + (uint64_t(d) << 24) + (uint64_t(s) << 20) + (rng() % 0xF0000) / 4 * 4;
    const Bytes data = randomBytes(len);
    sys->node(s).store(addr, data);
    // Scoreboard: split like the CPU splits, route and land through the reference.
    size_t off = 0;
    while (off < len) {
      const uint64_t a = addr + off;
      const size_t k = std::min<size_t>({len - off, kMaxPayload, 4096 - (a & 0xFFF)});
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

TEST_P(SystemTest, BadInputHasDefinedOutcomes) {
  const unsigned n = sys->size();
  sys->setMemId(1, 0, MemRegion{true, 0x5000'0000ull, 0x4000, true, true});
  Window good;
  good.base = kApertureBase;
  good.size = 0x4000;
  good.dstNode = 1;
  good.memid = 0;
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
  EXPECT_EQ(sys->readCsr(0, regs::NAK_RX_CNT), 3u) << "bad memid write, bounds, CRC";
  EXPECT_EQ(sys->node(1).memory().read(0x5000'0100, 64), Bytes(64, 0)) << "the corrupted write did not land";
  EXPECT_EQ(sys->node(1).memory().read(0x5000'0200, 64), Bytes(64, 5));
  EXPECT_EQ(sys->fabric().stats().crcErrors, 1u);
  (void)n;
}

std::string paramName(const ::testing::TestParamInfo<Param>& i) {
  return "N" + std::to_string(i.param.nodes) + "_W" + std::to_string(i.param.width);
}

INSTANTIATE_TEST_SUITE_P(Systems, SystemTest,
                         ::testing::Values(Param{2, 64}, Param{4, 64}, Param{8, 64}, Param{4, 128}, Param{4, 256}, Param{4, 512}),
                         paramName);

}  // namespace

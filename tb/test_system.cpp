// SPDX-License-Identifier: Apache-2.0
// Multi-node system tests: N nodes, each a CPU + memory + root complex with a
// Verilated NI, joined by the crossbar fabric model.
#include <gtest/gtest.h>

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
  // translation modes), then reads them back. The scoreboard is the reference
  // NI plus a memory image per node.
  const unsigned n = sys->size();
  std::vector<RefNi> ref(n);
  for (unsigned d = 0; d < n; ++d) {
    MemRegion m{true, 0x1000'0000ull, uint64_t(16) << 20, true, true};
    sys->setMemId(d, 1, m);
    for (auto& r : ref) r.regions[1] = m;
  }
  // Window d at node s: receiver translation into d's region slot s (1 MiB each), or
  // sender translation to 0x2000'0000 + s MiB, alternating.
  for (unsigned s = 0; s < n; ++s)
    for (unsigned d = 0; d < n; ++d) {
      if (d == s) continue;
      Window w;
      w.base = kApertureBase + (uint64_t(d) << 24) + (uint64_t(s) << 20);
      w.size = 1 << 20;
      w.dstNode = d;
      w.rxXlate = (s + d) % 2 == 0;
      w.memid = 1;
      w.remote = 0x2000'0000ull + (uint64_t(s) << 20);
      sys->setWindow(s, d, w);
      ref[s].setWindow(d, w);
    }
  ASSERT_TRUE(drain());
  std::vector<std::map<uint64_t, uint8_t>> expect(n);
  struct Access { unsigned src; uint64_t addr; size_t len; };
  std::vector<Access> written;
  for (int i = 0; i < 60 * int(n); ++i) {
    const unsigned s = unsigned(rng() % n);
    unsigned d = unsigned(rng() % n);
    if (d == s) d = (d + 1) % n;
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
                         ::testing::Values(Param{2, 64}, Param{4, 64}, Param{8, 64}, Param{4, 128}, Param{4, 256}),
                         paramName);

}  // namespace

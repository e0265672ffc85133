// SPDX-License-Identifier: Apache-2.0
// Unit test of the board's root-complex model, ni_board_host, alone: random TLPs as
// the NI would send them (writes with byte enables, reads, confirmed writes, atomics,
// requests outside memory, nullified writes, completions for the CPU) and random CPU
// requests and own-memory accesses, with random idles, back-pressure and request
// room. Every TLP the model sends is decoded with the golden codec (sim/tlp.*) and
// compared with what a byte model of the memory expects.
#include <gtest/gtest.h>

#include <deque>

#include "Vni_board_host.h"
#include "axis_bfm.hpp"
#include "tlp.hpp"
#include "verilated_fixture.hpp"

using namespace ni;

namespace {

constexpr unsigned kMemBytes = 16384;  // the module's default MemBytes
constexpr unsigned kMaxPayload = 256;
constexpr uint16_t kNi = 0x0100, kCpu = 0x0000;

class BoardHostTest : public tb::VerilatedTest {
 protected:
  Bytes randomBytes(size_t n) {
    Bytes b(n);
    for (auto& x : b) x = static_cast<uint8_t>(rng()());
    return b;
  }
  // Applies a write to the byte model as its byte enables say.
  void apply(const Tlp& t) {
    const size_t n = t.data.size();
    for (size_t i = 0; i < n; ++i) {
      const size_t dw = i / 4;
      const uint8_t be = dw == 0 ? t.firstBe : dw == n / 4 - 1 ? t.lastBe : 0xF;
      if (be >> (i % 4) & 1) mem_[t.addr + i] = t.data[i];
    }
  }
  std::vector<uint8_t> mem_ = std::vector<uint8_t>(kMemBytes, 0);  // Verilated RAM starts at 0
};

TEST_F(BoardHostTest, ServesTheNiAndCarriesTheCpuAgainstAByteModel) {
  tb::VlClocked<Vni_board_host> dut(ctx(), "host");
  attach(&dut);
  reset();
  auto& m = dut.m;
  auto& r = rng();
  struct Out { Bytes bytes; bool nullify; };
  std::deque<Out> fromNi;           // TLPs the NI sends, with tuser on the last beat
  size_t off = 0;
  std::deque<Tlp> expectToNi;       // answers to the NI's requests, in order
  std::deque<Tlp> expectReq;        // the CPU's requests, in order (between the answers)
  std::deque<Tlp> expectCpu;        // completions handed to the CPU
  tb::AxisSink toNi(8, &r, 0.3);
  unsigned counts[8] = {};

  // The NI's TLPs: what each is owed, and what it does to memory, in arrival order.
  for (unsigned i = 0; i < 400; ++i) {
    const unsigned kind = static_cast<unsigned>(r() % 8);
    const unsigned dws = 1 + static_cast<unsigned>(r() % (kMaxPayload / 4));
    const uint64_t addr = (r() % (kMemBytes / 4 - dws + 1)) * 4;
    const uint8_t tag = static_cast<uint8_t>(i);
    Tlp t;
    bool nullify = false;
    switch (kind) {
      case 0: case 1:  // a read: one CplD with the bytes
        t = makeMRd(kNi, tag, addr, static_cast<uint16_t>(dws * 4));
        expectToNi.push_back(makeCplD(0, kNi, tag, addr, Bytes(mem_.begin() + addr, mem_.begin() + addr + dws * 4)));
        break;
      case 2: case 3:  // a write with random byte enables; one in four nullified
        t = makeMWr(kNi, tag, addr, randomBytes(dws * 4));
        t.firstBe = static_cast<uint8_t>(1 + r() % 15);
        if (dws > 1) t.lastBe = static_cast<uint8_t>(1 + r() % 15);
        nullify = r() % 4 == 0;
        if (!nullify) apply(t);
        break;
      case 4: {  // a confirmed write: applied, then confirmed naming the address
        t = makeDMWr(kNi, tag, addr, randomBytes(8));
        if (addr + 8 > kMemBytes) t = makeDMWr(kNi, tag, addr - 4, randomBytes(8));
        apply(t);
        expectToNi.push_back(makeWriteConfirmation(0, kNi, tag, t.addr));
        break;
      }
      case 5: {  // outside memory: a read or confirmed write gets UR, a write is dropped
        const uint64_t out = kMemBytes + addr;
        const unsigned k = static_cast<unsigned>(r() % 3);
        t = k == 0 ? makeMRd(kNi, tag, out, 8) : k == 1 ? makeDMWr(kNi, tag, out, randomBytes(8))
                                                         : makeMWr(kNi, tag, out, randomBytes(8));
        if (k < 2) expectToNi.push_back(makeCpl(0, kNi, tag, CplStatus::UR, 4, out & 0x7F));
        break;
      }
      case 6:  // an atomic: this memory has none, UR
        t = makeAtomic(TlpKind::FetchAdd, kNi, tag, addr & ~uint64_t{7}, randomBytes(8));
        expectToNi.push_back(makeCpl(0, kNi, tag, CplStatus::UR, 4, (addr & ~uint64_t{7}) & 0x7F));
        break;
      default: {  // a completion for the CPU: handed over with its status and first bytes
        t = r() % 4 ? makeCplD(kNi, kCpu, tag, addr, randomBytes(4 * (1 + r() % 2)))
                    : makeCpl(kNi, kCpu, tag, CplStatus::CA, 8, 0);
        expectCpu.push_back(t);
        break;
      }
    }
    ++counts[kind];
    fromNi.push_back({encodeTlp(t), nullify});
  }

  // The CPU: requests offered at random times, and reads of its own memory at the end.
  std::deque<Tlp> cpuReqs;
  for (unsigned i = 0; i < 150; ++i) {
    const uint64_t a = 0x0080'0000'0000ull + (r() % 4096) * 4;
    const bool two = r() % 2;
    const unsigned k = static_cast<unsigned>(r() % 3);
    Bytes d = randomBytes(two ? 8 : 4);
    Tlp t = k == 0 ? makeMRd(kCpu, 0, a, two ? 8 : 4) : k == 1 ? makeMWr(kCpu, 0, a, d) : makeDMWr(kCpu, 0, a, d);
    cpuReqs.push_back(t);
  }
  uint8_t cpuTag = 0;
  bool room = true;

  while (!(fromNi.empty() && cpuReqs.empty() && expectToNi.empty() && expectReq.empty() && expectCpu.empty())) {
    // Inputs of this cycle.
    bool offer = false;
    if (!fromNi.empty() && (m.s_axis_tvalid || r() % 5 != 0)) {
      const Out& o = fromNi.front();
      uint8_t lanes[8] = {};
      uint32_t keep = 0;
      for (unsigned j = 0; j < 8 && off + j < o.bytes.size(); ++j) {
        lanes[j] = o.bytes[off + j];
        keep |= 1u << j;
      }
      toPort(m.s_axis_tdata, lanes, 8);
      m.s_axis_tkeep = keep;
      m.s_axis_tlast = off + 8 >= o.bytes.size();
      m.s_axis_tuser = m.s_axis_tlast && o.nullify;
      offer = true;
    }
    m.s_axis_tvalid = offer;
    if (!m.req_valid_i && !cpuReqs.empty() && r() % 3 == 0) {
      const Tlp& t = cpuReqs.front();
      m.req_valid_i = 1;
      m.req_kind_i = t.kind == TlpKind::MRd ? 0 : t.kind == TlpKind::MWr ? 1 : 2;
      m.req_addr_i = t.addr;
      const unsigned n = t.kind == TlpKind::MRd ? t.lengthDw * 4 : static_cast<unsigned>(t.data.size());
      m.req_two_i = n == 8;
      uint64_t v = 0;
      for (size_t j = 0; j < t.data.size(); ++j) v |= uint64_t{t.data[j]} << (8 * j);
      m.req_data_i = v;
    }
    if (r() % 50 == 0) room = !room;
    m.ni_room_i = room;
    m.m_axis_tready = toNi.ready();
    dut.eval();

    // Outputs the rising edge samples.
    const bool took = m.s_axis_tvalid && m.s_axis_tready;
    if (m.req_valid_i && m.req_ready_o) {
      EXPECT_TRUE(room) << "a request started without room";
      Tlp t = cpuReqs.front();
      t.tag = cpuTag++;
      expectReq.push_back(t);
      cpuReqs.pop_front();
    }
    const bool reqTaken = m.req_valid_i && m.req_ready_o;
    if (m.cpl_valid_o) {
      ASSERT_FALSE(expectCpu.empty()) << "a completion for the CPU that the NI did not send";
      const Tlp& e = expectCpu.front();
      EXPECT_EQ(m.cpl_status_o, static_cast<unsigned>(e.status));
      uint64_t v = 0;
      for (size_t j = 0; j < e.data.size() && j < 8; ++j) v |= uint64_t{e.data[j]} << (8 * j);
      EXPECT_EQ(m.cpl_data_o, v);
      expectCpu.pop_front();
    }
    Beat b;
    b.data.resize(8);
    fromPort(m.m_axis_tdata, b.data.data(), 8);
    b.keep = m.m_axis_tkeep;
    b.last = m.m_axis_tlast;
    if (toNi.observe(m.m_axis_tvalid, b, cycles())) {
      tb::Packet p = std::move(toNi.packets().front());
      toNi.packets().pop_front();
      TlpError err = TlpError::None;
      const auto got = decodeTlp(p.bytes, &err);
      ASSERT_TRUE(got) << "undecodable TLP to the NI: " << toString(err);
      auto& q = got->isCompletion() ? expectToNi : expectReq;
      ASSERT_FALSE(q.empty()) << "unexpected TLP to the NI: " << describe(*got);
      const Tlp& e = q.front();
      const Bytes gb = encodeTlp(*got), eb = encodeTlp(e);
      size_t at = 0;
      while (at < gb.size() && at < eb.size() && gb[at] == eb[at]) ++at;
      EXPECT_TRUE(gb == eb) << "got " << describe(*got) << "\nwanted " << describe(e) << "\nfirst difference at byte "
                            << at << " of " << gb.size() << " and " << eb.size();
      q.pop_front();
    }
    if (took) {
      off += 8;
      if (m.s_axis_tlast) {
        fromNi.pop_front();
        off = 0;
      }
    }
    cycle();
    if (reqTaken) m.req_valid_i = 0;
  }

  // The CPU's own reads see every write that was applied (and none of the nullified).
  for (unsigned a = 0; a < kMemBytes; a += 8) {
    m.loc_valid_i = 1;
    m.loc_write_i = 0;
    m.loc_addr_i = a;
    m.s_axis_tvalid = 0;
    dut.eval();
    while (!m.loc_done_o) {
      cycle();
      dut.eval();
    }
    uint64_t v = 0;
    for (unsigned j = 0; j < 8; ++j) v |= uint64_t{mem_[a + j]} << (8 * j);
    ASSERT_EQ(m.loc_rdata_o, v) << "memory at 0x" << std::hex << a;
    cycle();
  }
  // Each kind came up.
  for (unsigned k = 0; k < 8; ++k) EXPECT_GT(counts[k], 0u) << "kind " << k;
}

}  // namespace

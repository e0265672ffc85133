// SPDX-License-Identifier: Apache-2.0
// Unit test of ni_csr_regs with fewer elements than the register map has room for
// (NumArt=4, NumMemId=2, NumInj=2, NumRfifo=2, NumCnt=8: Vni_csr_regs_few): an element past
// its array's size reads 0 and takes no write, and writing it does not reach an
// element that exists; the elements that exist keep what is written, and the
// hardware sees them. Which arrays have a size comes from the generated table.
#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>

#include "Vni_csr_regs_few.h"
#include "csr_regs_fixture.hpp"
#include "ni_regs.hpp"
#include "verilated_ports.hpp"

using namespace ni;
using regs::Access;

namespace {

const std::map<std::string, unsigned> kSizes = {{"NumArt", 4}, {"NumMemId", 2}, {"NumInj", 2}, {"NumRfifo", 2},
                                                {"NumCnt", 8}};

class CsrRegsSizesTest : public tb::CsrRegsFixture<Vni_csr_regs_few> {
 protected:
  void SetUp() override {
    CsrRegsFixture::SetUp();
    // Hardware inputs of the sized arrays: every bit set, so an element that exists reads non-zero.
    dut->m.inj_head_slot_i = 0xFFFF'FFFFu;
    dut->m.inj_status_err_i = 0x3;
    dut->m.inj_status_code_i = 0xFF;
    dut->m.inj_status_busy_i = 0x3;
    dut->m.rfifo_tail_slot_i = 0xFFFF'FFFFu;
    cntValue.fill(0xFFFF'FFFFu);
    reset();
  }
  static const regs::RegInfo& info(uint32_t offset) {
    for (const auto& r : regs::kRegisters)
      if (r.offset == offset) return r;
    throw std::runtime_error("no register at that offset");
  }
  static unsigned sizeOf(const regs::RegInfo& r) { return r.size ? kSizes.at(r.size) : r.count; }
  // A value that names its register and element, inside the register's fields.
  static uint32_t mark(const regs::RegInfo& r, unsigned i) { return (0x9E37'79B9u * (r.offset + 1) + i) & r.fields; }
};

TEST_F(CsrRegsSizesTest, ElementsPastTheSizeReadZeroAndTakeNoWrite) {
  unsigned sized = 0, past = 0;
  // Every element of every sized array written in order, the commit registers last, so
  // a write past the size that landed on an element that exists would overwrite it.
  for (int pass = 0; pass < 2; ++pass)
    for (const auto& r : regs::kRegisters) {
      if (!r.size) continue;
      const bool is_commit = r.commit < 0 && r.access == Access::Rw;
      if ((pass == 1) != is_commit) continue;
      for (unsigned i = 0; i < r.count; ++i) write(r.offset + i * r.stride, mark(r, i));
    }
  for (const auto& r : regs::kRegisters) {
    if (!r.size) continue;
    ++sized;
    ASSERT_LT(sizeOf(r), r.count) << r.name << ": the test needs fewer elements than the map";
    for (unsigned i = 0; i < r.count; ++i) {
      bool hit = false;
      const uint32_t v = read(r.offset + i * r.stride, &hit);
      EXPECT_TRUE(hit) << r.name << "[" << i << "]: the address stays in the map";
      if (i >= sizeOf(r)) {
        EXPECT_EQ(v, 0u) << r.name << "[" << i << "] is past " << r.size;
        ++past;
      } else if (r.access == Access::Rw) {
        EXPECT_EQ(v, mark(r, i)) << r.name << "[" << i << "]";
      } else {
        EXPECT_NE(v, 0u) << r.name << "[" << i << "]: a hardware value that exists";
      }
    }
  }
  EXPECT_EQ(sized, 29u) << "ART (8), MEMID (5), INJ (7), RFIFO (7) and CNT (2) registers are sized";
  EXPECT_GT(past, 100u);
  // The hardware sees the elements that exist (the staged ones committed by the last pass).
  for (unsigned i = 0; i < 4; ++i) {
    EXPECT_EQ(artActive[i].node, mark(info(regs::ART_DEST(0)), i) & 0xFFFF) << i;
    EXPECT_EQ(artActive[i].limitHi, mark(info(regs::ART_LIMIT_HI(0)), i)) << i;
    EXPECT_EQ(dut->m.art_ctrl_valid_o >> i & 1, mark(info(regs::ART_CTRL(0)), i) & 1) << i;
  }
  for (unsigned i = 0; i < 2; ++i) {
    EXPECT_EQ(memidActive[i].baseHi, mark(info(regs::MEMID_BASE_HI(0)), i)) << i;
    EXPECT_EQ(ni::getField(dut->m.inj_base_lo_addr_o, 32 * i, 32), mark(info(regs::INJ_BASE_LO(0)), i)) << i;
    EXPECT_EQ(ni::getField(dut->m.rfifo_size_slots_o, 16 * i, 16), mark(info(regs::RFIFO_SIZE(0)), i)) << i;
  }
  // A counter load pulses its counter's bit in its write cycle; past the size, no bit.
  auto loadPulse = [&](uint32_t off) {
    dut->m.req_valid_i = 1;
    dut->m.req_write_i = 1;
    dut->m.req_addr_i = off;
    dut->eval();
    const unsigned pulse = dut->m.cnt_load_written_o;
    cycle();
    dut->m.req_valid_i = 0;
    return pulse;
  };
  EXPECT_EQ(loadPulse(regs::CNT_LOAD(7)), 0x80u);
  EXPECT_EQ(loadPulse(regs::CNT_LOAD(9)), 0u);
  EXPECT_EQ(loadPulse(regs::CNT_LOAD(15)), 0u) << "not counter 7 again (15 mod 8)";
}

}  // namespace

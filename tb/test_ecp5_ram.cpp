// SPDX-License-Identifier: Apache-2.0
// Unit test of the ECP5 block RAM model (sim/ecp5_cells.v, the DP16KD that make
// postsynth simulates in the board top's netlist). tb/ecp5_ram/ram_cases.sv holds a
// memory for every width (1, 2, 4, 9, 18, 36 bits) and write mode (NORMAL,
// WRITETHROUGH, READBEFOREWRITE) the model covers, byte enables, both reset modes, and
// the two styles of our RTL (ni_fifo's forwarded read, ni_board_host's node memory).
// Its RTL runs in lockstep with its synth_ecp5 netlist under random reads and writes
// on both ports; every read output must be the same in every cycle.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>

#include "Vram_cases.h"
#include "Vram_cases_ecp5.h"
#include "verilated_fixture.hpp"

using namespace ni;

namespace {

// The read outputs compared, in this order (fifo_o, 72 bits, in two parts).
constexpr std::array<const char*, 15> kOutputs{
    "w1_a_o", "w1_b_o", "w2_a_o", "w2_b_o", "w4_a_o", "w4_b_o", "w9_a_o", "w9_b_o",
    "w18_a_o", "w18_b_o", "w36_o", "host_a_o", "host_b_o", "fifo_o[63:0]", "fifo_o[71:64]"};
template <class M>
std::array<uint64_t, kOutputs.size()> outputs(const M& m) {
  return {m.w1_a_o, m.w1_b_o, m.w2_a_o, m.w2_b_o, m.w4_a_o, m.w4_b_o, m.w9_a_o, m.w9_b_o,
          m.w18_a_o, m.w18_b_o, m.w36_o, m.host_a_o, m.host_b_o,
          uint64_t(m.fifo_o[1]) << 32 | m.fifo_o[0], m.fifo_o[2]};
}

class Ecp5RamTest : public tb::VerilatedTest {
 protected:
  // One random access on both ports, the same for both models. Addresses come from a
  // few hot ones most of the time, so reads find written words and ports collide.
  template <class M>
  static void drive(M& m, const std::array<uint64_t, 8>& r, const std::array<uint16_t, 16>& hot) {
    m.a_en_i = r[0] % 16 != 0;
    m.a_we_i = (r[0] >> 4) % 2;
    m.a_be_i = (r[0] >> 8) % 16;
    m.a_addr_i = (r[0] >> 12) % 4 ? hot[(r[0] >> 16) % 16] : (r[0] >> 20) % 16384;
    m.a_wdata_i[0] = static_cast<uint32_t>(r[1]);
    m.a_wdata_i[1] = static_cast<uint32_t>(r[1] >> 32);
    m.a_wdata_i[2] = static_cast<uint32_t>(r[2]) % 256;
    m.b_en_i = r[3] % 16 != 0;
    m.b_we_i = (r[3] >> 4) % 2;
    m.b_be_i = (r[3] >> 8) % 4;
    const unsigned pick = (r[3] >> 12) % 8;
    m.b_addr_i = pick < 3 ? m.a_addr_i : pick < 6 ? hot[(r[3] >> 16) % 16] : (r[3] >> 20) % 16384;
    // Two writes to one word in one cycle are undefined in the block RAM: never both.
    if (m.a_en_i && m.a_we_i && m.b_en_i && m.b_we_i && m.b_addr_i % 2 == m.a_addr_i % 2)
      m.b_addr_i ^= 1;
    m.b_wdata_i = r[4] % (1u << 18);
    m.srst_i = r[5] % 64 == 0;
  }
  template <class M>
  static void clock(M& m, bool high) {
    m.clk_i = high;
    m.clkb_i = high;
    m.eval();
  }
};

TEST_F(Ecp5RamTest, NetlistReadsWhatTheRtlReads) {
  Vram_cases rtl(ctx(), "rtl");
  Vram_cases_ecp5 net(ctx(), "net");
  std::array<uint16_t, 16> hot{};
  for (auto& h : hot) h = rng()() % 16384;
  std::array<uint64_t, 8> r{};
  // Cycles in which an output is not 0: every memory must give back written data.
  std::array<unsigned, kOutputs.size()> live{};
  for (unsigned c = 0; c < 400000; ++c) {
    for (auto& x : r) x = rng()();
    drive(rtl, r, hot);
    drive(net, r, hot);
    // An asynchronous reset now and then, between the edges.
    const bool arst = c < 2 || r[6] % 500 == 0;
    rtl.rst_ni = !arst;
    net.rst_ni = !arst;
    clock(rtl, false);
    clock(net, false);
    clock(rtl, true);
    clock(net, true);
    if (ctx()->gotError()) FAIL() << "a model stopped the simulation at cycle " << c << ", seed " << seed();
    const auto want = outputs(rtl), got = outputs(net);
    for (size_t i = 0; i < kOutputs.size(); ++i) {
      ASSERT_EQ(want[i], got[i]) << kOutputs[i] << ": RTL against netlist at cycle " << c << ", seed " << seed();
      live[i] += want[i] != 0;
    }
  }
  for (size_t i = 0; i < live.size(); ++i) EXPECT_GT(live[i], 100000u) << kOutputs[i] << " rarely shows data";
}

}  // namespace

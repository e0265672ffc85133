// SPDX-License-Identifier: Apache-2.0
// ni_host_tx at 128 bits, where the DMA engine's read is a one-beat TLP: a local copy's
// writes and the reads offered as each write's last beat is taken must fill every cycle
// of the host port (an own source was once picked again for a cycle in which its stage
// had just emptied: one idle cycle per write and read, 0.948 of the port for copies).
#include <gtest/gtest.h>

#include <string>

#include "Vni_host_tx128.h"
#include "host_tx_copy.hpp"
#include "tlp.hpp"
#include "verilated_fixture.hpp"
#include "verilated_ports.hpp"

using namespace ni;
using ni::setField;

namespace {

constexpr unsigned kBpb = 16;
constexpr uint16_t kNiReqId = 0x0100;

class HostTx128Test : public tb::VerilatedTest {
 protected:
  void SetUp() override {
    VerilatedTest::SetUp();
    dut = std::make_unique<tb::VlClocked<Vni_host_tx128>>(ctx(), "host_tx128");
    attach(dut.get());
    reset();
  }
  std::unique_ptr<tb::VlClocked<Vni_host_tx128>> dut;
};

TEST_F(HostTx128Test, CopyWritesAndOneBeatReadsTakeEveryCycle) {
  auto& m = dut->m;
  const Bytes copy = encodeTlp(makeMWr(kNiReqId, 0xC0, 0x1000, Bytes(256, 0x5A)));  // 17 beats
  constexpr unsigned kCopies = 10;
  m.m_axis_tready = 1;
  size_t off = 0;
  unsigned done = 0, beats = 0, tlps = 0;
  bool rdWait = false;
  uint64_t first = 0, last = 0;
  std::string trace;  // the host port: b a beat, L a last beat, . idle
  for (uint64_t c = 1; c < 400; ++c) {
    const bool lastBeat = tb::offerCopyBeat(m, copy, off, done < kCopies, kBpb);
    m.dma_rd_valid_i = rdWait;
    m.dma_rd_addr_i = 0x2000;
    m.dma_rd_bytes_i = 256;
    m.dma_rd_tag_i = 0x81;
    dut->eval();
    // As the engine does: its next read is offered as a copy's last beat is taken.
    if (lastBeat && m.copy_ready_o && !m.dma_rd_valid_i) {
      m.dma_rd_valid_i = 1;
      dut->eval();
    }
    const bool rdTaken = m.dma_rd_valid_i && m.dma_rd_ready_o;
    if (m.copy_valid_i && m.copy_ready_o) {
      off += kBpb;
      if (lastBeat) {
        off = 0;
        ++done;
      }
    }
    rdWait = m.dma_rd_valid_i && !rdTaken;
    if (m.m_axis_tvalid) {
      if (!first) first = c;
      last = c;
      ++beats;
      tlps += m.m_axis_tlast;
      trace += m.m_axis_tlast ? "L" : "b";
    } else if (first && tlps < 2 * kCopies) {
      trace += ".";
    }
    cycle();
  }
  EXPECT_EQ(tlps, 2 * kCopies) << "every write and its read";
  EXPECT_EQ(beats, kCopies * 18);
  EXPECT_EQ(last - first + 1, beats) << "an idle cycle on the host port: " << trace;
}

}  // namespace

// SPDX-License-Identifier: Apache-2.0
// Fixture of the register block's unit tests (test_csr_regs, test_csr_regs_sizes): one
// verilated ni_csr_regs on the clock, driven one register request per cycle.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>

#include "verilated_fixture.hpp"

namespace ni::tb {

template <class Model>
class CsrRegsFixture : public VerilatedTest {
 protected:
  void SetUp() override {
    VerilatedTest::SetUp();
    dut = std::make_unique<VlClocked<Model>>(ctx(), "csr");
    attach(dut.get());
  }
  // A read: its request in one cycle, its answer (rdata_o, rd_hit_o) when rd_valid_o says,
  // the state of the request cycle (the block's read pipeline; no request meanwhile).
  uint32_t read(uint32_t off, bool* hit = nullptr) {
    requestRead(off);
    return awaitRead(hit);
  }
  void requestRead(uint32_t off) {
    dut->m.req_valid_i = 1;
    dut->m.req_write_i = 0;
    dut->m.req_addr_i = off;
    // CNT_VALUE is read from the counters' block at the index the request names; that
    // block answers in the next cycle (a registered read).
    dut->eval();
    const unsigned cntIdx = dut->m.cnt_value_rd_idx_o % cntValue.size();
    dut->m.cnt_value_value_i = 0xdeadbeef;  // not the answer yet: must not be taken
    cycle();
    dut->m.req_valid_i = 0;
    dut->m.cnt_value_value_i = cntValue[cntIdx];
  }
  uint32_t awaitRead(bool* hit = nullptr) {
    for (unsigned i = 0; !dut->m.rd_valid_o; ++i) {
      if (i == kMaxReadCycles) {
        ADD_FAILURE() << "a read got no answer in " << kMaxReadCycles << " cycles";
        break;
      }
      cycle();
    }
    if (hit) *hit = dut->m.rd_hit_o;
    return dut->m.rdata_o;
  }
  static constexpr unsigned kMaxReadCycles = 5;  // the pipeline takes 3 (scripts/regs_gen.py)
  // A write in the same cycle as whatever event inputs are set.
  void write(uint32_t off, uint32_t v, unsigned be = 0xF) {
    dut->m.req_valid_i = 1;
    dut->m.req_write_i = 1;
    dut->m.req_addr_i = off;
    dut->m.req_wdata_i = v;
    dut->m.req_be_i = be;
    dut->eval();
    for (unsigned i = 0; i < 16; ++i) {
      if (!(dut->m.memid_ctrl_written_o >> i & 1)) continue;
      memidActive[i] = MemIdActive{dut->m.memid_base_lo_addr_cmt_o, dut->m.memid_base_hi_addr_cmt_o,
                                   dut->m.memid_size_bytes_cmt_o, dut->m.memid_key_key_cmt_o};
    }
    for (unsigned i = 0; i < 16; ++i) {
      if (!(dut->m.art_ctrl_written_o >> i & 1)) continue;
      artActive[i] = ArtActive{dut->m.art_base_lo_addr_cmt_o, dut->m.art_limit_hi_addr_cmt_o,
                               dut->m.art_xlate_hi_addr_cmt_o, dut->m.art_dest_node_cmt_o,
                               dut->m.art_dest_memid_cmt_o};
    }
    cycle();
    dut->m.req_valid_i = 0;
  }

  // A memory ID's active base, size and key: the block keeps no copy of them (the blocks
  // that use them do), it drives them as a MEMID_CTRL write commits them.
  struct MemIdActive {
    uint32_t baseLo = 0, baseHi = 0, pages = 0, key = 0;
  };
  std::map<unsigned, MemIdActive> memidActive;  // by index; absent: never committed
  // Likewise a window's base, limit, translation and destination (ni_art keeps them).
  struct ArtActive {
    uint32_t baseLo = 0, limitHi = 0, xlateHi = 0, node = 0, memid = 0;
  };
  std::map<unsigned, ArtActive> artActive;  // by index; absent: never committed
  std::array<uint32_t, 32> cntValue{};  // what the counters' block answers for CNT_VALUE[i]
  std::unique_ptr<VlClocked<Model>> dut;
};

}  // namespace ni::tb

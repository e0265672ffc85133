// SPDX-License-Identifier: Apache-2.0
// Unit test of ni_csr_regs (generated) alone, driven by the register table that
// the same generator writes into sim/ni_regs.hpp: reset values, read/write
// registers with byte enables, sticky write-1-to-clear status, event counters,
// read-only registers, and addresses that decode to nothing; and the whole map
// against a second reading of the SystemRDL source (tb/regs_expect.py).
#include <gtest/gtest.h>

#include <iterator>
#include <map>
#include <vector>

#include "Vni_csr_regs.h"
#include "csr_regs_fixture.hpp"
#include "ni_regs.hpp"
#include "verilated_ports.hpp"

using namespace ni;
using regs::Access;

namespace {

struct Instance {
  const regs::RegInfo* reg;
  uint32_t offset;
};

class CsrRegsTest : public tb::CsrRegsFixture<Vni_csr_regs> {
 protected:
  void SetUp() override {
    CsrRegsFixture::SetUp();
    dut->m.caps_data_bytes_i = 8;
    dut->m.caps_art_entries_i = 16;
    dut->m.caps_memid_entries_i = 17;
    dut->m.caps_rx_credits_i = 2;
    dut->m.caps2_max_payload_i = 256;
    dut->m.caps3_retx_slots_i = 32;
    dut->m.caps3_peers_i = 64;
    dut->m.caps4_inj_fifos_i = 8;
    dut->m.caps4_rcv_fifos_i = 4;
    dut->m.caps4_slot_bytes_i = 64;
    // Injection FIFO status inputs: a distinct value per FIFO.
    dut->m.inj_status_err_i = 0x05;
    dut->m.inj_status_busy_i = 0x12;
    for (unsigned i = 0; i < 8; ++i) {
      ni::setField(dut->m.inj_head_slot_i, 16 * i, 16, 0x10 + i);
      ni::setField(dut->m.inj_status_code_i, 4 * i, 4, i);
    }
    for (unsigned i = 0; i < 4; ++i) ni::setField(dut->m.rfifo_tail_slot_i, 16 * i, 16, 0x20 + i);
    dut->m.caps5_counters_i = 32;
    dut->m.caps5_host_ports_i = 4;
    dut->m.host_port_down_ports_i = 0x9;
    dut->m.cnt_zero_hit_i = 0xA5C3'0F01u;
    dut->m.fab_credits_vc0_i = 0x5A;
    dut->m.fab_credits_vc1_i = 0x0C;
    dut->m.retx_busy_pending_i = 1;
    for (unsigned i = 0; i < 32; ++i) cntValue[i] = 0x1000'0000u * (i % 16) + i;
    reset();
    for (const auto& r : regs::kRegisters)
      for (unsigned i = 0; i < r.count; ++i) {
        all.push_back(Instance{&r, r.offset + i * r.stride});
        model[r.offset + i * r.stride] = r.access != Access::Hw ? r.reset : hwValue(r.offset, i);
      }
  }

  // What the hardware inputs above make a read of a hw register return.
  static uint32_t hwValue(uint32_t off, unsigned i) {
    if (off == regs::CAPS) return 0x02111008u;
    if (off == regs::CAPS2) return 256u;
    if (off == regs::CAPS3) return 0x4020u;
    if (off == regs::CAPS4) return 0x00400408u;
    if (off == regs::RFIFO_TAIL(0)) return 0x20 + i;
    if (off == regs::CAPS5) return 0x0420u;
    if (off == regs::HOST_PORT_DOWN) return 0x9u;
    if (off == regs::CNT_ZERO) return 0xA5C3'0F01u;
    if (off == regs::FAB_CREDITS) return 0x0C5Au;
    if (off == regs::RETX_BUSY) return 1u;
    if (off == regs::CNT_VALUE(0)) return 0x1000'0000u * (i % 16) + i;
    if (off == regs::INJ_HEAD(0)) return 0x10 + i;
    if (off == regs::INJ_STATUS(0)) return (0x05u >> i & 1) | i << 1 | (0x12u >> i & 1) << 8;
    ADD_FAILURE() << "hw register at 0x" << std::hex << off << " has no value in this test";
    return 0;
  }
  static uint32_t byteMask(unsigned be) {
    uint32_t m = 0;
    for (unsigned b = 0; b < 4; ++b)
      if (be >> b & 1) m |= 0xFFu << (8 * b);
    return m;
  }
  void expectAllAsModel(const char* when) {
    for (const auto& in : all) EXPECT_EQ(read(in.offset), model[in.offset]) << in.reg->name << " @0x" << std::hex << in.offset << " " << when;
  }

  // The event inputs in register-table order, which is address order (the test fails if
  // the map grows without them).
  std::vector<CData*> statusSets() {
    auto& m = dut->m;
    return {&m.status_win_miss_set_i, &m.status_perm_set_i, &m.status_malformed_set_i, &m.status_unsupported_set_i,
            &m.status_crc_err_set_i, &m.status_memid_err_set_i, &m.status_bounds_err_set_i, &m.status_nak_rx_set_i,
            &m.status_bad_pkt_set_i, &m.status_cpl_unexp_set_i, &m.status_retx_fail_set_i,
            &m.status_mem_fail_set_i, &m.status_dma_err_set_i, &m.status_cnt_zero_set_i};
  }
  std::vector<CData*> counterIncs() {
    auto& m = dut->m;
    return {&m.conf_cnt_inc_i, &m.intr_cnt_inc_i, &m.tx_pkts_inc_i, &m.rx_pkts_inc_i, &m.win_miss_cnt_inc_i,
            &m.perm_cnt_inc_i, &m.malformed_cnt_inc_i, &m.unsup_cnt_inc_i, &m.crc_err_cnt_inc_i,
            &m.memid_err_cnt_inc_i, &m.bounds_err_cnt_inc_i, &m.nak_tx_cnt_inc_i, &m.nak_rx_cnt_inc_i,
            &m.bad_pkt_cnt_inc_i, &m.rd_served_cnt_inc_i, &m.cpl_unexp_cnt_inc_i, &m.wc_merged_cnt_inc_i,
            &m.dup_cnt_inc_i, &m.retx_cnt_inc_i, &m.oos_cnt_inc_i, &m.retx_fail_cnt_inc_i,
            &m.mem_reissue_cnt_inc_i, &m.mem_fail_cnt_inc_i, &m.dma_err_cnt_inc_i, &m.rnr_tx_cnt_inc_i,
            &m.rnr_rx_cnt_inc_i, &m.raw_rx_cnt_inc_i, &m.raw_drop_cnt_inc_i, &m.rget_rx_cnt_inc_i,
            &m.key_err_cnt_inc_i, &m.rts_tx_cnt_inc_i, &m.host_port_err_cnt_inc_i, &m.host_drop_cnt_inc_i,
            &m.pkey_err_cnt_inc_i, &m.poison_host_cnt_inc_i, &m.poison_fab_cnt_inc_i, &m.ack_unsent_cnt_inc_i};
  }
  std::vector<uint32_t> offsetsOf(Access a) {
    std::vector<uint32_t> v;
    for (const auto& in : all)
      if (in.reg->access == a) v.push_back(in.offset);
    return v;
  }

  std::vector<Instance> all;
  std::map<uint32_t, uint32_t> model;
};

TEST_F(CsrRegsTest, ResetValuesAndReadOnlyRegisters) {
  expectAllAsModel("after reset");
  EXPECT_EQ(read(regs::ID) >> 16, 0x4E49u) << "magic 'NI'";
  for (const auto& in : all)
    if (in.reg->access == Access::Ro || in.reg->access == Access::Hw) write(in.offset, 0xFFFFFFFFu);
  expectAllAsModel("after writes to read-only registers");
}

TEST_F(CsrRegsTest, ReadWriteRegistersKeepWhatWasWrittenWithByteEnables) {
  const auto rw = offsetsOf(Access::Rw);
  ASSERT_FALSE(rw.empty());
  std::map<uint32_t, const Instance*> inst;
  for (const auto& in : all) inst[in.offset] = &in;
  // What the hardware sees: a staged register's value as of the last write of its commit register.
  std::map<uint32_t, uint32_t> active = model;
  unsigned commits = 0;
  for (int i = 0; i < 4000; ++i) {
    const uint32_t off = rw[rng()() % rw.size()];
    if (rng()() % 3) {
      const uint32_t v = static_cast<uint32_t>(rng()());
      const unsigned be = rng()() % 16;
      write(off, v, be);
      const uint32_t m = byteMask(be) & inst[off]->reg->fields;
      model[off] = (model[off] & ~m) | (v & m);
      if (inst[off]->reg->commit < 0) active[off] = model[off];
      // A write to a commit register (any bytes) makes its index's staged registers take effect.
      const regs::RegInfo* r = inst[off]->reg;
      const unsigned index = r->stride ? (off - r->offset) / r->stride : 0;
      for (const auto& st : regs::kRegisters)
        if (st.commit >= 0 && &regs::kRegisters[st.commit] == r) {
          const uint32_t so = st.offset + index * st.stride;
          active[so] = model[so];
          ++commits;
        }
    } else {
      ASSERT_EQ(read(off), model[off]) << "0x" << std::hex << off << " seed " << std::dec << seed();
    }
  }
  expectAllAsModel("after random writes");
  EXPECT_GT(commits, 100u);
  // The values reach the hardware outputs (staged ones as of their last commit).
  EXPECT_EQ(dut->m.node_id_lid_o, active[regs::NODE_ID] & 0xFFFF);
  unsigned stale = 0;
  for (unsigned n = 0; n < regs::ART_DEST_COUNT; ++n) {
    EXPECT_EQ(artActive[n].node, active[regs::ART_DEST(n)] & 0xFFFF) << n;
    EXPECT_EQ(artActive[n].memid, active[regs::ART_DEST(n)] >> 16) << n;
    EXPECT_EQ(artActive[n].baseLo, active[regs::ART_BASE_LO(n)] >> 12) << n;
    EXPECT_EQ(artActive[n].limitHi, active[regs::ART_LIMIT_HI(n)]) << n;
    EXPECT_EQ(artActive[n].xlateHi, active[regs::ART_XLATE_HI(n)]) << n;
    EXPECT_EQ(dut->m.art_ctrl_valid_o >> n & 1, active[regs::ART_CTRL(n)] & 1) << n;
    EXPECT_EQ(dut->m.art_ctrl_perm_w_o >> n & 1, active[regs::ART_CTRL(n)] >> 5 & 1) << n;
    stale += active[regs::ART_DEST(n)] != model[regs::ART_DEST(n)];
  }
  // The member table, read by the hardware at an index of its own (not staged).
  for (unsigned n = 0; n < regs::MGRP_MEMBER_COUNT; ++n) {
    dut->m.mgrp_member_hw_idx_i = n;
    dut->eval();
    EXPECT_EQ(dut->m.mgrp_member_dlid_o, active[regs::MGRP_MEMBER(n)] & 0xFFFF) << n;
    EXPECT_EQ(dut->m.mgrp_member_memid_o, active[regs::MGRP_MEMBER(n)] >> 16) << n;
  }
  for (unsigned n = 0; n < regs::MEMID_SIZE_COUNT; ++n) {
    EXPECT_EQ(memidActive[n].pages, active[regs::MEMID_SIZE(n)] >> 12) << n;
    EXPECT_EQ(memidActive[n].baseHi, active[regs::MEMID_BASE_HI(n)]) << n;
    EXPECT_EQ(memidActive[n].key, active[regs::MEMID_KEY(n)] & 0xFFFF) << n;
    EXPECT_EQ(dut->m.memid_ctrl_perm_r_o >> n & 1, active[regs::MEMID_CTRL(n)] >> 4 & 1) << n;
    stale += active[regs::MEMID_SIZE(n)] != model[regs::MEMID_SIZE(n)];
  }
  EXPECT_GT(stale, 0u) << "some staged registers must still differ from what reads return";
}

TEST_F(CsrRegsTest, StagedRegistersTakeEffectTogetherOnTheirCommitWrite) {
  write(regs::MEMID_BASE_LO(3), 0x12345000u);
  write(regs::MEMID_BASE_HI(3), 0x0000'00ABu);
  write(regs::MEMID_SIZE(3), 0x00040000u);
  EXPECT_EQ(read(regs::MEMID_BASE_HI(3)), 0xABu) << "reads return the staged value";
  EXPECT_TRUE(memidActive.empty()) << "hardware does not see it yet";
  write(regs::MEMID_CTRL(3), regs::MEMID_CTRL_VALID_MASK);
  ASSERT_EQ(memidActive.size(), 1u) << "one commit, of index 3 only";
  EXPECT_EQ(memidActive[3].baseLo, 0x12345u);
  EXPECT_EQ(memidActive[3].baseHi, 0xABu);
  EXPECT_EQ(memidActive[3].pages, 0x40u);
  EXPECT_EQ(dut->m.memid_ctrl_valid_o >> 3 & 1, 1u);
  dut->eval();
  EXPECT_EQ(dut->m.memid_ctrl_written_o, 0u) << "the commit pulse lasts the write's cycle";
}

// The registers kept in RAMs ("ram" in ni_regs.json: staged windows and memory IDs,
// CNT_LOAD) are not cleared by a reset: a bit per entry makes them read their reset
// value until written again. Every read/write register is written, then reset.
TEST_F(CsrRegsTest, AResetAfterWritesBringsBackEveryResetValue) {
  for (const auto& in : all)
    if (in.reg->access == Access::Rw) write(in.offset, 0xFFFF'FFFFu);
  EXPECT_NE(read(regs::ART_BASE_LO(5)), 0u);
  EXPECT_NE(read(regs::CNT_LOAD(31)), 0u);
  reset();
  expectAllAsModel("after a reset that followed writes");
  // A commit after the reset hands over the reset values of the staged registers.
  write(regs::ART_CTRL(5), 0);
  EXPECT_EQ(artActive[5].baseLo, 0u) << "the staged copies read their reset value";
  EXPECT_EQ(artActive[5].node, 0u);
  dut->m.mgrp_member_hw_idx_i = 3;  // and the hardware's read port sees the reset value
  dut->eval();
  EXPECT_EQ(dut->m.mgrp_member_dlid_o, 0u);
  // A partial write to an entry not written since the reset merges into its reset value.
  write(regs::MEMID_KEY(7), 0x0000'AB00u, 0x2);
  EXPECT_EQ(read(regs::MEMID_KEY(7)), 0xAB00u);
}

// A pulse register kept in a RAM hands the hardware its new value in its write cycle
// (CNT_LOAD: the counter is loaded with it), partial writes merged into the old value.
TEST_F(CsrRegsTest, CounterLoadValueIsTheRegistersNewValueInItsWriteCycle) {
  auto& m = dut->m;
  std::map<unsigned, uint32_t> held;
  for (int i = 0; i < 1000; ++i) {
    const unsigned n = rng()() % regs::CNT_LOAD_COUNT;
    const uint32_t v = static_cast<uint32_t>(rng()());
    const unsigned be = rng()() % 16;
    m.req_valid_i = 1;
    m.req_write_i = 1;
    m.req_addr_i = regs::CNT_LOAD(n);
    m.req_wdata_i = v;
    m.req_be_i = be;
    dut->eval();
    held[n] = (held[n] & ~byteMask(be)) | (v & byteMask(be));
    ASSERT_EQ(m.cnt_load_written_o, 1u << n) << "cycle " << i << " seed " << seed();
    ASSERT_EQ(m.cnt_load_value_o, held[n]) << "cycle " << i << " seed " << seed();
    cycle();
    m.req_valid_i = 0;
  }
  for (const auto& [n, v] : held) EXPECT_EQ(read(regs::CNT_LOAD(n)), v) << n;
}

TEST_F(CsrRegsTest, StatusIsStickyAndWriteOneClears) {
  auto sets = statusSets();
  const auto w1c = offsetsOf(Access::W1c);
  ASSERT_EQ(w1c.size(), 1u);
  const regs::RegInfo* status = nullptr;
  for (const auto& in : all)
    if (in.offset == w1c[0]) status = in.reg;
  ASSERT_EQ(__builtin_popcount(status->fields), int(sets.size())) << "every STATUS bit needs its set input here";
  uint32_t expect = 0;
  for (int i = 0; i < 3000; ++i) {
    uint32_t pulsed = 0;
    for (size_t b = 0; b < sets.size(); ++b) {
      *sets[b] = rng()() % 100 < 5;
      pulsed |= uint32_t{*sets[b]} << b;
    }
    const unsigned op = rng()() % 4;
    if (op == 0) {
      const uint32_t clr = static_cast<uint32_t>(rng()());
      const unsigned be = rng()() % 16;
      write(regs::STATUS, clr, be);
      expect = (expect & ~(clr & byteMask(be))) | pulsed;  // a set in the same cycle wins
    } else if (op == 1) {  // the events of the request's cycle only (none while it is answered)
      requestRead(regs::STATUS);
      for (auto* s : sets) *s = 0;
      const uint32_t v = awaitRead();
      ASSERT_EQ(v, expect) << "cycle " << i << " seed " << seed();
      expect |= pulsed;
    } else {
      cycle();
      expect |= pulsed;
    }
  }
  for (auto* s : sets) *s = 0;
  EXPECT_EQ(read(regs::STATUS), expect);
  write(regs::STATUS, 0xFFFFFFFFu);
  EXPECT_EQ(read(regs::STATUS), 0u);
}

TEST_F(CsrRegsTest, CountersCountEveryEventAndAnyWriteClears) {
  auto incs = counterIncs();
  const auto cnt = offsetsOf(Access::Cnt);
  ASSERT_EQ(cnt.size(), incs.size()) << "every counter needs its event input here";
  std::vector<uint32_t> expect(cnt.size(), 0);
  for (int i = 0; i < 5000; ++i) {
    std::vector<bool> pulsed(cnt.size());
    for (size_t k = 0; k < cnt.size(); ++k) *incs[k] = pulsed[k] = rng()() % 100 < 30;
    const size_t k = rng()() % cnt.size();
    const unsigned op = rng()() % 8;
    if (op == 0) {
      write(cnt[k], static_cast<uint32_t>(rng()()), rng()() % 16);
      for (size_t j = 0; j < cnt.size(); ++j) expect[j] += pulsed[j];
      expect[k] = 0;  // clearing wins over an event in the same cycle
    } else if (op == 1) {  // the events of the request's cycle only (none while it is answered)
      requestRead(cnt[k]);
      for (auto* s : incs) *s = 0;
      for (size_t j = 0; j < cnt.size(); ++j) expect[j] += pulsed[j];
      // A counter's answer is its value at the end of the request's cycle: its events counted.
      ASSERT_EQ(awaitRead(), expect[k]) << "counter 0x" << std::hex << cnt[k] << std::dec << " cycle " << i
                                        << " seed " << seed();
    } else {
      cycle();
      for (size_t j = 0; j < cnt.size(); ++j) expect[j] += pulsed[j];
    }
  }
  for (auto* s : incs) *s = 0;
  for (size_t k = 0; k < cnt.size(); ++k) EXPECT_EQ(read(cnt[k]), expect[k]) << k;
  // A reset clears them all (synchronously: the counters' reset takes effect at a clock edge).
  for (auto* s : incs) *s = 1;
  cycle();
  for (auto* s : incs) *s = 0;
  for (size_t k = 0; k < cnt.size(); ++k) ASSERT_NE(read(cnt[k]), 0u) << k;
  reset();
  for (size_t k = 0; k < cnt.size(); ++k) EXPECT_EQ(read(cnt[k]), 0u) << "counter " << k << " after a reset";
}

// Every event counter counting in every cycle (the counters live in RAM, drained from
// narrow accumulators one a cycle: ni_event_counters): none is lost.
TEST_F(CsrRegsTest, EveryCounterCountingInEveryCycleLosesNothing) {
  auto incs = counterIncs();
  for (auto* s : incs) *s = 1;
  for (int i = 0; i < 1000; ++i) cycle();
  for (auto* s : incs) *s = 0;
  for (const auto off : offsetsOf(Access::Cnt)) EXPECT_EQ(read(off), 1000u) << "counter 0x" << std::hex << off;
}

// "pulse" registers tell the hardware in the very cycle software writes them
// (WC_FLUSH, ART_CTRL[i], HOST_PORT_UP); a read or a write elsewhere must not pulse.
TEST_F(CsrRegsTest, PulseRegistersMarkTheirWriteCycleOnly) {
  auto& m = dut->m;
  for (int i = 0; i < 2000; ++i) {
    const bool wr = rng()() % 2;
    const unsigned pick = rng()() % 5;
    const unsigned entry = rng()() % 16;
    const uint32_t off = pick == 0   ? regs::WC_FLUSH
                         : pick == 1 ? regs::ART_CTRL(entry)
                         : pick == 2 ? regs::WC_TIMEOUT
                         : pick == 3 ? regs::HOST_PORT_UP
                                     : regs::ART_DEST(entry);
    m.req_valid_i = 1;
    m.req_write_i = wr;
    m.req_addr_i = off;
    m.req_wdata_i = static_cast<uint32_t>(rng()());
    m.req_be_i = rng()() % 16;
    dut->eval();
    ASSERT_EQ(m.wc_flush_written_o, wr && pick == 0) << "cycle " << i << " seed " << seed();
    ASSERT_EQ(m.art_ctrl_written_o, wr && pick == 1 ? 1u << entry : 0u) << "cycle " << i << " seed " << seed();
    ASSERT_EQ(m.host_port_up_written_o, wr && pick == 3) << "cycle " << i << " seed " << seed();
    cycle();
    m.req_valid_i = 0;
    dut->eval();
    ASSERT_EQ(m.wc_flush_written_o, 0) << "idle cycle after " << i;
    ASSERT_EQ(m.art_ctrl_written_o, 0u) << "idle cycle after " << i;
    ASSERT_EQ(m.host_port_up_written_o, 0) << "idle cycle after " << i;
  }
}

TEST_F(CsrRegsTest, AddressesOutsideTheMapHitNothing) {
  unsigned tried = 0;
  for (uint32_t off = 0; off < regs::kBarBytes; off += 4) {
    if (model.count(off)) continue;
    bool hit = true;
    EXPECT_EQ(read(off, &hit), 0u) << std::hex << off;
    EXPECT_FALSE(hit) << std::hex << off;
    write(off, 0xFFFFFFFFu);
    ++tried;
  }
  EXPECT_GT(tried, 500u);
  expectAllAsModel("after writes to unmapped addresses");
}

// The register map as a second reading of its SystemRDL source gives it (tb/regs_expect.py
// with systemrdl-compiler, not the generator that built the block and the header): every
// register element answers at its address with its reset value, a read/write one keeps
// exactly its writable bits, the others keep what they hold, and every other address of
// the 4 KiB BAR hits nothing.
enum class RdlKind { kConstant, kHardware, kReadWrite, kWriteOneClears, kCounter };
struct RdlReg {
  uint32_t addr, reset, writable;
  RdlKind kind;
  const char* path;
};
const RdlReg kRdlRegs[] = {
#include "regs_expect.inc"
};

TEST_F(CsrRegsTest, EveryRegisterOfTheSystemRdlSourceAnswersAtItsAddress) {
  std::map<uint32_t, uint32_t> before;
  for (const auto& r : kRdlRegs) {
    bool hit = false;
    before[r.addr] = read(r.addr, &hit);
    EXPECT_TRUE(hit) << r.path;
    if (r.kind != RdlKind::kHardware) EXPECT_EQ(before[r.addr], r.reset) << r.path << " after reset";
  }
  EXPECT_EQ(before.size(), std::size(kRdlRegs)) << "two registers at one address";
  for (const auto& r : kRdlRegs) {
    write(r.addr, 0xFFFF'FFFFu);
    const uint32_t v = read(r.addr);
    switch (r.kind) {
      case RdlKind::kReadWrite: EXPECT_EQ(v, r.writable) << r.path; break;
      case RdlKind::kWriteOneClears:
      case RdlKind::kCounter: EXPECT_EQ(v, 0u) << r.path << " (a write clears it)"; break;
      case RdlKind::kConstant:
      case RdlKind::kHardware: EXPECT_EQ(v, before[r.addr]) << r.path << " (read-only)"; break;
    }
  }
  for (uint32_t off = 0; off < 0x1000; off += 4) {
    if (before.count(off)) continue;
    bool hit = true;
    EXPECT_EQ(read(off, &hit), 0u) << std::hex << off;
    EXPECT_FALSE(hit) << std::hex << off;
  }
}

}  // namespace

// Banked registers (a copy per host port; this build has one bank): a request of a
// bank that does not exist reads 0 and writes nothing; every other register ignores
// the bank.
TEST_F(CsrRegsTest, BankedRegistersAnswerOnlyTheirOwnBanks) {
  unsigned banked = 0;
  for (const auto& in : all) {
    if (in.reg->access != regs::Access::Rw) continue;
    const uint32_t v = static_cast<uint32_t>(rng()()) & in.reg->fields;
    dut->m.req_bank_i = 1 + rng()() % 255;
    bool hit = false;
    const uint32_t got = read(in.offset, &hit);
    EXPECT_TRUE(hit) << in.reg->name;
    EXPECT_EQ(got, in.reg->banked ? 0u : model[in.offset]) << in.reg->name << " read from another bank";
    write(in.offset, v);
    if (!in.reg->banked) model[in.offset] = v;
    banked += in.reg->banked;
    dut->m.req_bank_i = 0;
    EXPECT_EQ(read(in.offset), model[in.offset]) << in.reg->name << " after a write from another bank";
  }
  EXPECT_EQ(banked, 4u) << "INTR_ADDR_LO/HI, INTR_DATA, INTR_MASK";
}

// SPDX-License-Identifier: Apache-2.0
// Unit test of ni_host_tx alone at 64 bits: decapsulated TLPs (with nullify
// flags), the NI's own TLPs (UR/CA completions, write confirmations, interrupts),
// CSR read completions, the DMA engine's memory reads and its local-copy writes (with
// nullify flags) merged onto
// the host port under random idles and back-pressure. Every TLP must come out
// whole, in its source's order, byte-equal to the golden codec; the sources take
// turns when all of them wait; a decapsulated beat passes in the cycle it is
// offered (no register on the way), and so does a local-copy beat.
#include <gtest/gtest.h>

#include <deque>

#include "Vni_host_tx.h"
#include "axis_bfm.hpp"
#include "host_tx_copy.hpp"
#include "pkg_structs.hpp"
#include "tlp.hpp"
#include "verilated_fixture.hpp"
#include "verilated_ports.hpp"

using namespace ni;
using ni::setField;

namespace {

constexpr unsigned kBpb = 8;
constexpr uint16_t kNiReqId = 0x0100;

struct RdCpl { uint32_t data; uint16_t reqid, tag; uint8_t laddr; };  // a 10-bit tag
struct DmaRd { uint64_t addr; uint16_t bytes; uint8_t tag; };

// In the block's round-robin order.
enum Src { kFab = 0, kUr = 1, kRd = 2, kDma = 3, kCopy = 4 };
constexpr uint8_t kCopyTag = 0xC0;  // marks the test's local-copy TLPs

class HostTxTest : public tb::VerilatedTest {
 protected:
  void SetUp() override {
    VerilatedTest::SetUp();
    dut = std::make_unique<tb::VlClocked<Vni_host_tx>>(ctx(), "host_tx");
    attach(dut.get());
    reset();
  }

  // Fabric-side TLPs: MWr or CplD with at least 12 bytes of data, so never mistaken for the NI's own TLPs.
  void addFab(bool nullified) {
    Tlp t = rng()() & 1 ? makeMWr(static_cast<uint16_t>(rng()() | 0x8000), static_cast<uint8_t>(rng()()), (rng()() & ~3ull) >> 8,
                                  Bytes(4 * (3 + rng()() % 40), 0))
                        : makeCplD(0, static_cast<uint16_t>(rng()()), static_cast<uint8_t>(rng()()), rng()() & 0x7C,
                                   Bytes(4 * (3 + rng()() % 40), 0));
    for (auto& b : t.data) b = static_cast<uint8_t>(rng()());
    fabExpect.push_back(encodeTlp(t));
    fabUser.push_back(nullified);
    fabSrc.push(fabExpect.back());
  }
  // A local-copy write of the DMA engine: an MWr of the NI with 8 to 256 bytes.
  void addCopy(bool nullified) {
    Bytes data(4 * (2 + rng()() % 63));
    for (auto& b : data) b = static_cast<uint8_t>(rng()());
    copyExpect.push_back(encodeTlp(makeMWr(kNiReqId, kCopyTag, (rng()() & ~63ull) >> 16, data)));
    copyUser.push_back(nullified);
    copyUserExpect.push_back(nullified);
    copySrc.push(copyExpect.back());
  }
  // One of the NI's own TLPs: UR or CA completion, write confirmation, interrupt.
  void addUr() {
    tb::OwnCpl c;
    const unsigned k = rng()() % 4;
    c.kind = k < 2 ? tb::OwnKind::Cpl : k == 2 ? tb::OwnKind::Conf : tb::OwnKind::Irq;
    c.status = c.kind == tb::OwnKind::Cpl ? (k ? 4 : 1) : 0;
    c.reqid = static_cast<uint16_t>(rng()());
    c.tag = static_cast<uint16_t>(rng()() & 0x3FF);
    c.addr = rng()() & (c.kind == tb::OwnKind::Cpl ? 0x7Cu : ~uint64_t{3});
    c.data = static_cast<uint32_t>(rng()());
    ur.push_back(c);
    urExpect.push_back(c);
  }
  static Bytes expectedOwn(const tb::OwnCpl& c) {
    switch (c.kind) {
      case tb::OwnKind::Conf: return encodeTlp(makeWriteConfirmation(kNiReqId, c.reqid, c.tag, c.addr));
      case tb::OwnKind::Irq: return encodeTlp(makeMWr(kNiReqId, 0, c.addr, le32(c.data)));
      default:
        return encodeTlp(makeCpl(kNiReqId, c.reqid, c.tag, c.status == 4 ? CplStatus::CA : CplStatus::UR, 4,
                                 static_cast<uint8_t>(c.addr & 0x7F)));
    }
  }
  void addRd() {
    rd.push_back(RdCpl{static_cast<uint32_t>(rng()()), static_cast<uint16_t>(rng()()),
                       static_cast<uint16_t>(rng()() & 0x3FF), static_cast<uint8_t>(rng()() & 0x7F)});
    rdExpect.push_back(rd.back());
  }
  // A memory read of the DMA engine: 4 to 4096 bytes, whole DWs.
  void addDma() {
    dma.push_back(DmaRd{rng()() & ~uint64_t{3}, static_cast<uint16_t>(4 * (1 + rng()() % 1024)),
                        static_cast<uint8_t>(rng()())});
    dmaExpect.push_back(dma.back());
  }

  // Runs until every queued TLP came out (runCycles: the cycles that took); `order`
  // gets the sources in output order.
  void run(double localOfferProb) {
    bool urHeld = false, rdHeld = false, dmaHeld = false;
    const size_t total = fabExpect.size() + urExpect.size() + rdExpect.size() + dmaExpect.size() + copyExpect.size();
    size_t fabIdx = 0, urIdx = 0, rdIdx = 0, dmaIdx = 0, copyIdx = 0;
    std::vector<unsigned> tdests;  // of the beats of the TLP being received
    uint64_t c = 0;
    for (; order.size() < total; ++c) {
      if (c > 200000) { ADD_FAILURE() << "stuck, seed " << seed(); break; }
      Beat fb;
      const bool fv = fabSrc.offer(&fb);
      auto& m = dut->m;
      m.s_axis_tvalid = fv;
      if (fv) {
        toPort(m.s_axis_tdata, fb.data.data(), kBpb);
        m.s_axis_tkeep = static_cast<uint8_t>(fb.keep);
        m.s_axis_tlast = fb.last;
        m.s_axis_tuser = fb.last && fabUser.front();
      }
      Beat cb;
      const bool cv = copySrc.offer(&cb);
      m.copy_valid_i = cv;
      if (cv) {  // {bad, last, keep, data}
        for (unsigned j = 0; j < kBpb; ++j) setField(m.copy_beat_i, 8 * j, 8, cb.data[j]);
        setField(m.copy_beat_i, 8 * kBpb, kBpb, cb.keep);
        setField(m.copy_beat_i, 9 * kBpb, 1, cb.last);
        setField(m.copy_beat_i, 9 * kBpb + 1, 1, cb.last && copyUser.front());
      }
      urHeld = urHeld || (!ur.empty() && std::uniform_real_distribution<>(0, 1)(rng()) < localOfferProb);
      rdHeld = rdHeld || (!rd.empty() && std::uniform_real_distribution<>(0, 1)(rng()) < localOfferProb);
      m.ur_valid_i = urHeld;
      if (urHeld) tb::packOwnCpl(m.ur_i, ur.front());
      m.rd_valid_i = rdHeld;
      if (rdHeld) {  // {data, reqid, tag, lower address}
        setField(m.rd_i, 0, 7, rd.front().laddr);
        setField(m.rd_i, 7, 10, rd.front().tag);
        setField(m.rd_i, 17, 16, rd.front().reqid);
        setField(m.rd_i, 33, 32, rd.front().data);
      }
      dmaHeld = dmaHeld || (!dma.empty() && std::uniform_real_distribution<>(0, 1)(rng()) < localOfferProb);
      m.dma_rd_valid_i = dmaHeld;
      if (dmaHeld) {
        m.dma_rd_addr_i = dma.front().addr;
        m.dma_rd_bytes_i = dma.front().bytes;
        m.dma_rd_tag_i = dma.front().tag;
      }
      m.m_axis_tready = sink.ready();
      dut->eval();
      const Beat ob = tb::offeredBeat(m, kBpb);
      const bool ov = m.m_axis_tvalid;
      const bool copyTaken = cv && m.copy_ready_o;
      const bool fabTaken = fv && m.s_axis_tready, urTaken = urHeld && m.ur_ready_o, rdTaken = rdHeld && m.rd_ready_o,
                 dmaTaken = dmaHeld && m.dma_rd_ready_o;
      if (ov && m.m_axis_tready) tdests.push_back(m.m_axis_tdest);
      cycle();
      if (fabTaken) {
        if (fb.last) fabUser.pop_front();
        fabSrc.accepted();
      }
      if (copyTaken) {
        if (cb.last) copyUser.pop_front();
        copySrc.accepted();
      }
      if (urTaken) { ur.pop_front(); urHeld = false; }
      if (rdTaken) { rd.pop_front(); rdHeld = false; }
      if (dmaTaken) { dma.pop_front(); dmaHeld = false; }
      if (!sink.observe(ov, ob, c)) continue;
      const tb::Packet& p = sink.packets().back();
      // tdest, on every beat: the port an interrupt names (reqid bits 15:8), else 0.
      const bool irq = p.bytes.size() == 20 && p.bytes[0] == 0x60 && urIdx < urExpect.size() &&
                       urExpect[urIdx].kind == tb::OwnKind::Irq;
      const unsigned wantDest = irq ? urExpect[urIdx].reqid >> 8 : 0;
      for (unsigned d : tdests) EXPECT_EQ(d, wantDest) << "tdest of TLP ending at cycle " << c << " seed " << seed();
      tdests.clear();
      if ((p.bytes.size() == 12 && p.bytes[0] == 0x0A) || p.bytes.size() == 20) {
        ASSERT_LT(urIdx, urExpect.size());
        EXPECT_EQ(p.bytes, expectedOwn(urExpect[urIdx])) << "own TLP " << urIdx << " seed " << seed();
        ++urIdx;
        EXPECT_FALSE(p.user);
        order.push_back(kUr);
      } else if (p.bytes.size() == 16 && p.bytes[0] == 0x4A) {
        ASSERT_LT(rdIdx, rdExpect.size());
        const RdCpl& r = rdExpect[rdIdx++];
        EXPECT_EQ(p.bytes, encodeTlp(makeCplD(kNiReqId, r.reqid, r.tag, r.laddr, le32(r.data)))) << "CSR cpl " << rdIdx - 1;
        EXPECT_FALSE(p.user);
        order.push_back(kRd);
      } else if (p.bytes.size() == 16 && p.bytes[0] == 0x20) {
        ASSERT_LT(dmaIdx, dmaExpect.size());
        const DmaRd& r = dmaExpect[dmaIdx++];
        EXPECT_EQ(p.bytes, encodeTlp(makeMRd(kNiReqId, r.tag, r.addr, r.bytes))) << "DMA read " << dmaIdx - 1;
        EXPECT_FALSE(p.user);
        order.push_back(kDma);
      } else if (p.bytes.size() > 20 && p.bytes[0] == 0x60 && getBe(&p.bytes[4], 2) == kNiReqId &&
                 p.bytes[6] == kCopyTag) {
        ASSERT_LT(copyIdx, copyExpect.size());
        EXPECT_EQ(p.bytes, copyExpect[copyIdx]) << "local-copy TLP " << copyIdx << " seed " << seed();
        EXPECT_EQ(p.user, copyUserExpect[copyIdx]) << "nullify flag of local-copy TLP " << copyIdx;
        ++copyIdx;
        order.push_back(kCopy);
      } else {
        ASSERT_LT(fabIdx, fabExpect.size());
        EXPECT_EQ(p.bytes, fabExpect[fabIdx]) << "decapsulated TLP " << fabIdx << " seed " << seed();
        EXPECT_EQ(p.user, fabUserExpect[fabIdx]) << "nullify flag of TLP " << fabIdx;
        ++fabIdx;
        order.push_back(kFab);
      }
    }
    runCycles = c;
  }

  std::unique_ptr<tb::VlClocked<Vni_host_tx>> dut;
  tb::AxisSource fabSrc{kBpb, &rng()};
  tb::AxisSource copySrc{kBpb, &rng()};
  std::deque<Bytes> copyExpect;
  std::deque<bool> copyUser, copyUserExpect;
  tb::AxisSink sink{kBpb, &rng()};
  std::deque<Bytes> fabExpect;
  std::deque<bool> fabUser, fabUserExpect;
  std::deque<tb::OwnCpl> ur, urExpect;
  std::deque<RdCpl> rd, rdExpect;
  std::deque<DmaRd> dma, dmaExpect;
  uint64_t runCycles = 0;
  std::vector<Src> order;
};

TEST_F(HostTxTest, MergesAllSourcesWholeAndInOrderUnderStalls) {
  fabSrc.setIdle(0.3);
  copySrc.setIdle(0.5);
  sink.setStall(0.3);
  for (int i = 0; i < 300; ++i) {
    const bool nul = rng()() % 5 == 0;
    addFab(nul);
    fabUserExpect.push_back(nul);
    if (i % 2) addUr();
    if (i % 3) addRd();
    if (i % 4 == 0) addCopy(rng()() % 6 == 0);
    if (i % 5 == 0) addDma();
  }
  run(0.2);
  EXPECT_EQ(order.size(), 300u + 150u + 200u + 75u + 60u);
}

TEST_F(HostTxTest, SourcesTakeTurnsWhenAllWait) {
  for (int i = 0; i < 60; ++i) {
    addFab(false);
    fabUserExpect.push_back(false);
    addUr();
    addRd();
    addDma();
    addCopy(false);
  }
  run(1.0);
  ASSERT_EQ(order.size(), 300u);
  for (size_t i = 0; i < order.size(); ++i) EXPECT_EQ(order[i], Src(i % 5)) << "position " << i;
}

// The DMA engine's reads offered back to back, every output ready: each MRd is two
// beats at 64 bits, and the next one follows its last beat at once (a stage takes its
// next TLP as its last beat leaves): two beats a read, plus the stage and the output
// queue at the start and the end.
TEST_F(HostTxTest, OneSourcesOwnTlpsGoBackToBack) {
  for (int i = 0; i < 40; ++i) addDma();
  run(1.0);
  ASSERT_EQ(order.size(), 40u);
  EXPECT_LE(runCycles, 2u * 40 + 4) << "DMA reads do not leave back to back";
}

// A DMA read offered in the cycle a local copy's last beat is taken (as the engine
// issues its next read when a copy's write ends) leaves right behind that beat: its
// stage takes it in that cycle and the pick already counts it (one idle cycle of the
// host port per copy otherwise: 0.86 of the port for copies at 512 bits).
TEST_F(HostTxTest, AReadOfferedAsACopyEndsFollowsItAtOnce) {
  auto& m = dut->m;
  const Bytes copy = encodeTlp(makeMWr(kNiReqId, kCopyTag, 0x1000, Bytes(24, 0x5A)));  // 40 bytes, 5 beats
  m.m_axis_tready = 1;
  size_t off = 0;
  bool rdWait = false;
  std::vector<uint64_t> lastAt;  // cycles the output's TLPs end
  uint64_t readFirstAt = 0;
  for (uint64_t c = 0; c < 40; ++c) {
    const bool last = tb::offerCopyBeat(m, copy, off, off < copy.size(), kBpb);
    m.dma_rd_valid_i = rdWait || (last && m.copy_ready_o);
    m.dma_rd_addr_i = 0x2000;
    m.dma_rd_bytes_i = 256;
    m.dma_rd_tag_i = 0x81;
    dut->eval();
    // The copy's last beat is taken in this cycle: the engine offers its next read.
    if (last && m.copy_ready_o && !m.dma_rd_valid_i) {
      m.dma_rd_valid_i = 1;
      dut->eval();
    }
    const bool rdTaken = m.dma_rd_valid_i && m.dma_rd_ready_o;
    if (m.copy_valid_i && m.copy_ready_o) off += kBpb;
    rdWait = m.dma_rd_valid_i && !rdTaken;
    if (m.m_axis_tvalid && lastAt.size() == 1 && readFirstAt == 0) readFirstAt = c;
    if (m.m_axis_tvalid && m.m_axis_tlast) lastAt.push_back(c);
    cycle();
  }
  ASSERT_EQ(lastAt.size(), 2u) << "the copy and the read";
  EXPECT_EQ(readFirstAt, lastAt[0] + 1) << "an idle cycle between the copy and the read";
}

// Decapsulated TLPs one after the other with a cycle between them (the fabric header
// beats that the receiver does not pass on): the pick stays on the fabric while no
// source waits, so the next TLP leaves after one idle cycle, the input's own (two,
// when the pick had to be made again: a receiver at 256 bits then lost a cycle in
// every ten).
TEST_F(HostTxTest, DecapsulatedTlpsWithAGapBetweenThemLoseNoMoreThanTheGap) {
  auto& m = dut->m;
  const Bytes tlp = encodeTlp(makeMWr(0x8001, 0x11, 0x4000, Bytes(16, 0xA5)));  // 32 bytes, 4 beats
  m.m_axis_tready = 1;
  std::vector<uint64_t> firstAt, lastAt;  // cycles the output's TLPs start and end
  size_t off = 0;
  unsigned sent = 0, gap = 0;
  bool inTlp = false;
  for (uint64_t c = 0; c < 60 && lastAt.size() < 4; ++c) {
    const bool v = sent < 4 && gap == 0;
    m.s_axis_tvalid = v;
    if (v) {
      uint8_t buf[kBpb];
      for (unsigned j = 0; j < kBpb; ++j) buf[j] = tlp[off + j];
      toPort(m.s_axis_tdata, buf, kBpb);
      m.s_axis_tkeep = 0xFF;
      m.s_axis_tlast = off + kBpb >= tlp.size();
      m.s_axis_tuser = 0;
    }
    dut->eval();
    const bool taken = v && m.s_axis_tready;
    if (m.m_axis_tvalid && !inTlp) firstAt.push_back(c), inTlp = true;
    if (m.m_axis_tvalid && m.m_axis_tlast) lastAt.push_back(c), inTlp = false;
    cycle();
    if (gap) --gap;
    if (taken) {
      off += kBpb;
      if (off >= tlp.size()) off = 0, ++sent, gap = 1;
    }
  }
  ASSERT_EQ(lastAt.size(), 4u);
  for (size_t i = 1; i < 4; ++i) EXPECT_EQ(firstAt[i], lastAt[i - 1] + 2) << "TLP " << i;
}

}  // namespace

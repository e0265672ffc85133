// SPDX-License-Identifier: Apache-2.0
// Unit test of ni_fab_tx (the framer) alone at 64 and 512 bits (where the payload
// is shifted by half a beat behind the header): three sources (tunneled
// completions with payload, header-only NAKs and UR completions, tunneled
// requests with payload, continuations and raw packets), random credits, idles and
// back-pressure. Every packet
// must equal the golden codec's bytes, keep its source's order, carry the right
// PSN, and never start without a credit for its VC; the credits it reports holding
// must be those given minus those used.
#include <gtest/gtest.h>

#include <deque>

#include "Vni_fab_tx.h"
#include "Vni_fab_tx512.h"
#include "axis_bfm.hpp"
#include "fabric_pkt.hpp"
#include "pkg_structs.hpp"
#include "tlp.hpp"
#include "verilated_ports.hpp"
#include "verilated_fixture.hpp"
#include "verilated_ports.hpp"

using namespace ni;
using ni::setField;

namespace {

constexpr unsigned kHdrBits = tb::kTxDescBits;
constexpr uint16_t kCplId = 0x0100;  // ni_fab_tx's CplId
constexpr uint16_t kNode = 0x0123;

struct SrcPkt {
  FabricPacket pkt;    // as it must leave (SLID and PSN filled in)
  Bytes header;        // what the source hands over: first hdrLen bytes, SLID/PSN zero
  unsigned hdrLen = 0;
  bool payload = false;
  bool cont = false;   // a continuation: header bytes replace the beats' first 16 bytes
  bool raw = false;    // a raw packet: the beats are the whole packet, a VCRC follows
  Bytes payloadBytes;
  tb::TxDesc desc;     // what the source hands the framer
};

class FabTxTest : public tb::VerilatedTest {
 protected:
  // The packet's PSN is filled in when it is checked: it follows the framer's pick order.
  SrcPkt make(unsigned src) {
    SrcPkt s;
    FabricPacket& p = s.pkt;
    p.dlid = static_cast<uint16_t>(1 + rng()() % 50);
    p.slid = kNode;
    if (src == 1) {  // NAK or UR completion built by the receiver: no payload stream
      p.vl = p.sl = 1;
      if (rng()() & 1) {
        p.opcode = kOpRcAck;
        p.syndrome = kAethNakPsnSeq;
        p.psn = rng()() & 0xFFFFFF;
      } else {
        p.opcode = kOpTunnelRsp;
        // An inline UR completion (always 12 bytes), built by the framer from its fields.
        s.desc.kind = tb::TxKind::Ur;
        s.desc.memid = static_cast<uint16_t>(rng()());  // requester ID
        s.desc.aux8 = static_cast<uint8_t>(rng()());    // tag
        s.desc.key = static_cast<uint16_t>(rng()() % 4096);  // byte count
        s.desc.flags = static_cast<uint8_t>(rng()() & 0x7F);  // lower address
        p.payload = encodeTlp(makeCpl(kCplId, s.desc.memid, s.desc.aux8, CplStatus::UR, s.desc.key, s.desc.flags));
      }
    } else if (src == 2 && rng()() % 4 == 0) {
      // A raw packet as the DMA engine hands it over: LRH, RWH and datagram in the beats.
      p.raw = true;
      p.etherType = static_cast<uint16_t>(rng()());
      p.payload = Bytes(4 * (1 + rng()() % 57));
      for (auto& x : p.payload) x = static_cast<uint8_t>(rng()());
      const Bytes full = encodeFabric(p);
      s.payload = s.raw = true;
      s.payloadBytes.assign(full.begin(), full.end() - kRawTrailerBytes);
      s.hdrLen = kRawHdrBytes;
      s.header.assign(full.begin(), full.begin() + kRawHdrBytes);
      s.desc.kind = tb::TxKind::Raw;
      s.desc.memid = p.etherType;
      finishDesc(s, full);
      return s;
    } else if (src == 2 && rng()() % 3 == 0) {
      // A continuation as ni_retx hands it over: LRH + CTH with its PSN, and the beats
      // of the combined TLP (a 16-byte header the framer overwrites, then the data).
      p.opcode = kOpTunnelCont;
      p.psn = rng()() & 0xFFFFFF;
      p.payload = Bytes(4 * (1 + rng()() % 64));
      for (auto& x : p.payload) x = static_cast<uint8_t>(rng()());
      s.payload = s.cont = true;
      s.payloadBytes = Bytes(16);
      for (auto& x : s.payloadBytes) x = static_cast<uint8_t>(rng()());
      s.payloadBytes.insert(s.payloadBytes.end(), p.payload.begin(), p.payload.end());
      const Bytes full = encodeFabric(p);
      s.hdrLen = 0;
      s.header.assign(full.begin(), full.begin() + kContHdrBytes);
      s.header[6] = s.header[7] = 0;  // the framer stamps SLID
      s.desc.kind = tb::TxKind::Cont;
      s.desc.psn = p.psn;
      finishDesc(s, full);
      return s;
    } else {
      p.vl = p.sl = (src == 0) ? 1 : 0;
      p.opcode = (src == 0) ? kOpTunnelRsp : kOpTunnelReq;
      s.desc.kind = (src == 0) ? tb::TxKind::Rsp : tb::TxKind::Req;
      p.tehFlags = s.desc.flags = rng()() & 1;
      p.memid = s.desc.memid = static_cast<uint16_t>(rng()());
      p.counter = s.desc.aux8 = static_cast<uint8_t>(rng()());
      p.key = s.desc.key = static_cast<uint16_t>(rng()());
      p.payload = Bytes(4 * (4 + rng()() % 70));  // at least 16 bytes: never taken for a UR completion
      for (auto& x : p.payload) x = static_cast<uint8_t>(rng()());
      s.payload = true;
      s.payloadBytes = p.payload;
    }
    const Bytes full = encodeFabric(p);
    s.hdrLen = p.opcode == kOpRcAck ? 24 : (s.payload ? 32 : 44);
    s.header.assign(full.begin(), full.begin() + s.hdrLen);
    s.header[6] = s.header[7] = 0;  // the framer stamps SLID
    if (p.opcode != kOpRcAck) s.header[17] = s.header[18] = s.header[19] = 0;  // and PSN
    if (p.opcode == kOpRcAck) {
      s.desc.kind = tb::TxKind::Ack;
      s.desc.flags = p.syndrome;
      s.desc.psn = p.psn;
    } else {
      s.desc.stamp = true;
    }
    finishDesc(s, full);
    return s;
  }
  static void finishDesc(SrcPkt& s, const Bytes& full) {
    s.desc.vc = s.pkt.vl;
    s.desc.dlid = s.pkt.dlid;
    s.desc.words = static_cast<uint16_t>((full[4] << 8 | full[5]) & 0x7FF);
  }

  template <class Dut>
  void setHeader(Dut* dut, unsigned src, const SrcPkt& s) {
    tb::packTxDesc(dut->m.src_hdr_i, src * kHdrBits, s.desc);
  }

  template <class M, unsigned kBpb>
  void packetsMatchCodec();
};

template <class M, unsigned kBpb>
void FabTxTest::packetsMatchCodec() {
  constexpr unsigned kBeatBits = 8 * kBpb + kBpb + 2;
  auto dut = std::make_unique<tb::VlClocked<M>>(ctx(), "fab_tx");
  attach(dut.get());
  reset();
  dut->m.node_id_i = kNode;
  dut->m.pkey_i = 0xFFFF;
  std::deque<SrcPkt> queue[3], expect[3];
  uint32_t psn[2] = {0, 0};
  const unsigned perSrc = 150;
  for (unsigned i = 0; i < perSrc; ++i)
    for (unsigned s = 0; s < 3; ++s) {
      queue[s].push_back(make(s));
      expect[s].push_back(queue[s].back());
    }
  std::deque<tb::Packet> out;
  tb::AxisSink sink(kBpb, &rng(), 0.3);
  size_t off[3] = {0, 0, 0};       // payload bytes of the current packet already sent
  bool hdrTaken[3] = {false, false, false};
  unsigned granted[2] = {0, 0}, started[2] = {0, 0};
  for (uint64_t c = 0; c < 200000 && out.size() < 3 * perSrc; ++c) {
    // Credits: a trickle from a fabric with 4 slots per VC, so that credit stalls happen.
    dut->m.credit_i = 0;
    for (unsigned v = 0; v < 2; ++v)
      if (granted[v] - started[v] < 4 && rng()() % 100 < 4) { dut->m.credit_i |= 1u << v; ++granted[v]; }
    dut->m.src_hdr_valid_i = 0;
    dut->m.src_beat_valid_i = 0;
    bool beatOffered[3] = {false, false, false};
    for (unsigned s = 0; s < 3; ++s) {
      if (queue[s].empty()) continue;
      const SrcPkt& p = queue[s].front();
      if (!hdrTaken[s]) {
        setHeader(dut.get(), s, p);
        dut->m.src_hdr_valid_i |= 1u << s;
      }
      if (p.payload && rng()() % 100 < 80) {
        const unsigned base = s * kBeatBits;
        for (unsigned j = 0; j < kBpb; ++j) {
          const bool in = off[s] + j < p.payloadBytes.size();
          setField(dut->m.src_beat_i, base + 8 * j, 8, in ? p.payloadBytes[off[s] + j] : 0);
          setField(dut->m.src_beat_i, base + 8 * kBpb + j, 1, in);
        }
        const bool last = off[s] + kBpb >= p.payloadBytes.size();
        setField(dut->m.src_beat_i, base + 9 * kBpb, 1, last);
        setField(dut->m.src_beat_i, base + 9 * kBpb + 1, 1, 0);
        dut->m.src_beat_valid_i |= 1u << s;
        beatOffered[s] = true;
      }
    }
    dut->m.m_axis_tready = sink.ready();
    dut->eval();
    const unsigned hdrReady = dut->m.src_hdr_ready_o, beatReady = dut->m.src_beat_ready_o;
    Beat b;
    b.data.resize(kBpb);
    fromPort(dut->m.m_axis_tdata, b.data.data(), kBpb);
    b.keep = dut->m.m_axis_tkeep;
    b.last = dut->m.m_axis_tlast;
    b.dest = dut->m.m_axis_tdest;
    const bool valid = dut->m.m_axis_tvalid;
    cycle();
    for (unsigned s = 0; s < 3; ++s) {
      if ((dut->m.src_hdr_valid_i >> s & 1) && (hdrReady >> s & 1)) {
        hdrTaken[s] = true;
        ++started[queue[s].front().pkt.vl];
        ASSERT_LE(started[queue[s].front().pkt.vl], granted[queue[s].front().pkt.vl]) << "packet without credit";
      }
      if (beatOffered[s] && (beatReady >> s & 1)) {
        off[s] += kBpb;
        if (off[s] >= queue[s].front().payloadBytes.size()) {
          queue[s].pop_front();
          off[s] = 0;
          hdrTaken[s] = false;
        }
      }
      if (!queue[s].empty() && !queue[s].front().payload && hdrTaken[s]) {
        queue[s].pop_front();
        hdrTaken[s] = false;
      }
    }
    // The credits it holds (FAB_CREDITS): given minus started, a return in the cycle of a start included.
    for (unsigned v = 0; v < 2; ++v)
      ASSERT_EQ(dut->m.credits_o >> (8 * v) & 0xFF, granted[v] - started[v]) << "VC " << v << " cycle " << c;
    if (sink.observe(valid, b, c)) out.push_back(sink.packets().back());
  }
  ASSERT_EQ(out.size(), 3 * perSrc) << "seed " << seed();
  size_t idx[3] = {0, 0, 0};
  for (auto& o : out) {
    FabError err;
    auto d = decodeFabric(o.bytes, &err);
    ASSERT_TRUE(d) << toString(err);
    EXPECT_EQ(o.dest, d->vl) << "tdest is the VC";
    // Source: requests come from 2; NAKs and 12-byte UR completions from 1; other completions from 0.
    const unsigned s = (d->raw || d->opcode == kOpTunnelReq || d->isCont())              ? 2
                       : (d->opcode == kOpRcAck || d->payload.size() == 12) ? 1
                                                                                          : 0;
    ASSERT_LT(idx[s], perSrc);
    FabricPacket e = expect[s][idx[s]++].pkt;
    if (e.opcode != kOpRcAck && !e.isCont() && !e.raw) e.psn = psn[e.vl]++;  // a continuation brings its own
    EXPECT_EQ(o.bytes, encodeFabric(e)) << "source " << s << " packet " << idx[s] - 1 << " differs at byte "
                                        << firstDifference(o.bytes, encodeFabric(e)) << " seed " << seed();
  }
}

TEST_F(FabTxTest, PacketsMatchCodecUnderRandomCreditsAndStalls) { packetsMatchCodec<Vni_fab_tx, 8>(); }
TEST_F(FabTxTest, PacketsMatchCodecAt512Bits) { packetsMatchCodec<Vni_fab_tx512, 64>(); }

}  // namespace

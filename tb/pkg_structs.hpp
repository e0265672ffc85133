// SPDX-License-Identifier: Apache-2.0
// Bit layout of the ni_pkg structs that cross unit-test ports (rtl/ni_pkg.sv).
#pragma once
#include <cstdint>
#include <ostream>

#include "fabric_pkt.hpp"
#include "tlp.hpp"
#include "verilated_ports.hpp"

namespace ni::tb {

// ni_pkg::tx_desc_t: {kind[3], back_page[52], vc, dlid[16], pkt_words[11], psn[24],
// stamp_psn, flags[8], aux8[8], memid[16], key[16]} (rtl/ni_pkg.sv says what each
// field is for each kind).
constexpr unsigned kTxDescBits = 156;
enum class TxKind : uint8_t { Req = 0, Cont = 1, Rsp = 2, Ur = 3, Ack = 4, Raw = 5 };
struct TxDesc {
  TxKind kind = TxKind::Req;
  uint64_t backPage = 0;
  bool vc = false;
  uint16_t dlid = 0;
  uint16_t words = 0;
  uint32_t psn = 0;
  bool stamp = false;
  uint8_t flags = 0, aux8 = 0;
  uint16_t memid = 0, key = 0;
  bool operator==(const TxDesc& o) const {
    return kind == o.kind && backPage == o.backPage && vc == o.vc && dlid == o.dlid && words == o.words &&
           psn == o.psn && stamp == o.stamp && flags == o.flags && aux8 == o.aux8 && memid == o.memid && key == o.key;
  }
  bool operator!=(const TxDesc& o) const { return !(*this == o); }
};
inline std::ostream& operator<<(std::ostream& os, const TxDesc& d) {
  return os << "{kind " << int(d.kind) << " back 0x" << std::hex << d.backPage << " vc " << d.vc << " dlid 0x" << d.dlid
            << " words " << std::dec << d.words << " psn 0x" << std::hex << d.psn << " stamp " << d.stamp << " flags 0x"
            << int(d.flags) << " aux8 0x" << int(d.aux8) << " memid 0x" << d.memid << " key 0x" << d.key << std::dec
            << "}";
}
template <class P>
void packTxDesc(P& p, unsigned base, const TxDesc& d) {
  setField(p, base + 0, 16, d.key);
  setField(p, base + 16, 16, d.memid);
  setField(p, base + 32, 8, d.aux8);
  setField(p, base + 40, 8, d.flags);
  setField(p, base + 48, 1, d.stamp);
  setField(p, base + 49, 24, d.psn);
  setField(p, base + 73, 11, d.words);
  setField(p, base + 84, 16, d.dlid);
  setField(p, base + 100, 1, d.vc);
  setField(p, base + 101, 52, d.backPage);
  setField(p, base + 153, 3, static_cast<uint8_t>(d.kind));
}
template <class P>
TxDesc unpackTxDesc(const P& p, unsigned base = 0) {
  TxDesc d;
  d.key = static_cast<uint16_t>(getField(p, base + 0, 16));
  d.memid = static_cast<uint16_t>(getField(p, base + 16, 16));
  d.aux8 = static_cast<uint8_t>(getField(p, base + 32, 8));
  d.flags = static_cast<uint8_t>(getField(p, base + 40, 8));
  d.stamp = getField(p, base + 48, 1);
  d.psn = static_cast<uint32_t>(getField(p, base + 49, 24));
  d.words = static_cast<uint16_t>(getField(p, base + 73, 11));
  d.dlid = static_cast<uint16_t>(getField(p, base + 84, 16));
  d.vc = getField(p, base + 100, 1);
  d.backPage = getField(p, base + 101, 52);
  d.kind = static_cast<TxKind>(getField(p, base + 153, 3));
  return d;
}

// The header bytes the framer sends for descriptor d (golden: built by the codec from the
// descriptor's fields, as ni_pkg::tx_header builds them in the RTL): LRH and BTH/TEH, CTH,
// AETH, RWH, or a UR answer's TEH and completion. SLID and P_Key are the framer's; so is
// the PSN if d.stamp; cplId is the completer ID of a UR answer.
inline Bytes txDescHeader(const TxDesc& d, uint16_t slid, uint32_t ownPsn = 0, uint16_t cplId = 0,
                          uint16_t pkey = kDefaultPKey) {
  FabricPacket p;
  p.vl = p.sl = d.vc;
  p.dlid = d.dlid;
  p.slid = slid;
  p.pkey = pkey;
  p.psn = d.stamp ? ownPsn : d.psn;
  size_t len = kFabHdrBytes;
  switch (d.kind) {
    case TxKind::Req:
    case TxKind::Rsp:
      p.opcode = d.kind == TxKind::Req ? kOpTunnelReq : kOpTunnelRsp;
      p.tehFlags = d.flags;
      p.counter = d.aux8;
      p.memid = d.memid;
      p.key = d.key;
      break;
    case TxKind::Cont:
      p.opcode = kOpTunnelCont;
      len = kContHdrBytes;
      break;
    case TxKind::Ur:
      p.opcode = kOpTunnelRsp;
      // key: the byte count (11:0) and the tag's bits 9:8 (13:12); aux8 the tag's bits 7:0.
      p.payload = encodeTlp(makeCpl(cplId, d.memid, static_cast<uint16_t>((d.key >> 12 & 3) << 8 | d.aux8), CplStatus::UR,
                                    d.key & 0xFFF, d.flags & 0x7F));
      len += p.payload.size();
      break;
    case TxKind::Ack:
      p.opcode = kOpRcAck;
      p.syndrome = d.flags;
      len = kLrhBytes + kBthBytes + kAethBytes;
      break;
    case TxKind::Raw:
      p.raw = true;
      p.etherType = d.memid;
      len = kRawHdrBytes;
      break;
  }
  Bytes b = encodeFabric(p);
  b.resize(len);
  b[4] = static_cast<uint8_t>((b[4] & 0xF8) | ((d.words >> 8) & 7));  // LRH PktLen: the descriptor's
  b[5] = static_cast<uint8_t>(d.words);
  return b;
}

// ni_pkg::TRK_*: what a read-tracker tag stands for (read, atomic, memory-confirmed
// write, NI-confirmed write).
enum : uint8_t { kTrkRead = 0, kTrkAtomic = 1, kTrkConfMem = 2, kTrkConfNi = 3 };

// ni_pkg::own_cpl_t: {kind[2], status[3], reqid[16], tag[10], addr[64], data[32]}.
enum class OwnKind : uint8_t { Cpl = 0, Conf = 1, Irq = 2 };
struct OwnCpl {
  OwnKind kind = OwnKind::Cpl;
  uint8_t status = 0;  // PCIe completion status code (0 SC, 1 UR, 4 CA)
  uint16_t reqid = 0;
  uint16_t tag = 0;  // 10 bits
  uint64_t addr = 0;
  uint32_t data = 0;
  bool operator==(const OwnCpl& o) const {
    return kind == o.kind && status == o.status && reqid == o.reqid && tag == o.tag && addr == o.addr && data == o.data;
  }
};

template <class P>
void packOwnCpl(P& p, const OwnCpl& c) {
  setField(p, 0, 32, c.data);
  setField(p, 32, 64, c.addr);
  setField(p, 96, 10, c.tag);
  setField(p, 106, 16, c.reqid);
  setField(p, 122, 3, c.status);
  setField(p, 125, 2, static_cast<uint8_t>(c.kind));
}

template <class P>
OwnCpl unpackOwnCpl(const P& p) {
  OwnCpl c;
  c.data = static_cast<uint32_t>(getField(p, 0, 32));
  c.addr = getField(p, 32, 64);
  c.tag = static_cast<uint16_t>(getField(p, 96, 10));
  c.reqid = static_cast<uint16_t>(getField(p, 106, 16));
  c.status = static_cast<uint8_t>(getField(p, 122, 3));
  c.kind = static_cast<OwnKind>(getField(p, 125, 2));
  return c;
}

}  // namespace ni::tb

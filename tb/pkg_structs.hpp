// SPDX-License-Identifier: Apache-2.0
// Bit layout of the ni_pkg structs that cross unit-test ports (rtl/ni_pkg.sv).
#pragma once
#include <cstdint>

#include "verilated_ports.hpp"

namespace ni::tb {

// ni_pkg::tx_hdr_t: {raw, cont, back_page[52], bytes[48*8], len[6], has_payload, vc, stamp_psn}.
constexpr unsigned kTxHdrBits = 447;
constexpr unsigned kTxHdrRawBit = 446;
constexpr unsigned kTxHdrContBit = 445;
constexpr unsigned kTxHdrBytesLsb = 9;      // header byte p at bit 9 + 8p
constexpr unsigned kTxHdrBackPageLsb = 393;

// ni_pkg::TRK_*: what a read-tracker tag stands for (read, atomic, memory-confirmed
// write, NI-confirmed write).
enum : uint8_t { kTrkRead = 0, kTrkAtomic = 1, kTrkConfMem = 2, kTrkConfNi = 3 };

// ni_pkg::own_cpl_t: {kind[2], status[3], reqid[16], tag[8], addr[64], data[32]}.
enum class OwnKind : uint8_t { Cpl = 0, Conf = 1, Irq = 2 };
struct OwnCpl {
  OwnKind kind = OwnKind::Cpl;
  uint8_t status = 0;  // PCIe completion status code (0 SC, 1 UR, 4 CA)
  uint16_t reqid = 0;
  uint8_t tag = 0;
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
  setField(p, 96, 8, c.tag);
  setField(p, 104, 16, c.reqid);
  setField(p, 120, 3, c.status);
  setField(p, 123, 2, static_cast<uint8_t>(c.kind));
}

template <class P>
OwnCpl unpackOwnCpl(const P& p) {
  OwnCpl c;
  c.data = static_cast<uint32_t>(getField(p, 0, 32));
  c.addr = getField(p, 32, 64);
  c.tag = static_cast<uint8_t>(getField(p, 96, 8));
  c.reqid = static_cast<uint16_t>(getField(p, 104, 16));
  c.status = static_cast<uint8_t>(getField(p, 120, 3));
  c.kind = static_cast<OwnKind>(getField(p, 123, 2));
  return c;
}

}  // namespace ni::tb

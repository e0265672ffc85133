// SPDX-License-Identifier: Apache-2.0
// Golden codec for fabric packets: IB LRH + BTH + TEH/AETH + payload + ICRC + VCRC,
// the continuation: LRH + CTH + data + ICRC + VCRC, and the IB raw packet:
// LRH (next header raw) + RWH + datagram + VCRC (no ICRC).
// Layout and opcode table: docs/formats.md.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "bytes.hpp"

namespace ni {

constexpr uint8_t kOpTunnelReq = 0xC0;  // manufacturer-specific: tunneled request TLP
constexpr uint8_t kOpTunnelRsp = 0xC1;  // manufacturer-specific: tunneled completion TLP
constexpr uint8_t kOpRcAck = 0x11;      // IB RC Acknowledge (AETH)
constexpr uint8_t kOpTunnelCont = 0xC2; // manufacturer-specific: continues the source's previous write
constexpr uint8_t kAethAck = 0x00;          // this PSN and all before it arrived
constexpr uint8_t kAethNakPsnSeq = 0x60;    // this PSN is the one expected next
constexpr uint8_t kAethNakInvReq = 0x61;    // invalid request: stomped by its sender
constexpr uint8_t kAethNakRemAccess = 0x62; // remote access error: memory ID, permission, bounds
constexpr uint8_t kAethRnr = 0x20;          // receiver not ready: its reception FIFO is full; resend later
constexpr uint8_t kTehRxXlate = 0x01;    // TEH flag: receiver translates memory ID + offset
constexpr uint8_t kTehSync = 0x02;       // TEH flag: the source's sequence restarts at this PSN
constexpr uint8_t kTehConfNi = 0x04;     // TEH flag: a DMWr the receiving NI confirms (its ACK)
constexpr uint8_t kTehConfMem = 0x08;    // TEH flag: a DMWr the receiving memory system confirms
constexpr uint8_t kTehDma = 0x10;        // TEH flag: a packet of the DMA engine
constexpr uint8_t kTehRfifo = 0x20;      // TEH flag: lands in the reception FIFO the memory ID field names
constexpr uint8_t kTehRcnt = 0x40;       // TEH flag: decrement reception counter TEH byte 21
constexpr uint8_t kTehRget = 0x80;       // TEH flag: a remote get: one descriptor for the remote-fed injection FIFO the memory ID field names
constexpr uint16_t kDefaultPKey = 0xFFFF;
constexpr uint32_t kTunnelQp = 0x10;
constexpr size_t kLrhBytes = 8, kBthBytes = 12, kTehBytes = 12, kAethBytes = 4;
constexpr size_t kFabHdrBytes = kLrhBytes + kBthBytes + kTehBytes;  // 32: TLP starts beat aligned
// Continuation transport header: opcode, pad, P_Key, reserved, PSN. LRH + CTH take
// the place of the TLP header, so the data stays in the lanes it had in the TLP.
constexpr size_t kCthBytes = 8;
constexpr size_t kContHdrBytes = kLrhBytes + kCthBytes;
constexpr size_t kTrailerBytes = 6;
// Raw packet: RWH = 16 reserved bits and the EtherType of what follows.
constexpr size_t kRwhBytes = 4;
constexpr size_t kRawHdrBytes = kLrhBytes + kRwhBytes;
constexpr size_t kRawTrailerBytes = 2;
constexpr uint16_t kEtherTypeIpv4 = 0x0800;
constexpr uint16_t kEtherTypeIpv6 = 0x86DD;
constexpr uint16_t kEtherTypeBridged = 0x6558;  // transparent Ethernet bridging: a whole Ethernet frame

struct FabricPacket {
  uint8_t vl = 0, sl = 0;
  uint16_t dlid = 0, slid = 0;
  uint8_t opcode = kOpTunnelReq;
  uint16_t pkey = kDefaultPKey;
  uint32_t destQp = kTunnelQp;
  uint32_t psn = 0;
  uint8_t tehFlags = 0;   // tunnel opcodes
  uint16_t memid = 0;
  uint8_t counter = 0;    // TEH byte 21: the reception counter of a DMA packet (kTehRcnt)
  uint16_t key = 0;       // TEH bytes 24-25: protection key of the target memory ID or reception FIFO
  uint8_t syndrome = 0;   // ACK opcode (AETH)
  uint32_t msn = 0;
  bool raw = false;       // an IB raw packet: no BTH, no ICRC, never sequenced
  uint16_t etherType = 0; // raw: RWH EtherType
  Bytes payload;          // tunnel opcodes: the TLP; a continuation: the data it adds; raw: the datagram

  bool isTunnel() const { return !raw && (opcode == kOpTunnelReq || opcode == kOpTunnelRsp); }
  bool isCont() const { return !raw && opcode == kOpTunnelCont; }
  bool isNak() const { return !raw && opcode == kOpRcAck && (syndrome >> 5) == 3; }
};

// An answer (ACK/NAK, tunneled completion) from `slid` to `dlid`: VL and SL 1 (VC1).
inline FabricPacket answerPacket(uint16_t dlid, uint16_t slid, uint8_t opcode, uint32_t psn) {
  FabricPacket a;
  a.vl = a.sl = 1;
  a.dlid = dlid;
  a.slid = slid;
  a.opcode = opcode;
  a.psn = psn & 0xFFFFFF;
  return a;
}

enum class FabError { None, Truncated, BadLength, BadIcrc, BadVcrc, BadLnh, BadVersion, UnknownOpcode };
const char* toString(FabError e);

// Whole packet including ICRC (not raw) and VCRC. A raw datagram is padded to whole
// words (IB raw packets have no pad count: the datagram's own header says its length).
Bytes encodeFabric(const FabricPacket& p);
std::optional<FabricPacket> decodeFabric(const Bytes& b, FabError* err = nullptr);
// Closes a packet given as header and payload bytes: pads it to whole words (at
// least the LRH), sets LRH PktLen and appends the ICRC and VCRC.
void sealFabric(Bytes& b);
// ICRC over the bytes before it, variant fields (LRH VL, BTH resv8a) masked to ones.
uint32_t computeIcrc(const uint8_t* pkt, size_t bytesBeforeIcrc);
std::string describe(const FabricPacket& p);

}  // namespace ni

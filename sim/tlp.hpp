// SPDX-License-Identifier: Apache-2.0
// Golden codec for the TLP subset of the host port (docs/formats.md).
#pragma once
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "bytes.hpp"

namespace ni {

enum class TlpKind : uint8_t {
  MRd,       // memory read
  MWr,       // memory write
  Cpl,       // completion without data
  CplD,      // completion with data
  FetchAdd,  // atomics
  Swap,
  Cas,
  DMWr,      // deferrable memory write: a write that asks for confirmation
};

enum class CplStatus : uint8_t { SC = 0, UR = 1, CRS = 2, CA = 4 };

struct Tlp {
  TlpKind kind = TlpKind::MWr;
  uint16_t requester = 0;  // requests: requester ID; completions: requester ID field
  uint16_t tag = 0;        // 10 bits: bits 9 and 8 are T9 and T8 of byte 1 (PCIe 10-bit tags)
  uint64_t addr = 0;       // requests, DW aligned
  bool threeDw = false;    // requests: the 3 DW header (a 32-bit address, below 4 GiB)
  uint8_t firstBe = 0xF, lastBe = 0xF;
  uint16_t lengthDw = 0;   // header length field (1..1024); for MRd the bytes asked for
  Bytes data;              // payload (MWr, CplD, atomics operands, DMWr)
  // Completions.
  uint16_t completer = 0;
  CplStatus status = CplStatus::SC;
  uint16_t byteCount = 0;
  uint8_t lowerAddr = 0;

  bool isCompletion() const { return kind == TlpKind::Cpl || kind == TlpKind::CplD; }
  bool isNonPosted() const { return kind != TlpKind::MWr && !isCompletion(); }
};

enum class TlpError { None, Truncated, BadLength, UnknownType, Digest };
const char* toString(TlpError e);

// The 10-bit tag of a TLP header (b: its bytes from byte 0): T9 and T8 from byte 1
// (bits 7, 3) above tagByte (a request's byte 6, a completion's byte 10).
inline uint16_t tlpTag(const uint8_t* b, uint8_t tagByte) {
  return static_cast<uint16_t>((b[1] >> 7 & 1) << 9 | (b[1] >> 3 & 1) << 8 | tagByte);
}

// A request with threeDw set gets the 3 DW header (its address must be below 4 GiB);
// decoding accepts both forms of every request kind.
Bytes encodeTlp(const Tlp& t);
// Decodes one whole TLP (exactly the bytes of one packet).
std::optional<Tlp> decodeTlp(const Bytes& b, TlpError* err = nullptr);
std::string describe(const Tlp& t);

// Convenience constructors.
// Bytes of the next request TLP of a transfer at addr with `left` bytes to go:
// at most maxPayload, never across a 4 KiB boundary (PCIe rule).
// The payload counts whole DWs, so an unaligned start leaves room for fewer bytes.
inline size_t requestChunk(uint64_t addr, size_t left, size_t maxPayload) {
  return std::min<size_t>({left, maxPayload - (addr & 3), 4096 - (addr & 0xFFF)});
}

// Requests at any byte address: Tlp.addr is the DW-aligned address, First/Last BE
// enable exactly the bytes asked for, and a write's payload is padded to whole DWs.
Tlp makeMWr(uint16_t req, uint16_t tag, uint64_t addr, const Bytes& data);
// Deferrable memory write: the write that asks for confirmation (docs/formats.md).
Tlp makeDMWr(uint16_t req, uint16_t tag, uint64_t addr, const Bytes& data);
// Write confirmation: a CplD whose 8 data bytes name the written address, least
// significant byte first (what the memory system and the NI answer a DMWr with).
Tlp makeWriteConfirmation(uint16_t completer, uint16_t req, uint16_t tag, uint64_t addr);
Tlp makeMRd(uint16_t req, uint16_t tag, uint64_t addr, uint16_t bytes);
// The same request with the 3 DW header (PCIe's form below 4 GiB).
Tlp threeDw(Tlp t);
// Offset (0..3) of the first byte First BE enables; the bytes from it to the last
// enabled byte of a request (a read completion's Byte Count).
unsigned firstEnabledByte(uint8_t firstBe);
size_t enabledSpan(const Tlp& t);
Tlp makeCplD(uint16_t completer, uint16_t req, uint16_t tag, uint64_t addr, const Bytes& data);
Tlp makeCpl(uint16_t completer, uint16_t req, uint16_t tag, CplStatus st, uint16_t byteCount, uint8_t lowerAddr);
// AtomicOp request; operands in memory byte order: FetchAdd addend, Swap value, CAS compare then swap.
Tlp makeAtomic(TlpKind kind, uint16_t req, uint16_t tag, uint64_t addr, const Bytes& operands);

// AtomicOps (docs/formats.md): the operand size in bytes (FetchAdd/Swap 4 or 8,
// CAS 4, 8 or 16), or 0 when the Length is not legal for the kind.
unsigned atomicOperandBytes(const Tlp& t);
bool isAtomic(TlpKind k);
// Legal length and a target aligned to the operand size.
bool atomicWellFormed(const Tlp& t);
// The value memory holds after the atomic, given the value before it.
Bytes atomicResult(const Tlp& t, const Bytes& old);

}  // namespace ni

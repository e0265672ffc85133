// SPDX-License-Identifier: Apache-2.0
#include "fabric_pkt.hpp"

#include <algorithm>
#include <cstdio>

#include "crc.hpp"

namespace ni {

const char* toString(FabError e) {
  switch (e) {
    case FabError::None: return "none";
    case FabError::Truncated: return "truncated";
    case FabError::BadLength: return "LRH PktLen does not match the bytes";
    case FabError::BadIcrc: return "ICRC mismatch";
    case FabError::BadVcrc: return "VCRC mismatch";
    case FabError::BadLnh: return "LRH next header is neither BTH nor raw";
    case FabError::BadVersion: return "LRH LVer or BTH TVer not 0";
    case FabError::UnknownOpcode: return "unknown opcode";
  }
  return "?";
}

uint32_t computeIcrc(const uint8_t* pkt, size_t n) {
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) {
    uint8_t b = pkt[i];
    if (i == 0) b |= 0xF0;   // LRH VL
    if (i == 12) b = 0xFF;   // BTH resv8a
    c = crc32Update(c, b);
  }
  return ~c;
}

namespace {
Bytes encodeRaw(const FabricPacket& p) {
  Bytes b(kRawHdrBytes, 0);
  b.insert(b.end(), p.payload.begin(), p.payload.end());
  b.resize((b.size() + 3) / 4 * 4, 0);
  b[0] = static_cast<uint8_t>((p.vl & 0xF) << 4);
  b[1] = static_cast<uint8_t>((p.sl & 0xF) << 4);  // LNH 00: raw
  putBe(&b[2], 2, p.dlid);
  putBe(&b[4], 2, b.size() / 4);                     // LRH through the datagram
  putBe(&b[6], 2, p.slid);
  putBe(&b[10], 2, p.etherType);
  const uint16_t vcrc = crc16Vcrc(b.data(), b.size());
  b.push_back(static_cast<uint8_t>(vcrc));
  b.push_back(static_cast<uint8_t>(vcrc >> 8));
  return b;
}
}  // namespace

Bytes encodeFabric(const FabricPacket& p) {
  if (p.raw) return encodeRaw(p);
  const size_t ext = p.isTunnel() ? kTehBytes : (p.opcode == kOpRcAck ? kAethBytes : 0);
  Bytes b(p.isCont() ? kContHdrBytes : kLrhBytes + kBthBytes + ext, 0);
  b.insert(b.end(), p.payload.begin(), p.payload.end());
  const size_t pad = (4 - b.size() % 4) % 4;
  b[0] = static_cast<uint8_t>((p.vl & 0xF) << 4);
  b[1] = static_cast<uint8_t>(((p.sl & 0xF) << 4) | 0x2);
  putBe(&b[2], 2, p.dlid);
  putBe(&b[6], 2, p.slid);
  b[8] = p.opcode;
  b[9] = static_cast<uint8_t>(pad << 4);
  putBe(&b[10], 2, p.pkey);
  if (p.isCont()) {
    putBe(&b[13], 3, p.psn & 0xFFFFFF);
    sealFabric(b);
    return b;
  }
  putBe(&b[13], 3, p.destQp);
  putBe(&b[17], 3, p.psn & 0xFFFFFF);
  if (p.isTunnel()) {
    b[20] = p.tehFlags;
    b[21] = p.counter;
    putBe(&b[22], 2, p.memid);
    putBe(&b[24], 2, p.key);
  } else if (p.opcode == kOpRcAck) {
    b[20] = p.syndrome;
    putBe(&b[21], 3, p.msn);
  }
  sealFabric(b);
  return b;
}

void sealFabric(Bytes& b) {
  b.resize(std::max<size_t>(kLrhBytes, (b.size() + 3) / 4 * 4), 0);
  const size_t words = (b.size() + 4) / 4;  // LRH through ICRC
  b[4] = static_cast<uint8_t>((b[4] & 0xF8) | ((words >> 8) & 0x7));
  b[5] = static_cast<uint8_t>(words);
  const uint32_t icrc = computeIcrc(b.data(), b.size());
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(icrc >> (8 * i)));
  const uint16_t vcrc = crc16Vcrc(b.data(), b.size());
  b.push_back(static_cast<uint8_t>(vcrc));
  b.push_back(static_cast<uint8_t>(vcrc >> 8));
}

std::optional<FabricPacket> decodeFabric(const Bytes& b, FabError* err) {
  auto fail = [&](FabError e) -> std::optional<FabricPacket> { if (err) *err = e; return std::nullopt; };
  if (err) *err = FabError::None;
  if (b.size() >= kLrhBytes && (b[1] & 0x3) == 0x0) {
    // Raw: PktLen counts the LRH through the datagram; the VCRC alone follows.
    if (b.size() < kRawHdrBytes + kRawTrailerBytes) return fail(FabError::Truncated);
    const size_t words = getBe(&b[4], 2) & 0x7FF;
    if (words * 4 + kRawTrailerBytes != b.size())
      return fail(words * 4 + kRawTrailerBytes > b.size() ? FabError::Truncated : FabError::BadLength);
    const size_t t = b.size() - kRawTrailerBytes;
    if (crc16Vcrc(b.data(), t) != static_cast<uint16_t>(getLe(&b[t], 2))) return fail(FabError::BadVcrc);
    if (t < kRawHdrBytes) return fail(FabError::BadLength);
    if (b[0] & 0x0F) return fail(FabError::BadVersion);  // LVer
    FabricPacket p;
    p.raw = true;
    p.vl = b[0] >> 4;
    p.sl = b[1] >> 4;
    p.opcode = 0;
    p.dlid = static_cast<uint16_t>(getBe(&b[2], 2));
    p.slid = static_cast<uint16_t>(getBe(&b[6], 2));
    p.etherType = static_cast<uint16_t>(getBe(&b[10], 2));
    p.payload.assign(b.begin() + static_cast<long>(kRawHdrBytes), b.begin() + static_cast<long>(t));
    return p;
  }
  if (b.size() < kContHdrBytes + kTrailerBytes) return fail(FabError::Truncated);
  const size_t words = getBe(&b[4], 2) & 0x7FF;
  if (words * 4 + 2 != b.size()) return fail(words * 4 + 2 > b.size() ? FabError::Truncated : FabError::BadLength);
  const size_t t = b.size() - kTrailerBytes;
  const uint32_t icrc = static_cast<uint32_t>(getLe(&b[t], 4));
  const uint16_t vcrc = static_cast<uint16_t>(getLe(&b[t + 4], 2));
  if (crc16Vcrc(b.data(), t + 4) != vcrc) return fail(FabError::BadVcrc);
  if (computeIcrc(b.data(), t) != icrc) return fail(FabError::BadIcrc);
  if ((b[1] & 0x3) != 0x2) return fail(FabError::BadLnh);
  // Versions this fabric speaks (formats.md): LVer 0, TVer 0 (BTH or CTH byte 9, bits 3:0).
  if ((b[0] & 0x0F) || (b[9] & 0x0F)) return fail(FabError::BadVersion);
  FabricPacket p;
  p.vl = b[0] >> 4;
  p.sl = b[1] >> 4;
  p.dlid = static_cast<uint16_t>(getBe(&b[2], 2));
  p.slid = static_cast<uint16_t>(getBe(&b[6], 2));
  p.opcode = b[8];
  p.pkey = static_cast<uint16_t>(getBe(&b[10], 2));
  const size_t pad = (b[9] >> 4) & 0x3;
  if (p.isCont()) {
    p.psn = static_cast<uint32_t>(getBe(&b[13], 3));
    if (t < kContHdrBytes + pad) return fail(FabError::BadLength);
    p.payload.assign(b.begin() + static_cast<long>(kContHdrBytes), b.begin() + static_cast<long>(t - pad));
    return p;
  }
  if (t < kLrhBytes + kBthBytes) return fail(FabError::Truncated);
  p.destQp = static_cast<uint32_t>(getBe(&b[13], 3));
  p.psn = static_cast<uint32_t>(getBe(&b[17], 3));
  size_t ext;
  if (p.isTunnel()) {
    ext = kTehBytes;
    if (t < kLrhBytes + kBthBytes + ext) return fail(FabError::Truncated);
    p.tehFlags = b[20];
    p.counter = b[21];
    p.memid = static_cast<uint16_t>(getBe(&b[22], 2));
    p.key = static_cast<uint16_t>(getBe(&b[24], 2));
  } else if (p.opcode == kOpRcAck) {
    ext = kAethBytes;
    p.syndrome = b[20];
    p.msn = static_cast<uint32_t>(getBe(&b[21], 3));
  } else {
    return fail(FabError::UnknownOpcode);
  }
  const size_t start = kLrhBytes + kBthBytes + ext;
  if (t < start + pad) return fail(FabError::BadLength);
  p.payload.assign(b.begin() + static_cast<long>(start), b.begin() + static_cast<long>(t - pad));
  return p;
}

std::string describe(const FabricPacket& p) {
  char buf[160];
  if (p.raw) {
    std::snprintf(buf, sizeof buf, "raw VL%u %u->%u ethertype=%04x payload=%zuB", p.vl, p.slid, p.dlid, p.etherType,
                  p.payload.size());
    return buf;
  }
  std::snprintf(buf, sizeof buf, "op=%02x VL%u %u->%u psn=%u memid=%u flags=%02x syn=%02x payload=%zuB", p.opcode,
                p.vl, p.slid, p.dlid, p.psn, p.memid, p.tehFlags, p.syndrome, p.payload.size());
  return buf;
}

}  // namespace ni

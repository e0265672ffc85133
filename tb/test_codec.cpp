// SPDX-License-Identifier: Apache-2.0
// Golden codecs: CRC known answers, TLP and fabric packet round trips, malformed input.
#include <gtest/gtest.h>

#include <random>

#include "crc.hpp"
#include "dma.hpp"
#include "fabric_pkt.hpp"
#include "tlp.hpp"
#include "verilated_fixture.hpp"

using namespace ni;

namespace {
const Bytes kCheck = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};

// A tunneled MWr, bytes and CRCs from scripts/crc_vectors.py (zlib and crcmod, not our code).
const Bytes kKnownPacket = {
    0x00, 0x02, 0x00, 0x02, 0x00, 0x0F, 0x00, 0x01, 0xC0, 0x00, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x10,
    0x00, 0x00, 0x00, 0x05, 0x01, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x60, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0xFF, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00,
    0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0xA5, 0xB1, 0x80, 0xE4, 0x2E, 0x45};

FabricPacket knownPacket() {
  FabricPacket p;
  p.dlid = 2;
  p.slid = 1;
  p.opcode = kOpTunnelReq;
  p.psn = 5;
  p.tehFlags = kTehRxXlate;
  p.memid = 3;
  Tlp t = makeMWr(0, 0, 0x1000, {0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18});
  t.firstBe = t.lastBe = 0xF;
  p.payload = encodeTlp(t);
  return p;
}

uint64_t seedFromEnv() { return tb::envU64("NI_SEED", 1); }
}  // namespace

TEST(Crc, Crc32CheckValueFromCatalogue) {
  // CRC-32/ISO-HDLC check value, RevEng catalogue of parametrised CRC algorithms.
  EXPECT_EQ(crc32(kCheck.data(), kCheck.size()), 0xCBF43926u);
}

TEST(Crc, VcrcCheckValueFromCrcmod) {
  EXPECT_EQ(crc16Vcrc(kCheck.data(), kCheck.size()), 0x0A3Du);
}

TEST(FabricCodec, KnownPacketEncodesBitExact) {
  EXPECT_EQ(encodeFabric(knownPacket()), kKnownPacket);
}

TEST(FabricCodec, KnownPacketDecodes) {
  FabError err;
  auto p = decodeFabric(kKnownPacket, &err);
  ASSERT_TRUE(p) << toString(err);
  EXPECT_EQ(p->dlid, 2);
  EXPECT_EQ(p->slid, 1);
  EXPECT_EQ(p->psn, 5u);
  EXPECT_EQ(p->memid, 3);
  auto t = decodeTlp(p->payload);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->addr, 0x1000u);
  EXPECT_EQ(t->data.size(), 8u);
}

TEST(FabricCodec, VariantFieldsDoNotChangeIcrc) {
  Bytes a = encodeFabric(knownPacket());
  Bytes b = a;
  b[0] |= 0x30;  // another VL
  b[12] = 0x5A;  // resv8a
  EXPECT_EQ(computeIcrc(a.data(), a.size() - 6), computeIcrc(b.data(), b.size() - 6));
  b[13] ^= 1;    // an invariant field (QP)
  EXPECT_NE(computeIcrc(a.data(), a.size() - 6), computeIcrc(b.data(), b.size() - 6));
}

// A continuation: LRH + CTH (16 bytes, the size of the TLP header it replaces), data, CRCs.
TEST(FabricCodec, ContinuationLayout) {
  FabricPacket p;
  p.dlid = 2;
  p.slid = 1;
  p.opcode = kOpTunnelCont;
  p.psn = 0x123456;
  p.payload = {1, 2, 3, 4, 5, 6, 7, 8};
  const Bytes b = encodeFabric(p);
  ASSERT_EQ(b.size(), kContHdrBytes + 8 + kTrailerBytes);
  EXPECT_EQ(b[1] & 3, 2) << "LNH: IBA local";
  EXPECT_EQ(getBe(&b[4], 2), (16u + 8 + 4) / 4) << "PktLen in words through the ICRC";
  EXPECT_EQ(b[8], kOpTunnelCont);
  EXPECT_EQ(getBe(&b[10], 2), kDefaultPKey);
  EXPECT_EQ(getBe(&b[13], 3), 0x123456u) << "PSN in CTH bytes 13-15";
  EXPECT_EQ(b[16], 1);
  EXPECT_EQ(b[23], 8);
  const auto d = decodeFabric(b);
  ASSERT_TRUE(d);
  EXPECT_TRUE(d->isCont());
  EXPECT_EQ(d->psn, 0x123456u);
  EXPECT_EQ(d->payload, p.payload);
}

// IB raw packet: LRH (LNH 00) + RWH (EtherType) + datagram + VCRC, no ICRC; PktLen
// counts the words through the datagram. Every truncation and a bad VCRC are refused.
TEST(FabricCodec, RawPacketLayout) {
  FabricPacket p;
  p.raw = true;
  p.dlid = 2;
  p.slid = 1;
  p.etherType = kEtherTypeIpv6;
  p.payload = {0x60, 0, 0, 0, 0, 0, 17, 64};
  const Bytes b = encodeFabric(p);
  ASSERT_EQ(b.size(), kRawHdrBytes + 8 + kRawTrailerBytes);
  EXPECT_EQ(b[1] & 3, 0) << "LNH: raw";
  EXPECT_EQ(getBe(&b[2], 2), 2u);
  EXPECT_EQ(getBe(&b[4], 2), (12u + 8) / 4) << "PktLen in words through the datagram";
  EXPECT_EQ(getBe(&b[6], 2), 1u);
  EXPECT_EQ(getBe(&b[8], 2), 0u) << "RWH reserved";
  EXPECT_EQ(getBe(&b[10], 2), kEtherTypeIpv6);
  EXPECT_EQ(b[12], 0x60) << "the datagram follows the RWH unchanged";
  EXPECT_EQ(getLe(&b[20], 2), crc16Vcrc(b.data(), 20)) << "VCRC right after the datagram";
  const auto d = decodeFabric(b);
  ASSERT_TRUE(d);
  EXPECT_TRUE(d->raw);
  EXPECT_FALSE(d->isTunnel() || d->isCont() || d->isNak());
  EXPECT_EQ(d->etherType, kEtherTypeIpv6);
  EXPECT_EQ(d->payload, p.payload);
  FabError err;
  for (size_t n = 0; n < b.size(); ++n) {
    EXPECT_FALSE(decodeFabric(Bytes(b.begin(), b.begin() + static_cast<long>(n)), &err)) << n;
    EXPECT_NE(err, FabError::None);
  }
  Bytes bad = b;
  bad[14] ^= 0x01;
  EXPECT_FALSE(decodeFabric(bad, &err));
  EXPECT_EQ(err, FabError::BadVcrc);
  p.payload = {1, 2, 3, 4, 5};  // padded to whole words by the encoder
  EXPECT_EQ(decodeFabric(encodeFabric(p))->payload, (Bytes{1, 2, 3, 4, 5, 0, 0, 0}));
}

TEST(FabricCodec, MalformedInputReturnsErrors) {
  const Bytes good = encodeFabric(knownPacket());
  FabError err;
  for (size_t n = 0; n < good.size(); ++n) {  // every truncation
    Bytes t(good.begin(), good.begin() + static_cast<long>(n));
    EXPECT_FALSE(decodeFabric(t, &err));
    EXPECT_NE(err, FabError::None);
  }
  Bytes longer = good;
  longer.push_back(0);
  EXPECT_FALSE(decodeFabric(longer, &err));
  EXPECT_EQ(err, FabError::BadLength);

  Bytes vcrcBad = good;
  vcrcBad.back() ^= 0x01;
  EXPECT_FALSE(decodeFabric(vcrcBad, &err));
  EXPECT_EQ(err, FabError::BadVcrc);

  // Corrupt a payload byte and repair the VCRC: only the ICRC can tell.
  Bytes icrcBad = good;
  icrcBad[40] ^= 0x80;
  putLe(&icrcBad[icrcBad.size() - 2], 2, crc16Vcrc(icrcBad.data(), icrcBad.size() - 2));
  EXPECT_FALSE(decodeFabric(icrcBad, &err));
  EXPECT_EQ(err, FabError::BadIcrc);

  FabricPacket unk = knownPacket();
  unk.opcode = 0x64;  // UD SEND only: not spoken here
  EXPECT_FALSE(decodeFabric(encodeFabric(unk), &err));
  EXPECT_EQ(err, FabError::UnknownOpcode);
}

// Bits of a packet a receiver ignores (formats.md; reserved in IB): LRH byte 1 bits 3:2
// and byte 4 bits 7:3; a raw packet's reserved RWH bytes 8-9; BTH or CTH byte 9 bits 7:6
// (SE, M), byte 12 (resv8a, reserved); BTH byte 16 (AckReq, reserved); the TEH's
// reserved bytes 26-31; the pad bytes before the ICRC. Mask of byte i of the n bytes
// of a packet decoded as p.
uint8_t ignoredBits(const FabricPacket& p, const Bytes& b, size_t i) {
  if (i == 1) return 0x0C;
  if (i == 4) return 0xF8;
  if (p.raw) return i == 8 || i == 9 ? 0xFF : 0;
  const size_t pad = (b[9] >> 4) & 3;
  if (i == 9) return 0xC0;
  if (i == 12 || i + kTrailerBytes + pad >= b.size()) return 0xFF;
  if (p.isCont()) return 0;
  if (i == 16) return 0xFF;
  return p.isTunnel() && i >= 26 && i < 32 ? 0xFF : 0;
}

// The decoder reports what the bytes say and refuses what it cannot represent: any
// input either decodes to a packet that encodes back to the same bytes (but for the
// bits receivers ignore, and so the CRCs over them), or is refused with a reason.
// Inputs: random bytes; random headers and payloads with correct CRCs (many refused
// for a version, an opcode or a length, some decoded); good packets with one bit
// flipped, which the VCRC must catch.
TEST(FabricCodec, AnyInputIsRefusedOrDecodesToItself) {
  std::mt19937_64 rng(seedFromEnv());
  static const uint8_t kOps[] = {kOpTunnelReq, kOpTunnelRsp, kOpTunnelCont, kOpRcAck};
  unsigned decoded = 0, flipsCaught = 0, flips = 0, versions = 0;
  for (int i = 0; i < 30000; ++i) {
    Bytes b;
    const int kind = i % 3;
    if (kind < 2) {
      b.resize(rng() % 80);
      for (auto& x : b) x = static_cast<uint8_t>(rng());
      if (kind == 1) {  // a transport header the codec knows, the rest random, the CRCs right
        b.resize(std::max<size_t>(b.size(), 40));
        if (rng() % 4) b[0] &= 0xF0;                     // LVer 0 (mostly)
        b[1] = static_cast<uint8_t>((b[1] & 0xFC) | 2);  // LNH: BTH follows
        b[8] = kOps[rng() % 4];
        if (rng() % 4) b[9] &= 0xF0;  // TVer 0 (mostly)
        sealFabric(b);
      }
    } else {  // a good packet, one bit flipped
      FabricPacket p = knownPacket();
      p.payload.resize(4 * (rng() % 16));
      b = encodeFabric(p);
      const size_t bit = rng() % (8 * b.size());
      b[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
      ++flips;
    }
    FabError err = FabError::None;
    const auto d = decodeFabric(b, &err);
    if (d) {
      EXPECT_EQ(err, FabError::None);
      const Bytes again = encodeFabric(*d);
      ASSERT_EQ(again.size(), b.size()) << describe(*d) << ", seed " << seedFromEnv();
      const size_t crcs = d->raw ? kRawTrailerBytes : kTrailerBytes;
      for (size_t k = 0; k + crcs < b.size(); ++k) {
        const uint8_t keep = static_cast<uint8_t>(~ignoredBits(*d, b, k));
        EXPECT_EQ(again[k] & keep, b[k] & keep) << "byte " << k << " of " << describe(*d) << ", seed " << seedFromEnv();
      }
      decoded += kind != 2;
    } else {
      EXPECT_NE(err, FabError::None) << "refused without a reason, seed " << seedFromEnv();
      versions += err == FabError::BadVersion;
    }
    flipsCaught += kind == 2 && !d;
  }
  EXPECT_EQ(flipsCaught, flips) << "a single flipped bit got through";
  EXPECT_GT(decoded, 1000u) << "too few inputs decoded to check the round trip";
  EXPECT_GT(versions, 100u) << "too few wrong versions to check that they are refused";
}

TEST(FabricCodec, RoundTripRandom) {
  std::mt19937_64 rng(seedFromEnv());
  for (int i = 0; i < 2000; ++i) {
    FabricPacket p;
    p.vl = rng() & 1;
    p.sl = p.vl;
    p.dlid = static_cast<uint16_t>(rng());
    p.slid = static_cast<uint16_t>(rng());
    p.psn = rng() & 0xFFFFFF;
    const int kind = static_cast<int>(rng() % 4);
    p.opcode = kind == 0 ? kOpTunnelReq : kind == 1 ? kOpTunnelRsp : kind == 2 ? kOpRcAck : kOpTunnelCont;
    if (p.isCont()) {
      p.payload.resize(4 * (1 + rng() % 70));
      for (auto& x : p.payload) x = static_cast<uint8_t>(rng());
    } else if (p.opcode == kOpRcAck) {
      p.syndrome = (rng() & 1) ? kAethNakPsnSeq : 0;
      p.msn = rng() & 0xFFFFFF;
    } else {
      p.tehFlags = rng() & 1;
      p.memid = static_cast<uint16_t>(rng());
      p.payload.resize(4 * (rng() % 70));
      for (auto& x : p.payload) x = static_cast<uint8_t>(rng());
    }
    const Bytes b = encodeFabric(p);
    FabError err;
    auto d = decodeFabric(b, &err);
    ASSERT_TRUE(d) << toString(err) << " seed " << seedFromEnv();
    EXPECT_EQ(encodeFabric(*d), b);
  }
}

TEST(TlpCodec, RoundTripEveryKind) {
  std::mt19937_64 rng(seedFromEnv());
  const TlpKind kinds[] = {TlpKind::MRd, TlpKind::MWr, TlpKind::Cpl, TlpKind::CplD,
                           TlpKind::FetchAdd, TlpKind::Swap, TlpKind::Cas, TlpKind::DMWr};
  for (int i = 0; i < 4000; ++i) {
    Tlp t;
    t.kind = kinds[rng() % 8];
    t.requester = static_cast<uint16_t>(rng());
    t.tag = static_cast<uint16_t>(rng() & 0x3FF);  // 10-bit tags
    if (t.isCompletion()) {
      t.completer = static_cast<uint16_t>(rng());
      t.status = (rng() & 1) ? CplStatus::SC : CplStatus::UR;
      t.byteCount = rng() & 0xFFF;
      t.lowerAddr = rng() & 0x7F;
    } else {
      // Half with the 3 DW header (a 32-bit address).
      t.threeDw = rng() & 1;
      t.addr = rng() & (t.threeDw ? 0xFFFF'FFFCull : ~uint64_t{3});
      t.firstBe = rng() & 0xF;
      t.lastBe = rng() & 0xF;
    }
    const bool data = t.kind != TlpKind::MRd && t.kind != TlpKind::Cpl;
    if (data) {
      t.data.resize(4 * (1 + rng() % 64));
      for (auto& x : t.data) x = static_cast<uint8_t>(rng());
    } else if (t.kind == TlpKind::MRd) {
      t.lengthDw = static_cast<uint16_t>(1 + rng() % 64);
    }
    const Bytes b = encodeTlp(t);
    auto d = decodeTlp(b);
    ASSERT_TRUE(d) << describe(t);
    EXPECT_EQ(encodeTlp(*d), b) << describe(t);
    EXPECT_EQ(d->threeDw, t.threeDw) << describe(t);
    if (!t.isCompletion()) EXPECT_EQ(d->addr, t.addr) << describe(t);
  }
}

TEST(TlpCodec, ThreeDwLayoutsArePcieBitExact) {
  // MWr, 32-bit address: Fmt=010 Type=00000, length 1 DW, requester 0x0123, tag 0x45,
  // last BE 0, first BE F, address 0x8765_4320; MRd of 2 DW (Fmt=000): the same header
  // with its Length, no data; FetchAdd of 8 bytes (Fmt=010 Type=01100) (PCIe Base
  // Spec, 3DW header: the address in DW 2).
  EXPECT_EQ(encodeTlp(threeDw(makeMWr(0x0123, 0x45, 0x87654320ull, {0xAA, 0xBB, 0xCC, 0xDD}))),
            (Bytes{0x40, 0x00, 0x00, 0x01, 0x01, 0x23, 0x45, 0x0F, 0x87, 0x65, 0x43, 0x20, 0xAA, 0xBB, 0xCC, 0xDD}));
  EXPECT_EQ(encodeTlp(threeDw(makeMRd(0x0123, 0x46, 0x1000, 8))),
            (Bytes{0x00, 0x00, 0x00, 0x02, 0x01, 0x23, 0x46, 0xFF, 0x00, 0x00, 0x10, 0x00}));
  EXPECT_EQ(encodeTlp(threeDw(makeAtomic(TlpKind::FetchAdd, 0x0123, 0x47, 0x2008, Bytes(8, 1))))[0], 0x4C);
  // And back: a 3 DW MWr decodes to the request it is, its address below 4 GiB.
  auto d = decodeTlp(Bytes{0x40, 0x00, 0x00, 0x01, 0x01, 0x23, 0x45, 0x0F, 0xFF, 0xFF, 0xFF, 0xFC, 1, 2, 3, 4});
  ASSERT_TRUE(d);
  EXPECT_EQ(d->kind, TlpKind::MWr);
  EXPECT_TRUE(d->threeDw);
  EXPECT_EQ(d->addr, 0xFFFF'FFFCull);
  EXPECT_EQ(d->data, (Bytes{1, 2, 3, 4}));
}

TEST(TlpCodec, MwrLayoutIsPcieBitExact) {
  // MWr, 64-bit address: Fmt=011 Type=00000, length 1 DW, requester 0x0123, tag 0x45,
  // last BE 0, first BE F, address 0x0000_0012_3456_7890 (PCIe Base Spec, 4DW header).
  Tlp t = makeMWr(0x0123, 0x45, 0x1234567890ull, {0xAA, 0xBB, 0xCC, 0xDD});
  const Bytes expect = {0x60, 0x00, 0x00, 0x01, 0x01, 0x23, 0x45, 0x0F, 0x00, 0x00, 0x00, 0x12,
                        0x34, 0x56, 0x78, 0x90, 0xAA, 0xBB, 0xCC, 0xDD};
  EXPECT_EQ(encodeTlp(t), expect);
}

TEST(TlpCodec, TenBitTagsArePcieBitExact) {
  // 10-bit tags (PCIe 4.0): Tag[9] is byte 1 bit 7 (T9), Tag[8] byte 1 bit 3 (T8),
  // Tag[7:0] byte 6 of a request and byte 10 of a completion.
  EXPECT_EQ(encodeTlp(makeMRd(0x0123, 0x2AB, 0x1'0000'1000ull, 4)),
            (Bytes{0x20, 0x80, 0x00, 0x01, 0x01, 0x23, 0xAB, 0x0F, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x10, 0x00}));
  EXPECT_EQ(encodeTlp(makeCpl(0x0100, 0x0123, 0x1CD, CplStatus::UR, 4, 0x10)),
            (Bytes{0x0A, 0x08, 0x00, 0x00, 0x01, 0x00, 0x20, 0x04, 0x01, 0x23, 0xCD, 0x10}));
  auto d = decodeTlp(Bytes{0x4A, 0x88, 0x00, 0x01, 0x01, 0x00, 0x00, 0x04, 0x01, 0x23, 0xEF, 0x00, 1, 2, 3, 4});
  ASSERT_TRUE(d);
  EXPECT_EQ(d->tag, 0x3EF);
  // The other bits of byte 1 (TC, attributes, TH) are not the tag's.
  d = decodeTlp(Bytes{0x20, 0x77, 0x00, 0x01, 0x01, 0x23, 0x12, 0x0F, 0, 0, 0, 1, 0, 0, 0x10, 0});
  ASSERT_TRUE(d);
  EXPECT_EQ(d->tag, 0x12);
}

TEST(TlpCodec, MalformedInputReturnsErrors) {
  TlpError err;
  const Bytes mwr = encodeTlp(makeMWr(1, 2, 0x1000, Bytes(16, 7)));
  EXPECT_FALSE(decodeTlp(Bytes(mwr.begin(), mwr.begin() + 8), &err));
  EXPECT_EQ(err, TlpError::Truncated);
  EXPECT_FALSE(decodeTlp(Bytes(mwr.begin(), mwr.end() - 4), &err));
  EXPECT_EQ(err, TlpError::Truncated);
  Bytes extra = mwr;
  extra.insert(extra.end(), 4, 0);
  EXPECT_FALSE(decodeTlp(extra, &err));
  EXPECT_EQ(err, TlpError::BadLength);
  Bytes unk = mwr;
  unk[0] = 0x30;  // a message TLP: not in our subset
  EXPECT_FALSE(decodeTlp(unk, &err));
  EXPECT_EQ(err, TlpError::UnknownType);
  Bytes fmtOff = mwr;
  fmtOff[0] = 0x40;  // a 3 DW header on the bytes of a 4 DW request: 4 bytes too many
  EXPECT_FALSE(decodeTlp(fmtOff, &err));
  EXPECT_EQ(err, TlpError::BadLength);
  Bytes digest = mwr;
  digest[2] |= 0x80;
  EXPECT_FALSE(decodeTlp(digest, &err));
  EXPECT_EQ(err, TlpError::Digest);
}

// The DMA descriptor's bytes as docs/formats.md's table gives them (typed here from
// the table, not from sim/dma.hpp): every field at its offset, little-endian, distinct
// values so that a field moved or cut shows. The producer (the runtime) and the golden
// model both go through DmaDescriptor, so only this pins the layout the NI reads.
TEST(DmaCodec, DescriptorLayoutIsTheDocumentedOne) {
  DmaDescriptor d;
  d.op = 2;
  d.flags = 0x0E;
  d.slots = 0x13;
  d.injCnt = 0x1D;
  d.dest = 0xA1B2;
  d.qid = 0xC3D4;
  d.len = 0x11223344;
  d.rcvCnt = 0x1E;
  d.srcMid = 0x2F;
  d.key = 0x8765;
  d.src = 0x0102030405060740ull;
  d.dst = 0x1112131415161780ull;
  d.tag = 0xCAFEF00D;
  for (size_t i = 0; i < d.words.size(); ++i) d.words[i] = static_cast<uint8_t>(0x90 + i);
  Bytes want = {0x02, 0x0E, 0x13, 0x1D,                          // op, flags, slots, inj_cnt
                0xB2, 0xA1, 0xD4, 0xC3,                          // dest, qid
                0x44, 0x33, 0x22, 0x11,                          // len
                0x1E, 0x2F, 0x65, 0x87,                          // rcv_cnt, src_mid, key
                0x40, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,  // src
                0x80, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11,  // dst
                0x0D, 0xF0, 0xFE, 0xCA};                         // tag
  for (uint8_t i = 0; i < 28; ++i) want.push_back(static_cast<uint8_t>(0x90 + i));  // words
  EXPECT_EQ(d.encode(), want);
  const DmaDescriptor back = DmaDescriptor::decode(want.data());
  EXPECT_EQ(back.encode(), want);
  EXPECT_EQ(back.key, 0x8765);
  EXPECT_EQ(back.src, d.src);
}

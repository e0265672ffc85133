// SPDX-License-Identifier: Apache-2.0
#include "tlp.hpp"

#include <algorithm>
#include <cstdio>

namespace ni {

namespace {
struct FmtType { TlpKind kind; uint8_t byte0; };
constexpr FmtType kTypes[] = {
    {TlpKind::MRd, 0x20},  {TlpKind::MWr, 0x60},  {TlpKind::Cpl, 0x0A},  {TlpKind::CplD, 0x4A},
    {TlpKind::FetchAdd, 0x6C}, {TlpKind::Swap, 0x6D}, {TlpKind::Cas, 0x6E}, {TlpKind::DMWr, 0x7B},
};
uint8_t byte0Of(TlpKind k) {
  for (auto& t : kTypes) if (t.kind == k) return t.byte0;
  return 0;
}
bool hasData(uint8_t byte0) { return (byte0 & 0x40) != 0; }
}  // namespace

const char* toString(TlpError e) {
  switch (e) {
    case TlpError::None: return "none";
    case TlpError::Truncated: return "truncated";
    case TlpError::BadLength: return "length field does not match the bytes";
    case TlpError::UnknownType: return "unknown Fmt/Type";
    case TlpError::Digest: return "TLP digest present";
  }
  return "?";
}

Bytes encodeTlp(const Tlp& t) {
  const bool cpl = t.isCompletion();
  const bool dw3 = !cpl && t.threeDw;
  Bytes b(cpl || dw3 ? 12 : 16, 0);
  b[0] = byte0Of(t.kind);
  if (dw3) b[0] &= ~0x20;  // Fmt bit 0 clear: 3 DW
  uint16_t len = t.lengthDw;
  if (hasData(b[0])) len = static_cast<uint16_t>((t.data.size() + 3) / 4);
  if (t.kind == TlpKind::Cpl) len = 0;
  b[1] = static_cast<uint8_t>((t.tag >> 9 & 1) << 7 | (t.tag >> 8 & 1) << 3);  // T9, T8
  b[2] = static_cast<uint8_t>((len >> 8) & 0x3);
  b[3] = static_cast<uint8_t>(len);
  if (cpl) {
    putBe(&b[4], 2, t.completer);
    b[6] = static_cast<uint8_t>((static_cast<uint8_t>(t.status) << 5) | ((t.byteCount >> 8) & 0xF));
    b[7] = static_cast<uint8_t>(t.byteCount);
    putBe(&b[8], 2, t.requester);
    b[10] = static_cast<uint8_t>(t.tag);
    b[11] = t.lowerAddr & 0x7F;
  } else {
    putBe(&b[4], 2, t.requester);
    b[6] = static_cast<uint8_t>(t.tag);
    b[7] = static_cast<uint8_t>((t.lastBe << 4) | (t.firstBe & 0xF));
    if (dw3) putBe(&b[8], 4, t.addr & 0xFFFF'FFFC);
    else putBe(&b[8], 8, t.addr & ~uint64_t{3});
  }
  b.insert(b.end(), t.data.begin(), t.data.end());
  while (b.size() % 4) b.push_back(0);
  return b;
}

std::optional<Tlp> decodeTlp(const Bytes& b, TlpError* err) {
  auto fail = [&](TlpError e) -> std::optional<Tlp> { if (err) *err = e; return std::nullopt; };
  if (err) *err = TlpError::None;
  if (b.size() < 12) return fail(TlpError::Truncated);
  Tlp t;
  bool known = false;
  for (auto& k : kTypes) {
    if (k.byte0 == b[0]) { t.kind = k.kind; known = true; }
    // A request's 3 DW form: Fmt bit 0 clear.
    const bool request = k.kind != TlpKind::Cpl && k.kind != TlpKind::CplD;
    if (request && (k.byte0 & ~0x20) == b[0]) { t.kind = k.kind; t.threeDw = true; known = true; }
  }
  if (!known) return fail(TlpError::UnknownType);
  if (b[2] & 0x80) return fail(TlpError::Digest);
  uint16_t len = static_cast<uint16_t>(((b[2] & 0x3) << 8) | b[3]);
  size_t lenBytes = (len == 0 ? 1024u : len) * 4u;
  const size_t hdr = t.isCompletion() || t.threeDw ? 12 : 16;
  if (b.size() < hdr) return fail(TlpError::Truncated);
  size_t expect = hdr + (hasData(b[0]) ? lenBytes : 0);
  if (b.size() != expect) return fail(b.size() < expect ? TlpError::Truncated : TlpError::BadLength);
  t.lengthDw = len;
  if (t.isCompletion()) {
    t.completer = static_cast<uint16_t>(getBe(&b[4], 2));
    t.status = static_cast<CplStatus>(b[6] >> 5);
    t.byteCount = static_cast<uint16_t>(((b[6] & 0xF) << 8) | b[7]);
    t.requester = static_cast<uint16_t>(getBe(&b[8], 2));
    t.tag = tlpTag(b.data(), b[10]);
    t.lowerAddr = b[11] & 0x7F;
    if (t.kind == TlpKind::Cpl) t.lengthDw = 0;
  } else {
    t.requester = static_cast<uint16_t>(getBe(&b[4], 2));
    t.tag = tlpTag(b.data(), b[6]);
    t.lastBe = b[7] >> 4;
    t.firstBe = b[7] & 0xF;
    t.addr = (t.threeDw ? getBe(&b[8], 4) : getBe(&b[8], 8)) & ~uint64_t{3};
  }
  t.data.assign(b.begin() + static_cast<long>(hdr), b.end());
  return t;
}

std::string describe(const Tlp& t) {
  static const char* names[] = {"MRd", "MWr", "Cpl", "CplD", "FetchAdd", "Swap", "CAS", "DMWr"};
  char buf[160];
  if (t.isCompletion())
    std::snprintf(buf, sizeof buf, "%s req=%04x tag=%u status=%u bc=%u la=%02x len=%zu", names[int(t.kind)],
                  t.requester, t.tag, unsigned(t.status), t.byteCount, t.lowerAddr, t.data.size());
  else
    std::snprintf(buf, sizeof buf, "%s req=%04x tag=%u addr=%016llx len=%uDW", names[int(t.kind)], t.requester,
                  t.tag, static_cast<unsigned long long>(t.addr), t.lengthDw);
  return buf;
}

namespace {
// Byte enables of a request for `bytes` bytes at byte address addr (PCIe: First BE
// for the first DW, Last BE for the last, 0 when there is one DW).
void setByteEnables(Tlp& t, uint64_t addr, size_t bytes) {
  const unsigned off = addr & 3;
  const size_t end = off + bytes;  // bytes from the DW-aligned start
  t.addr = addr & ~uint64_t{3};
  t.lengthDw = static_cast<uint16_t>((end + 3) / 4);
  const unsigned endRem = static_cast<unsigned>(end % 4);
  const uint8_t lastMask = endRem == 0 ? 0xF : static_cast<uint8_t>((1u << endRem) - 1);
  t.firstBe = static_cast<uint8_t>((0xF << off) & 0xF);
  if (t.lengthDw == 1) {
    t.firstBe &= lastMask;
    t.lastBe = 0;
  } else {
    t.lastBe = lastMask;
  }
}
}  // namespace

Tlp makeMWr(uint16_t req, uint16_t tag, uint64_t addr, const Bytes& data) {
  Tlp t;
  t.kind = TlpKind::MWr;
  t.requester = req;
  t.tag = tag;
  if (data.empty()) {  // no bytes: kept as given (a malformed TLP for bad-input tests)
    t.addr = addr;
    return t;
  }
  setByteEnables(t, addr, data.size());
  t.data.assign(addr & 3, 0);
  t.data.insert(t.data.end(), data.begin(), data.end());
  t.data.resize(size_t{t.lengthDw} * 4, 0);
  return t;
}

Tlp makeMRd(uint16_t req, uint16_t tag, uint64_t addr, uint16_t bytes) {
  Tlp t;
  t.kind = TlpKind::MRd;
  t.requester = req;
  t.tag = tag;
  if (bytes == 0) {
    t.addr = addr;
    return t;
  }
  setByteEnables(t, addr, bytes);
  return t;
}

unsigned firstEnabledByte(uint8_t firstBe) {
  for (unsigned i = 0; i < 4; ++i)
    if (firstBe >> i & 1) return i;
  return 0;
}

size_t enabledSpan(const Tlp& t) {
  const unsigned dws = t.lengthDw == 0 ? 1024u : t.lengthDw;
  const unsigned first = firstEnabledByte(t.firstBe);
  const uint8_t lastBe = dws == 1 ? t.firstBe : t.lastBe;
  unsigned lastEnd = 4;
  while (lastEnd > 0 && !(lastBe >> (lastEnd - 1) & 1)) --lastEnd;
  if (lastEnd == 0) return dws == 1 ? 0 : size_t{dws} * 4 - first;  // no byte enabled (or malformed)
  return size_t{dws - 1} * 4 + lastEnd - first;
}

Tlp makeDMWr(uint16_t req, uint16_t tag, uint64_t addr, const Bytes& data) {
  Tlp t = makeMWr(req, tag, addr, data);
  t.kind = TlpKind::DMWr;
  return t;
}

Tlp makeWriteConfirmation(uint16_t completer, uint16_t req, uint16_t tag, uint64_t addr) {
  return makeCplD(completer, req, tag, addr, le64(addr));
}

Tlp makeCplD(uint16_t completer, uint16_t req, uint16_t tag, uint64_t addr, const Bytes& data) {
  Tlp t;
  t.kind = TlpKind::CplD;
  t.completer = completer;
  t.requester = req;
  t.tag = tag;
  t.data = data;
  t.lengthDw = static_cast<uint16_t>((data.size() + 3) / 4);
  t.byteCount = static_cast<uint16_t>(data.size() & 0xFFF);
  t.lowerAddr = addr & 0x7F;
  return t;
}

Tlp makeCpl(uint16_t completer, uint16_t req, uint16_t tag, CplStatus st, uint16_t byteCount, uint8_t lowerAddr) {
  Tlp t;
  t.kind = TlpKind::Cpl;
  t.completer = completer;
  t.requester = req;
  t.tag = tag;
  t.status = st;
  t.byteCount = byteCount;
  t.lowerAddr = lowerAddr;
  return t;
}

Tlp makeAtomic(TlpKind kind, uint16_t req, uint16_t tag, uint64_t addr, const Bytes& operands) {
  Tlp t = makeMWr(req, tag, addr, operands);
  t.kind = kind;
  return t;
}

Tlp threeDw(Tlp t) {
  t.threeDw = true;
  return t;
}

bool isAtomic(TlpKind k) { return k == TlpKind::FetchAdd || k == TlpKind::Swap || k == TlpKind::Cas; }

unsigned atomicOperandBytes(const Tlp& t) {
  const size_t n = t.data.size();
  if (t.kind == TlpKind::Cas) return (n == 8 || n == 16 || n == 32) ? static_cast<unsigned>(n / 2) : 0;
  if (t.kind == TlpKind::FetchAdd || t.kind == TlpKind::Swap) return (n == 4 || n == 8) ? static_cast<unsigned>(n) : 0;
  return 0;
}

bool atomicWellFormed(const Tlp& t) {
  const unsigned op = atomicOperandBytes(t);
  return op != 0 && t.addr % op == 0;
}

Bytes atomicResult(const Tlp& t, const Bytes& old) {
  const unsigned op = atomicOperandBytes(t);
  switch (t.kind) {
    case TlpKind::FetchAdd: {
      Bytes r(op);
      unsigned carry = 0;
      for (unsigned i = 0; i < op; ++i) {  // little-endian add, wrapping
        const unsigned s = old[i] + t.data[i] + carry;
        r[i] = static_cast<uint8_t>(s);
        carry = s >> 8;
      }
      return r;
    }
    case TlpKind::Swap:
      return Bytes(t.data.begin(), t.data.begin() + op);
    case TlpKind::Cas: {
      const bool equal = std::equal(old.begin(), old.begin() + op, t.data.begin());
      return equal ? Bytes(t.data.begin() + op, t.data.begin() + 2 * op) : old;
    }
    default:
      return old;
  }
}

}  // namespace ni

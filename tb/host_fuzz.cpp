// SPDX-License-Identifier: Apache-2.0
#include "host_fuzz.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>

#include "driver.hpp"
#include "ni_regs.hpp"
#include "system.hpp"
#include "tlp.hpp"

namespace ni::fuzz {
namespace {

constexpr uint64_t kFuzzMem = 0x4000'0000ull;  // memory ID 4 of each node: the streams' target
constexpr uint64_t kLiveMem = 0x4800'0000ull;  // memory ID 5: the liveness round's, out of the streams' reach
constexpr uint64_t kRegion = 0x10000;
constexpr uint64_t kFuzzWin = kApertureBase, kLiveWin = kApertureBase + 0x100000;

// Registers of node 0 no stream may change: the streams carry no well-formed register write.
const uint32_t kWatched[] = {regs::NODE_ID, regs::WC_TIMEOUT, regs::RETX_TIMEOUT, regs::RETX_LIMIT,
                             regs::MEM_TIMEOUT, regs::MEM_LIMIT, regs::INTR_ADDR_LO, regs::INTR_MASK,
                             regs::RNDV_THRESHOLD, regs::P_KEY, regs::RAW_CTRL, regs::HOST_STALL,
                             regs::ART_BASE_LO(0), regs::ART_LIMIT_LO(0), regs::ART_XLATE_LO(0), regs::ART_DEST(0),
                             regs::ART_CTRL(0), regs::ART_BASE_LO(1), regs::ART_CTRL(1),
                             regs::MEMID_BASE_LO(4), regs::MEMID_SIZE(4), regs::MEMID_CTRL(4),
                             regs::INJ_CTRL(0), regs::RFIFO_CTRL(0)};

class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed) {}
  uint64_t r(uint64_t n) { return rng_() % n; }
  bool chance(unsigned pct) { return r(100) < pct; }

  // One hostile TLP and how it is sent.
  Bytes next(TlpShape* shape) {
    // The type byte: the kinds the NI handles, the PCIe kinds it does not, any byte.
    static const uint8_t kKinds[] = {0x60, 0x20, 0x4C, 0x4D, 0x4E, 0x5B, 0x0A, 0x4A, 0x00, 0x40,
                                     0x02, 0x42, 0x04, 0x05, 0x44, 0x45, 0x30, 0x70, 0x01, 0x21};
    const uint8_t ft = chance(85) ? kKinds[r(sizeof kKinds)] : static_cast<uint8_t>(r(256));
    const bool cpl = ft == 0x0A || ft == 0x4A;
    const bool fourDw = (ft & 0x20) != 0;
    const unsigned hdr = fourDw ? 16 : 12;
    // Length: a small legal one mostly, else anything the 10-bit field holds.
    unsigned lenDw = chance(70) ? 1 + static_cast<unsigned>(r(64)) : static_cast<unsigned>(r(1024));
    if (ft == 0x4C || ft == 0x4D) lenDw = 1 + static_cast<unsigned>(r(2));
    if (ft == 0x4E) lenDw = 2u << r(3);
    Bytes b(hdr, 0);
    b[0] = ft;
    b[1] = chance(10) ? static_cast<uint8_t>(r(256)) : 0;
    b[2] = static_cast<uint8_t>((lenDw >> 8) & 3);
    if (chance(5)) b[2] |= 0x80;  // TD: a digest
    if (chance(5)) b[2] |= 0x40;  // EP: poisoned
    b[3] = static_cast<uint8_t>(lenDw);
    if (cpl) {
      // Completions: to the NI (its DMA tags, its tracker's) or to nobody in particular.
      const uint16_t cpl_id = 0x0000, req = chance(70) ? kNiReqId : static_cast<uint16_t>(r(65536));
      const uint8_t tag = chance(60) ? static_cast<uint8_t>(0x80 | r(16)) : static_cast<uint8_t>(r(256));
      putBe(&b[4], 2, cpl_id);
      b[6] = static_cast<uint8_t>(r(8) << 5 | r(16));
      b[7] = static_cast<uint8_t>(r(256));
      putBe(&b[8], 2, req);
      b[10] = tag;
      b[11] = static_cast<uint8_t>(r(128));
    } else {
      putBe(&b[4], 2, kCpuReqId);
      b[6] = static_cast<uint8_t>(r(256));  // tag
      b[7] = chance(80) ? 0xFF : static_cast<uint8_t>(r(256));
      const uint64_t a = address();
      if (fourDw) putBe(&b[8], 8, a & ~uint64_t{3});
      else putBe(&b[8], 4, a & 0xFFFF'FFFC);
    }
    const bool data = (ft & 0x40) != 0;
    const size_t want = hdr + (data ? (lenDw == 0 ? 4096 : 4 * lenDw) : 0);
    size_t size = want;
    if (chance(20)) size = hdr / 2 + r(want + 64);  // cut short or run long, by any amount
    if (chance(2)) size = 8192 + 8 * r(128);        // far too long
    while (b.size() < size) b.push_back(static_cast<uint8_t>(r(256)));
    b.resize(size);
    // A register write that could be well formed is made one that is not: the streams
    // must never change a register (the liveness round checks they did not). Well
    // formed: as long as its Length says, and its digest if TD.
    const size_t whole = want + ((b[2] & 0x80) ? 4 : 0);
    const bool toCsr = b.size() >= hdr && (fourDw ? (getBe(&b[8], 8) >> 12) == (kCsrBase >> 12)
                                                  : (getBe(&b[8], 4) >> 12) == (kCsrBase >> 12));
    if (data && !cpl && toCsr && b.size() == whole) b.resize(b.size() + 4);
    shape->holeBeat = chance(8) ? static_cast<int>(r(4)) : -1;
    shape->holeKeep = r(256) | 1;
    shape->withdraw = chance(10);
    return b;
  }

 private:
  uint64_t address() {
    switch (r(6)) {
      case 0: case 1: case 2: return kFuzzWin + r(kRegion);  // the streams' window
      case 3: return kCsrBase + 4 * r(1024);                  // the NI's registers
      case 4: return kApertureBase + 0x800000 + r(1 << 20);   // no window
      default: return rng_();                                 // anywhere
    }
  }
  std::mt19937_64 rng_;
};

}  // namespace

HostOutcome runHostCampaign(const HostCampaign& c) {
  HostOutcome out;
  auto fail = [&](const std::string& what) {
    std::ostringstream s;
    s << "seed " << c.seed << ", after " << out.tlps << " TLPs: " << what;
    out.violations.push_back(s.str());
  };
  SystemConfig cfg;
  cfg.nodes = 2;
  cfg.dataBits = c.dataBits;
  cfg.seed = c.seed;
  cfg.hostStall = 0.1;
  System sys(cfg);
  sys.reset();
  for (unsigned n = 0; n < 2; ++n) {
    sys.setMemId(n, 4, MemRegion{true, kFuzzMem, kRegion, true, true, true});
    sys.setMemId(n, 5, MemRegion{true, kLiveMem, kRegion, true, true, true});
    Window f, l;
    f.base = kFuzzWin;
    f.size = kRegion;
    f.dstNode = 1 - n;
    f.rxXlate = true;
    f.memid = 4;
    f.atomic = true;
    l = f;
    l.base = kLiveWin;
    l.memid = 5;
    f.combine = true;  // the streams' writes also go through the combiner
    sys.setWindow(n, 0, f);
    sys.setWindow(n, 1, l);
  }
  if (!sys.drain()) fail("setup did not drain");
  std::vector<uint32_t> before;
  for (uint32_t off : kWatched) before.push_back(sys.readCsr(0, off));

  Generator gen(c.seed);
  uint64_t counters[2] = {0, 0};
  // NI_HOST_FUZZ_DUMP=<stream>: print that stream's TLPs (to find the one a violation needs).
  const char* dumpEnv = std::getenv("NI_HOST_FUZZ_DUMP");
  const long dumpStream = dumpEnv && *dumpEnv ? std::atol(dumpEnv) : -1;
  for (unsigned s = 0; s < c.streams && out.ok(); ++s) {
    for (unsigned k = 0; k < c.tlpsPerStream; ++k) {
      TlpShape shape;
      const Bytes t = gen.next(&shape);
      if (long(s) == dumpStream) {
        std::fprintf(stderr, "TLP %u.%u: %zu bytes, hole beat %d keep 0x%llx%s:", s, k, t.size(), shape.holeBeat,
                     static_cast<unsigned long long>(shape.holeKeep), shape.withdraw ? ", withdrawn" : "");
        for (size_t i = 0; i < std::min<size_t>(t.size(), 64); ++i) std::fprintf(stderr, " %02x", t[i]);
        std::fprintf(stderr, "\n");
      }
      sys.node(0).sendRawTlp(t, {}, shape);
      ++out.tlps;
    }
    if (!sys.drain(4'000'000)) {
      fail("the system did not drain after a stream (wedged)");
      break;
    }
    // Liveness: each node stores, loads back and fetch-adds at the other.
    unsigned good = 0;
    std::string why;
    auto note = [&why](const char* what, unsigned n, const LoadResult& r) {
      why += std::string(" ") + what + " from node " + std::to_string(n) + ": " +
             (r.timedOut ? "timed out" : !r.ok ? "status " + std::to_string(int(r.status)) : "wrong data");
    };
    for (unsigned n = 0; n < 2; ++n) {
      Bytes data(64);
      for (auto& x : data) x = static_cast<uint8_t>(gen.r(256));
      const uint64_t at = kLiveWin + 0x100 * (s % 64) + 0x4000 * n;
      sys.node(n).store(at, data);
      sys.node(n).load(at, 64, [&good, &note, n, data](const LoadResult& r) {
        if (r.ok && r.data == data) ++good;
        else note("load", n, r);
      });
      Bytes one(8, 0);
      one[0] = 1;
      const uint64_t want = counters[n]++;
      sys.node(n).atomic(TlpKind::FetchAdd, kLiveWin + 0x8000 + 8 * n, one, [&good, &note, n, want](const LoadResult& r) {
        if (r.ok && getLe(r.data.data(), 8) == want) ++good;
        else note("fetch-add", n, r);
      });
    }
    if (!sys.drain(4'000'000)) {
      fail("the liveness round did not drain");
      break;
    }
    if (good != 4) {
      std::ostringstream c;
      for (unsigned n = 0; n < 2; ++n)
        c << "; node " << n << " RETX " << sys.readCsr(n, regs::RETX_CNT) << " RETX_FAIL " << sys.readCsr(n, regs::RETX_FAIL_CNT)
          << " NAK_RX " << sys.readCsr(n, regs::NAK_RX_CNT) << " NAK_TX " << sys.readCsr(n, regs::NAK_TX_CNT)
          << " CRC_ERR " << sys.readCsr(n, regs::CRC_ERR_CNT) << " BAD_PKT " << sys.readCsr(n, regs::BAD_PKT_CNT)
          << " OOS " << sys.readCsr(n, regs::OOS_CNT) << " DUP " << sys.readCsr(n, regs::DUP_CNT);
      fail("liveness round " + std::to_string(s) + ": " + std::to_string(good) + " of 4 answers right:" + why + c.str());
    }
    else ++out.liveness;
    if (sys.rtlError()) fail("an RTL assertion failed");
  }
  for (size_t i = 0; i < before.size() && out.ok(); ++i) {
    const uint32_t now = sys.readCsr(0, kWatched[i]);
    if (now != before[i]) {
      std::ostringstream s;
      s << "register 0x" << std::hex << kWatched[i] << " changed from 0x" << before[i] << " to 0x" << now;
      fail(s.str());
    }
  }
  out.malformed = sys.readCsr(0, regs::MALFORMED_CNT);
  out.unsup = sys.readCsr(0, regs::UNSUP_CNT);
  out.winMiss = sys.readCsr(0, regs::WIN_MISS_CNT);
  out.cplUnexp = sys.readCsr(0, regs::CPL_UNEXP_CNT);
  out.poison = sys.readCsr(0, regs::POISON_HOST_CNT);
  out.cycles = sys.cycle();
  return out;
}

}  // namespace ni::fuzz

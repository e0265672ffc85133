// SPDX-License-Identifier: Apache-2.0
// Unit test of ni_host_rx alone at 64 bits. The test plays its neighbours: the
// ART (RefNi's windows, answered combinationally), the read tracker (a map), and
// random readiness on every output. Each TLP is built together with the outcome
// the documented rules give it (docs/architecture.md, "Bad input"): tunnel
// request (write, read, atomic, confirmed write at each confirmation point) with
// its fabric header and rewritten address, tunnel response with the requester's ID
// and tag restored (a memory confirmation also with its address translated back),
// CSR access, UR completion or sending-NI confirmation, and the one event counted. Outputs are checked per channel,
// in order.
#include <gtest/gtest.h>

#include <deque>
#include <map>

#include "Vni_host_rx.h"
#include "Vni_host_rx128.h"
#include "address_map.hpp"
#include "axis_bfm.hpp"
#include "pkg_structs.hpp"
#include "ref_ni.hpp"
#include "verilated_ports.hpp"
#include "verilated_fixture.hpp"

using namespace ni;
using ni::getField;
using tb::kTrkAtomic;
using tb::kTrkConfMem;
using tb::kTrkConfNi;
using tb::kTrkRead;

namespace {

constexpr uint16_t kNode = 0x0042;
constexpr uint16_t kNiReqId = 0x0100;

enum class Ev { None, WinMiss, Perm, Malformed, Unsup, CplUnexp };

struct Csr {
  bool write;
  uint32_t addr, wdata;
  unsigned be;
  uint16_t reqid;
  uint16_t tag;  // 10 bits
  bool operator==(const Csr& o) const {
    return write == o.write && addr == o.addr && (!write || wdata == o.wdata) && be == o.be && reqid == o.reqid &&
           tag == o.tag;
  }
};
struct Tunneled {
  Bytes hdr;    // the 32 header bytes handed to the framer
  Bytes tlp;    // the TLP bytes that follow it
  bool bad = false;
  size_t length = 0;  // bytes it leaves with: as its Length says (a short one is padded)
};
// kind: tb::kTrk* (ni_pkg::TRK_*).
struct TrkEntry { uint16_t node, reqid, otag; uint32_t psn; uint8_t kind; uint64_t page; };  // otag: 10 bits
// A completion of an atomic kept for ni_amo_cache: source, PSN, TLP as it left.
struct AmoRecord {
  uint16_t lid;
  uint32_t psn;
  Bytes tlp;
  bool operator==(const AmoRecord& o) const { return lid == o.lid && psn == o.psn && tlp == o.tlp; }
};

// M: the model (Vni_host_rx).
template <class M, unsigned Bpb>
class HostRxFixture : public tb::VerilatedTest {
 protected:
  static constexpr unsigned kBpb = Bpb;
 protected:
  void SetUp() override {
    VerilatedTest::SetUp();
    dut = std::make_unique<tb::VlClocked<M>>(ctx(), "host_rx");
    attach(dut.get());
    reset();
    Window w;
    w.base = kApertureBase;
    w.size = 64 << 10;
    w.dstNode = 2;
    w.rxXlate = true;
    w.memid = 3;
    w.atomic = true;
    ref.setWindow(0, w);
    w.base = kApertureBase + 0x100000;
    w.size = 16 << 10;
    w.dstNode = 5;
    w.rxXlate = false;
    w.remote = 0x0000'1234'5000'0000ull;
    ref.setWindow(1, w);
    w.base = kApertureBase + 0x200000;
    w.write = false;  // read-only, no atomics
    w.atomic = false;
    ref.setWindow(2, w);
    w.base = kApertureBase + 0x300000;
    w.write = true;
    w.read = false;  // write-only
    ref.setWindow(3, w);
    w.base = kApertureBase + 0x400000;
    w.read = w.write = w.atomic = true;
    w.mcastLid = 0xC00A;  // a multicast group: writes only
    w.rxXlate = true;
    ref.setWindow(4, w);
    // Confirmation points: DMWr through windows 0 (memory) and 1 (receiving NI);
    // windows 5-7 make every write confirmed, one point each.
    ref.windows[0].confAt = ConfAt::Memory;
    ref.windows[1].confAt = ConfAt::ReceiverNi;
    w = ref.windows[1];
    for (unsigned i = 5; i < 8; ++i) {
      w.base = kApertureBase + 0x100000 * i;
      w.confirmAll = true;
      w.confAt = static_cast<ConfAt>(i - 5);
      w.rxXlate = i == 6;
      ref.setWindow(i, w);
    }
    // Every tag but the DMA engine's (0x80-0x9F) stands for a tracked remote request, whose
    // requester's tag has 10 bits (8-bit tags among them).
    for (unsigned t = 0; t < 256; ++t)
      if (t < 0x80 || t > 0x9F) trk[t] = TrkEntry{static_cast<uint16_t>(lidOf(t % 7)), static_cast<uint16_t>(0x0200 + t), static_cast<uint16_t>((255 - t) | (t % 4) << 8),
                        0x10203u * (t + 1) & 0xFFFFFF, static_cast<uint8_t>(t % 4),
                        t % 2 ? 0x12345u * t : 0};
    genAvail = trk;
  }

  uint8_t r8() { return static_cast<uint8_t>(rng()()); }
  Bytes randomData(size_t n) {
    Bytes b(n);
    for (auto& x : b) x = r8();
    return b;
  }
  // A DW-aligned address inside window `w` with `len` bytes not crossing a 4 KiB page.
  uint64_t addrIn(unsigned w, size_t len) {
    const Window& win = ref.windows[w];
    const uint64_t page = rng()() % (win.size >> 12);
    const uint64_t off = (rng()() % ((4096 - len) / 4 + 1)) * 4;
    return win.base + (page << 12) + off;
  }
  Bytes headerFor(const Tlp& t, uint8_t opcode, uint16_t dlid, const RefNi::Route* r, uint32_t psn = 0) {
    FabricPacket p;
    if (r) {
      p = RefNi::encapsulate(t, *r, kNode, 0);
    } else {
      p.vl = p.sl = 1;
      p.dlid = dlid;
      p.slid = kNode;
      p.opcode = opcode;
      p.psn = psn;
      p.payload = encodeTlp(t);
    }
    const Bytes b = encodeFabric(p);
    return Bytes(b.begin(), b.begin() + kFabHdrBytes);
  }
  void expectReq(const Tlp& t, const Bytes& sent, bool bad) {
    const auto r = ref.route(t);
    Bytes out = sent;
    // The address is rewritten; so is the type byte of a confirmed write (MWr or DMWr).
    const Bytes good = RefNi::encapsulate(t, r, kNode, 0).payload;
    std::copy(good.begin() + 8, good.begin() + 16, out.begin() + 8);
    out[0] = good[0];
    reqExpect.push_back(Tunneled{headerFor(t, 0, 0, &r), out, bad, encodeTlp(t).size()});
    backExpect.push_back(pagesBack(t.addr, r.tlpAddr));
  }
  static tb::OwnCpl urOf(uint16_t req, uint16_t tag, uint64_t addr) {
    tb::OwnCpl c;
    c.status = 1;  // UR
    c.reqid = req;
    c.tag = tag;
    c.addr = addr & 0x7F;
    return c;
  }
  void send(const Bytes& b, Ev ev, bool midHole = false) {
    // A write of an ART_CTRL register: the lookups of the TLPs after it must wait for it.
    if (b.size() == 20 && (b[0] & 0x40) && (getBe(&b[8], 8) >> 12) == (kCsrBase >> 12)) {
      const uint64_t off = getBe(&b[8], 8) & 0xFFF;
      if (off >= 0x100 && off < 0x100 + 0x20 * kNumArt && (off & 0x1F) == 0x1C) fenceTlp.push_back(tlpsSent);
    }
    if (b.empty() || (b[0] != 0x0A && b[0] != 0x4A)) ++tlpsSent;  // a completion takes no lookup
    src.push(b, 0, false, midHole);
    if (ev != Ev::None) evExpect.push_back(ev);
  }

  // One random TLP of a random kind, with its expected outcome queued.
  void addRandom() {
    const unsigned kind = rng()() % 17;
    const uint16_t req = static_cast<uint16_t>(rng()() % 4 ? 0 : r8());
    const uint16_t tag = static_cast<uint16_t>(rng()() & 0x3FF);  // a 10-bit tag (an 8-bit one a quarter of the time)
    switch (kind) {
      case 0: case 1: {  // write through a window, either translation mode
        const size_t len = 4 * (1 + rng()() % 64);
        const Tlp t = makeMWr(req, tag, addrIn(kind, len), randomData(len));
        if (rng()() % 4 == 0) {
          // With a TLP digest (TD): it leaves without it (TD cleared). Bytes that disagree
          // with it (the digest missing, or 4 bytes past it) make the TLP malformed: it
          // still leaves as long as its Length, stomped.
          const unsigned how = rng()() % 4;
          Bytes b = encodeTlp(t);
          b[2] |= 0x80;
          if (how != 2) b.insert(b.end(), 4, 0xD1);
          if (how == 3) b.insert(b.end(), 4, 0xEE);
          expectReq(t, encodeTlp(t), how >= 2);
          send(b, how >= 2 ? Ev::Malformed : Ev::None);
          break;
        }
        expectReq(t, encodeTlp(t), false);
        send(encodeTlp(t), Ev::None);
        break;
      }
      case 2: {  // read through a window (window 2 is read-only: still fine)
        const uint16_t len = static_cast<uint16_t>(4 * (1 + rng()() % 64));
        const Tlp t = makeMRd(req, tag, addrIn(rng()() % 3, len), len);
        expectReq(t, encodeTlp(t), false);
        send(encodeTlp(t), Ev::None);
        break;
      }
      case 3: {  // outside every window: reads get UR
        const bool rd = rng()() & 1;
        const uint64_t a = kApertureBase + 0x4000000 + (rng()() % 4096) * 4096;
        const Tlp t = rd ? makeMRd(req, tag, a, 4) : makeMWr(req, tag, a, randomData(8));
        if (rd) urExpect.push_back(urOf(req, tag, a));
        send(encodeTlp(t), Ev::WinMiss);
        break;
      }
      case 4: {  // write to the read-only window, read from the write-only one
        const bool rd = rng()() & 1;
        const uint64_t a = addrIn(rd ? 3 : 2, 16);
        const Tlp t = rd ? makeMRd(req, tag, a, 16) : makeMWr(req, tag, a, randomData(16));
        if (rd) urExpect.push_back(urOf(req, tag, a));
        send(encodeTlp(t), Ev::Perm);
        break;
      }
      case 5: {  // CSR access
        const bool wr = rng()() & 1;
        // A quarter of them an ART_CTRL: the lookups after it wait for the ART's update.
        const uint32_t off = wr && rng()() % 4 == 0 ? 0x11C + 0x20 * static_cast<uint32_t>(rng()() % kNumArt)
                                                    : static_cast<uint32_t>(rng()() % 1024) * 4;
        Tlp t = wr ? makeMWr(req, tag, kCsrBase + off, randomData(4)) : makeMRd(req, tag, kCsrBase + off, 4);
        t.firstBe = static_cast<uint8_t>(1 + rng()() % 15);
        t.lastBe = 0;
        if (rng()() % 8 == 0) {
          // Longer than its Length: no register access; a read is answered UR.
          Bytes b = encodeTlp(t);
          b.insert(b.end(), 4 * (1 + rng()() % 3), 0xEE);
          if (!wr) urExpect.push_back(urOf(req, tag, kCsrBase + off));
          send(b, Ev::Malformed);
          break;
        }
        csrExpect.push_back(Csr{wr, off, wr ? static_cast<uint32_t>(getLe(t.data.data(), 4)) : 0u, t.firstBe, req, tag});
        send(encodeTlp(t), Ev::None);
        break;
      }
      case 6: {  // completion for a read this NI serves
        std::vector<uint8_t> tags;
        for (const auto& [k, v] : genAvail) tags.push_back(k);
        if (tags.empty()) break;
        const uint8_t t8 = tags[rng()() % tags.size()];
        const TrkEntry e = genAvail[t8];
        genAvail.erase(t8);
        // An atomic's result is 4, 8 or 16 bytes (or a UR without data); a read's up to 256;
        // a write confirmation names the address memory wrote.
        const bool atomic = e.kind == kTrkAtomic;
        const bool conf = e.kind == kTrkConfMem || e.kind == kTrkConfNi;
        const size_t len = atomic ? (4u << (rng()() % 3)) : 4 * (1 + rng()() % 64);
        const uint64_t wrote = (rng()() & ~uint64_t{3}) | uint64_t{1} << 63;
        // Memory may refuse a write the NI confirmed (UR): ni_mem_keep reports it.
        const bool refused = e.kind == kTrkConfNi && rng()() % 4 == 0;
        const Tlp t = refused ? makeCpl(0, kNiReqId, t8, CplStatus::UR, 8, 0)
                      : conf  ? makeWriteConfirmation(0, kNiReqId, t8, wrote)
                      : atomic && rng()() % 8 == 0 ? makeCpl(0, kNiReqId, t8, CplStatus::UR, 4, 0)
                                                   : makeCplD(0, kNiReqId, t8, rng()() & 0x7C, randomData(len));
        send(encodeTlp(t), Ev::None);
        if (e.kind == kTrkConfNi) {  // the NI confirmed it already: ends here, its copy is released
          memConfExpect.push_back({t8, !refused});
          break;
        }
        Tlp back = t;
        back.requester = e.reqid;
        back.tag = e.otag;
        // Back to the sender: the address as tunneled (minus the memory ID's base).
        if (conf) back = makeWriteConfirmation(0, e.reqid, e.otag, wrote - (e.page << 12));
        rspExpect.push_back(Tunneled{headerFor(back, kOpTunnelRsp, e.node, nullptr, e.psn), encodeTlp(back), false});
        if (atomic || e.kind == kTrkConfMem) amoExpect.push_back(AmoRecord{e.node, e.psn, encodeTlp(back)});
        break;
      }
      case 7: {  // completion nobody waits for: wrong requester ID, a tag already completed, or
                 // any tag of the NI's with T9 or T8 set (the NI's own tags have 8 bits)
        const unsigned how = genAvail.size() == trk.size() ? rng()() % 2 * 2 : rng()() % 3;
        uint16_t tag = r8();
        if (how == 1) {
          do tag = r8();
          while (genAvail.count(tag) || (tag >= 0x80 && tag <= 0x9F));  // 0x80-0x9F: the DMA engine's
        }
        if (how == 2) tag = static_cast<uint16_t>(tag | (1 + rng()() % 3) << 8);
        const Tlp t = makeCplD(0, how == 0 ? 0x0300 : kNiReqId, tag, 0, randomData(8));
        send(encodeTlp(t), Ev::CplUnexp);
        break;
      }
      case 8: {  // atomic: through a window that allows it, or refused (permission, miss, size, alignment)
        static const TlpKind kinds[] = {TlpKind::FetchAdd, TlpKind::Swap, TlpKind::Cas};
        const TlpKind k = kinds[rng()() % 3];
        const unsigned op = 4u << (rng()() % (k == TlpKind::Cas ? 3 : 2));
        const unsigned how = rng()() % 6;
        const unsigned win = how == 1 ? 2 : rng()() % 2;
        uint64_t a = addrIn(win, 16) & ~uint64_t{op - 1};
        if (how == 2) a = kApertureBase + 0x4000000;
        if (how == 4) a += 4 * (1 + rng()() % (op / 4 > 1 ? op / 4 - 1 : 1));  // misaligned (op > 4)
        Bytes operands = randomData(k == TlpKind::Cas ? 2 * op : op);
        if (how == 3) operands.resize(k == TlpKind::Cas ? 12 : 12);  // no such operand size
        const Tlp t = makeAtomic(k, req, tag, a, operands);
        const bool misaligned = how == 4 && op > 4;
        if (how == 0 || how == 5 || (how == 4 && !misaligned)) {
          expectReq(t, encodeTlp(t), false);
          send(encodeTlp(t), Ev::None);
          break;
        }
        urExpect.push_back(urOf(req, tag, a));
        send(encodeTlp(t), how == 1 ? Ev::Perm : how == 2 ? Ev::WinMiss : Ev::Malformed);
        break;
      }
      case 9: {  // write whose bytes disagree with its Length: tunneled, then stomped
        const size_t len = 4 * (2 + rng()() % 60);
        const Tlp t = makeMWr(req, tag, addrIn(0, len + 4), randomData(len));
        Bytes b = encodeTlp(t);
        if (rng()() & 1) b.resize(b.size() - 4);
        else b.insert(b.end(), 4, 0xEE);
        expectReq(t, b, true);
        send(b, Ev::Malformed);
        break;
      }
      case 10: {  // longer than MaxPayload: dropped, UR if a read
        const bool rd = rng()() & 1;
        const uint64_t a = kApertureBase + (rng()() % 16) * 4096;
        const Tlp t = rd ? makeMRd(req, tag, a, 512) : makeMWr(req, tag, a, randomData(260 + 4 * (rng()() % 20)));
        if (rd) urExpect.push_back(urOf(req, tag, 0));
        send(encodeTlp(t), Ev::Malformed);
        break;
      }
      case 11: {  // crosses a 4 KiB page
        const Tlp t = makeMWr(req, tag, kApertureBase + 4096 - 8, randomData(16));
        send(encodeTlp(t), Ev::Malformed);
        break;
      }
      case 13: {  // multicast window: writes travel to the group's LID, reads and atomics get UR
        const unsigned how = rng()() % 3;
        const uint64_t a = addrIn(4, 16) & ~uint64_t{7};
        const Tlp t = how == 0   ? makeMWr(req, tag, a, randomData(16))
                      : how == 1 ? makeMRd(req, tag, a, 16)
                                 : makeAtomic(TlpKind::Swap, req, tag, a, randomData(8));
        if (how == 0) {
          expectReq(t, encodeTlp(t), false);
          send(encodeTlp(t), Ev::None);
        } else {
          urExpect.push_back(urOf(req, tag, a));
          send(encodeTlp(t), Ev::Unsup);
        }
        break;
      }
      case 14: {  // confirmed write: a DMWr, or any write through a conf_all window
        static const unsigned wins[] = {0, 1, 5, 6, 7};
        const unsigned win = wins[rng()() % 5];
        const size_t len = 4 * (1 + rng()() % 64);
        const uint64_t a = addrIn(win, len + 4);
        const Tlp t = win < 5 || rng()() & 1 ? makeDMWr(req, tag, a, randomData(len)) : makeMWr(req, tag, a, randomData(len));
        const bool senderNi = ref.windows[win].confAt == ConfAt::SenderNi;
        const bool bad = rng()() % 8 == 0;  // bytes disagree with Length: stomped, UR if the NI confirms
        Bytes b = encodeTlp(t);
        // Malformed: up to 12 bytes short (never into its header), up to 160 bytes long, or
        // a hole in the keep of its first beat (then it leaves whole, stomped).
        const unsigned how = rng()() % 3;
        if (bad && how < 2)
          b.resize(how ? b.size() - std::min<size_t>(len, 4 * (1 + rng()() % 3)) : b.size() + 4 * (1 + rng()() % 40),
                   0x77);
        expectReq(t, b, bad);
        if (senderNi) {
          tb::OwnCpl c = urOf(req, tag, a);
          if (!bad) {
            c.kind = tb::OwnKind::Conf;
            c.status = 0;
            c.addr = a;  // the CPU's own address
          }
          urExpect.push_back(c);
        }
        send(b, bad ? Ev::Malformed : Ev::None, bad && how == 2);
        break;
      }
      case 16: {  // a completion of the DMA engine's read (tags 0x80-0x9F): to its port whole
        const uint8_t t8 = static_cast<uint8_t>(0x80 + rng()() % 32);
        const size_t len = 4 * (2 + rng()() % 63);
        const Tlp t = rng()() % 8 ? makeCplD(0, kNiReqId, t8, 0, randomData(len))
                                  : makeCpl(0, kNiReqId, t8, CplStatus::UR, 64, 0);
        const Bytes whole = encodeTlp(t);
        if (t.kind == TlpKind::CplD && rng()() % 4 == 0) {
          // Its bytes disagree with its Length (a broken root complex): it still reaches
          // the engine exactly as long as its Length says, cut or padded, marked bad.
          Bytes b = whole;
          if (rng()() & 1) b.resize(b.size() - 4 * (1 + rng()() % (len / 4 - 1)));
          else b.insert(b.end(), 4 * (1 + rng()() % 4), 0xEE);
          send(b, Ev::Malformed);
          dmaExpect.push_back({{}, b, true, whole.size()});
        } else {
          send(whole, Ev::None);
          dmaExpect.push_back({{}, whole, false, whole.size()});
        }
        break;
      }
      case 15: {  // refused DMWr: UR (multicast window, register space, no window, read-only window)
        const unsigned how = rng()() % 4;
        const uint64_t a = how == 0 ? addrIn(4, 16) : how == 1 ? kCsrBase + 16 : how == 2 ? kApertureBase + 0x4000000
                                                                                           : addrIn(2, 16);
        const Tlp t = makeDMWr(req, tag, a, randomData(how == 1 ? 4 : 16));
        urExpect.push_back(urOf(req, tag, a));
        send(encodeTlp(t), how == 2 ? Ev::WinMiss : how == 3 ? Ev::Perm : Ev::Unsup);
        break;
      }
      default: {  // shorter than its header
        const Tlp t = makeMWr(req, tag, addrIn(0, 8), randomData(8));
        Bytes b = encodeTlp(t);
        b.resize(4 + 4 * (rng()() % 3));
        send(b, Ev::Malformed);
        break;
      }
    }
  }

  // The ART as ni_art is: a lookup's answer kArtLatency cycles after it (lookupsOut,
  // after the cycle's last eval); the window's register-block attributes by the index
  // the DUT decides on, and the tracker, in the cycle. An ART_CTRL write the DUT makes
  // takes effect in the ART kArtUpdate cycles later (busy meanwhile, then done).
  static constexpr uint64_t kArtLatency = 1;
  // The window attributes of the register block changed by a register write: conf_all
  // (at the receiving NI) is confAllSet, which the test sets as the DUT makes that write.
  bool confAllByRegister = false, confAllSet = false;
  static constexpr uint64_t kArtUpdate = 4;
  struct ArtAnswer {
    uint64_t due;
    uint64_t addr;
  };
  std::deque<ArtAnswer> artPipe;
  uint64_t artNow = 0, artUpdAt = 0;
  // The fence: TLP n's lookup is the n-th; the ART_CTRL writes among the TLPs (their
  // indices) and the cycle each took effect in the ART, as the DUT made them.
  size_t tlpsSent = 0, lookups = 0;  // TLPs that take a lookup, lookups made
  std::vector<size_t> fenceTlp;
  std::vector<uint64_t> fenceDone;
  void answerLookups() {
    auto& m = dut->m;
    m.art_res_valid_i = !artPipe.empty() && artPipe.front().due == artNow;
    const auto r = ref.route(m.art_res_valid_i ? artPipe.front().addr : 0, 4, true);
    const bool hit = m.art_res_valid_i && r.err != RefNi::SendErr::Miss;
    m.art_hit_i = hit;
    m.art_index_i = hit ? r.window : 0;
    m.art_rx_xlate_i = hit && r.rxXlate;
    m.art_perm_r_i = hit && ref.windows[r.window].read;
    m.art_perm_w_i = hit && ref.windows[r.window].write;
    m.art_perm_a_i = hit && ref.windows[r.window].atomic;
    m.art_node_i = hit ? r.dlid : 0;
    m.art_memid_i = hit ? r.memid : 0;
    const uint64_t back = hit ? pagesBack(artPipe.front().addr, r.tlpAddr) : 0;
    m.art_delta_i = (uint64_t(0) - back) & ((uint64_t(1) << 52) - 1);  // the page added
    m.art_back_page_i = back;
    m.art_busy_i = artUpdAt != 0 && artNow < artUpdAt;
    m.art_upd_done_i = artUpdAt != 0 && artNow == artUpdAt;
    dut->eval();  // the window the decision takes (an answer may pass straight to it)
    const Window& win = ref.windows[m.art_win_o % kNumArt];
    m.art_conf_all_i = ref.windowValid[m.art_win_o % kNumArt] && win.confirmAll;
    m.art_conf_at_i = ref.windowValid[m.art_win_o % kNumArt] ? static_cast<uint8_t>(win.confAt) : 0;
    if (confAllByRegister) {  // the window's conf_all as a register write sets it
      m.art_conf_all_i = confAllSet;
      m.art_conf_at_i = static_cast<uint8_t>(ConfAt::ReceiverNi);
    }
    auto it = trk.find(m.trk_tag_o);
    m.trk_hit_i = it != trk.end();
    m.trk_node_i = m.trk_hit_i ? it->second.node : 0;
    m.trk_reqid_i = m.trk_hit_i ? it->second.reqid : 0;
    m.trk_otag_i = m.trk_hit_i ? it->second.otag : 0;
    m.trk_psn_i = m.trk_hit_i ? it->second.psn : 0;
    m.trk_kind_i = m.trk_hit_i ? it->second.kind : 0;
    m.trk_page_i = m.trk_hit_i ? it->second.page : 0;
  }
  // After the cycle's last eval, before its clock edge: the lookup the DUT starts, the
  // ART_CTRL write it makes, the answer it took.
  void lookupsOut() {
    auto& m = dut->m;
    if (m.art_res_valid_i) artPipe.pop_front();
    if (m.art_look_valid_o) {
      EXPECT_FALSE(m.art_busy_i) << "a lookup during an update of the ART";
      artPipe.push_back({artNow + kArtLatency, m.art_addr_o});
      // The last ART_CTRL write before this TLP has taken effect (its done cycle is past).
      size_t f = fenceTlp.size();
      while (f > 0 && fenceTlp[f - 1] >= lookups) --f;
      if (f > 0)
        EXPECT_TRUE(f - 1 < fenceDone.size() && artNow > fenceDone[f - 1])
            << "TLP " << lookups << " looked up before the ART_CTRL write of TLP " << fenceTlp[f - 1] << " took effect";
      ++lookups;
    }
    if (m.csr_valid_o && m.csr_ready_i && m.csr_write_o && m.csr_addr_o >= 0x100 && m.csr_addr_o < 0x100 + 0x20 * kNumArt &&
        (m.csr_addr_o & 0x1F) == 0x1C) {
      artUpdAt = artNow + kArtUpdate;
      fenceDone.push_back(artUpdAt);
    }
    ++artNow;
  }

  // 900 random TLPs of every kind through the DUT, checked (runAll).
  void runRandomMix(double idle, double stall) {
    for (int i = 0; i < 900; ++i) addRandom();
    runAll(idle, stall);
  }

  // The host link's beat this cycle from src; whether there is one.
  bool offerBeat() {
    auto& m = dut->m;
    Beat b;
    const bool v = src.offer(&b);
    m.s_axis_tvalid = v;
    for (unsigned j = 0; j < kBpb; ++j) setField(m.s_axis_tdata, 8 * j, 8, v ? b.data[j] : 0);
    setField(m.s_axis_tkeep, 0, kBpb, b.keep);
    m.s_axis_tlast = b.last;
    return v;
  }

  // The cycle's outputs, with the ART's answers and the window's attributes they bring
  // (answerLookups evaluates in between).
  void evalWithArt() {
    dut->eval();
    answerLookups();
    dut->eval();
  }
  // The clock edge, after the cycle's outputs were read: the lookups out, the beat taken.
  void clockEdge(bool taken) {
    lookupsOut();
    cycle();
    if (taken) src.accepted();
  }
  void allOutputsReady() {
    auto& m = dut->m;
    m.req_hdr_ready_i = m.req_beat_ready_i = m.rsp_hdr_ready_i = m.rsp_beat_ready_i = 1;
    m.csr_ready_i = m.ur_ready_i = m.dma_cpl_tready = 1;
  }

  // Cycles the host link takes for n back-to-back writes of `bytes` each through
  // window 1 with every output ready, and the beats they are.
  // n writes of `bytes` through window 1, or to the NI's registers (not ART_CTRL).
  std::pair<uint64_t, uint64_t> writeStreamCycles(unsigned n, size_t bytes, bool registers = false) {
    auto& m = dut->m;
    uint64_t beats = 0, cycles = 0;
    for (unsigned i = 0; i < n; ++i) {
      const uint64_t a = registers ? kCsrBase + 0x040 + 4 * (i % 8) : addrIn(1, bytes);
      const Bytes b = encodeTlp(makeMWr(0, static_cast<uint8_t>(i), a, randomData(bytes)));
      beats += (b.size() + kBpb - 1) / kBpb;
      src.push(b);
    }
    allOutputsReady();
    for (; !src.empty() && cycles < 100000; ++cycles) {
      const bool v = offerBeat();
      evalWithArt();
      clockEdge(v && m.s_axis_tready);
    }
    return {cycles, beats};
  }

  // Cycles from an idle block taking a write's first beat to offering that beat to the
  // combiner, every output ready.
  uint64_t firstBeatLatency(size_t bytes) {
    auto& m = dut->m;
    src.push(encodeTlp(makeMWr(0, 1, addrIn(1, bytes), randomData(bytes))));
    allOutputsReady();
    uint64_t first = 0;
    bool started = false;
    for (uint64_t c = 0; c < 1000; ++c) {
      const bool v = offerBeat();
      evalWithArt();
      if (m.req_beat_valid_o) return c - first;
      const bool taken = v && m.s_axis_tready;
      if (taken && !started) {
        started = true;
        first = c;
      }
      clockEdge(taken);
    }
    return ~uint64_t{0};
  }

  // Collects one tunnel channel (header + beats).
  struct Channel {
    std::deque<Tunneled> got;
    Bytes cur;
    template <class B>
    void beat(const B& b, std::deque<Tunneled>* hdrs) {
      for (unsigned j = 0; j < kBpb; ++j)
        if (getField(b, 8 * kBpb + j, 1)) cur.push_back(static_cast<uint8_t>(getField(b, 8 * j, 8)));
      if (!getField(b, 9 * kBpb, 1)) return;
      ASSERT_FALSE(hdrs->empty()) << "beats without a header";
      Tunneled t = hdrs->front();
      hdrs->pop_front();
      t.tlp = cur;
      t.bad = getField(b, 9 * kBpb + 1, 1);
      got.push_back(t);
      cur.clear();
    }
  };

  void runAll(double idle, double stall) {
    src.setIdle(idle);
    auto& m = dut->m;
    std::deque<Tunneled> reqHdrs, rspHdrs;
    Channel reqCh, rspCh;
    std::vector<Csr> csrGot;
    std::vector<tb::OwnCpl> urGot;
    std::vector<std::pair<uint8_t, bool>> memConfGot;
    std::vector<uint64_t> backGot;
    std::vector<Ev> evGot;
    std::vector<std::pair<Bytes, bool>> dmaGot;  // completion, marked bad
    Bytes dmaCur;
    size_t released = 0;
    auto coin = [&] { return std::uniform_real_distribution<>(0, 1)(rng()) >= stall; };
    // Until the input is taken and the tunneled TLPs are out, then as many cycles as the
    // input queue and the lookups take to empty (what is decided there makes no tunnel TLP).
    uint64_t drain = 0;
    for (uint64_t c = 0; c < 400000 && drain < 64; ++c) {
      if (src.empty() && reqCh.got.size() == reqExpect.size() && rspCh.got.size() == rspExpect.size()) ++drain;
      const bool v = offerBeat();
      m.req_hdr_ready_i = coin();
      m.req_beat_ready_i = coin();
      m.rsp_hdr_ready_i = coin();
      m.rsp_beat_ready_i = coin();
      m.csr_ready_i = coin();
      m.ur_ready_i = coin();
      m.dma_cpl_tready = coin();
      evalWithArt();
      if (m.req_hdr_valid_o && m.req_hdr_ready_i) {
        const tb::TxDesc d = tb::unpackTxDesc(m.req_hdr_o);
        reqHdrs.push_back(Tunneled{tb::txDescHeader(d, kNode), {}, false});
        EXPECT_TRUE(d.kind == tb::TxKind::Req && !d.vc && d.stamp) << "a request on VC0, the framer's PSN";
        backGot.push_back(d.backPage);
      }
      if (m.rsp_hdr_valid_o && m.rsp_hdr_ready_i) {
        const tb::TxDesc d = tb::unpackTxDesc(m.rsp_hdr_o);
        rspHdrs.push_back(Tunneled{tb::txDescHeader(d, kNode), {}, false});
        EXPECT_TRUE(d.kind == tb::TxKind::Rsp && d.vc && !d.stamp) << "a response on VC1, its request's PSN";
      }
      // A completion's tracker entry is taken as it is decided (a response served, or
      // memory's confirmation of a write the NI confirmed).
      if (m.trk_release_o) {
        EXPECT_EQ(trk.count(m.trk_tag_o), 1u) << "release of a tag not held";
        trk.erase(m.trk_tag_o);
        ++released;
      }
      if (m.req_beat_valid_o && m.req_beat_ready_i) reqCh.beat(m.req_beat_o, &reqHdrs);
      if (m.rsp_beat_valid_o && m.rsp_beat_ready_i) rspCh.beat(m.rsp_beat_o, &rspHdrs);
      if (m.dma_cpl_tvalid && m.dma_cpl_tready) {
        for (unsigned j = 0; j < kBpb; ++j)
          if (getField(m.dma_cpl_tkeep, j, 1)) dmaCur.push_back(static_cast<uint8_t>(getField(m.dma_cpl_tdata, 8 * j, 8)));
        if (m.dma_cpl_tlast) dmaGot.push_back({std::move(dmaCur), bool(m.dma_cpl_tuser)}), dmaCur.clear();
      }
      if (m.csr_valid_o && m.csr_ready_i)
        csrGot.push_back(Csr{bool(m.csr_write_o), m.csr_addr_o, m.csr_wdata_o, m.csr_be_o, m.csr_reqid_o, m.csr_tag_o});
      if (m.ur_valid_o && m.ur_ready_i) urGot.push_back(tb::unpackOwnCpl(m.ur_o));
      if (m.mem_conf_valid_o) {
        memConfGot.push_back({m.mem_conf_tag_o, bool(m.mem_conf_ok_o)});
        EXPECT_TRUE(m.trk_release_o) << "memory's confirmation releases its tag";
      }
      if (m.ev_win_miss_o) evGot.push_back(Ev::WinMiss);
      if (m.ev_perm_o) evGot.push_back(Ev::Perm);
      if (m.ev_malformed_o) evGot.push_back(Ev::Malformed);
      if (m.ev_unsup_o) evGot.push_back(Ev::Unsup);
      if (m.ev_cpl_unexp_o) evGot.push_back(Ev::CplUnexp);
      if (m.amo_wr_valid_o) {
        AmoRecord r{static_cast<uint16_t>(m.amo_wr_lid_o), m.amo_wr_psn_o, Bytes(m.amo_wr_len_o)};
        for (size_t i = 0; i < r.tlp.size(); ++i) r.tlp[i] = static_cast<uint8_t>(getField(m.amo_wr_tlp_o, 8 * i, 8));
        amoGot.push_back(r);
      }
      clockEdge(v && m.s_axis_tready);
    }
    ASSERT_TRUE(src.empty()) << "input stuck, seed " << seed();
    ASSERT_EQ(reqCh.got.size(), reqExpect.size()) << "seed " << seed();
    for (size_t i = 0; i < reqExpect.size(); ++i) {
      EXPECT_EQ(reqCh.got[i].hdr, reqExpect[i].hdr) << "request header " << i << " seed " << seed();
      // A malformed TLP leaves as long as its Length says: cut there, or padded up to it
      // (the lanes after its last byte are not defined).
      const Tunneled& want = reqExpect[i];
      const Bytes& got = reqCh.got[i].tlp;
      EXPECT_EQ(got.size(), want.length) << "request TLP length " << i;
      const size_t same = std::min(want.tlp.size(), want.length);
      EXPECT_TRUE(got.size() >= same && std::equal(want.tlp.begin(), want.tlp.begin() + long(same), got.begin()))
          << "request TLP " << i;
      EXPECT_EQ(reqCh.got[i].bad, reqExpect[i].bad) << "request stomp flag " << i;
    }
    ASSERT_EQ(rspCh.got.size(), rspExpect.size());
    for (size_t i = 0; i < rspExpect.size(); ++i) {
      EXPECT_EQ(rspCh.got[i].hdr, rspExpect[i].hdr) << "response header " << i << " seed " << seed();
      EXPECT_EQ(rspCh.got[i].tlp, rspExpect[i].tlp) << "response TLP " << i;
      EXPECT_FALSE(rspCh.got[i].bad);
    }
    // The DMA engine's completions, in order, each as long as its Length (a malformed
    // one cut or padded, the lanes after its bytes not defined) and marked bad if malformed.
    ASSERT_EQ(dmaGot.size(), dmaExpect.size()) << "seed " << seed();
    for (size_t i = 0; i < dmaExpect.size(); ++i) {
      const Tunneled& want = dmaExpect[i];
      const Bytes& got = dmaGot[i].first;
      EXPECT_EQ(got.size(), want.length) << "DMA completion length " << i << " seed " << seed();
      const size_t same = std::min(want.tlp.size(), want.length);
      EXPECT_TRUE(got.size() >= same && std::equal(want.tlp.begin(), want.tlp.begin() + long(same), got.begin()))
          << "DMA completion " << i << " seed " << seed();
      EXPECT_EQ(dmaGot[i].second, want.bad) << "DMA completion stomp flag " << i << " seed " << seed();
    }
    ASSERT_EQ(csrGot.size(), csrExpect.size());
    for (size_t i = 0; i < csrExpect.size(); ++i) EXPECT_TRUE(csrGot[i] == csrExpect[i]) << "CSR access " << i;
    ASSERT_EQ(urGot.size(), urExpect.size());
    for (size_t i = 0; i < urExpect.size(); ++i)
      EXPECT_TRUE(urGot[i] == urExpect[i]) << "own completion " << i << ": got kind " << int(urGot[i].kind) << " status "
                                           << int(urGot[i].status) << " addr " << std::hex << urGot[i].addr << " want "
                                           << urExpect[i].addr << std::dec << " seed " << seed();
    EXPECT_EQ(memConfGot, memConfExpect) << "confirmations of NI-confirmed writes, seed " << seed();
    EXPECT_EQ(backGot, backExpect) << "translation of each request, for its confirmation";
    EXPECT_GT(memConfExpect.size(), 3u);
    EXPECT_EQ(released, rspExpect.size() + memConfExpect.size()) << "one tracker release per completion served";
    EXPECT_EQ(evGot, evExpect) << "events in TLP order, seed " << seed();
    ASSERT_EQ(amoGot.size(), amoExpect.size()) << "one record per atomic's completion, seed " << seed();
    for (size_t i = 0; i < amoExpect.size(); ++i) EXPECT_TRUE(amoGot[i] == amoExpect[i]) << "atomic record " << i;
    EXPECT_GT(amoExpect.size(), 5u);
    // The mix must have reached every channel.
    EXPECT_GT(reqExpect.size(), 100u);
    EXPECT_GT(rspExpect.size(), 20u);
    EXPECT_GT(csrExpect.size(), 20u);
    EXPECT_GT(urExpect.size(), 40u);
    std::printf("requests %zu, responses %zu, CSR %zu, UR %zu, events %zu\n", reqExpect.size(), rspExpect.size(),
                csrExpect.size(), urExpect.size(), evExpect.size());
  }

  std::unique_ptr<tb::VlClocked<M>> dut;
  RefNi ref;
  std::map<uint8_t, TrkEntry> trk, genAvail;  // tracker as the DUT sees it; tags not yet completed
  tb::AxisSource src{kBpb, &rng()};
  std::deque<Tunneled> reqExpect, rspExpect;
  std::vector<Csr> csrExpect;
  std::vector<tb::OwnCpl> urExpect;
  std::vector<std::pair<uint8_t, bool>> memConfExpect;  // memory's answers to NI-confirmed writes: tag, SC
  std::vector<uint64_t> backExpect;
  std::vector<Ev> evExpect;
  std::vector<Tunneled> dmaExpect;  // completions of the DMA engine's reads (no header record)
  std::vector<AmoRecord> amoExpect, amoGot;
};

class HostRxTest : public HostRxFixture<Vni_host_rx, 8> {};
// At 128 bits a whole request header is one beat, and a read or a register read is
// a whole TLP in it: each must still be issued once, after its lookup's answer.
class HostRx128Test : public HostRxFixture<Vni_host_rx128, 16> {};

TEST_F(HostRxTest, EveryKindOfTlpGetsItsOutcomeUnderStalls) { runRandomMix(0.2, 0.3); }

TEST_F(HostRxTest, EveryKindOfTlpGetsItsOutcomeBackToBack) { runRandomMix(0.0, 0.0); }

TEST_F(HostRx128Test, EveryKindOfTlpGetsItsOutcomeUnderStalls) { runRandomMix(0.2, 0.3); }

TEST_F(HostRx128Test, EveryKindOfTlpGetsItsOutcomeBackToBack) { runRandomMix(0.0, 0.0); }

// An idle block passes a write's first beat on after its pipeline's depth: the header
// beat a cycle after the first (64 bits), the lookup register (1), the ART
// (kArtLatency; the header is decoded meanwhile), the answer's skid register (1), the
// decisions' queue (1) and the output queue (1). Part of the encapsulation budget
// (bench_nic).
TEST_F(HostRxTest, IdleBlockPassesAFirstBeatAfterItsPipelineDepth) {
  const uint64_t lat = firstBeatLatency(64);
  std::printf("first beat latency %llu cycles\n", (unsigned long long)lat);
  EXPECT_EQ(lat, 1 + 1 + kArtLatency + 1 + 1 + 1);
}

// A register write may change what the decisions after it read (a window's
// attributes are the register block's): a write right behind it through the window is
// decided after the register write is made, and leaves confirmed as that write set.
TEST_F(HostRxTest, ADecisionAfterARegisterWriteSeesItsEffect) {
  auto& m = dut->m;
  confAllByRegister = true;
  src.push(encodeTlp(makeMWr(0, 2, kCsrBase + 0x040, randomData(4))));
  src.push(encodeTlp(makeMWr(0, 3, addrIn(1, 8), randomData(8))));
  allOutputsReady();
  int typeByte = -1;
  bool made = false;
  for (uint64_t c = 0; c < 200 && typeByte < 0; ++c) {
    const bool v = offerBeat();
    evalWithArt();
    if (m.req_beat_valid_o) typeByte = static_cast<int>(getField(m.req_beat_o, 0, 8));
    made = made || (m.csr_valid_o && m.csr_ready_i && m.csr_write_o);
    clockEdge(v && m.s_axis_tready);
    confAllSet = made;  // the register block applies the write at this edge
  }
  EXPECT_TRUE(made) << "the register write was not made";
  EXPECT_EQ(typeByte, 0x7B) << "the write was decided before the register write that confirms it (0x60: MWr)";
}

// Back-to-back writes, short and long: the host link takes a beat every cycle (the
// input queue hides the ART's latency).
TEST_F(HostRxTest, BackToBackWritesTakeABeatEveryCycle) {
  for (size_t bytes : {8, 256}) {
    const auto [cycles, beats] = writeStreamCycles(40, bytes);
    EXPECT_EQ(cycles, beats) << bytes << "-byte writes";
  }
}

// Register writes back to back: each waits for none before it (only a request's
// decision reads what a register write changes), so the host link takes a beat every
// cycle.
TEST_F(HostRxTest, BackToBackRegisterWritesTakeABeatEveryCycle) {
  const auto [cycles, beats] = writeStreamCycles(40, 4, true);
  EXPECT_EQ(cycles, beats);
}


}  // namespace

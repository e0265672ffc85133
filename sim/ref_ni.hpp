// SPDX-License-Identifier: Apache-2.0
// Transaction-level reference of the NI, used by scoreboards: which window a
// host request hits and where it lands at the receiver, and the exact fabric
// packet the NI must send for it.
#pragma once
#include <array>
#include <cstdint>

#include "address_map.hpp"
#include "fabric_pkt.hpp"
#include "tlp.hpp"

namespace ni {

// Where a confirmed write is confirmed (ART_CTRL.conf_at, docs/architecture.md#confirmed-writes).
enum class ConfAt : uint8_t { SenderNi = 0, ReceiverNi = 1, Memory = 2 };

// One ART window as the driver sees it.
struct Window {
  uint64_t base = 0, size = 0;  // local, 4 KiB granular, inside the NI aperture
  unsigned dstNode = 0;
  uint16_t mcastLid = 0;        // nonzero: the window sends to this multicast group instead (writes only)
  bool rxXlate = true;          // receiver translates memid + offset; else sender translates to remote
  uint64_t remote = 0;          // sender-side translation: remote address of base
  uint16_t memid = 0;           // receiver-side translation
  bool read = true, write = true, atomic = false;
  bool combine = false;         // write combining (ART_CTRL.wc)
  bool confirmAll = false;      // every write is a confirmed write (ART_CTRL.conf_all)
  ConfAt confAt = ConfAt::SenderNi;
};

struct MemRegion {
  bool valid = false;
  uint64_t base = 0, size = 0;
  bool read = false, write = false, atomic = false;
  uint16_t key = 0;  // protection key: a request must carry it (0: none)
};

// What a request does to the target memory: the permission it needs.
enum class MemOp { Read, Write, Atomic };
inline MemOp memOpOf(const Tlp& t) {
  return t.kind == TlpKind::MRd ? MemOp::Read : isAtomic(t.kind) ? MemOp::Atomic : MemOp::Write;
}
// Bytes a request touches at its target (a CAS carries two operands, touches one).
inline size_t accessBytes(const Tlp& t) {
  if (t.kind == TlpKind::MRd) return (t.lengthDw == 0 ? 1024u : t.lengthDw) * 4u;
  if (t.kind == TlpKind::Cas) return t.data.size() / 2;
  return t.data.size();
}

class RefNi {
 public:
  enum class SendErr { Ok, Miss, Perm, Malformed, Unsupported };
  struct Route {
    SendErr err = SendErr::Miss;
    unsigned window = 0;
    unsigned dstNode = 0;
    uint16_t dlid = 0;     // the node's LID, or the window's multicast LID
    uint64_t tlpAddr = 0;  // address carried in the tunneled TLP
    uint16_t memid = 0;
    bool rxXlate = false;
    bool confirmed = false;  // a confirmed write (DMWr, or a write through a conf_all window)
    ConfAt confAt = ConfAt::SenderNi;
  };
  enum class RecvErr { Ok, MemId, Bounds, Key };
  struct Landing {
    RecvErr err = RecvErr::MemId;
    uint64_t addr = 0;
  };

  std::array<Window, kNumArt> windows{};
  std::array<bool, kNumArt> windowValid{};
  std::array<MemRegion, kNumMemId> regions{};
  size_t maxPayload = kMaxPayload;  // the NI's MaxPayload

  void setWindow(unsigned i, const Window& w) { windows[i] = w; windowValid[i] = true; }
  void clearWindow(unsigned i) { windowValid[i] = false; }

  // Sender side: the lowest-numbered valid window holding addr wins.
  Route route(uint64_t addr, size_t len, bool write) const {
    return route(addr, len, write ? MemOp::Write : MemOp::Read);
  }
  Route route(const Tlp& t) const {
    Route r = route(t.addr, accessBytes(t), memOpOf(t));
    if (r.err == SendErr::Miss) return r;
    const Window& w = windows[r.window];
    if (t.kind == TlpKind::DMWr && w.mcastLid && r.err == SendErr::Ok) r.err = SendErr::Unsupported;
    r.confirmed = t.kind == TlpKind::DMWr || (t.kind == TlpKind::MWr && w.confirmAll && !w.mcastLid);
    r.confAt = w.confAt;
    return r;
  }
  Route route(uint64_t addr, size_t len, MemOp acc) const {
    Route r;
    if (len > maxPayload || (addr & 0xFFF) + len > 4096) { r.err = SendErr::Malformed; return r; }
    for (unsigned i = 0; i < kNumArt; ++i) {
      if (!windowValid[i]) continue;
      const Window& w = windows[i];
      const uint64_t page = addr >> 12, base = w.base >> 12, limit = (w.base + w.size) >> 12;
      if (page < base || page >= limit) continue;
      r.window = i;
      r.dstNode = w.dstNode;
      r.dlid = w.mcastLid ? w.mcastLid : lidOf(w.dstNode);
      r.rxXlate = w.rxXlate;
      r.memid = w.memid;
      const uint64_t offPages = page - base;
      r.tlpAddr = ((w.rxXlate ? 0 : (w.remote >> 12)) + offPages) << 12 | (addr & 0xFFF);
      const bool allowed = acc == MemOp::Read ? w.read : acc == MemOp::Write ? w.write : w.atomic;
      r.err = !allowed ? SendErr::Perm : (w.mcastLid && acc != MemOp::Write) ? SendErr::Unsupported : SendErr::Ok;
      return r;
    }
    return r;
  }

  // Receiver side, for a packet that reached this NI.
  Landing land(bool rxXlate, uint16_t memid, uint64_t tlpAddr, size_t len, bool write) const {
    return land(rxXlate, memid, tlpAddr, len, write ? MemOp::Write : MemOp::Read);
  }
  // `key`: the protection key the request carries (TEH; a continuation carries none).
  Landing land(bool rxXlate, uint16_t memid, uint64_t tlpAddr, size_t len, MemOp acc, uint16_t key = 0) const {
    // Either translation lands only inside the named memory ID's region: receiver
    // translation carries an offset into it, sender translation a physical address in it.
    Landing l;
    if (memid >= kNumMemId) return l;
    const MemRegion& m = regions[memid];
    const bool allowed = acc == MemOp::Read ? m.read : acc == MemOp::Write ? m.write : m.atomic;
    if (!m.valid || !allowed) return l;
    if (m.key && key != m.key) { l.err = RecvErr::Key; return l; }
    const uint64_t basePage = m.base >> 12, page = tlpAddr >> 12;
    const uint64_t offPage = rxXlate ? page : page - basePage;  // below the region: wraps past its size
    if (offPage >= (m.size >> 12) || (tlpAddr & 0xFFF) + len > 4096) { l.err = RecvErr::Bounds; return l; }
    l.err = RecvErr::Ok;
    l.addr = rxXlate ? ((basePage + page) << 12 | (tlpAddr & 0xFFF)) : tlpAddr;
    return l;
  }

  // The fabric packet for a host request that routes Ok (golden encapsulation).
  static FabricPacket encapsulate(const Tlp& t, const Route& r, uint16_t slid, uint32_t psn) {
    FabricPacket p = request(r, slid, psn, kOpTunnelReq);
    p.tehFlags = r.rxXlate ? kTehRxXlate : 0;
    p.memid = r.memid;  // ART_DEST.memid travels in every tunnel packet
    Tlp inner = t;
    inner.addr = r.tlpAddr;
    // A confirmed write the sending NI confirms travels as an MWr; else as a DMWr
    // with its confirmation point.
    if (r.confirmed) {
      inner.kind = r.confAt == ConfAt::SenderNi ? TlpKind::MWr : TlpKind::DMWr;
      if (r.confAt == ConfAt::ReceiverNi) p.tehFlags |= kTehConfNi;
      if (r.confAt == ConfAt::Memory) p.tehFlags |= kTehConfMem;
    }
    p.payload = encodeTlp(inner);
    return p;
  }
  // A combined write that continues the previous packet to its destination: only
  // its data travels (docs/formats.md, continuation).
  static FabricPacket continuation(const Tlp& t, const Route& r, uint16_t slid, uint32_t psn) {
    FabricPacket p = request(r, slid, psn, kOpTunnelCont);
    p.payload = t.data;
    return p;
  }

 private:
  // A request packet's addressing: VC0, the route's destination, the source's PSN.
  static FabricPacket request(const Route& r, uint16_t slid, uint32_t psn, uint8_t opcode) {
    FabricPacket p;
    p.vl = p.sl = 0;
    p.dlid = r.dlid;
    p.slid = slid;
    p.opcode = opcode;
    p.psn = psn;
    return p;
  }
};

// Golden write combiner (docs/architecture.md, "Write combining"): takes the host
// requests that route Ok, in host order, and gives the TLPs the NI tunnels. There is
// at most one open packet; anything that does not continue it sends it first. A
// combined packet that starts where the combined packet sent just before it ended,
// with the same destination, memory ID and translation, is a continuation (unicast
// only; the sending NI sends it whole after a resync, which this model leaves out).
class RefCombiner {
 public:
  struct Sent {
    Tlp tlp;
    RefNi::Route route;
    bool cont = false;
    // The fabric packet the NI sends for it: whole, or as a continuation.
    FabricPacket packet(uint16_t slid, uint32_t psn) const {
      return cont ? RefNi::continuation(tlp, route, slid, psn) : RefNi::encapsulate(tlp, route, slid, psn);
    }
  };
  explicit RefCombiner(size_t maxPayload) : max_(maxPayload) {}

  static bool combinable(const Tlp& t, bool windowCombines) {
    return windowCombines && t.kind == TlpKind::MWr && t.firstBe == 0xF &&
           (t.lengthDw == 1 ? t.lastBe == 0 : t.lastBe == 0xF);
  }
  void request(const Tlp& t, const RefNi::Route& r, bool windowCombines) {
    const bool wc = combinable(t, windowCombines);
    const bool append = open_ && wc && r.window == cur_.route.window && r.dlid == cur_.route.dlid &&
                        r.memid == cur_.route.memid && r.rxXlate == cur_.route.rxXlate && r.tlpAddr == next_ &&
                        cur_.tlp.data.size() + t.data.size() <= max_;
    if (open_ && !append) flush();
    if (append) {
      cur_.tlp.data.insert(cur_.tlp.data.end(), t.data.begin(), t.data.end());
      cur_.tlp.lengthDw = static_cast<uint16_t>(cur_.tlp.data.size() / 4);
      cur_.tlp.lastBe = 0xF;
      ++merged;
    } else if (wc && t.data.size() < max_ && ((r.tlpAddr + t.data.size()) & 0xFFF) != 0) {
      const bool cont = chain_ && r.dlid == cur_.route.dlid && r.memid == cur_.route.memid &&
                        r.rxXlate == cur_.route.rxXlate && r.tlpAddr == next_;
      open_ = true;
      cur_ = Sent{t, r, cont};
      cur_.tlp.addr = r.tlpAddr;
      next_ = r.tlpAddr;
    } else {
      Sent s{t, r};
      s.tlp.addr = r.tlpAddr;
      sent.push_back(s);
      chain_ = false;
      return;
    }
    next_ += t.data.size();
    if (cur_.tlp.data.size() >= max_ || (next_ & 0xFFF) == 0) flush();
  }
  void flush() {
    if (open_) {
      sent.push_back(cur_);
      chain_ = cur_.route.dlid < 0xC000;
    }
    open_ = false;
  }

  std::vector<Sent> sent;
  unsigned merged = 0;

 private:
  size_t max_;
  bool open_ = false;
  bool chain_ = false;  // the last packet sent was combined, to a unicast LID
  Sent cur_;
  uint64_t next_ = 0;
};

}  // namespace ni

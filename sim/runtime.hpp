// SPDX-License-Identifier: Apache-2.0
// Messaging runtime of one node on the NI's DMA engine (what the node's CPU runs):
// tag-matched sends and receives, eager or by rendezvous as the NI selects by length
// (RNDV_THRESHOLD; the rendezvous by remote get of sim/rget.hpp), one-sided put and
// get, keyed eager buffers. Each operation is one CPU action: descriptors written into
// host memory and one doorbell. The memory layout is the same at every node
// (RuntimeLayout). Design: docs/architecture.md#messaging-runtime.
#pragma once
#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <vector>

#include "dma.hpp"
#include "driver.hpp"
#include "rget.hpp"
#include "system.hpp"

namespace ni {

// Where the runtime keeps its rings, buffers and areas in each node's memory, and the
// memory IDs and FIFOs it uses. Messages are numbered by a slot: slot k's buffers and
// areas are at k times the stride.
struct RuntimeLayout {
  uint64_t sendBuf = 0x2000'0000, recvBuf = 0x4000'0000, bufBytes = 0x800'0000, bufStride = 0x40'0000;
  uint64_t scratch = 0x5000'0000, scratchBytes = 0x4'0000, scratchStride = 0x1000;  // 64 slots a message
  uint64_t descArea = 0x5100'0000, descBytes = 0x20'0000, descStride = 0x2000;      // 64 portions a message
  uint64_t doneArea = 0x5200'0000, stage = 0x5300'0000, stageStride = 0x1000;
  uint64_t ring = 0x1000'0000, remRing = 0x1001'0000, ctrlRing = 0x1100'0000;
  uint16_t recvMid = 1, scratchMid = 4, sendMid = 5, descMid = 6, doneMid = 7;
  unsigned swFifo = 0, remFifo = 7, ctrlFifo = 0, eagerFifo = 1;
  uint64_t eagerRing = 0x1200'0000;
  uint16_t eagerSlots = 256;
  uint32_t eagerMax = 4096;      // largest eager message (inline in the injection FIFO)
  uint16_t ringSlots = 256, remSlots = 64, ctrlSlots = 64;
  // Rendezvous portion: each costs the origin's engine two memory round trips (the
  // remote get of the next descriptors, the portion's first data read); grown when a
  // message would need more portions than the origin's scratch slots.
  uint32_t portion = 256 * 1024;
  uint32_t rndvThreshold = 4096;  // RNDV_THRESHOLD: longer sends go by rendezvous
  uint32_t inlineMax = 256;       // sends up to this long are copied inline into the ring
  // A send, or a receive that has matched its message, whose DMA counter has not moved
  // for this many cycles has failed (its peer is gone: link cut, node down).
  uint64_t stallCycles = 2'000'000;
  // Buffer provisioning (seed 002): buffers for messages larger than the eager buffers
  // come from this heap, each under a memory ID and a counter of these pools.
  uint64_t provHeap = 0x6000'0000, provBytes = 0x100'0000;
  uint16_t provMidFirst = 8, provMids = 4;
  unsigned provCntFirst = 24;
  unsigned rail = 0;  // the node's NI this runtime drives

  // The layout of the runtime on NI `r` of a node with several (rails): the same send
  // and receive buffers, its own rings, areas and heap.
  RuntimeLayout onRail(unsigned r) const {
    RuntimeLayout l = *this;
    l.rail = r;
    for (uint64_t* a : {&l.ring, &l.remRing, &l.ctrlRing, &l.eagerRing}) *a += r * uint64_t{0x400'0000};
    for (uint64_t* a : {&l.scratch, &l.descArea, &l.doneArea, &l.stage}) *a += r * uint64_t{0x20'0000};
    l.provHeap += r * l.provBytes;
    return l;
  }
};

class Runtime {
 public:
  enum class Status { Pending, Done, Refused, Truncated, Failed };
  // Sets up node n's memory IDs, its doorbell-fed and remote-fed injection FIFOs, its
  // control and eager reception FIFOs (the eager one unkeyed until openEager) and the
  // protocol threshold. `csr` is how the node's CPU writes registers.
  Runtime(System& sys, unsigned n, driver::CsrWrite csr, const RuntimeLayout& l = {})
      : sys_(sys), n_(n), csr_(std::move(csr)), l_(l), ring_(l.ring, l.ringSlots),
        ctrl_(l.ctrlRing, l.ctrlSlots, sys.config().maxPayload),
        eager_(l.eagerRing, l.eagerSlots, sys.config().maxPayload) {
    const driver::CsrWrite wr = sys.csrWriter(n, l.rail);
    sys.setMemId(n, l.recvMid, MemRegion{true, l.recvBuf, l.bufBytes, false, true}, l.rail);
    sys.setMemId(n, l.scratchMid, MemRegion{true, l.scratch, l.scratchBytes, true, true}, l.rail);
    sys.setMemId(n, l.sendMid, MemRegion{true, l.sendBuf, l.bufBytes, true, false}, l.rail);
    sys.setMemId(n, l.descMid, MemRegion{true, l.descArea, l.descBytes, true, false}, l.rail);
    sys.setMemId(n, l.doneMid, MemRegion{true, l.doneArea, 0x1000, false, true}, l.rail);
    driver::setInjFifo(wr, l.swFifo, l.ring, l.ringSlots);
    driver::setInjFifo(wr, l.remFifo, l.remRing, l.remSlots, true);
    driver::setRcvFifo(wr, l.ctrlFifo, l.ctrlRing, l.ctrlSlots);
    driver::setRcvFifo(wr, l.eagerFifo, l.eagerRing, l.eagerSlots);
    wr(regs::RNDV_THRESHOLD, l.rndvThreshold);
  }
  const RuntimeLayout& layout() const { return l_; }
  Memory& memory() { return sys_.node(n_).memory(); }
  uint64_t sendAddr(uint64_t slot) const { return l_.sendBuf + slot * l_.bufStride; }
  uint64_t recvAddr(uint64_t slot) const { return l_.recvBuf + slot * l_.bufStride; }

  // ---------------------------------------------------------------- send, receive
  // Sends the `len` bytes at sendAddr(slot) to node `to` with `tag`: one descriptor whose
  // source is named by memory ID. The NI sends it eagerly (into `to`'s eager FIFO with
  // its key) or, above the threshold, sends an RTS and the target fetches it. Either
  // way DMA counter `cnt` reaches zero when the data has left: the buffer is free. A
  // message of at most inlineMax bytes is copied into the ring behind its descriptor
  // (always eager), which saves the engine a memory round trip.
  unsigned isend(unsigned to, uint32_t tag, uint64_t slot, uint32_t len, unsigned cnt) {
    RtsMessage r;
    r.tag = tag;
    r.len = len;
    r.originFifo = static_cast<uint8_t>(l_.remFifo);
    r.countInj = true;
    r.injCnt = static_cast<uint8_t>(cnt);
    r.srcMid = l_.sendMid;
    r.srcOff = slot * l_.bufStride;
    r.scratchMid = l_.scratchMid;
    r.scratchOff = slot * l_.scratchStride;
    r.scratchSlots = static_cast<uint16_t>(l_.scratchStride / kDescBytes);
    r.doneMid = l_.doneMid;
    r.doneOff = slot * kDescBytes;
    const EagerAnnounce& e = eagerOf(to);
    DmaDescriptor d = r.descriptor(lidOf(to), e.fifo, e.key);
    Bytes data;
    if (len <= l_.inlineMax) {
      d.flags = kDescInline | kDescInjCnt;
      data = memory().read(sendAddr(slot), len);
    }
    driver::loadCounter(csr_, cnt, len);
    post({{d, data}});
    sends_.push_back(Send{to, tag, cnt, Status::Pending});
    sends_.back().watch.since = sys_.cycle();
    return static_cast<unsigned>(sends_.size() - 1);
  }
  // Done when its data has left; Refused when the target could not place it; Failed
  // when it stalled for stallCycles (a provisioned one: from its request on).
  Status sendStatus(unsigned id) {
    progress();
    Send& s = sends_.at(id);
    if (s.st == Status::Pending && s.counting && counterZero(s.cnt)) s.st = Status::Done;
    else if (s.st == Status::Pending && stalled(s.watch, s.counting ? std::optional<unsigned>(s.cnt) : std::nullopt))
      s.st = Status::Failed;
    return s.st;
  }

  // Posts a receive of a message from node `from` (any if empty) with `tag` (any if
  // empty) into recvAddr(slot), at most maxLen bytes; DMA counter `cnt` counts a
  // rendezvous' data landing. Messages match posted receives in the order both came.
  unsigned irecv(std::optional<unsigned> from, std::optional<uint32_t> tag, uint64_t slot, uint32_t maxLen,
                 unsigned cnt) {
    recvs_.push_back(Recv{from, tag, slot, maxLen, cnt});
    posted_.push_back(static_cast<unsigned>(recvs_.size() - 1));
    progress();
    return static_cast<unsigned>(recvs_.size() - 1);
  }
  struct Received {
    unsigned from = 0;
    uint32_t tag = 0, len = 0;
    bool rendezvous = false;
    uint32_t portions = 0;  // of a rendezvous
  };
  // Done when the message is in the buffer; Truncated when it was longer than the
  // buffer (a rendezvous one is refused: its origin is told and nothing moves); Failed
  // when a rendezvous stalled for stallCycles after its receive post (its origin gone).
  // A failed receive's buffer may be used again once its origin cannot come back.
  Status recvStatus(unsigned id) {
    progress();
    Recv& r = recvs_.at(id);
    if (r.st == Status::Pending && r.matched && counterZero(r.cnt)) r.st = Status::Done;
    else if (r.st == Status::Pending && r.matched && stalled(r.watch, r.cnt)) r.st = Status::Failed;
    return r.st;
  }
  // Whether a message has matched the receive (a rendezvous: its receive post is made).
  bool matched(unsigned id) {
    progress();
    return recvs_.at(id).matched;
  }
  const Received& received(unsigned id) const { return recvs_.at(id).msg; }

  // Takes what has arrived (control messages, eager messages, RTS) and matches it.
  void progress() {
    pollControl();
    pollEager();
    pollProvisions();
    for (auto it = unexpected_.begin(); it != unexpected_.end();) {
      auto p = std::find_if(posted_.begin(), posted_.end(), [&](unsigned id) { return matches(recvs_[id], *it); });
      if (p == posted_.end()) {
        ++it;
        continue;
      }
      start(recvs_[*p], *it);
      posted_.erase(p);
      it = unexpected_.erase(it);
    }
  }
  // RTS refused on arrival: longer than any receive buffer (bufStride).
  unsigned refusedOnArrival() const { return refusedOnArrival_; }

  // ---------------------------------------------------------------- provisioning
  // A send of a gather list (pieces of this node's send buffers, each a multiple of 64
  // bytes but the last). When the message, or one of its pieces, is larger than the
  // peer's eager buffers the sender asks the peer to provision a buffer for it (a
  // control message); the peer allocates and registers one (a memory ID with a key,
  // a counter loaded with the length) and acknowledges with them; the sender then puts
  // the pieces into it (one doorbell), and the peer, seeing its counter at zero, copies
  // the message out as an arrival, unregisters the buffer and frees it. A peer that
  // cannot (no memory ID or heap space left) refuses: the send ends Refused. A message
  // that fits the eager buffers is packed into one inline eager send.
  struct Piece {
    uint64_t srcOff = 0;  // offset in the send buffers (memory ID sendMid), 64-byte aligned
    uint32_t len = 0;
  };
  unsigned isendv(unsigned to, uint32_t tag, const std::vector<Piece>& pieces, unsigned cnt) {
    uint32_t total = 0;
    bool large = false;
    const EagerAnnounce& e = eagerOf(to);
    for (size_t i = 0; i < pieces.size(); ++i) {
      const Piece& p = pieces[i];
      if (p.srcOff % 64 || p.len == 0 || p.len % 4 || (i + 1 < pieces.size() && p.len % 64))
        throw std::invalid_argument("runtime: a piece must start 64-byte aligned and, but the last, fill whole 64 bytes");
      total += p.len;
      large = large || p.len > e.maxBytes;
    }
    sends_.push_back(Send{to, tag, cnt, Status::Pending});
    Send& s = sends_.back();
    s.watch.since = sys_.cycle();
    if (large || total > e.maxBytes) {
      s.pieces = pieces;
      s.len = total;
      s.counting = false;  // counted from the puts on
      sendControl(to, ProvisionRequest{lidOf(n_), tag, total}.encode(), tag);
    } else {
      Bytes data;
      for (const Piece& p : pieces) {
        const Bytes b = memory().read(l_.sendBuf + p.srcOff, p.len);
        data.insert(data.end(), b.begin(), b.end());
      }
      postInlineSend(to, e.fifo, e.key, tag, data, cnt);
    }
    return static_cast<unsigned>(sends_.size() - 1);
  }
  // Provisioning requests this node refused, and buffers it has provisioned now.
  unsigned provisionsRefused() const { return provRefused_; }
  size_t provisionsOpen() const { return provisions_.size(); }

  // ---------------------------------------------------------------- one-sided
  // Puts `len` bytes from this node's send buffers (offset srcOff) into node `to`'s
  // memory ID `mid` at `dst` with `key`; `cnt` counts them leaving, the target's
  // counter `rcvCnt` (if given) landing.
  void put(unsigned to, uint64_t srcOff, uint16_t mid, uint64_t dst, uint32_t len, unsigned cnt,
           std::optional<unsigned> rcvCnt = {}, uint16_t key = 0) {
    DmaDescriptor d = putFromMid(lidOf(to), mid, dst, l_.sendMid, srcOff, len);
    d.flags |= kDescInjCnt | (rcvCnt ? kDescRcvCnt : 0);
    d.injCnt = static_cast<uint8_t>(cnt);
    d.rcvCnt = static_cast<uint8_t>(rcvCnt.value_or(0));
    d.key = key;
    driver::loadCounter(csr_, cnt, len);
    post({{d, {}}});
  }
  // Gets `len` bytes of node `from`'s memory ID `mid` (readable there) at `off` into this
  // node's receive buffers at offset dstOff; counter `cnt` reaches zero when they are
  // in. One remote get carrying the put that node's engine runs.
  void get(unsigned from, uint16_t mid, uint64_t off, uint64_t dstOff, uint32_t len, unsigned cnt) {
    DmaDescriptor p = putFromMid(lidOf(n_), l_.recvMid, dstOff, mid, off, len);
    p.flags |= kDescRcvCnt;
    p.rcvCnt = static_cast<uint8_t>(cnt);
    driver::loadCounter(csr_, cnt, len);
    remoteGet(from, l_.remFifo, p);
  }
  // One remote get carrying descriptor `carried` (inline) into injection FIFO `fifo` of
  // node `to` (its remote-fed FIFO runs it; any other refuses it).
  void remoteGet(unsigned to, unsigned fifo, const DmaDescriptor& carried) {
    DmaDescriptor g;
    g.op = static_cast<uint8_t>(DmaOp::Rget);
    g.flags = kDescInline;
    g.dest = lidOf(to);
    g.qid = static_cast<uint16_t>(fifo);
    g.len = kDescBytes;
    post({{g, carried.encode()}});
  }
  bool counterZero(unsigned cnt) { return sys_.readCsr(n_, regs::CNT_ZERO, l_.rail) >> cnt & 1; }

  // Posts any message into the doorbell-fed FIFO, one doorbell (the caller's data:
  // inline when d says so, else already at d.src). INJ_HEAD is read only when the ring
  // looks full by the head last read (a register read is a host-link round trip).
  void post(const std::vector<std::pair<DmaDescriptor, Bytes>>& msgs) {
    auto write = [this](uint64_t a, const Bytes& b) { memory().write(a, b); };
    for (const auto& [d, data] : msgs) {
      if (ring_.post(d, data, head_, write)) continue;
      head_ = static_cast<uint16_t>(sys_.readCsr(n_, regs::INJ_HEAD(l_.swFifo), l_.rail));
      if (!ring_.post(d, data, head_, write)) throw std::runtime_error("runtime: injection FIFO full");
    }
    driver::ringDoorbell(csr_, l_.swFifo, ring_.tail());
  }

  // ---------------------------------------------------------------- eager buffers
  // The receiver keys its eager buffers (a reception FIFO) in its NI and announces FIFO
  // and key to the peers (seed 000 claims 13-14); a sender's eager messages and RTS
  // carry the key, which the receiving NI checks before it writes (a wrong key: refused,
  // KEY_ERR_CNT at the receiver, a NAK the sender counts). Until a peer announces, its
  // eager FIFO is the layout's, unkeyed.
  void openEager(uint16_t key, const std::vector<unsigned>& peers) {
    driver::setRcvFifo(csr_, l_.eagerFifo, l_.eagerRing, l_.eagerSlots, key);
    for (unsigned p : peers)
      sendControl(p, EagerAnnounce{lidOf(n_), static_cast<uint8_t>(l_.eagerFifo), key, l_.eagerMax}.encode(), 0);
  }
  // The peers' announced eager buffers, by node.
  std::map<unsigned, EagerAnnounce>& eagerPeers() {
    pollControl();
    return eagerPeers_;
  }
  // An eager send of `data` inline in the injection FIFO to node `to`; keyOverride
  // stands for a stale or forged key (tests).
  void eagerSend(unsigned to, uint32_t tag, const Bytes& data, std::optional<uint16_t> keyOverride = {}) {
    const EagerAnnounce& a = eagerOf(to);
    postInlineSend(to, a.fifo, keyOverride.value_or(a.key), tag, data);
  }

  // ---------------------------------------------------------------- errors
  // Errors other nodes reported about descriptors this node injected into them.
  std::deque<RemoteErrorMessage>& remoteErrors() {
    pollControl();
    return errors_;
  }

  // The remote-fed FIFO stopped on a descriptor another node injected (a source outside
  // this node's readable memory IDs, code 7; a descriptor it may not take, code 8): the
  // runtime tells the node the descriptor would have served, and resets the FIFO so
  // the other nodes' remote gets go on. Returns the code (0: the FIFO is running).
  DmaErr checkRemoteFifo() {
    const uint32_t st = sys_.readCsr(n_, regs::INJ_STATUS(l_.remFifo), l_.rail);
    if (!(st & regs::INJ_STATUS_ERR_MASK)) return DmaErr::None;
    const auto code = static_cast<DmaErr>((st & regs::INJ_STATUS_CODE_MASK) >> regs::INJ_STATUS_CODE_LSB);
    const uint16_t head = static_cast<uint16_t>(sys_.readCsr(n_, regs::INJ_HEAD(l_.remFifo), l_.rail));
    const DmaDescriptor d = DmaDescriptor::decode(memory().read(l_.remRing + uint64_t{head} * kDescBytes, kDescBytes).data());
    driver::resetInjFifo(csr_, l_.remFifo, true);
    if (d.dest != 0 && d.dest != lidOf(n_) && d.dest <= sys_.size()) {
      RemoteErrorMessage e{lidOf(n_), static_cast<uint8_t>(l_.remFifo), static_cast<uint8_t>(code), d.tag};
      sendControl(static_cast<unsigned>(d.dest - 1), e.encode(), e.tag);
    }
    return code;
  }

  // The receive post for an RTS: the message lands at recvAddr(slot); DMA counter
  // `rcvCnt` reaches zero when all of it is in memory. Returns the portions.
  uint32_t recvPost(const RtsMessage& rts, uint64_t slot, unsigned rcvCnt) {
    RndvTarget t;
    t.lid = lidOf(n_);
    t.fifo = static_cast<uint8_t>(l_.remFifo);
    t.recvMid = l_.recvMid;
    t.recvOff = slot * l_.bufStride;
    t.rcvCnt = static_cast<uint8_t>(rcvCnt);
    t.descMid = l_.descMid;
    t.descOff = slot * l_.descStride;
    t.portion = rndvPortion(rts.len, l_.portion, rts.scratchSlots);
    RndvPlan plan = planRendezvous(rts, t);
    memory().write(l_.descArea + t.descOff, plan.descArea);
    const uint64_t stage = l_.stage + slot * l_.stageStride;
    memory().write(stage, plan.scratch);
    plan.putScratch.src = stage;
    plan.rgetFirst.src = l_.descArea + t.descOff;
    driver::loadCounter(csr_, rcvCnt, rts.len);
    post({{plan.putScratch, {}}, {plan.rgetFirst, {}}});
    return plan.portions;
  }

 private:
  // How long a DMA counter has stood still.
  struct Watch {
    uint64_t since = 0;     // cycle of the last change seen (or of the start)
    uint32_t value = ~0u;   // the counter's value then
  };
  // Whether counter `cnt` (none: nothing that moves) has stood still for stallCycles.
  bool stalled(Watch& w, std::optional<unsigned> cnt) {
    const uint32_t v = cnt ? sys_.readCsr(n_, regs::CNT_VALUE(*cnt), l_.rail) : 0;
    if (cnt && v != w.value) {
      w = Watch{sys_.cycle(), v};
      return false;
    }
    return sys_.cycle() - w.since > l_.stallCycles;
  }
  struct Send {
    unsigned to;
    uint32_t tag;
    unsigned cnt;
    Status st;
    bool counting = true;       // counter cnt counts its data (a provisioned send: once put)
    std::vector<Piece> pieces;  // a provisioned send's, until the buffer is granted
    uint32_t len = 0;
    Watch watch;
  };
  // A buffer this node provisioned for a peer's message.
  struct Provision {
    unsigned from;
    uint32_t tag, len;
    uint16_t mid;
    unsigned cnt;
    uint64_t base, bytes;
  };
  struct Recv {
    std::optional<unsigned> from;
    std::optional<uint32_t> tag;
    uint64_t slot;
    uint32_t maxLen;
    unsigned cnt;
    Status st = Status::Pending;
    bool matched = false;
    Received msg;
    Watch watch;
  };
  // A message that has arrived: eager (its data) or an RTS.
  struct Incoming {
    Received msg;
    Bytes data;
    RtsMessage rts;
  };
  static bool matches(const Recv& r, const Incoming& m) {
    return (!r.from || *r.from == m.msg.from) && (!r.tag || *r.tag == m.msg.tag);
  }
  void start(Recv& r, const Incoming& m) {
    r.matched = true;
    r.msg = m.msg;
    if (m.msg.len > r.maxLen) {
      r.st = Status::Truncated;
      if (m.msg.rendezvous) refuse(m.rts);
    } else if (m.msg.rendezvous) {
      r.msg.portions = recvPost(m.rts, r.slot, r.cnt);
      r.watch.since = sys_.cycle();
    } else {
      memory().write(recvAddr(r.slot), m.data);
      r.st = Status::Done;
    }
  }
  // Tells the origin of an RTS that its message will not be fetched.
  void refuse(const RtsMessage& rts) {
    sendControl(rts.originLid - 1u, RtsRefusedMessage{lidOf(n_), rts.tag, rts.len}.encode(), rts.tag);
  }
  const EagerAnnounce& eagerOf(unsigned to) {
    auto it = eagerPeers().find(to);
    if (it != eagerPeers_.end()) return it->second;
    return eagerPeers_[to] = EagerAnnounce{lidOf(to), static_cast<uint8_t>(l_.eagerFifo), 0, l_.eagerMax};
  }
  // A 64-byte control message into node `to`'s control FIFO.
  void sendControl(unsigned to, const Bytes& payload, uint32_t tag) {
    postInlineSend(to, static_cast<uint16_t>(l_.ctrlFifo), 0, tag, payload);
  }
  // A send of `data` inline in the ring into reception FIFO `fifo` of node `to` with
  // `key`; counter `cnt`, if given, counts it leaving.
  void postInlineSend(unsigned to, uint16_t fifo, uint16_t key, uint32_t tag, const Bytes& data,
                      std::optional<unsigned> cnt = {}) {
    DmaDescriptor d;
    d.op = static_cast<uint8_t>(DmaOp::Send);
    d.flags = kDescInline | (cnt ? kDescInjCnt : 0);
    d.dest = lidOf(to);
    d.qid = fifo;
    d.len = static_cast<uint32_t>(data.size());
    d.tag = tag;
    d.key = key;
    d.injCnt = static_cast<uint8_t>(cnt.value_or(0));
    if (cnt) driver::loadCounter(csr_, *cnt, d.len);
    post({{d, data}});
  }
  // A put of `len` bytes at `src` in this node's memory ID srcMid into memory ID `mid`
  // of node destLid at `dst`.
  static DmaDescriptor putFromMid(uint16_t destLid, uint16_t mid, uint64_t dst, uint16_t srcMid, uint64_t src,
                                  uint32_t len) {
    DmaDescriptor d = DmaDescriptor::fromMid(DmaOp::Put, destLid, mid, srcMid, src, len);
    d.dst = dst;
    return d;
  }
  // Takes the control messages that have arrived.
  void pollControl() {
    Memory& m = memory();
    bool took = false;
    while (auto e = ctrl_.take([&m](uint64_t a, size_t k) { return m.read(a, k); },
                               [&m](uint64_t a, const Bytes& b) { m.write(a, b); })) {
      took = true;
      switch (ctrlKindOf(e->data)) {
        case CtrlKind::RemoteError: errors_.push_back(RemoteErrorMessage::decode(e->data.data())); break;
        case CtrlKind::EagerAnnounce: {
          const EagerAnnounce a = EagerAnnounce::decode(e->data.data());
          eagerPeers_[a.lid - 1u] = a;
          break;
        }
        case CtrlKind::ProvisionRequest: provision(ProvisionRequest::decode(e->data.data())); break;
        case CtrlKind::ProvisionAck: granted(ProvisionAck::decode(e->data.data())); break;
        case CtrlKind::RtsRefused: {
          const RtsRefusedMessage r = RtsRefusedMessage::decode(e->data.data());
          for (Send& s : sends_) {
            if (s.st == Status::Pending && lidOf(s.to) == r.targetLid && s.tag == r.tag) {
              s.st = Status::Refused;
              break;
            }
          }
          break;
        }
        default: ++badControl_; break;
      }
    }
    if (took) driver::releaseRcvSlots(csr_, l_.ctrlFifo, ctrl_.head());
  }
  // A peer asks for a buffer: a free memory ID of the pool and heap space, registered
  // with a key, its counter loaded; or a refusal.
  void provision(const ProvisionRequest& r) {
    ProvisionAck a{lidOf(n_), r.tag};
    const uint64_t bytes = (uint64_t{r.len} + 0xFFF) & ~uint64_t{0xFFF};
    unsigned slot = l_.provMids;
    for (unsigned i = 0; i < l_.provMids && slot == l_.provMids; ++i)
      if (!std::any_of(provisions_.begin(), provisions_.end(), [&](const Provision& p) { return p.mid == l_.provMidFirst + i; }))
        slot = i;
    auto hole = std::find_if(heapFree_.begin(), heapFree_.end(), [&](const auto& h) { return h.second >= bytes; });
    if (slot == l_.provMids || hole == heapFree_.end() || r.len == 0) {
      ++provRefused_;
    } else {
      Provision p{r.senderLid - 1u, r.tag, r.len, static_cast<uint16_t>(l_.provMidFirst + slot), l_.provCntFirst + slot,
                  hole->first, bytes};
      hole->first += bytes;
      hole->second -= bytes;
      a.ok = true;
      a.mid = static_cast<uint8_t>(p.mid);
      a.key = static_cast<uint16_t>(0x8000 | (r.tag * 0x9E37u + p.mid * 0x1F3u + ++provSeq_) % 0x8000);
      a.cnt = static_cast<uint8_t>(p.cnt);
      sys_.setMemId(n_, p.mid, MemRegion{true, p.base, p.bytes, false, true, false, a.key}, l_.rail);
      driver::loadCounter(csr_, p.cnt, r.len);
      provisions_.push_back(p);
    }
    sendControl(r.senderLid - 1u, a.encode(), r.tag);
  }
  // The peer granted (or refused) a provisioned send's buffer: the pieces are put.
  void granted(const ProvisionAck& a) {
    auto s = std::find_if(sends_.begin(), sends_.end(), [&](const Send& x) {
      return x.st == Status::Pending && !x.counting && lidOf(x.to) == a.receiverLid && x.tag == a.tag;
    });
    if (s == sends_.end()) return;
    if (!a.ok) {
      s->st = Status::Refused;
      return;
    }
    std::vector<std::pair<DmaDescriptor, Bytes>> puts;
    uint64_t dst = 0;
    for (const Piece& p : s->pieces) {
      DmaDescriptor d = putFromMid(a.receiverLid, a.mid, dst, l_.sendMid, p.srcOff, p.len);
      d.flags |= kDescInjCnt | kDescRcvCnt;
      d.injCnt = static_cast<uint8_t>(s->cnt);
      d.rcvCnt = a.cnt;
      d.key = a.key;
      puts.push_back({d, {}});
      dst += p.len;
    }
    driver::loadCounter(csr_, s->cnt, s->len);
    s->counting = true;
    s->pieces.clear();
    post(puts);
  }
  // Provisioned buffers whose message is in: copied out as an arrival, then the memory
  // ID unregistered and the space freed.
  void pollProvisions() {
    for (auto p = provisions_.begin(); p != provisions_.end();) {
      if (!counterZero(p->cnt)) {
        ++p;
        continue;
      }
      unexpected_.push_back(Incoming{Received{p->from, p->tag, p->len, false}, memory().read(p->base, p->len), {}});
      sys_.setMemId(n_, p->mid, MemRegion{}, l_.rail);
      freeHeap(p->base, p->bytes);
      p = provisions_.erase(p);
    }
  }
  void freeHeap(uint64_t base, uint64_t bytes) {
    heapFree_.push_back({base, bytes});
    std::sort(heapFree_.begin(), heapFree_.end());
    std::vector<std::pair<uint64_t, uint64_t>> merged;
    for (const auto& h : heapFree_) {
      if (!merged.empty() && merged.back().first + merged.back().second == h.first) merged.back().second += h.second;
      else if (h.second) merged.push_back(h);
    }
    heapFree_ = std::move(merged);
  }
  // Takes the eager FIFO's entries: RTS (the NI marks their offset) and eager messages'
  // packets, reassembled per source (a message's packets come in order, unbroken).
  void pollEager() {
    Memory& m = memory();
    bool took = false;
    while (auto e = eager_.take([&m](uint64_t a, size_t k) { return m.read(a, k); },
                                [&m](uint64_t a, const Bytes& b) { m.write(a, b); })) {
      took = true;
      const unsigned from = e->hdr.srcLid - 1u;
      if (e->hdr.offset == kRtsOffset) {
        const RtsMessage rts = RtsMessage::decode(e->hdr.srcLid, e->data.data());
        if (rts.len > l_.bufStride) {  // no receive buffer holds it
          ++refusedOnArrival_;
          refuse(rts);
        } else {
          unexpected_.push_back(Incoming{Received{from, rts.tag, rts.len, true}, {}, rts});
        }
        continue;
      }
      Incoming& part = partial_[from];
      if (e->hdr.offset == 0) part = Incoming{Received{from, e->hdr.tag, e->hdr.msgLen, false}, {}, {}};
      part.data.insert(part.data.end(), e->data.begin(), e->data.end());
      if (part.data.size() == e->hdr.msgLen) {
        unexpected_.push_back(std::move(part));
        partial_.erase(from);
      }
    }
    if (took) driver::releaseRcvSlots(csr_, l_.eagerFifo, eager_.head());
  }

  System& sys_;
  unsigned n_;
  driver::CsrWrite csr_;
  RuntimeLayout l_;
  InjRing ring_;
  uint16_t head_ = 0;  // INJ_HEAD of the doorbell-fed FIFO, as last read
  RcvRing ctrl_;
  RcvRing eager_;
  std::deque<RemoteErrorMessage> errors_;
  std::map<unsigned, EagerAnnounce> eagerPeers_;
  std::vector<Send> sends_;
  std::vector<Recv> recvs_;
  std::deque<unsigned> posted_;        // receives not matched yet, in post order
  std::deque<Incoming> unexpected_;    // messages not matched yet, in arrival order
  std::map<unsigned, Incoming> partial_;
  unsigned refusedOnArrival_ = 0;
  unsigned badControl_ = 0;
  std::vector<Provision> provisions_;
  std::vector<std::pair<uint64_t, uint64_t>> heapFree_{{l_.provHeap, l_.provBytes}};  // {base, bytes}
  unsigned provRefused_ = 0, provSeq_ = 0;
};

}  // namespace ni

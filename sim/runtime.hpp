// SPDX-License-Identifier: Apache-2.0
// Messaging runtime of one node on the NI's DMA engine (what the node's CPU runs):
// rendezvous sends by remote get (sim/rget.hpp), the origin's RTS and the target's
// receive post. Each operation is one CPU action: descriptors written into host memory
// and one doorbell. The memory layout is the same at every node (RuntimeLayout).
#pragma once
#include <cstdint>
#include <deque>
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
};

class Runtime {
 public:
  // Sets up node n's memory IDs, its doorbell-fed and remote-fed injection FIFOs and its
  // control reception FIFO. `csr` is how the node's CPU writes registers.
  Runtime(System& sys, unsigned n, driver::CsrWrite csr, const RuntimeLayout& l = {})
      : sys_(sys), n_(n), csr_(std::move(csr)), l_(l), ring_(l.ring, l.ringSlots),
        ctrl_(l.ctrlRing, l.ctrlSlots, sys.config().maxPayload),
        eager_(l.eagerRing, l.eagerSlots, sys.config().maxPayload) {
    sys.setMemId(n, l.recvMid, MemRegion{true, l.recvBuf, l.bufBytes, false, true});
    sys.setMemId(n, l.scratchMid, MemRegion{true, l.scratch, l.scratchBytes, true, true});
    sys.setMemId(n, l.sendMid, MemRegion{true, l.sendBuf, l.bufBytes, true, false});
    sys.setMemId(n, l.descMid, MemRegion{true, l.descArea, l.descBytes, true, false});
    sys.setMemId(n, l.doneMid, MemRegion{true, l.doneArea, 0x1000, false, true});
    driver::setInjFifo(sys.csrWriter(n), l.swFifo, l.ring, l.ringSlots);
    driver::setInjFifo(sys.csrWriter(n), l.remFifo, l.remRing, l.remSlots, true);
    driver::setRcvFifo(sys.csrWriter(n), l.ctrlFifo, l.ctrlRing, l.ctrlSlots);
  }
  const RuntimeLayout& layout() const { return l_; }
  Memory& memory() { return sys_.node(n_).memory(); }
  uint64_t sendAddr(uint64_t slot) const { return l_.sendBuf + slot * l_.bufStride; }
  uint64_t recvAddr(uint64_t slot) const { return l_.recvBuf + slot * l_.bufStride; }

  // Rendezvous send of the `len` bytes at sendAddr(slot) to node `to`: the RTS. When
  // the message has left this node, DMA counter `doneCnt` reaches zero and the
  // completion record (tag, length) is at doneArea + 64 x slot.
  void rtsSend(unsigned to, uint32_t tag, uint64_t slot, uint32_t len, unsigned doneCnt) {
    RtsMessage r;
    r.tag = tag;
    r.len = len;
    r.originLid = lidOf(n_);
    r.originFifo = static_cast<uint8_t>(l_.remFifo);
    r.doneCnt = static_cast<uint8_t>(doneCnt);
    r.srcMid = l_.sendMid;
    r.srcOff = slot * l_.bufStride;
    r.scratchMid = l_.scratchMid;
    r.scratchOff = slot * l_.scratchStride;
    r.scratchSlots = static_cast<uint16_t>(l_.scratchStride / kDescBytes);
    r.doneMid = l_.doneMid;
    r.doneOff = slot * kDescBytes;
    driver::loadCounter(csr_, doneCnt, kDescBytes);
    sendControl(to, r.encode(), tag);
  }

  // Posts any message into the doorbell-fed FIFO, one doorbell (the caller's data:
  // inline when d says so, else already at d.src).
  void post(const std::vector<std::pair<DmaDescriptor, Bytes>>& msgs) {
    const uint16_t head = static_cast<uint16_t>(sys_.readCsr(n_, regs::INJ_HEAD(l_.swFifo)));
    for (const auto& [d, data] : msgs) {
      const bool ok = ring_.post(d, data, head, [this](uint64_t a, const Bytes& b) { memory().write(a, b); });
      if (!ok) throw std::runtime_error("runtime: injection FIFO full");
    }
    driver::ringDoorbell(csr_, l_.swFifo, ring_.tail());
  }

  // RTS messages that have arrived, oldest first (polling the control FIFO in memory).
  std::deque<RtsMessage>& pendingRts() {
    pollControl();
    return rts_;
  }
  // Eager messages. The receiver allocates its eager buffers (a reception FIFO), gives
  // them a protection key in its NI and announces FIFO and key to the peers; a sender
  // sends into them with the key, which the receiving NI checks before it writes (a
  // wrong key: refused, KEY_ERR_CNT at the receiver, a NAK the sender counts).
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
  // An eager send of `data` (inline) to node `to`, which must have announced its eager
  // buffers; keyOverride stands for a stale or forged key (tests).
  void eagerSend(unsigned to, uint32_t tag, const Bytes& data, std::optional<uint16_t> keyOverride = {}) {
    const EagerAnnounce& a = eagerPeers().at(to);
    DmaDescriptor d;
    d.op = static_cast<uint8_t>(DmaOp::Send);
    d.flags = kDescInline;
    d.dest = lidOf(to);
    d.qid = a.fifo;
    d.len = static_cast<uint32_t>(data.size());
    d.tag = tag;
    d.key = keyOverride.value_or(a.key);
    post({{d, data}});
  }
  struct EagerMessage {
    uint16_t srcLid = 0;
    uint32_t tag = 0;
    Bytes data;
  };
  // Eager messages that have arrived whole (their packets' entries, in order per source).
  std::deque<EagerMessage>& eagerReceived() {
    Memory& m = memory();
    bool took = false;
    while (auto e = eager_.take([&m](uint64_t a, size_t k) { return m.read(a, k); },
                                [&m](uint64_t a, const Bytes& b) { m.write(a, b); })) {
      took = true;
      EagerMessage& part = partial_[e->hdr.srcLid];
      if (e->hdr.offset == 0) part = EagerMessage{e->hdr.srcLid, e->hdr.tag, {}};
      part.data.insert(part.data.end(), e->data.begin(), e->data.end());
      if (part.data.size() == e->hdr.msgLen) {
        eagerDone_.push_back(std::move(part));
        partial_.erase(e->hdr.srcLid);
      }
    }
    if (took) driver::releaseRcvSlots(csr_, l_.eagerFifo, eager_.head());
    return eagerDone_;
  }

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
    const uint32_t st = sys_.readCsr(n_, regs::INJ_STATUS(l_.remFifo));
    if (!(st & regs::INJ_STATUS_ERR_MASK)) return DmaErr::None;
    const auto code = static_cast<DmaErr>((st & regs::INJ_STATUS_CODE_MASK) >> regs::INJ_STATUS_CODE_LSB);
    const uint16_t head = static_cast<uint16_t>(sys_.readCsr(n_, regs::INJ_HEAD(l_.remFifo)));
    const Bytes d = memory().read(l_.remRing + uint64_t{head} * kDescBytes, kDescBytes);
    const uint16_t dest = static_cast<uint16_t>(getLe(&d[4], 2));
    driver::resetInjFifo(csr_, l_.remFifo, true);
    if (dest != 0 && dest != lidOf(n_) && dest <= sys_.size()) {
      RemoteErrorMessage e{lidOf(n_), static_cast<uint8_t>(l_.remFifo), static_cast<uint8_t>(code),
                           static_cast<uint32_t>(getLe(&d[32], 4))};
      sendControl(static_cast<unsigned>(dest - 1), e.encode(), e.tag);
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
  // A 64-byte control message into node `to`'s control FIFO.
  void sendControl(unsigned to, const Bytes& payload, uint32_t tag) {
    DmaDescriptor d;
    d.op = static_cast<uint8_t>(DmaOp::Send);
    d.flags = kDescInline;
    d.dest = lidOf(to);
    d.qid = static_cast<uint16_t>(l_.ctrlFifo);
    d.len = kDescBytes;
    d.tag = tag;
    post({{d, payload}});
  }
  // Takes the control messages that have arrived into their queues.
  void pollControl() {
    Memory& m = memory();
    bool took = false;
    while (auto e = ctrl_.take([&m](uint64_t a, size_t k) { return m.read(a, k); },
                               [&m](uint64_t a, const Bytes& b) { m.write(a, b); })) {
      took = true;
      switch (ctrlKindOf(e->data)) {
        case CtrlKind::Rts: rts_.push_back(RtsMessage::decode(e->data.data())); break;
        case CtrlKind::RemoteError: errors_.push_back(RemoteErrorMessage::decode(e->data.data())); break;
        case CtrlKind::EagerAnnounce: {
          const EagerAnnounce a = EagerAnnounce::decode(e->data.data());
          eagerPeers_[a.lid - 1u] = a;
          break;
        }
        default: ++badControl_; break;
      }
    }
    if (took) driver::releaseRcvSlots(csr_, l_.ctrlFifo, ctrl_.head());
  }

  System& sys_;
  unsigned n_;
  driver::CsrWrite csr_;
  RuntimeLayout l_;
  InjRing ring_;
  RcvRing ctrl_;
  std::deque<RtsMessage> rts_;
  std::deque<RemoteErrorMessage> errors_;
  RcvRing eager_;
  std::map<unsigned, EagerAnnounce> eagerPeers_;
  std::map<uint16_t, EagerMessage> partial_;
  std::deque<EagerMessage> eagerDone_;
  unsigned badControl_ = 0;
};

}  // namespace ni

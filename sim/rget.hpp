// SPDX-License-Identifier: Apache-2.0
// The self-paced rendezvous of seed 003 on remote gets (docs/architecture.md#remote-get):
// what the origin's RTS says, and the descriptors the target prepares so that the two
// DMA engines move a message portion by portion with no CPU work after the RTS and the
// receive post. Golden model for the tests and the code the runtime uses.
//
//   origin O                                   target T
//   send (its NI makes
//   it an RTS) ------------------------------> receive post: writes blocks B_0..B_{P-1}
//                                              in its descriptor area, puts R_O_0..R_O_{P-2}
//                                              and a completion record into O's scratch,
//   remote-fed FIFO <---- RGET of B_0 -------- and sends B_0 by a remote get
//   B_i = [R_T_i, D_i]:
//     R_T_i: RGET of R_O_i (O's scratch) ----> remote-fed FIFO: R_O_i = RGET of B_{i+1}
//     D_i:   put of portion i --------------->  (lands; reception counter K drops;
//                                                 O's injection counter drops as it leaves)
//   remote-fed FIFO <---- RGET of B_{i+1} ---
//   B_{P-1} = [D_{P-1}, F]: F is a local copy of the completion record into O's done
//   area: the origin's record of the message, written after its last data left.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "bytes.hpp"
#include "dma.hpp"

namespace ni {

// Control messages between runtimes: 64-byte memory-FIFO sends; byte 63 says which
// (an RTS is not one: it comes from the NI into the eager FIFO).
enum class CtrlKind : uint8_t {
  None = 0, RemoteError = 2, EagerAnnounce = 3, RtsRefused = 4, ProvisionRequest = 5, ProvisionAck = 6
};
inline CtrlKind ctrlKindOf(const Bytes& payload) {
  return payload.size() == kDescBytes ? static_cast<CtrlKind>(payload[63]) : CtrlKind::None;
}

// A remote-fed FIFO stopped on a descriptor another node injected: told to the node
// the descriptor would have served (its dest), by the runtime that reset the FIFO.
struct RemoteErrorMessage {
  uint16_t reporterLid = 0;
  uint8_t fifo = 0;
  uint8_t code = 0;   // INJ_STATUS.code (DmaErr)
  uint32_t tag = 0;   // the refused descriptor's tag
  Bytes encode() const {
    Bytes b(kDescBytes, 0);
    putLe(&b[0], 2, reporterLid);
    b[2] = fifo;
    b[3] = code;
    putLe(&b[4], 4, tag);
    b[63] = static_cast<uint8_t>(CtrlKind::RemoteError);
    return b;
  }
  static RemoteErrorMessage decode(const uint8_t* b) {
    RemoteErrorMessage m;
    m.reporterLid = static_cast<uint16_t>(getLe(b, 2));
    m.fifo = b[2];
    m.code = b[3];
    m.tag = static_cast<uint32_t>(getLe(b + 4, 4));
    return m;
  }
};

// The target of an RTS could not place the message (longer than the receive buffer
// that matched it, or than any): told to the origin, whose send ends Refused.
struct RtsRefusedMessage {
  uint16_t targetLid = 0;
  uint32_t tag = 0;
  uint32_t len = 0;
  Bytes encode() const {
    Bytes b(kDescBytes, 0);
    putLe(&b[0], 2, targetLid);
    putLe(&b[4], 4, tag);
    putLe(&b[8], 4, len);
    b[63] = static_cast<uint8_t>(CtrlKind::RtsRefused);
    return b;
  }
  static RtsRefusedMessage decode(const uint8_t* b) {
    return RtsRefusedMessage{static_cast<uint16_t>(getLe(b, 2)), static_cast<uint32_t>(getLe(b + 4, 4)),
                             static_cast<uint32_t>(getLe(b + 8, 4))};
  }
};

// Buffer provisioning (seed 002): a sender whose message is larger than the receiver's
// eager buffers asks it for a buffer of `len` bytes; the receiver answers with the
// memory ID, key and counter of the buffer it registered, or a refusal (ok false).
struct ProvisionRequest {
  uint16_t senderLid = 0;
  uint32_t tag = 0;
  uint32_t len = 0;
  Bytes encode() const {
    Bytes b(kDescBytes, 0);
    putLe(&b[0], 2, senderLid);
    putLe(&b[4], 4, tag);
    putLe(&b[8], 4, len);
    b[63] = static_cast<uint8_t>(CtrlKind::ProvisionRequest);
    return b;
  }
  static ProvisionRequest decode(const uint8_t* b) {
    return ProvisionRequest{static_cast<uint16_t>(getLe(b, 2)), static_cast<uint32_t>(getLe(b + 4, 4)),
                            static_cast<uint32_t>(getLe(b + 8, 4))};
  }
};
struct ProvisionAck {
  uint16_t receiverLid = 0;
  uint32_t tag = 0;
  bool ok = false;
  uint8_t mid = 0;   // the buffer's memory ID (its region starts at offset 0) ...
  uint16_t key = 0;  // ... its key
  uint8_t cnt = 0;   // the receiver's counter the puts decrement
  Bytes encode() const {
    Bytes b(kDescBytes, 0);
    putLe(&b[0], 2, receiverLid);
    putLe(&b[4], 4, tag);
    b[8] = ok;
    b[9] = mid;
    putLe(&b[10], 2, key);
    b[12] = cnt;
    b[63] = static_cast<uint8_t>(CtrlKind::ProvisionAck);
    return b;
  }
  static ProvisionAck decode(const uint8_t* b) {
    return ProvisionAck{static_cast<uint16_t>(getLe(b, 2)), static_cast<uint32_t>(getLe(b + 4, 4)), b[8] != 0, b[9],
                        static_cast<uint16_t>(getLe(b + 10, 2)), b[12]};
  }
};

// A receiver's eager buffers: the reception FIFO eager messages go to and the
// protection key they must carry (seed 000 claims 13-14).
struct EagerAnnounce {
  uint16_t lid = 0;
  uint8_t fifo = 0;
  uint16_t key = 0;
  uint32_t maxBytes = 0;  // largest eager message
  Bytes encode() const {
    Bytes b(kDescBytes, 0);
    putLe(&b[0], 2, lid);
    b[2] = fifo;
    putLe(&b[4], 2, key);
    putLe(&b[8], 4, maxBytes);
    b[63] = static_cast<uint8_t>(CtrlKind::EagerAnnounce);
    return b;
  }
  static EagerAnnounce decode(const uint8_t* b) {
    EagerAnnounce a;
    a.lid = static_cast<uint16_t>(getLe(b, 2));
    a.fifo = b[2];
    a.key = static_cast<uint16_t>(getLe(b + 4, 2));
    a.maxBytes = static_cast<uint32_t>(getLe(b + 8, 4));
    return a;
  }
};

// The RTS. The origin posts a send descriptor whose source is named by memory ID; when
// it is longer than RNDV_THRESHOLD its NI sends the descriptor itself as the RTS
// (docs/formats.md#rts), bytes 36..62 carrying the runtime's rendezvous words below.
// The origin's LID comes from the RTS's entry header.
struct RtsMessage {
  uint32_t tag = 0;          // the message's tag (matched against posted receives)
  uint32_t len = 0;          // message bytes (a multiple of 4)
  uint16_t originLid = 0;
  uint8_t originFifo = 0;    // the origin's remote-fed injection FIFO
  bool countInj = false;     // the origin's injection counter injCnt counts the data ...
  uint8_t injCnt = 0;        // ... as it leaves (as for an eager send)
  uint16_t srcMid = 0;       // origin memory ID holding the message (readable) ...
  uint64_t srcOff = 0;       // ... at this offset (64-byte aligned)
  uint16_t scratchMid = 0;   // origin memory ID (writable, readable) for R_O descriptors ...
  uint64_t scratchOff = 0;   // ... at this offset: scratchSlots 64-byte slots
  uint16_t scratchSlots = 0;
  uint16_t doneMid = 0;      // origin memory ID (writable) the completion record is copied to ...
  uint64_t doneOff = 0;      // ... at this offset

  // The origin's send descriptor: to `target`, eagerly into reception FIFO `fifo` with
  // `key` when its NI selects eager.
  DmaDescriptor descriptor(uint16_t targetLid, uint16_t fifo, uint16_t key) const {
    DmaDescriptor d = DmaDescriptor::fromMid(DmaOp::Send, targetLid, fifo, srcMid, srcOff, len);
    d.flags |= countInj ? kDescInjCnt : 0;
    d.injCnt = injCnt;
    d.key = key;
    d.tag = tag;
    uint8_t* w = d.words.data();  // descriptor byte 36 + i is w[i]
    w[0] = originFifo;
    w[1] = static_cast<uint8_t>(scratchMid);
    w[2] = static_cast<uint8_t>(doneMid);
    putLe(w + 4, 8, scratchOff);
    putLe(w + 12, 8, doneOff);
    putLe(w + 20, 2, scratchSlots);
    return d;
  }
  static RtsMessage decode(uint16_t originLid, const uint8_t* b) {
    const DmaDescriptor d = DmaDescriptor::decode(b);
    const uint8_t* w = d.words.data();
    RtsMessage r;
    r.tag = d.tag;
    r.len = d.len;
    r.originLid = originLid;
    r.originFifo = w[0];
    r.countInj = d.flags & kDescInjCnt;
    r.injCnt = d.injCnt;
    r.srcMid = d.srcMid;
    r.srcOff = d.src;
    r.scratchMid = w[1];
    r.doneMid = w[2];
    r.scratchOff = getLe(w + 4, 8);
    r.doneOff = getLe(w + 12, 8);
    r.scratchSlots = static_cast<uint16_t>(getLe(w + 20, 2));
    return r;
  }
};

// What the target's receive post supplies.
struct RndvTarget {
  uint16_t lid = 0;
  uint8_t fifo = 0;          // the target's remote-fed injection FIFO
  uint16_t recvMid = 0;      // memory ID (writable) of the receive buffer ...
  uint64_t recvOff = 0;      // ... at this offset (64-byte aligned)
  uint8_t rcvCnt = 0;        // the target's counter, loaded with the message length
  uint16_t descMid = 0;      // memory ID (readable) of the descriptor area ...
  uint64_t descOff = 0;      // ... at this offset: 128 bytes per portion
  uint32_t portion = 0;      // bytes per portion (a multiple of 64)
};

// The target's side of one message: the descriptor area's bytes, the scratch bytes to
// put at the origin (R_O_0..R_O_{P-2}, then the completion record), and the two
// descriptors its receive post injects (the put of the scratch bytes, then the
// remote get of block 0).
struct RndvPlan {
  uint32_t portions = 0;
  Bytes descArea;            // blocks of two descriptor slots
  Bytes scratch;             // for the origin's scratch area, slot by slot
  DmaDescriptor putScratch;  // src: the caller sets where it wrote `scratch` at the target
  DmaDescriptor rgetFirst;   // src: the caller sets where `descArea` is at the target

  static constexpr unsigned kBlockBytes = 2 * kDescBytes;
};

// Portions of a message: at most what the origin's scratch can chain.
inline uint32_t rndvPortion(uint32_t len, uint32_t want, uint16_t scratchSlots) {
  uint32_t p = want;
  while (scratchSlots && (len + p - 1) / p > scratchSlots) p *= 2;
  return p;
}

inline RndvPlan planRendezvous(const RtsMessage& rts, const RndvTarget& t) {
  RndvPlan plan;
  const uint32_t p = t.portion;
  plan.portions = (rts.len + p - 1) / p;
  auto rget = [](uint16_t dest, uint8_t fifo, uint16_t mid, uint64_t off, uint32_t len) {
    return DmaDescriptor::fromMid(DmaOp::Rget, dest, fifo, mid, off, len);
  };
  auto append = [](Bytes& to, const DmaDescriptor& d) {
    const Bytes e = d.encode();
    to.insert(to.end(), e.begin(), e.end());
  };
  for (uint32_t i = 0; i < plan.portions; ++i) {
    const uint32_t off = i * p;
    // D_i, at the origin
    DmaDescriptor put = DmaDescriptor::fromMid(DmaOp::Put, t.lid, t.recvMid, rts.srcMid, rts.srcOff + off,
                                               std::min(p, rts.len - off));
    put.flags |= kDescRcvCnt;
    put.dst = t.recvOff + off;
    put.rcvCnt = t.rcvCnt;
    put.tag = rts.tag;
    if (rts.countInj) {  // the origin counts the data leaving, as for an eager send
      put.flags |= kDescInjCnt;
      put.injCnt = rts.injCnt;
    }
    if (i + 1 < plan.portions) {
      // R_T_i (at the origin): the remote get of R_O_i from the origin's scratch.
      append(plan.descArea, rget(t.lid, t.fifo, rts.scratchMid, rts.scratchOff + uint64_t{i} * kDescBytes, kDescBytes));
      append(plan.descArea, put);
      // R_O_i (at the target): the remote get of block i + 1 from the descriptor area.
      append(plan.scratch, rget(rts.originLid, rts.originFifo, t.descMid,
                                t.descOff + uint64_t{i + 1} * RndvPlan::kBlockBytes, RndvPlan::kBlockBytes));
    } else {
      append(plan.descArea, put);
      // F (at the origin): copy the completion record (the scratch slot after the
      // R_O descriptors) into the origin's done area.
      DmaDescriptor f;
      f.op = static_cast<uint8_t>(DmaOp::Copy);
      f.flags = kDescSrcMid;
      f.qid = rts.doneMid;
      f.dst = rts.doneOff;
      f.srcMid = static_cast<uint8_t>(rts.scratchMid);
      f.src = rts.scratchOff + uint64_t{i} * kDescBytes;
      f.len = kDescBytes;
      append(plan.descArea, f);
    }
  }
  // The completion record: the message's tag and length.
  Bytes rec(kDescBytes, 0);
  putLe(&rec[0], 4, rts.tag);
  putLe(&rec[4], 4, rts.len);
  plan.scratch.insert(plan.scratch.end(), rec.begin(), rec.end());

  plan.putScratch.op = static_cast<uint8_t>(DmaOp::Put);
  plan.putScratch.dest = rts.originLid;
  plan.putScratch.qid = rts.scratchMid;
  plan.putScratch.dst = rts.scratchOff;
  plan.putScratch.len = static_cast<uint32_t>(plan.scratch.size());
  plan.rgetFirst = rget(rts.originLid, rts.originFifo, 0, 0, RndvPlan::kBlockBytes);
  plan.rgetFirst.flags = 0;  // from the target's own (doorbell-fed) FIFO: src is an address
  return plan;
}

}  // namespace ni

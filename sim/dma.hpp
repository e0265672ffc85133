// SPDX-License-Identifier: Apache-2.0
// Golden model of the DMA engine's formats (docs/formats.md#dma-descriptors):
// the 64-byte descriptor, the reception-FIFO entry header, and how a message
// becomes tunneled MWr packets, local-copy TLPs, one raw packet, or remote-get
// packets (one descriptor slot each).
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "bytes.hpp"
#include "fabric_pkt.hpp"
#include "tlp.hpp"

namespace ni {

constexpr unsigned kDescBytes = 64;
constexpr unsigned kEntryHdrBytes = 16;

enum class DmaOp : uint8_t { Send = 1, Put = 2, Copy = 3, Raw = 4, Rget = 5 };
// kDescSrcMid: src is an offset into memory ID srcMid of the node that processes the
// descriptor (required in a remote-fed FIFO).
enum : uint8_t { kDescInline = 0x01, kDescInjCnt = 0x02, kDescRcvCnt = 0x04, kDescSrcMid = 0x08 };
// INJ_STATUS.code: why a FIFO stopped.
enum class DmaErr : uint8_t { None = 0, Op = 1, Count = 2, Len = 3, Align = 4, Mem = 5, Tail = 6, Range = 7, Remote = 8,
                              Counter = 9 };

struct DmaDescriptor {
  uint8_t op = static_cast<uint8_t>(DmaOp::Send);
  uint8_t flags = 0;
  uint8_t slots = 1;      // slots the descriptor and its inline data take
  uint8_t injCnt = 0;     // injection counter (flag kDescInjCnt)
  uint16_t dest = 0;      // destination LID
  uint16_t qid = 0;       // reception FIFO (send), memory ID (put; copy: of this node), EtherType (raw),
                          // remote-fed injection FIFO at dest (remote get)
  uint32_t len = 0;       // message bytes
  uint8_t rcvCnt = 0;     // reception counter at the target (flag kDescRcvCnt)
  uint8_t srcMid = 0;     // memory ID src is an offset into (flag kDescSrcMid)
  uint16_t key = 0;       // put, send: protection key of the target memory ID or reception FIFO
  uint64_t src = 0;       // data address when not inline
  uint64_t dst = 0;       // put, copy: offset in the memory ID's region
  uint32_t tag = 0;       // send: copied into every entry header
  // Bytes 36..63: the NI reads them only to carry them in an RTS (the software's
  // rendezvous words).
  std::array<uint8_t, 28> words{};

  // A descriptor whose source is `len` bytes at offset `src` of memory ID srcMid.
  static DmaDescriptor fromMid(DmaOp op, uint16_t dest, uint16_t qid, uint16_t srcMid, uint64_t src, uint32_t len) {
    DmaDescriptor d;
    d.op = static_cast<uint8_t>(op);
    d.flags = kDescSrcMid;
    d.dest = dest;
    d.qid = qid;
    d.srcMid = static_cast<uint8_t>(srcMid);
    d.src = src;
    d.len = len;
    return d;
  }
  bool isInline() const { return flags & kDescInline; }
  bool isPut() const { return op == static_cast<uint8_t>(DmaOp::Put); }
  bool isSend() const { return op == static_cast<uint8_t>(DmaOp::Send); }
  bool isCopy() const { return op == static_cast<uint8_t>(DmaOp::Copy); }
  bool isRaw() const { return op == static_cast<uint8_t>(DmaOp::Raw); }
  bool isRget() const { return op == static_cast<uint8_t>(DmaOp::Rget); }
  bool atDst() const { return isPut() || isCopy(); }  // data lands at dst + offset

  Bytes encode() const {
    Bytes b(kDescBytes, 0);
    putLe(&b[0], 1, op);
    putLe(&b[1], 1, flags);
    putLe(&b[2], 1, slots);
    putLe(&b[3], 1, injCnt);
    putLe(&b[4], 2, dest);
    putLe(&b[6], 2, qid);
    putLe(&b[8], 4, len);
    putLe(&b[12], 1, rcvCnt);
    putLe(&b[13], 1, srcMid);
    putLe(&b[14], 2, key);
    putLe(&b[16], 8, src);
    putLe(&b[24], 8, dst);
    putLe(&b[32], 4, tag);
    for (size_t i = 0; i < words.size(); ++i) b[36 + i] = words[i];
    return b;
  }
  static DmaDescriptor decode(const uint8_t* b) {
    DmaDescriptor d;
    d.op = b[0];
    d.flags = b[1];
    d.slots = b[2];
    d.injCnt = b[3];
    d.dest = static_cast<uint16_t>(getLe(b + 4, 2));
    d.qid = static_cast<uint16_t>(getLe(b + 6, 2));
    d.len = static_cast<uint32_t>(getLe(b + 8, 4));
    d.rcvCnt = b[12];
    d.srcMid = b[13];
    d.key = static_cast<uint16_t>(getLe(b + 14, 2));
    d.src = getLe(b + 16, 8);
    d.dst = getLe(b + 24, 8);
    d.tag = static_cast<uint32_t>(getLe(b + 32, 4));
    std::copy(b + 36, b + 64, d.words.begin());
    return d;
  }
};

// Protocol selection (RNDV_THRESHOLD): a send from memory named by memory ID longer
// than the threshold leaves as an RTS: one packet into the same reception FIFO with the
// same key, whose entry header has offset kRtsOffset and the message's length and tag,
// and whose data is the descriptor (no counter: the data is counted when it leaves).
constexpr uint32_t kRtsOffset = 0xFFFF'FFFF;
struct RndvSelect {
  uint32_t threshold = 0xFFFF'FFFF;  // the reset value: every send is eager
  bool rendezvous(const DmaDescriptor& d) const {
    return d.isSend() && !d.isInline() && (d.flags & kDescSrcMid) && d.len > threshold;
  }
};

// First 16 bytes of a memory-FIFO packet's payload: what lands in the reception FIFO
// in front of the data.
struct EntryHeader {
  uint16_t srcLid = 0;
  uint16_t bytes = 0;     // data bytes in this packet
  uint32_t msgLen = 0;
  uint32_t offset = 0;    // of this packet's data in the message
  uint32_t tag = 0;

  Bytes encode() const {
    Bytes b(kEntryHdrBytes, 0);
    putLe(&b[0], 2, srcLid);
    putLe(&b[2], 2, bytes);
    putLe(&b[4], 4, msgLen);
    putLe(&b[8], 4, offset);
    putLe(&b[12], 4, tag);
    return b;
  }
  static EntryHeader decode(const uint8_t* b) {
    EntryHeader h;
    h.srcLid = static_cast<uint16_t>(getLe(b, 2));
    h.bytes = static_cast<uint16_t>(getLe(b + 2, 2));
    h.msgLen = static_cast<uint32_t>(getLe(b + 4, 4));
    h.offset = static_cast<uint32_t>(getLe(b + 8, 4));
    h.tag = static_cast<uint32_t>(getLe(b + 12, 4));
    return h;
  }
};

// Largest raw datagram: the raw packet (LRH, RWH, datagram) fits a reception FIFO slot
// (maxPayload bytes) behind its 16-byte entry header.
constexpr uint32_t rawMaxBytes(unsigned maxPayload) { return maxPayload - kEntryHdrBytes - kRawHdrBytes; }

// Data bytes of the packet (a copy: TLP) at message offset `off`: at most maxPayload
// (a send 64 less, a remote get one slot), never across a 4 KiB page of the destination
// or of the source read.
inline uint32_t dmaChunk(const DmaDescriptor& d, uint32_t off, unsigned maxPayload, unsigned slotBytes = kDescBytes) {
  uint32_t lim = d.isRget() ? slotBytes : d.atDst() ? maxPayload : maxPayload - 64;
  if (d.atDst()) lim = std::min<uint32_t>(lim, 4096 - ((d.dst + off) & 0xFFF));
  if (!d.isInline()) lim = std::min<uint32_t>(lim, 4096 - ((d.src + off) & 0xFFF));
  return std::min<uint32_t>(lim, d.len - off);
}

// The packets of a message as the injection engine hands them on (PSN 0: ni_retx
// stamps it): tunneled MWrs, a put at dst + offset, a send at address 0 with the
// entry header in front of its data, a remote get at address 0 with one descriptor
// slot (the receiver writes it at its FIFO's tail).
inline std::vector<FabricPacket> dmaPackets(const DmaDescriptor& d, const Bytes& data, uint16_t srcLid,
                                            uint16_t niReqId, unsigned maxPayload, const RndvSelect& sel = {}) {
  std::vector<FabricPacket> out;
  if (sel.rendezvous(d)) {
    FabricPacket p;
    p.dlid = d.dest;
    p.slid = srcLid;
    p.memid = d.qid;
    p.tehFlags = kTehDma | kTehRfifo;
    p.key = d.key;
    Bytes payload = EntryHeader{srcLid, kDescBytes, d.len, kRtsOffset, d.tag}.encode();
    const Bytes desc = d.encode();
    payload.insert(payload.end(), desc.begin(), desc.end());
    p.payload = encodeTlp(makeMWr(niReqId, 0, 0, payload));
    out.push_back(std::move(p));
    return out;
  }
  if (d.isRaw()) {
    // One IB raw packet (VL 0), the datagram as it is; the EtherType in the RWH.
    FabricPacket p;
    p.raw = true;
    p.dlid = d.dest;
    p.slid = srcLid;
    p.etherType = d.qid;
    p.payload = data;
    out.push_back(std::move(p));
    return out;
  }
  for (uint32_t off = 0; off < d.len;) {
    const uint32_t n = dmaChunk(d, off, maxPayload);
    FabricPacket p;
    p.dlid = d.dest;
    p.slid = srcLid;
    p.memid = d.qid;
    const bool rcnt = (d.flags & kDescRcvCnt) && !d.isRget();
    p.tehFlags = kTehDma | (d.isPut() ? kTehRxXlate : d.isRget() ? kTehRget : kTehRfifo) | (rcnt ? kTehRcnt : 0);
    p.counter = rcnt ? d.rcvCnt : 0;
    p.key = d.isRget() ? 0 : d.key;
    Bytes payload;
    if (!d.isPut() && !d.isRget()) payload = EntryHeader{srcLid, static_cast<uint16_t>(n), d.len, off, d.tag}.encode();
    payload.insert(payload.end(), data.begin() + off, data.begin() + off + n);
    p.payload = encodeTlp(makeMWr(niReqId, 0, d.isPut() ? d.dst + off : 0, payload));
    out.push_back(std::move(p));
    off += n;
  }
  return out;
}

// The MWr TLPs of a local copy as the engine hands them to the host port: the data at
// the memory ID's region (byte address memBase) + dst + offset.
inline std::vector<Bytes> dmaCopyTlps(const DmaDescriptor& d, const Bytes& data, uint16_t niReqId,
                                      unsigned maxPayload, uint64_t memBase) {
  std::vector<Bytes> out;
  for (uint32_t off = 0; off < d.len;) {
    const uint32_t n = dmaChunk(d, off, maxPayload);
    out.push_back(encodeTlp(makeMWr(niReqId, 0, memBase + d.dst + off, Bytes(data.begin() + off, data.begin() + off + n))));
    off += n;
  }
  return out;
}

// What a raw packet leaves in the target's raw reception FIFO: an entry header (source
// LID, bytes of the packet that follow, message length 0 marking a raw entry) and the
// packet as it arrived, LRH and RWH included, without its VCRC.
inline Bytes rawFifoEntry(const Bytes& wire) {
  const size_t n = wire.size() - kRawTrailerBytes;
  return joined(EntryHeader{static_cast<uint16_t>(getBe(&wire[6], 2)), static_cast<uint16_t>(n), 0, 0, 0}.encode(),
                wire.data(), n);
}

// The producer's side of an injection FIFO: writes descriptors (and inline data) at
// the tail in host memory, wrapping at the ring's end. The NI's head comes from
// INJ_HEAD; a ring of n slots holds at most n - 1.
class InjRing {
 public:
  using MemWrite = std::function<void(uint64_t addr, const Bytes& b)>;
  InjRing(uint64_t base, uint16_t slots, unsigned slotBytes = 64) : base_(base), size_(slots), slot_(slotBytes) {}

  uint16_t tail() const { return tail_; }
  uint16_t size() const { return size_; }
  // Slots a message takes: the descriptor, and its data when inline.
  uint8_t slotsFor(uint32_t len, bool inl) const {
    return static_cast<uint8_t>(1 + (inl ? (len + slot_ - 1) / slot_ : 0));
  }
  unsigned freeSlots(uint16_t head) const { return size_ - 1u - (tail_ + size_ - head) % size_; }

  // Writes the message at the tail (d.slots set here; inline data from `data`, else
  // the caller has put it at d.src). False, writing nothing, if it does not fit.
  bool post(DmaDescriptor d, const Bytes& data, uint16_t head, const MemWrite& write) {
    d.slots = slotsFor(d.len, d.isInline());
    if (d.slots > freeSlots(head)) return false;
    Bytes img = d.encode();
    img.resize(slot_, 0);
    if (d.isInline()) {
      img.insert(img.end(), data.begin(), data.end());
      img.resize(size_t{d.slots} * slot_, 0);
    }
    for (unsigned s = 0; s < d.slots; ++s) {
      const uint16_t at = static_cast<uint16_t>((tail_ + s) % size_);
      write(base_ + uint64_t{at} * slot_, Bytes(img.begin() + s * slot_, img.begin() + (s + 1) * slot_));
    }
    tail_ = static_cast<uint16_t>((tail_ + d.slots) % size_);
    return true;
  }

 private:
  uint64_t base_;
  uint16_t size_;
  unsigned slot_;
  uint16_t tail_ = 0;
};

// The consumer's side of a reception FIFO: the NI writes each entry (entry header,
// data) into the slot at its tail, slots of maxPayload bytes. An entry is there when
// its header's byte count is not 0: the consumer zeroes it when it takes the entry,
// so a slot the NI has not filled again reads empty. The caller writes head() to
// RFIFO_HEAD to give the slots back.
class RcvRing {
 public:
  using MemRead = std::function<Bytes(uint64_t addr, size_t n)>;
  using MemWrite = InjRing::MemWrite;
  struct Entry {
    EntryHeader hdr;
    Bytes data;
    Bytes raw() const {  // as the NI wrote it: the send packet's payload
      return joined(hdr.encode(), data.data(), data.size());
    }
  };
  RcvRing(uint64_t base, uint16_t slots, unsigned slotBytes) : base_(base), size_(slots), slot_(slotBytes) {}

  uint16_t head() const { return head_; }
  std::optional<Entry> take(const MemRead& read, const MemWrite& write) {
    const uint64_t at = base_ + uint64_t{head_} * slot_;
    const Bytes h = read(at, kEntryHdrBytes);
    Entry e{EntryHeader::decode(h.data()), {}};
    if (e.hdr.bytes == 0) return std::nullopt;
    e.data = read(at + kEntryHdrBytes, e.hdr.bytes);
    write(at, Bytes(kEntryHdrBytes, 0));
    head_ = static_cast<uint16_t>((head_ + 1) % size_);
    return e;
  }

 private:
  uint64_t base_;
  uint16_t size_;
  unsigned slot_;
  uint16_t head_ = 0;
};

}  // namespace ni

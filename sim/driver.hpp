// SPDX-License-Identifier: Apache-2.0
// Driver: the register writes that program the NI, independent of how a CSR
// write reaches it (a node's CPU, or a unit-test BFM).
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "dma.hpp"
#include "ni_regs.hpp"
#include "ref_ni.hpp"

namespace ni::driver {

using CsrWrite = std::function<void(uint32_t off, uint32_t value)>;

// The entry's registers are staged: they take effect together with the write of
// ART_CTRL (or MEMID_CTRL), so an entry can be changed while traffic uses it.
inline void setWindow(const CsrWrite& wr, unsigned i, const Window& w) {
  const uint64_t limit = w.base + w.size;
  wr(regs::ART_BASE_LO(i), static_cast<uint32_t>(w.base));
  wr(regs::ART_BASE_HI(i), static_cast<uint32_t>(w.base >> 32));
  wr(regs::ART_LIMIT_LO(i), static_cast<uint32_t>(limit));
  wr(regs::ART_LIMIT_HI(i), static_cast<uint32_t>(limit >> 32));
  wr(regs::ART_XLATE_LO(i), static_cast<uint32_t>(w.remote));
  wr(regs::ART_XLATE_HI(i), static_cast<uint32_t>(w.remote >> 32));
  wr(regs::ART_DEST(i), (w.mcastLid ? w.mcastLid : lidOf(w.dstNode)) | (uint32_t{w.memid} << regs::ART_DEST_MEMID_LSB));
  wr(regs::ART_CTRL(i), regs::ART_CTRL_VALID_MASK | (w.rxXlate ? regs::ART_CTRL_RX_XLATE_MASK : 0) |
                            (w.read ? regs::ART_CTRL_PERM_R_MASK : 0) | (w.write ? regs::ART_CTRL_PERM_W_MASK : 0) |
                            (w.atomic ? regs::ART_CTRL_PERM_A_MASK : 0) | (w.combine ? regs::ART_CTRL_WC_MASK : 0) |
                            (w.confirmAll ? regs::ART_CTRL_CONF_ALL_MASK : 0) |
                            static_cast<uint32_t>(w.confAt) << regs::ART_CTRL_CONF_AT_LSB);
}

// Write combiner: idle timeout in cycles, and a flush of the open packet.
inline void setCombineTimeout(const CsrWrite& wr, uint16_t cycles) { wr(regs::WC_TIMEOUT, cycles); }
inline void flushCombiner(const CsrWrite& wr) { wr(regs::WC_FLUSH, 1); }

inline void clearWindow(const CsrWrite& wr, unsigned i) { wr(regs::ART_CTRL(i), 0); }

// Membership slot `slot` of this NI: accept tunneled writes sent to multicast LID `mlid` (0: leave).
inline void setMulticastMember(const CsrWrite& wr, unsigned slot, uint16_t mlid) {
  wr(regs::MCAST_LID(slot), mlid ? (mlid | regs::MCAST_LID_VALID_MASK) : 0);
}

// NI-replicated multicast group `g` of this (sending) NI: tunneled writes to `mlid`
// leave as one unicast copy per member, to its node and memory ID. No members:
// writes to the group are refused (UNSUP_CNT). mlid 0: the group entry is off.
struct GroupMember {
  unsigned node;
  uint16_t memid;
};
inline void setReplicatedGroup(const CsrWrite& wr, unsigned g, uint16_t mlid, const std::vector<GroupMember>& members) {
  for (size_t m = 0; m < members.size(); ++m)
    wr(regs::MGRP_MEMBER(g * 4 + static_cast<unsigned>(m)),
       lidOf(members[m].node) | (uint32_t{members[m].memid} << regs::MGRP_MEMBER_MEMID_LSB));
  wr(regs::MGRP_CTRL(g), mlid ? (mlid | static_cast<uint32_t>(members.size()) << regs::MGRP_CTRL_MEMBERS_LSB |
                                 regs::MGRP_CTRL_VALID_MASK)
                              : 0);
}

inline void setMemId(const CsrWrite& wr, unsigned id, const MemRegion& m) {
  wr(regs::MEMID_BASE_LO(id), static_cast<uint32_t>(m.base));
  wr(regs::MEMID_BASE_HI(id), static_cast<uint32_t>(m.base >> 32));
  wr(regs::MEMID_SIZE(id), static_cast<uint32_t>(m.size));
  wr(regs::MEMID_KEY(id), m.key);
  wr(regs::MEMID_CTRL(id), (m.valid ? regs::MEMID_CTRL_VALID_MASK : 0) | (m.read ? regs::MEMID_CTRL_PERM_R_MASK : 0) |
                               (m.write ? regs::MEMID_CTRL_PERM_W_MASK : 0) |
                               (m.atomic ? regs::MEMID_CTRL_PERM_A_MASK : 0));
}

// Injection FIFO f of the DMA engine: a ring of `slots` slots at `base` (slot-aligned)
// in host memory, emptied (head = tail = 0) and enabled. The FIFO must be idle.
// remote: fed by other NIs' remote gets (no doorbells; its tail starts where it is).
inline void setInjFifo(const CsrWrite& wr, unsigned f, uint64_t base, uint16_t slots, bool remote = false) {
  // The tail is set while the FIFO is still doorbell-fed (a doorbell stops a remote-fed one).
  wr(regs::INJ_CTRL(f), 0);
  wr(regs::INJ_BASE_LO(f), static_cast<uint32_t>(base));
  wr(regs::INJ_BASE_HI(f), static_cast<uint32_t>(base >> 32));
  wr(regs::INJ_SIZE(f), slots);
  wr(regs::INJ_TAIL(f), 0);
  wr(regs::INJ_CTRL(f), regs::INJ_CTRL_ENABLE_MASK | regs::INJ_CTRL_RESET_MASK |
                            (remote ? regs::INJ_CTRL_REMOTE_MASK : 0u));
}
// Doorbell: the slots before `tail` are filled.
inline void ringDoorbell(const CsrWrite& wr, unsigned f, uint16_t tail) { wr(regs::INJ_TAIL(f), tail); }
// Drops what is queued (head := tail) and clears an error; the FIFO stays enabled.
inline void resetInjFifo(const CsrWrite& wr, unsigned f, bool remote = false) {
  wr(regs::INJ_CTRL(f), regs::INJ_CTRL_ENABLE_MASK | regs::INJ_CTRL_RESET_MASK |
                            (remote ? regs::INJ_CTRL_REMOTE_MASK : 0u));
}

// Reception FIFO f: a ring of `slots` slots of MaxPayload bytes at `base` (slot-
// aligned) in host memory, emptied (head = tail = 0) and enabled.
// key: the protection key sends into it must carry (0: none).
inline void setRcvFifo(const CsrWrite& wr, unsigned f, uint64_t base, uint16_t slots, uint16_t key = 0) {
  wr(regs::RFIFO_CTRL(f), 0);
  wr(regs::RFIFO_KEY(f), key);
  wr(regs::RFIFO_BASE_LO(f), static_cast<uint32_t>(base));
  wr(regs::RFIFO_BASE_HI(f), static_cast<uint32_t>(base >> 32));
  wr(regs::RFIFO_SIZE(f), slots);
  wr(regs::RFIFO_HEAD(f), 0);
  wr(regs::RFIFO_CTRL(f), regs::RFIFO_CTRL_ENABLE_MASK | regs::RFIFO_CTRL_RESET_MASK);
}
// DMA byte counter i now expects `bytes` (its CNT_ZERO bit cleared): a descriptor
// naming it as injection counter takes off each packet's data bytes as it leaves,
// a packet naming it as reception counter (at its target) as it arrives.
inline void loadCounter(const CsrWrite& wr, unsigned i, uint32_t bytes) { wr(regs::CNT_LOAD(i), bytes); }
// Raw packets to this node (Ethernet frames, IP datagrams from peers' raw sends) land
// in reception FIFO f; with enable false they are dropped and counted (RAW_DROP_CNT).
inline void setRawFifo(const CsrWrite& wr, unsigned f, bool enable = true) {
  wr(regs::RAW_CTRL, (enable ? regs::RAW_CTRL_ENABLE_MASK : 0u) | f << regs::RAW_CTRL_FIFO_LSB);
}
// The consumer took the entries before `head`: their slots are the NI's again.
inline void releaseRcvSlots(const CsrWrite& wr, unsigned f, uint16_t head) { wr(regs::RFIFO_HEAD(f), head); }

}  // namespace ni::driver

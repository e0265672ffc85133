// SPDX-License-Identifier: Apache-2.0
// One NI with stream BFMs on its four ports and a minimal fabric on its credit
// wires: the unit-test bench of nic_top, shared by the tests and the benchmark.
#pragma once
#include <functional>
#include <memory>

#include "address_map.hpp"
#include "axis_bfm.hpp"
#include "driver.hpp"
#include "fabric_pkt.hpp"
#include "nic_model.hpp"
#include "tlp.hpp"

namespace ni::tb {

class NicHarness {
 public:
  static constexpr uint16_t kLid = 5;        // the NI under test
  // Slots our fabric end offers per VC. They must cover the NI's credit loop (a credit
  // taken at the framer's pick comes back once the packet has left whole: about 11
  // cycles with the CRC wait, the beat queue's head and the output register), or a
  // stream of 2-beat packets at 512 bits waits for credits (4 slots: 0.88 beats a cycle).
  static constexpr unsigned kFabCredits = 8;

  NicHarness(unsigned dataBits, VerilatedContext* ctx, std::mt19937_64* rng)
      : nic(makeNic(dataBits, ctx, "nic")),
        bpb(nic->bytesPerBeat()),
        hostIn(bpb, rng),
        hostOut(bpb, rng),
        fabIn(bpb, rng),
        fabOut(bpb, rng) {
    fabIn.setGate([this] { return !fabIn.atPacketStart() || rxCredits[fabIn.nextDest()] > 0; });
    hostIn.setGate([this] { return !gateOnRoom || !hostIn.atPacketStart() || hostReqRoom; });
    toGive[0] = toGive[1] = kFabCredits;
  }

  // Everything that happens around one clock edge; `edge` advances the clock.
  void step(const std::function<void()>& edge) {
    NicIn in;
    in.host[0].inValid = hostIn.offer(&in.host[0].in);
    in.host[0].outReady = hostOut.ready();
    in.fabInValid = fabIn.offer(&in.fabIn);
    in.fabOutReady = fabOut.ready();
    for (unsigned v = 0; v < 2; ++v)
      if (toGive[v]) in.fabTxCredit |= static_cast<uint8_t>(1u << v);
    nic->drive(in);
    const NicOut out = nic->read();
    ++now;
    edge();
    for (unsigned v = 0; v < 2; ++v) {
      if (in.fabTxCredit >> v & 1) --toGive[v];
      if (out.fabRxCredit >> v & 1) ++rxCredits[v];
    }
    hostReqRoom = out.hostReqRoom;
    if (in.host[0].inValid && !out.host[0].inReady && !hostIn.atPacketStart()) ++hostInMidStalls;
    if (in.host[0].inValid && out.host[0].inReady) {
      if (hostIn.atPacketStart()) hostInStarts.push_back(now);
      hostIn.accepted();
    }
    if (in.fabInValid && out.fabInReady) {
      if (fabIn.atPacketStart()) {
        --rxCredits[in.fabIn.dest & 1];
        fabInStarts.push_back(now);
      }
      fabIn.accepted();
    }
    hostOut.observe(out.host[0].outValid, out.host[0].out, now);
    if (out.fabOutValid && in.fabOutReady) ++fabOutBeats;
    if (fabOut.observe(out.fabOutValid, out.fabOut, now)) {
      ++toGive[fabOut.packets().back().dest & 1];
      if (autoAnswer) answer(fabOut.packets().back().bytes);
    }
  }

  // The far end of reliable delivery, for tests about something else: every unicast
  // request that leaves is answered as the receiving NI would (an ACK for a write or
  // a receiving-NI confirmed write, a confirmation for a memory-confirmed write, a UR
  // completion for a read or atomic), so the NI's resend slots never fill up.
  void answer(const Bytes& bytes) {
    const auto p = decodeFabric(bytes);
    if (!p || (p->opcode != kOpTunnelReq && !p->isCont()) || p->dlid >= 0xC000) return;
    const auto t = p->isCont() ? std::optional<Tlp>(makeMWr(0, 0, 0, p->payload)) : decodeTlp(p->payload);
    if (!t) return;
    const bool write = t->kind == TlpKind::MWr || (t->kind == TlpKind::DMWr && (p->tehFlags & kTehConfNi));
    FabricPacket a = answerPacket(kLid, p->dlid, write ? kOpRcAck : kOpTunnelRsp, p->psn);
    if (write) {
      a.syndrome = kAethAck;
    } else if (t->kind == TlpKind::DMWr) {
      a.payload = encodeTlp(makeWriteConfirmation(kNiPeerReqId, t->requester, t->tag, t->addr));
    } else {
      a.payload = encodeTlp(makeCpl(kNiPeerReqId, t->requester, t->tag, CplStatus::UR, 4, t->addr & 0x7F));
    }
    ++answered;
    sendFabric(a);
  }

  // ---- host-side helpers
  void csrWrite(uint32_t off, uint32_t v) {
    hostIn.push(encodeTlp(makeMWr(kCpuReqId, 0, kCsrBase + off, le32(v))));
  }
  driver::CsrWrite writer() {
    return [this](uint32_t off, uint32_t v) { csrWrite(off, v); };
  }
  // Next TLP that left on the host port, nullified ones included.
  bool popHostTlp(Tlp* t, bool* nullified = nullptr) {
    auto& q = hostOut.packets();
    if (q.empty()) return false;
    auto d = decodeTlp(q.front().bytes);
    if (nullified) *nullified = q.front().user;
    q.pop_front();
    if (!d) return false;
    *t = *d;
    return true;
  }
  void sendFabric(const FabricPacket& p) { fabIn.push(encodeFabric(p), p.vl); }
  void sendFabricRaw(const Bytes& b, uint8_t vc) { fabIn.push(b, vc); }

  std::unique_ptr<NicModel> nic;
  unsigned bpb;
  AxisSource hostIn;
  AxisSink hostOut;
  AxisSource fabIn;
  AxisSink fabOut;
  unsigned rxCredits[2] = {0, 0};  // credits the NI granted for its receive buffers
  unsigned toGive[2];              // credits we still owe the NI
  uint64_t now = 0, fabOutBeats = 0;
  bool gateOnRoom = false;   // start host TLPs only with request room, as the root complex does
  bool autoAnswer = true;    // answer each unicast request that leaves (answer())
  uint64_t answered = 0;
  static constexpr uint16_t kNiPeerReqId = 0x0100;
  bool hostReqRoom = true;   // as last seen
  uint64_t hostInMidStalls = 0;  // cycles a started host TLP was held back
  std::vector<uint64_t> hostInStarts, fabInStarts;
};

}  // namespace ni::tb

// SPDX-License-Identifier: Apache-2.0
// Unit test of ni_retx (sequencing, copies and resends) alone: 4 slots, 64 bits.
// Random writes, reads, atomics and confirmed writes (receiving-NI and memory
// confirmation points) to three destinations and a multicast LID; the framer
// side takes packets with random stalls. Two destinations answer through a model
// of the receiving NI's sequence rules (docs/architecture.md#reliable-delivery)
// that loses 10% of the packets and 5% of the answers; the third never answers.
// Checks: PSNs count per destination from 0; every resend is the original packet
// bit for bit; each request to an answering destination is taken exactly once;
// a response's query names its request's requester ID and tag (and a memory-confirmed
// write's pages back);
// every request to the silent one fails (an error completion with the request's
// ID, tag and address for each read, atomic and confirmed write), and the first
// packet to it afterwards carries the resync flag (later ones only after a later
// failure); each receiving-NI confirmed write gets exactly one report, SC with the
// requester's address (tunneled address + its window's page offset) or UR if the
// receiver refused it; an atomic or memory-confirmed write is sent only when no
// other one to its destination awaits its response; multicast passes unsequenced
// and unretained; no more than 4 requests are ever held. Destination 2 is now and
// then not ready (a full reception FIFO): it answers the PSN it expects with RNR
// NAKs, 12 times in a row (more than the resend limit), then takes it (episodes 8
// PSNs apart or more); the sender
// resends that PSN and the ones after it no sooner than RNR_DELAY after the NAK and
// never fails the destination for it.
#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include "Vni_retx.h"
#include "bytes.hpp"
#include "pkg_structs.hpp"
#include "verilated_ports.hpp"
#include "verilated_fixture.hpp"

using namespace ni;
using ni::getField;
using ni::setField;

namespace {

constexpr unsigned kBpb = 8;
constexpr unsigned kSlots = 4;
constexpr uint16_t kSilent = 3;
constexpr uint16_t kGroup = 0xC001;
// LIDs without a PSN sequence (ni_retx has 8 peers, LIDs 1..8): 9 has the index of 1.
constexpr uint16_t kNoPeer[] = {0, 9};
bool hasNoPeer(uint16_t lid) { return lid == kNoPeer[0] || lid == kNoPeer[1]; }
constexpr uint32_t kTimeout = 300;
constexpr unsigned kLimit = 8;
constexpr uint32_t kRnrDelay = 100;
enum Rel : unsigned { kAck = 0, kNakSeq = 1, kRsp = 2, kRefused = 3, kRnr = 4 };

struct Req {
  uint16_t dlid = 0;
  bool np = false;
  tb::TxDesc hdr;  // its descriptor
  Bytes tlp;
  uint64_t back = 0;  // back_page of the header record
};

struct Pkt {
  tb::TxDesc hdr;
  Bytes tlp;
  bool stamp = false;
  uint64_t offered = 0;  // cycle its header was first offered (an offer stands until taken)
  bool cni() const { return tlp[0] == 0x7B && (hdr.flags & 0x04); }  // confirmed by the receiving NI's ACK
  bool cmem() const { return tlp[0] == 0x7B && !cni(); }            // confirmed by the receiving memory
  // Answered by a response: a read, an atomic, a memory-confirmed write.
  bool np() const { return tlp[0] == 0x20 || tlp[0] == 0x6C || cmem(); }
  bool atomic() const { return tlp[0] == 0x6C || cmem(); }  // one per destination in flight
  uint64_t addr() const {
    uint64_t a = 0;
    for (int i = 8; i < 16; ++i) a = a << 8 | tlp[i];
    return a & ~uint64_t{3};
  }
  uint32_t psn() const { return hdr.psn; }
  uint16_t dlid() const { return hdr.dlid; }
  bool sync() const { return hdr.flags & 2; }
};

struct Answer {
  uint64_t at;
  uint16_t lid;
  uint32_t psn;
  Rel kind;
};

class RetxTest : public tb::VerilatedTest {
 protected:
  // A request's descriptor to dlid as ni_wc hands it over (the framer's PSN; flags 0).
  static tb::TxDesc reqHdr(uint16_t dlid) {
    tb::TxDesc d;
    d.dlid = dlid;
    d.stamp = true;
    return d;
  }
  using Dut = tb::VlClocked<Vni_retx>;
  // The block, attached to the fixture (its assertions fail the test).
  std::unique_ptr<Dut> makeDut() {
    auto dut = std::make_unique<Dut>(ctx(), "retx");
    attach(dut.get());
    return dut;
  }
  // The timer tests' request: a posted write of one DW.
  static Bytes oneDwWrite() {
    Bytes tlp(20, 0);
    tlp[0] = 0x60;  // MWr, one DW
    tlp[3] = 1;
    return tlp;
  }
  // A request's descriptor on the header input.
  static void setHdr(Dut& dut, const tb::TxDesc& hdr) { tb::packTxDesc(dut.m.in_hdr_i, 0, hdr); }
  // The timer tests' run: these delays, a reset, the header record of a request to LID 1,
  // and a framer and CPU that are always ready.
  void startRun(Dut& dut, uint32_t timeout, unsigned limit, uint32_t rnrDelay) {
    dut.m.timeout_i = timeout;
    dut.m.limit_i = limit;
    dut.m.rnr_delay_i = rnrDelay;
    reset();
    setHdr(dut, reqHdr(1));
    dut.m.out_hdr_ready_i = 1;
    dut.m.out_beat_ready_i = 1;
    dut.m.fail_ready_i = 1;
  }
  // The TLP's beat at byte offset off; returns whether it is the last one.
  static bool setBeat(Dut& dut, const Bytes& tlp, size_t off) {
    for (unsigned j = 0; j < kBpb; ++j) {
      const bool in = off + j < tlp.size();
      setField(dut.m.in_beat_i, 8 * j, 8, in ? tlp[off + j] : 0);
      setField(dut.m.in_beat_i, 8 * kBpb + j, 1, in);
    }
    const bool last = off + kBpb >= tlp.size();
    setField(dut.m.in_beat_i, 9 * kBpb, 1, last);
    setField(dut.m.in_beat_i, 9 * kBpb + 1, 1, 0);
    return last;
  }
  Req makeReq(uint16_t dlid, unsigned n) {
    auto& r = rng();
    Req q;
    q.dlid = dlid;
    q.np = dlid != kGroup && r() % 100 < 35;
    const bool atomic = q.np && r() % 3 == 0;  // FetchAdd, 8-byte operand
    // Confirmed writes: confirmed by the receiving NI (a write answered by ACK) or by memory (np).
    const bool cni = !q.np && dlid != kGroup && r() % 100 < 25;
    const bool cmem = q.np && !atomic && r() % 3 == 0;
    const unsigned dw = atomic ? 2 : 1 + static_cast<unsigned>(r() % 8);  // at most 32 bytes: 6 beats with the header
    q.tlp = Bytes(16, 0);
    q.tlp[0] = cni || cmem ? 0x7B : atomic ? 0x6C : q.np ? 0x20 : 0x60;
    q.tlp[3] = static_cast<uint8_t>(dw);
    q.tlp[4] = static_cast<uint8_t>(n >> 8);  // requester ID and tag identify the request
    q.tlp[5] = static_cast<uint8_t>(n);
    q.tlp[1] = static_cast<uint8_t>(r() & 0x88);  // T9, T8: a 10-bit tag
    q.tlp[6] = static_cast<uint8_t>(r());
    q.tlp[7] = 0xFF;
    for (int i = 8; i < 16; ++i) q.tlp[i] = static_cast<uint8_t>(r());
    q.tlp[15] &= 0xFC;
    if (q.tlp[0] != 0x20)
      for (unsigned i = 0; i < 4 * dw; ++i) q.tlp.push_back(static_cast<uint8_t>(r()));
    q.hdr = reqHdr(dlid);
    q.hdr.flags = static_cast<uint8_t>((r() & 1) | (cni ? 0x04 : 0) | (cmem ? 0x08 : 0));  // receiver translates, or not
    q.hdr.memid = static_cast<uint8_t>(r());
    q.back = r() & ((uint64_t{1} << 52) - 1);
    q.hdr.backPage = q.back;
    return q;
  }
};

TEST_F(RetxTest, ResendsCopiesUntilAnsweredAndFailsASilentDestination) {
  auto dut = makeDut();
  dut->m.timeout_i = kTimeout;
  dut->m.limit_i = kLimit;
  dut->m.rnr_delay_i = kRnrDelay;
  reset();
  auto& r = rng();

  // Phase 1: 400 requests to 1, 2, the silent 3, the group and LIDs without a PSN
  // sequence (refused at once); phase 2 (once all is answered or failed): 20 more to 1 and 3.
  std::deque<Req> reqs;
  unsigned n = 0;
  for (; n < 400; ++n) {
    const unsigned pick = static_cast<unsigned>(r() % 100);
    reqs.push_back(makeReq(pick < 38 ? 1 : pick < 76 ? 2 : pick < 86 ? kSilent : pick < 90 ? kNoPeer[pick % 2] : kGroup, n));
  }
  std::deque<Req> phase2;
  for (unsigned k = 0; k < 20; ++k, ++n) phase2.push_back(makeReq(k % 2 ? 1 : kSilent, n));

  std::map<uint16_t, uint32_t> nextPsn, expect;   // sender's and receivers' sequences
  std::map<uint16_t, bool> naked;
  std::map<std::pair<uint16_t, uint32_t>, Pkt> original;
  std::map<std::pair<uint16_t, uint32_t>, Req> reqOf;
  std::set<std::pair<uint16_t, uint32_t>> taken, awaited;  // taken by a receiver; reads awaiting a response
  // Expected reports (error completions, confirmations): {status, reqid, tag, requester's address}.
  using Report = std::tuple<unsigned, uint16_t, uint16_t, uint64_t>;
  std::multiset<Report> failWords;
  std::map<std::pair<uint16_t, uint32_t>, bool> refused;  // receiving-NI confirmed writes the receiver refused
  auto reportOf = [](const Pkt& p, unsigned status, uint64_t back) {
    return Report{status, static_cast<uint16_t>(p.tlp[4] << 8 | p.tlp[5]), tlpTag(p.tlp.data(), p.tlp[6]), p.addr() + (back << 12)};
  };
  std::map<std::pair<uint16_t, uint32_t>, uint64_t> backOf;
  std::deque<uint64_t> reqOfBack;  // back_page of each sequenced request, in the order they were taken
  unsigned confs = 0, rnrs = 0;
  std::map<uint16_t, unsigned> notReady;  // RNR NAKs a destination still gives the PSN it expects
  uint32_t nextEpisode = 0;
  // Last RNR NAK delivered per destination: {cycle, PSN} (cleared by a NAK asking for a resend now),
  // and whether a slot it stopped has been resent since.
  std::map<uint16_t, std::pair<uint64_t, uint32_t>> rnrSince;
  std::map<uint16_t, bool> rnrResent;
  uint64_t offerStart = 0;  // since when the header now offered has been offered
  bool offering = false;
  std::deque<Answer> answers;
  std::optional<Req> inHdr;        // request whose header is offered
  std::deque<Req> inBeats;         // beat queue: its head's beats are offered (like ni_wc's queue, before its header is taken)
  size_t inOff = 0;
  bool beatHeld = false;
  std::optional<Pkt> cur;
  unsigned resends = 0, fails = 0, silentSent = 0, groupSent = 0, maxUsed = 0, atomics = 0, noPeerTaken = 0, ghosts = 0;
  bool phase2Started = false, silentSyncSeen = false;
  bool queried = false;  // the answer at the front has been the query since the last cycle
  uint64_t quiet = 0;

  for (uint64_t c = 0; c < 1'000'000; ++c) {
    if (!inHdr && inBeats.size() < 2 && !reqs.empty()) {
      inHdr = reqs.front();
      inBeats.push_back(*inHdr);
      reqs.pop_front();
    }
    dut->m.in_hdr_valid_i = 0;
    if (inHdr) {
      setHdr(*dut, inHdr->hdr);
      dut->m.in_hdr_valid_i = 1;
    }
    dut->m.in_beat_valid_i = 0;
    bool inLast = false;
    beatHeld = !inBeats.empty() && (beatHeld || r() % 100 < 80);  // once offered, held until taken
    if (beatHeld) {
      inLast = setBeat(*dut, inBeats.front().tlp, inOff);
      dut->m.in_beat_valid_i = 1;
    }
    dut->m.out_hdr_ready_i = !cur && r() % 100 < 70;
    dut->m.out_beat_ready_i = cur && r() % 100 < 70;
    dut->m.fail_ready_i = r() % 100 < 50;
    // One answer per cycle; a response only if the sender still awaits it (as ni_fab_rx
    // checks). Like ni_fab_rx at 64 bits, the query stands a cycle before its answer is
    // read (the model's QueryReg): q_hit_o answers it at once, q_held_o and the rest then.
    dut->m.ev_valid_i = 0;
    std::optional<Answer> ans;
    if (!answers.empty() && answers.front().at <= c) {
      const Answer& next = answers.front();
      const bool standing = dut->m.q_lid_i == next.lid && dut->m.q_psn_i == next.psn && queried;
      dut->m.q_lid_i = next.lid;
      dut->m.q_psn_i = next.psn;
      dut->eval();
      const bool want = awaited.count({next.lid, next.psn}) > 0;
      ASSERT_EQ(dut->m.q_hit_o, want) << "response check for " << next.lid << "/" << next.psn << ", seed " << seed();
      queried = true;
      if (standing) {
        ans = next;
        answers.pop_front();
        queried = false;
        ASSERT_EQ(dut->m.q_held_o, want) << "held response check for " << ans->lid << "/" << ans->psn << ", seed " << seed();
      }
    }
    if (ans) {
      const bool want = dut->m.q_held_o;
      if (want) {  // what ni_fab_rx puts into the response: the request's ID and tag, and for
                   // a memory-confirmed write its address's way back
        const std::pair<uint16_t, uint32_t> key{ans->lid, ans->psn};
        const Pkt& o = original.at(key);
        EXPECT_EQ(dut->m.q_cpl_o, uint32_t{o.tlp[4]} << 18 | uint32_t{o.tlp[5]} << 10 | tlpTag(o.tlp.data(), o.tlp[6]))
            << "requester ID and tag for " << ans->lid << "/" << ans->psn << ", seed " << seed();
        EXPECT_EQ(bool(dut->m.q_conf_o), o.cmem()) << "memory-confirmed, seed " << seed();
        if (o.cmem()) EXPECT_EQ(dut->m.q_back_o, backOf.at(key)) << "pages back, seed " << seed();
      }
      if (ans->kind != kRsp || want) {
        dut->m.ev_valid_i = 1;
        dut->m.ev_kind_i = ans->kind;
        dut->m.ev_lid_i = ans->lid;
        dut->m.ev_psn_i = ans->psn;
      }
    }
    dut->eval();
    const bool hdrIn = dut->m.in_hdr_valid_i && dut->m.in_hdr_ready_o;
    const bool beatIn = dut->m.in_beat_valid_i && dut->m.in_beat_ready_o;
    const bool hdrOut = dut->m.out_hdr_valid_o && dut->m.out_hdr_ready_i;
    if (dut->m.out_hdr_valid_o && !offering) offerStart = c;
    offering = dut->m.out_hdr_valid_o && !hdrOut;
    const bool beatOut = dut->m.out_beat_valid_o && dut->m.out_beat_ready_i;
    const bool failOut = dut->m.fail_valid_o && dut->m.fail_ready_i;
    const tb::OwnCpl failWord = tb::unpackOwnCpl(dut->m.fail_o);
    const bool failEv = dut->m.ev_fail_o;
    confs += dut->m.ev_conf_o;
    Pkt h;
    if (hdrOut) {
      h.hdr = tb::unpackTxDesc(dut->m.out_hdr_o);
      h.stamp = h.hdr.stamp;
    }
    Bytes ob;
    bool obLast = false;
    if (beatOut) {
      for (unsigned j = 0; j < kBpb; ++j)
        if (getField(dut->m.out_beat_o, 8 * kBpb + j, 1)) ob.push_back(static_cast<uint8_t>(getField(dut->m.out_beat_o, 8 * j, 8)));
      obLast = getField(dut->m.out_beat_o, 9 * kBpb, 1);
    }
    if (dut->m.ev_valid_i && ans->kind == kRsp) awaited.erase({ans->lid, ans->psn});
    // ni_retx acts on an answer in the cycle after it is reported.
    if (dut->m.ev_valid_i && ans->kind == kRnr) {
      rnrSince[ans->lid] = {c + 1, ans->psn};
      rnrResent[ans->lid] = false;
    }
    if (dut->m.ev_valid_i && ans->kind == kNakSeq) rnrSince.erase(ans->lid);
    maxUsed = std::max<unsigned>(maxUsed, dut->m.used_o);
    cycle();

    if (hdrIn) {
      if (hasNoPeer(inHdr->dlid)) {  // refused as it is taken: CA for what expects an answer
        Pkt q;
        q.hdr = inHdr->hdr;
        q.tlp = inHdr->tlp;
        if (q.np() || q.cni()) failWords.insert(reportOf(q, 4, inHdr->back));
        ++noPeerTaken;
      } else if (inHdr->dlid != kGroup) {
        reqOfBack.push_back(inHdr->back);
      }
      inHdr.reset();
    }
    if (beatIn) {
      beatHeld = false;
      inOff += kBpb;
      if (inLast) {
        inBeats.pop_front();
        inOff = 0;
      }
    }
    if (failOut) {
      const Report got{failWord.status, failWord.reqid, failWord.tag, failWord.addr};
      EXPECT_EQ(failWord.kind, failWord.status == 0 ? tb::OwnKind::Conf : tb::OwnKind::Cpl);
      auto it = failWords.find(got);
      ASSERT_NE(it, failWords.end()) << "report nobody expects: status " << failWord.status << " tag " << int(failWord.tag)
                                     << " addr " << std::hex << failWord.addr << std::dec << ", seed " << seed();
      failWords.erase(it);
    }
    if (failEv) ++fails;
    if (hdrOut) {
      cur = h;
      cur->offered = offerStart;
    }
    if (beatOut) {
      ASSERT_TRUE(cur) << "beat before header";
      cur->tlp.insert(cur->tlp.end(), ob.begin(), ob.end());
      if (!obLast) continue;
      const Pkt p = *cur;
      cur.reset();
      if (p.dlid() == kGroup) {
        EXPECT_TRUE(p.stamp) << "multicast keeps the framer's PSN";
        ++groupSent;
        continue;
      }
      EXPECT_FALSE(p.stamp) << "a sequenced packet carries its own PSN";
      ASSERT_FALSE(hasNoPeer(p.dlid())) << "sent to LID " << p.dlid() << ", which has no PSN sequence, seed " << seed();
      const auto key = std::make_pair(p.dlid(), p.psn());
      auto o = original.find(key);
      if (o == original.end()) {
        ASSERT_EQ(p.psn(), nextPsn[p.dlid()]) << "PSNs count per destination, seed " << seed();
        ++nextPsn[p.dlid()];
        original[key] = p;
        if (p.dlid() == kSilent) {
          ++silentSent;
          if (phase2Started && !silentSyncSeen) {
            EXPECT_TRUE(p.sync()) << "the first packet after the failure resyncs";
            silentSyncSeen = true;
          }
        } else {
          EXPECT_FALSE(p.sync());
        }
        if (p.np()) awaited.insert(key);
        backOf[key] = reqOfBack.front();
        reqOfBack.pop_front();
        if (p.atomic() && p.dlid() != kSilent) {
          // One atomic per destination in flight: the one before it was answered.
          for (const auto& a : awaited)
            EXPECT_FALSE(a.first == p.dlid() && a != key && original[a].atomic())
                << "atomic " << p.psn() << " to " << p.dlid() << " while " << a.second << " is open, seed " << seed();
          ++atomics;
        }
      } else {
        ASSERT_EQ(p.hdr, o->second.hdr) << "a resend differs from its original, seed " << seed();
        ASSERT_EQ(p.tlp, o->second.tlp) << "a resend differs from its original, seed " << seed();
        ++resends;
        const auto w = rnrSince.find(p.dlid());
        if (w != rnrSince.end() && p.offered > w->second.first && p.psn() >= w->second.second) {
          EXPECT_GE(p.offered - w->second.first, kRnrDelay)
              << "resend of " << p.dlid() << "/" << p.psn() << " before RNR_DELAY, seed " << seed();
          // The wait ends for all of them at once: the PSN the NAK named goes first.
          if (!rnrResent[p.dlid()])
            EXPECT_EQ(p.psn(), w->second.second) << "first resend to " << p.dlid() << " after its RNR NAK, seed " << seed();
          rnrResent[p.dlid()] = true;
        }
      }
      if (p.dlid() == kSilent) {
        if ((p.np() || p.cni()) && o == original.end()) failWords.insert(reportOf(p, 4, backOf[key]));  // CA
        continue;
      }
      // The receiving NI: lose 10%; take the next PSN; answer duplicates; NAK a gap once.
      if (r() % 100 < 10) continue;
      const uint16_t d = p.dlid();
      const bool read = p.np();
      const uint64_t at = c + 5 + r() % 60;
      auto answer = [&](uint32_t psn, Rel k) {
        if (r() % 100 >= 5) answers.push_back({at, d, psn, k});
        // Now and then an answer from LID 9 (no PSN sequence, the index of 1) naming 1's
        // latest PSN: it must answer nothing (an ACK would free 1's writes untaken).
        if (d == 1 && r() % 100 < 20) {
          const Rel ghost[] = {kAck, kNakSeq, kRnr, kRefused, kRsp};
          answers.push_back({at + 1, kNoPeer[1], nextPsn[1] - 1, ghost[r() % 5]});
          ++ghosts;
        }
      };
      // Episodes 8 PSNs apart or more, and 40 at most, so that there are two or more: a
      // slot then waits out one of them (lost packets and answers still cost it tries:
      // its timer resends it).
      if (p.psn() == expect[d] && d == 2 && !notReady[d] && p.psn() >= nextEpisode &&
          (r() % 100 < 6 || p.psn() >= nextEpisode + 32)) {
        notReady[d] = 12;
        nextEpisode = p.psn() + 8;
      }
      if (p.psn() == expect[d] && notReady[d]) {
        --notReady[d];
        naked[d] = true;  // what follows is dropped unNAKed until this PSN comes again
        ++rnrs;
        answer(p.psn(), kRnr);
      } else if (p.psn() == expect[d]) {
        ASSERT_TRUE(taken.insert(key).second) << "taken twice, seed " << seed();
        ++expect[d];
        naked[d] = false;
        // A receiving-NI confirmed write is confirmed (SC) or refused (NAK 0x62: UR), once.
        const bool refuse = p.cni() && r() % 100 < 10;
        if (p.cni()) {
          refused[key] = refuse;
          failWords.insert(reportOf(p, refuse ? 1 : 0, backOf[key]));
        }
        answer(p.psn(), read ? kRsp : refuse ? kRefused : kAck);
      } else if (p.psn() < expect[d]) {
        if (read) answer(p.psn(), kRsp);
        else if (refused[key]) answer(p.psn(), kRefused);  // a refused duplicate is refused again
        else answer(p.psn(), kAck);  // its own PSN (ni_fab_rx): the last one taken may be a refused one
      } else if (!naked[d]) {
        naked[d] = true;
        answer(expect[d], kNakSeq);
      }
      std::stable_sort(answers.begin(), answers.end(), [](const Answer& a, const Answer& b) { return a.at < b.at; });
    }
    const bool idle = reqs.empty() && !inHdr && inBeats.empty() && !cur && answers.empty() && dut->m.used_o == 0 &&
                      !dut->m.fail_valid_o;
    quiet = idle ? quiet + 1 : 0;
    if (quiet > 10 && !phase2Started) {
      phase2Started = true;
      reqs = phase2;
      quiet = 0;
    } else if (quiet > 10) {
      break;
    }
  }
  ASSERT_TRUE(phase2Started && quiet > 10) << "did not drain, seed " << seed();
  // Every request to an answering destination was taken once (PSNs are dense per destination).
  for (uint16_t d : {1, 2}) {
    for (uint32_t psn = 0; psn < nextPsn[d]; ++psn)
      EXPECT_TRUE(taken.count({d, psn})) << "request " << d << "/" << psn << " lost, seed " << seed();
  }
  EXPECT_EQ(fails, silentSent + noPeerTaken) << "every request to the silent destination and to no PSN sequence fails";
  EXPECT_GT(noPeerTaken, 5u);
  EXPECT_GT(ghosts, 10u);
  EXPECT_TRUE(failWords.empty()) << failWords.size() << " expected reports (error completions, confirmations) missing";
  EXPECT_GT(confs, 20u) << "receiving-NI confirmations reported";
  EXPECT_TRUE(silentSyncSeen);
  EXPECT_GT(resends, 50u) << "the stimulus must exercise resends";
  EXPECT_GE(rnrs, 24u) << "RNR NAKs given (two episodes or more)";
  EXPECT_GT(groupSent, 10u);
  EXPECT_GT(atomics, 20u);
  EXPECT_EQ(maxUsed, kSlots) << "the slots must fill (back-pressure)";
}

// A read whose response arrives in the very cycle its destination is failed (its timer
// ran out with no resend left) is answered: the CPU gets the response and no error
// completion after it, and the slot is free again. A response that comes after the
// failure finds nothing awaited (ni_fab_rx drops it) and the read ends in one error
// completion. The response is sent at every cycle around the timer's end, so one of
// them meets the failure (found by the formal proof of ni_retx, job retx_slots).
TEST_F(RetxTest, ReadAnsweredInTheCycleItFailsIsAnsweredOnce) {
  constexpr uint32_t kShortTimeout = 40;
  auto dut = makeDut();
  dut->m.timeout_i = kShortTimeout;
  dut->m.limit_i = 0;  // no resend: the first timeout fails the destination
  dut->m.rnr_delay_i = kRnrDelay;
  unsigned raced = 0;
  for (uint32_t delay = kShortTimeout - 4; delay <= kShortTimeout + 4; ++delay) {
    reset();
    Req q;
    q.dlid = 1;
    q.np = true;
    q.tlp = Bytes(16, 0);
    q.tlp[0] = 0x20;  // MRd, one DW
    q.tlp[3] = 1;
    q.tlp[5] = static_cast<uint8_t>(delay);
    q.hdr = reqHdr(1);
    setHdr(*dut, q.hdr);
    // The request: header and its two beats, taken by a framer that is always ready.
    unsigned beat = 0;
    uint64_t sentAt = 0;
    bool sent = false, hit = false;
    unsigned errors = 0;
    dut->m.out_hdr_ready_i = 1;
    dut->m.out_beat_ready_i = 1;
    dut->m.fail_ready_i = 1;
    for (uint64_t c = 0; c < 200; ++c) {
      dut->m.in_hdr_valid_i = !sent && beat == 0;
      dut->m.in_beat_valid_i = beat < 2;
      setBeat(*dut, q.tlp, 8 * beat);
      dut->m.ev_valid_i = 0;
      dut->m.q_lid_i = 1;
      dut->m.q_psn_i = 0;
      dut->eval();
      const bool answerNow = sent && c == sentAt + delay;
      if (answerNow) {
        hit = dut->m.q_held_o;  // ni_fab_rx passes the response only if it is awaited (its query stands)
        dut->m.ev_valid_i = hit;
        dut->m.ev_kind_i = kRsp;
        dut->m.ev_lid_i = 1;
        dut->m.ev_psn_i = 0;
        dut->eval();
      }
      if (dut->m.in_hdr_valid_i && dut->m.in_hdr_ready_o) {
        sent = true;
        sentAt = c;
      }
      if (dut->m.in_beat_valid_i && dut->m.in_beat_ready_o) ++beat;
      errors += dut->m.fail_valid_o && dut->m.fail_ready_i;
      cycle();
    }
    ASSERT_TRUE(sent);
    EXPECT_EQ(errors, hit ? 0u : 1u) << "response after " << delay << " cycles " << (hit ? "delivered" : "dropped");
    EXPECT_EQ(dut->m.used_o, 0u) << "slot freed, response after " << delay << " cycles";
    // The failure is decided in the cycle the timer ends: a response then still counts.
    if (hit && delay >= kShortTimeout) ++raced;
  }
  EXPECT_GE(raced, 1u) << "no response met the failure: the sweep does not cover the race";
}

// Resends to one destination go in PSN order, also when the first PSN was resent last
// (by its timer) and when an RNR NAK stops the later ones: four writes to LID 1, PSN 0
// sent 100 cycles before the others, so its timer resends it first; then a NAK names
// PSN 0 (go back N: 0, 1, 2, 3 again, in that order, not in the order they were last
// sent); then an RNR NAK names PSN 1 (1, 2, 3 again after RNR_DELAY, in order).
TEST_F(RetxTest, ResendsToADestinationGoInPsnOrder) {
  auto dut = makeDut();
  dut->m.timeout_i = 200;
  dut->m.limit_i = kLimit;
  dut->m.rnr_delay_i = kRnrDelay;
  reset();
  const tb::TxDesc hdr = reqHdr(1);
  Bytes tlp(24, 0);
  tlp[0] = 0x60;  // MWr, two DW
  tlp[3] = 2;
  setHdr(*dut, hdr);
  dut->m.out_hdr_ready_i = 1;
  dut->m.out_beat_ready_i = 1;
  dut->m.fail_ready_i = 1;
  unsigned newSent = 0;
  size_t inOff = 0;
  bool outCur = false;
  uint32_t outPsn = 0;
  uint64_t outAt = 0;            // cycle the framer took the header
  std::vector<uint32_t> resent;  // PSNs of resends, in the order they left
  std::vector<uint64_t> resentAt;  // ... and the cycles their headers were taken
  std::set<uint32_t> seen;
  // Runs until cycle `until`, sending a new write at each cycle of `sendAt` (or as
  // soon after as the previous one is in), and an answer event at cycle `evAt`.
  uint64_t c = 0;
  auto run = [&](uint64_t until, const std::vector<uint64_t>& sendAt, uint64_t evAt, Rel kind, uint32_t psn) {
    for (; c < until; ++c) {
      const bool want = newSent < sendAt.size() && c >= sendAt[newSent];
      dut->m.in_hdr_valid_i = want && inOff == 0;
      dut->m.in_beat_valid_i = want;
      const bool last = setBeat(*dut, tlp, inOff);
      dut->m.ev_valid_i = c == evAt;
      dut->m.ev_kind_i = kind;
      dut->m.ev_lid_i = 1;
      dut->m.ev_psn_i = psn;
      dut->eval();
      if (dut->m.out_hdr_valid_o && dut->m.out_hdr_ready_i) {
        outCur = true;
        outAt = c;
        outPsn = tb::unpackTxDesc(dut->m.out_hdr_o).psn;
      }
      if (dut->m.out_beat_valid_o && dut->m.out_beat_ready_i && getField(dut->m.out_beat_o, 9 * kBpb, 1)) {
        ASSERT_TRUE(outCur);
        outCur = false;
        if (!seen.insert(outPsn).second) {
          resent.push_back(outPsn);
          resentAt.push_back(outAt);
        }
      }
      if (dut->m.in_beat_valid_i && dut->m.in_beat_ready_o) {
        inOff = last ? 0 : inOff + kBpb;
        newSent += last;
      }
      cycle();
    }
  };
  run(180, {0, 100, 101, 102}, ~0ull, kAck, 0);
  ASSERT_EQ(newSent, 4u);
  run(260, {}, ~0ull, kAck, 0);  // PSN 0's timer runs out first
  ASSERT_EQ(resent, std::vector<uint32_t>{0}) << "PSN 0 resent by its timer, alone";
  resent.clear();
  run(300, {}, 260, kNakSeq, 0);  // go back N from PSN 0
  EXPECT_EQ(resent, (std::vector<uint32_t>{0, 1, 2, 3})) << "go back N resends in PSN order";
  resent.clear();
  resentAt.clear();
  run(600, {}, 300, kRnr, 1);  // receiver not ready at PSN 1
  ASSERT_EQ(resent.size(), 3u);
  EXPECT_EQ(resent, (std::vector<uint32_t>{1, 2, 3})) << "after an RNR NAK, in PSN order";
  EXPECT_GE(resentAt.front(), 300 + kRnrDelay) << "not before RNR_DELAY";
  run(620, {}, 600, kAck, 3);  // all taken
  EXPECT_EQ(dut->m.used_o, 0u);
}

// Each timer is a subtraction whose sign says whether it ran out (rtl/ni_retx.sv), right
// for delays below 2^31 cycles; RETX_TIMEOUT and RNR_DELAY of 2^31 and more act as
// 2^31 - 1. Without that limit a delay near 2^32 would run out at once. One write to
// LID 1, never answered; an RNR NAK for it in the cases that have one. The resend
// comes when the delay says, or not within 5,000 cycles when the delay is longer.
TEST_F(RetxTest, LongestDelaysDoNotRunOutEarly) {
  struct Case {
    uint32_t timeout, rnrDelay;
    bool rnr;        // an RNR NAK names the write at cycle kRnrAt
    size_t resends;  // within kRun; the first one right after its delay from the send
                     // (from the RNR NAK if there is one)
  };
  constexpr uint64_t kRun = 5000, kRnrAt = 50;
  const Case cases[] = {
      {1000, kRnrDelay, false, 4},  // every 1000 cycles or a few more
      {0xFFFFFFFFu, kRnrDelay, false, 0},
      {0x80000001u, kRnrDelay, false, 0},
      {0x80000000u, kRnrDelay, false, 0},
      {0, kRnrDelay, false, 0},  // 0: never
      {0, 300, true, 1},         // once, after the RNR NAK's wait
      {0, 0xFFFFFFFFu, true, 0},
      {0, 0x80000001u, true, 0},
  };
  auto dut = makeDut();
  const Bytes tlp = oneDwWrite();
  for (const Case& k : cases) {
    startRun(*dut, k.timeout, kLimit, k.rnrDelay);
    size_t inOff = 0;
    bool sent = false;
    uint64_t sentAt = 0;
    std::vector<uint64_t> resendAt;
    for (uint64_t c = 0; c < kRun; ++c) {
      dut->m.in_hdr_valid_i = !sent && inOff == 0;
      dut->m.in_beat_valid_i = !sent;
      const bool last = setBeat(*dut, tlp, inOff);
      dut->m.ev_valid_i = k.rnr && c == kRnrAt;
      dut->m.ev_kind_i = kRnr;
      dut->m.ev_lid_i = 1;
      dut->m.ev_psn_i = 0;
      dut->eval();
      if (dut->m.out_hdr_valid_o && dut->m.out_hdr_ready_i) {
        if (!sent && inOff == 0) sentAt = c;
        else resendAt.push_back(c);
      }
      if (dut->m.in_beat_valid_i && dut->m.in_beat_ready_o) {
        inOff = last ? 0 : inOff + kBpb;
        sent = last;
      }
      cycle();
    }
    ASSERT_TRUE(sent);
    const std::string what = "timeout " + std::to_string(k.timeout) + ", RNR delay " + std::to_string(k.rnrDelay) +
                             (k.rnr ? " after an RNR NAK" : "");
    if (k.resends == 0) {
      EXPECT_TRUE(resendAt.empty()) << what << ": resent after " << (resendAt.empty() ? 0 : resendAt[0] - sentAt)
                                    << " cycles";
      continue;
    }
    ASSERT_EQ(resendAt.size(), k.resends) << what;
    const uint64_t due = k.rnr ? kRnrAt + k.rnrDelay : sentAt + k.timeout;
    EXPECT_GE(resendAt[0], due) << what;
    EXPECT_LE(resendAt[0], due + 10) << what;
  }
}

// A slot's resend count is checked where it is counted, not only when the timer scan
// (rtl/ni_retx.sv, one slot per cycle) passes it: with RETX_LIMIT 1, a write to LID 1
// is resent once by a NAK (go back N); a second NAK right after that resend finds its
// resend spent and resends nothing (the slot then waits for its timer, to fail). The
// first NAK comes at four different cycles, so that the second meets every phase of the
// scan.
TEST_F(RetxTest, ANakAfterTheLastResendResendsNothing) {
  auto dut = makeDut();
  const Bytes tlp = oneDwWrite();
  for (uint64_t firstNak = 20; firstNak < 20 + kSlots; ++firstNak) {
    startRun(*dut, 100000, 1, kRnrDelay);  // no timer runs out within the run
    size_t inOff = 0;
    bool sent = false;
    std::vector<uint64_t> resendAt;
    for (uint64_t c = 0; c < 200; ++c) {
      dut->m.in_hdr_valid_i = !sent && inOff == 0;
      dut->m.in_beat_valid_i = !sent;
      const bool last = setBeat(*dut, tlp, inOff);
      // NAKs for PSN 0: the first at firstNak, the second in the cycle the resend is taken.
      dut->m.ev_valid_i = 0;
      dut->m.ev_kind_i = kNakSeq;
      dut->m.ev_lid_i = 1;
      dut->m.ev_psn_i = 0;
      dut->eval();
      const bool takenNow = dut->m.out_hdr_valid_o && dut->m.out_hdr_ready_i;
      if (c == firstNak || (takenNow && sent && resendAt.empty())) {
        dut->m.ev_valid_i = 1;
        dut->eval();
      }
      if (takenNow && sent) resendAt.push_back(c);
      if (dut->m.in_beat_valid_i && dut->m.in_beat_ready_o) {
        inOff = last ? 0 : inOff + kBpb;
        sent = last;
      }
      cycle();
    }
    ASSERT_TRUE(sent);
    EXPECT_EQ(resendAt.size(), 1u) << "RETX_LIMIT 1, first NAK at cycle " << firstNak;
  }
}

// An answer naming a PSN not sent to its source (a stale or forged ACK or NAK) is
// ignored and reported (ev_unsent_o): as a cumulative ACK it would release writes that
// never arrived. One write to LID 1 (PSN 0), then an ACK of PSN 1 (the next one, not
// sent), an ACK of PSN 0x800 000 (half the sequence ahead), a NAK of PSN 3 and an ACK
// from LID 2 (never sent to): the write stays, its timer resends it, and only the ACK
// of PSN 0 frees its slot.
TEST_F(RetxTest, AnAnswerForAPsnNotSentReleasesNothing) {
  auto dut = makeDut();
  const Bytes tlp = oneDwWrite();
  startRun(*dut, 300, 3, kRnrDelay);
  struct Ans { uint64_t at; uint16_t lid; uint32_t psn; Rel kind; };
  const Ans answers[] = {{40, 1, 1, kAck}, {41, 1, 0x800000, kAck}, {42, 1, 3, kNakSeq}, {43, 2, 0, kAck},
                         {500, 1, 0, kAck}};
  size_t inOff = 0;
  bool sent = false;
  unsigned unsent = 0, resends = 0;
  unsigned usedAfterGhosts = 0;
  for (uint64_t c = 0; c < 600; ++c) {
    dut->m.in_hdr_valid_i = !sent && inOff == 0;
    dut->m.in_beat_valid_i = !sent;
    const bool last = setBeat(*dut, tlp, inOff);
    dut->m.ev_valid_i = 0;
    for (const Ans& a : answers) {
      if (a.at != c) continue;
      dut->m.ev_valid_i = 1;
      dut->m.ev_kind_i = a.kind;
      dut->m.ev_lid_i = a.lid;
      dut->m.ev_psn_i = a.psn;
    }
    dut->eval();
    unsent += dut->m.ev_unsent_o;
    resends += dut->m.ev_retx_o;
    if (c == 100) usedAfterGhosts = dut->m.used_o;
    if (dut->m.in_beat_valid_i && dut->m.in_beat_ready_o) {
      inOff = last ? 0 : inOff + kBpb;
      sent = last;
    }
    cycle();
  }
  ASSERT_TRUE(sent);
  EXPECT_EQ(unsent, 4u) << "each answer for a PSN not sent reported once";
  EXPECT_EQ(usedAfterGhosts, 1u) << "an answer for a PSN not sent released the write";
  EXPECT_GE(resends, 1u) << "the write's timer resends it";
  EXPECT_EQ(dut->m.used_o, 0u) << "the ACK of PSN 0 frees it";
}

// An RNR NAK shows its destination alive: the resends after its wait start the count
// of tries anew. Two writes to LID 1 (PSNs 0 and 1), RETX_LIMIT 2; PSN 0 is RNR-NAKed
// at every other send and the send between is lost, so the writes are resent by their
// timers again and again, each time after an RNR resend. Five such rounds, then an ACK
// of PSN 1: nothing fails (counted across the waits, the tries would pass the limit in
// the third round), and both slots are free.
TEST_F(RetxTest, ResendsAfterAnRnrWaitCountTriesAnew) {
  auto dut = makeDut();
  const Bytes tlp = oneDwWrite();
  constexpr uint32_t kTmo = 200, kLim = 2, kRounds = 5;
  startRun(*dut, kTmo, kLim, 50);
  size_t inOff = 0;
  unsigned taken = 0, sendsOfFirst = 0, fails = 0;
  std::deque<std::pair<uint64_t, Rel>> answers;  // {cycle, kind} for PSN 0 (RNR) or 1 (ACK)
  for (uint64_t c = 0; c < 20000; ++c) {
    dut->m.in_hdr_valid_i = taken < 2 && inOff == 0;
    dut->m.in_beat_valid_i = taken < 2;
    const bool last = setBeat(*dut, tlp, inOff);
    dut->m.ev_valid_i = !answers.empty() && answers.front().first == c;
    if (dut->m.ev_valid_i) {
      dut->m.ev_kind_i = answers.front().second;
      dut->m.ev_lid_i = 1;
      dut->m.ev_psn_i = answers.front().second == kRnr ? 0 : 1;
      answers.pop_front();
    }
    dut->eval();
    if (dut->m.out_hdr_valid_o && dut->m.out_hdr_ready_i && tb::unpackTxDesc(dut->m.out_hdr_o).psn == 0) {
      // Sends of PSN 0: even ones (the original, the timer's resends) are RNR-NAKed, odd
      // ones (the resends after the wait) lost; after the last round the ACK.
      if (sendsOfFirst == 2 * kRounds) answers.push_back({c + 30, kAck});
      else if (sendsOfFirst % 2 == 0) answers.push_back({c + 10, kRnr});
      ++sendsOfFirst;
    }
    fails += dut->m.ev_fail_o;
    if (dut->m.in_beat_valid_i && dut->m.in_beat_ready_o) {
      inOff = last ? 0 : inOff + kBpb;
      taken += last;
    }
    cycle();
  }
  EXPECT_EQ(sendsOfFirst, 2 * kRounds + 1);
  EXPECT_EQ(fails, 0u) << "a destination that answers RNR was failed";
  EXPECT_EQ(dut->m.used_o, 0u);
}

}  // namespace

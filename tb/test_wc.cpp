// SPDX-License-Identifier: Apache-2.0
// Unit test of ni_wc (request queue with the write combiner) alone, at 64 and 512
// bits. Random posted writes through three windows (two combining, one not), with
// runs of contiguous addresses, gaps, page ends, full packets, malformed writes and
// flush requests, arrive with random idles; the framer side takes header records
// and beats with random stalls. Every packet that leaves must equal what the golden
// model (below) makes of the same sequence, byte for byte, in order. With NI-replicated
// multicast groups set, packets to a group's LID must leave once per member, with
// the member's DLID and memory ID. One more test counts the cycles a stream of
// contiguous writes takes to enter.
#include <gtest/gtest.h>

#include <array>
#include <deque>
#include <optional>

#include "Vni_wc.h"
#include "Vni_wc512.h"
#include "bytes.hpp"
#include "pkg_structs.hpp"
#include "verilated_ports.hpp"
#include "verilated_fixture.hpp"
#include "verilated_ports.hpp"

using namespace ni;
using ni::getField;
using ni::setField;

namespace {

constexpr unsigned kMaxPayload = 256;  // as verilated (CMakeLists.txt)

// One tunneled request as ni_host_rx hands it over.
struct Req {
  tb::TxDesc hdr;  // its descriptor as ni_host_rx builds it
  Bytes tlp;   // TLP bytes: 16-byte MWr header + data
  bool wc = false;
  unsigned win = 0;
  uint64_t addr = 0;
  unsigned bytes = 0;
  bool bad = false;  // length mismatch seen at the last beat
};

// What leaves toward the framer.
struct Out {
  tb::TxDesc hdr;  // kind Cont if it continues the packet pushed before it
  Bytes tlp;
  bool bad = false;
  bool cont() const { return hdr.kind == tb::TxKind::Cont; }
};

// Whether two requests' descriptors name the same destination and TEH (all but the
// length and the continuation mark).
bool sameDest(tb::TxDesc a, const tb::TxDesc& b) {
  a.words = b.words;
  a.kind = b.kind;
  return a == b;
}

Bytes mwrTlp(uint64_t addr, const Bytes& data) {
  const unsigned dw = static_cast<unsigned>(data.size() / 4);
  Bytes t(16, 0);
  t[0] = 0x60;
  t[2] = static_cast<uint8_t>((dw >> 8) & 3);
  t[3] = static_cast<uint8_t>(dw);
  t[4] = 0x01;
  t[6] = 0x5A;
  t[7] = dw == 1 ? 0x0F : 0xFF;
  for (int i = 0; i < 8; ++i) t[8 + i] = static_cast<uint8_t>(addr >> (56 - 8 * i));
  t.insert(t.end(), data.begin(), data.end());
  return t;
}

void setWords(tb::TxDesc& hdr, unsigned payloadBytes) { hdr.words = static_cast<uint16_t>((32 + 16 + payloadBytes + 4) / 4); }

// Golden combiner: the rules of docs/architecture.md ("Write combining"), in request order.
class WcModel {
 public:
  WcModel(unsigned maxPayload, std::vector<uint16_t> groupLids) : max_(maxPayload), groups_(std::move(groupLids)) {}
  void request(const Req& r) {
    const bool append = appendable(r);
    if (open_ && !append) flush();
    const uint64_t end = r.addr + r.bytes;
    const bool startsOpen = r.wc && r.bytes < max_ && (end & 0xFFF) != 0;
    if (!append && !startsOpen) {
      out.push_back(Out{r.hdr, r.tlp, r.bad});
      chain_ = false;
      return;
    }
    if (r.bad) {  // a malformed write is taken back: the open packet is as before
      if (!append) chain_ = false;
      return;
    }
    if (append) {
      cur_.tlp.insert(cur_.tlp.end(), r.tlp.begin() + 16, r.tlp.end());
      len_ += r.bytes;
      ++merged;
    } else {
      const bool same = chain_ && r.addr == next_ && sameDest(r.hdr, cur_.hdr);
      open_ = true;
      cur_ = Out{r.hdr, r.tlp, false};
      if (same) cur_.hdr.kind = tb::TxKind::Cont;
      win_ = r.win;
      len_ = r.bytes;
      next_ = r.addr;
    }
    next_ += r.bytes;
    if (len_ >= max_ || (next_ & 0xFFF) == 0) flush();
  }
  void flush() {
    if (!open_) return;
    setWords(cur_.hdr, len_);
    const unsigned dw = (len_ / 4) & 0x3FF;
    cur_.tlp[2] = static_cast<uint8_t>((cur_.tlp[2] & 0xFC) | (dw >> 8));
    cur_.tlp[3] = static_cast<uint8_t>(dw);
    cur_.tlp[7] = len_ > 4 ? 0xFF : 0x0F;
    out.push_back(cur_);
    open_ = false;
    // A run goes on only to a unicast LID that is not an NI-replicated group.
    const uint16_t dlid = cur_.hdr.dlid;
    chain_ = dlid < 0xC000 && std::none_of(groups_.begin(), groups_.end(), [&](uint16_t g) { return g == dlid; });
  }
  std::deque<Out> out;
  unsigned merged = 0;

 private:
  bool appendable(const Req& r) const {
    return open_ && r.wc && r.win == win_ && r.addr == next_ && len_ + r.bytes <= max_ && sameDest(r.hdr, cur_.hdr);
  }
  unsigned max_;
  bool open_ = false;
  bool chain_ = false;  // the last packet out was combined, to a unicast LID
  std::vector<uint16_t> groups_;
  Out cur_;
  unsigned win_ = 0, len_ = 0;
  uint64_t next_ = 0;
};

// NI-replicated groups as the test programs them: LID 8 (window 1's second
// destination) has three members, LID 5 (window 2, not combining) two.
struct Group {
  uint16_t lid;
  std::vector<std::pair<uint16_t, uint16_t>> members;  // {dlid, memid}
};
const std::vector<Group> kGroups = {{8, {{0x21, 0x100}, {0x22, 0x101}, {0x23, 0x102}}}, {5, {{0x31, 0x200}, {0x32, 0x201}}}};

std::deque<Out> replicate(const std::deque<Out>& pkts) {
  std::deque<Out> v;
  for (const auto& p : pkts) {
    const Group* g = nullptr;
    for (const auto& x : kGroups)
      if (p.hdr.dlid == x.lid) g = &x;
    if (!g) {
      v.push_back(p);
      continue;
    }
    for (const auto& [dlid, memid] : g->members) {
      Out c = p;
      c.hdr.dlid = dlid;
      c.hdr.memid = memid;
      v.push_back(c);
    }
  }
  return v;
}

class WcTest : public tb::VerilatedTest {
 protected:
  // MGRP_MEMBER as ni_csr_regs answers it: the entry mbr_idx_o names, in the same cycle.
  // Called after the cycle's last eval (the index depends on registers only).
  std::array<std::pair<uint16_t, uint16_t>, 16> members{};  // {dlid, memid}
  template <class M>
  void serveMembers(M& m) {
    m.mbr_dlid_i = members[m.mbr_idx_o % members.size()].first;
    m.mbr_memid_i = members[m.mbr_idx_o % members.size()].second;
  }
  // Windows 0 and 1 combine, window 2 does not; window 1 has two destinations.
  Req makeReq(uint64_t& next, unsigned& win) {
    auto& r = rng();
    if (r() % 100 < 15) win = static_cast<unsigned>(r() % 3);
    Req q;
    q.win = win;
    q.wc = win != 2;
    unsigned dw = 1 + static_cast<unsigned>(r() % 4);
    const unsigned shape = static_cast<unsigned>(r() % 100);
    if (shape < 10) dw = 1 + static_cast<unsigned>(r() % (kMaxPayload / 4));
    if (shape < 2) dw = kMaxPayload / 4;
    if (r() % 100 < 8) next += 4 * (1 + r() % 8);          // a gap
    if (r() % 100 < 3) next = (next | 0xFFF) + 1 - 4 * (1 + r() % 6);  // run up to a page end
    if (((next & 0xFFF) + 4 * dw) > 0x1000) dw = static_cast<unsigned>((0x1000 - (next & 0xFFF)) / 4);
    q.addr = next;
    q.bytes = 4 * dw;
    next += q.bytes;
    Bytes data(q.bytes);
    for (auto& x : data) x = static_cast<uint8_t>(r());
    q.tlp = mwrTlp(q.addr, data);
    q.hdr = header(win, static_cast<uint8_t>(win == 1 ? 7 + (r() % 100 < 10) : 3 + win), q.bytes);
    q.bad = r() % 100 < 3;
    return q;
  }
  // The descriptor ni_host_rx makes for a write of `bytes` through window win to LID dlid.
  static tb::TxDesc header(unsigned win, uint8_t dlid, unsigned bytes) {
    tb::TxDesc h;
    h.dlid = dlid;
    h.stamp = true;
    h.flags = win == 1;
    h.memid = static_cast<uint16_t>(win);
    setWords(h, bytes);
    return h;
  }
  // Puts request q on the header input (record and combiner fields).
  template <class M>
  static void offerHeader(M& m, const Req& q) {
    tb::packTxDesc(m.in_hdr_i, 0, q.hdr);
    setField(m.in_meta_i, 0, 13, q.bytes);
    setField(m.in_meta_i, 13, 64, q.addr);
    setField(m.in_meta_i, 77, 8, q.win);
    setField(m.in_meta_i, 85, 1, q.wc);
    m.in_hdr_valid_i = 1;
  }
  // Puts the beat of q that starts at TLP byte off on the beat input; true if it is the last.
  template <class M, unsigned kBpb>
  static bool offerBeat(M& m, const Req& q, size_t off) {
    for (unsigned j = 0; j < kBpb; ++j) {
      const bool in = off + j < q.tlp.size();
      setField(m.in_beat_i, 8 * j, 8, in ? q.tlp[off + j] : 0);
      setField(m.in_beat_i, 8 * kBpb + j, 1, in);
    }
    const bool last = off + kBpb >= q.tlp.size();
    setField(m.in_beat_i, 9 * kBpb, 1, last);
    setField(m.in_beat_i, 9 * kBpb + 1, 1, last && q.bad);
    m.in_beat_valid_i = 1;
    return last;
  }

  template <class M, unsigned kBpb>
  void combinesLikeTheModel(unsigned nReqs, unsigned flushPct, bool groups);
  template <class M>
  uint64_t cyclesToTake(tb::VlClocked<M>& dut, const std::vector<Req>& reqs);
};

// Offers reqs back to back to dut (attached, out of reset; a header at most two ahead of
// its beats, as from ni_host_rx; every output ready) and returns the cycles until the
// last beat is in. Leaves the inputs idle.
template <class M>
uint64_t WcTest::cyclesToTake(tb::VlClocked<M>& dut, const std::vector<Req>& reqs) {
  constexpr unsigned kBpb = 8;  // both models are 64 bits wide
  M& m = dut.m;
  m.timeout_i = 0xFFFF;
  size_t hdrs = 0, beats = 0, off = 0;  // headers in, TLPs whose beats are all in
  const uint64_t start = cycles();
  while (beats < reqs.size()) {
    m.in_hdr_valid_i = 0;
    m.in_beat_valid_i = 0;
    if (hdrs < reqs.size() && hdrs - beats < 2) offerHeader(m, reqs[hdrs]);
    const bool last = beats < hdrs && offerBeat<M, kBpb>(m, reqs[beats], off);
    m.out_hdr_ready_i = 1;
    m.out_beat_ready_i = 1;
    dut.eval();
    const bool hdrIn = m.in_hdr_valid_i && m.in_hdr_ready_o;
    const bool beatIn = m.in_beat_valid_i && m.in_beat_ready_o;
    serveMembers(m);
    cycle();
    hdrs += hdrIn;
    if (beatIn) off = last ? (++beats, 0) : off + kBpb;
  }
  m.in_hdr_valid_i = 0;
  m.in_beat_valid_i = 0;
  return cycles() - start;
}

// Rate of combining at 64 bits: 24 contiguous 8-byte writes (3 beats each) through a
// combining window enter at a beat every cycle: every write but the first continues the
// open packet, decided while the write before it enters (docs/architecture.md).
TEST_F(WcTest, ContiguousWritesEnterABeatEveryCycle) {
  std::vector<Req> reqs;
  for (unsigned i = 0; i < 24; ++i) {
    Req q;
    q.wc = true;
    q.addr = 0x20000 + 8 * i;
    q.bytes = 8;
    q.tlp = mwrTlp(q.addr, Bytes(8, static_cast<uint8_t>(i)));
    q.hdr = header(0, 3, q.bytes);
    reqs.push_back(q);
  }
  auto dut = std::make_unique<tb::VlClocked<Vni_wc>>(ctx(), "wc");
  attach(dut.get());
  reset();
  // The skid register takes the first two beats at once; the third waits until the
  // first header has passed the input queue and the decision register (2 cycles) and
  // its first beat is taken, then a beat enters every cycle.
  EXPECT_EQ(cyclesToTake(*dut, reqs), 24u * 3 + 1);
}

template <class M, unsigned kBpb>
void WcTest::combinesLikeTheModel(unsigned nReqs, unsigned flushPct, bool groups) {
  constexpr unsigned kBeatBits = 9 * kBpb + 2;
  auto dut = std::make_unique<tb::VlClocked<M>>(ctx(), "wc");
  attach(dut.get());
  dut->m.timeout_i = 0xFFFF;  // packets close by the rules below, not by time
  // Groups 1 and 3 of the table (0 and 2 stay invalid).
  for (unsigned k = 0; groups && k < kGroups.size(); ++k) {
    const unsigned g = 1 + 2 * k;
    dut->m.grp_valid_i |= 1u << g;
    setField(dut->m.grp_lid_i, 16 * g, 16, kGroups[k].lid);
    setField(dut->m.grp_members_i, 3 * g, 3, kGroups[k].members.size());
    for (unsigned m = 0; m < kGroups[k].members.size(); ++m) {
      members[4 * g + m] = kGroups[k].members[m];
    }
  }
  reset();

  // Stimulus, and the model fed in the order the DUT sees requests and flushes.
  std::deque<Req> reqs;
  uint64_t next = 0x10000 + 4 * (rng()() % 1024);
  unsigned win = 0;
  for (unsigned i = 0; i < nReqs; ++i) reqs.push_back(makeReq(next, win));
  std::vector<uint16_t> groupLids;
  for (const auto& g : kGroups)
    if (groups) groupLids.push_back(g.lid);
  WcModel model(kMaxPayload, groupLids);
  std::deque<Req> hdrSent;     // headers accepted, beats not all sent
  size_t beatOff = 0;          // bytes of hdrSent.front() sent
  std::deque<Out> got;
  std::optional<Out> cur;      // packet being read on the framer side
  uint64_t lastActivity = 0;

  for (uint64_t c = 0; c < 400000; ++c) {
    auto& r = rng();
    const bool allIn = reqs.empty() && hdrSent.empty();
    // A flush request, now and then, and once at the end.
    dut->m.flush_i = (r() % 1000 < flushPct) || (allIn && c == lastActivity + 5);
    // Header of the next request (at most two ahead of its beats, as from ni_host_rx).
    dut->m.in_hdr_valid_i = 0;
    if (!reqs.empty() && hdrSent.size() < 2 && r() % 100 < 70) offerHeader(dut->m, reqs.front());
    // Beats of the oldest request whose header went in. As ni_host_rx does at 64 bits,
    // a first beat may also come with its header, which then goes in only if the beat does.
    dut->m.in_beat_valid_i = 0;
    bool lastBeat = false;
    const bool withHdr = hdrSent.empty() && dut->m.in_hdr_valid_i && r() % 100 < 50;
    if ((!hdrSent.empty() || withHdr) && r() % 100 < 80)
      lastBeat = offerBeat<M, kBpb>(dut->m, withHdr ? reqs.front() : hdrSent.front(), beatOff);
    dut->m.out_hdr_ready_i = !cur && r() % 100 < 70;
    dut->m.out_beat_ready_i = cur && r() % 100 < 70;
    dut->eval();
    if (withHdr && dut->m.in_beat_valid_i && !dut->m.in_beat_ready_o) {
      dut->m.in_hdr_valid_i = 0;
      dut->m.in_beat_valid_i = 0;
      dut->eval();
    }
    const bool hdrIn = dut->m.in_hdr_valid_i && dut->m.in_hdr_ready_o;
    const bool beatIn = dut->m.in_beat_valid_i && dut->m.in_beat_ready_o;
    const bool hdrOut = dut->m.out_hdr_valid_o && dut->m.out_hdr_ready_i;
    const bool beatOut = dut->m.out_beat_valid_o && dut->m.out_beat_ready_i;
    Out h;
    if (hdrOut) {
      h.hdr = tb::unpackTxDesc(dut->m.out_hdr_o);
    }
    Bytes ob;
    bool obLast = false, obBad = false;
    if (beatOut) {
      for (unsigned j = 0; j < kBpb; ++j)
        if (getField(dut->m.out_beat_o, 8 * kBpb + j, 1)) ob.push_back(static_cast<uint8_t>(getField(dut->m.out_beat_o, 8 * j, 8)));
      obLast = getField(dut->m.out_beat_o, 9 * kBpb, 1);
      obBad = getField(dut->m.out_beat_o, 9 * kBpb + 1, 1);
    }
    serveMembers(dut->m);
    cycle();
    // The model takes requests as their headers go in; a flush applies after every
    // request whose header went in up to and including its cycle.
    if (hdrIn) {
      model.request(reqs.front());
      hdrSent.push_back(reqs.front());
      reqs.pop_front();
      lastActivity = c;
    }
    if (dut->m.flush_i) model.flush();
    if (beatIn) {
      beatOff += kBpb;
      if (lastBeat) {
        hdrSent.pop_front();
        beatOff = 0;
      }
      lastActivity = c;
    }
    if (hdrOut) cur = h;
    if (beatOut) {
      ASSERT_TRUE(cur) << "a beat left before its header record, cycle " << c;
      cur->tlp.insert(cur->tlp.end(), ob.begin(), ob.end());
      ASSERT_TRUE(obLast || ob.size() == kBpb) << "a beat with holes before the last one";
      if (obLast) {
        cur->bad = obBad;
        got.push_back(*cur);
        cur.reset();
      }
    }
    // Done when nothing is offered any more (replicated full packets take a while).
    const bool outIdle = !dut->m.out_hdr_valid_o && !dut->m.out_beat_valid_o;
    if (allIn && !cur && outIdle && c > lastActivity + 50) break;
  }
  const std::deque<Out> want = groups ? replicate(model.out) : model.out;
  // Packet by packet first: the first difference says more than a count.
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    ASSERT_EQ(got[i].hdr, want[i].hdr) << "packet " << i << " header, seed " << seed();
    ASSERT_EQ(got[i].tlp.size(), want[i].tlp.size()) << "packet " << i << " length, seed " << seed();
    ASSERT_EQ(got[i].tlp, want[i].tlp) << "packet " << i << " differs at byte "
                                       << firstDifference(got[i].tlp, want[i].tlp) << ", seed " << seed();
    ASSERT_EQ(got[i].bad, want[i].bad) << "packet " << i << ", seed " << seed();
  }
  ASSERT_EQ(got.size(), want.size()) << "seed " << seed();
  EXPECT_GT(model.merged, nReqs / 4) << "the stimulus must exercise combining";
  EXPECT_GT(std::count_if(want.begin(), want.end(), [](const Out& o) { return o.cont(); }), 10)
      << "the stimulus must exercise continuations";
  if (groups) EXPECT_GT(want.size(), model.out.size() + nReqs / 20) << "the stimulus must exercise replication";
}

TEST_F(WcTest, CombinesAndReplicatesLikeTheModelAt64Bits) { combinesLikeTheModel<Vni_wc, 8>(3000, 10, true); }
TEST_F(WcTest, CombinesAndReplicatesLikeTheModelAt512Bits) { combinesLikeTheModel<Vni_wc512, 64>(3000, 10, true); }
TEST_F(WcTest, NoFlushRequestsNoGroupsAt64Bits) { combinesLikeTheModel<Vni_wc, 8>(2000, 0, false); }

}  // namespace

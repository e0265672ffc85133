// SPDX-License-Identifier: Apache-2.0
// Unit test of ni_dma_inj (the DMA injection engine) alone, at 64, 128, 256 and 512
// bits. A host memory model answers the engine's reads after random delays (so
// completions of different reads come back out of order) and now and then refuses
// one; a producer per injection FIFO writes descriptors, with their data inline or
// in memory, rings doorbells at random moments, and the packets the engine hands on
// are checked byte for byte against the golden packetization (sim/dma.hpp), a
// message's packets back to back and in ring order per FIFO; local copies come out
// of the host-port output as MWr TLPs to the memory ID's region, raw datagrams from
// the raw-packet output as whole IB raw packets, remote gets as one packet per
// descriptor slot. Counters, heads, the stop of a FIFO on each kind of bad descriptor
// and its reset are checked too, and a remote-fed FIFO filled by pushes.
#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <map>
#include <set>

#include "Vni_dma_inj.h"
#include "Vni_dma_inj128.h"
#include "Vni_dma_inj256.h"
#include "Vni_dma_inj512.h"
#include "Vni_dma_inj_mtu4096.h"
#include "axis_bfm.hpp"
#include "dma.hpp"
#include "pkg_structs.hpp"
#include "verilated_fixture.hpp"
#include "verilated_ports.hpp"

using namespace ni;
using ni::getField;
using ni::setField;

namespace {

constexpr unsigned kFifos = 8, kMaxPayload = 256, kSlot = 64;
constexpr uint16_t kLid = 0x0007, kReqId = 0x0100;
// Memory IDs for local copies: 0..12 valid and writable, 13 not valid, 14 not writable,
// 15 valid and writable; each 32 pages at page 0x40000 + 0x100 * id. Sources named by
// memory ID (flag src_mid) use ID 11, 32 MiB large; ID 12 is not readable.
constexpr unsigned kMemIds = 16, kMemPages = 32, kCopyIds = 13, kSrcId = 11, kSrcIdPages = 0x2000, kNoReadId = 12;
constexpr uint64_t memBase(unsigned id) { return (0x40000ull + 0x100ull * id) << 12; }

struct Expected {
  // Which output: a packet for the request path, a local copy's TLP (host port), a raw packet.
  enum class Port { Req, Local, Raw };
  struct Out {
    Port port = Port::Req;
    Bytes bytes;
  };
  unsigned fifo = 0;
  std::deque<Out> pkts;
};

// kMp: the engine's MaxPayload (its reads, and the completions that answer them, up
// to that many bytes: 4096 gives completions of 512 beats at 64 bits).
template <class M, unsigned kBpb, unsigned kMp = kMaxPayload>
class Bench {
 public:
  static constexpr unsigned kMaxPayload = kMp;
  Bench(tb::VerilatedTest* t, VerilatedContext* ctx, std::mt19937_64* rng)
      : t_(t), rng_(rng), dut_(ctx, "dma_inj"), cpl_(kBpb, rng, 0.2) {}
  tb::VlClocked<M>& dut() { return dut_; }

  struct Ring {
    uint64_t base = 0;
    uint16_t size = 0;
    uint16_t tail = 0;        // producer's tail (rung or not)
    uint16_t rung = 0;        // last tail written to the NI
  };
  Ring ring[kFifos];
  std::map<uint64_t, uint8_t> mem;
  std::set<uint64_t> badPages;  // reads touching these 4 KiB pages are refused (UR)
  // Reads touching these pages are answered with their data, the completion's last beat
  // marked bad (s_cpl_tuser): a malformed completion, as ni_host_rx passes one on.
  std::set<uint64_t> stompPages;
  std::deque<Expected> expect[kFifos];
  std::map<unsigned, uint64_t> injCnt;   // bytes the engine reported per counter
  std::map<unsigned, uint64_t> wantCnt;  // bytes the descriptors asked to count
  std::map<unsigned, uint64_t> locCnt, wantLoc;  // local copies' reception counters
  unsigned errEvents = 0, packets = 0, stomped = 0;
  unsigned rtsEvents = 0, wantRts = 0;  // sends that left as an RTS: seen, expected
  RndvSelect sel;                       // protocol selection (the RNDV_* registers)
  double outStall = 0.3, rdStall = 0.2;
  // Stray completions a hostile or broken host adds: one carrying a read's tag with
  // more data than it asked for, ahead of the real one, and one longer than any read
  // after it. The engine must drop and count each (ev_cpl_unexp_o) and lose nothing.
  double strayRate = 0;
  unsigned straysSent = 0, unexpEvents = 0;
  unsigned minLat = 8, maxLat = 60;

  void write(uint64_t a, const Bytes& b) {
    for (size_t i = 0; i < b.size(); ++i) mem[a + i] = b[i];
  }
  Bytes read(uint64_t a, size_t n) {
    Bytes b(n);
    for (size_t i = 0; i < n; ++i) {
      auto it = mem.find(a + i);
      b[i] = it == mem.end() ? 0 : it->second;
    }
    return b;
  }

  void setRing(unsigned f, uint64_t base, uint16_t size) {
    ring[f] = Ring{base, size, 0, 0};
    setField(dut_.m.base_i, 64 * f, 64, base);
    setField(dut_.m.size_i, 16 * f, 16, size);
    dut_.m.enable_i |= 1u << f;
    sizeWritten_ = true;
  }
  void setRndv(const RndvSelect& s) {
    sel = s;
    dut_.m.rndv_thresh_i = s.threshold;
  }
  void setCplIdle(double p) { cpl_.setIdle(p); }
  // The block keeps the memory IDs' regions in a table written as MEMID_CTRL's write
  // commits one: an entry per cycle. While the bench runs, step() writes the next
  // queued one.
  static uint32_t memPages(unsigned id) { return id == kSrcId ? kSrcIdPages : kMemPages; }
  void setMemBase(unsigned id, uint64_t base) { memWrites_.push_back({id, base}); }
  void setMemIds() {  // before the bench runs: each entry clocked in at once
    auto& m = dut_.m;
    for (unsigned id = 0; id < kMemIds; ++id) {
      putMemWrite({id, memBase(id)});
      dut_.edgeAlone();
    }
    m.mem_we_i = 0;
    m.mem_valid_i = 0xFFFF & ~(1u << 13);
    m.mem_perm_w_i = 0xFFFF & ~(1u << 14);
    m.mem_perm_r_i = 0xFFFF & ~(1u << kNoReadId);
  }
  uint16_t head(unsigned f) const { return static_cast<uint16_t>(getField(dut_.m.head_o, 16 * f, 16)); }
  bool err(unsigned f) const { return dut_.m.err_o >> f & 1; }
  DmaErr code(unsigned f) const { return static_cast<DmaErr>(dut_.m.err_code_o >> (4 * f) & 0xF); }
  unsigned freeSlots(unsigned f) const {
    const Ring& r = ring[f];
    const unsigned used = (r.tail + r.size - head(f)) % r.size;
    return r.size - 1 - used;
  }

  // Writes a descriptor (and its inline data) at the producer's tail; expects its packets.
  void produce(unsigned f, DmaDescriptor d, const Bytes& data, bool expectPackets = true) {
    Ring& r = ring[f];
    Bytes slots = d.encode();
    slots.resize(kSlot, 0);
    if (d.isInline() && d.slots > 1) {
      Bytes in = data;
      in.resize((d.slots - 1) * kSlot, 0);
      slots.insert(slots.end(), in.begin(), in.end());
    } else {
      write((d.flags & kDescSrcMid) ? memBase(d.srcMid) + d.src : d.src, data);
    }
    for (unsigned s = 0; s * kSlot < slots.size(); ++s) {
      const uint16_t at = (r.tail + s) % r.size;
      write(r.base + uint64_t{at} * kSlot, Bytes(slots.begin() + s * kSlot, slots.begin() + (s + 1) * kSlot));
    }
    r.tail = (r.tail + std::max<unsigned>(d.slots, 1)) % r.size;
    if (expectPackets) expectMessage(f, d, data);
  }
  // The packets, counts and RTS events message d of FIFO f is expected to give.
  void expectMessage(unsigned f, const DmaDescriptor& d, const Bytes& data) {
    Expected e;
    e.fifo = f;
    if (d.isCopy()) {
      for (auto& t : dmaCopyTlps(d, data, kReqId, kMaxPayload, memBase(d.qid)))
        e.pkts.push_back({Expected::Port::Local, t});
      if (d.flags & kDescRcvCnt) wantLoc[d.rcvCnt] += d.len;
    } else {
      for (auto& p : dmaPackets(d, data, kLid, kReqId, kMaxPayload, sel))
        e.pkts.push_back({d.isRaw() ? Expected::Port::Raw : Expected::Port::Req, expectedBytes(p)});
    }
    expect[f].push_back(std::move(e));
    // An RTS counts nothing: the data it announces is counted when it leaves.
    if (sel.rendezvous(d)) ++wantRts;
    else if (d.flags & kDescInjCnt) wantCnt[d.injCnt] += d.len;
  }
  void doorbell(unsigned f) { doorbell(f, ring[f].tail); }
  void doorbell(unsigned f, uint16_t tail) {
    ring[f].rung = tail;
    ringBell(f, tail);
  }
  // A doorbell as a register write brings it: one a cycle (tail_i names one slot), so
  // a second in the same cycle waits for the next (endCycle), and it comes a cycle after
  // the ring's size at the earliest (INJ_SIZE's register, then the engine's).
  void ringBell(unsigned f, uint16_t tail) {
    if (dut_.m.tail_we_i || sizeWritten_) {
      bells_.push_back({f, tail});
      return;
    }
    dut_.m.tail_i = tail;
    dut_.m.tail_we_i = 1u << f;
  }
  void resetFifo(unsigned f) { dut_.m.reset_i |= 1u << f; }
  // A remote-fed FIFO: the receiver has written one more descriptor at its tail.
  void push(unsigned f) { dut_.m.push_i |= 1u << f; }

  bool idle() const {
    if (!pendingCpl_.empty() || !cplInFlight_.empty() || !cur_.bytes.empty() || !loc_.empty() || !raw_.empty() ||
        !bells_.empty())
      return false;
    for (unsigned f = 0; f < kFifos; ++f) if (!expect[f].empty()) return false;
    return true;
  }

  // One cycle: memory reads and completions, packet capture, counters.
  void step() {
    auto& m = dut_.m;
    const uint64_t now = t_cycles();
    m.mem_we_i = 0;
    if (!memWrites_.empty()) {
      putMemWrite(memWrites_.front());
      memWrites_.pop_front();
    }
    m.rd_ready_i = !chance(rdStall);
    // Completions whose time has come go to the stream source (in that order).
    for (auto it = pendingCpl_.begin(); it != pendingCpl_.end();) {
      if (it->first <= now) {
        cpl_.push(it->second.bytes);
        cplInFlight_.push_back(it->second);
        it = pendingCpl_.erase(it);
      } else {
        ++it;
      }
    }
    Beat b;
    const bool offered = cpl_.offer(&b);
    m.s_cpl_tvalid = offered;
    if (offered) {
      toPort(m.s_cpl_tdata, b.data.data(), kBpb);
      m.s_cpl_tkeep = b.keep;
      m.s_cpl_tlast = b.last;
      m.s_cpl_tuser = b.last && cplInFlight_.front().stomp;
    }
    // As ni_retx: a packet's first beat is taken with its header or after it.
    m.out_hdr_ready_i = !chance(outStall);
    m.out_beat_ready_i = !chance(outStall) && (hdrTaken_ || m.out_hdr_ready_i);
    m.loc_beat_ready_i = !chance(outStall);
    // As ni_fab_tx: a raw packet's header and first beat are taken together, its beats after.
    m.raw_hdr_ready_i = !chance(outStall);
    m.raw_beat_ready_i = rawTaken_ || m.raw_hdr_ready_i;
    dut_.eval();

    if (m.rd_valid_o && m.rd_ready_i) {
      const uint64_t a = m.rd_addr_o;
      const unsigned n = m.rd_bytes_o;
      const uint8_t tag = m.rd_tag_o;
      EXPECT_EQ(a % 4, 0u);
      EXPECT_TRUE(n > 0 && n <= kMaxPayload) << n;
      EXPECT_EQ(a >> 12, (a + n - 1) >> 12) << "read crosses a 4 KiB page";
      EXPECT_EQ(outstanding_.count(tag), 0u) << "tag reused while outstanding";
      outstanding_.insert(tag);
      bool bad = badPages.count(a >> 12) || badPages.count((a + n - 1) >> 12);
      const Tlp c = bad ? makeCpl(0, kReqId, tag, CplStatus::UR, n & 0xFFF, a & 0x7F)
                        : makeCplD(0, kReqId, tag, a, read(a, n));
      // A refusal comes late, after the data of reads issued before it has gone out.
      const uint64_t due = now + (bad ? maxLat + 200 : minLat + (*rng_)() % (maxLat - minLat + 1));
      const bool stomp = stompPages.count(a >> 12) || stompPages.count((a + n - 1) >> 12);
      pendingCpl_.emplace(due, Cpl{encodeTlp(c), false, stomp});
      if (chance(strayRate)) {
        const unsigned more = 4 * (1 + (*rng_)() % 16);
        pendingCpl_.emplace(due - 1, Cpl{encodeTlp(makeCplD(0, kReqId, tag, a, Bytes(n + more, 0xEE))), true});
        ++straysSent;
      }
      if (chance(strayRate)) {
        const uint8_t any = static_cast<uint8_t>(0x80 | (*rng_)() % 16);
        const unsigned len = kMaxPayload + 4 * (1 + (*rng_)() % 64);
        pendingCpl_.emplace(due + 1, Cpl{encodeTlp(makeCplD(0, kReqId, any, 0, Bytes(len, 0xDD))), true});
        ++straysSent;
      }
      ++reads;
    }
    if (offered && m.s_cpl_tready) {
      if (b.last) {
        // The tag of this completion is free again once its last beat is in.
        if (!cplInFlight_.front().stray) outstanding_.erase(cplInFlight_.front().bytes[10]);
        cplInFlight_.pop_front();
      }
      cpl_.accepted();
    }
    if (m.out_hdr_valid_o && m.out_hdr_ready_i) {
      EXPECT_TRUE(cur_.bytes.empty() && !hdrTaken_) << "header before the last packet's beats";
      const tb::TxDesc d = tb::unpackTxDesc(m.out_hdr_o);
      EXPECT_TRUE(d.kind == tb::TxKind::Req && d.stamp) << "a request, the framer's PSN";
      hdr_ = tb::txDescHeader(d, kLid);
      hdrTaken_ = true;
    }
    if (m.out_beat_valid_o && m.out_beat_ready_i) {
      EXPECT_TRUE(hdrTaken_) << "beat before its header";
      if (takeBeat(m.out_beat_o, cur_.bytes, Expected::Port::Req, hdr_)) {
        cur_ = tb::Packet{};
        hdrTaken_ = false;
      }
    }
    if (m.raw_hdr_valid_o && m.raw_hdr_ready_i) {
      EXPECT_TRUE(cur_.bytes.empty() && !hdrTaken_ && raw_.empty() && !rawTaken_) << "raw header inside a packet";
      EXPECT_TRUE(tb::unpackTxDesc(m.out_hdr_o).kind == tb::TxKind::Raw) << "raw header without its mark";
      rawTaken_ = true;
    }
    if (m.raw_beat_valid_o && m.raw_beat_ready_i) {
      EXPECT_TRUE(rawTaken_) << "raw beat before its header";
      if (takeBeat(m.out_beat_o, raw_, Expected::Port::Raw)) {
        raw_.clear();
        rawTaken_ = false;
      }
    }
    if (m.loc_beat_valid_o && m.loc_beat_ready_i) {
      EXPECT_TRUE(cur_.bytes.empty() && !hdrTaken_) << "a copy's TLP inside a fabric packet";
      if (takeBeat(m.loc_beat_o, loc_, Expected::Port::Local)) loc_.clear();
    }
    if (m.loc_cnt_valid_o) locCnt[m.loc_cnt_id_o] += m.loc_cnt_bytes_o;
    if (m.inj_cnt_valid_o) injCnt[m.inj_cnt_id_o] += m.inj_cnt_bytes_o;
    if (m.ev_err_o) ++errEvents;
    if (m.ev_cpl_unexp_o) ++unexpEvents;
    if (m.ev_rts_o) ++rtsEvents;
  }
  // Inputs that are pulses return to 0 after the cycle.
  void endCycle() {
    sizeWritten_ = false;
    dut_.m.tail_we_i = 0;
    dut_.m.reset_i = 0;
    dut_.m.push_i = 0;
    if (!bells_.empty()) {
      ringBell(bells_.front().first, bells_.front().second);
      bells_.pop_front();
    }
  }

  uint64_t reads = 0;
  std::function<uint64_t()> t_cycles;

 private:
  std::deque<std::pair<unsigned, uint16_t>> bells_;  // doorbells waiting for their cycle
  bool sizeWritten_ = false;                          // setRing in this cycle
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(*rng_) < p; }

  // A packet (or a copy's TLP) that came out whole.
  void checkOut(Expected::Port port, const Bytes& bytes) {
    ++packets;
    // The packet continues the message in progress, or starts one at the front of a FIFO.
    int from = -1;
    if (inMsg_ >= 0) {
      from = inMsg_;
    } else {
      for (unsigned f = 0; f < kFifos; ++f) {
        if (!expect[f].empty() && expect[f].front().pkts.front().bytes == bytes) from = static_cast<int>(f);
      }
    }
    ASSERT_GE(from, 0) << "packet #" << packets << " matches no FIFO's next message\n" << dump(bytes);
    Expected& e = expect[from].front();
    ASSERT_FALSE(e.pkts.empty());
    EXPECT_EQ(port, e.pkts.front().port) << "packet #" << packets << " left by the wrong port";
    EXPECT_EQ(bytes, e.pkts.front().bytes)
        << "FIFO " << from << " packet #" << packets << " differs\n" << dump(bytes);
    e.pkts.pop_front();
    if (e.pkts.empty()) {
      expect[from].pop_front();
      inMsg_ = -1;
    } else {
      inMsg_ = from;
    }
  }
  // One beat {bad, last, keep, data} of an output into `into`. At the last beat the
  // packet (prefix + into) is checked, or counted if stomped (a read failed under it:
  // the receiver drops it). Returns whether the packet ended.
  template <class P>
  bool takeBeat(const P& beat, Bytes& into, Expected::Port port, const Bytes& prefix = {}) {
    for (unsigned j = 0; j < kBpb; ++j)
      if (getField(beat, 8 * kBpb + j, 1)) into.push_back(static_cast<uint8_t>(getField(beat, 8 * j, 8)));
    if (!getField(beat, 9 * kBpb, 1)) return false;
    if (getField(beat, 9 * kBpb + 1, 1)) {
      ++stomped;
    } else {
      Bytes whole = prefix;
      whole.insert(whole.end(), into.begin(), into.end());
      checkOut(port, whole);
    }
    return true;
  }
  // What the engine hands on: LRH, BTH (PSN 0), TEH and the TLP, or a raw packet's LRH,
  // RWH and datagram; no CRCs yet.
  static Bytes expectedBytes(const FabricPacket& p) {
    Bytes b = encodeFabric(p);
    b.resize(b.size() - (p.raw ? kRawTrailerBytes : kTrailerBytes));
    return b;
  }
  static std::string dump(const Bytes& bytes) {
    std::string s = "got: ";
    char buf[4];
    for (uint8_t c : bytes) {
      snprintf(buf, sizeof buf, "%02x", c);
      s += buf;
    }
    return s;
  }

  tb::VerilatedTest* t_;
  std::mt19937_64* rng_;
  tb::VlClocked<M> dut_;
  tb::AxisSource cpl_;
  struct Cpl {
    Bytes bytes;
    bool stray;
    bool stomp = false;
  };
  std::multimap<uint64_t, Cpl> pendingCpl_;
  std::deque<Cpl> cplInFlight_;
  std::set<uint8_t> outstanding_;
  tb::Packet cur_;
  Bytes hdr_, loc_, raw_;
  bool hdrTaken_ = false, rawTaken_ = false;
  int inMsg_ = -1;
  struct MemWrite {
    unsigned id;
    uint64_t base;
  };
  std::deque<MemWrite> memWrites_;
  void putMemWrite(const MemWrite& w) {
    auto& m = dut_.m;
    m.mem_we_i = 1;
    m.mem_widx_i = w.id;
    m.mem_wbase_i = w.base >> 12;
    m.mem_wpages_i = memPages(w.id);
  }

  friend class DmaInjTest;
};

class DmaInjTest : public tb::VerilatedTest {
 protected:
  template <class M, unsigned kBpb, unsigned kMp = kMaxPayload>
  std::unique_ptr<Bench<M, kBpb, kMp>> makeBench() {
    auto b = std::make_unique<Bench<M, kBpb, kMp>>(this, ctx(), &rng());
    b->t_cycles = [this] { return cycles(); };
    b->setRndv(RndvSelect{});
    b->dut().m.node_id_i = kLid;
    b->setMemIds();
    attach(&b->dut());
    reset();
    return b;
  }
  template <class B>
  void run(B& b, uint64_t n) {
    for (uint64_t i = 0; i < n && !HasFatalFailure(); ++i) {
      b.step();
      cycle();
      b.endCycle();
    }
  }
  template <class B>
  void runUntilIdle(B& b, uint64_t limit = 400000) {
    uint64_t i = 0;
    while (!b.idle() && i++ < limit && !HasFatalFailure()) {
      b.step();
      cycle();
      b.endCycle();
    }
    run(b, 50);
    ASSERT_TRUE(b.idle()) << "the engine stopped with messages left";
  }

  // A random message for FIFO f: op, inline or not, length, addresses.
  // maxPayload: the engine's; past 256 a message from memory may be 4 KiB long.
  DmaDescriptor randomDesc(unsigned f, unsigned seq, unsigned maxSlots, Bytes* data,
                           unsigned maxPayload = kMaxPayload) {
    auto r = [this](uint64_t n) { return rng()() % n; };
    DmaDescriptor d;
    static const DmaOp kOps[] = {DmaOp::Put, DmaOp::Send, DmaOp::Copy, DmaOp::Raw, DmaOp::Rget};
    d.op = static_cast<uint8_t>(kOps[r(5)]);
    const bool inl = maxSlots > 1 && r(3) != 0;
    unsigned maxLen = inl ? (maxSlots - 1) * kSlot : maxPayload > kMaxPayload ? 4096 : 1200;
    if (d.isRaw()) maxLen = std::min(maxLen, rawMaxBytes(maxPayload));
    unsigned len = r(4) == 0 ? 8 : 4 * (1 + r(maxLen / 4));
    if (d.isRget()) len = kSlot * (1 + r(std::min(maxLen / kSlot, 8u)));  // whole descriptor slots
    d.len = len;
    d.flags = (inl ? kDescInline : 0) | (r(2) ? kDescInjCnt : 0) | (r(2) ? kDescRcvCnt : 0);
    d.slots = inl ? static_cast<uint8_t>(1 + (len + kSlot - 1) / kSlot + r(2) * (maxSlots > 1 + (len + kSlot - 1) / kSlot))
                  : 1;
    if (d.slots > maxSlots) d.slots = static_cast<uint8_t>(maxSlots);
    d.injCnt = static_cast<uint8_t>(r(32));
    d.rcvCnt = static_cast<uint8_t>(r(32));
    d.dest = static_cast<uint16_t>(1 + r(60));
    d.qid = static_cast<uint16_t>(d.isCopy() ? r(kCopyIds) : d.isRaw() ? (r(2) ? kEtherTypeIpv6 : kEtherTypeBridged) : r(16));
    if (d.isRget()) d.qid = static_cast<uint16_t>(r(8));
    d.tag = (f << 24) | seq;
    if (d.isPut() || d.isSend()) d.key = r(2) ? static_cast<uint16_t>(rng()()) : 0;  // TEH bytes 24-25
    // Source buffers: one 8 KiB area per message (512 per FIFO), 64-byte aligned, may cross pages.
    d.src = 0x1000'0000 + (uint64_t{f} << 22) + (uint64_t{seq % 512} << 13) + 64 * r(64);
    d.dst = 64 * r(1024);
    if (d.isRaw() && (d.src & 0xFFF) + len > 4096)  // a raw datagram's source stays in its page
      d.src = (d.src & ~uint64_t{0xFFF}) + ((4096 - len) & ~uint64_t{63});
    if (!inl && r(3) == 0) {
      // The source named by memory ID: the same offsets, into ID kSrcId's region.
      d.flags |= kDescSrcMid;
      d.srcMid = kSrcId;
      d.src -= 0x1000'0000;
    }
    for (auto& w : d.words) w = static_cast<uint8_t>(rng()());  // carried only by an RTS
    data->resize(len);
    for (auto& c : *data) c = static_cast<uint8_t>(rng()());
    return d;
  }

  template <class M, unsigned kBpb, unsigned kMp = kMaxPayload>
  void randomTraffic(unsigned messagesPerFifo, double strays = 0) {
    auto b = makeBench<M, kBpb, kMp>();
    b->strayRate = strays;
    const uint16_t sizes[kFifos] = {16, 7, 32, 5, 64, 9, 12, 128};
    for (unsigned f = 0; f < kFifos; ++f) b->setRing(f, 0x2000'0000 + (uint64_t{f} << 16), sizes[f]);
    // Sends from memory IDs longer than the threshold leave as RTS messages.
    b->setRndv(RndvSelect{static_cast<uint32_t>(256 + 4 * (rng()() % 128))});
    unsigned made[kFifos] = {};
    for (uint64_t c = 0; !HasFatalFailure(); ++c) {
      bool more = false;
      for (unsigned f = 0; f < kFifos; ++f) {
        if (made[f] == messagesPerFifo) continue;
        more = true;
        if (rng()() % 8 != 0) continue;
        const unsigned free = b->freeSlots(f);
        if (free == 0) continue;
        Bytes data;
        // FIFO 7 also sends messages longer than a turn's BatchSlots (32) slots.
        const DmaDescriptor d = randomDesc(f, made[f], std::min(free, f == 7 ? 80u : 8u), &data, kMp);
        b->produce(f, d, data);
        ++made[f];
        if (rng()() % 3 == 0 || made[f] == messagesPerFifo) b->doorbell(f);
      }
      // Ring the ones left unrung now and then.
      if (c % 50 == 0) for (unsigned f = 0; f < kFifos; ++f) if (b->ring[f].rung != b->ring[f].tail) b->doorbell(f);
      if (!more) break;
      b->step();
      cycle();
      b->endCycle();
    }
    for (unsigned f = 0; f < kFifos; ++f) b->doorbell(f);
    runUntilIdle(*b);
    for (unsigned f = 0; f < kFifos; ++f) {
      EXPECT_EQ(b->head(f), b->ring[f].tail) << "FIFO " << f;
      EXPECT_FALSE(b->err(f)) << "FIFO " << f << " code " << int(b->code(f));
    }
    EXPECT_EQ(b->injCnt, b->wantCnt);
    EXPECT_EQ(b->locCnt, b->wantLoc);
    EXPECT_EQ(b->errEvents, 0u);
    EXPECT_EQ(b->stomped, 0u);
    EXPECT_EQ(b->rtsEvents, b->wantRts);
    EXPECT_GT(b->wantRts, 0u) << "no send went by rendezvous";
    EXPECT_EQ(b->unexpEvents, b->straysSent) << "stray completions dropped and counted";
    if (strays > 0) EXPECT_GT(b->straysSent, 0u);
    std::cout << "packets " << b->packets << ", RTS " << b->rtsEvents << " (threshold " << b->sel.threshold
              << "), reads " << b->reads << ", cycles " << cycles() << "\n";
  }

  // Each kind of bad input on FIFO 0 while FIFO 1 streams good messages: FIFO 0 stops
  // with its code and the head on the bad slot, nothing of the bad message leaves,
  // FIFO 1 loses nothing; a reset clears FIFO 0 and its next message goes.
  template <class M, unsigned kBpb>
  void badInput() {
    auto b = makeBench<M, kBpb>();
    constexpr uint64_t kBadPage = 0x3800'0000;
    constexpr uint64_t kStompPage = 0x3810'0000;
    b->setRing(0, 0x3000'0000, 16);
    b->setRing(1, 0x3001'0000, 32);
    b->badPages.insert(kBadPage >> 12);
    b->stompPages.insert(kStompPage >> 12);
    auto put = [](uint32_t len, bool inl) {
      DmaDescriptor d;
      d.op = static_cast<uint8_t>(DmaOp::Put);
      d.flags = inl ? kDescInline : 0;
      d.len = len;
      d.slots = static_cast<uint8_t>(inl ? 1 + (len + kSlot - 1) / kSlot : 1);
      d.dest = 3;
      d.qid = 1;
      d.src = 0x3900'0000;
      d.dst = 0x1000;
      return d;
    };
    struct Case {
      const char* what;
      DmaErr code;
      DmaDescriptor d;
      int ringAt;  // doorbell at the bad slot + this (-1: a tail outside the ring)
      unsigned sent = 0;  // packets of the bad message that leave before the FIFO stops
      // The bad message's packet may have started before its read failed: it is then
      // cut off stomped (the receiver drops it), never sent as good.
      bool mayStomp = false;
    };
    std::vector<Case> cases;
    {
      DmaDescriptor d = put(64, true);
      d.op = 9;
      cases.push_back({"unknown operation", DmaErr::Op, d, 2});
    }
    {
      DmaDescriptor d = put(64, true);
      d.slots = 4;  // 4 slots recorded, 2 rung
      cases.push_back({"count beyond the tail", DmaErr::Count, d, 2});
    }
    {
      DmaDescriptor d = put(64, true);
      d.slots = 0;
      cases.push_back({"count 0", DmaErr::Count, d, 2});
    }
    {
      DmaDescriptor d = put(66, true);
      cases.push_back({"length not a multiple of 4", DmaErr::Len, d, 3});
    }
    {
      DmaDescriptor d = put(200, true);
      d.slots = 3;  // 128 bytes of slots for 200 bytes
      cases.push_back({"length beyond its slots", DmaErr::Len, d, 3});
    }
    {
      DmaDescriptor d = put(64, false);
      d.slots = 2;
      cases.push_back({"not inline but 2 slots", DmaErr::Len, d, 2});
    }
    {
      DmaDescriptor d = put(64, false);
      d.src += 16;
      cases.push_back({"source not 64-byte aligned", DmaErr::Align, d, 1});
    }
    {
      DmaDescriptor d = put(64, true);
      d.dst += 4;
      cases.push_back({"destination not 64-byte aligned", DmaErr::Align, d, 2});
    }
    {
      DmaDescriptor d = put(512, false);
      d.src = kBadPage;
      cases.push_back({"memory refuses the data read", DmaErr::Mem, d, 1});
    }
    {
      // The first packet's data is read from a good page, the second's is refused: the
      // first packet leaves, the second never starts (no stomped packet).
      DmaDescriptor d = put(512, false);
      d.src = kBadPage - 256;
      cases.push_back({"memory refuses the second packet's read", DmaErr::Mem, d, 1, 1});
    }
    {
      // A completion with SC status whose bytes disagreed with its Length: its data
      // must not leave as if it were good.
      DmaDescriptor d = put(512, false);
      d.src = kStompPage;
      cases.push_back({"memory's completion is malformed (marked bad)", DmaErr::Mem, d, 1, 0, true});
    }
    auto copy = [&](uint16_t id, uint64_t dst, uint32_t len) {
      DmaDescriptor d = put(len, true);
      d.op = static_cast<uint8_t>(DmaOp::Copy);
      d.qid = id;
      d.dst = dst;
      return d;
    };
    cases.push_back({"copy to a memory ID that is not valid", DmaErr::Range, copy(13, 0, 64), 2});
    cases.push_back({"copy to a memory ID without write permission", DmaErr::Range, copy(14, 0, 64), 2});
    cases.push_back({"copy to a memory ID past the table", DmaErr::Range, copy(kMemIds, 0, 64), 2});
    cases.push_back({"copy past the end of its region", DmaErr::Range, copy(15, kMemPages * 4096 - 64, 128), 3});
    {
      // The engine has 32 counters (its default): ids from 32 on do not exist.
      DmaDescriptor d = put(64, true);
      d.flags |= kDescInjCnt;
      d.injCnt = static_cast<uint8_t>(32 + rng()() % 224);
      cases.push_back({"injection counter the NI does not have", DmaErr::Counter, d, 2});
      d = copy(15, 0, 64);
      d.flags |= kDescRcvCnt;
      d.rcvCnt = 32;
      cases.push_back({"a copy's reception counter the NI does not have", DmaErr::Counter, d, 2});
    }
    {
      DmaDescriptor d = copy(15, 0, 64);
      d.dst += 8;
      cases.push_back({"copy destination not 64-byte aligned", DmaErr::Align, d, 2});
    }
    {
      DmaDescriptor d = put(rawMaxBytes(kMaxPayload) + 4, true);
      d.op = static_cast<uint8_t>(DmaOp::Raw);
      cases.push_back({"raw datagram too long for a reception FIFO slot", DmaErr::Len, d, d.slots});
    }
    {
      DmaDescriptor d = put(128, false);
      d.op = static_cast<uint8_t>(DmaOp::Raw);
      d.src = 0x3900'0000 + 4096 - 64;
      cases.push_back({"raw datagram whose source crosses a page", DmaErr::Align, d, 1});
    }
    // A put whose source is named by memory ID.
    auto putFromMid = [&](uint32_t len, unsigned mid, uint64_t off) {
      DmaDescriptor d = put(len, false);
      d.flags |= kDescSrcMid;
      d.srcMid = static_cast<uint8_t>(mid);
      d.src = off;
      return d;
    };
    cases.push_back({"source in a memory ID without read permission", DmaErr::Range, putFromMid(64, kNoReadId, 0), 1});
    // ID 14: valid and readable, 32 pages.
    cases.push_back({"source past the end of its memory ID's region", DmaErr::Range,
                     putFromMid(128, 14, kMemPages * 4096 - 64), 1});
    cases.push_back({"source in a memory ID past the table", DmaErr::Range, putFromMid(64, kMemIds, 0), 1});
    {
      DmaDescriptor d = put(96, true);
      d.op = static_cast<uint8_t>(DmaOp::Rget);
      cases.push_back({"remote get of a length that is not whole slots", DmaErr::Len, d, d.slots});
    }
    cases.push_back({"tail outside the ring", DmaErr::Tail, put(8, true), -1});
    unsigned seq = 0, stopped = 0;
    for (const Case& c : cases) {
      SCOPED_TRACE(c.what);
      const unsigned stompedBefore = b->stomped;
      for (unsigned k = 0; k < 5 && b->freeSlots(1) > 0; ++k) {  // a full ring takes no more
        Bytes data;
        const DmaDescriptor d = randomDesc(1, seq++, std::min(b->freeSlots(1), 8u), &data);
        b->produce(1, d, data);
      }
      b->doorbell(1);
      const uint16_t badSlot = b->ring[0].tail;
      if (c.ringAt < 0) {
        b->ringBell(0, 16);  // the ring has 16 slots: 0..15
      } else {
        b->produce(0, c.d, Bytes(c.d.len, 0xEE), c.sent > 0);
        if (c.sent > 0) b->expect[0].back().pkts.resize(c.sent);
        b->doorbell(0, static_cast<uint16_t>((badSlot + c.ringAt) % 16));
      }
      run(*b, 4000);
      ++stopped;
      EXPECT_TRUE(b->err(0));
      EXPECT_EQ(b->code(0), c.code);
      EXPECT_EQ(b->head(0), badSlot) << "the head stays on the bad descriptor";
      if (c.ringAt < 0) EXPECT_EQ(getField(b->dut().m.tail_o, 0, 16), b->ring[0].rung) << "the bad tail is not taken";
      EXPECT_EQ(b->errEvents, stopped);
      EXPECT_LE(b->stomped - stompedBefore, c.mayStomp ? 1u : 0u) << "a packet started that could not be finished";
      EXPECT_TRUE(b->expect[0].empty()) << "the packets sent before the error";
      EXPECT_FALSE(b->err(1));
      // Reset: head := tail as the NI has it; the producer goes on from there.
      b->resetFifo(0);
      run(*b, 4);
      EXPECT_FALSE(b->err(0));
      EXPECT_EQ(b->code(0), DmaErr::None);
      b->ring[0].tail = b->head(0);
      Bytes data;
      const DmaDescriptor d = randomDesc(0, seq++, std::min(b->freeSlots(0), 8u), &data);
      b->produce(0, d, data);
      b->doorbell(0);
      runUntilIdle(*b);
      EXPECT_EQ(b->head(0), b->ring[0].tail);
      EXPECT_EQ(b->head(1), b->ring[1].tail);
    }
  }

  // A ring made smaller than where its tail stands, as INJ_SIZE allows (disabled, the
  // new size, a reset): the reset empties it at slot 0, and the next message is read
  // from the new ring (a head left outside it would read slots beyond the ring).
  template <class M, unsigned kBpb>
  void shrinkThenReset() {
    auto b = makeBench<M, kBpb>();
    b->setRing(0, 0x3000'0000, 64);
    unsigned seq = 0;
    while (b->ring[0].tail < 20) {
      Bytes data;
      const DmaDescriptor d = randomDesc(0, seq++, 4, &data);
      b->produce(0, d, data);
    }
    b->doorbell(0);
    runUntilIdle(*b);
    ASSERT_EQ(b->head(0), b->ring[0].tail);
    auto& m = b->dut().m;
    m.enable_i &= ~1u;
    setField(m.size_i, 0, 16, 16);
    b->resetFifo(0);
    run(*b, 4);
    EXPECT_EQ(b->head(0), 0u);
    EXPECT_EQ(getField(m.tail_o, 0, 16), 0u);
    b->setRing(0, 0x3000'0000, 16);
    for (unsigned k = 0; k < 3; ++k) {
      Bytes data;
      const DmaDescriptor d = randomDesc(0, seq++, 4, &data);
      b->produce(0, d, data);
    }
    b->doorbell(0);
    runUntilIdle(*b);
    EXPECT_FALSE(b->err(0)) << "code " << static_cast<int>(b->code(0));
    EXPECT_EQ(b->head(0), b->ring[0].tail);
  }

  // INJ_SIZE written while the FIFO runs (against its documentation): the engine keeps
  // the ring it reads until the FIFO is empty, so every message queued is sent whole.
  // Then it takes the new size, smaller than the head and tail: the FIFO stops with
  // code 6 (one error event) instead of reading beyond its ring, and FIFO 1 goes on.
  // A reset puts both at slot 0 of the new ring, whose messages go.
  template <class M, unsigned kBpb>
  void sizeWrittenWhileRunning() {
    auto b = makeBench<M, kBpb>();
    b->setRing(0, 0x3000'0000, 64);
    b->setRing(1, 0x3001'0000, 32);
    auto& m = b->dut().m;
    unsigned seq = 0;
    // At least `slots` more slots of messages (up to 3 more), and a doorbell.
    auto fill = [&](unsigned f, unsigned slots) {
      for (unsigned added = 0; added < slots;) {
        Bytes data;
        const DmaDescriptor d = randomDesc(f, seq++, 4, &data);
        b->produce(f, d, data);
        added += d.slots;
      }
      b->doorbell(f);
    };
    fill(0, 40);
    fill(1, 20);
    run(*b, 40);
    ASSERT_NE(b->head(0), b->ring[0].tail) << "the FIFO is still running";
    setField(m.size_i, 0, 16, 16);
    run(*b, 200);
    fill(0, 16);  // more slots, all past slot 16 of the old ring
    runUntilIdle(*b);
    EXPECT_EQ(b->head(0), b->ring[0].tail);
    EXPECT_EQ(b->head(1), b->ring[1].tail);
    EXPECT_TRUE(b->err(0));
    EXPECT_EQ(b->code(0), DmaErr::Tail);
    EXPECT_EQ(b->errEvents, 1u);
    EXPECT_EQ(getField(m.size_o, 0, 16), 16u);
    EXPECT_FALSE(b->err(1));
    b->resetFifo(0);
    run(*b, 4);
    EXPECT_FALSE(b->err(0));
    EXPECT_EQ(b->head(0), 0u);
    b->ring[0] = {0x3000'0000, 16, 0, 0};
    fill(0, 10);
    fill(1, 20);
    runUntilIdle(*b);
    EXPECT_FALSE(b->err(0)) << "code " << static_cast<int>(b->code(0));
    EXPECT_EQ(b->head(0), b->ring[0].tail);
    EXPECT_EQ(b->head(1), b->ring[1].tail);
    EXPECT_EQ(b->errEvents, 1u);
  }

  // INJ_SIZE written to 0 while the FIFO holds slots (it applies once the FIFO is empty
  // or disabled), then the FIFO disabled, at every cycle around its turn's start. The
  // round robin picks a cycle ahead: a FIFO disabled in the cycle after its pick still
  // starts that turn, so it must keep its size until the turn has ended (the turn's
  // reads are from its ring; an assertion, DmaFetchSized_A, fires on a turn without
  // one). The messages that went are whole, FIFO 1's all go, and enabled again with
  // slots left outside the new ring the FIFO stops (code 6). A reset starts each try.
  template <class M, unsigned kBpb>
  void sizeZeroedAndDisabledAroundThePick() {
    auto b = makeBench<M, kBpb>();
    b->setRing(1, 0x3001'0000, 32);
    auto& m = b->dut().m;
    unsigned seq = 0, errs = 0;
    for (unsigned delay = 0; delay < 8 && !HasFatalFailure(); ++delay) {
      SCOPED_TRACE("disabled " + std::to_string(delay) + " cycles after the size");
      b->resetFifo(0);
      run(*b, 4);
      b->setRing(0, 0x3000'0000, 64);
      for (unsigned f = 0; f < 2; ++f) {
        for (unsigned k = 0; k < 4; ++k) {
          Bytes data;
          const DmaDescriptor d = randomDesc(f, seq++, 2, &data);
          b->produce(f, d, data);
        }
        b->doorbell(f);
      }
      run(*b, 2);  // the doorbell has acted: the FIFO holds slots
      setField(m.size_i, 0, 16, 0);
      run(*b, delay);
      m.enable_i &= ~1u;
      run(*b, 3000);
      EXPECT_EQ(getField(m.size_o, 0, 16), 0u);
      EXPECT_EQ(b->head(1), b->ring[1].tail);
      b->expect[0].clear();  // the ones that did not go before the disable
      runUntilIdle(*b);
      EXPECT_EQ(b->errEvents, errs);
      m.enable_i |= 1u;
      run(*b, 10);
      if (b->head(0) != b->ring[0].tail) {
        EXPECT_TRUE(b->err(0));
        EXPECT_EQ(b->code(0), DmaErr::Tail);
        ++errs;
      }
      EXPECT_EQ(b->errEvents, errs);
      EXPECT_FALSE(b->err(1));
    }
    EXPECT_GT(errs, 0u) << "no try left slots in FIFO 0";
  }

  // Protocol selection at its edges: with the threshold at 512 bytes, a send from a
  // memory ID of 512 bytes goes eagerly and one of 516 as an RTS (one packet into the
  // same FIFO with the same key, the offset marked, the descriptor as data with the
  // words it carries, no counter); inline sends and sends from a plain address go
  // eagerly at any length, puts are never selected; at the reset threshold all go
  // eagerly; a long send whose source is outside its memory ID stops its FIFO (code 7)
  // and sends no RTS.
  template <class M, unsigned kBpb>
  void protocolSelection() {
    auto b = makeBench<M, kBpb>();
    b->setRing(0, 0x3000'0000, 64);
    b->setRndv(RndvSelect{512});
    auto send = [](uint32_t len, uint8_t flags) {
      DmaDescriptor d;
      d.op = static_cast<uint8_t>(DmaOp::Send);
      d.flags = flags | kDescInjCnt | kDescRcvCnt;
      d.slots = static_cast<uint8_t>((flags & kDescInline) ? 1 + (len + kSlot - 1) / kSlot : 1);
      d.len = len;
      d.dest = 5;
      d.qid = 1;
      d.key = 0x1234;
      d.injCnt = 3;
      d.rcvCnt = 4;
      d.srcMid = kSrcId;
      d.src = (flags & kDescSrcMid) ? 0x4000 : 0x3100'0000;
      d.tag = 0xC0DE0000 + len;
      for (unsigned i = 0; i < d.words.size(); ++i) d.words[i] = static_cast<uint8_t>(0xA0 + i);
      return d;
    };
    DmaDescriptor put = send(2048, kDescSrcMid);
    put.op = static_cast<uint8_t>(DmaOp::Put);
    const struct {
      DmaDescriptor d;
      bool rts;
    } cases[] = {
        {send(512, kDescSrcMid), false}, {send(516, kDescSrcMid), true}, {send(8192, kDescSrcMid), true},
        {send(1024, kDescInline), false}, {send(2048, 0), false},         {put, false},
    };
    for (const auto& c : cases) {
      EXPECT_EQ(b->sel.rendezvous(c.d), c.rts) << "golden model, length " << c.d.len;
      b->produce(0, c.d, Bytes(c.d.len, static_cast<uint8_t>(c.d.len)));
    }
    b->doorbell(0);
    runUntilIdle(*b);
    EXPECT_EQ(b->rtsEvents, 2u);
    EXPECT_EQ(b->injCnt[3], 512u + 1024 + 2048 + 2048) << "bytes counted: the eager messages' only";
    // The reset threshold: the long send goes eagerly, and stays eager when the
    // threshold drops under way (a threshold applies from the next message on).
    b->setRndv(RndvSelect{});
    b->produce(0, send(8192, kDescSrcMid), Bytes(8192, 0x77));
    b->doorbell(0);
    const unsigned before = b->packets;
    for (int i = 0; i < 20000 && b->packets < before + 2; ++i) run(*b, 1);
    ASSERT_GE(b->packets, before + 2) << "the long send never started";
    b->setRndv(RndvSelect{512});
    runUntilIdle(*b);
    EXPECT_EQ(b->rtsEvents, 2u);
    // A long send whose source runs past its memory ID: refused before any RTS.
    b->setRndv(RndvSelect{512});
    DmaDescriptor bad = send(8192, kDescSrcMid);
    bad.srcMid = 14;  // valid and readable, 32 pages
    bad.src = kMemPages * 4096 - 4096;
    b->produce(0, bad, Bytes(8192, 0), false);
    b->doorbell(0);
    run(*b, 2000);
    EXPECT_TRUE(b->err(0));
    EXPECT_EQ(b->code(0), DmaErr::Range);
    EXPECT_EQ(b->rtsEvents, 2u);
  }

  // Runs the bench until idle; the first and last cycle and the count of cycles in which
  // `counted` held (a beat or header taken at the output).
  struct Span {
    uint64_t first = 0, last = 0, count = 0;
  };
  template <class B, class F>
  Span spanWhile(B& b, F counted) {
    Span s;
    for (uint64_t c = 0; c < 100000 && !b.idle() && !HasFatalFailure(); ++c) {
      b.step();
      if (counted()) {
        if (s.count++ == 0) s.first = cycles();
        s.last = cycles();
      }
      cycle();
      b.endCycle();
    }
    runUntilIdle(b);
    return s;
  }

  // 8-byte inline puts (two slots each) from one FIFO, back to back, with a memory
  // round trip longer than the node model's (the NI's own host pipeline adds to it):
  // the engine keeps enough slot reads in flight to take each read's completion as
  // soon as the host port brings it.
  template <class M, unsigned kBpb>
  void inlinePutRate() {
    auto b = makeBench<M, kBpb>();
    auto& m = b->dut().m;
    b->setRing(0, 0x3000'0000, 1024);
    b->outStall = b->rdStall = 0;
    b->setCplIdle(0);
    b->minLat = b->maxLat = 30;
    constexpr unsigned kMsgs = 200;
    for (unsigned i = 0; i < kMsgs; ++i) {
      DmaDescriptor d;
      d.op = static_cast<uint8_t>(DmaOp::Put);
      d.flags = kDescInline;
      d.slots = 2;
      d.len = 8;
      d.dest = 3;
      d.qid = 1;
      d.dst = 0x1000 + 64 * i;
      d.tag = i;
      b->produce(0, d, Bytes(8, static_cast<uint8_t>(i)));
    }
    b->doorbell(0);
    const Span sp = spanWhile(*b, [&m] { return m.out_hdr_valid_o && m.out_hdr_ready_i; });
    const uint64_t hdrs = sp.count;
    // The host port's bound: a read of MaxPayload bytes of slots (two messages per 128
    // bytes) comes back as one completion, its 12-byte header and data in whole beats.
    const double perRead = double(kMaxPayload) / 128.0;
    const double beatsPerRead = std::ceil((12.0 + kMaxPayload) / kBpb);
    const double bound = perRead / beatsPerRead;
    const double rate = double(hdrs) / double(sp.last + 1 - sp.first);
    std::cout << hdrs << " puts: " << rate << " per cycle, host-port bound " << bound << "\n";
    EXPECT_EQ(hdrs, kMsgs);
    EXPECT_GE(rate, 0.98 * bound) << "slot reads in flight do not cover the round trip";
  }

  // Reads ahead. With a fixed 20-cycle memory and no back-pressure, twelve 2 KiB
  // puts from memory leave back to back: while one leaves, the engine reads the next
  // descriptor and issues its first data reads, so no memory round trip (about 25
  // cycles each) stands between messages, only the parse of the descriptor. Then the two ways its reads are given up,
  // each after a read of the next message's data was seen: that message's memory
  // ID moved to another base (it leaves with the data at the new base), and its FIFO
  // disabled (nothing of it leaves while disabled; enabled again, it leaves whole).
  template <class M, unsigned kBpb>
  void readAhead() {
    auto b = makeBench<M, kBpb>();
    auto& m = b->dut().m;
    b->setRing(0, 0x3000'0000, 64);
    b->outStall = b->rdStall = 0;
    b->setCplIdle(0);
    b->minLat = b->maxLat = 20;
    unsigned seq = 0;
    auto put = [&seq](uint32_t len, uint64_t src, bool mid, uint8_t srcMid = kSrcId) {
      DmaDescriptor d;
      d.op = static_cast<uint8_t>(DmaOp::Put);
      d.flags = kDescInjCnt | (mid ? kDescSrcMid : 0);
      d.slots = 1;
      d.len = len;
      d.dest = 3;
      d.qid = 1;
      d.srcMid = srcMid;
      d.src = src;
      d.dst = 0x10000ull * seq;
      d.tag = seq++;
      d.injCnt = 1;
      return d;
    };
    auto data = [this](size_t n) {
      Bytes d(n);
      for (auto& c : d) c = static_cast<uint8_t>(rng()());
      return d;
    };
    // Back to back: output cycles without a beat, from the first beat to the last. Every
    // third message is read from a host address, the others from two memory IDs in turn
    // (the engine finds the next message's region in its own memory ID).
    constexpr unsigned kMsgs = 12, kLen = 2048;
    for (unsigned i = 0; i < kMsgs; ++i) {
      const DmaDescriptor d = i % 3 == 0 ? put(kLen, 0x3100'0000 + 0x1000ull * i, false)
                                         : put(kLen, 0x1000ull * i, true, i % 3 == 1 ? kSrcId : 3);
      b->produce(0, d, data(kLen));
    }
    b->doorbell(0);
    const Span sp = spanWhile(*b, [&m] { return m.out_beat_valid_o && m.out_beat_ready_i; });
    const uint64_t beats = sp.count;
    const uint64_t idle = sp.last + 1 - sp.first - beats;
    std::cout << kMsgs << " messages of " << kLen << " B: " << beats << " beats, " << idle
              << " cycles without a beat in between\n";
    // What is left between messages: the parse of the next descriptor, a beat a cycle.
    EXPECT_LE(idle, kMsgs * (64 / kBpb + 2)) << "a memory round trip between messages";

    // Given up: a long message, then one from memory ID kSrcId; once the engine has
    // read the second's data, `change` alters what it will find. Returns whether the
    // read ahead was seen while the first message was still leaving.
    auto slotBack = [&b](unsigned n) { return static_cast<uint16_t>((b->ring[0].tail + 64 - n) % 64); };
    auto giveUp = [&](const std::function<void(const DmaDescriptor&, const Bytes&)>& change) {
      b->produce(0, put(8192, 0x3200'0000, false), data(8192));
      const DmaDescriptor next = put(1024, 0x8000, true);
      const Bytes old = data(1024);
      b->produce(0, next, old, false);
      b->doorbell(0);
      const uint64_t from = memBase(kSrcId) + next.src;
      bool seen = false;
      for (uint64_t c = 0; c < 20000 && !seen && !HasFatalFailure(); ++c) {
        b->step();
        seen = m.rd_valid_o && m.rd_ready_i && m.rd_addr_o >= from && m.rd_addr_o < from + next.len;
        cycle();
        b->endCycle();
      }
      seen = seen && b->head(0) == slotBack(2);
      change(next, old);
      return seen;
    };
    // The memory ID moves: its new region holds other data, which is what leaves.
    EXPECT_TRUE(giveUp([&](const DmaDescriptor& d, const Bytes&) {
      constexpr uint64_t kMoved = 0x50000ull << 12;
      const Bytes now = data(d.len);
      b->write(kMoved + d.src, now);
      b->setMemBase(kSrcId, kMoved);
      b->expectMessage(0, d, now);
    })) << "no read ahead of the second message";
    runUntilIdle(*b);
    EXPECT_FALSE(b->err(0));
    b->setMemBase(kSrcId, memBase(kSrcId));
    // The FIFO is disabled: the first message ends, the second waits whole.
    DmaDescriptor waiting;
    Bytes waitingData;
    EXPECT_TRUE(giveUp([&](const DmaDescriptor& d, const Bytes& old) {
      m.enable_i &= ~1u;
      waiting = d;
      waitingData = old;
    })) << "no read ahead of the second message";
    run(*b, 3000);
    EXPECT_EQ(b->head(0), slotBack(1)) << "the first message left, the second did not";
    EXPECT_TRUE(b->expect[0].empty());
    m.enable_i |= 1u;
    b->expectMessage(0, waiting, waitingData);
    runUntilIdle(*b);
    EXPECT_EQ(b->head(0), b->ring[0].tail);
    EXPECT_EQ(b->injCnt, b->wantCnt);
    EXPECT_EQ(b->errEvents, 0u);
  }

  // A message longer than a turn (60 slots; BatchSlots is 32) in FIFO 0 while the
  // seven others are full of 2-slot messages: FIFO 0's first turn reads on until it has
  // the message (when the walker finds it while the turn's reads go on) or ends before
  // it (when they are over; its next turn reads it whole), so it leaves within three
  // rounds, not after the others have drained (which is what a turn that kept its
  // usual length would give). Which of the two happens depends on the memory's timing.
  template <class M, unsigned kBpb>
  void longMessageAmongBusyFifos() {
    constexpr unsigned kBatch = 32, kSmall = 100;
    auto b = makeBench<M, kBpb>();
    auto put = [](uint32_t len, unsigned f, unsigned seq) {
      DmaDescriptor d;
      d.op = static_cast<uint8_t>(DmaOp::Put);
      d.flags = kDescInline;
      d.len = len;
      d.slots = static_cast<uint8_t>(1 + (len + kSlot - 1) / kSlot);
      d.dest = static_cast<uint16_t>(1 + f);
      d.qid = 1;
      d.dst = 0x1000 * seq;
      d.tag = (f << 24) | seq;
      return d;
    };
    for (unsigned f = 0; f < kFifos; ++f) b->setRing(f, 0x2000'0000 + (uint64_t{f} << 16), 256);
    const DmaDescriptor big = put(59 * kSlot, 0, 0);
    b->produce(0, big, Bytes(big.len, 0x5A));
    for (unsigned f = 1; f < kFifos; ++f) {
      for (unsigned s = 0; s < kSmall; ++s) b->produce(f, put(8, f, s), Bytes(8, static_cast<uint8_t>(s)));
    }
    for (unsigned f = 0; f < kFifos; ++f) b->doorbell(f);
    unsigned servedMax = 0;
    for (uint64_t c = 0; c < 200000 && b->head(0) != b->ring[0].tail && !HasFatalFailure(); ++c) {
      b->step();
      cycle();
      b->endCycle();
      for (unsigned f = 1; f < kFifos; ++f) servedMax = std::max<unsigned>(servedMax, b->head(f));
    }
    ASSERT_EQ(b->head(0), b->ring[0].tail) << "the long message never left";
    EXPECT_LE(servedMax, 3 * kBatch) << "slots another FIFO had served before the long message left";
    runUntilIdle(*b);
    for (unsigned f = 0; f < kFifos; ++f) EXPECT_EQ(b->head(f), b->ring[f].tail) << "FIFO " << f;
    std::cout << "slots served per other FIFO when the long message left: at most " << servedMax << "\n";
  }

  // A remote-fed FIFO (2) filled one descriptor at a time by pushes, as ni_fab_rx does
  // for remote gets, beside a doorbell-fed FIFO (3): its descriptors go out like any
  // others. Then each thing a remote-fed FIFO refuses stops it (a doorbell: code 6; an
  // inline descriptor or one whose source is a plain address: code 8; a source outside
  // a readable memory ID: code 7) while FIFO 3 goes on, and a reset clears it.
  template <class M, unsigned kBpb>
  void remoteFedFifo() {
    constexpr unsigned kRem = 2, kLocal = 3;
    auto b = makeBench<M, kBpb>();
    b->setRing(kRem, 0x3000'0000, 12);
    b->setRing(kLocal, 0x3001'0000, 32);
    b->dut().m.remote_i = 1u << kRem;
    unsigned seq = 0;
    // A one-slot descriptor with its source in memory ID kSrcId, pushed at the tail.
    auto pushOne = [&](bool good, DmaDescriptor* out = nullptr) {
      Bytes data;
      DmaDescriptor d;
      do d = randomDesc(kRem, seq, 1, &data); while (!(d.flags & kDescSrcMid));
      ++seq;
      if (out) *out = d;
      b->produce(kRem, d, data, good);
      b->push(kRem);
    };
    for (unsigned k = 0; k < 60 && !HasFatalFailure(); ++k) {
      while (b->freeSlots(kRem) == 0 && !HasFatalFailure()) run(*b, 10);
      pushOne(true);
      run(*b, 1 + rng()() % 12);
      if (b->freeSlots(kLocal) > 2 && rng()() % 2) {
        Bytes data;
        b->produce(kLocal, randomDesc(kLocal, seq++, 2, &data), data);
        b->doorbell(kLocal);
      }
    }
    runUntilIdle(*b);
    EXPECT_EQ(b->head(kRem), b->ring[kRem].tail);
    EXPECT_FALSE(b->err(kRem));
    EXPECT_EQ(b->errEvents, 0u);

    struct Case {
      const char* what;
      DmaErr code;
      std::function<void(DmaDescriptor&)> spoil;  // null: a doorbell instead of a push
    };
    const Case cases[] = {
        {"a doorbell", DmaErr::Tail, nullptr},
        {"an inline descriptor", DmaErr::Remote, [](DmaDescriptor& d) { d.flags |= kDescInline; }},
        {"a source by plain address", DmaErr::Remote, [](DmaDescriptor& d) { d.flags &= ~kDescSrcMid; }},
        {"a source in a memory ID without read permission", DmaErr::Range,
         [](DmaDescriptor& d) { d.srcMid = kNoReadId; }},
    };
    unsigned stopped = 0;
    for (const Case& c : cases) {
      SCOPED_TRACE(c.what);
      const uint16_t at = b->ring[kRem].tail;
      if (c.spoil) {
        Bytes data;
        DmaDescriptor d;
        do d = randomDesc(kRem, seq, 1, &data); while (!(d.flags & kDescSrcMid));
        ++seq;
        c.spoil(d);
        d.slots = 1;
        b->produce(kRem, d, data, false);
        b->push(kRem);
      } else {
        b->doorbell(kRem, static_cast<uint16_t>((at + 1) % 12));
      }
      Bytes data;
      b->produce(kLocal, randomDesc(kLocal, seq++, 2, &data), data);
      b->doorbell(kLocal);
      run(*b, 3000);
      ++stopped;
      EXPECT_TRUE(b->err(kRem));
      EXPECT_EQ(b->code(kRem), c.code);
      EXPECT_EQ(b->head(kRem), at) << "the head stays on the refused descriptor";
      EXPECT_EQ(b->errEvents, stopped);
      EXPECT_FALSE(b->err(kLocal));
      EXPECT_EQ(b->head(kLocal), b->ring[kLocal].tail);
      b->resetFifo(kRem);
      run(*b, 4);
      EXPECT_FALSE(b->err(kRem));
      b->ring[kRem].tail = b->head(kRem);
      pushOne(true);
      runUntilIdle(*b);
      EXPECT_EQ(b->head(kRem), b->ring[kRem].tail);
    }
  }
};

TEST_F(DmaInjTest, RemoteFedFifoTakesPushedDescriptorsAndRefusesTheRest_W64) { remoteFedFifo<Vni_dma_inj, 8>(); }
TEST_F(DmaInjTest, RemoteFedFifoTakesPushedDescriptorsAndRefusesTheRest_W512) { remoteFedFifo<Vni_dma_inj512, 64>(); }

TEST_F(DmaInjTest, InlinePutsKeepTheHostPortRateAtALongRoundTrip_W512) { inlinePutRate<Vni_dma_inj512, 64>(); }
TEST_F(DmaInjTest, ReadAheadHidesTheRoundTripBetweenMessages_W64) { readAhead<Vni_dma_inj, 8>(); }
TEST_F(DmaInjTest, ReadAheadHidesTheRoundTripBetweenMessages_W512) { readAhead<Vni_dma_inj512, 64>(); }

TEST_F(DmaInjTest, ProtocolSelectionByLength_W64) { protocolSelection<Vni_dma_inj, 8>(); }
TEST_F(DmaInjTest, ProtocolSelectionByLength_W512) { protocolSelection<Vni_dma_inj512, 64>(); }

TEST_F(DmaInjTest, BadInputStopsOnlyItsFifoUntilReset_W64) { badInput<Vni_dma_inj, 8>(); }
TEST_F(DmaInjTest, BadInputStopsOnlyItsFifoUntilReset_W512) { badInput<Vni_dma_inj512, 64>(); }

TEST_F(DmaInjTest, RingMadeSmallerThanItsTailRestartsAtSlotZero_W64) { shrinkThenReset<Vni_dma_inj, 8>(); }
TEST_F(DmaInjTest, RingMadeSmallerThanItsTailRestartsAtSlotZero_W512) { shrinkThenReset<Vni_dma_inj512, 64>(); }

TEST_F(DmaInjTest, SizeWrittenWhileRunningAppliesOnceEmpty_W64) { sizeWrittenWhileRunning<Vni_dma_inj, 8>(); }
TEST_F(DmaInjTest, SizeWrittenWhileRunningAppliesOnceEmpty_W512) { sizeWrittenWhileRunning<Vni_dma_inj512, 64>(); }

TEST_F(DmaInjTest, SizeZeroedAndDisabledAroundThePickKeepsTheTurnsRing_W64) { sizeZeroedAndDisabledAroundThePick<Vni_dma_inj, 8>(); }
TEST_F(DmaInjTest, SizeZeroedAndDisabledAroundThePickKeepsTheTurnsRing_W512) { sizeZeroedAndDisabledAroundThePick<Vni_dma_inj512, 64>(); }

TEST_F(DmaInjTest, LongMessageIsServedInTurnAmongBusyFifos_W64) { longMessageAmongBusyFifos<Vni_dma_inj, 8>(); }
TEST_F(DmaInjTest, LongMessageIsServedInTurnAmongBusyFifos_W512) { longMessageAmongBusyFifos<Vni_dma_inj512, 64>(); }

TEST_F(DmaInjTest, RandomMessagesFromAllFifos_W64) { randomTraffic<Vni_dma_inj, 8>(150); }
TEST_F(DmaInjTest, RandomMessagesFromAllFifos_W128) { randomTraffic<Vni_dma_inj128, 16>(150); }
TEST_F(DmaInjTest, RandomMessagesFromAllFifos_W256) { randomTraffic<Vni_dma_inj256, 32>(150); }
TEST_F(DmaInjTest, RandomMessagesFromAllFifos_W512) { randomTraffic<Vni_dma_inj512, 64>(150); }

// Issue 79: completions with the engine's tags that no read waits for, or longer than
// what is missing, are dropped and counted; every message still leaves intact.
// MaxPayload 4096: reads and their completions of up to 4 KiB (512 beats), raw
// datagrams of up to 4 KiB, inline messages of up to 79 slots.
TEST_F(DmaInjTest, RandomMessagesFromAllFifos_W64_MTU4096) { randomTraffic<Vni_dma_inj_mtu4096, 8, 4096>(60); }

TEST_F(DmaInjTest, StrayCompletionsAreDroppedAndCounted_W64) { randomTraffic<Vni_dma_inj, 8>(60, 0.1); }
TEST_F(DmaInjTest, StrayCompletionsAreDroppedAndCounted_W128) { randomTraffic<Vni_dma_inj128, 16>(60, 0.1); }
TEST_F(DmaInjTest, StrayCompletionsAreDroppedAndCounted_W256) { randomTraffic<Vni_dma_inj256, 32>(60, 0.1); }
TEST_F(DmaInjTest, StrayCompletionsAreDroppedAndCounted_W512) { randomTraffic<Vni_dma_inj512, 64>(60, 0.1); }

}  // namespace

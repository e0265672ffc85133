// SPDX-License-Identifier: Apache-2.0
// Unit tests of the host-port blocks alone, 4 ports:
// - ni_host_mux (64 bits): TLPs of every port come out whole and in their port's
//   order under random idles and back-pressure; with every port busy the output
//   carries a beat every cycle and each port gets a quarter of the TLPs.
// - ni_host_demux (64 and 128 bits: the Requester ID is in the second beat at 64):
//   completions reach the port their bus names, requests the port their tdest
//   names, a TLP naming no port is dropped and counted; a port that stops taking beats is
//   declared down after HOST_STALL cycles while the others go on, its TLP in
//   progress is closed nullified, and it comes back up when told.
#include <gtest/gtest.h>

#include <array>
#include <deque>

#include "Vni_host_demux.h"
#include "Vni_host_demux128.h"
#include "Vni_host_mux.h"
#include "axis_bfm.hpp"
#include "tlp.hpp"
#include "verilated_fixture.hpp"
#include "verilated_ports.hpp"

using namespace ni;

namespace {

constexpr unsigned kPorts = 4;

// ------------------------------------------------------------------ ni_host_mux
class HostMuxTest : public tb::VerilatedTest {
 protected:
  static constexpr unsigned kBpb = 8;
  void SetUp() override {
    VerilatedTest::SetUp();
    dut = std::make_unique<tb::VlClocked<Vni_host_mux>>(ctx(), "host_mux");
    attach(dut.get());
    for (unsigned p = 0; p < kPorts; ++p) src.emplace_back(kBpb, &rng());
    reset();
  }
  // A packet of `bytes` whose first bytes name its port and sequence number.
  void push(unsigned port, size_t bytes) {
    Bytes b(bytes);
    for (auto& x : b) x = static_cast<uint8_t>(rng()());
    b[0] = static_cast<uint8_t>(port);
    b[1] = static_cast<uint8_t>(sent[port]);
    b[2] = static_cast<uint8_t>(sent[port] >> 8);
    ++sent[port];
    expect[port].push_back(b);
    src[port].push(b);
  }
  // One cycle; returns whether a beat left.
  bool step() {
    auto& m = dut->m;
    std::array<bool, kPorts> offered{};
    for (unsigned p = 0; p < kPorts; ++p) {
      Beat b;
      offered[p] = src[p].offer(&b);
      b.data.resize(kBpb);
      toPortAt(m.s_axis_tdata, p * kBpb, b.data.data(), kBpb);
      setField(m.s_axis_tkeep, p * kBpb, kBpb, b.keep);
      setField(m.s_axis_tlast, p, 1, b.last);
      setField(m.s_axis_tvalid, p, 1, offered[p]);
    }
    m.m_axis_tready = sink.ready();
    dut->eval();
    Beat out;
    out.data.resize(kBpb);
    fromPort(m.m_axis_tdata, out.data.data(), kBpb);
    out.keep = m.m_axis_tkeep;
    out.last = m.m_axis_tlast;
    const bool moved = m.m_axis_tvalid && m.m_axis_tready;
    for (unsigned p = 0; p < kPorts; ++p) {
      const bool ready = getField(m.s_axis_tready, p, 1);
      if (offered[p] && ready) src[p].accepted();
    }
    if (sink.observe(m.m_axis_tvalid, out, cycles())) {
      const Bytes& got = sink.packets().back().bytes;
      const unsigned port = got[0];
      EXPECT_LT(port, kPorts);
      if (port < kPorts) {
        EXPECT_FALSE(expect[port].empty()) << "a packet port " << port << " did not send";
        if (!expect[port].empty()) {
          EXPECT_EQ(got, expect[port].front()) << "port " << port << ": packet out of order or mixed, seed " << seed();
          expect[port].pop_front();
        }
        ++received[port];
      }
    }
    cycle();
    return moved;
  }
  bool allSent() const {
    for (unsigned p = 0; p < kPorts; ++p)
      if (!src[p].empty() || !expect[p].empty()) return false;
    return true;
  }

  std::unique_ptr<tb::VlClocked<Vni_host_mux>> dut;
  std::vector<tb::AxisSource> src;
  tb::AxisSink sink{kBpb, &rng()};
  std::array<std::deque<Bytes>, kPorts> expect;
  std::array<unsigned, kPorts> sent{}, received{};
};

TEST_F(HostMuxTest, EveryTlpArrivesWholeAndInItsPortsOrder) {
  for (unsigned p = 0; p < kPorts; ++p) src[p].setIdle(0.1 * p);
  sink.setStall(0.3);
  for (int i = 0; i < 400; ++i) push(rng()() % kPorts, 12 + 4 * (rng()() % 70));
  for (int c = 0; c < 100000 && !allSent(); ++c) step();
  EXPECT_TRUE(allSent()) << "seed " << seed();
}

TEST_F(HostMuxTest, BusyPortsShareTheOutputEquallyWithoutBubbles) {
  // Every port always has a 64-byte TLP (10 beats at 64 bits) waiting.
  for (unsigned p = 0; p < kPorts; ++p)
    for (int i = 0; i < 200; ++i) push(p, 80);
  for (int c = 0; c < 20; ++c) step();  // reach the steady state
  const unsigned before = received[0] + received[1] + received[2] + received[3];
  std::array<unsigned, kPorts> start = received;
  unsigned beats = 0;
  const unsigned window = 4000;
  for (unsigned c = 0; c < window; ++c) beats += step();
  EXPECT_EQ(beats, window) << "a cycle without a beat while every port waits";
  const unsigned tlps = received[0] + received[1] + received[2] + received[3] - before;
  for (unsigned p = 0; p < kPorts; ++p)
    EXPECT_NEAR(double(received[p] - start[p]), tlps / double(kPorts), 1.0) << "port " << p;
}

// ------------------------------------------------------------------ ni_host_demux
template <class M, unsigned Bpb>
struct DemuxCfg {
  using Model = M;
  static constexpr unsigned kBpb = Bpb;
};

template <class Cfg>
class HostDemuxTest : public tb::VerilatedTest {
 protected:
  using M = typename Cfg::Model;
  static constexpr unsigned kBpb = Cfg::kBpb;
  void SetUp() override {
    tb::VerilatedTest::SetUp();
    dut = std::make_unique<tb::VlClocked<M>>(this->ctx(), "host_demux");
    this->attach(dut.get());
    for (unsigned p = 0; p < kPorts; ++p) sink.emplace_back(kBpb, &this->rng());
    dut->m.stall_cycles_i = 0;
    this->reset();
  }
  // A completion for the CPU on `bus` (bus >= 4: no such port), or a request.
  void pushCpl(unsigned bus) {
    auto& r = this->rng();
    Bytes data(4 * (2 + r() % 40));  // two beats or more at 128 bits
    for (auto& b : data) b = static_cast<uint8_t>(r());
    const Tlp t = makeCplD(0, static_cast<uint16_t>(bus << 8 | (r() & 0xFF)), static_cast<uint8_t>(r()), r() & 0x7C, data);
    const Bytes raw = encodeTlp(t);
    if (bus < kPorts) expect[bus].push_back(raw);
    else ++badSent;
    src.push(raw);
    dests.push_back(0);  // a completion's tdest is 0: its bus routes it
  }
  // A request for port `dest` (tdest; the NI's interrupts name their port, its
  // memory requests port 0; dest >= 4: no such port).
  void pushRequest(unsigned dest) {
    auto& r = this->rng();
    Bytes data(4 * (1 + r() % 40));
    for (auto& b : data) b = static_cast<uint8_t>(r());
    const Bytes raw = r() % 2 ? encodeTlp(makeMWr(0x0100, 0, (r() & ~uint64_t{3}) >> 8, data))
                              : encodeTlp(makeMRd(0x0100, static_cast<uint8_t>(r()), r() & ~uint64_t{3} & 0xFFFFFF, 64));
    if (dest < kPorts) expect[dest].push_back(raw);
    else ++badSent;
    src.push(raw);
    dests.push_back(dest);
  }
  void step() {
    auto& m = dut->m;
    Beat b;
    const bool offered = src.offer(&b);
    b.data.resize(kBpb);
    toPort(m.s_axis_tdata, b.data.data(), kBpb);
    m.s_axis_tkeep = b.keep;
    m.s_axis_tlast = b.last;
    m.s_axis_tuser = 0;
    m.s_axis_tvalid = offered;
    m.s_axis_tdest = offered ? dests.front() : 0xEE;
    for (unsigned p = 0; p < kPorts; ++p) setField(m.m_axis_tready, p, 1, stopped[p] ? false : sink[p].ready());
    m.up_i = upNow;
    upNow = 0;
    dut->eval();
    if (offered && m.s_axis_tready) {
      src.accepted();
      if (b.last) dests.pop_front();
    }
    badSeen += m.ev_bad_port_o;
    drops += m.ev_drop_o;
    for (unsigned p = 0; p < kPorts; ++p) {
      Beat o;
      o.data.resize(kBpb);
      fromPortAt(m.m_axis_tdata, p * kBpb, o.data.data(), kBpb);
      o.keep = getField(m.m_axis_tkeep, p * kBpb, kBpb);
      o.last = getField(m.m_axis_tlast, p, 1);
      o.user = getField(m.m_axis_tuser, p, 1);
      if (stopped[p]) {
        sinkStalled(p, getField(m.m_axis_tvalid, p, 1));
        continue;
      }
      if (!sink[p].observe(getField(m.m_axis_tvalid, p, 1), o, this->cycles())) continue;
      const tb::Packet& got = sink[p].packets().back();
      if (got.user) {
        ++nullified[p];
        continue;
      }
      ASSERT_FALSE(expect[p].empty()) << "port " << p << " got a TLP not meant for it; seed " << this->seed();
      EXPECT_EQ(got.bytes, expect[p].front()) << "port " << p << "; seed " << this->seed();
      expect[p].pop_front();
      ++delivered[p];
    }
    this->cycle();
  }
  // A stopped port: its sink sees nothing; the test only records what waits.
  void sinkStalled(unsigned p, bool valid) { waiting[p] = valid; }
  bool expectEmpty() const {
    for (const auto& e : expect)
      if (!e.empty()) return false;
    return src.empty();
  }

  std::unique_ptr<tb::VlClocked<M>> dut;
  tb::AxisSource src{kBpb, &this->rng()};
  std::vector<tb::AxisSink> sink;
  std::array<std::deque<Bytes>, kPorts> expect;
  std::deque<unsigned> dests;  // tdest of each TLP pushed and not yet taken
  std::array<bool, kPorts> stopped{}, waiting{};
  std::array<unsigned, kPorts> delivered{}, nullified{};
  unsigned badSent = 0, badSeen = 0, drops = 0;
  uint8_t upNow = 0;
};

using DemuxWidths = ::testing::Types<DemuxCfg<Vni_host_demux, 8>, DemuxCfg<Vni_host_demux128, 16>>;
class DemuxName {
 public:
  template <class T>
  static std::string GetName(int) { return "W" + std::to_string(T::kBpb * 8); }
};
TYPED_TEST_SUITE(HostDemuxTest, DemuxWidths, DemuxName);

TYPED_TEST(HostDemuxTest, CompletionsGoToThePortTheirBusNamesRequestsToTheirDest) {
  this->src.setIdle(0.2);
  for (unsigned p = 0; p < kPorts; ++p) this->sink[p].setStall(0.1 * (p + 1));
  for (int i = 0; i < 600; ++i) {
    if (this->rng()() % 4 == 0) this->pushRequest(this->rng()() % 6);
    else this->pushCpl(this->rng()() % 6);  // buses 4 and 5 name no port
  }
  for (int c = 0; c < 200000 && !this->expectEmpty(); ++c) this->step();
  for (int c = 0; c < 20; ++c) this->step();
  EXPECT_TRUE(this->expectEmpty()) << "seed " << this->seed();
  EXPECT_GT(this->badSent, 0u);
  EXPECT_EQ(this->badSeen, this->badSent) << "every TLP naming no port counted once";
  EXPECT_EQ(this->drops, 0u);
  EXPECT_EQ(this->dut->m.down_o, 0u) << "HOST_STALL 0: no port is ever declared down";
}

TYPED_TEST(HostDemuxTest, AStoppedPortIsDeclaredDownAndTheOthersGoOn) {
  auto& m = this->dut->m;
  m.stall_cycles_i = 64;
  this->stopped[2] = true;  // the CPU on port 2 hangs
  unsigned toPort2 = 0;
  for (int i = 0; i < 300; ++i) {
    const unsigned bus = this->rng()() % kPorts;
    toPort2 += bus == 2;
    this->pushCpl(bus);
  }
  // Port 2 holds its first beat; everything for the others must still arrive.
  for (int c = 0; c < 100000 && !this->src.empty(); ++c) this->step();
  for (int c = 0; c < 50; ++c) this->step();
  for (unsigned p : {0u, 1u, 3u}) EXPECT_TRUE(this->expect[p].empty()) << "port " << p << " waited for port 2";
  EXPECT_EQ(m.down_o, 1u << 2);
  EXPECT_TRUE(this->waiting[2]) << "the beat port 2 holds stays offered";
  EXPECT_EQ(this->drops, toPort2) << "every TLP for port 2 dropped, once (the one it holds a beat of: the rest)";

  // The CPU recovers: it takes the held beat, and a nullified beat closes that TLP.
  this->stopped[2] = false;
  this->sink[2].setStall(0);
  for (int c = 0; c < 20; ++c) this->step();
  EXPECT_EQ(this->nullified[2], 1u);
  EXPECT_EQ(this->delivered[2], 0u);
  EXPECT_EQ(m.down_o, 1u << 2) << "down until software brings it up";
  this->expect[2].clear();

  // Brought up: completions for port 2 flow again.
  this->upNow = 1u << 2;
  this->step();
  EXPECT_EQ(m.down_o, 0u);
  for (int i = 0; i < 20; ++i) this->pushCpl(2);
  for (int c = 0; c < 20000 && !this->expectEmpty(); ++c) this->step();
  EXPECT_TRUE(this->expectEmpty());
  EXPECT_EQ(this->delivered[2], 20u);
}

}  // namespace

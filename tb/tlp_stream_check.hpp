// SPDX-License-Identifier: Apache-2.0
// A TLP stream through one Verilated AXI4-Stream block (s_axis in, m_axis out), checked
// against a byte-level model of what the block makes of each TLP: for the blocks that
// rewrite TLP headers on the host link (ni_host_widen, ni_host_narrow). Each TLP is
// sent with a random nullify flag (tuser on its last beat) and, where the block has
// one, a random port (tdest); both must come out with it.
#pragma once
#include <gtest/gtest.h>

#include <deque>
#include <functional>
#include <type_traits>
#include <vector>

#include "axis_bfm.hpp"
#include "verilated_fixture.hpp"

namespace ni::tb {

// Whether a Verilated block has a tdest port (ni_host_narrow has, ni_host_widen not).
template <class T, class = void>
struct HasDest : std::false_type {};
template <class T>
struct HasDest<T, std::void_t<decltype(std::declval<T&>().s_axis_tdest)>> : std::true_type {};

struct StreamRun {
  uint64_t cycles = 0;  // from the first cycle to the last TLP out
  unsigned events = 0;  // cycles the block's event fired
};

class TlpStreamTest : public VerilatedTest {
 protected:
  // The block under test, one for the whole test (the clock keeps it).
  template <class M>
  VlClocked<M>& start(const char* name) {
    auto dut = std::make_unique<VlClocked<M>>(ctx(), name);
    attach(dut.get());
    reset();
    auto& d = *dut;
    held_ = std::shared_ptr<void>(dut.release(), [](void* p) { delete static_cast<VlClocked<M>*>(p); });
    return d;
  }

  // Sends tlps through dut (idle: input idle probability, stall: output back-pressure),
  // checks every TLP out against model(tlp) with its flag and port, counts event(m).
  template <class M, unsigned kBpb>
  StreamRun streamThrough(VlClocked<M>& dut, const std::vector<Bytes>& tlps, double idle, double stall,
                          const std::function<Bytes(const Bytes&)>& model,
                          const std::function<bool(const M&)>& event);

 private:
  std::shared_ptr<void> held_;
};

template <class M, unsigned kBpb>
StreamRun TlpStreamTest::streamThrough(VlClocked<M>& dut, const std::vector<Bytes>& tlps, double idle, double stall,
                                       const std::function<Bytes(const Bytes&)>& model,
                                       const std::function<bool(const M&)>& event) {
  constexpr bool kHasDest = HasDest<M>::value;
  auto& m = dut.m;
  AxisSource src(kBpb, &rng(), idle);
  AxisSink sink(kBpb, &rng(), stall);
  struct Sent {
    bool user;
    uint8_t dest;
  };
  std::deque<Sent> sent;
  for (const auto& p : tlps) {
    src.push(p);
    sent.push_back({rng()() % 8 == 0, static_cast<uint8_t>(rng()())});
  }
  std::deque<Sent> inFlight = sent;
  StreamRun r;
  const uint64_t start = cycles();
  while (sink.packets().size() < tlps.size()) {
    Beat b;
    const bool offered = src.offer(&b);
    m.s_axis_tvalid = offered;
    if (offered) {
      toPort(m.s_axis_tdata, b.data.data(), kBpb);
      m.s_axis_tkeep = b.keep;
      m.s_axis_tlast = b.last;
      m.s_axis_tuser = b.last && inFlight.front().user;
      if constexpr (kHasDest) m.s_axis_tdest = inFlight.front().dest;
    }
    m.m_axis_tready = sink.ready();
    m.eval();
    const bool taken = offered && m.s_axis_tready;
    r.events += event(m);
    Beat out;
    out.data.resize(kBpb);
    fromPort(m.m_axis_tdata, out.data.data(), kBpb);
    out.keep = m.m_axis_tkeep;
    out.last = m.m_axis_tlast;
    out.user = m.m_axis_tuser;
    if constexpr (kHasDest) out.dest = m.m_axis_tdest;
    sink.observe(m.m_axis_tvalid, out, cycles());
    cycle();
    if (taken) {
      if (b.last) inFlight.pop_front();
      src.accepted();
    }
    if (cycles() - start > 200 * (tlps.size() + 10)) {
      ADD_FAILURE() << "stalled: " << sink.packets().size() << " of " << tlps.size() << " out, seed " << seed();
      break;
    }
  }
  for (size_t i = 0; i < sink.packets().size(); ++i) {
    const auto& p = sink.packets()[i];
    EXPECT_EQ(p.bytes, model(tlps[i])) << "TLP " << i << " of " << tlps[i].size() << " bytes, type 0x" << std::hex
                                       << unsigned(tlps[i][0]) << std::dec << ", seed " << seed();
    EXPECT_EQ(p.user, sent[i].user) << "TLP " << i << " nullified, seed " << seed();
    if constexpr (kHasDest) EXPECT_EQ(p.dest, sent[i].dest) << "TLP " << i << " port, seed " << seed();
  }
  r.cycles = cycles() - start;
  return r;
}

}  // namespace ni::tb

// SPDX-License-Identifier: Apache-2.0
// Unit test of ni_host_widen alone, at every width, against a byte-level model: a 3 DW
// memory request (MRd, MWr, the AtomicOps, DMWr) leaves with Fmt bit 0 set and four
// zero bytes put in at byte 8, anything else passes unchanged; random TLP streams of
// every length (also cut short, and of any first byte), some nullified, with idle
// cycles at the input and back-pressure at the output (tb/tlp_stream_check.hpp). Then
// the rate: 4 DW TLPs pass at one beat a cycle, a widened one costs at most one beat more.
#include <gtest/gtest.h>

#include "Vni_host_widen.h"
#include "Vni_host_widen128.h"
#include "Vni_host_widen256.h"
#include "Vni_host_widen512.h"
#include "tlp_stream_check.hpp"

using namespace ni;

namespace {

bool is3dwRequest(uint8_t ft) {
  return ft == 0x00 || ft == 0x40 || ft == 0x4C || ft == 0x4D || ft == 0x4E || ft == 0x5B;
}

// What the block must make of a TLP's bytes.
Bytes widened(const Bytes& in) {
  if (in.empty() || !is3dwRequest(in[0])) return in;
  Bytes out(in.begin(), in.begin() + std::min<size_t>(8, in.size()));
  out[0] |= 0x20;
  if (in.size() > 8) {
    out.insert(out.end(), 4, 0);
    out.insert(out.end(), in.begin() + 8, in.end());
  }
  return out;
}

class HostWidenTest : public tb::TlpStreamTest {
 protected:
  template <class M, unsigned kBpb>
  uint64_t run(tb::VlClocked<M>& dut, const std::vector<Bytes>& tlps, double idle, double stall) {
    unsigned expect = 0;
    for (const auto& t : tlps) expect += is3dwRequest(t[0]);
    const auto r = streamThrough<M, kBpb>(dut, tlps, idle, stall, widened, [](const M& m) { return m.ev_widened_o; });
    EXPECT_EQ(r.events, expect) << "widened TLPs counted, seed " << seed();
    return r.cycles;
  }

  std::vector<Bytes> randomTlps(unsigned n) {
    static const uint8_t kTypes[] = {0x00, 0x40, 0x4C, 0x4D, 0x4E, 0x5B, 0x20, 0x60, 0x6C, 0x7B, 0x4A, 0x0A, 0x02, 0x44};
    std::vector<Bytes> v;
    for (unsigned i = 0; i < n; ++i) {
      // Mostly whole requests (12 or 16 header bytes and data), some cut anywhere.
      size_t len = rng()() % 4 ? 12 + 4 * (rng()() % 70) : 1 + rng()() % 300;
      Bytes t(len);
      for (auto& x : t) x = static_cast<uint8_t>(rng()());
      t[0] = rng()() % 8 ? kTypes[rng()() % std::size(kTypes)] : static_cast<uint8_t>(rng()());
      v.push_back(std::move(t));
    }
    return v;
  }

  template <class M, unsigned kBpb>
  void randomStreams() {
    auto& dut = start<M>("widen");
    run<M, kBpb>(dut, randomTlps(600), 0.3, 0.3);
    run<M, kBpb>(dut, randomTlps(300), 0.0, 0.0);
  }

  // Back-to-back TLPs with nothing idle: a 4 DW one takes one cycle a beat, a
  // widened one at most one beat more.
  template <class M, unsigned kBpb>
  void rate() {
    auto& dut = start<M>("widen");
    for (uint8_t ft : {uint8_t{0x60}, uint8_t{0x40}}) {
      std::vector<Bytes> v;
      size_t beats = 0;
      for (unsigned i = 0; i < 200; ++i) {
        Bytes t(16 + 4 * (1 + rng()() % 64), 0x5A);
        t[0] = ft;
        if (ft == 0x40) t.resize(t.size() - 4);  // a 3 DW header
        beats += (t.size() + kBpb - 1) / kBpb + (ft == 0x40);
        v.push_back(std::move(t));
      }
      const uint64_t took = run<M, kBpb>(dut, v, 0.0, 0.0);
      EXPECT_LE(took, beats + 4) << "type 0x" << std::hex << unsigned(ft);
    }
  }
};

#define WIDTHS(name, fn)                                                 \
  TEST_F(HostWidenTest, name##_W64) { fn<Vni_host_widen, 8>(); }         \
  TEST_F(HostWidenTest, name##_W128) { fn<Vni_host_widen128, 16>(); }    \
  TEST_F(HostWidenTest, name##_W256) { fn<Vni_host_widen256, 32>(); }    \
  TEST_F(HostWidenTest, name##_W512) { fn<Vni_host_widen512, 64>(); }

WIDTHS(RandomStreamsMatchTheModel, randomStreams)
WIDTHS(OneBeatACycleAndOneMorePerWidenedTlp, rate)

}  // namespace

// SPDX-License-Identifier: Apache-2.0
// Unit test of ni_host_narrow alone, at every width, against a byte-level model: a 4 DW
// memory request (MRd, MWr, the AtomicOps, DMWr) whose address is below 4 GiB leaves
// with Fmt bit 0 clear and its bytes 8..11 taken out, anything else passes unchanged
// (its nullify flag and port with it); random TLP streams of every length (also cut
// short, and of any first byte) with idle cycles at the input and back-pressure at the
// output (tb/tlp_stream_check.hpp). Then the rate: one beat a cycle, narrowed or not.
#include <gtest/gtest.h>

#include "Vni_host_narrow.h"
#include "Vni_host_narrow128.h"
#include "Vni_host_narrow256.h"
#include "Vni_host_narrow512.h"
#include "tlp_stream_check.hpp"

using namespace ni;

namespace {

bool is4dwRequest(uint8_t ft) {
  return ft == 0x20 || ft == 0x60 || ft == 0x6C || ft == 0x6D || ft == 0x6E || ft == 0x7B;
}
bool narrows(const Bytes& in) {
  return in.size() >= 16 && is4dwRequest(in[0]) && in[8] == 0 && in[9] == 0 && in[10] == 0 && in[11] == 0;
}

// What the block must make of a TLP's bytes.
Bytes narrowed(const Bytes& in) {
  if (!narrows(in)) return in;
  Bytes out(in.begin(), in.begin() + 8);
  out[0] &= ~0x20;
  out.insert(out.end(), in.begin() + 12, in.end());
  return out;
}

class HostNarrowTest : public tb::TlpStreamTest {
 protected:
  template <class M, unsigned kBpb>
  uint64_t run(tb::VlClocked<M>& dut, const std::vector<Bytes>& tlps, double idle, double stall) {
    unsigned expect = 0;
    for (const auto& t : tlps) expect += narrows(t);
    const auto r = streamThrough<M, kBpb>(dut, tlps, idle, stall, narrowed, [](const M& m) { return m.ev_narrowed_o; });
    EXPECT_EQ(r.events, expect) << "narrowed TLPs counted, seed " << seed();
    return r.cycles;
  }

  std::vector<Bytes> randomTlps(unsigned n) {
    static const uint8_t kTypes[] = {0x20, 0x60, 0x6C, 0x6D, 0x6E, 0x7B, 0x00, 0x40, 0x4A, 0x0A};
    std::vector<Bytes> v;
    for (unsigned i = 0; i < n; ++i) {
      // Mostly whole requests (16 header bytes and data), some cut anywhere; most
      // addresses below 4 GiB, some with one of bytes 8..11 set.
      size_t len = rng()() % 4 ? 16 + 4 * (rng()() % 70) : 1 + rng()() % 300;
      Bytes t(len);
      for (auto& x : t) x = static_cast<uint8_t>(rng()());
      t[0] = rng()() % 8 ? kTypes[rng()() % std::size(kTypes)] : static_cast<uint8_t>(rng()());
      for (size_t k = 8; k < 12 && k < len; ++k) t[k] = 0;
      if (len > 11 && rng()() % 4 == 0) t[8 + rng()() % 4] = static_cast<uint8_t>(1 + rng()() % 255);
      v.push_back(std::move(t));
    }
    return v;
  }

  template <class M, unsigned kBpb>
  void randomStreams() {
    auto& dut = start<M>("narrow");
    run<M, kBpb>(dut, randomTlps(600), 0.3, 0.3);
    run<M, kBpb>(dut, randomTlps(300), 0.0, 0.0);
  }

  // Back-to-back MWr with nothing idle: one cycle a beat in, whether narrowed (below
  // 4 GiB) or not (above).
  template <class M, unsigned kBpb>
  void rate() {
    auto& dut = start<M>("narrow");
    for (bool below : {false, true}) {
      std::vector<Bytes> v;
      size_t beats = 0;
      for (unsigned i = 0; i < 200; ++i) {
        Bytes t(16 + 4 * (1 + rng()() % 64), 0x5A);
        t[0] = 0x60;
        for (size_t k = 8; k < 12; ++k) t[k] = below ? 0 : 1;
        beats += (t.size() + kBpb - 1) / kBpb;
        v.push_back(std::move(t));
      }
      const uint64_t took = run<M, kBpb>(dut, v, 0.0, 0.0);
      EXPECT_LE(took, beats + 4) << (below ? "narrowed" : "passed");
    }
  }
};

#define WIDTHS(name, fn)                                                  \
  TEST_F(HostNarrowTest, name##_W64) { fn<Vni_host_narrow, 8>(); }        \
  TEST_F(HostNarrowTest, name##_W128) { fn<Vni_host_narrow128, 16>(); }   \
  TEST_F(HostNarrowTest, name##_W256) { fn<Vni_host_narrow256, 32>(); }   \
  TEST_F(HostNarrowTest, name##_W512) { fn<Vni_host_narrow512, 64>(); }

WIDTHS(RandomStreamsMatchTheModel, randomStreams)
WIDTHS(OneBeatACycle, rate)

}  // namespace

// SPDX-License-Identifier: Apache-2.0
// A bounded, seeded slice of the host-port fuzzer (tb/host_fuzz.hpp) in make test:
// hostile TLP streams into node 0 of a two-node system, a liveness round after each.
#include <gtest/gtest.h>

#include "host_fuzz.hpp"
#include "verilated_fixture.hpp"

namespace ni {
namespace {

class HostFuzzTest : public ::testing::TestWithParam<unsigned> {};

TEST_P(HostFuzzTest, HostileStreamsNeverStopEitherNode) {
  fuzz::HostCampaign c;
  c.seed = tb::envU64("NI_SEED", 1);
  c.streams = 12;
  c.tlpsPerStream = 60;
  c.dataBits = GetParam();
  const auto o = fuzz::runHostCampaign(c);
  for (const auto& v : o.violations) ADD_FAILURE() << v;
  EXPECT_EQ(o.liveness, c.streams);
  EXPECT_GT(o.malformed, 0u);
  EXPECT_GT(o.unsup, 0u);
  if (HasFailure()) std::cerr << "[ reproduce ] NI_SEED=" << c.seed << "\n";
}

INSTANTIATE_TEST_SUITE_P(Widths, HostFuzzTest, ::testing::Values(64u, 512u),
                         [](const auto& i) { return "W" + std::to_string(i.param); });

}  // namespace
}  // namespace ni

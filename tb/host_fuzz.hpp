// SPDX-License-Identifier: Apache-2.0
// Host-port fuzzer (issue 79): seeded streams of hostile TLPs from node 0's CPU into a
// two-node system (headers from the whole Fmt/Type space, random Length fields and
// byte counts, EP and TD bits, keep holes, tvalid withdrawn before the handshake),
// each stream followed by a liveness round: a store, a load and a fetch-add from each
// node to the other must complete with the right data, no RTL assertion may fire (the
// host-protocol detectors only warn), and no register of node 0 may have changed (the
// streams hold no well-formed register write). Used by `make fuzz` (tb/host_fuzz_main.cpp)
// and by a bounded slice in `make test` (tb/test_host_fuzz.cpp).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ni::fuzz {

struct HostCampaign {
  uint64_t seed = 1;
  unsigned streams = 10;
  unsigned tlpsPerStream = 100;
  unsigned dataBits = 64;
};

struct HostOutcome {
  std::vector<std::string> violations;  // empty: every check held
  uint64_t tlps = 0;                    // hostile TLPs played
  uint64_t liveness = 0;                // liveness rounds that passed
  uint64_t cycles = 0;
  uint64_t malformed = 0, unsup = 0, winMiss = 0, cplUnexp = 0, poison = 0;  // node 0's counters at the end
  bool ok() const { return violations.empty(); }
};

HostOutcome runHostCampaign(const HostCampaign& c);

}  // namespace ni::fuzz

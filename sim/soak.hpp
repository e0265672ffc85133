// SPDX-License-Identifier: Apache-2.0
// The soak: every node keeps a window of random confirmed writes, reads and atomics in
// flight to random peers over a (usually faulty) fabric, and a scoreboard checks each
// against a model of every node's memory: nothing lost, nothing applied twice, no
// corrupted byte delivered, every confirmation delivered exactly once.
// Used by `ni_sim --scenario soak` (make soak: 1,000,000 operations) and, short, by
// test_system (make test). With several CPUs per node each operation comes from a
// random one of them.
#pragma once
#include <cstdint>
#include <functional>

#include "system.hpp"

namespace ni {

struct SoakConfig {
  uint64_t ops = 1000;     // operations in all (spread over the nodes)
  unsigned inFlight = 12;  // operations each node keeps outstanding
  uint64_t seed = 1;
};

struct SoakResult {
  uint64_t writes = 0, reads = 0, atomics = 0;  // completed
  uint64_t payloadBytes = 0;                    // written and read, completed
  uint64_t cycles = 0;
  // Violations (all must be 0).
  uint64_t failed = 0;         // an operation ended in an error completion or timed out
  uint64_t lost = 0;           // a confirmed write memory never applied
  uint64_t appliedTwice = 0;   // a write memory applied more than once
  uint64_t corrupted = 0;      // a read or atomic result, or final memory, differs from the model
  uint64_t confirmedTwice = 0; // a write whose confirmation came more than once
  uint64_t unconfirmed = 0;    // a write whose confirmation never came
  uint64_t wrongAddress = 0;   // a confirmation that names another address
  bool drained = false;
  bool ok() const {
    return drained && !failed && !lost && !appliedTwice && !corrupted && !confirmedTwice && !unconfirmed &&
           !wrongAddress;
  }
  double goodput() const { return cycles ? double(payloadBytes) / double(cycles) : 0.0; }
};

// The soak's fabric faults: 1 % drop, 0.1 % corruption, 0.5 % duplication, 0.5 %
// reordering (issue 4; make soak passes the same rates to ni_sim).
inline FabricFaults soakFaults(uint64_t seed) {
  FabricFaults f;
  f.seed = seed;
  f.drop = 0.01;
  f.corrupt = 0.001;
  f.duplicate = 0.005;
  f.reorder = 0.005;
  return f;
}

// Sets up its own windows (node d through window d; confirmation point (s + d) % 3)
// and memory IDs on a freshly reset system, then runs.
SoakResult runSoak(System& sys, const SoakConfig& cfg, const std::function<void(uint64_t)>& progress = {});

}  // namespace ni

// SPDX-License-Identifier: Apache-2.0
// The GoogleTest fixture base for multi-node system tests (test_system, test_dma,
// test_rget): the seed from NI_SEED and its generator, the system, and a teardown that
// fails the test on an RTL assertion and prints how to reproduce a failure.
#pragma once
#include <gtest/gtest.h>

#include <iostream>
#include <memory>
#include <random>
#include <string>

#include "system.hpp"
#include "verilated_fixture.hpp"

namespace ni::tb {

template <class Param>
class SystemFixture : public ::testing::TestWithParam<Param> {
 protected:
  // Builds and resets the system `c` describes, seeded from NI_SEED.
  void startSystem(SystemConfig c) {
    seed = envU64("NI_SEED", 1);
    rng.seed(seed);
    c.seed = seed;
    sys = std::make_unique<System>(c);
    sys->reset();
  }
  void TearDown() override {
    EXPECT_FALSE(sys->rtlError()) << "an RTL assertion failed";
    if (this->HasFailure()) std::cerr << "[ reproduce ] NI_SEED=" << seed << "\n";
  }
  Bytes randomBytes(size_t n) {
    Bytes b(n);
    for (auto& x : b) x = static_cast<uint8_t>(rng());
    return b;
  }

  uint64_t seed = 1;
  std::mt19937_64 rng;
  std::unique_ptr<System> sys;
};

// A parameterized system's test name: N<nodes>_W<width>, the MaxPayload when not 256,
// the NI configuration when not the default.
inline std::string systemParamName(unsigned nodes, unsigned width, unsigned maxPayload, const std::string& config) {
  return "N" + std::to_string(nodes) + "_W" + std::to_string(width) +
         (maxPayload != 256 ? "_MTU" + std::to_string(maxPayload) : "") + (config != "default" ? "_" + config : "");
}

}  // namespace ni::tb

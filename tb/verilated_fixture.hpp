// SPDX-License-Identifier: Apache-2.0
// The one GoogleTest fixture base for Verilated models: owns the context, the
// clock, the seed and the cycle watchdog, writes a per-test FST when asked,
// and fails the test on any RTL assertion error.
//
// Environment:  NI_SEED=<n>     seed of the randomized tests (default 1)
//               NI_WAVES=1      FST per test in $NI_WAVE_DIR (needs a NI_TRACE build)
//               NI_WATCHDOG=<n> cycle limit per test (default 2,000,000)
#pragma once
#include <gtest/gtest.h>
#include <verilated.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>

#include "clocked.hpp"

namespace ni::tb {

inline uint64_t envU64(const char* name, uint64_t dflt) {
  const char* v = std::getenv(name);
  return (v && *v) ? std::strtoull(v, nullptr, 0) : dflt;
}

// Any Verilated model with clk_i and rst_ni as a Clocked (block unit tests; no waveform).
template <class M>
class VlClocked final : public Clocked {
 public:
  VlClocked(VerilatedContext* ctx, const char* name) : m(ctx, name) {}
  void setClock(bool high) override { m.clk_i = high; }
  void setReset(bool active) override { m.rst_ni = !active; }
  void eval() override {
    m.eval();
    lowPending = false;
  }
  bool openTrace(const std::string&) override { return false; }
  void dumpTrace(uint64_t) override {}
  void closeTrace() override {}
  // One rising edge of this model alone, outside the fixture's clock and cycle count:
  // for tables a test writes into the block before its run (ends with the clock low).
  void edgeAlone() {
    for (bool high : {false, true, false}) {
      setClock(high);
      eval();
    }
  }
  M m;
};

class VerilatedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ctx_ = std::make_unique<VerilatedContext>();
    ctx_->fatalOnError(false);
    ctx_->randReset(0);
    seed_ = envU64("NI_SEED", 1);
    rng_.seed(seed_);
    watchdog_ = envU64("NI_WATCHDOG", 2'000'000);
    clock_ = std::make_unique<ClockDriver>(ctx_.get());
    RecordProperty("seed", std::to_string(seed_));
  }

  void TearDown() override {
    if (traced_) traced_->closeTrace();
    writeCoverage(ctx_.get(), testName());
    EXPECT_FALSE(ctx_->gotError()) << "an RTL assertion failed (see the message above); seed " << seed_;
    if (HasFailure()) std::cerr << "[ reproduce ] NI_SEED=" << seed_ << " " << testName() << "\n";
  }

  // Register a model with the clock; the first one may get a waveform.
  void attach(Clocked* m) {
    clock_->add(m);
    if (!traced_ && envU64("NI_WAVES", 0)) {
      const char* dir = std::getenv("NI_WAVE_DIR");
      const std::string path = std::string(dir ? dir : ".") + "/" + testName() + ".fst";
      if (m->openTrace(path)) traced_ = m;
      else std::cerr << "NI_WAVES set, but this build has no tracing (make wave)\n";
    }
  }

  // One clock cycle for every attached model. Fails the test on an RTL error
  // or when the watchdog runs out.
  void cycle() {
    clock_->cycle();
    if (ctx_->gotError()) throw std::runtime_error("RTL assertion failed at cycle " + std::to_string(cycles()));
    if (cycles() > watchdog_) throw std::runtime_error("watchdog: test ran past " + std::to_string(watchdog_) + " cycles");
  }
  void reset(unsigned n = 4) { clock_->reset(n); }
  uint64_t cycles() const { return clock_->cycles(); }

  std::string testName() const {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string n = std::string(info->test_suite_name()) + "." + info->name();
    for (auto& c : n) if (c == '/') c = '_';
    return n;
  }
  uint64_t seed() const { return seed_; }
  std::mt19937_64& rng() { return rng_; }
  VerilatedContext* ctx() { return ctx_.get(); }

 private:
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<ClockDriver> clock_;
  Clocked* traced_ = nullptr;
  uint64_t seed_ = 1, watchdog_ = 0;
  std::mt19937_64 rng_;
};

}  // namespace ni::tb

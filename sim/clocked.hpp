// SPDX-License-Identifier: Apache-2.0
// A clocked Verilated model as the C++ world sees it, and the clock that drives a set of them.
#pragma once
#include <memory>
#include <string>
#include <vector>

class VerilatedContext;

namespace ni {

class Clocked {
 public:
  virtual ~Clocked() = default;
  virtual void setClock(bool high) = 0;
  virtual void setReset(bool active) = 0;
  virtual void eval() = 0;
  // FST waveform of this model; no-op in builds without tracing (returns false).
  virtual bool openTrace(const std::string& path) = 0;
  virtual void dumpTrace(uint64_t time) = 0;
  virtual void closeTrace() = 0;
  // Whether a waveform is being written (the falling edge is then evaluated too).
  virtual bool tracing() const { return false; }
  // Only cycles [from, from + cycles) go into the waveform (cycles 0: to the end).
  virtual void setTraceWindow(uint64_t from, uint64_t cycles) {
    (void)from;
    (void)cycles;
  }
  // The clock went low without an eval; an eval of the model (with its next inputs)
  // clears it. ClockDriver evaluates the low clock itself if no one has.
  bool lowPending = false;
};

// Advances every registered model by whole clock cycles. Inputs are set and
// evaluated by the caller before cycle(); outputs read then are what the
// rising edge samples. The falling edge is evaluated by the caller's eval of the
// next inputs (an eval costs the model's whole input-driven logic, so not a second
// time), or by cycle() when no one evaluated in between, or at once for a waveform.
class ClockDriver {
 public:
  explicit ClockDriver(VerilatedContext* ctx) : ctx_(ctx) {}
  void add(Clocked* m) { models_.push_back(m); }
  void cycle();
  void reset(unsigned cycles);
  uint64_t cycles() const { return cycles_; }

 private:
  VerilatedContext* ctx_;
  std::vector<Clocked*> models_;
  uint64_t cycles_ = 0;
};

// In a coverage build (NI_COVERAGE), write the context's coverage counts to
// $NI_COV_DIR/<name>.dat; otherwise do nothing.
void writeCoverage(VerilatedContext* ctx, const std::string& name);

}  // namespace ni

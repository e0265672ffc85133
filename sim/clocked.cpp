// SPDX-License-Identifier: Apache-2.0
#include "clocked.hpp"

#include <verilated.h>
#if VM_COVERAGE
#include <verilated_cov.h>
#endif

#include <cstdlib>

namespace ni {

void ClockDriver::cycle() {
  ctx_->timeInc(1);
  for (auto* m : models_) {
    if (m->lowPending) m->eval();  // the model must see the clock low before it rises
    m->lowPending = false;
    m->setClock(true);
    m->eval();
    m->dumpTrace(ctx_->time());
  }
  // The falling edge changes nothing in a design clocked on rising edges: it is
  // evaluated with the next inputs (a third of the run saved), or now for a waveform.
  ctx_->timeInc(1);
  for (auto* m : models_) {
    m->setClock(false);
    m->lowPending = !m->tracing();
    if (!m->lowPending) {
      m->eval();
      m->dumpTrace(ctx_->time());
    }
  }
  ++cycles_;
}

void ClockDriver::reset(unsigned n) {
  for (auto* m : models_) {
    m->setReset(true);
    m->setClock(false);
    m->eval();
  }
  for (unsigned i = 0; i < n; ++i) cycle();
  for (auto* m : models_) {
    m->setReset(false);
    m->eval();
  }
}

void writeCoverage(VerilatedContext* ctx, const std::string& name) {
#if VM_COVERAGE
  const char* dir = std::getenv("NI_COV_DIR");
  if (dir && *dir) ctx->coveragep()->write((std::string(dir) + "/" + name + ".dat").c_str());
#else
  (void)ctx;
  (void)name;
#endif
}

}  // namespace ni

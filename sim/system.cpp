// SPDX-License-Identifier: Apache-2.0
#include "system.hpp"

#include <verilated.h>

#include <stdexcept>

#include "driver.hpp"
#include "ni_regs.hpp"

namespace ni {

System::System(const SystemConfig& cfg) : cfg_(cfg), ctx_(std::make_unique<VerilatedContext>()) {
  ctx_->fatalOnError(false);  // an RTL assertion marks an error; callers check rtlError()
  ctx_->randReset(0);
  if (!nicBuilt(cfg.dataBits, cfg.maxPayload, cfg.hostPorts))
    throw std::invalid_argument("NI not built for " + std::to_string(cfg.dataBits) + " bits, max payload " +
                                std::to_string(cfg.maxPayload) + ", " + std::to_string(cfg.hostPorts) + " host ports");
  clock_ = std::make_unique<ClockDriver>(ctx_.get());
  for (unsigned i = 0; i < cfg.nodes; ++i) {
    nics_.push_back(makeNic(cfg.dataBits, ctx_.get(), "ni" + std::to_string(i), cfg.maxPayload, cfg.hostPorts));
    nodes_.push_back(std::make_unique<Node>(i, nics_.back()->bytesPerBeat(), cfg.seed * 7919 + i, cfg.hostPorts));
    nodes_.back()->setMaxPayload(cfg.maxPayload);
    nodes_.back()->setHostBackpressure(cfg.hostStall);
    clock_->add(nics_.back().get());
  }
  FabricConfig fc;
  fc.ports = cfg.nodes;
  fc.topology = cfg.topology;
  fc.bytesPerBeat = cfg.dataBits / 8;
  fc.linkLatency = cfg.linkLatency;
  fc.linkBytesPerCycle = cfg.linkBytesPerCycle;
  fc.inputCredits = cfg.fabricCredits;
  fc.clockNs = cfg.clockNs;
  fc.faults = cfg.faults;
  fabric_ = std::make_unique<Fabric>(fc);
  if (!cfg.pcapPath.empty() && !fabric_->tap().open(cfg.pcapPath))
    throw std::runtime_error("cannot write " + cfg.pcapPath);
  if (!cfg.tracePath.empty() && cfg.traceNode < cfg.nodes && !nics_[cfg.traceNode]->openTrace(cfg.tracePath))
    throw std::runtime_error("waveforms need a build with NI_TRACE=ON (make wave)");
  if (cfg.traceNode < cfg.nodes) nics_[cfg.traceNode]->setTraceWindow(cfg.traceFrom, cfg.traceCycles);
  in_.resize(cfg.nodes);
  out_.resize(cfg.nodes);
}

System::~System() {
  for (auto& n : nics_) n->closeTrace();
  static unsigned instance = 0;
  writeCoverage(ctx_.get(), "system_" + std::to_string(cfg_.nodes) + "n_" + std::to_string(cfg_.dataBits) + "b_" +
                                std::to_string(instance++));
}

void System::reset() {
  clock_->reset(4);
  for (unsigned i = 0; i < size(); ++i) node(i).csrWrite(regs::NODE_ID, lidOf(i));
}

void System::tick() {
  for (unsigned i = 0; i < size(); ++i) {
    in_[i] = NicIn{};
    nodes_[i]->fillNicIn(in_[i]);
    fabric_->fillNicIn(i, in_[i]);
    nics_[i]->drive(in_[i]);
    out_[i] = nics_[i]->read();
  }
  clock_->cycle();
  for (unsigned i = 0; i < size(); ++i) {
    nodes_[i]->afterCycle(in_[i], out_[i]);
    fabric_->afterCycle(i, in_[i], out_[i]);
  }
  fabric_->endCycle();
}

bool System::rtlError() const { return ctx_->gotError(); }

bool System::runUntil(const std::function<bool()>& done, uint64_t maxCycles) {
  for (uint64_t c = 0; c < maxCycles; ++c) {
    if (done()) return true;
    if (rtlError()) return false;
    tick();
  }
  return done();
}

bool System::drain(uint64_t maxCycles, const std::function<void(uint64_t)>& progress) {
  // Idle for a few cycles in a row: the NI pipelines hold nothing the models cannot see.
  unsigned quiet = 0;
  return runUntil([&] {
    if (progress && cycle() % 1'000'000 == 0) progress(cycle());
    bool idle = fabric_->idle();
    for (auto& n : nodes_) idle = idle && n->idle();
    quiet = idle ? quiet + 1 : 0;
    return quiet > 64;
  }, maxCycles);
}

void System::setWindow(unsigned n, unsigned i, const Window& w) { driver::setWindow(csrWriter(n), i, w); }

void System::clearWindow(unsigned n, unsigned i) { driver::clearWindow(csrWriter(n), i); }

void System::setMemId(unsigned n, unsigned id, const MemRegion& m) { driver::setMemId(csrWriter(n), id, m); }

void System::setMulticastGroup(unsigned slot, uint16_t mlid, const std::vector<unsigned>& members) {
  fabric_->setGroup(mlid, members);
  for (unsigned m : members) driver::setMulticastMember(csrWriter(m), slot, mlid);
}

driver::CsrWrite System::csrWriter(unsigned n) {
  Node* nd = &node(n);
  return [nd](uint32_t off, uint32_t v) { nd->csrWrite(off, v); };
}

bool System::waitCounter(unsigned n, unsigned cnt, uint64_t maxCycles) {
  const uint64_t end = cycle() + maxCycles;
  while (cycle() < end) {
    if (readCsr(n, regs::CNT_ZERO) >> cnt & 1) return true;
    runUntil([] { return false; }, 200);
    if (rtlError()) return false;
  }
  return false;
}

uint32_t System::readCsr(unsigned n, uint32_t off) {
  bool done = false, ok = false;
  uint32_t value = 0;
  node(n).csrRead(off, [&](uint32_t v, bool good) {
    value = v;
    ok = good;
    done = true;
  });
  if (!runUntil([&] { return done; }, 100000) || !ok)
    throw std::runtime_error("CSR read failed at node " + std::to_string(n));
  return value;
}

}  // namespace ni

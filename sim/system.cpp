// SPDX-License-Identifier: Apache-2.0
#include "system.hpp"

#include <verilated.h>

#include <algorithm>
#include <memory>
#include <stdexcept>

#include "driver.hpp"
#include "ni_regs.hpp"

namespace ni {

System::System(const SystemConfig& cfg) : cfg_(cfg), ctx_(std::make_unique<VerilatedContext>()) {
  ctx_->fatalOnError(false);  // an RTL assertion marks an error; callers check rtlError()
  ctx_->randReset(0);
  if (!nicBuilt(cfg.dataBits, cfg.maxPayload, cfg.hostPorts, cfg.niConfig))
    throw std::invalid_argument("NI not built for " + std::to_string(cfg.dataBits) + " bits, max payload " +
                                std::to_string(cfg.maxPayload) + ", " + std::to_string(cfg.hostPorts) +
                                " host ports, configuration " + cfg.niConfig);
  if (cfg.rails < 1 || cfg.rails > 4) throw std::invalid_argument("1 to 4 rails");
  clock_ = std::make_unique<ClockDriver>(ctx_.get());
  for (unsigned i = 0; i < cfg.nodes; ++i) {
    for (unsigned r = 0; r < cfg.rails; ++r) {
      const std::string name = "ni" + std::to_string(i) + (r ? "_rail" + std::to_string(r) : "");
      nics_.push_back(makeNic(cfg.dataBits, ctx_.get(), name, cfg.maxPayload, cfg.hostPorts, cfg.niConfig));
      clock_->add(nics_.back().get());
    }
    nodes_.push_back(
        std::make_unique<Node>(i, nics_.back()->bytesPerBeat(), cfg.seed * 7919 + i, cfg.hostPorts, cfg.rails));
    nodes_.back()->setMaxPayload(cfg.maxPayload);
    nodes_.back()->setTenBitTags(cfg.tenBitTagsOnOddNodes && i % 2 == 1);
    nodes_.back()->setHostBackpressure(cfg.hostStall);
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
  fc.capturePoint = cfg.captureRx ? CaptureWriter::Point::Rx : CaptureWriter::Point::Tx;
  for (unsigned r = 0; r < cfg.rails; ++r) {
    fabrics_.push_back(std::make_unique<Fabric>(fc));
    fc.faults.seed += 1000003;  // each plane its own faults
  }
  if (!cfg.pcapPath.empty() && !fabric().tap().open(cfg.pcapPath))
    throw std::runtime_error("cannot write " + cfg.pcapPath);
  if (!cfg.tracePath.empty() && cfg.traceNode < cfg.nodes && !nic(cfg.traceNode).openTrace(cfg.tracePath))
    throw std::runtime_error("waveforms need a build with NI_TRACE=ON (make wave)");
  if (cfg.traceNode < cfg.nodes) nic(cfg.traceNode).setTraceWindow(cfg.traceFrom, cfg.traceCycles);
  in_.resize(nics_.size());
  out_.resize(nics_.size());
}

System::~System() {
  for (auto& n : nics_) n->closeTrace();
  static unsigned instance = 0;
  writeCoverage(ctx_.get(), "system_" + std::to_string(cfg_.nodes) + "n_" + std::to_string(cfg_.dataBits) + "b_" +
                                std::to_string(instance++));
  // Verilator 5.006 unregisters a model's scopes in the thread's current context, not
  // the model's: make it this one (another System built later would otherwise be it,
  // and destroying that one first left a dangling context and hung here).
  Verilated::threadContextp(ctx_.get());
}

void System::reset() {
  clock_->reset(4);
  for (auto& f : fabrics_) f->retrainLinks();
  for (unsigned i = 0; i < size(); ++i)
    for (unsigned r = 0; r < rails(); ++r) {
      node(i).csrWrite(regs::NODE_ID, lidOf(i), Via{0, r});
      node(i).csrWrite(regs::RETX_TIMEOUT, resendTimeout(), Via{0, r});
    }
}

uint32_t System::resendTimeout() const {
  if (cfg_.resendTimeout) return cfg_.resendTimeout;
  // The largest packet: MaxPayload, the largest header a source hands the framer
  // (48 B), a 4DW TLP header, ICRC and VCRC.
  const size_t maxPacket = cfg_.maxPayload + 48 + 16 + 6;
  const uint64_t lifetime = fabrics_.front()->packetLifetime(maxPacket);
  // Before the answer, the answering NI may send every request it has in flight (its
  // 32 resend slots) and as many answers, and its memory takes a while.
  const uint64_t beats = (maxPacket + cfg_.dataBits / 8 - 1) / (cfg_.dataBits / 8);
  const uint64_t answerer = 64 * beats + 100;
  double rtt = double(2 * lifetime + answerer);
  if (cfg_.hostStall > 0 && cfg_.hostStall < 1) rtt /= 1.0 - cfg_.hostStall;  // hosts take beats that much slower
  return static_cast<uint32_t>(std::min(rtt, double(0x7FFF'FFFF)));
}

void System::tick() {
  const unsigned rails = cfg_.rails;
  for (unsigned i = 0; i < size(); ++i)
    for (unsigned r = 0; r < rails; ++r) {
      const unsigned k = i * rails + r;
      in_[k] = NicIn{};
      nodes_[i]->fillNicIn(in_[k], r);
      fabrics_[r]->fillNicIn(i, in_[k]);
      nics_[k]->drive(in_[k]);
      out_[k] = nics_[k]->read();
    }
  clock_->cycle();
  for (unsigned i = 0; i < size(); ++i) {
    for (unsigned r = 0; r < rails; ++r) {
      const unsigned k = i * rails + r;
      nodes_[i]->afterCycle(in_[k], out_[k], r);
      fabrics_[r]->afterCycle(i, in_[k], out_[k]);
    }
    nodes_[i]->endCycle();
  }
  for (auto& f : fabrics_) f->endCycle();
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
  const uint64_t end = cycle() + maxCycles;
  for (;;) {
    unsigned quiet = 0;
    const bool settled = runUntil([&] {
      if (progress && cycle() % 1'000'000 == 0) progress(cycle());
      quiet = idle() ? quiet + 1 : 0;
      return quiet > kQuietCycles;
    }, end > cycle() ? end - cycle() : 0);
    if (!settled) return false;
    if (!resendsPending()) return true;
  }
}

bool System::idle() const {
  for (auto& f : fabrics_)
    if (!f->idle()) return false;
  for (auto& n : nodes_)
    if (!n->idle()) return false;
  return true;
}

void System::pollResends(const std::function<void(bool pending)>& done) {
  // Every NI is asked at once, as a driver would read RETX_BUSY on each.
  struct Poll {
    unsigned left;
    bool pending;
    std::function<void(bool)> done;
  };
  auto poll = std::make_shared<Poll>(Poll{size() * rails(), false, done});
  for (unsigned i = 0; i < size(); ++i)
    for (unsigned r = 0; r < rails(); ++r)
      node(i).csrRead(regs::RETX_BUSY, [poll](uint32_t v, bool ok) {
        poll->pending |= (v & regs::RETX_BUSY_PENDING_MASK) != 0;
        if (!ok) throw std::runtime_error("RETX_BUSY read failed");
        if (--poll->left == 0) poll->done(poll->pending);
      }, Via{0, r});
}

bool System::resendsPending() {
  bool answered = false, pending = false;
  pollResends([&](bool p) {
    answered = true;
    pending = p;
  });
  if (!runUntil([&] { return answered; }, 100000)) throw std::runtime_error("RETX_BUSY reads unanswered");
  return pending;
}

void System::setWindow(unsigned n, unsigned i, const Window& w, unsigned rail) {
  driver::setWindow(csrWriter(n, rail), i, w);
}

void System::clearWindow(unsigned n, unsigned i) { driver::clearWindow(csrWriter(n), i); }

void System::setMemId(unsigned n, unsigned id, const MemRegion& m, unsigned rail) {
  driver::setMemId(csrWriter(n, rail), id, m);
}

void System::setMulticastGroup(unsigned slot, uint16_t mlid, const std::vector<unsigned>& members) {
  fabric().setGroup(mlid, members);
  for (unsigned m : members) driver::setMulticastMember(csrWriter(m), slot, mlid);
}

driver::CsrWrite System::csrWriter(unsigned n, unsigned rail) {
  Node* nd = &node(n);
  return [nd, rail](uint32_t off, uint32_t v) { nd->csrWrite(off, v, Via{0, rail}); };
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

uint32_t System::readCsr(unsigned n, uint32_t off, unsigned rail) {
  bool done = false, ok = false;
  uint32_t value = 0;
  node(n).csrRead(off, [&](uint32_t v, bool good) {
    value = v;
    ok = good;
    done = true;
  }, Via{0, rail});
  if (!runUntil([&] { return done; }, 100000) || !ok)
    throw std::runtime_error("CSR read failed at node " + std::to_string(n));
  return value;
}

}  // namespace ni

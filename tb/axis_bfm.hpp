// SPDX-License-Identifier: Apache-2.0
// AXI4-Stream bus functional models on byte packets: a source that splits
// packets into beats with random idle cycles, a sink that reassembles them with
// random back-pressure. Both check the handshake rules they rely on.
#pragma once
#include <gtest/gtest.h>

#include <deque>
#include <functional>
#include <random>

#include "nic_model.hpp"
#include "verilated_ports.hpp"

namespace ni::tb {

struct Packet {
  Bytes bytes;
  uint8_t dest = 0;    // VC on the fabric
  bool user = false;   // nullified (host out)
  bool lastHole = false;  // malformed: lane 0 of the last beat without its keep bit
  bool midHole = false;   // malformed: lane 1 of the first beat, if not the last, without it
  bool withdrawn = false; // the source withdrew tvalid from one of its beats before the handshake
  uint64_t firstCycle = 0, lastCycle = 0;
};

class AxisSource {
 public:
  AxisSource(unsigned bpb, std::mt19937_64* rng, double idleProb = 0) : bpb_(bpb), rng_(rng), idle_(idleProb) {}
  void push(Bytes b, uint8_t dest = 0, bool lastHole = false, bool midHole = false) {
    q_.push_back(Packet{std::move(b), dest});
    q_.back().lastHole = lastHole;
    q_.back().midHole = midHole;
  }
  bool empty() const { return q_.empty(); }
  size_t pending() const { return q_.size(); }
  void setIdle(double p) { idle_ = p; }
  // A broken host: a beat not taken is withdrawn (tvalid low for a cycle, an AXI4-Stream
  // violation) with probability p, and offered again after.
  void setWithdraw(double p) {
    withdraw_ = p;
    record_ = record_ || p > 0;
  }
  // For each packet sent whole since setWithdraw, in order: whether a beat of it was withdrawn.
  std::deque<bool>& sentWithdrawn() { return sentWithdrawn_; }
  // Whether a beat is offered this cycle (decided once per cycle; held until taken).
  bool offer(Beat* b) {
    if (holding_ && withdraw_ > 0 && std::uniform_real_distribution<double>(0, 1)(*rng_) < withdraw_) {
      holding_ = false;
      q_.front().withdrawn = true;
      return false;
    }
    if (!holding_) {
      if (q_.empty() || !gate_()) return false;
      if (idle_ > 0 && std::uniform_real_distribution<double>(0, 1)(*rng_) < idle_) return false;
      holding_ = true;
    }
    const Packet& p = q_.front();
    b->data.assign(bpb_, 0);
    b->keep = 0;
    for (unsigned j = 0; j < bpb_ && off_ + j < p.bytes.size(); ++j) {
      b->data[j] = p.bytes[off_ + j];
      b->keep |= uint64_t{1} << j;
    }
    b->last = off_ + bpb_ >= p.bytes.size();
    if (b->last && p.lastHole) b->keep &= ~uint64_t{1};
    if (!b->last && off_ == 0 && p.midHole) b->keep &= ~uint64_t{2};
    b->dest = p.dest;
    return true;
  }
  // The beat offered this cycle was accepted.
  void accepted() {
    holding_ = false;
    off_ += bpb_;
    if (off_ >= q_.front().bytes.size()) {
      if (record_) sentWithdrawn_.push_back(q_.front().withdrawn);
      q_.pop_front();
      off_ = 0;
    }
  }
  // Optional gate checked before starting a beat (e.g. a credit at packet start).
  template <class F>
  void setGate(F f) { gate_ = f; }
  bool atPacketStart() const { return off_ == 0; }
  uint8_t nextDest() const { return q_.front().dest; }

 private:
  unsigned bpb_;
  std::mt19937_64* rng_;
  double idle_, withdraw_ = 0;
  bool record_ = false;  // sentWithdrawn() is kept once a withdrawal rate was set
  std::deque<Packet> q_;
  std::deque<bool> sentWithdrawn_;
  size_t off_ = 0;
  bool holding_ = false;
  std::function<bool()> gate_ = [] { return true; };
};

// The beat a Verilated block offers on its m_axis port (tdata, tkeep, tlast, tuser).
template <class M>
Beat offeredBeat(const M& m, unsigned bpb) {
  Beat b;
  b.data.resize(bpb);
  fromPort(m.m_axis_tdata, b.data.data(), bpb);
  b.keep = m.m_axis_tkeep;
  b.last = m.m_axis_tlast;
  b.user = m.m_axis_tuser;
  return b;
}

class AxisSink {
 public:
  AxisSink(unsigned bpb, std::mt19937_64* rng, double stallProb = 0) : bpb_(bpb), rng_(rng), stall_(stallProb) {}
  void setStall(double p) { stall_ = p; }
  bool ready() {
    ready_ = !(stall_ > 0 && std::uniform_real_distribution<double>(0, 1)(*rng_) < stall_);
    return ready_;
  }
  // Call every cycle with what the DUT offered; returns true when a packet completed.
  bool observe(bool valid, const Beat& b, uint64_t cycle) {
    if (wasStalled_) {
      // Valid and payload must hold while not accepted.
      EXPECT_TRUE(valid) << "valid dropped without a handshake at cycle " << cycle;
      if (valid) EXPECT_TRUE(b.data == held_.data && b.keep == held_.keep && b.last == held_.last)
                     << "payload changed while stalled at cycle " << cycle;
    }
    wasStalled_ = valid && !ready_;
    if (wasStalled_) held_ = b;
    if (!(valid && ready_)) return false;
    if (cur_.bytes.empty()) cur_.firstCycle = cycle;
    // Packed stream: keep is lanes 0..k-1, and only a packet's last beat is not full.
    const uint64_t full = bpb_ >= 64 ? ~uint64_t{0} : (uint64_t{1} << bpb_) - 1;
    EXPECT_TRUE(b.keep != 0 && (b.keep & (b.keep + 1)) == 0 && (b.last || b.keep == full))
        << "keep 0x" << std::hex << b.keep << (b.last ? " on a last beat" : " on a beat before the last")
        << " at cycle " << std::dec << cycle;
    for (unsigned j = 0; j < bpb_; ++j) {
      if (b.keep >> j & 1) cur_.bytes.push_back(b.data[j]);
    }
    cur_.dest = b.dest;
    if (!b.last) return false;
    cur_.user = b.user;
    cur_.lastCycle = cycle;
    done_.push_back(std::move(cur_));
    cur_ = Packet{};
    return true;
  }
  std::deque<Packet>& packets() { return done_; }

 private:
  unsigned bpb_;
  std::mt19937_64* rng_;
  double stall_;
  bool ready_ = true, wasStalled_ = false;
  Beat held_;
  Packet cur_;
  std::deque<Packet> done_;
};

}  // namespace ni::tb

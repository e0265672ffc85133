// SPDX-License-Identifier: Apache-2.0
// Communication workloads on the messaging runtime of every node (sim/runtime.hpp):
// ping-pong latency, unidirectional and bidirectional bandwidth with a window of
// messages in flight, and all-to-all (pairwise exchange), over one transport: eager
// sends, rendezvous (every send an RTS, fetched by remote gets), or direct puts into
// the receiver's buffer with its reception counter. Every message's bytes are checked
// at the receiver. The runner (--workload) and the benchmarks use them.
#pragma once
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime.hpp"

namespace ni {

enum class Transport { Eager, Rendezvous, Put };

inline std::optional<Transport> parseTransport(const std::string& s) {
  if (s == "eager") return Transport::Eager;
  if (s == "rndv" || s == "rendezvous") return Transport::Rendezvous;
  if (s == "put") return Transport::Put;
  return std::nullopt;
}
inline const char* transportName(Transport t) {
  return t == Transport::Eager ? "eager" : t == Transport::Rendezvous ? "rndv" : "put";
}

// One measured size of a workload.
struct WorkloadRow {
  uint32_t bytes = 0;
  uint64_t messages = 0;  // measured (warm-up excluded)
  uint64_t cycles = 0;    // measured
  double latency = 0;     // ping-pong: half round trip, cycles; else cycles per batch
  double bytesPerCycle = 0;  // payload delivered per cycle, all receivers together
  bool ok = true;
  std::string error;      // the first thing that went wrong
};

class Messaging {
 public:
  // Buffers: one receive and one send slot per peer and window position, each the
  // message size rounded up to 64 KiB.
  static constexpr unsigned kSlots = 64;
  static constexpr unsigned kWindowMax = 12;  // counters 0-11 count sends, 12-23 receives

  static constexpr uint32_t kMaxBytes = 4 << 20;

  Messaging(System& sys, Transport t, uint32_t maxBytes) : sys_(sys), t_(t) {
    if (maxBytes > kMaxBytes) throw std::invalid_argument("messages of at most 4 MiB");
    RuntimeLayout l;
    // 64 slots of up to 4 MiB fill the 256 MiB between the send and the receive buffers.
    l.bufStride = std::max<uint64_t>(64 << 10, (uint64_t{maxBytes} + 0xFFFF) & ~uint64_t{0xFFFF});
    l.bufBytes = l.bufStride * kSlots;
    l.rndvThreshold = t == Transport::Rendezvous ? 0 : 0xFFFF'FFFF;
    if (t == Transport::Rendezvous) l.inlineMax = 0;  // else the short ones go inline, eagerly
    for (unsigned n = 0; n < sys.size(); ++n) rt_.push_back(std::make_unique<Runtime>(sys, n, sys.csrWriter(n), l));
    sys.drain();
  }
  Runtime& runtime(unsigned n) { return *rt_[n]; }

  // Half round trip of a message between nodes a and b, over `iters` round trips after
  // one to warm up.
  WorkloadRow pingPong(unsigned a, unsigned b, uint32_t bytes, unsigned iters) {
    WorkloadRow r;
    r.bytes = bytes;
    run({{a, b, 0}}, bytes, &r);
    run({{b, a, 0}}, bytes, &r);
    const uint64_t t0 = sys_.cycle();
    for (unsigned k = 0; k < iters && r.ok; ++k) {
      run({{a, b, 0}}, bytes, &r);
      run({{b, a, 0}}, bytes, &r);
    }
    r.cycles = sys_.cycle() - t0;
    r.messages = 2ull * iters;
    r.latency = double(r.cycles) / double(r.messages);
    r.bytesPerCycle = double(bytes) * double(r.messages) / double(r.cycles);
    return r;
  }

  // a sends `window` messages to b at once (and b to a when bidirectional), `iters`
  // times after one warm-up batch.
  WorkloadRow bandwidth(unsigned a, unsigned b, uint32_t bytes, unsigned window, unsigned iters, bool bidirectional) {
    WorkloadRow r;
    r.bytes = bytes;
    window = std::min(window, kWindowMax);
    std::vector<Msg> batch;
    for (unsigned k = 0; k < window; ++k) {
      batch.push_back({a, b, k});
      if (bidirectional) batch.push_back({b, a, k});
    }
    run(batch, bytes, &r);
    const uint64_t t0 = sys_.cycle();
    for (unsigned k = 0; k < iters && r.ok; ++k) run(batch, bytes, &r);
    r.cycles = sys_.cycle() - t0;
    r.messages = uint64_t{iters} * batch.size();
    r.latency = double(r.cycles) / double(iters);
    r.bytesPerCycle = double(bytes) * double(r.messages) / double(r.cycles);
    return r;
  }

  // Pairwise exchange: in round k = 1 .. N-1 every node i sends to node i + k and
  // receives from node i - k, all at once.
  WorkloadRow allToAll(uint32_t bytes) {
    WorkloadRow r;
    r.bytes = bytes;
    const unsigned n = sys_.size();
    const uint64_t t0 = sys_.cycle();
    for (unsigned k = 1; k < n && r.ok; ++k) {
      std::vector<Msg> batch;
      for (unsigned i = 0; i < n; ++i) batch.push_back({i, (i + k) % n, 0});
      run(batch, bytes, &r);
    }
    r.cycles = sys_.cycle() - t0;
    r.messages = uint64_t{n} * (n - 1);
    r.latency = double(r.cycles) / double(n - 1);
    r.bytesPerCycle = double(bytes) * double(r.messages) / double(r.cycles);
    return r;
  }

 private:
  struct Msg {
    unsigned from, to, k;  // k: window position (its slot and counters)
  };
  // The data of a message: a pattern of its source, destination, position and sequence.
  Bytes pattern(const Msg& m, uint32_t bytes) const {
    Bytes d(bytes);
    const uint32_t s = seq_ * 131 + m.from * 31 + m.to * 7 + m.k;
    for (uint32_t i = 0; i < bytes; ++i) d[i] = static_cast<uint8_t>(i * 13 + s + (i >> 8));
    return d;
  }
  // Slots: by peer and window position, so no two messages in flight share one.
  uint64_t slotOf(unsigned peer, unsigned k) const { return (peer * kWindowMax + k) % kSlots; }

  // Every message of the batch at once: the receivers post (a receive, or for a put
  // the reception counter's load), then the senders send; done when every message is
  // in its buffer and every send buffer is free again. Checks the bytes.
  void run(const std::vector<Msg>& batch, uint32_t bytes, WorkloadRow* r) {
    if (!r->ok) return;
    ++seq_;
    std::vector<Bytes> data;
    for (const Msg& m : batch) {
      data.push_back(pattern(m, bytes));
      sys_.node(m.from).memory().write(rt_[m.from]->sendAddr(slotOf(m.to, m.k)), data.back());
    }
    std::vector<unsigned> recvIds(batch.size()), sendIds(batch.size());
    const uint32_t tag = seq_ << 8;
    for (size_t i = 0; i < batch.size(); ++i) {
      const Msg& m = batch[i];
      if (t_ == Transport::Put) driver::loadCounter(sys_.csrWriter(m.to), kWindowMax + m.k, bytes);
      else recvIds[i] = rt_[m.to]->irecv(m.from, tag | m.k, slotOf(m.from, m.k), bytes, kWindowMax + m.k);
    }
    for (size_t i = 0; i < batch.size(); ++i) {
      const Msg& m = batch[i];
      const uint64_t src = slotOf(m.to, m.k) * rt_[m.from]->layout().bufStride;
      if (t_ == Transport::Put)
        rt_[m.from]->put(m.to, src, rt_[m.to]->layout().recvMid, slotOf(m.from, m.k) * rt_[m.to]->layout().bufStride,
                        bytes, m.k, kWindowMax + m.k);
      else sendIds[i] = rt_[m.from]->isend(m.to, tag | m.k, slotOf(m.to, m.k), bytes, m.k);
    }
    // Each CPU polls its own completions; a receive first, its sender's buffer after.
    std::vector<bool> received(batch.size(), false), sent(batch.size(), false);
    size_t left = 2 * batch.size();
    const uint64_t limit = sys_.cycle() + 20'000'000 + uint64_t{bytes} * batch.size();
    while (left && r->ok) {
      for (size_t i = 0; i < batch.size() && r->ok; ++i) {
        const Msg& m = batch[i];
        if (!received[i]) {
          if (t_ == Transport::Put) {
            received[i] = rt_[m.to]->counterZero(kWindowMax + m.k);
          } else {
            const Runtime::Status s = rt_[m.to]->recvStatus(recvIds[i]);
            if (s != Runtime::Status::Pending && s != Runtime::Status::Done) fail(r, "a receive ended in error", m);
            received[i] = s == Runtime::Status::Done;
          }
          if (received[i]) {
            --left;
            const Bytes got = sys_.node(m.to).memory().read(rt_[m.to]->recvAddr(slotOf(m.from, m.k)), bytes);
            if (got != data[i]) fail(r, "wrong bytes", m);
          }
        } else if (!sent[i]) {
          if (t_ == Transport::Put) sent[i] = rt_[m.from]->counterZero(m.k);
          else sent[i] = rt_[m.from]->sendStatus(sendIds[i]) == Runtime::Status::Done;
          left -= sent[i];
        }
      }
      if (left) sys_.runUntil([] { return false; }, 1);
      if (sys_.rtlError()) fail(r, "an RTL assertion failed", batch[0]);
      if (left && sys_.cycle() > limit) fail(r, "no progress (a message or its completion is lost)", batch[0]);
    }
  }
  void fail(WorkloadRow* r, const std::string& what, const Msg& m) {
    if (!r->ok) return;
    r->ok = false;
    r->error = what + " (" + std::to_string(r->bytes) + " B from node " + std::to_string(m.from) + " to node " +
               std::to_string(m.to) + ", cycle " + std::to_string(sys_.cycle()) + ")";
  }

  System& sys_;
  Transport t_;
  std::vector<std::unique_ptr<Runtime>> rt_;
  uint32_t seq_ = 0;
};

}  // namespace ni

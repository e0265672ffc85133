// SPDX-License-Identifier: Apache-2.0
// Communication workloads on the messaging runtime of every node (sim/runtime.hpp):
// ping-pong latency, unidirectional and bidirectional bandwidth with a window of
// messages in flight, message rate of many pairs at once, all-to-all (pairwise exchange), broadcast and allreduce (binomial
// trees; the sum of 64-bit integers, checked) and a halo exchange with the topology's
// neighbours, over one transport: eager sends, rendezvous (every send an RTS, fetched
// by remote gets), direct puts into the receiver's buffer with its reception counter,
// or PIO (the sender's CPU stores the message through a window of its NI into the
// receiver's buffer; the receiver's CPU watches its memory). Every message's bytes are
// checked at the receiver. The runner (--workload) and the benchmarks use them.
// With several NIs per node (rails) a node runs a runtime on each: a put of at least
// kStripeMin bytes is striped over all rails (a piece per rail, each with the rail's
// own counters); any other message goes over the rail of its destination (node % rails).
// PIO stays on rail 0.
#pragma once
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime.hpp"

namespace ni {

enum class Transport { Eager, Rendezvous, Put, Pio };

inline std::optional<Transport> parseTransport(const std::string& s) {
  if (s == "eager") return Transport::Eager;
  if (s == "rndv" || s == "rendezvous") return Transport::Rendezvous;
  if (s == "put") return Transport::Put;
  if (s == "pio") return Transport::Pio;
  return std::nullopt;
}
inline const char* transportName(Transport t) {
  return t == Transport::Eager ? "eager" : t == Transport::Rendezvous ? "rndv" : t == Transport::Put ? "put" : "pio";
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
  // Buffers: 64 send and 64 receive slots, each the message size rounded up to 64 KiB.
  static constexpr unsigned kSlots = 64;
  static constexpr unsigned kWindowMax = 12;  // counters 0-11 count sends, 12-23 receives

  static constexpr uint32_t kMaxBytes = 4 << 20;
  static constexpr uint16_t kPioMid = 2;        // PIO: the receive buffers under this memory ID
  static constexpr uint32_t kStripeMin = 64 << 10;  // puts this long are striped over the rails
  static constexpr unsigned kPioNodesMax = kNumArt;  // PIO: a window per peer

  Messaging(System& sys, Transport t, uint32_t maxBytes) : sys_(sys), t_(t) {
    if (maxBytes > kMaxBytes) throw std::invalid_argument("messages of at most 4 MiB");
    RuntimeLayout l;
    // 64 slots of up to 4 MiB fill the 256 MiB between the send and the receive buffers.
    l.bufStride = std::max<uint64_t>(64 << 10, (uint64_t{maxBytes} + 0xFFFF) & ~uint64_t{0xFFFF});
    l.bufBytes = l.bufStride * kSlots;
    l.rndvThreshold = t == Transport::Rendezvous ? 0 : 0xFFFF'FFFF;
    if (t == Transport::Rendezvous) l.inlineMax = 0;  // else the short ones go inline, eagerly
    for (unsigned n = 0; n < sys.size(); ++n)
      for (unsigned r = 0; r < sys.rails(); ++r)
        rt_.push_back(std::make_unique<Runtime>(sys, n, sys.csrWriter(n, r), l.onRail(r)));
    if (t == Transport::Pio) {
      if (sys.size() > kPioNodesMax) throw std::invalid_argument("PIO: at most 16 nodes (a window per peer)");
      // Node s reaches node d's receive buffers through window d, translated at d.
      for (unsigned d = 0; d < sys.size(); ++d) sys.setMemId(d, kPioMid, MemRegion{true, l.recvBuf, l.bufBytes, false, true});
      for (unsigned s = 0; s < sys.size(); ++s)
        for (unsigned d = 0; d < sys.size(); ++d) {
          if (s == d) continue;
          Window w;
          w.base = pioWindow(d, l.bufBytes);
          w.size = l.bufBytes;
          w.dstNode = d;
          w.memid = kPioMid;
          w.rxXlate = true;
          sys.setWindow(s, d, w);
        }
    }
    sys.drain();
  }
  Runtime& runtime(unsigned n, unsigned rail = 0) { return *rt_[n * sys_.rails() + rail]; }
  // Called every cycle while messages are under way (the caller paces its progress lines).
  std::function<void(uint64_t cycle)> progress;
  // Watchdog: a batch in which no message is received and no send completes for this
  // many cycles (plus one per byte of a message, for the time a long one takes) fails,
  // naming the first message that is stuck and where.
  uint64_t watchdogCycles = 2'000'000;
  // PIO: where node d's receive buffers (`bytes` of them) appear to every other node.
  static uint64_t pioWindow(unsigned d, uint64_t bytes) { return kApertureBase + d * bytes; }

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
    finish(&r, t0, 2ull * iters, 2 * iters);
    return r;
  }

  // a sends `window` messages to b at once (and b to a when bidirectional), `iters`
  // times after one warm-up batch.
  WorkloadRow bandwidth(unsigned a, unsigned b, uint32_t bytes, unsigned window, unsigned iters, bool bidirectional) {
    window = std::min(window, kWindowMax);
    std::vector<Msg> batch;
    for (unsigned k = 0; k < window; ++k) {
      batch.push_back({a, b, k});
      if (bidirectional) batch.push_back({b, a, k});
    }
    return repeated(batch, bytes, iters);
  }

  // Message rate (as OSU's multiple-pair test): node i of the first half sends
  // `window` messages at once to node i + N/2 (an odd last node stays idle), all pairs
  // together, `iters` times after one warm-up batch. The row's msgs/kcycle is the
  // whole system's.
  WorkloadRow messageRate(uint32_t bytes, unsigned window, unsigned iters) {
    window = std::min(window, kWindowMax);
    const unsigned half = sys_.size() / 2;
    std::vector<Msg> batch;
    for (unsigned i = 0; i < half; ++i)
      for (unsigned k = 0; k < window; ++k) batch.push_back({i, i + half, k});
    return repeated(batch, bytes, iters);
  }

  // Binomial-tree broadcast of `bytes` from node 0: in round r every node below 2^r
  // that has the data sends it to the node 2^r above it. Every node's copy is checked.
  WorkloadRow broadcast(uint32_t bytes) {
    WorkloadRow r;
    r.bytes = bytes;
    const unsigned n = sys_.size();
    Bytes data(bytes);
    for (uint32_t i = 0; i < bytes; ++i) data[i] = static_cast<uint8_t>(i * 29 + 5 + (i >> 10));
    const uint64_t t0 = sys_.cycle();
    for (unsigned step = 1; step < n && r.ok; step *= 2) {
      std::vector<Msg> batch;
      std::vector<Bytes> payload;
      for (unsigned i = 0; i < step && i + step < n; ++i) {
        batch.push_back({i, i + step, 0});
        payload.push_back(data);
      }
      run(batch, bytes, &r, &payload);
    }
    finish(&r, t0, n - 1, 1);
    return r;
  }

  // Allreduce: the sum, element by element, of every node's `bytes / 8` 64-bit
  // integers, reduced up a binomial tree to node 0 (each CPU adding what it receives
  // to its own vector) and broadcast back down it. Every node's result is checked.
  WorkloadRow allreduce(uint32_t bytes) {
    WorkloadRow r;
    r.bytes = bytes;
    const unsigned n = sys_.size(), count = bytes / 8;
    std::vector<std::vector<uint64_t>> vec(n, std::vector<uint64_t>(count));
    std::vector<uint64_t> sum(count, 0);
    for (unsigned v = 0; v < n; ++v)
      for (unsigned i = 0; i < count; ++i) {
        vec[v][i] = (uint64_t{v + 1} << 40) ^ (uint64_t{i} * 0x9E3779B97F4A7C15ull) ^ seq_;
        sum[i] += vec[v][i];
      }
    auto toBytes = [](const std::vector<uint64_t>& x) {
      Bytes b(x.size() * 8);
      for (size_t i = 0; i < x.size(); ++i) putLe(&b[8 * i], 8, x[i]);
      return b;
    };
    const uint64_t t0 = sys_.cycle();
    unsigned top = 1;
    while (top < n) top *= 2;
    for (unsigned step = 1; step < top && r.ok; step *= 2) {  // up: node i + step adds into node i
      std::vector<Msg> batch;
      std::vector<Bytes> payload;
      for (unsigned i = 0; i + step < n; i += 2 * step) {
        batch.push_back({i + step, i, 0});
        payload.push_back(toBytes(vec[i + step]));
      }
      run(batch, bytes, &r, &payload);
      for (const Msg& m : batch) {
        const Bytes got = sys_.node(m.to).memory().read(runtime(m.to).recvAddr(0), bytes);  // its only message
        for (unsigned i = 0; i < count; ++i) vec[m.to][i] += getLe(&got[8 * i], 8);
      }
    }
    for (unsigned step = top / 2; step >= 1 && r.ok; step /= 2) {  // down: node i sends the sum to i + step
      std::vector<Msg> batch;
      std::vector<Bytes> payload;
      for (unsigned i = 0; i + step < n; i += 2 * step) {
        batch.push_back({i, i + step, 0});
        payload.push_back(toBytes(vec[i]));
      }
      run(batch, bytes, &r, &payload);
      for (const Msg& m : batch) vec[m.to] = vec[m.from];
    }
    for (unsigned v = 0; v < n && r.ok; ++v)
      if (vec[v] != sum) fail(&r, "wrong sum", Msg{0, v, 0});
    finish(&r, t0, 2ull * (n - 1), 1);
    return r;
  }

  // Halo exchange: every node sends `bytes` to each of its neighbours at once (on a
  // ring or torus its two per dimension, on a crossbar the nodes before and after it),
  // `iters` times after one warm-up exchange.
  WorkloadRow halo(uint32_t bytes, unsigned iters) {
    const unsigned n = sys_.size();
    const Topology& t = sys_.fabric().topology();
    std::vector<Msg> batch;
    for (unsigned i = 0; i < n; ++i) {
      if (t.direct()) {
        for (unsigned p = 1; p < t.ports(); ++p)
          if (t.neighbour(i, p) != i) batch.push_back({i, t.neighbour(i, p), p - 1});
      } else {
        batch.push_back({i, (i + 1) % n, 0});
        batch.push_back({i, (i + n - 1) % n, 1});
      }
    }
    return repeated(batch, bytes, iters);
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
    finish(&r, t0, uint64_t{n} * (n - 1), n - 1);
    return r;
  }

 private:
  struct Msg {
    unsigned from, to, k;  // k: window position (its slot and counters)
  };
  // The same batch `iters` times after one to warm up.
  WorkloadRow repeated(const std::vector<Msg>& batch, uint32_t bytes, unsigned iters) {
    WorkloadRow r;
    r.bytes = bytes;
    run(batch, bytes, &r);
    const uint64_t t0 = sys_.cycle();
    for (unsigned k = 0; k < iters && r.ok; ++k) run(batch, bytes, &r);
    finish(&r, t0, uint64_t{iters} * batch.size(), iters);
    return r;
  }
  // The figures of a row measured from cycle t0: `messages` delivered, `latency` the
  // cycles per one of `units` (a round trip half, a round, a batch).
  void finish(WorkloadRow* r, uint64_t t0, uint64_t messages, uint64_t units) {
    r->cycles = std::max<uint64_t>(sys_.cycle() - t0, 1);
    r->messages = messages;
    r->latency = double(r->cycles) / double(std::max<uint64_t>(units, 1));
    r->bytesPerCycle = double(r->bytes) * double(messages) / double(r->cycles);
  }
  // The data of a message: a pattern of its source, destination, position and sequence.
  Bytes pattern(const Msg& m, uint32_t bytes) const {
    Bytes d(bytes);
    const uint32_t s = seq_ * 131 + m.from * 31 + m.to * 7 + m.k;
    for (uint32_t i = 0; i < bytes; ++i) d[i] = static_cast<uint8_t>(i * 13 + s + (i >> 8));
    return d;
  }

  // Every message of the batch at once: the receivers post (a receive, or for a put
  // the reception counter's load), then the senders send; done when every message is
  // in its buffer and every send buffer is free again. Checks the bytes.
  // The data is `payload` (one per message) if given, else a pattern. A message's
  // send slot is its place among its sender's messages in the batch, its receive slot
  // its place among its receiver's; its counters are its k (distinct per node in a batch).
  void run(const std::vector<Msg>& batch, uint32_t bytes, WorkloadRow* r, const std::vector<Bytes>* payload = nullptr) {
    if (!r->ok) return;
    ++seq_;
    std::vector<Bytes> data;
    std::vector<uint64_t> sendSlot(batch.size()), recvSlot(batch.size());
    std::vector<std::vector<Piece>> parts(batch.size());
    std::map<unsigned, uint64_t> sends, recvs;
    for (size_t i = 0; i < batch.size(); ++i) {
      const Msg& m = batch[i];
      parts[i] = pieces(m, bytes);
      sendSlot[i] = sends[m.from]++;
      recvSlot[i] = recvs[m.to]++;
      data.push_back(payload ? (*payload)[i] : pattern(m, bytes));
      sys_.node(m.from).memory().write(runtime(m.from).sendAddr(sendSlot[i]), data.back());
    }
    std::vector<unsigned> recvIds(batch.size()), sendIds(batch.size());
    const uint32_t tag = seq_ << 8;
    for (size_t i = 0; i < batch.size(); ++i) {
      const Msg& m = batch[i];
      if (t_ == Transport::Put)
        for (const Piece& p : parts[i]) driver::loadCounter(sys_.csrWriter(m.to, p.rail), kWindowMax + m.k, p.len);
      // PIO: the receiver's buffer holds the complement of what comes, so its last bytes
      // change when the message is in (posted writes arrive in order).
      else if (t_ == Transport::Pio) sys_.node(m.to).memory().write(runtime(m.to).recvAddr(recvSlot[i]), complement(data[i]));
      else recvIds[i] = runtime(m.to, railOf(m)).irecv(m.from, tag | m.k, recvSlot[i], bytes, kWindowMax + m.k);
    }
    for (size_t i = 0; i < batch.size(); ++i) {
      const Msg& m = batch[i];
      const uint64_t stride = runtime(m.from).layout().bufStride;
      if (t_ == Transport::Pio)
        sys_.node(m.from).store(pioWindow(m.to, runtime(m.to).layout().bufBytes) + recvSlot[i] * stride, data[i]);
      else if (t_ == Transport::Put)
        for (const Piece& p : parts[i])
          runtime(m.from, p.rail).put(m.to, sendSlot[i] * stride + p.off, runtime(m.to).layout().recvMid,
                                      recvSlot[i] * stride + p.off, p.len, m.k, kWindowMax + m.k);
      else sendIds[i] = runtime(m.from, railOf(m)).isend(m.to, tag | m.k, sendSlot[i], bytes, m.k);
    }
    // Each CPU polls its own completions; a receive first, its sender's buffer after.
    std::vector<bool> received(batch.size(), false), sent(batch.size(), false);
    size_t left = 2 * batch.size(), leftBefore = left;
    uint64_t quietSince = sys_.cycle();
    while (left && r->ok) {
      for (size_t i = 0; i < batch.size() && r->ok; ++i) {
        const Msg& m = batch[i];
        if (!received[i]) {
          if (t_ == Transport::Put) {
            received[i] = true;
            for (const Piece& p : parts[i])
              received[i] = received[i] && runtime(m.to, p.rail).counterZero(kWindowMax + m.k);
          } else if (t_ == Transport::Pio) {
            const uint64_t last = runtime(m.to).recvAddr(recvSlot[i]) + bytes - 4;
            received[i] = sys_.node(m.to).memory().read(last, 4) == Bytes(data[i].end() - 4, data[i].end());
          } else {
            const Runtime::Status s = runtime(m.to, railOf(m)).recvStatus(recvIds[i]);
            if (s != Runtime::Status::Pending && s != Runtime::Status::Done) fail(r, "a receive ended in error", m);
            received[i] = s == Runtime::Status::Done;
          }
          if (received[i]) {
            --left;
            const Bytes got = sys_.node(m.to).memory().read(runtime(m.to).recvAddr(recvSlot[i]), bytes);
            if (got != data[i]) fail(r, "wrong bytes", m);
          }
        } else if (!sent[i]) {
          if (t_ == Transport::Pio) sent[i] = true;  // the stores are the CPU's: done when issued
          else if (t_ == Transport::Put) {
            sent[i] = true;
            for (const Piece& p : parts[i]) sent[i] = sent[i] && runtime(m.from, p.rail).counterZero(m.k);
          } else {
            sent[i] = runtime(m.from, railOf(m)).sendStatus(sendIds[i]) == Runtime::Status::Done;
          }
          left -= sent[i];
        }
      }
      if (left) sys_.runUntil([] { return false; }, 1);
      if (progress) progress(sys_.cycle());
      if (sys_.rtlError()) fail(r, "an RTL assertion failed", batch[0]);
      if (left != leftBefore) {
        leftBefore = left;
        quietSince = sys_.cycle();
      } else if (left && sys_.cycle() - quietSince > watchdogCycles + bytes) {
        for (size_t i = 0; i < batch.size(); ++i)
          if (!received[i] || !sent[i]) {
            fail(r, "watchdog: no progress for " + std::to_string(sys_.cycle() - quietSince) + " cycles; " +
                        stuckAt(batch[i], parts[i], received[i], recvIds[i], sendIds[i]), batch[i]);
            break;
          }
      }
    }
  }
  // The rail a message that is not striped goes over: its destination's (PIO: 0).
  unsigned railOf(const Msg& m) const { return t_ == Transport::Pio ? 0 : m.to % sys_.rails(); }
  // The pieces a message travels as: a put of kStripeMin or more, one per rail (64-byte
  // multiples, the last one shorter); anything else whole over railOf.
  struct Piece {
    unsigned rail;
    uint32_t off, len;
  };
  std::vector<Piece> pieces(const Msg& m, uint32_t bytes) const {
    const unsigned rails = sys_.rails();
    if (t_ != Transport::Put || rails == 1 || bytes < kStripeMin) return {{railOf(m), 0, bytes}};
    std::vector<Piece> v;
    const uint32_t step = ((bytes + rails - 1) / rails + 63) & ~63u;
    for (uint32_t off = 0, r = 0; off < bytes; off += step, ++r) v.push_back({r, off, std::min(step, bytes - off)});
    return v;
  }
  // Where message m is stuck: its receive (nothing, or not all of it, has arrived) or,
  // once received, its send completion; with the NI state that tells why.
  std::string stuckAt(const Msg& m, const std::vector<Piece>& parts, bool received, unsigned recvId, unsigned sendId) {
    auto hex = [](uint32_t v) {
      char b[16];
      std::snprintf(b, sizeof b, "0x%x", v);
      return std::string(b);
    };
    // The NI's view: STATUS and the resend failures of the node, on the rail used.
    auto niState = [&](unsigned node, unsigned rail) {
      return "node " + std::to_string(node) + " NI" + (sys_.rails() > 1 ? " (rail " + std::to_string(rail) + ")" : "") +
             ": STATUS " + hex(sys_.readCsr(node, regs::STATUS, rail)) + ", RETX_FAIL_CNT " +
             std::to_string(sys_.readCsr(node, regs::RETX_FAIL_CNT, rail));
    };
    // The rail of the message, or of its first piece still under way.
    unsigned rail = parts.front().rail;
    for (const Piece& p : parts)
      if (!runtime(received ? m.from : m.to, p.rail).counterZero(received ? m.k : kWindowMax + m.k)) {
        rail = p.rail;
        break;
      }
    std::string where;
    if (!received) {
      const unsigned rc = kWindowMax + m.k;
      where = "its receive at node " + std::to_string(m.to) + " is not complete (";
      if (t_ == Transport::Put)
        where += "reception counter " + std::to_string(rc) + " still at " +
                 std::to_string(sys_.readCsr(m.to, regs::CNT_VALUE(rc), rail)) + " bytes";
      else if (t_ == Transport::Pio)
        where += "the message's last bytes are not in its buffer";
      else
        where += std::string(runtime(m.to, rail).matched(recvId) ? "matched, its data not all in"
                                                                  : "no message matched it");
      where += "); " + niState(m.to, rail) + "; " + niState(m.from, rail);
    } else {
      where = "its send at node " + std::to_string(m.from) + " has not completed (";
      where += t_ == Transport::Put ? "injection counter " + std::to_string(m.k) + " still at " +
                                          std::to_string(sys_.readCsr(m.from, regs::CNT_VALUE(m.k), rail)) + " bytes"
                                    : "send " + std::to_string(sendId) + " pending";
      where += "); " + niState(m.from, rail);
    }
    return where;
  }
  static Bytes complement(Bytes b) {
    for (auto& c : b) c = static_cast<uint8_t>(~c);
    return b;
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

// SPDX-License-Identifier: Apache-2.0
// Benchmark of the two message protocols (sim/runtime.hpp) in a two-node system at 64
// bits: the ping-pong half round trip, in cycles, of messages of 8 B to 64 KiB sent
// eagerly (RNDV_THRESHOLD at its reset value: every send is eager) and by rendezvous
// (threshold 0: every send from memory leaves as an RTS and is fetched by remote gets),
// and the crossover: the smallest size from which rendezvous is faster.
//
// A round: node 1 has posted its receive, node 0's CPU posts the send (up to 256 B
// eagerly its data is copied inline into the ring, as the runtime does); node 1's CPU
// polls until the message is in its receive buffer (an eager message: its entries in
// the eager FIFO, copied out; a rendezvous: its reception counter at zero, read in
// CNT_ZERO), posts the next receive and sends the message back. The CPU's copy out of
// the eager FIFO is not charged (the simulation has no CPU time): a real eager receive
// is slower by the copy, so the real crossover lies at or below the one measured here.
// Writes JSON and a Markdown table; fails when a message lands wrong, or when eager is
// not the faster at 8 B or rendezvous not the faster at 64 KiB.
//   usage: bench_protocols [out.json] [out.md] [--quick]   (--quick: 8 B, 256 B, 64 KiB)
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "ni_regs.hpp"
#include "runtime.hpp"

using namespace ni;

namespace {

constexpr unsigned kRounds = 8;  // round trips measured per size, after one to warm up

struct Row {
  uint32_t bytes = 0;
  double eager = 0, rndv = 0;  // half round trip, cycles
};

// Half round trip of `bytes` with every send eager or every send by rendezvous.
double pingPong(uint32_t bytes, bool rendezvous, bool* ok) {
  SystemConfig c;
  c.nodes = 2;
  c.dataBits = 64;
  System sys(c);
  sys.reset();
  RuntimeLayout l;
  l.rndvThreshold = rendezvous ? 0 : 0xFFFF'FFFF;
  if (rendezvous) l.inlineMax = 0;  // else the shortest go inline, always eager
  Runtime r0(sys, 0, sys.csrWriter(0), l), r1(sys, 1, sys.csrWriter(1), l);
  *ok &= sys.drain();
  Runtime* rt[2] = {&r0, &r1};
  std::vector<Bytes> data(2, Bytes(bytes));
  for (unsigned n = 0; n < 2; ++n) {
    for (uint32_t i = 0; i < bytes; ++i) data[n][i] = static_cast<uint8_t>(i * 7 + n * 91 + i / 251);
    sys.node(n).memory().write(rt[n]->sendAddr(0), data[n]);
  }
  // One way: `from` sends, `to` receives (its receive posted first) and waits for it.
  auto oneWay = [&](unsigned from, unsigned to, uint32_t tag) {
    const unsigned id = rt[to]->irecv(from, tag, 1, bytes, 1);
    rt[from]->isend(to, tag, 0, bytes, 2);
    for (uint64_t guard = 0; rt[to]->recvStatus(id) != Runtime::Status::Done && guard < 10'000'000; ++guard)
      sys.runUntil([] { return false; }, 1);
    *ok &= rt[to]->recvStatus(id) == Runtime::Status::Done && rt[to]->received(id).rendezvous == rendezvous &&
           sys.node(to).memory().read(rt[to]->recvAddr(1), bytes) == data[from];
  };
  oneWay(0, 1, 0);
  oneWay(1, 0, 1);
  const uint64_t t0 = sys.cycle();
  for (unsigned k = 0; k < kRounds && *ok; ++k) {
    oneWay(0, 1, 2 + 2 * k);
    oneWay(1, 0, 3 + 2 * k);
  }
  const double half = double(sys.cycle() - t0) / (2.0 * kRounds);
  *ok &= sys.drain() && !sys.rtlError();
  return half;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> pos;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) quick = true;
    else pos.push_back(argv[i]);
  }
  const std::string jsonPath = pos.size() > 0 ? pos[0] : "protocols_bench.json";
  const std::string mdPath = pos.size() > 1 ? pos[1] : "protocols_bench.md";
  const std::vector<uint32_t> sizes =
      quick ? std::vector<uint32_t>{8, 256, 64 << 10}
            : std::vector<uint32_t>{8, 64, 256, 1 << 10, 2 << 10, 4 << 10, 8 << 10, 16 << 10, 24 << 10,
                                    32 << 10, 48 << 10, 64 << 10};
  std::vector<Row> rows;
  bool ok = true;
  uint32_t crossover = 0;
  for (uint32_t s : sizes) {
    Row r;
    r.bytes = s;
    r.eager = pingPong(s, false, &ok);
    r.rndv = pingPong(s, true, &ok);
    if (!crossover && r.rndv < r.eager) crossover = s;
    if (crossover && r.rndv >= r.eager) crossover = 0;  // faster again eagerly: not crossed yet
    std::printf("%6u B: eager %8.1f cycles, rendezvous %8.1f cycles%s\n", s, r.eager, r.rndv, ok ? "" : " FAILED");
    std::fflush(stdout);
    rows.push_back(r);
  }
  ok &= rows.front().eager < rows.front().rndv;  // 8 B: eager is the faster
  ok &= rows.back().rndv < rows.back().eager;    // 64 KiB: rendezvous is the faster
  std::ofstream js(jsonPath), md(mdPath);
  js << "{\"data_width\": 64, \"rounds\": " << kRounds << ", \"crossover_bytes\": " << crossover
     << ", \"rows\": [\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    js << "  {\"message_bytes\": " << rows[i].bytes << ", \"eager_half_rtt_cycles\": " << rows[i].eager
       << ", \"rendezvous_half_rtt_cycles\": " << rows[i].rndv << "}" << (i + 1 < rows.size() ? "," : "") << "\n";
  }
  js << "]}\n";
  md << "| message | eager: half round trip (cycles) | rendezvous: half round trip (cycles) | faster |\n"
        "|---|---|---|---|\n";
  char buf[160];
  for (const Row& r : rows) {
    std::snprintf(buf, sizeof buf, "| %u B | %.1f | %.1f | %s |\n", r.bytes, r.eager, r.rndv,
                  r.eager <= r.rndv ? "eager" : "rendezvous");
    md << buf;
  }
  md << "\nTwo nodes, 64-bit data path, MaxPayload 256, 10-cycle links, 20-cycle memory; " << kRounds
     << " round trips per size after one to warm up. Crossover (rendezvous faster from here on): "
     << (crossover ? std::to_string(crossover) + " B" : std::string("not within the sweep"))
     << ". The CPU's copy out of the eager FIFO is not charged.\n";
  return ok ? 0 : 1;
}

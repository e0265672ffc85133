// SPDX-License-Identifier: Apache-2.0
// Benchmark of confirmed writes and reliable delivery in the multi-node system:
//  - latency of one confirmed write, per confirmation point (sending NI, receiving
//    NI, receiving memory), one hop, idle system: cycles from the CPU's DMWr entering
//    the host link to the confirmation arriving back at the CPU;
//  - sustained confirmed writes with 32 outstanding from one node to another,
//    fault-free: writes and payload bytes per cycle;
//  - goodput of the soak workload (8 nodes) under the soak's fault rates, as a
//    fraction of the same workload's goodput without faults.
// Writes JSON and a Markdown table.   usage: bench_reliable [out.json] [out.md]
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "address_map.hpp"
#include "soak.hpp"
#include "system.hpp"

using namespace ni;

namespace {

constexpr uint64_t kLanding = 0x1'0000'0000ull;
const char* pointName(ConfAt a) {
  return a == ConfAt::SenderNi ? "sending NI" : a == ConfAt::ReceiverNi ? "receiving NI" : "receiving memory";
}

struct PointFigures {
  unsigned width = 0;
  ConfAt at = ConfAt::SenderNi;
  uint64_t latency = 0;       // cycles, one write on an idle system
  double writesPerCycle = 0;  // 32 outstanding
  double bytesPerCycle = 0;
  bool ok = true;
};

PointFigures measurePoint(unsigned width, ConfAt at) {
  SystemConfig c;
  c.nodes = 2;
  c.dataBits = width;
  System sys(c);
  sys.reset();
  sys.setMemId(1, 0, MemRegion{true, kLanding, 1 << 20, true, true, false});
  Window w;
  w.base = kApertureBase;
  w.size = 1 << 20;
  w.dstNode = 1;
  w.confAt = at;
  sys.setWindow(0, 0, w);
  PointFigures f;
  f.width = width;
  f.at = at;
  f.ok = sys.drain();
  // Latency: the best of a few single writes (the first warms nothing up, but is kept honest).
  f.latency = UINT64_MAX;
  for (int i = 0; i < 8; ++i) {
    const uint64_t t0 = sys.cycle();
    uint64_t t1 = 0;
    bool good = false;
    sys.node(0).confirmedStore(kApertureBase + 64 * i, Bytes(64, uint8_t(i)), [&](const LoadResult& r) {
      t1 = sys.cycle();
      good = r.ok;
    });
    f.ok = f.ok && sys.runUntil([&] { return t1 != 0; }, 100000) && good && sys.drain();
    f.latency = std::min(f.latency, t1 - t0);
  }
  // Throughput: 32 confirmed writes of 64 B outstanding, 2000 in all.
  constexpr unsigned kWrites = 2000, kOutstanding = 32, kBytes = 64;
  unsigned issued = 0, confirmed = 0, failed = 0;
  const uint64_t t0 = sys.cycle();
  while (confirmed < kWrites && sys.cycle() - t0 < 2'000'000) {
    if (issued < kWrites && issued - confirmed < kOutstanding) {
      sys.node(0).confirmedStore(kApertureBase + (issued % 1024) * kBytes, Bytes(kBytes, uint8_t(issued)),
                                 [&](const LoadResult& r) {
                                   ++confirmed;
                                   failed += !r.ok;
                                 });
      ++issued;
    }
    sys.tick();
  }
  const double cycles = double(sys.cycle() - t0);
  f.writesPerCycle = confirmed / cycles;
  f.bytesPerCycle = confirmed * double(kBytes) / cycles;
  f.ok = f.ok && confirmed == kWrites && failed == 0 && sys.drain() && !sys.rtlError();
  return f;
}

struct Goodput {
  double faultFree = 0, faulty = 0;
  uint64_t cyclesFree = 0, cyclesFaulty = 0;
  bool ok = true;
};

Goodput measureGoodput() {
  Goodput g;
  for (bool faults : {false, true}) {
    SystemConfig c;
    c.nodes = 8;
    c.seed = 7;
    if (faults) c.faults = soakFaults(7);
    System sys(c);
    sys.reset();
    SoakConfig sc;
    sc.ops = 20000;
    sc.seed = 7;
    const SoakResult r = runSoak(sys, sc);
    g.ok = g.ok && r.ok() && !sys.rtlError();
    (faults ? g.faulty : g.faultFree) = r.goodput();
    (faults ? g.cyclesFaulty : g.cyclesFree) = r.cycles;
  }
  return g;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string jsonPath = argc > 1 ? argv[1] : "reliable_bench.json";
  const std::string mdPath = argc > 2 ? argv[2] : "reliable_bench.md";
  std::vector<PointFigures> points;
  bool ok = true;
  for (unsigned width : {64u, 512u})
    for (ConfAt at : {ConfAt::SenderNi, ConfAt::ReceiverNi, ConfAt::Memory}) {
      points.push_back(measurePoint(width, at));
      ok = ok && points.back().ok;
    }
  const Goodput g = measureGoodput();
  ok = ok && g.ok;

  std::ofstream js(jsonPath), md(mdPath);
  js << "{\"confirmed_writes\": [\n";
  md << "| data width | confirmation point | latency, one write (cycles) | 32 outstanding: writes/cycle | "
        "32 outstanding: payload bytes/cycle (64 B writes) |\n|---|---|---|---|---|\n";
  for (size_t i = 0; i < points.size(); ++i) {
    const PointFigures& f = points[i];
    char line[256];
    std::snprintf(line, sizeof line,
                  "  {\"width\": %u, \"point\": \"%s\", \"latency\": %llu, \"writes_per_cycle\": %.4f, "
                  "\"bytes_per_cycle\": %.3f}%s\n",
                  f.width, pointName(f.at), static_cast<unsigned long long>(f.latency), f.writesPerCycle,
                  f.bytesPerCycle, i + 1 < points.size() ? "," : "");
    js << line;
    std::snprintf(line, sizeof line, "| %u | %s | %llu | %.4f | %.3f |\n", f.width, pointName(f.at),
                  static_cast<unsigned long long>(f.latency), f.writesPerCycle, f.bytesPerCycle);
    md << line;
    std::fputs(line, stdout);
  }
  char line[512];
  std::snprintf(line, sizeof line,
                "],\n\"soak_goodput\": {\"ops\": 20000, \"nodes\": 8, \"fault_free\": %.4f, \"faulty\": %.4f, "
                "\"fraction\": %.4f, \"cycles_fault_free\": %llu, \"cycles_faulty\": %llu}}\n",
                g.faultFree, g.faulty, g.faulty / g.faultFree, static_cast<unsigned long long>(g.cyclesFree),
                static_cast<unsigned long long>(g.cyclesFaulty));
  js << line;
  md << "\n| soak workload, 8 nodes, 20000 operations | goodput (payload bytes/cycle, all nodes) | cycles |\n"
        "|---|---|---|\n";
  std::snprintf(line, sizeof line,
                "| fault-free | %.3f | %llu |\n| 1%% drop, 0.1%% corrupt, 0.5%% duplicate, 0.5%% reorder | %.3f | %llu |\n"
                "| fraction of fault-free goodput | %.3f | |\n",
                g.faultFree, static_cast<unsigned long long>(g.cyclesFree), g.faulty,
                static_cast<unsigned long long>(g.cyclesFaulty), g.faulty / g.faultFree);
  md << line;
  std::fputs(line, stdout);
  if (!ok) std::fprintf(stderr, "a measurement failed its own checks (see above)\n");
  return ok ? 0 : 1;
}

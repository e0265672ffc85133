// SPDX-License-Identifier: Apache-2.0
// Issue 9's figures, at 64 bits.
// Aggregate throughput of an NI with 1, 2 and 4 host ports: every CPU of
// node 0 streams 256-byte stores through one window into node 1's memory at once.
// Measured over 20,000 cycles of the steady state at node 0's NI: beats per cycle
// leaving on the fabric port, beats per cycle each host port takes, and each port's
// share of them. The figures: the fabric port stays at one beat per cycle
// (at least 0.97 here) and each port's share is within 5 % of 1/ports. Writes JSON
// Large-message bandwidth with 1 and 2 NIs per node (rails): node 0 puts 4 messages
// of 256 KiB at a time to node 1 (the runtime stripes each over the rails), after a
// warm-up batch; two rails must reach 1.9 times one.
// Writes JSON and Markdown tables; fails when a figure is missed or data lands wrong.
//   usage: bench_host_ports [out.json] [out.md]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "workloads.hpp"

using namespace ni;

namespace {

constexpr uint64_t kWarmup = 2000, kWindow = 20000;
constexpr size_t kStore = 256;
constexpr double kMinFabric = 0.97, kMaxUnfair = 0.05, kMinTwoRails = 1.9;
constexpr uint32_t kRailMessage = 256 << 10;

struct Row {
  unsigned ports = 0;
  double fabric = 0, host = 0;         // beats per cycle
  std::vector<double> share;            // of the host beats, per port
  double worst = 0;                     // largest |share * ports - 1|
  bool ok = true;
};

Row measure(unsigned ports) {
  Row r;
  r.ports = ports;
  SystemConfig c;
  c.nodes = 2;
  c.hostPorts = ports;
  System sys(c);
  sys.reset();
  sys.setMemId(1, 0, MemRegion{true, 0x4000'0000ull, 0x1000'0000, true, true});
  Window w;
  w.base = kApertureBase;
  w.size = 0x1000'0000;
  w.dstNode = 1;
  w.memid = 0;
  sys.setWindow(0, 0, w);
  r.ok = sys.drain();
  // Each CPU writes its own area; enough stores to outlast the measurement.
  const uint64_t perCpu = 700 / ports + 100;  // the window takes at most about 520 in all
  std::vector<Bytes> data(ports);
  for (unsigned p = 0; p < ports; ++p) {
    data[p] = Bytes(kStore, static_cast<uint8_t>(0x10 + p));
    for (uint64_t k = 0; k < perCpu; ++k) sys.node(0).store(w.base + (p << 24) + k * kStore, data[p], p);
  }
  for (uint64_t k = 0; k < kWarmup; ++k) sys.tick();
  uint64_t fab = 0;
  std::vector<uint64_t> host(ports, 0);
  for (uint64_t k = 0; k < kWindow; ++k) {
    sys.tick();
    fab += sys.nicOut(0).fabOutValid && sys.nicIn(0).fabOutReady;
    for (unsigned p = 0; p < ports; ++p) host[p] += sys.nicIn(0).host[p].inValid && sys.nicOut(0).host[p].inReady;
  }
  r.ok &= sys.drain(5'000'000);
  for (unsigned p = 0; p < ports && r.ok; ++p)
    for (uint64_t k = 0; k < perCpu; k += 97)
      r.ok &= sys.node(1).memory().read(0x4000'0000ull + (p << 24) + k * kStore, kStore) == data[p];
  uint64_t all = 0;
  for (uint64_t h : host) all += h;
  r.fabric = double(fab) / kWindow;
  r.host = double(all) / kWindow;
  for (unsigned p = 0; p < ports; ++p) {
    r.share.push_back(all ? double(host[p]) / all : 0);
    r.worst = std::max(r.worst, std::fabs(r.share.back() * ports - 1));
  }
  r.ok &= r.fabric >= kMinFabric && r.worst <= kMaxUnfair && !sys.rtlError();
  return r;
}

// Bytes per cycle of 256 KiB puts, 4 in flight, from node 0 to node 1 over `rails` rails.
WorkloadRow railBandwidth(unsigned rails) {
  SystemConfig c;
  c.nodes = 2;
  c.rails = rails;
  System sys(c);
  sys.reset();
  Messaging msg(sys, Transport::Put, kRailMessage);
  WorkloadRow r = msg.bandwidth(0, 1, kRailMessage, 4, 1, false);
  r.ok = r.ok && !sys.rtlError();
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string jsonPath = argc > 1 ? argv[1] : "host_ports_bench.json";
  const std::string mdPath = argc > 2 ? argv[2] : "host_ports_bench.md";
  std::vector<Row> rows;
  bool ok = true;
  for (unsigned p : {1u, 2u, 4u}) {
    const Row r = measure(p);
    std::printf("%u host ports: fabric %.3f beats/cycle, host %.3f, worst share off by %.1f %%%s\n", p, r.fabric,
                r.host, 100 * r.worst, r.ok ? "" : " FAILED");
    ok &= r.ok;
    rows.push_back(r);
  }
  std::vector<WorkloadRow> railRows;
  for (unsigned rails : {1u, 2u}) {
    railRows.push_back(railBandwidth(rails));
    std::printf("%u rail%s: %.3f bytes/cycle%s\n", rails, rails > 1 ? "s" : "", railRows.back().bytesPerCycle,
                railRows.back().ok ? "" : (" FAILED: " + railRows.back().error).c_str());
    ok &= railRows.back().ok;
  }
  const double railGain = railRows[1].bytesPerCycle / railRows[0].bytesPerCycle;
  std::printf("two rails: %.2f x one (at least %.1f)\n", railGain, kMinTwoRails);
  ok &= railGain >= kMinTwoRails;

  std::ofstream js(jsonPath), md(mdPath);
  js << "{\"rails\": [" << railRows[0].bytesPerCycle << ", " << railRows[1].bytesPerCycle << "], \"host_ports\": [\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    js << "  {\"ports\": " << r.ports << ", \"fabric_beats_per_cycle\": " << r.fabric
       << ", \"host_beats_per_cycle\": " << r.host << ", \"share\": [";
    for (size_t p = 0; p < r.share.size(); ++p) js << (p ? ", " : "") << r.share[p];
    js << "]}" << (i + 1 < rows.size() ? "," : "") << "\n";
  }
  js << "]}\n";
  md << "| host ports | fabric port, beats/cycle | host ports together, beats/cycle | share of each port | "
        "worst share off by |\n|---|---|---|---|---|\n";
  char buf[64];
  for (const Row& r : rows) {
    std::string shares;
    for (double s : r.share) {
      std::snprintf(buf, sizeof buf, "%s%.3f", shares.empty() ? "" : ", ", s);
      shares += buf;
    }
    std::snprintf(buf, sizeof buf, "%.3f | %.3f", r.fabric, r.host);
    md << "| " << r.ports << " | " << buf << " | " << shares << " | ";
    std::snprintf(buf, sizeof buf, "%.1f %%", 100 * r.worst);
    md << buf << " |\n";
  }
  md << "\nNode 0's NI (64 bits), every CPU streaming 256-byte stores through one window to node 1 at once; "
        "20,000 cycles after 2,000 of warm-up. A store's fabric packet is longer than its TLP (fabric "
        "header, ICRC/VCRC), so the host ports together take fewer beats per cycle than the fabric port sends.\n";
  md << "\n| NIs per node (rails) | bandwidth, bytes/cycle | of one rail |\n|---|---|---|\n";
  for (unsigned k = 0; k < 2; ++k) {
    std::snprintf(buf, sizeof buf, "| %u | %.3f | %.2f |\n", k + 1, railRows[k].bytesPerCycle,
                  railRows[k].bytesPerCycle / railRows[0].bytesPerCycle);
    md << buf;
  }
  md << "\nNode 0 puts 4 messages of 256 KiB at a time into node 1's memory (64-bit NIs, crossbar planes), "
        "after a warm-up batch; the runtime stripes each message over the rails (a piece per NI, each with "
        "its own counters).\n";
  return ok ? 0 : 1;
}

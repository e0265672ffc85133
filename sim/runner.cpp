// SPDX-License-Identifier: Apache-2.0
// ni_sim: builds an N-node system, runs a traffic scenario through the NIs and
// the fabric, checks the data, and prints a report (optionally JSON, FST, ERF capture).
#include <verilated.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ni_regs.hpp"
#include "soak.hpp"
#include "system.hpp"
#include "workloads.hpp"

using namespace ni;

namespace {

struct Options {
  SystemConfig sys;
  std::string scenario = "mixed";
  unsigned ops = 200;      // operations per node
  unsigned size = 256;     // bytes per operation
  bool combine = false;    // windows combine writes (ART_CTRL.wc)
  unsigned run = 64;       // stores in a row to one node (contiguous addresses)
  std::string json;
  std::string topology = "crossbar", dims;
  // Message workloads (pingpong, bw, bibw, rate, alltoall, ...) on the runtime.
  Transport transport = Transport::Eager;
  std::vector<uint32_t> sizes = {8, 64, 512, 4096, 32768};
  unsigned window = 8, iters = 8;
  std::string csv;
  uint64_t watchdog = 2'000'000;  // cycles without progress before a run fails
};

bool isMessageWorkload(const std::string& w) {
  return w == "pingpong" || w == "bw" || w == "bibw" || w == "rate" || w == "alltoall" || w == "bcast" ||
         w == "allreduce" || w == "halo";
}

// "8,1K,64K" or "8:64K" (powers of two from 8 to 64 KiB); sizes are multiples of 4,
// up to 4 MiB. Empty on anything else.
std::vector<uint32_t> parseSizes(const std::string& s) {
  auto one = [](std::string v, uint64_t* out) {
    uint64_t mult = 1;
    if (!v.empty() && (v.back() == 'K' || v.back() == 'M')) {
      mult = v.back() == 'K' ? 1024 : 1024 * 1024;
      v.pop_back();
    }
    if (v.empty() || v.size() > 8 || v.find_first_not_of("0123456789") != std::string::npos) return false;
    *out = std::stoull(v) * mult;
    return *out >= 4 && *out % 4 == 0 && *out <= Messaging::kMaxBytes;
  };
  std::vector<uint32_t> out;
  const size_t colon = s.find(':');
  if (colon != std::string::npos) {
    uint64_t a = 0, b = 0;
    if (!one(s.substr(0, colon), &a) || !one(s.substr(colon + 1), &b) || a > b) return {};
    for (uint64_t v = a; v <= b; v *= 2) out.push_back(static_cast<uint32_t>(v));
    return out;
  }
  size_t i = 0;
  while (i <= s.size()) {
    size_t j = s.find(',', i);
    if (j == std::string::npos) j = s.size();
    uint64_t v = 0;
    if (!one(s.substr(i, j - i), &v)) return {};
    out.push_back(static_cast<uint32_t>(v));
    i = j + 1;
  }
  return out;
}

void usage() {
  std::puts(
      "usage: ni_sim [options]\n"
      "  --nodes N         nodes in the system (default 4)\n"
      "  --width W         NI data path bits: 64, 128, 256, 512 (default 64)\n"
      "  --max-payload B   NI MaxPayload: 256, or 4096 at 64 bits (default 256)\n"
      "  --workload W      mixed | stores | reads | atomics | soak (default mixed): stores\n"
      "                    through windows (PIO), or messages on the runtime (--transport):\n"
      "                      pingpong: nodes 0 and 1, half round trip per size\n"
      "                      bw, bibw: node 0 sends --window messages to node 1 at once\n"
      "                               (bibw: and node 1 to node 0), --iters times\n"
      "                      rate:    message rate: node i sends --window messages to node\n"
      "                               i + N/2, all pairs at once, --iters times\n"
      "                      alltoall: every node to every other, pairwise rounds\n"
      "                      bcast:    node 0 to all, binomial tree\n"
      "                      allreduce: sum of 64-bit integers (sizes: multiples of 8),\n"
      "                               up and down a binomial tree, checked at every node\n"
      "                      halo:     every node to its ring or torus neighbours at once\n"
      "  --scenario S      the same as --workload\n"
      "                      stores:  every node streams stores to every other node (--run in a\n"
      "                               row to one node, at contiguous addresses)\n"
      "                      reads:   every node reads remote memory\n"
      "                      atomics: every node fetch-adds the counter of every other node\n"
      "                      mixed:   stores, read back and check every byte, then atomics\n"
      "                      soak:    every node keeps 12 random confirmed writes (8-64 B),\n"
      "                               reads (64 B) and fetch-adds in flight to random peers;\n"
      "                               a scoreboard checks each (--ops per node; --size unused)\n"
      "  --transport T     eager | rndv | put | pio (default eager): message workloads'\n"
      "                    transport; pio: CPU stores through a window per peer (16 nodes)\n"
      "  --sizes LIST      message sizes, each a multiple of 4 from 4 to 4M (K, M: KiB,\n"
      "                    MiB): a list 8,1K,64K or a range 8:64K of the powers of two\n"
      "                    in it (default 8,64,512,4K,32K)\n"
      "  --window N        messages in flight for bw, bibw and rate, 1..12 (default 8)\n"
      "  --rails N         NIs per node, 1..4, each on its own fabric plane (default 1); the\n"
      "                    runtime stripes puts of 64 KiB or more over all of them and sends\n"
      "                    any other message over the rail of its destination (pio: rail 0)\n"
      "  --host-ports N    CPUs per node, each on its own NI host port: 1, 2 or 4 (2 and 4\n"
      "                    at 64 bits; the soak spreads each node's operations over them)\n"
      "  --iters N         measured rounds per size (default 8)\n"
      "  --csv FILE        write the message workloads' rows as CSV\n"
      "  --ops N           operations per node (default 200)\n"
      "  --size B          bytes per operation, multiple of 4 (default 256)\n"
      "  --run N           stores in a row to one node (default 64)\n"
      "  --combine         windows combine contiguous writes into one fabric packet\n"
      "  --topology T      crossbar | ring | torus2d | torus3d (default crossbar); ring and\n"
      "                      torus: a switch per node, dimension-order routing, two\n"
      "                      virtual channels per class with a dateline per ring\n"
      "  --dims XxY[xZ]    torus size, its product the node count (default: the squarest)\n"
      "  --latency C       fabric link latency in cycles, each link (default 10)\n"
      "  --bw B            fabric link bandwidth in bytes/cycle (default: NI width)\n"
      "  --clock-ns T      clock period for ns and GB/s figures (default 4.0 = 250 MHz)\n"
      "  --host-stall P    probability the root complex stalls the NI output (default 0)\n"
      "  --drop P          fabric faults, per packet: drop, flip one bit, duplicate,\n"
      "  --corrupt P         overtake the packet before it on its VC (default 0; seeded\n"
      "  --dup P             by --seed). The NIs resend what is lost or damaged and\n"
      "  --reorder P         drop duplicates; the report counts both\n"
      "  --link-down N[@F[-U]]  node N's fabric link is down from cycle F (default 0) until\n"
      "                    cycle U (default: for good); packets to or from it are lost. Repeatable\n"
      "  --resend-timeout C  NI resend timer (RETX_TIMEOUT) in cycles (default 0: the\n"
      "                    fabric's longest round trip under load, so a fabric without\n"
      "                    faults sees no resend; a run that resends there fails)\n"
      "  --watchdog C      a run in which nothing completes for C cycles (default 2000000;\n"
      "                    message workloads add a cycle per message byte) fails, naming the\n"
      "                    node and operation that are stuck\n"
      "  --seed S          random seed (default 1)\n"
      "  --pcap FILE       write fabric packets as pcapng (tshark -r FILE), an interface per\n"
      "                    node and capture point (frame.interface_name: \"node3 tx\"), each\n"
      "                    packet an ERF InfiniBand record; with rails, plane 0 only\n"
      "  --capture-at P    tx: packets as each NI sent them, before the fabric's faults\n"
      "                    (default); rx: as they reached each NI, after the faults\n"
      "                    (corrupted, duplicated, reordered as the receiver saw them)\n"
      "  --trace FILE      write an FST of one NI (build with NI_TRACE=ON: make wave)\n"
      "  --trace-node K    node whose NI is traced (default 0)\n"
      "  --trace-from C    first cycle in the FST (default 0)\n"
      "  --trace-cycles N  cycles in the FST (default 0: to the end), so long runs stay small\n"
      "  --json FILE       write the figures as JSON\n"
      "  --help");
}

// "N", "N@FROM" or "N@FROM-UNTIL": node N's link down from cycle FROM (0) until
// UNTIL (0: for good).
bool parseLinkDown(const std::string& s, FabricFaults::LinkDown* d) {
  auto num = [](const std::string& v, uint64_t* out) {
    if (v.empty() || v.size() > 15 || v.find_first_not_of("0123456789") != std::string::npos) return false;
    *out = std::stoull(v);
    return true;
  };
  const size_t at = s.find('@'), dash = s.find('-');
  uint64_t node = 0, from = 0, until = 0;
  if (!num(s.substr(0, at), &node) || node > 4096) return false;
  if (at != std::string::npos) {
    if (!num(s.substr(at + 1, dash == std::string::npos ? std::string::npos : dash - at - 1), &from)) return false;
    if (dash != std::string::npos && (!num(s.substr(dash + 1), &until) || until <= from)) return false;
  } else if (dash != std::string::npos) {
    return false;
  }
  *d = {static_cast<unsigned>(node), from, until};
  return true;
}

bool parse(int argc, char** argv, Options* o) {
  o->sys.nodes = 4;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto val = [&]() -> const char* {
      if (i + 1 >= argc) { std::fprintf(stderr, "%s needs a value\n", a.c_str()); std::exit(2); }
      return argv[++i];
    };
    // A value that is not a number, or negative, is refused with the option's name.
    auto count = [&](const char* v) -> unsigned {
      char* end = nullptr;
      const long long x = std::strtoll(v, &end, 0);
      if (!*v || *end || x < 0 || x > 4'000'000'000ll) {
        std::fprintf(stderr, "%s: '%s' is not a whole number >= 0\n", a.c_str(), v);
        std::exit(2);
      }
      return unsigned(x);
    };
    auto real = [&](const char* v) -> double {
      char* end = nullptr;
      const double x = std::strtod(v, &end);
      if (!*v || *end || !(x >= 0) || x > 1e12) {
        std::fprintf(stderr, "%s: '%s' is not a number >= 0\n", a.c_str(), v);
        std::exit(2);
      }
      return x;
    };
    // A probability: 0 to 1 (below 1 where 1 would stop everything).
    auto probability = [&](const char* v, bool belowOne) -> double {
      const double x = real(v);
      if (x > 1 || (belowOne && x >= 1)) {
        std::fprintf(stderr, "%s: '%s' is not a probability %s\n", a.c_str(), v, belowOne ? "from 0 to below 1" : "from 0 to 1");
        std::exit(2);
      }
      return x;
    };
    if (a == "--help" || a == "-h") { usage(); std::exit(0); }
    else if (a == "--nodes") o->sys.nodes = count(val());
    else if (a == "--width") o->sys.dataBits = count(val());
    else if (a == "--max-payload") o->sys.maxPayload = count(val());
    else if (a == "--scenario" || a == "--workload") o->scenario = val();
    else if (a == "--transport") {
      const char* v = val();
      const auto t = parseTransport(v);
      if (!t) {
        std::fprintf(stderr, "unknown transport '%s' (eager, rndv, put, pio)\n", v);
        return false;
      }
      o->transport = *t;
    } else if (a == "--sizes") {
      const char* v = val();
      o->sizes = parseSizes(v);
      if (o->sizes.empty()) {
        std::fprintf(stderr, "--sizes '%s': give a list such as 8,1K,64K or a range such as 8:64K, each a multiple of 4 from 4 to 4M\n", v);
        return false;
      }
    } else if (a == "--window") o->window = count(val());
    else if (a == "--rails") o->sys.rails = count(val());
    else if (a == "--host-ports") o->sys.hostPorts = count(val());
    else if (a == "--iters") o->iters = count(val());
    else if (a == "--csv") o->csv = val();
    else if (a == "--ops") o->ops = count(val());
    else if (a == "--size") o->size = count(val());
    else if (a == "--run") o->run = std::max(1u, count(val()));
    else if (a == "--topology") o->topology = val();
    else if (a == "--dims") o->dims = val();
    else if (a == "--latency") o->sys.linkLatency = count(val());
    else if (a == "--bw") o->sys.linkBytesPerCycle = real(val());
    else if (a == "--clock-ns") {
      o->sys.clockNs = real(val());
      if (o->sys.clockNs <= 0) {
        std::fprintf(stderr, "--clock-ns: the clock period must be above 0 ns\n");
        std::exit(2);
      }
    } else if (a == "--host-stall") o->sys.hostStall = probability(val(), true);
    else if (a == "--seed") {
      const char* v = val();
      char* end = nullptr;
      errno = 0;
      o->sys.seed = std::strtoull(v, &end, 0);
      if (!*v || *end || *v == '-' || errno) {
        std::fprintf(stderr, "--seed: '%s' is not a whole number >= 0\n", v);
        std::exit(2);
      }
    }
    else if (a == "--pcap") o->sys.pcapPath = val();
    else if (a == "--capture-at") {
      const std::string v = val();
      if (v != "tx" && v != "rx") {
        std::fprintf(stderr, "--capture-at: tx or rx, not '%s'\n", v.c_str());
        return false;
      }
      o->sys.captureRx = v == "rx";
    }
    else if (a == "--trace") o->sys.tracePath = val();
    else if (a == "--trace-node") o->sys.traceNode = count(val());
    else if (a == "--trace-from") o->sys.traceFrom = count(val());
    else if (a == "--trace-cycles") o->sys.traceCycles = count(val());
    else if (a == "--json") o->json = val();
    else if (a == "--combine") o->combine = true;
    else if (a == "--drop") o->sys.faults.drop = probability(val(), false);
    else if (a == "--corrupt") o->sys.faults.corrupt = probability(val(), false);
    else if (a == "--dup") o->sys.faults.duplicate = probability(val(), false);
    else if (a == "--reorder") o->sys.faults.reorder = probability(val(), false);
    else if (a == "--link-down") {
      const char* v = val();
      FabricFaults::LinkDown d{};
      if (!parseLinkDown(v, &d)) {
        std::fprintf(stderr, "--link-down '%s': give NODE, NODE@FROM or NODE@FROM-UNTIL (cycles, UNTIL > FROM)\n", v);
        return false;
      }
      o->sys.faults.linkDown.push_back(d);
    } else if (a == "--watchdog") o->watchdog = count(val());
    else if (a == "--resend-timeout") o->sys.resendTimeout = count(val());
    else { std::fprintf(stderr, "unknown option %s (try --help)\n", a.c_str()); return false; }
  }
  o->sys.faults.seed = o->sys.seed;
  const unsigned maxNodes = isMessageWorkload(o->scenario) && o->transport != Transport::Pio ? 64 : kNumArt;
  if (o->sys.nodes < 2 || o->sys.nodes > maxNodes) {
    std::fprintf(stderr, "--nodes: %s runs on 2 to %u nodes\n", o->scenario.c_str(), maxNodes);
    return false;
  }
  if (o->size == 0 || o->size % 4 || o->size > (1u << 20)) {
    std::fprintf(stderr, "--size: a multiple of 4 from 4 to 1 MiB\n");
    return false;
  }
  if (o->scenario == "allreduce" && std::any_of(o->sizes.begin(), o->sizes.end(), [](uint32_t b) { return b % 8; })) {
    std::fprintf(stderr, "allreduce sums 64-bit integers: sizes must be multiples of 8\n");
    return false;
  }
  for (const auto& d : o->sys.faults.linkDown)
    if (d.port >= o->sys.nodes) {
      std::fprintf(stderr, "--link-down: node %u does not exist (%u nodes)\n", d.port, o->sys.nodes);
      return false;
    }
  if (o->sys.rails < 1 || o->sys.rails > 4) {
    std::fprintf(stderr, "--rails: 1 to 4 NIs per node\n");
    return false;
  }
  if (!nicBuilt(o->sys.dataBits, o->sys.maxPayload, o->sys.hostPorts)) {
    std::fprintf(stderr, "no NI built for %u bits, max payload %u, %u host ports (host ports 2 and 4: 64 bits)\n",
                 o->sys.dataBits, o->sys.maxPayload, o->sys.hostPorts);
    return false;
  }
  if (o->window < 1 || o->window > Messaging::kWindowMax || o->iters < 1) {
    std::fprintf(stderr, "need a window of 1..%u and at least one iteration\n", Messaging::kWindowMax);
    return false;
  }
  std::string err;
  const auto topo = Topology::parse(o->topology, o->dims, o->sys.nodes, &err);
  if (!topo) {
    std::fprintf(stderr, "%s\n", err.c_str());
    return false;
  }
  o->sys.topology = *topo;
  // Every output file must be writable before the run starts.
  for (const auto& [opt, path] : {std::pair{"--json", &o->json}, {"--csv", &o->csv}, {"--pcap", &o->sys.pcapPath},
                                  {"--trace", &o->sys.tracePath}}) {
    if (path->empty()) continue;
    std::FILE* f = std::fopen(path->c_str(), "a");
    if (!f) {
      std::fprintf(stderr, "%s %s: cannot write it (%s)\n", opt, path->c_str(), std::strerror(errno));
      return false;
    }
    std::fclose(f);
  }
  if (o->scenario != "mixed" && o->scenario != "stores" && o->scenario != "reads" && o->scenario != "atomics" &&
      o->scenario != "soak" && !isMessageWorkload(o->scenario)) {
    std::fprintf(stderr, "unknown workload %s (mixed, stores, reads, atomics, soak, pingpong, bw, bibw, rate, alltoall, "
                         "bcast, allreduce, halo)\n",
                 o->scenario.c_str());
    return false;
  }
  return true;
}

// Node s reaches node d through window d (16 MiB of the aperture); receiver-side
// translation into node d's memory ID 0, 16 MiB at kLanding. Inside it, source s
// owns the slice s: the in-window offset is the offset into the memory ID. The
// last 64 bytes hold the node's counter for the atomics phase.
constexpr uint64_t kSlot = 16ull << 20;
constexpr uint64_t kCounter = kSlot - 64;
constexpr uint64_t kLanding = 0x1'0000'0000ull;
uint64_t windowBase(unsigned d) { return kApertureBase + d * kSlot; }

struct Stats {
  uint64_t ops = 0, bytes = 0, errors = 0, mismatches = 0;
  std::vector<uint64_t> readLat, atomicLat;
};

void printLatency(const char* what, std::vector<uint64_t>& lat, double ns) {
  std::sort(lat.begin(), lat.end());
  const uint64_t p50 = lat[lat.size() / 2];
  for (auto [name, v] : {std::pair<const char*, uint64_t>{"min", lat.front()}, {"p50", p50}, {"max", lat.back()}}) {
    const std::string label = std::string(what) + " latency " + name;
    std::printf("%-28s %14llu  (%.0f ns)\n", label.c_str(), static_cast<unsigned long long>(v), double(v) * ns);
  }
}

// Fabric figures (all planes together) and the per-NI counter table (a row per node
// and rail); returns the NI error count (CRC errors, window misses, NAKs received)
// and adds the final failures to *failed: requests given up, and on a fabric without
// faults every resend and duplicate (the resend timeout covers the fabric's longest
// round trip, so a resend there is a fault of the NI or of that bound).
uint64_t printFabricAndNodes(System& sys, const Options& o, uint64_t* failed) {
  const unsigned n = sys.size(), rails = sys.rails();
  FabricStats fs;
  double busiest = 0;
  for (unsigned r = 0; r < rails; ++r) {
    fs += sys.fabric(r).stats();
    busiest = std::max(busiest, sys.fabric(r).busiestLink());
  }
  const std::string planes = rails > 1 ? " (" + std::to_string(rails) + " planes)" : "";
  std::printf("%-28s %14llu\n", ("fabric packets" + planes).c_str(), static_cast<unsigned long long>(fs.packets));
  std::printf("%-28s %14llu\n", "fabric bytes", static_cast<unsigned long long>(fs.bytes));
  std::printf("%-28s %14llu\n", "fabric CRC errors seen", static_cast<unsigned long long>(fs.crcErrors));
  if (sys.fabric().topology().direct())
    std::printf("%-28s %14llu  (over the datelines %llu; busiest link busy %.1f %% of cycles)\n",
                "fabric link hops", static_cast<unsigned long long>(fs.linkHops),
                static_cast<unsigned long long>(fs.datelineHops), 100.0 * busiest);
  if (o.sys.faults.any())
    std::printf("%-28s %14s  dropped %llu, corrupted %llu, duplicated %llu, reordered %llu, lost on a down link %llu\n",
                "fabric faults injected", "", static_cast<unsigned long long>(fs.faultDrops),
                static_cast<unsigned long long>(fs.corrupted), static_cast<unsigned long long>(fs.duplicates),
                static_cast<unsigned long long>(fs.reordered), static_cast<unsigned long long>(fs.linkDownDrops));
  std::printf("\n%-6s %10s %10s %8s %8s %8s %8s %8s %8s %8s %8s\n", rails > 1 ? "node.r" : "node", "tx pkts", "rx pkts",
              "crc err", "win miss", "naks rx", "np srv", "resent", "dups", "out seq", "failed");
  uint64_t niErrors = 0, spurious = 0;
  for (unsigned i = 0; i < n; ++i)
    for (unsigned r = 0; r < rails; ++r) {
      auto csr = [&](uint32_t off) { return sys.readCsr(i, off, r); };
      const uint32_t tx = csr(regs::TX_PKTS), rx = csr(regs::RX_PKTS);
      const uint32_t crc = csr(regs::CRC_ERR_CNT), miss = csr(regs::WIN_MISS_CNT);
      const uint32_t nak = csr(regs::NAK_RX_CNT), srv = csr(regs::RD_SERVED_CNT);
      const uint32_t retx = csr(regs::RETX_CNT), dup = csr(regs::DUP_CNT);
      const uint32_t oos = csr(regs::OOS_CNT), fail = csr(regs::RETX_FAIL_CNT);
      niErrors += crc + miss + nak;
      *failed += fail;
      spurious += o.sys.faults.any() ? 0 : retx + dup;
      const std::string label = std::to_string(i) + (rails > 1 ? "." + std::to_string(r) : "");
      std::printf("%-6s %10u %10u %8u %8u %8u %8u %8u %8u %8u %8u\n", label.c_str(), tx, rx, crc, miss, nak, srv, retx,
                  dup, oos, fail);
    }
  std::printf("resend timeout %u cycles (%s)", sys.resendTimeout(),
              o.sys.resendTimeout ? "--resend-timeout" : "the fabric's longest round trip");
  if (spurious) std::printf("; %llu resends and duplicates on a fabric without faults: FAIL",
                            static_cast<unsigned long long>(spurious));
  std::printf("\n");
  *failed += spurious;
  return niErrors;
}

// A progress line on stderr for long runs: at most one every 5 s of wall clock (the
// clock only paces these lines; no figure or check depends on it). Callers may call
// it as often as every cycle.
std::string progressWhat;  // what is under way, e.g. "4096 B"
void printCycle(uint64_t cycle) {
  using Clock = std::chrono::steady_clock;
  static const Clock::time_point start = Clock::now();
  static Clock::time_point last = start;
  if (cycle % 4096 != 0) return;
  const Clock::time_point now = Clock::now();
  if (now - last < std::chrono::seconds(5)) return;
  last = now;
  std::fprintf(stderr, "  ... %scycle %llu, %.0f s\n", progressWhat.empty() ? "" : (progressWhat + ": ").c_str(),
               static_cast<unsigned long long>(cycle), std::chrono::duration<double>(now - start).count());
}

// --scenario soak: the scoreboarded random workload of sim/soak.cpp, its report.

int soakMain(System& sys, const Options& o) {
  SoakConfig c;
  c.ops = uint64_t(o.ops) * sys.size();
  c.seed = o.sys.seed;
  const SoakResult r = runSoak(sys, c, printCycle);
  auto line = [](const char* what, uint64_t v) { std::printf("%-28s %14llu\n", what, static_cast<unsigned long long>(v)); };
  std::printf("\n%-28s %14s\n", "figure", "value");
  line("cycles", r.cycles);
  line("confirmed writes", r.writes);
  line("reads", r.reads);
  line("fetch-adds", r.atomics);
  std::printf("%-28s %14.3f  (bytes written and read per cycle, all nodes)\n", "goodput", r.goodput());
  std::printf("%-28s %14.3f\n", "operations per cycle", double(r.writes + r.reads + r.atomics) / double(r.cycles));
  line("failed (error completion)", r.failed);
  line("writes lost", r.lost);
  line("writes applied twice", r.appliedTwice);
  line("corrupted results/bytes", r.corrupted);
  line("confirmed twice", r.confirmedTwice);
  line("never confirmed", r.unconfirmed);
  line("confirmation wrong addr", r.wrongAddress);
  uint64_t failed = 0;
  printFabricAndNodes(sys, o, &failed);
  const bool pass = r.ok() && failed == 0 && !sys.rtlError();
  std::printf("\nsoak %s: %s\n", r.drained ? "drained" : "did NOT drain", pass ? "PASS" : "FAIL");
  if (!o.json.empty()) {
    if (std::FILE* f = std::fopen(o.json.c_str(), "w")) {
      std::fprintf(f, "{\"nodes\": %u, \"width\": %u, \"scenario\": \"soak\", \"ops\": %llu, \"seed\": %llu,\n",
                   sys.size(), o.sys.dataBits, static_cast<unsigned long long>(c.ops),
                   static_cast<unsigned long long>(o.sys.seed));
      std::fprintf(f, " \"drop\": %g, \"corrupt\": %g, \"dup\": %g, \"reorder\": %g,\n", o.sys.faults.drop,
                   o.sys.faults.corrupt, o.sys.faults.duplicate, o.sys.faults.reorder);
      std::fprintf(f, " \"cycles\": %llu, \"writes\": %llu, \"reads\": %llu, \"atomics\": %llu, \"goodput\": %.4f,\n",
                   static_cast<unsigned long long>(r.cycles), static_cast<unsigned long long>(r.writes),
                   static_cast<unsigned long long>(r.reads), static_cast<unsigned long long>(r.atomics), r.goodput());
      std::fprintf(f, " \"violations\": %llu, \"pass\": %s}\n",
                   static_cast<unsigned long long>(r.failed + r.lost + r.appliedTwice + r.corrupted + r.confirmedTwice +
                                                   r.unconfirmed + r.wrongAddress),
                   pass ? "true" : "false");
      std::fclose(f);
    }
  }
  return pass ? 0 : 1;
}

// A message workload (pingpong, bw, bibw, rate, alltoall, ...) over the sizes: a table in cycles
// and in ns and GB/s at the clock, the fabric and NI counters, JSON and CSV rows.
// Drains the system while it makes progress (a TLP or fabric packet moved in the last
// o.watchdog cycles); when it stops making progress before it is idle, says which
// nodes are still busy, with what, and returns false.
bool drainWatched(System& sys, const Options& o, const char* phase) {
  auto mark = [&] {
    uint64_t m = 0;
    for (unsigned r = 0; r < sys.rails(); ++r) m += sys.fabric(r).stats().packets;
    for (unsigned i = 0; i < sys.size(); ++i) m += sys.node(i).stats().tlpsToNi + sys.node(i).stats().tlpsFromNi;
    return m;
  };
  // Progress is looked for every cycle, so the watchdog fires when the run has been
  // still for exactly o.watchdog cycles.
  uint64_t before = mark(), lastProgress = sys.cycle();
  unsigned quiet = 0;
  // Done when quiet and no NI awaits an answer: once the models are quiet, RETX_BUSY is
  // read on every NI (a dropped last packet comes back only when its resend timer runs
  // out). The reads are not progress, so a run that waits on a timer that never runs
  // out still stops at the watchdog's count.
  struct Poll {
    bool polling = false, settled = false, answered = false;
  };
  auto poll = std::make_shared<Poll>();  // the reads may be answered after a watchdog ends the wait
  sys.runUntil([&] {
    printCycle(sys.cycle());
    const uint64_t now = mark();
    if (now != before) {
      before = now;
      if (!poll->polling) lastProgress = sys.cycle();
    }
    if (poll->answered) {
      poll->answered = poll->polling = false;
      quiet = 0;
    }
    if (poll->settled || sys.rtlError() || sys.cycle() - lastProgress >= o.watchdog) return true;
    if (poll->polling) return false;
    quiet = sys.idle() ? quiet + 1 : 0;
    if (quiet > System::kQuietCycles) {
      poll->polling = true;
      sys.pollResends([poll](bool pending) {
        poll->answered = true;
        poll->settled = !pending;
      });
    }
    return false;
  }, ~uint64_t{0});
  if (poll->settled && !sys.rtlError()) return true;
  std::fprintf(stderr, "watchdog: %s did not finish: no progress for %llu cycles (cycle %llu)%s\n", phase,
               static_cast<unsigned long long>(sys.cycle() - lastProgress), static_cast<unsigned long long>(sys.cycle()),
               sys.rtlError() ? "; an RTL assertion failed" : "");
  if (sys.idle()) std::fprintf(stderr, "  every node is idle; an NI awaits answers to requests it sent (RETX_BUSY)\n");
  for (unsigned i = 0; i < sys.size(); ++i) {
    Node& n = sys.node(i);
    if (n.idle()) continue;
    std::fprintf(stderr, "  node %u: %zu loads outstanding; NI STATUS 0x%x, RETX_FAIL_CNT %u\n", i,
                 n.outstandingLoads(), sys.readCsr(i, regs::STATUS), sys.readCsr(i, regs::RETX_FAIL_CNT));
  }
  for (unsigned r = 0; r < sys.rails(); ++r)
    if (!sys.fabric(r).idle()) std::fprintf(stderr, "  fabric plane %u: packets in flight\n", r);
  return false;
}

int workloadMain(System& sys, const Options& o) {
  const uint32_t maxBytes = *std::max_element(o.sizes.begin(), o.sizes.end());
  const auto start = std::chrono::steady_clock::now();
  Messaging msg(sys, o.transport, maxBytes);
  msg.watchdogCycles = o.watchdog;
  msg.progress = printCycle;
  const double ns = o.sys.clockNs;
  std::vector<WorkloadRow> rows;
  const bool pp = o.scenario == "pingpong";
  std::printf("\n%10s %12s %10s %12s %9s %14s %s\n", "bytes", pp ? "half RTT" : "cycles/round", "(ns)",
              "bytes/cycle", "(GB/s)", "msgs/kcycle", "");
  for (uint32_t b : o.sizes) {
    progressWhat = std::to_string(b) + " B";
    WorkloadRow r;
    if (pp) r = msg.pingPong(0, 1, b, o.iters);
    else if (o.scenario == "alltoall") r = msg.allToAll(b);
    else if (o.scenario == "bcast") r = msg.broadcast(b);
    else if (o.scenario == "allreduce") r = msg.allreduce(b);
    else if (o.scenario == "halo") r = msg.halo(b, o.iters);
    else if (o.scenario == "rate") r = msg.messageRate(b, o.window, o.iters);
    else r = msg.bandwidth(0, 1, b, o.window, o.iters, o.scenario == "bibw");
    if (r.ok)
      std::printf("%10u %12.1f %10.1f %12.3f %9.3f %14.3f\n", b, r.latency, r.latency * ns, r.bytesPerCycle,
                  r.bytesPerCycle / ns, 1000.0 * double(r.messages) / double(std::max<uint64_t>(r.cycles, 1)));
    else  // no figures: the row did not finish
      std::printf("%10u %12s %10s %12s %9s %14s FAILED: %s\n", b, "-", "-", "-", "-", "-", r.error.c_str());
    std::fflush(stdout);
    rows.push_back(r);
    std::fprintf(stderr, "  %s %s: %u B %s (%zu of %zu sizes)\n", o.scenario.c_str(), transportName(o.transport), b,
                 r.ok ? "done" : "FAILED", rows.size(), o.sizes.size());
    if (!r.ok) break;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  uint64_t failed = 0;
  printFabricAndNodes(sys, o, &failed);
  bool pass = failed == 0 && !sys.rtlError();
  for (const auto& r : rows) pass = pass && r.ok;
  // How fast the simulation ran (wall clock; not part of any check).
  std::printf("\nsimulation speed: %llu cycles in %.2f s, %.0f cycles/s (%u nodes)\n",
              static_cast<unsigned long long>(sys.cycle()), secs, double(sys.cycle()) / std::max(secs, 1e-9),
              sys.size());
  std::printf("\n%s, %s, %u nodes: %s\n", o.scenario.c_str(), transportName(o.transport), sys.size(),
              pass ? "PASS" : "FAIL");
  auto rowFields = [&](const WorkloadRow& r) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "%u,%llu,%llu,%.2f,%.2f,%.4f,%.4f,%s", r.bytes,
                  static_cast<unsigned long long>(r.messages), static_cast<unsigned long long>(r.cycles), r.latency,
                  r.latency * ns, r.bytesPerCycle, r.bytesPerCycle / ns, r.ok ? "true" : "false");
    return std::string(buf);
  };
  const std::string head = "bytes,messages,cycles,latency_cycles,latency_ns,bytes_per_cycle,gb_per_s,ok";
  if (!o.csv.empty()) {
    if (std::FILE* f = std::fopen(o.csv.c_str(), "w")) {
      std::fprintf(f, "%s,workload,transport,nodes,width,clock_ns,topology\n", head.c_str());
      for (const auto& r : rows)
        std::fprintf(f, "%s,%s,%s,%u,%u,%.2f,%s\n", rowFields(r).c_str(), o.scenario.c_str(),
                     transportName(o.transport), sys.size(), o.sys.dataBits, ns, o.sys.topology.name().c_str());
      std::fclose(f);
    }
  }
  if (!o.json.empty()) {
    if (std::FILE* f = std::fopen(o.json.c_str(), "w")) {
      std::fprintf(f, "{\"workload\": \"%s\", \"transport\": \"%s\", \"nodes\": %u, \"width\": %u, "
                      "\"topology\": \"%s\", \"clock_ns\": %.2f, \"pass\": %s, \"rows\": [\n",
                   o.scenario.c_str(), transportName(o.transport), sys.size(), o.sys.dataBits,
                   o.sys.topology.name().c_str(), ns, pass ? "true" : "false");
      for (size_t i = 0; i < rows.size(); ++i) {
        const WorkloadRow& r = rows[i];
        std::fprintf(f, "  {\"bytes\": %u, \"messages\": %llu, \"cycles\": %llu, \"latency_cycles\": %.2f, "
                        "\"bytes_per_cycle\": %.4f, \"ok\": %s}%s\n",
                     r.bytes, static_cast<unsigned long long>(r.messages), static_cast<unsigned long long>(r.cycles),
                     r.latency, r.bytesPerCycle, r.ok ? "true" : "false", i + 1 < rows.size() ? "," : "");
      }
      std::fprintf(f, "]}\n");
      std::fclose(f);
    }
  }
  return pass ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // the report's lines in order with stderr's, also into a file
  Options o;
  if (!parse(argc, argv, &o)) return 2;
  const unsigned n = o.sys.nodes;
  if (isMessageWorkload(o.scenario))
    std::printf("ni_sim: %u nodes, %u-bit NI%s, %s (latency %u cycles), workload %s over %s, seed %llu\n", n,
                o.sys.dataBits, o.sys.rails > 1 ? (" x " + std::to_string(o.sys.rails) + " rails").c_str() : "",
                o.sys.topology.name().c_str(), o.sys.linkLatency, o.scenario.c_str(), transportName(o.transport),
                static_cast<unsigned long long>(o.sys.seed));
  else
    std::printf("ni_sim: %u nodes, %u-bit NI, %s (latency %u cycles), scenario %s, %u ops x %u B%s, seed %llu\n",
                n, o.sys.dataBits, o.sys.topology.name().c_str(), o.sys.linkLatency, o.scenario.c_str(), o.ops,
                o.size, o.combine ? ", write combining" : "", static_cast<unsigned long long>(o.sys.seed));
  System sys(o.sys);
  sys.reset();
  if (o.scenario == "soak") return soakMain(sys, o);
  if (isMessageWorkload(o.scenario)) return workloadMain(sys, o);
  for (unsigned d = 0; d < n; ++d) sys.setMemId(d, 0, MemRegion{true, kLanding, kSlot, true, true, true});
  for (unsigned s = 0; s < n; ++s)
    for (unsigned d = 0; d < n; ++d) {
      if (s == d) continue;
      Window w;
      w.base = windowBase(d);
      w.size = kSlot;
      w.dstNode = d;
      w.memid = 0;
      w.rxXlate = true;
      w.atomic = true;
      w.combine = o.combine;
      sys.setWindow(s, d, w);
    }
  if (!drainWatched(sys, o, "setup")) return 1;
  std::mt19937_64 rng(o.sys.seed);
  Stats st;
  const uint64_t t0 = sys.cycle();
  // Store k of node s (and its read-back) goes to this node: o.run in a row to each.
  auto storeDest = [&](unsigned s, unsigned k) { return (s + 1 + (k / o.run) % (n - 1)) % n; };
  auto remoteAddr = [&](unsigned s, unsigned d, uint64_t off) { return windowBase(d) + s * (kSlot / n) + off; };
  std::map<std::pair<unsigned, uint64_t>, Bytes> written;  // (dst, landing addr) -> data
  std::vector<Memory> landed(n);  // what each node's memory must hold after the stores

  const bool doStores = o.scenario == "mixed" || o.scenario == "stores";
  if (doStores) {
    for (unsigned k = 0; k < o.ops; ++k)
      for (unsigned s = 0; s < n; ++s) {
        const unsigned d = storeDest(s, k);
        const uint64_t off = (uint64_t(k) * o.size) % (kSlot / n - o.size - 64);
        Bytes data(o.size);
        for (auto& x : data) x = uint8_t(rng());
        sys.node(s).store(remoteAddr(s, d, off), data);
        written[{d, kLanding + s * (kSlot / n) + off}] = data;
        landed[d].write(kLanding + s * (kSlot / n) + off, data);
        ++st.ops;
        st.bytes += o.size;
      }
  }
  if (!drainWatched(sys, o, "the stores phase")) return 1;
  // Every store in the memory its window's translation names, checked there (the reads
  // below come back through the same windows, which a translation wrong both ways
  // would pass).
  for (const auto& [at, data] : written)
    st.mismatches += sys.node(at.first).memory().read(at.second, data.size()) != landed[at.first].read(at.second, data.size());
  const uint64_t tStores = sys.cycle() - t0;
  // Setup traffic is CSR only: no fabric bytes. VC0 carries the writes, VC1 their ACKs.
  const uint64_t storeFabricBytes = sys.fabric().stats().bytes;
  const uint64_t storeRequestBytes = sys.fabric().stats().perVcBytes[0];

  // Reads: every node reads remote memory; for "mixed" the data it wrote, checked.
  const uint64_t t1 = sys.cycle();
  uint64_t readBytes = 0;
  if (o.scenario == "mixed" || o.scenario == "reads") {
    if (o.scenario == "reads")
      for (unsigned d = 0; d < n; ++d)
        for (uint64_t a = 0; a < kSlot; a += 4096) sys.node(d).memory().set(kLanding + a, uint8_t(a >> 12));
    // After a failed or timed-out load (the CPU's completion timeout) stop issuing: a broken NI fails fast.
    for (unsigned k = 0; k < o.ops && !st.errors; ++k)
      for (unsigned s = 0; s < n && !st.errors; ++s) {
        const unsigned d = storeDest(s, k);
        const uint64_t off = (uint64_t(k) * o.size) % (kSlot / n - o.size - 64);
        const uint64_t addr = remoteAddr(s, d, off);
        const uint64_t land = kLanding + s * (kSlot / n) + off;
        const uint64_t issued = sys.cycle();
        Bytes expect = o.scenario == "mixed" ? written[{d, land}] : sys.node(d).memory().read(land, o.size);
        sys.node(s).load(addr, o.size, [&, issued, expect](const LoadResult& r) {
          if (!r.ok) ++st.errors;
          else if (r.data != expect) ++st.mismatches;
          if (r.ok) st.readLat.push_back(sys.cycle() - issued);  // a failed load's time is no latency
        });
        readBytes += o.size;
        // Keep a bounded number of loads in flight per node (the CPU has 256 tags).
        if (sys.node(s).outstandingLoads() > 8) sys.runUntil([&] { return sys.node(s).outstandingLoads() <= 8; }, 1'000'000);
      }
    if (!drainWatched(sys, o, "the reads phase")) return 1;
  }
  const uint64_t tReads = sys.cycle() - t1;

  // Atomics: every node fetch-adds 1 to the counter of its peers in turn, one at a
  // time (so the latency is a one-hop round trip plus contention at the target).
  // Every target's old values must come back as 0, 1, 2, ... with none repeated.
  std::vector<std::vector<uint64_t>> oldValues(n);
  std::vector<uint64_t> adds(n, 0);
  if (o.scenario == "mixed" || o.scenario == "atomics") {
    const unsigned perNode = o.scenario == "atomics" ? o.ops : std::max(1u, o.ops / 4);
    for (unsigned k = 0; k < perNode && !st.errors; ++k) {
      for (unsigned s = 0; s < n; ++s) {
        const unsigned d = (s + 1 + k % (n - 1)) % n;
        const uint64_t issued = sys.cycle();
        ++adds[d];
        sys.node(s).atomic(TlpKind::FetchAdd, windowBase(d) + kCounter, Bytes{1, 0, 0, 0, 0, 0, 0, 0},
                           [&, issued, d](const LoadResult& r) {
                             if (!r.ok) ++st.errors;
                             else oldValues[d].push_back(getLe(r.data.data(), 8));
                             if (r.ok) st.atomicLat.push_back(sys.cycle() - issued);
                           });
      }
      sys.runUntil([&] {
        for (unsigned s = 0; s < n; ++s)
          if (sys.node(s).outstandingLoads()) return false;
        return true;
      }, 1'000'000);
    }
    if (!drainWatched(sys, o, "the atomics phase")) return 1;
    for (unsigned d = 0; d < n; ++d) {
      std::sort(oldValues[d].begin(), oldValues[d].end());
      for (uint64_t i = 0; i < oldValues[d].size(); ++i) st.mismatches += oldValues[d][i] != i;
      st.mismatches += getLe(sys.node(d).memory().read(kLanding + kCounter, 8).data(), 8) != adds[d];
    }
  }

  // Report.
  const double ns = o.sys.clockNs;
  std::printf("\n%-28s %14s\n", "figure", "value");
  std::printf("%-28s %14llu\n", "cycles (stores phase)", static_cast<unsigned long long>(tStores));
  // A store bandwidth is measured only if every store arrived: after a request was given
  // up (a link down, every packet dropped) the stores issued are not the stores moved.
  uint64_t givenUp = 0;
  for (unsigned i = 0; i < n; ++i) givenUp += sys.readCsr(i, regs::RETX_FAIL_CNT);
  if (doStores && givenUp)
    std::printf("%-28s %14s  (%llu requests were given up: not measured)\n", "store bytes/cycle (all)", "-",
                static_cast<unsigned long long>(givenUp));
  if (doStores && !givenUp) {
    const double bpc = double(st.bytes) / double(tStores);
    std::printf("%-28s %14.2f  (%.2f GB/s at %.0f MHz)\n", "store bytes/cycle (all)", bpc, bpc / ns, 1000.0 / ns);
    std::printf("%-28s %14.3f  (payload bytes / write packet bytes, VC0)\n", "link efficiency (stores)",
                double(st.bytes) / double(std::max<uint64_t>(storeRequestBytes, 1)));
    std::printf("%-28s %14.3f  (payload bytes / all fabric bytes, ACKs included)\n", "  with the ACKs",
                double(st.bytes) / double(std::max<uint64_t>(storeFabricBytes, 1)));
  }
  if (!st.readLat.empty()) {
    std::printf("%-28s %14llu\n", "cycles (reads phase)", static_cast<unsigned long long>(tReads));
    printLatency("remote read", st.readLat, ns);
    std::printf("%-28s %14.2f\n", "read bytes/cycle (all)", double(readBytes) / double(tReads));
  }
  if (!st.atomicLat.empty()) {
    std::printf("%-28s %14zu\n", "fetch-adds", st.atomicLat.size());
    printLatency("fetch-add", st.atomicLat, ns);
  }
  uint64_t failed = 0;
  uint64_t niErrors = printFabricAndNodes(sys, o, &failed);
  // Under injected faults CRC errors and NAKs are expected; what must hold is the data.
  if (o.sys.faults.any()) niErrors = 0;
  const bool pass = st.errors == 0 && st.mismatches == 0 && niErrors == 0 && failed == 0 && !sys.rtlError();
  std::printf("\nload errors %llu, data mismatches %llu, RTL assertion errors %d: %s\n",
              static_cast<unsigned long long>(st.errors), static_cast<unsigned long long>(st.mismatches),
              sys.rtlError() ? 1 : 0, pass ? "PASS" : "FAIL");
  if (!o.sys.pcapPath.empty())
    std::printf("capture: %s (%llu packets; tshark -r %s)\n", o.sys.pcapPath.c_str(),
                static_cast<unsigned long long>(sys.fabric().tap().records()), o.sys.pcapPath.c_str());
  if (!o.json.empty()) {
    if (std::FILE* f = std::fopen(o.json.c_str(), "w")) {
      std::fprintf(f, "{\"nodes\": %u, \"width\": %u, \"scenario\": \"%s\", \"ops\": %u, \"size\": %u, \"combine\": %s, \"seed\": %llu,\n",
                   n, o.sys.dataBits, o.scenario.c_str(), o.ops, o.size, o.combine ? "true" : "false", static_cast<unsigned long long>(o.sys.seed));
      std::fprintf(f, " \"store_cycles\": %llu, \"store_bytes\": %llu, \"read_cycles\": %llu, \"read_bytes\": %llu,\n",
                   static_cast<unsigned long long>(tStores), static_cast<unsigned long long>(st.bytes),
                   static_cast<unsigned long long>(tReads), static_cast<unsigned long long>(readBytes));
      std::fprintf(f, " \"read_latency_p50\": %llu, \"atomic_latency_min\": %llu, \"atomic_latency_p50\": %llu,\n",
                   static_cast<unsigned long long>(st.readLat.empty() ? 0 : st.readLat[st.readLat.size() / 2]),
                   static_cast<unsigned long long>(st.atomicLat.empty() ? 0 : st.atomicLat.front()),
                   static_cast<unsigned long long>(st.atomicLat.empty() ? 0 : st.atomicLat[st.atomicLat.size() / 2]));
      std::fprintf(f, " \"errors\": %llu, \"pass\": %s}\n",
                   static_cast<unsigned long long>(st.errors + st.mismatches), pass ? "true" : "false");
      std::fclose(f);
    }
  }
  return pass ? 0 : 1;
}

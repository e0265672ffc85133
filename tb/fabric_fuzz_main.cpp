// SPDX-License-Identifier: Apache-2.0
// The fabric-port fuzz campaign (make fuzz-fabric-campaign): seeded streams of hostile
// fabric packets into a lone NI (tb/fabric_fuzz.hpp: every check of the libFuzzer
// harness, among them a well-formed write ACKed and landed after each input, every CPU
// request answered once, no RTL assertion). Each input is a few hundred packets drawn
// from the seed inputs (one per kind of packet the NI handles) and mutated: bytes
// flipped, cut, extended or replaced, PSN and source LID changed, the CRCs left right or
// wrong, gaps, bubbles and either VC. libFuzzer runs one short input per reset (about 4
// a second); this runs many packets per reset, for the 1,000,000-packet campaign.
// Prints its figures and, with --md, writes them as a Markdown block. Exit status 1 on
// any violation; --dump DIR writes each failing input there (replay it with
// fuzz_fab_rx or put it in tb/fuzz_corpus).
#include <verilated.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "fabric_fuzz.hpp"

namespace {

// One mutated copy of a seed record.
ni::fuzz::InputRecord mutate(const ni::fuzz::InputRecord& seed, std::mt19937_64& rng) {
  ni::fuzz::InputRecord r = seed;
  auto pick = [&rng](size_t n) { return static_cast<size_t>(rng() % n); };
  const unsigned how = static_cast<unsigned>(rng() % 10);
  ni::Bytes& b = r.body;
  if (how == 1 && !b.empty()) {
    for (unsigned k = 0, n = 1 + pick(4); k < n; ++k) b[pick(b.size())] ^= static_cast<uint8_t>(1u << pick(8));
  } else if (how == 2 && !b.empty()) {
    b.resize(pick(b.size() + 1));  // cut
  } else if (how == 3) {
    for (size_t k = 0, n = 1 + pick(64); k < n; ++k) b.push_back(static_cast<uint8_t>(rng()));
  } else if (how == 4) {
    b.resize(pick(700));
    for (auto& x : b) x = static_cast<uint8_t>(rng());
  } else if (how == 5 && b.size() > 20) {
    for (int k = 17; k < 20; ++k) b[size_t(k)] = static_cast<uint8_t>(rng());  // PSN
  } else if (how == 6 && b.size() > 8) {
    b[6] = 0;
    b[7] = static_cast<uint8_t>(1 + pick(16));  // another source node
  } else if (how == 7) {
    r.ctrl ^= 1;  // the CRCs sealed right, or left as they are
  }
  if (b.size() > 0x3FF) b.resize(0x3FF);
  // Timing: back to back mostly, now and then a gap, bubbles, the other VC.
  r.ctrl = static_cast<uint8_t>((r.ctrl & 1) | (rng() % 8 == 0 ? 2 : (r.ctrl & 2)) | (rng() % 8 == 0 ? 4 : 0) |
                                (rng() % 16 == 0 ? (1 + pick(31)) << 3 : 0));
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  Verilated::commandArgs(argc, argv);
  uint64_t seed = 1, packets = 100000;
  unsigned perInput = 300, width = 64;
  std::string md, dump;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    const uint64_t v = std::strtoull(argv[i + 1], nullptr, 0);
    if (a == "--seed") seed = v;
    else if (a == "--packets") packets = v;
    else if (a == "--per-input") perInput = static_cast<unsigned>(v);
    else if (a == "--width") width = static_cast<unsigned>(v);
    else if (a == "--md") md = argv[i + 1];
    else if (a == "--dump") dump = argv[i + 1];
    else {
      std::fprintf(stderr, "usage: %s [--seed S] [--packets N] [--per-input M] [--width 64|128|256|512] [--md FILE] "
                   "[--dump DIR]\n", argv[0]);
      return 2;
    }
  }
  std::vector<ni::fuzz::InputRecord> pool;
  for (const auto& [name, in] : ni::fuzz::seedInputs())
    for (auto& r : ni::fuzz::inputRecords(in.data(), in.size())) pool.push_back(std::move(r));
  std::mt19937_64 rng(seed);
  uint64_t played = 0, cycles = 0;
  unsigned inputs = 0, failed = 0;
  while (played < packets) {
    ni::Bytes in{static_cast<uint8_t>(rng())};  // profile: back-pressure on both sides
    for (unsigned k = 0; k < perInput; ++k) {
      const ni::fuzz::InputRecord r = mutate(pool[rng() % pool.size()], rng);
      ni::fuzz::appendRecord(&in, r.ctrl, r.body);
    }
    const auto o = ni::fuzz::runFabricInput(in, width);
    played += o.packets;
    cycles += o.cycles;
    ++inputs;
    if (!o.ok()) {
      ++failed;
      for (const auto& v : o.violations) std::printf("VIOLATION (seed %llu, input %u) %s\n", (unsigned long long)seed,
                                                     inputs, v.c_str());
      if (!dump.empty()) {
        const std::string f = dump + "/fabric-" + std::to_string(seed) + "-" + std::to_string(inputs);
        std::ofstream(f, std::ios::binary).write(reinterpret_cast<const char*>(in.data()), long(in.size()));
        std::printf("  input written to %s\n", f.c_str());
      }
    }
    if (inputs % 20 == 0) {
      std::printf("  %llu of %llu packets (%u inputs, %u with a violation)\n", (unsigned long long)played,
                  (unsigned long long)packets, inputs, failed);
      std::fflush(stdout);
    }
  }
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "fabric packets %llu in %u inputs of %u (seed %llu, %u-bit NI), %llu cycles\n"
                "inputs with a violation %u\n",
                (unsigned long long)played, inputs, perInput, (unsigned long long)seed, width,
                (unsigned long long)cycles, failed);
  std::fputs(buf, stdout);
  if (!md.empty()) std::ofstream(md) << "```\n" << buf << "```\n";
  return failed ? 1 : 0;
}

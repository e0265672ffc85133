// SPDX-License-Identifier: Apache-2.0
// The host-port fuzz campaign (make fuzz): hostile TLP streams into a two-node
// system with a liveness round after each (tb/host_fuzz.hpp). Prints its figures and,
// with --md, writes them as a Markdown block. Exit status 1 on any violation.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "host_fuzz.hpp"

int main(int argc, char** argv) {
  ni::fuzz::HostCampaign c;
  uint64_t tlps = 100000;
  std::string md;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    const uint64_t v = std::strtoull(argv[i + 1], nullptr, 0);
    if (a == "--seed") c.seed = v;
    else if (a == "--tlps") tlps = v;
    else if (a == "--per-stream") c.tlpsPerStream = static_cast<unsigned>(v);
    else if (a == "--width") c.dataBits = static_cast<unsigned>(v);
    else if (a == "--md") md = argv[i + 1];
    else {
      std::fprintf(stderr, "usage: %s [--seed S] [--tlps N] [--per-stream M] [--width 64|128|256|512] [--md FILE]\n", argv[0]);
      return 2;
    }
  }
  // Campaigns of 100 streams each on a fresh system, seeds S, S+1, ...
  uint64_t played = 0, rounds = 0, cycles = 0, malformed = 0, unsup = 0, winMiss = 0, cplUnexp = 0, poison = 0;
  unsigned systems = 0, failed = 0;
  const uint64_t seed0 = c.seed;
  while (played < tlps) {
    c.streams = static_cast<unsigned>(std::min<uint64_t>(100, (tlps - played + c.tlpsPerStream - 1) / c.tlpsPerStream));
    const auto o = ni::fuzz::runHostCampaign(c);
    played += o.tlps;
    rounds += o.liveness;
    cycles += o.cycles;
    malformed += o.malformed;
    unsup += o.unsup;
    winMiss += o.winMiss;
    cplUnexp += o.cplUnexp;
    poison += o.poison;
    ++systems;
    for (const auto& v : o.violations) std::printf("VIOLATION %s\n", v.c_str());
    if (!o.ok()) ++failed;
    std::printf("  %llu of %llu TLPs (%u systems, %llu liveness rounds passed)\n", (unsigned long long)played,
                (unsigned long long)tlps, systems, (unsigned long long)rounds);
    std::fflush(stdout);
    ++c.seed;
  }
  char buf[1024];
  std::snprintf(buf, sizeof buf,
                "host TLPs %llu in %u systems (seeds %llu-%llu, %u per stream, %u-bit NI), %llu cycles\n"
                "liveness rounds passed %llu, systems with a violation %u\n"
                "node 0 counted: MALFORMED %llu, UNSUP %llu, WIN_MISS %llu, CPL_UNEXP %llu, POISON_HOST %llu\n",
                (unsigned long long)played, systems, (unsigned long long)seed0, (unsigned long long)(c.seed - 1),
                c.tlpsPerStream, c.dataBits, (unsigned long long)cycles, (unsigned long long)rounds, failed,
                (unsigned long long)malformed, (unsigned long long)unsup, (unsigned long long)winMiss,
                (unsigned long long)cplUnexp, (unsigned long long)poison);
  std::fputs(buf, stdout);
  if (!md.empty()) std::ofstream(md) << "```\n" << buf << "```\n";
  return failed ? 1 : 0;
}

// SPDX-License-Identifier: Apache-2.0
// The fabric-port fuzz harness in `make test`, at every data width: its seed
// inputs, the committed corpus that `make fuzz` grows (tb/fuzz_corpus), and
// random mutations of the seeds (NI_SEED).
//   NI_FUZZ_INPUT=<file>  the corpus test replays this one input instead
//   NI_FUZZ_LOG=1         every fabric packet in and out, with its cycle
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include "fabric_fuzz.hpp"
#include "verilated_fixture.hpp"

using namespace ni;

namespace {

std::string report(const fuzz::Outcome& o) {
  std::string s;
  for (const auto& v : o.violations) s += "\n  " + v;
  return s;
}

Bytes readFile(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// A failing input, written where it can be replayed (NI_FUZZ_INPUT=<file>).
std::string keep(const Bytes& in, const std::string& name) {
  const std::string path = "fuzz_failure_" + name + ".bin";
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(in.data()),
                                              static_cast<std::streamsize>(in.size()));
  return path;
}

class FuzzReplay : public ::testing::TestWithParam<unsigned> {};

TEST_P(FuzzReplay, SeedInputsKeepEveryCheck) {
  for (const auto& [name, in] : fuzz::seedInputs()) {
    const fuzz::Outcome o = fuzz::runFabricInput(in, GetParam());
    EXPECT_TRUE(o.ok()) << "seed " << name << ":" << report(o);
    EXPECT_GT(o.packets, 0u) << name;
  }
}

TEST_P(FuzzReplay, CorpusKeepsEveryCheck) {
  std::vector<std::filesystem::path> files;
  if (const char* one = std::getenv("NI_FUZZ_INPUT"); one && *one) {
    files.push_back(one);  // one input (a crash from make fuzz, a kept failure)
  } else {
    for (const auto& e : std::filesystem::directory_iterator(NI_FUZZ_CORPUS))
      if (e.is_regular_file()) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty()) << "no corpus in " << NI_FUZZ_CORPUS;
  for (const auto& f : files) {
    const fuzz::Outcome o = fuzz::runFabricInput(readFile(f), GetParam());
    EXPECT_TRUE(o.ok()) << f.filename() << ":" << report(o);
  }
}

// Byte flips, insertions and cuts of the seeds, as a fuzzer starts out.
TEST_P(FuzzReplay, RandomMutationsOfTheSeedsKeepEveryCheck) {
  const uint64_t seed = tb::envU64("NI_SEED", 1);
  std::mt19937_64 rng(seed * 31 + GetParam());
  for (const auto& [name, in] : fuzz::seedInputs()) {
    for (int k = 0; k < 3; ++k) {
      Bytes m = in;
      const unsigned edits = 1 + rng() % 8;
      for (unsigned e = 0; e < edits && !m.empty(); ++e) {
        const size_t at = rng() % m.size();
        switch (rng() % 4) {
          case 0: m[at] ^= static_cast<uint8_t>(1u << (rng() % 8)); break;
          case 1: m[at] = static_cast<uint8_t>(rng()); break;
          case 2: m.insert(m.begin() + static_cast<long>(at), static_cast<uint8_t>(rng())); break;
          default: m.resize(at + 1); break;
        }
      }
      const fuzz::Outcome o = fuzz::runFabricInput(m, GetParam());
      EXPECT_TRUE(o.ok()) << "mutation " << k << " of seed " << name << ":" << report(o) << "\n  input kept in "
                          << keep(m, "mutation_" + name + "_" + std::to_string(k));
    }
  }
  if (HasFailure()) std::cerr << "[ reproduce ] NI_SEED=" << seed << "\n";
}

INSTANTIATE_TEST_SUITE_P(Widths, FuzzReplay, ::testing::Values(64u, 128u, 256u, 512u),
                         [](const auto& i) { return std::to_string(i.param) + "bit"; });

}  // namespace

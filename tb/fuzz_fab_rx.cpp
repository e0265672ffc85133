// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: arbitrary inputs into the fabric receive port of a 64-bit NI
// (tb/fabric_fuzz.hpp has the input format and the checks). Built by `make fuzz`
// with clang; a violated check aborts, and libFuzzer saves the input as crash-*.
//   NI_FUZZ_SEED_DIR=<dir>  write the seed inputs there first (make fuzz passes it as a corpus)
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "fabric_fuzz.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* dir = std::getenv("NI_FUZZ_SEED_DIR");
  if (!dir || !*dir) return 0;
  std::filesystem::create_directories(dir);
  for (const auto& [name, in] : ni::fuzz::seedInputs()) {
    std::ofstream f(std::filesystem::path(dir) / ("seed_" + name), std::ios::binary);
    f.write(reinterpret_cast<const char*>(in.data()), static_cast<std::streamsize>(in.size()));
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const ni::fuzz::Outcome o = ni::fuzz::runFabricInput(data, size, 64);
  if (o.ok()) return 0;
  for (const auto& v : o.violations) std::fprintf(stderr, "violation: %s\n", v.c_str());
  std::abort();
}

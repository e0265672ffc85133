// SPDX-License-Identifier: Apache-2.0
// Fuzz harness of the NI's fabric receive port (issue 4): one NI with its node
// (CPU, memory system, root complex) and a fabric end that plays arbitrary bytes
// into the NI, then checks what must hold for any input. Used by the libFuzzer
// target (tb/fuzz_fab_rx.cpp, `make fuzz`) and by the corpus replay in `make test`
// (tb/test_fuzz_corpus.cpp). docs/verification.md#fuzzing describes the checks.
//
// Input: one profile byte, then records until the bytes run out:
//   profile  bits 1:0 host-port back-pressure (0, 10, 40, 80 %),
//            bits 3:2 fabric-output back-pressure (same steps)
//   record   ctrl:u8  len:u16 (little-endian, low 10 bits used)  body[len]
//   ctrl     bit 0    seal: the harness pads the body to whole words, sets LRH
//                     PktLen and appends a right ICRC and VCRC (else sent as is)
//            bit 1    virtual channel 1 (else 0)
//            bit 2    bubbles: the source idles every other cycle inside the packet
//            bits 7:3 idle cycles before the packet, in 16s (0: right behind the last)
// A record cut short by the end of the input carries what is left.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "bytes.hpp"

namespace ni::fuzz {

struct Outcome {
  std::vector<std::string> violations;  // empty: every check held
  unsigned packets = 0;                 // fabric packets played into the NI
  uint64_t cycles = 0;
  bool ok() const { return violations.empty(); }
};

// One record of an input as written (before the harness seals it), and the input's
// records in order; a record cut short by the end of the input carries what is left.
struct InputRecord {
  uint8_t ctrl = 0;
  Bytes body;
};
std::vector<InputRecord> inputRecords(const uint8_t* data, size_t size);
// Appends a record (ctrl, little-endian length, body) to an input.
void appendRecord(Bytes* in, uint8_t ctrl, const Bytes& body);

// Plays one input into a freshly reset NI of the given data width (a built one).
Outcome runFabricInput(const uint8_t* data, size_t size, unsigned dataBits);
inline Outcome runFabricInput(const Bytes& in, unsigned dataBits) { return runFabricInput(in.data(), in.size(), dataBits); }

// Well-formed starting inputs, one per kind of packet the NI handles, built by the codecs.
std::vector<std::pair<std::string, Bytes>> seedInputs();

}  // namespace ni::fuzz

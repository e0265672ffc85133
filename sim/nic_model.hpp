// SPDX-License-Identifier: Apache-2.0
// The NI (nic_top) as a C++ object with byte-oriented stream ports, independent
// of the data width it was built with.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "bytes.hpp"
#include "clocked.hpp"

namespace ni {

// One AXI4-Stream beat: data in lane order, keep bit per lane.
struct Beat {
  Bytes data;
  uint64_t keep = 0;
  bool last = false;
  bool user = false;  // host out: nullified TLP (valid with last)
  uint8_t dest = 0;   // fabric: virtual channel
};

// Host ports of one NI: a TLP link per CPU (nic_top HostPorts).
constexpr unsigned kMaxHostPorts = 4;

struct HostPortIn {
  bool inValid = false;  // TLP beat toward the NI
  Beat in;
  bool outReady = false;  // the root complex takes the NI's beat
};

struct HostPortOut {
  bool inReady = false;
  bool outValid = false;
  Beat out;
};

struct NicIn {
  HostPortIn host[kMaxHostPorts];
  bool fabInValid = false;
  Beat fabIn;
  bool fabOutReady = false;
  uint8_t fabTxCredit = 0;  // bit per VC: one credit returned
};

struct NicOut {
  HostPortOut host[kMaxHostPorts];
  bool hostReqRoom = false;  // a whole request TLP fits on every port (the root complex starts requests only then)
  bool fabInReady = false;
  bool fabOutValid = false;
  Beat fabOut;
  uint8_t fabRxCredit = 0;  // bit per VC: one credit granted to the fabric
};

class NicModel : public Clocked {
 public:
  virtual unsigned bytesPerBeat() const = 0;
  virtual unsigned maxPayload() const = 0;  // nic_top MaxPayload of this build
  virtual unsigned hostPorts() const = 0;   // nic_top HostPorts of this build
  // Drive the inputs and evaluate; then read() gives the outputs of this cycle.
  virtual void drive(const NicIn& in) = 0;
  virtual NicOut read() const = 0;
};

// The verilated configurations: every data width with MaxPayload 256 and one host
// port; 64 bits with MaxPayload 4096; 64 bits with 2 and 4 host ports. config names
// a parameter set of rtl/ni_configs.json: "default", or "small" (64 bits, one port).
bool nicBuilt(unsigned dataBits, unsigned maxPayload = 256, unsigned hostPorts = 1,
              const std::string& config = "default");
std::unique_ptr<NicModel> makeNic(unsigned dataBits, VerilatedContext* ctx, const std::string& name,
                                  unsigned maxPayload = 256, unsigned hostPorts = 1,
                                  const std::string& config = "default");

}  // namespace ni

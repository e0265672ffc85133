// SPDX-License-Identifier: Apache-2.0
// An N-node system: nodes (CPUs, memory, root complex), one NI each or one per rail,
// a fabric (crossbar, ring or torus; a plane of its own per rail), and the driver
// calls that program the NIs through their host ports.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "driver.hpp"
#include "fabric.hpp"
#include "node.hpp"
#include "ref_ni.hpp"

class VerilatedContext;

namespace ni {

struct SystemConfig {
  unsigned nodes = 2;
  unsigned dataBits = 64;
  unsigned maxPayload = 256;     // NI build: largest TLP payload (256, or 4096 at 64 bits)
  unsigned hostPorts = 1;        // CPUs per node, each on its own NI host port (2 or 4: 64 bits only)
  std::string niConfig = "default";  // NI parameter set (rtl/ni_configs.json): "default" or "small"
  unsigned rails = 1;            // NIs per node, NI r of every node on fabric plane r
  Topology topology;             // none given: a crossbar of all nodes
  unsigned linkLatency = 10;     // every link: NI to switch and switch to switch
  double linkBytesPerCycle = 0;  // 0: the NI's beat width per cycle
  // Packet slots per switch input and VC: enough to cover the credit round trip
  // (twice the link latency and a few cycles) at the packet rates the NIs reach; with
  // 4, one-beat packets at 512 bits stalled at 0.31 a cycle on 10-cycle links.
  unsigned fabricCredits = 16;
  uint64_t seed = 1;
  double hostStall = 0.0;        // probability the root complex holds off the NI's host output
  // The CPUs of odd-numbered nodes use 10-bit tags (PCIe 4.0), the others 8-bit ones:
  // every system carries both.
  bool tenBitTagsOnOddNodes = true;
  FabricFaults faults;           // injected by the fabric model (none by default)
  double clockNs = 4.0;          // 250 MHz reference clock for reports and captures
  uint32_t resendTimeout = 0;    // RETX_TIMEOUT programmed at reset; 0: the fabric's longest round trip
  std::string pcapPath;           // pcapng, an interface per node (docs/architecture.md, "Captures")
  bool captureRx = false;         // capture as packets reach each NI (after the faults), not as sent
  std::string tracePath;         // FST of one node's NI (needs a NI_TRACE build)
  unsigned traceNode = 0;
  uint64_t traceFrom = 0, traceCycles = 0;  // waveform of cycles [from, from + cycles); 0: to the end
};

class System {
 public:
  explicit System(const SystemConfig& cfg);
  ~System();
  const SystemConfig& config() const { return cfg_; }
  unsigned size() const { return static_cast<unsigned>(nodes_.size()); }
  Node& node(unsigned i) { return *nodes_[i]; }
  unsigned rails() const { return cfg_.rails; }
  NicModel& nic(unsigned i, unsigned rail = 0) { return *nics_[i * cfg_.rails + rail]; }
  // NI i's port signals in the last cycle ticked (benchmarks timing beats).
  const NicIn& nicIn(unsigned i, unsigned rail = 0) const { return in_[i * cfg_.rails + rail]; }
  const NicOut& nicOut(unsigned i, unsigned rail = 0) const { return out_[i * cfg_.rails + rail]; }
  Fabric& fabric(unsigned rail = 0) { return *fabrics_[rail]; }
  VerilatedContext* context() { return ctx_.get(); }
  uint64_t cycle() const { return clock_->cycles(); }

  // Reset all NIs (their fabric links retrain), give them their node IDs (a node's NIs
  // share its LID) and their resend timeout (RETX_TIMEOUT = resendTimeout()).
  void reset();
  // The resend timeout the system programs: the longest round trip a request and its
  // answer can take on this fabric when it is loaded but loses nothing, so that a
  // fabric without faults sees no resend (docs/architecture.md, "Resend timeout").
  uint32_t resendTimeout() const;
  void tick();
  bool runUntil(const std::function<bool()>& done, uint64_t maxCycles);
  // Every node and the fabric have nothing in flight this cycle (what the models see).
  bool idle() const;
  // Idle for this many cycles in a row: the NI pipelines hold nothing the models cannot see.
  static constexpr unsigned kQuietCycles = 64;
  // Reads RETX_BUSY on every NI: requests still await an answer. A dropped packet is
  // resent only when its timer runs out, long after the models have gone quiet.
  bool resendsPending();
  // The same without running the system: reads RETX_BUSY on every NI, then done(pending)
  // once all have answered, from within a later tick().
  void pollResends(const std::function<void(bool pending)>& done);
  // Run until every node and the fabric are idle and no NI awaits an answer (a write
  // confirmed at the sending NI has then reached its receiver); progress is called
  // every 1M cycles.
  bool drain(uint64_t maxCycles = 2'000'000, const std::function<void(uint64_t)>& progress = {});
  bool rtlError() const;

  // ---- driver: NI programming through the host port (posted CSR writes); `rail`
  // chooses the node's NI.
  void setWindow(unsigned node, unsigned idx, const Window& w, unsigned rail = 0);
  void clearWindow(unsigned node, unsigned idx);
  void setMemId(unsigned node, unsigned id, const MemRegion& m, unsigned rail = 0);
  // Multicast group `mlid` (0xC000 and up): the switch replicates to the members,
  // and each member's NI accepts the LID in its membership slot `slot`.
  void setMulticastGroup(unsigned slot, uint16_t mlid, const std::vector<unsigned>& members);
  // Multicast group `mlid` that node `sender`'s NI replicates itself (table entry g):
  // one unicast copy per member; the switch and the members need no setup.
  void setReplicatedGroup(unsigned sender, unsigned g, uint16_t mlid, const std::vector<driver::GroupMember>& members) {
    driver::setReplicatedGroup(csrWriter(sender), g, mlid, members);
  }
  // Synchronous CSR read (runs the system until the completion arrives).
  uint32_t readCsr(unsigned node, uint32_t off, unsigned rail = 0);
  driver::CsrWrite csrWriter(unsigned node, unsigned rail = 0);
  // Waits, polling CNT_ZERO as the CPU would, until DMA byte counter `cnt` of the
  // node has reached zero; false if it has not within maxCycles.
  bool waitCounter(unsigned node, unsigned cnt, uint64_t maxCycles = 2'000'000);

 private:
  SystemConfig cfg_;
  std::unique_ptr<VerilatedContext> ctx_;
  std::vector<std::unique_ptr<NicModel>> nics_;  // node i's NI on rail r: i * rails + r
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<std::unique_ptr<Fabric>> fabrics_;  // a plane per rail
  std::unique_ptr<ClockDriver> clock_;
  std::vector<NicIn> in_;
  std::vector<NicOut> out_;
};

}  // namespace ni

// SPDX-License-Identifier: Apache-2.0
// Compute node model: CPUs issuing TLPs through a small driver API, a sparse memory
// system, and the root complex routing TLPs between them and the NI. CPU p has its
// own link to the NI's host port p and Requester ID bus p (cpuReqId); the memory
// system answers a request on the link it came in on. With several NIs (rails) the
// node has such a link per CPU to each of them, and one memory.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <random>
#include <unordered_map>
#include <vector>

#include "address_map.hpp"
#include "nic_model.hpp"
#include "tlp.hpp"

namespace ni {

class Memory {
 public:
  uint8_t get(uint64_t a) const;
  void set(uint64_t a, uint8_t v);
  Bytes read(uint64_t a, size_t n) const;
  void write(uint64_t a, const Bytes& b);
  size_t pagesTouched() const { return pages_.size(); }

 private:
  std::unordered_map<uint64_t, std::vector<uint8_t>> pages_;
};

// Result of a CPU load: data, or the completion status that ended it.
struct LoadResult {
  bool ok = false;
  CplStatus status = CplStatus::SC;
  bool timedOut = false;
  Bytes data;
};

struct NodeStats {
  uint64_t tlpsToNi = 0, tlpsFromNi = 0, nullified = 0, memWrites = 0, memReads = 0, memAtomics = 0;
  uint64_t loadsDone = 0, loadErrors = 0, timeouts = 0, unexpectedCpl = 0;
  uint64_t undecodable = 0;  // TLPs from the NI the root complex could not decode (dropped)
  uint64_t storeBytes = 0;
  uint64_t memLost = 0;  // confirmed writes (DMWr) the memory system lost: not applied, not answered
  uint64_t wrongPort = 0;  // completions for one CPU that arrived on another CPU's link
  uint64_t cpuCompletions[kMaxHostPorts] = {};  // completions each CPU took
};

// Requester ID of CPU p: bus p (the NI sends a completion to the port its bus names).
constexpr uint16_t cpuReqId(unsigned cpu) { return static_cast<uint16_t>(kCpuReqId + (cpu << 8)); }

// Which CPU issues a request, and to which of the node's NIs (rail) it goes.
struct Via {
  Via(unsigned c = 0, unsigned r = 0) : cpu(c), rail(r) {}  // NOLINT: a CPU number converts
  unsigned cpu, rail;
};

// Beat-level host link toward one NI: serializes TLPs into beats and collects beats into TLPs.
// How a broken or hostile host sends a TLP (bad-input tests, the host-port fuzzer):
// a hole in one beat's keep, tvalid withdrawn before the handshake.
struct TlpShape {
  int holeBeat = -1;      // beat whose keep loses the lanes of holeKeep (-1: none)
  uint64_t holeKeep = 0;
  bool withdraw = false;  // a beat the NI holds back is withdrawn for a cycle (once per TLP)
};

class HostLink {
 public:
  explicit HostLink(unsigned bytesPerBeat) : bpb_(bytesPerBeat) {}
  void pushTlp(const Bytes& tlp, TlpShape shape = {}) {
    outQ_.push_back(digest_ ? withDigest(tlp) : tlp);
    shapes_.push_back(shape);
  }
  // A root complex with ECRC generation on: every TLP sent carries a digest (TD).
  void setDigest(bool on) { digest_ = on; }
  TlpShape& shape() { return shapes_.front(); }
  bool hasBeat() const { return !outQ_.empty(); }
  Beat currentBeat() const;
  void advance();  // the current beat was accepted
  // Receive side: returns true with a whole TLP once its last beat arrived.
  bool collect(const Beat& b, Bytes* tlp, bool* nullified);
  size_t queued() const { return outQ_.size(); }
  bool receiving() const { return !rx_.empty(); }  // part of a TLP has arrived

 private:
  static Bytes withDigest(const Bytes& tlp);
  unsigned bpb_;
  bool digest_ = false;
  std::deque<Bytes> outQ_;
  std::deque<TlpShape> shapes_;
  size_t off_ = 0;
  Bytes rx_;
};

class Node {
 public:
  using LoadCb = std::function<void(const LoadResult&)>;

  Node(unsigned index, unsigned bytesPerBeat, uint64_t seed, unsigned cpus = 1, unsigned rails = 1);
  unsigned cpus() const { return cpus_; }
  unsigned rails() const { return static_cast<unsigned>(ports_.size()) / cpus_; }
  unsigned index() const { return index_; }
  Memory& memory() { return mem_; }
  const NodeStats& stats() const { return st_; }

  // ---- driver API (CPU side)
  // Every call is made by CPU `via.cpu` (0 .. cpus() - 1) on its own link to NI `via.rail`.
  void store(uint64_t addr, const Bytes& data, Via via = {});  // MWr TLPs (<= max payload, no 4 KiB crossing)
  void load(uint64_t addr, size_t len, LoadCb cb, Via via = {});
  // AtomicOp (FetchAdd, Swap, CAS); the callback gets the value memory held before it.
  void atomic(TlpKind kind, uint64_t addr, const Bytes& operands, LoadCb cb, Via via = {});
  // Confirmed write (DMWr, at most one TLP's worth): the callback gets the confirmation,
  // whose 8 data bytes name the address written (little-endian), or its error status.
  void confirmedStore(uint64_t addr, const Bytes& data, LoadCb cb, Via via = {});
  void csrWrite(uint32_t off, uint32_t value, Via via = {});
  void csrRead(uint32_t off, std::function<void(uint32_t, bool ok)> cb, Via via = {});
  void sendRawTlp(const Bytes& tlp, Via via = {}, TlpShape shape = {}) {  // for bad-input tests
    link(via).toNi.pushTlp(tlp, shape);
    ++st_.tlpsToNi;
  }
  bool idle() const;
  // Called for every write the memory system applies, with the CPU whose link it came
  // in on (tests that check arrival order, and where interrupts arrive).
  void onMemoryWrite(std::function<void(const Tlp&, unsigned cpu)> f) { memWriteObserver_ = std::move(f); }
  // Called for every request (write, read, atomic) that reaches the memory system.
  void onMemoryRequest(std::function<void(const Tlp&)> f) { memRequestObserver_ = std::move(f); }
  // Called for every completion the NI sends one of this node's CPUs (before the CPU matches it).
  void onCpuCompletion(std::function<void(const Tlp&)> f) { cpuCplObserver_ = std::move(f); }
  size_t outstandingLoads() const { return loads_.size(); }

  // ---- wiring to the NIs (called by the system each cycle, for each rail)
  void fillNicIn(NicIn& in, unsigned rail = 0);
  void afterCycle(const NicIn& in, const NicOut& out, unsigned rail = 0);  // handshakes of the cycle just evaluated
  void endCycle();  // after every rail's afterCycle: completion timeouts, time
  void setHostBackpressure(double p) { stallProb_ = p; }
  // CPU `cpu` stops taking the NI's beats on its link (a hung CPU), or takes them again.
  void setLinkStopped(Via via, bool stopped) { link(via).stopped = stopped; }
  void setCompletionTimeout(uint64_t cycles) { cplTimeout_ = cycles; }
  // Every TLP the root complex sends the NI (requests and memory's completions) carries
  // a TLP digest, as with ECRC generation on.
  void setDigest(bool on) {
    for (Port& p : ports_) {
      p.toNi.setDigest(on);
      p.memLink.setDigest(on);
    }
  }
  // Fault model of the memory system: it loses this share of the DMWrs it gets from
  // the NI (neither applied nor confirmed), as the NI's memory timer must survive.
  void setMemoryLosesConfirmedWrites(double p) { loseDmwr_ = p; }
  // Fault model of a broken root complex: for each read the memory system answers, f
  // gets the request and returns how many bytes the completion's TLP loses from its end
  // (negative) or gains as garbage after it (positive); 0 leaves it whole. Its Length
  // is not changed, so such a completion is malformed.
  void setReadCompletionFault(std::function<int(const Tlp& read)> f) { readCplFault_ = std::move(f); }
  // Largest write and read request the CPU issues (the NI's MaxPayload).
  void setMaxPayload(size_t bytes) { maxPayload_ = bytes; }
  // The CPUs' requests carry 10-bit tags (0x100-0x3FF, T9 and T8 in byte 1), as a PCIe
  // 4.0 root complex does with 10-Bit Tag Requester Enable set; else 8-bit tags.
  void setTenBitTags(bool on) { tenBitTags_ = on; }
  uint64_t now() const { return now_; }

 private:
  struct PendingLoad {
    size_t remaining = 0;  // bytes still to come
    Bytes data;
    LoadCb cb;
    uint64_t issued = 0;
    bool failed = false;
    CplStatus status = CplStatus::SC;
  };
  struct TagUse {
    uint64_t load;
    size_t off, len;
  };
  enum class Src { None, Cpu, Mem };
  // One host link: CPU requests and memory completions toward the NI, taking turns
  // per TLP, and the NI's TLPs from it.
  struct Port {
    explicit Port(unsigned bpb) : toNi(bpb), fromNi(bpb), memLink(bpb) {}
    HostLink toNi;    // CPU requests toward the NI
    HostLink fromNi;  // receive side of the NI's host out
    HostLink memLink; // beats of memory completions being sent
    std::deque<std::pair<uint64_t, Bytes>> memToNi;  // memory completions toward the NI (ready time)
    Src sending = Src::None, lastSent = Src::None;
    bool outReady = true;
    bool stopped = false;
    bool held = false;  // the NI held back the beat offered last cycle
  };
  Port& link(Via v) { return ports_[v.rail * cpus_ + v.cpu]; }
  uint16_t allocTag(unsigned cpu);
  uint64_t newLoad(size_t len, LoadCb cb);
  // Sends a request the CPU waits an answer of answerBytes for, under a fresh tag.
  void issueAnswered(Tlp t, size_t answerBytes, LoadCb cb, Via via);
  void memoryAccept(const Tlp& t, Port& port, unsigned cpu);
  void cpuCompletion(const Tlp& t, unsigned cpu);
  void finishLoad(uint64_t id);

  unsigned index_;
  Memory mem_;
  NodeStats st_;
  unsigned cpus_;
  std::vector<Port> ports_;  // rail r, CPU p: ports_[r * cpus_ + p]
  std::vector<uint16_t> nextTag_;  // per CPU (a CPU's tags are shared by its rails)
  bool tenBitTags_ = false;
  std::map<uint32_t, TagUse> tags_;  // key: CPU << 10 | tag
  std::map<uint64_t, PendingLoad> loads_;
  uint64_t nextLoadId_ = 0;
  uint64_t now_ = 0;
  uint64_t memLatency_ = 20;
  uint64_t cplTimeout_ = 100000;
  size_t maxPayload_ = kMaxPayload;
  double stallProb_ = 0.0;
  double loseDmwr_ = 0.0;
  std::vector<bool> reqRoom_;  // each NI's request room as last seen
  std::function<void(const Tlp&, unsigned)> memWriteObserver_;
  std::function<void(const Tlp&)> memRequestObserver_;
  std::function<void(const Tlp&)> cpuCplObserver_;
  std::function<int(const Tlp&)> readCplFault_;
  std::mt19937_64 rng_;
};

}  // namespace ni

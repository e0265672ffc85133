// SPDX-License-Identifier: Apache-2.0
// Fabric model: one port per node with per-link latency and bandwidth and packet
// credits per virtual channel in both directions, routing by DLID, a capture tap,
// and seeded faults: drop, bit corruption, duplication, reordering within a VC,
// links down for a while or for good. The nodes hang on one crossbar, or each on
// its own switch of a ring or torus (topology.hpp): packets then cross links
// between switches (latency, serialization at the link's bandwidth, credits per
// virtual channel into the next switch's input buffer) by dimension-order routing,
// each class (requests, answers) on two virtual channels with a dateline per ring.
#pragma once
#include <cstdint>
#include <functional>
#include <deque>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "nic_model.hpp"
#include "pcap.hpp"
#include "topology.hpp"

namespace ni {

// Per-packet fault probabilities, applied as a packet enters the switch (after
// the capture tap, which shows what the NI sent). Reproducible from `seed`.
struct FabricFaults {
  uint64_t seed = 1;
  double drop = 0;       // the packet vanishes (its input slot is freed)
  double corrupt = 0;    // one random bit of the packet flips (it is then routed as it reads)
  double duplicate = 0;  // a second copy follows it to the destination
  double reorder = 0;    // it overtakes the packet queued before it on the same VC
  // The link of `port` is down in cycles [from, until); until 0: for good. A packet
  // that enters the switch from that port, or is routed to it, while it is down is
  // lost (packets already queued toward it are still delivered).
  struct LinkDown {
    unsigned port;
    uint64_t from, until;
  };
  std::vector<LinkDown> linkDown;
  bool any() const { return drop > 0 || corrupt > 0 || duplicate > 0 || reorder > 0 || !linkDown.empty(); }
};

struct FabricConfig {
  unsigned ports = 2;
  Topology topology;             // no dimensions: a crossbar of `ports`
  unsigned bytesPerBeat = 8;
  unsigned linkLatency = 10;     // cycles from last byte in to first byte out, each way
  double linkBytesPerCycle = 0;  // 0: no limit beyond the NI's beat width
  unsigned inputCredits = 16;    // packet slots per input port and VC (NI and switch links)
  bool datelineVcs = true;       // false only to show a ring deadlock without them (tests)
  double clockNs = 4.0;          // for capture timestamps
  // Where the capture takes packets: as each NI sends them (before the faults), or as
  // they reach each NI (after the faults: what the receiving NI sees).
  CaptureWriter::Point capturePoint = CaptureWriter::Point::Tx;
  FabricFaults faults;
};

struct FabricStats {
  uint64_t packets = 0, bytes = 0, dropped = 0, corrupted = 0;
  uint64_t delivered = 0;  // packets (and copies) queued toward an NI
  uint64_t crcErrors = 0;  // of those, packets an NI must drop for ICRC, VCRC or PktLen (its CRC_ERR_CNT)
  uint64_t mcastCopies = 0, mcastDropped = 0;  // copies made; packets to a group without members
  // Faults injected (FabricFaults); `corrupted` counts corruptNext and random flips.
  uint64_t faultDrops = 0, duplicates = 0, reordered = 0, linkDownDrops = 0;
  uint64_t perVc[2] = {0, 0};
  uint64_t perVcBytes[2] = {0, 0};  // VC0 requests (the writes), VC1 answers (ACKs, responses)
  uint64_t continuations = 0;  // of `delivered`, continuation packets (TUNNEL_CONT)
  uint64_t linkHops = 0;       // packets moved over a link between two switches
  uint64_t datelineHops = 0;   // of those, over a ring's dateline
  // Every count added (the totals of several fabric planes).
  FabricStats& operator+=(const FabricStats& o) {
    for (auto [a, b] : {std::pair{&packets, o.packets}, {&bytes, o.bytes}, {&dropped, o.dropped},
                        {&corrupted, o.corrupted}, {&delivered, o.delivered}, {&crcErrors, o.crcErrors},
                        {&mcastCopies, o.mcastCopies}, {&mcastDropped, o.mcastDropped}, {&faultDrops, o.faultDrops},
                        {&duplicates, o.duplicates}, {&reordered, o.reordered}, {&linkDownDrops, o.linkDownDrops},
                        {&perVc[0], o.perVc[0]}, {&perVc[1], o.perVc[1]}, {&perVcBytes[0], o.perVcBytes[0]},
                        {&perVcBytes[1], o.perVcBytes[1]}, {&continuations, o.continuations},
                        {&linkHops, o.linkHops}, {&datelineHops, o.datelineHops}})
      *a += b;
    return *this;
  }
};

class Fabric {
 public:
  explicit Fabric(const FabricConfig& c);
  CaptureWriter& tap() { return tap_; }
  // Called with every packet an NI sends into the fabric, and the port it came in on.
  void onIngress(std::function<void(const Bytes& pkt, unsigned port)> f) { ingressObserver_ = std::move(f); }
  const FabricStats& stats() const { return st_; }
  // The switch replicates packets to a multicast LID (0xC000 and up) to these ports
  // (never back to the sender); a group without members drops them.
  void setGroup(uint16_t mlid, std::vector<unsigned> members) { groups_[mlid] = std::move(members); }
  // Flip one bit in each of the next n packets sent by this port (tests).
  void corruptNext(unsigned port, unsigned n) { ports_[port].corrupt += n; }
  // The NIs were reset: every NI link starts again as a link does after its partner's
  // reset. The credits the NI had granted are gone, the NI is owed every input slot its
  // packets do not hold, and a packet half across the link either way is lost.
  void retrainLinks();
  void setFaults(const FabricFaults& f) {
    cfg_.faults = f;
    faultRng_.seed(f.seed);
  }
  bool linkDown(unsigned port) const;
  uint64_t now() const { return now_; }
  bool idle() const;
  const Topology& topology() const { return cfg_.topology; }
  // The largest share of cycles any link between switches was sending (0 on a crossbar).
  double busiestLink() const;
  // Cycles a packet of at most maxPacketBytes may take from its NI to the NI it is
  // for when the fabric is loaded but loses nothing and every NI takes what reaches
  // it: the subnet manager's packet lifetime (InfiniBand derives the ACK timeout from
  // it the same way). At each switch of the longest route its input buffer may be full
  // (inputCredits packets), and before each of those leaves every other input of the
  // switch may send one packet through the same output (round robin), each packet at
  // most maxPacketBytes at the link rate; plus the latency of every link.
  uint64_t packetLifetime(size_t maxPacketBytes) const;

  void fillNicIn(unsigned port, NicIn& in);
  void afterCycle(unsigned port, const NicIn& in, const NicOut& out);
  void endCycle();

 private:
  // The buffer slot a packet holds until it leaves: one of an NI's input slots at
  // its switch, or one behind a link between switches (credit owed to that link).
  struct Slot {
    enum class Kind : uint8_t { None, Ni, Link } kind = Kind::None;
    unsigned sw = 0, port = 0, vc = 0;  // Ni: the node (sw); Link: the link's sending switch and port
  };
  struct Pkt {
    Bytes bytes;
    uint8_t vc;      // class: 0 requests, 1 answers
    Slot slot;
    uint64_t ready;  // cycle it may start leaving the switch
  };
  // Direct topologies: a switch per node. Its inputs are port x virtual channel
  // (class + 2 x dateline); its outputs the NI (port 0) and the links.
  static constexpr unsigned kVcs = 4;
  struct Hop {
    Pkt pkt;
    unsigned dst;      // destination node
    unsigned out;      // the output it takes at the switch it is in (routed on arrival)
    unsigned vc;       // virtual channel it holds
    int dim;           // dimension of the link it came over; -1 from its NI
  };
  struct Link {
    uint64_t busyUntil = 0, busy = 0, packets = 0;
    unsigned credits[kVcs];
  };
  struct Switch {
    std::vector<std::deque<Hop>> in;  // [port * kVcs + vc]
    std::vector<Link> out;            // [port], links only (port 0 unused)
    std::vector<unsigned> rr;         // per output: the input it looks at first
    unsigned queued = 0;
  };
  struct CreditBack {
    uint64_t at;
    unsigned sw, port, vc;
  };
  void free(const Slot& s);
  void stepSwitches();
  void toSwitch(unsigned sw, unsigned dst, Pkt pkt);
  struct Port {
    Bytes rx;                   // packet being received from the NI
    uint8_t rxVc = 0;
    double rxBudget = 0;        // link bandwidth tokens (bytes)
    unsigned creditsToGive[2];  // credits owed to the NI (pulsed one per cycle)
    unsigned niCredits[2] = {0, 0};  // credits the NI granted us for its receive buffers
    unsigned held[2] = {0, 0};       // input slots its packets hold in the fabric
    std::deque<Pkt> out[2];     // per VC, toward this port's NI
    bool sending = false;
    Pkt cur;
    size_t off = 0;
    double txBudget = 0;
    unsigned corrupt = 0;
  };
  void ingress(unsigned port, Bytes pkt, uint8_t vc);
  std::function<void(const Bytes&, unsigned)> ingressObserver_;
  bool chance(double p) { return p > 0 && std::uniform_real_distribution<double>(0, 1)(faultRng_) < p; }
  void enqueue(unsigned dst, Pkt pkt);

  FabricConfig cfg_;
  std::vector<Port> ports_;
  FabricStats st_;
  std::map<uint16_t, std::vector<unsigned>> groups_;
  CaptureWriter tap_;
  std::vector<Switch> sw_;
  std::deque<CreditBack> creditsBack_;
  uint64_t now_ = 0;
  std::mt19937_64 faultRng_;
};

}  // namespace ni

// SPDX-License-Identifier: Apache-2.0
// Unit test of the fabric model (sim/fabric.hpp, sim/topology.hpp) alone: model
// endpoints in place of NIs send packets beat by beat under the fabric's credits and
// take what it delivers, granting their own receive credits back as they consume.
// Topologies: routing is minimal and dimension-ordered; all-to-all traffic with two
// credits per buffer drains on a crossbar, a ring and 2D and 3D tori (every packet once,
// in order per source, destination and class), and does not without the dateline
// virtual channels (the drain check can fail); a hop costs the link latency and the
// packet's serialization; multicast reaches every member once.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <random>
#include <tuple>

#include "fabric.hpp"
#include "verilated_fixture.hpp"

using namespace ni;

namespace {

constexpr unsigned kBpb = 8;

// A packet the fabric routes: LRH with the DLID (bytes 2-3) and SLID (6-7), then the
// source, a sequence number and filler.
Bytes makePacket(unsigned src, unsigned dst, unsigned seq, unsigned len) {
  Bytes b(std::max(len, 16u), 0);
  b[2] = static_cast<uint8_t>((dst + 1) >> 8);
  b[3] = static_cast<uint8_t>(dst + 1);
  b[6] = static_cast<uint8_t>((src + 1) >> 8);
  b[7] = static_cast<uint8_t>(src + 1);
  for (unsigned i = 0; i < 4; ++i) b[8 + i] = static_cast<uint8_t>(seq >> (8 * i));
  for (size_t i = 16; i < b.size(); ++i) b[i] = static_cast<uint8_t>(i + seq);
  return b;
}
unsigned srcOf(const Bytes& b) { return (unsigned(b[6]) << 8 | b[7]) - 1; }
unsigned seqOf(const Bytes& b) { return b[8] | b[9] << 8 | b[10] << 16 | unsigned(b[11]) << 24; }

// One node's side of its fabric link.
struct Endpoint {
  std::deque<std::pair<Bytes, uint8_t>> toSend;  // packets and their class
  unsigned credits[2] = {0, 0};                  // the fabric's input slots we may fill
  bool sending = false;
  size_t off = 0;
  unsigned grant[2] = {4, 4};                    // receive credits still to grant
  Bytes rx;
  struct Got {
    Bytes bytes;
    uint8_t vc;
    uint64_t at;
  };
  std::vector<Got> got;

  void drive(NicOut& out) {
    out.fabInReady = true;
    out.fabRxCredit = 0;
    for (unsigned v = 0; v < 2; ++v)
      if (grant[v]) out.fabRxCredit |= static_cast<uint8_t>(1u << v);
    if (!sending && !toSend.empty() && credits[toSend.front().second]) {
      --credits[toSend.front().second];
      sending = true;
      off = 0;
    }
    out.fabOutValid = sending;
    if (sending) {
      const Bytes& p = toSend.front().first;
      out.fabOut.data.assign(kBpb, 0);
      out.fabOut.keep = 0;
      for (unsigned j = 0; j < kBpb && off + j < p.size(); ++j) {
        out.fabOut.data[j] = p[off + j];
        out.fabOut.keep |= uint64_t{1} << j;
      }
      out.fabOut.last = off + kBpb >= p.size();
      out.fabOut.dest = toSend.front().second;
    }
  }
  void after(const NicIn& in, const NicOut& out, uint64_t now) {
    for (unsigned v = 0; v < 2; ++v) {
      if (in.fabTxCredit >> v & 1) ++credits[v];
      if (out.fabRxCredit >> v & 1) --grant[v];
    }
    if (out.fabOutValid && in.fabOutReady) {
      off += kBpb;
      if (out.fabOut.last) {
        toSend.pop_front();
        sending = false;
      }
    }
    if (in.fabInValid) {
      for (unsigned j = 0; j < kBpb; ++j)
        if (in.fabIn.keep >> j & 1) rx.push_back(in.fabIn.data[j]);
      if (in.fabIn.last) {
        got.push_back({rx, in.fabIn.dest, now});
        rx.clear();
        ++grant[in.fabIn.dest & 1];  // consumed: the slot is free again
      }
    }
  }
};

class FabricTest : public tb::VerilatedTest {
 protected:
  void build(const Topology& t, unsigned credits = 2, bool dateline = true, unsigned latency = 10) {
    FabricConfig c;
    c.ports = t.nodes();
    c.topology = t;
    c.bytesPerBeat = kBpb;
    c.linkLatency = latency;
    c.inputCredits = credits;
    c.datelineVcs = dateline;
    fab_ = std::make_unique<Fabric>(c);
    ep_.assign(c.ports, Endpoint{});
  }
  void step() {
    const unsigned n = static_cast<unsigned>(ep_.size());
    std::vector<NicIn> in(n);
    std::vector<NicOut> out(n);
    for (unsigned i = 0; i < n; ++i) {
      fab_->fillNicIn(i, in[i]);
      ep_[i].drive(out[i]);
    }
    for (unsigned i = 0; i < n; ++i) {
      ep_[i].after(in[i], out[i], fab_->now());
      fab_->afterCycle(i, in[i], out[i]);
    }
    fab_->endCycle();
  }
  size_t delivered() const {
    size_t n = 0;
    for (auto& e : ep_) n += e.got.size();
    return n;
  }
  // Runs until `want` packets are delivered and the fabric is idle, or until nothing
  // is delivered for `stall` cycles (a deadlock). Returns whether it drained.
  bool drain(size_t want, uint64_t stall = 20000) {
    uint64_t last = 0;
    size_t seen = 0;
    for (uint64_t c = 0;; ++c) {
      step();
      const size_t d = delivered();
      if (d != seen) {
        seen = d;
        last = c;
      }
      if (d == want && fab_->idle()) return true;
      if (c - last > stall) return false;
    }
  }

  // Every node sends `perPair` packets (random lengths up to 300 bytes, random class)
  // to every other node, in random order.
  size_t allToAll(unsigned perPair, std::map<std::tuple<unsigned, unsigned, unsigned>, std::vector<unsigned>>* sent,
                  uint64_t* hopsWanted) {
    const unsigned n = static_cast<unsigned>(ep_.size());
    size_t total = 0;
    for (unsigned s = 0; s < n; ++s) {
      std::vector<unsigned> order;
      for (unsigned d = 0; d < n; ++d)
        if (d != s)
          for (unsigned k = 0; k < perPair; ++k) order.push_back(d);
      std::shuffle(order.begin(), order.end(), rng());
      for (unsigned i = 0; i < order.size(); ++i) {
        const uint8_t vc = static_cast<uint8_t>(rng()() % 2);
        const unsigned len = 16 + 4 * static_cast<unsigned>(rng()() % 72);
        ep_[s].toSend.push_back({makePacket(s, order[i], i, len), vc});
        (*sent)[{s, order[i], vc}].push_back(i);
        *hopsWanted += fab_->topology().direct() ? fab_->topology().hops(s, order[i]) : 0;
        ++total;
      }
    }
    return total;
  }

  std::unique_ptr<Fabric> fab_;
  std::vector<Endpoint> ep_;
};

Topology topo(const std::string& name, const std::string& dims, unsigned nodes) {
  std::string err;
  auto t = Topology::parse(name, dims, nodes, &err);
  EXPECT_TRUE(t.has_value()) << err;
  return t.value_or(Topology::crossbar(nodes));
}

TEST(TopologyTest, RoutesAreMinimalDimensionOrderedAndCrossEachDatelineAtMostOnce) {
  for (const auto& [name, dims, nodes] : std::vector<std::tuple<std::string, std::string, unsigned>>{
           {"ring", "", 8}, {"ring", "", 5}, {"torus2d", "4x4", 16}, {"torus2d", "3x5", 15},
           {"torus3d", "4x4x4", 64}, {"torus3d", "3x3x3", 27}, {"torus3d", "4x2x2", 16}}) {
    const Topology t = topo(name, dims, nodes);
    for (unsigned a = 0; a < nodes; ++a) {
      for (unsigned b = 0; b < nodes; ++b) {
        unsigned at = a, steps = 0;
        int lastDim = -1;
        std::vector<unsigned> crossings(t.dimensions(), 0);
        while (unsigned p = t.route(at, b)) {
          const int dim = static_cast<int>((p - 1) / 2);
          ASSERT_GE(dim, lastDim) << t.name() << ": dimension order broken from " << a << " to " << b;
          lastDim = dim;
          crossings[dim] += t.crossesDateline(at, p);
          at = t.neighbour(at, p);
          ASSERT_LE(++steps, nodes) << t.name() << ": no route from " << a << " to " << b;
        }
        EXPECT_EQ(at, b);
        EXPECT_EQ(steps, t.hops(a, b)) << t.name() << " " << a << " -> " << b;
        for (unsigned c : crossings) EXPECT_LE(c, 1u);
      }
    }
  }
  // The farthest pair of a 4x4x4 torus: 2 hops in each dimension.
  EXPECT_EQ(topo("torus3d", "4x4x4", 64).hops(0, 2 + 2 * 4 + 2 * 16), 6u);
}

TEST(TopologyTest, SizesThatDoNotFitTheNodesAreRefused) {
  std::string err;
  EXPECT_FALSE(Topology::parse("torus2d", "4x3", 16, &err));
  EXPECT_NE(err.find("4x3"), std::string::npos) << err;
  EXPECT_FALSE(Topology::parse("torus3d", "4x4", 16, &err));
  EXPECT_FALSE(Topology::parse("torus2d", "0x16", 0, &err));
  EXPECT_FALSE(Topology::parse("torus2d", "4x", 4, &err));
  EXPECT_FALSE(Topology::parse("torus2d", "-4x-4", 16, &err));
  EXPECT_FALSE(Topology::parse("ring", "5", 4, &err));
  EXPECT_FALSE(Topology::parse("mesh", "", 4, &err));
  EXPECT_NE(err.find("crossbar, ring, torus2d, torus3d"), std::string::npos) << err;
  // Without --dims: the squarest torus.
  EXPECT_EQ(topo("torus2d", "", 16).dims, (std::vector<unsigned>{4, 4}));
  EXPECT_EQ(topo("torus3d", "", 64).dims, (std::vector<unsigned>{4, 4, 4}));
  EXPECT_EQ(topo("torus3d", "", 8).dims, (std::vector<unsigned>{2, 2, 2}));
  EXPECT_EQ(topo("torus2d", "", 8).dims, (std::vector<unsigned>{4, 2}));
}

TEST_F(FabricTest, AllToAllDrainsOnEveryTopology) {
  for (const auto& [name, dims, nodes] : std::vector<std::tuple<std::string, std::string, unsigned>>{
           {"crossbar", "", 8}, {"ring", "", 8}, {"torus2d", "4x4", 16}, {"torus2d", "3x3", 9},
           {"torus3d", "2x2x2", 8}, {"torus3d", "4x4x4", 64}}) {
    const Topology t = topo(name, dims, nodes);
    build(t);
    std::map<std::tuple<unsigned, unsigned, unsigned>, std::vector<unsigned>> sent;
    uint64_t hops = 0;
    const size_t total = allToAll(nodes == 64 ? 2 : 8, &sent, &hops);
    ASSERT_TRUE(drain(total)) << t.name() << ": stuck with " << delivered() << " of " << total << " delivered";
    // Each packet once, at its destination, in order per source, destination and class.
    std::map<std::tuple<unsigned, unsigned, unsigned>, std::vector<unsigned>> got;
    for (unsigned d = 0; d < nodes; ++d)
      for (auto& g : ep_[d].got) got[{srcOf(g.bytes), d, g.vc}].push_back(seqOf(g.bytes));
    EXPECT_EQ(got, sent) << t.name();
    EXPECT_EQ(fab_->stats().linkHops, hops) << t.name() << ": links crossed, against the minimal routes";
    if (t.direct() && nodes > 2) {
      EXPECT_GT(fab_->stats().datelineHops, 0u) << t.name();
    }
    std::cout << t.name() << ": " << total << " packets in " << fab_->now() << " cycles, busiest link "
              << fab_->busiestLink() << "\n";
  }
}

// The same all-to-all-like load on a ring, every node sending to the nodes 3 and 4
// ahead, with one slot per buffer: without the dateline's second virtual channel the
// ring's buffers wait on each other in a cycle and nothing moves; with it, it drains.
TEST_F(FabricTest, RingWithoutDatelineVirtualChannelsDeadlocks) {
  for (bool dateline : {false, true}) {
    build(topo("ring", "", 8), 1, dateline);
    size_t total = 0;
    for (unsigned s = 0; s < 8; ++s)
      for (unsigned k = 0; k < 40; ++k, ++total)
        ep_[s].toSend.push_back({makePacket(s, (s + 3 + k % 2) % 8, k, 256), 0});
    EXPECT_EQ(drain(total, 5000), dateline) << (dateline ? "with" : "without") << " dateline VCs, " << delivered()
                                            << " of " << total << " delivered";
  }
}

// An idle torus: one packet of 200 bytes from node 0 to nodes 1, 2 and 3 hops away.
// Each hop adds the link latency and the packet's serialization at 8 bytes a cycle.
TEST_F(FabricTest, EachHopCostsTheLinkLatencyAndTheSerialization) {
  constexpr unsigned kLat = 7, kLen = 200;
  std::vector<uint64_t> at;
  for (unsigned dst : {1u, 2u, 2u + 8u}) {  // torus 8x8: (1,0), (2,0), (2,1)
    build(topo("torus2d", "8x8", 64), 4, true, kLat);
    ep_[0].toSend.push_back({makePacket(0, dst, 0, kLen), 0});
    ASSERT_TRUE(drain(1));
    ASSERT_EQ(ep_[dst].got.size(), 1u);
    at.push_back(ep_[dst].got[0].at);
  }
  EXPECT_EQ(at[1] - at[0], kLat + kLen / kBpb);
  EXPECT_EQ(at[2] - at[1], kLat + kLen / kBpb);
}

// After the NIs' reset each link starts again: the fabric owes an NI every input slot
// except those its packets still hold, and counts the NI's receive grants afresh.
TEST_F(FabricTest, RetrainedLinksOweEachNiTheSlotsItsPacketsDoNotHold) {
  build(Topology::crossbar(2));
  ep_[1].grant[0] = 0;  // node 1 takes answers (VC 1) only, before the reset
  ep_[0].toSend.push_back({makePacket(0, 1, 0, 64), 0});
  for (int c = 0; c < 100; ++c) step();
  ASSERT_TRUE(ep_[0].toSend.empty());  // sent: it holds one of node 0's input slots
  EXPECT_EQ(ep_[0].credits[0], 1u);
  EXPECT_EQ(ep_[0].credits[1], 2u);
  // Both NIs reset: they hold no credits and have granted none; node 1 grants nothing.
  for (auto& e : ep_) e = Endpoint{};
  ep_[1].grant[0] = ep_[1].grant[1] = 0;
  fab_->retrainLinks();
  ep_[0].toSend.push_back({makePacket(0, 1, 1, 64), 1});
  for (int c = 0; c < 100; ++c) step();
  EXPECT_TRUE(ep_[0].toSend.empty());
  EXPECT_EQ(ep_[0].credits[0], 1u);  // the slot its first packet holds is not owed again
  EXPECT_EQ(ep_[0].credits[1], 1u);
  EXPECT_EQ(ep_[1].credits[0], 2u);
  EXPECT_TRUE(ep_[1].got.empty());  // node 1's grants from before the reset are gone
  ep_[1].grant[0] = 1;
  for (int c = 0; c < 100; ++c) step();
  ASSERT_EQ(ep_[1].got.size(), 1u);  // delivered under the grant made after the reset
  EXPECT_EQ(ep_[1].got[0].vc, 0u);
  EXPECT_EQ(ep_[0].credits[0], 2u);  // and its slot owed back
}

TEST_F(FabricTest, MulticastReachesEveryMemberOnceOnATorus) {
  build(topo("torus2d", "4x4", 16));
  const std::vector<unsigned> members = {0, 3, 5, 10, 15};
  fab_->setGroup(0xC001, members);
  for (unsigned k = 0; k < 10; ++k) {
    Bytes p = makePacket(5, 0, k, 64);
    p[2] = 0xC0;
    p[3] = 0x01;
    ep_[5].toSend.push_back({p, 0});
  }
  ASSERT_TRUE(drain(10 * (members.size() - 1)));
  for (unsigned d = 0; d < 16; ++d) {
    const bool member = d != 5 && std::count(members.begin(), members.end(), d);
    EXPECT_EQ(ep_[d].got.size(), member ? 10u : 0u) << "node " << d;
  }
  EXPECT_EQ(fab_->stats().mcastCopies, 40u);
}

}  // namespace

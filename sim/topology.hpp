// SPDX-License-Identifier: Apache-2.0
// Fabric topologies: a crossbar (one switch, every node on it), or a ring, 2D or 3D
// torus (a switch per node, linked to its two neighbours in each dimension), with
// dimension-order routing on the shorter way round each ring. Node i sits at the
// coordinates of i in mixed radix, dimension 0 fastest.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace ni {

struct Topology {
  enum class Kind { Crossbar, Ring, Torus2D, Torus3D };
  Kind kind = Kind::Crossbar;
  std::vector<unsigned> dims;  // ring: {N}; torus: {X, Y} or {X, Y, Z}; crossbar: {N}

  // From the runner's --topology and --dims ("4x4", "4x4x4"; empty: a ring of all
  // nodes, or the squarest torus of `nodes`). nullopt with *err set when they do not
  // describe `nodes` nodes.
  static std::optional<Topology> parse(const std::string& name, const std::string& dims, unsigned nodes,
                                       std::string* err);
  static Topology crossbar(unsigned nodes) { return Topology{Kind::Crossbar, {nodes}}; }
  std::string name() const;  // "torus 4x4"

  bool direct() const { return kind != Kind::Crossbar; }  // a switch per node
  unsigned nodes() const;
  unsigned dimensions() const { return direct() ? static_cast<unsigned>(dims.size()) : 0; }
  // Switch ports: 0 the node's own NI; 1 + 2d the + neighbour in dimension d, 2 + 2d the -.
  unsigned ports() const { return 1 + 2 * dimensions(); }
  static unsigned plus(unsigned d) { return 1 + 2 * d; }
  static unsigned minus(unsigned d) { return 2 + 2 * d; }
  static unsigned opposite(unsigned port) { return port == 0 ? 0 : ((port & 1) ? port + 1 : port - 1); }

  std::vector<unsigned> coords(unsigned node) const;
  unsigned nodeAt(const std::vector<unsigned>& c) const;
  // The switch a link port of `node`'s switch leads to.
  unsigned neighbour(unsigned node, unsigned port) const;
  // The output port of `at`'s switch for a packet to `to` (0: it has arrived): the
  // lowest dimension in which they differ, the shorter way round (+ on a tie).
  unsigned route(unsigned at, unsigned to) const;
  // The link leaves from coordinate k-1 to 0 (+) or from 0 to k-1 (-): the ring's
  // dateline. A packet crossing it moves to the upper virtual channel of its class
  // for the rest of that dimension, so no ring holds a cycle of waiting buffers.
  bool crossesDateline(unsigned at, unsigned port) const;
  unsigned hops(unsigned from, unsigned to) const;
};

}  // namespace ni

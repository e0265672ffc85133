// SPDX-License-Identifier: Apache-2.0
#include "topology.hpp"

#include <cmath>
#include <cstdlib>

namespace ni {

namespace {

// "4x4x2" -> {4, 4, 2}; empty on anything else.
std::vector<unsigned> parseDims(const std::string& s) {
  std::vector<unsigned> out;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = s.find('x', i);
    if (j == std::string::npos) j = s.size();
    const std::string part = s.substr(i, j - i);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos || part.size() > 6) return {};
    out.push_back(static_cast<unsigned>(std::atoi(part.c_str())));
    i = j + 1;
    if (j + 1 == s.size()) return {};  // trailing 'x'
  }
  return out;
}

// The most nearly equal factors a*b (or a*b*c) of n, largest first.
std::vector<unsigned> squarest(unsigned n, unsigned k) {
  std::vector<unsigned> best;
  if (k == 2) {
    for (unsigned a = static_cast<unsigned>(std::sqrt(double(n))); a >= 1; --a)
      if (n % a == 0) return {n / a, a};
  } else {
    unsigned spread = ~0u;
    for (unsigned a = 1; a * a * a <= n; ++a) {
      if (n % a) continue;
      for (unsigned b = a; a * b * b <= n; ++b) {
        if ((n / a) % b) continue;
        const unsigned c = n / a / b;
        if (c - a < spread) {
          spread = c - a;
          best = {c, b, a};
        }
      }
    }
  }
  return best;
}

}  // namespace

std::optional<Topology> Topology::parse(const std::string& name, const std::string& dimStr, unsigned nodes,
                                        std::string* err) {
  Topology t;
  unsigned want = 1;
  if (name == "crossbar") {
    t.kind = Kind::Crossbar;
  } else if (name == "ring") {
    t.kind = Kind::Ring;
  } else if (name == "torus2d") {
    t.kind = Kind::Torus2D;
    want = 2;
  } else if (name == "torus3d") {
    t.kind = Kind::Torus3D;
    want = 3;
  } else {
    *err = "unknown topology '" + name + "' (crossbar, ring, torus2d, torus3d)";
    return std::nullopt;
  }
  if (t.kind == Kind::Crossbar || t.kind == Kind::Ring) {
    if (!dimStr.empty() && dimStr != std::to_string(nodes)) {
      *err = "--dims " + dimStr + " does not fit a " + name + " of " + std::to_string(nodes) + " nodes";
      return std::nullopt;
    }
    t.dims = {nodes};
    return t;
  }
  t.dims = dimStr.empty() ? squarest(nodes, want) : parseDims(dimStr);
  unsigned product = 1;
  bool positive = true;
  for (unsigned d : t.dims) {
    product *= d;
    positive = positive && d >= 1;
  }
  if (t.dims.size() != want || !positive || product != nodes) {
    *err = "--dims '" + dimStr + "' is not a " + std::to_string(want) + "-dimensional torus of " +
           std::to_string(nodes) + " nodes (e.g. " + (want == 2 ? "4x4" : "4x4x4") + ")";
    return std::nullopt;
  }
  return t;
}

std::string Topology::name() const {
  std::string s = kind == Kind::Crossbar ? "crossbar" : kind == Kind::Ring ? "ring" : "torus";
  s += ' ';
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
  return s;
}

unsigned Topology::nodes() const {
  unsigned n = 1;
  for (unsigned d : dims) n *= d;
  return n;
}

std::vector<unsigned> Topology::coords(unsigned node) const {
  std::vector<unsigned> c(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    c[d] = node % dims[d];
    node /= dims[d];
  }
  return c;
}

unsigned Topology::nodeAt(const std::vector<unsigned>& c) const {
  unsigned n = 0;
  for (size_t d = dims.size(); d-- > 0;) n = n * dims[d] + c[d];
  return n;
}

unsigned Topology::neighbour(unsigned node, unsigned port) const {
  if (port == 0) return node;
  const unsigned d = (port - 1) / 2;
  std::vector<unsigned> c = coords(node);
  const unsigned k = dims[d];
  c[d] = (port & 1) ? (c[d] + 1) % k : (c[d] + k - 1) % k;
  return nodeAt(c);
}

unsigned Topology::route(unsigned at, unsigned to) const {
  if (!direct() || at == to) return 0;
  const std::vector<unsigned> a = coords(at), b = coords(to);
  for (unsigned d = 0; d < dims.size(); ++d) {
    if (a[d] == b[d]) continue;
    const unsigned k = dims[d];
    const unsigned ahead = (b[d] + k - a[d]) % k;  // steps the + way
    return 2 * ahead <= k ? plus(d) : minus(d);
  }
  return 0;
}

bool Topology::crossesDateline(unsigned at, unsigned port) const {
  if (port == 0) return false;
  const unsigned d = (port - 1) / 2;
  const unsigned c = coords(at)[d];
  return (port & 1) ? c == dims[d] - 1 : c == 0;
}

unsigned Topology::hops(unsigned from, unsigned to) const {
  if (!direct()) return from == to ? 0 : 1;
  unsigned h = 0;
  const std::vector<unsigned> a = coords(from), b = coords(to);
  for (unsigned d = 0; d < dims.size(); ++d) {
    const unsigned k = dims[d];
    const unsigned ahead = (b[d] + k - a[d]) % k;
    h += std::min(ahead, k - ahead);
  }
  return h;
}

}  // namespace ni

// SPDX-License-Identifier: Apache-2.0
// Big-endian field access on byte vectors (network byte order, as on the wire).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ni {

using Bytes = std::vector<uint8_t>;

inline uint64_t getBe(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = (v << 8) | p[i];
  return v;
}

inline void putBe(uint8_t* p, int n, uint64_t v) {
  for (int i = n - 1; i >= 0; --i) {
    p[i] = static_cast<uint8_t>(v);
    v >>= 8;
  }
}

// Little-endian (CRC trailers, register data in TLP payloads).
inline uint64_t getLe(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

inline void putLe(uint8_t* p, int n, uint64_t v) {
  for (int i = 0; i < n; ++i) {
    p[i] = static_cast<uint8_t>(v);
    v >>= 8;
  }
}

inline Bytes le32(uint32_t v) {
  return {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v >> 16),
          static_cast<uint8_t>(v >> 24)};
}

inline Bytes le64(uint64_t v) {
  Bytes b(8);
  for (auto& x : b) {
    x = static_cast<uint8_t>(v);
    v >>= 8;
  }
  return b;
}

// First offset where two byte strings differ (the shorter length if one is a prefix), for messages.
inline size_t firstDifference(const Bytes& a, const Bytes& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  return i;
}

// `head` followed by n bytes at `tail`, in one allocation (GCC 12 warns falsely on a
// vector grown by insert after a fixed-size encode).
inline Bytes joined(const Bytes& head, const uint8_t* tail, size_t n) {
  Bytes b(head.size() + n);
  std::copy(head.begin(), head.end(), b.begin());
  if (n) std::copy(tail, tail + n, b.begin() + static_cast<std::ptrdiff_t>(head.size()));
  return b;
}

}  // namespace ni

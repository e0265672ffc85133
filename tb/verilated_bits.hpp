// SPDX-License-Identifier: Apache-2.0
// Bit fields of wide Verilated ports (packed arrays and structs).
#pragma once
#include <verilated.h>

#include <cstdint>

namespace ni::tb {

template <std::size_t W>
void setField(VlWide<W>& p, unsigned lsb, unsigned width, uint64_t v) {
  for (unsigned b = 0; b < width; ++b) {
    const unsigned pos = lsb + b;
    const uint32_t bit = 1u << (pos % 32);
    if (v >> b & 1) p[pos / 32] |= bit;
    else p[pos / 32] &= ~bit;
  }
}

template <std::size_t W>
uint64_t getField(const VlWide<W>& p, unsigned lsb, unsigned width) {
  uint64_t v = 0;
  for (unsigned b = 0; b < width; ++b) {
    const unsigned pos = lsb + b;
    v |= uint64_t{p[pos / 32] >> (pos % 32) & 1} << b;
  }
  return v;
}

}  // namespace ni::tb

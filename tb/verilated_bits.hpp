// SPDX-License-Identifier: Apache-2.0
// Bit fields of wide Verilated ports (packed arrays and structs).
#pragma once
#include <verilated.h>

#include <cstdint>
#include <type_traits>

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

// Ports of up to 64 bits (CData, SData, IData, QData).
template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
void setField(T& p, unsigned lsb, unsigned width, uint64_t v) {
  const uint64_t mask = (width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1) << lsb;
  p = static_cast<T>((uint64_t{p} & ~mask) | (v << lsb & mask));
}
template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
uint64_t getField(T p, unsigned lsb, unsigned width) {
  return (uint64_t{p} >> lsb) & (width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1);
}

}  // namespace ni::tb

// SPDX-License-Identifier: Apache-2.0
// Moving bytes in and out of Verilated ports of any width (QData or VlWide).
#pragma once
#include <verilated.h>

#include <cstdint>
#include <type_traits>

namespace ni {

inline void toPort(QData& p, const uint8_t* b, unsigned n) {
  p = 0;
  for (unsigned i = 0; i < n && i < 8; ++i) p |= QData{b[i]} << (8 * i);
}
template <std::size_t W>
void toPort(VlWide<W>& p, const uint8_t* b, unsigned n) {
  for (std::size_t w = 0; w < W; ++w) {
    uint32_t v = 0;
    for (unsigned k = 0; k < 4; ++k)
      if (4 * w + k < n) v |= uint32_t{b[4 * w + k]} << (8 * k);
    p[w] = v;
  }
}
inline void fromPort(const QData& p, uint8_t* b, unsigned n) {
  for (unsigned i = 0; i < n && i < 8; ++i) b[i] = static_cast<uint8_t>(p >> (8 * i));
}
template <std::size_t W>
void fromPort(const VlWide<W>& p, uint8_t* b, unsigned n) {
  for (unsigned i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(p[i / 4] >> (8 * (i % 4)));
}

// Several ports' worth in one Verilated port (a packed array such as nic_top's
// [HostPorts-1:0][DataW-1:0]): bytes from a byte offset, fields at a bit offset.
inline void toPortAt(QData& p, unsigned byteOff, const uint8_t* b, unsigned n) {
  if (byteOff == 0) toPort(p, b, n);
}
template <std::size_t W>
void toPortAt(VlWide<W>& p, unsigned byteOff, const uint8_t* b, unsigned n) {
  for (unsigned i = 0; i < n; ++i) {
    const unsigned k = byteOff + i, sh = 8 * (k % 4);
    p[k / 4] = (p[k / 4] & ~(0xFFu << sh)) | uint32_t{b[i]} << sh;
  }
}
inline void fromPortAt(const QData& p, unsigned byteOff, uint8_t* b, unsigned n) {
  if (byteOff == 0) fromPort(p, b, n);
}
template <std::size_t W>
void fromPortAt(const VlWide<W>& p, unsigned byteOff, uint8_t* b, unsigned n) {
  for (unsigned i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(p[(byteOff + i) / 4] >> (8 * ((byteOff + i) % 4)));
}
// Bit fields of ports of any width (packed arrays and structs).
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


}  // namespace ni

// SPDX-License-Identifier: Apache-2.0
// Moving bytes in and out of Verilated ports of any width (QData or VlWide).
#pragma once
#include <verilated.h>

#include <cstdint>

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

}  // namespace ni

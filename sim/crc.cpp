// SPDX-License-Identifier: Apache-2.0
#include "crc.hpp"

namespace ni {

uint32_t crc32Update(uint32_t c, uint8_t byte) {
  c ^= byte;
  for (int k = 0; k < 8; ++k) c = (c & 1u) ? (c >> 1) ^ 0xEDB88320u : (c >> 1);
  return c;
}

uint32_t crc32(const uint8_t* data, size_t n, uint32_t state) {
  for (size_t i = 0; i < n; ++i) state = crc32Update(state, data[i]);
  return ~state;
}

uint16_t crc16Update(uint16_t c, uint8_t byte) {
  c ^= byte;
  for (int k = 0; k < 8; ++k) c = (c & 1u) ? static_cast<uint16_t>((c >> 1) ^ 0xD008u) : static_cast<uint16_t>(c >> 1);
  return c;
}

uint16_t crc16Vcrc(const uint8_t* data, size_t n) {
  uint16_t c = 0xFFFF;
  for (size_t i = 0; i < n; ++i) c = crc16Update(c, data[i]);
  return static_cast<uint16_t>(~c);
}

}  // namespace ni

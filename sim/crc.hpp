// SPDX-License-Identifier: Apache-2.0
// CRCs of the fabric packet: ICRC (CRC-32) and VCRC (CRC-16), bytewise reference.
#pragma once
#include <cstddef>
#include <cstdint>

namespace ni {

// CRC-32/ISO-HDLC (IEEE 802.3): poly 0x04C11DB7 reflected, init and xorout all ones.
uint32_t crc32(const uint8_t* data, size_t n, uint32_t state = 0xFFFFFFFFu);
// Raw state update without the final inversion, for incremental use.
uint32_t crc32Update(uint32_t state, uint8_t byte);

// VCRC: CRC-16 poly 0x100B reflected, init and xorout all ones.
uint16_t crc16Vcrc(const uint8_t* data, size_t n);
uint16_t crc16Update(uint16_t state, uint8_t byte);

}  // namespace ni

// SPDX-License-Identifier: Apache-2.0
// Where things sit in each node's address space and on its PCIe-style bus.
#pragma once
#include <cstdint>

namespace ni {

constexpr uint64_t kCsrBase = 0x00F0'0000'0000ull;      // NI register BAR (4 KiB), nic_top CsrBase
constexpr uint64_t kApertureBase = 0x0080'0000'0000ull; // NI window aperture: stores here go to the NI
constexpr uint64_t kApertureEnd = 0x00F0'0000'0000ull;
constexpr uint16_t kCpuReqId = 0x0000;                   // CPU (root port) requester ID
constexpr uint16_t kMemCplId = 0x0000;                   // completer ID of the memory system

// The pages from a window's output address back to the request's address (52-bit page
// numbers, modulo 2^52): what ni_art gives with its answer (back_page_o) and the header
// record carries to ni_retx.
constexpr uint64_t pagesBack(uint64_t addr, uint64_t outAddr) {
  return ((addr >> 12) - (outAddr >> 12)) & ((uint64_t{1} << 52) - 1);
}
constexpr uint16_t kNiReqId = 0x0100;                    // the NI, nic_top NiReqId
constexpr unsigned kMaxPayload = 256;                    // nic_top MaxPayload, also max read request
constexpr unsigned kNumArt = 16, kNumMemId = 16;

// Fabric address of node i (IB LIDs start at 1).
constexpr uint16_t lidOf(unsigned node) { return static_cast<uint16_t>(node + 1); }

}  // namespace ni

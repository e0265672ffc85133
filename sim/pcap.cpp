// SPDX-License-Identifier: Apache-2.0
#include "pcap.hpp"

namespace ni {

bool ErfWriter::open(const std::string& path) {
  close();
  f_ = std::fopen(path.c_str(), "wb");
  return f_ != nullptr;
}

void ErfWriter::close() {
  if (f_) std::fclose(f_);
  f_ = nullptr;
}

void ErfWriter::write(uint64_t timeNs, const Bytes& pkt, unsigned iface) {
  if (!f_) return;
  // ERF header: 64-bit little-endian timestamp (32.32 fixed-point seconds), type,
  // flags (interface in bits 1:0, varying-length record), rlen, lctr, wlen (big endian).
  const uint64_t sec = timeNs / 1000000000ull;
  const uint64_t frac = ((timeNs % 1000000000ull) << 32) / 1000000000ull;
  const uint64_t ts = (sec << 32) | frac;
  uint8_t h[16];
  for (int i = 0; i < 8; ++i) h[i] = static_cast<uint8_t>(ts >> (8 * i));
  h[8] = 21;  // ERF_TYPE_INFINIBAND
  h[9] = static_cast<uint8_t>(0x04 | (iface & 0x3));
  const size_t rlen = 16 + pkt.size();
  putBe(&h[10], 2, rlen);
  putBe(&h[12], 2, 0);
  putBe(&h[14], 2, pkt.size());
  std::fwrite(h, 1, sizeof h, f_);
  std::fwrite(pkt.data(), 1, pkt.size(), f_);
  ++records_;
}

}  // namespace ni

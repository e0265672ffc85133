// SPDX-License-Identifier: Apache-2.0
// Capture of fabric packets as ERF records of type InfiniBand (21), which
// Wireshark/tshark decode (LRH, BTH). See docs/simulator.md.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>

#include "bytes.hpp"

namespace ni {

class ErfWriter {
 public:
  ErfWriter() = default;
  ~ErfWriter() { close(); }
  bool open(const std::string& path);
  void close();
  bool isOpen() const { return f_ != nullptr; }
  // time in nanoseconds since the start of the run
  void write(uint64_t timeNs, const Bytes& pkt, unsigned iface);
  uint64_t records() const { return records_; }

 private:
  std::FILE* f_ = nullptr;
  uint64_t records_ = 0;
};

}  // namespace ni

// SPDX-License-Identifier: Apache-2.0
// Capture of fabric packets as pcapng: one interface per node and capture point
// ("node3 tx", "node3 rx"), each of link type ERF, every packet an ERF record of type
// InfiniBand (21), which Wireshark/tshark decode (LRH, BTH). The interface says at
// which node and port a packet was captured, for any node count (an ERF record's own
// interface field has 2 bits). docs/architecture.md, "Captures".
#pragma once
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>

#include "bytes.hpp"

namespace ni {

class CaptureWriter {
 public:
  enum class Point : uint8_t { Tx, Rx };  // as the NI sent it; as it reaches the NI
  CaptureWriter() = default;
  ~CaptureWriter() { close(); }
  CaptureWriter(const CaptureWriter&) = delete;
  CaptureWriter& operator=(const CaptureWriter&) = delete;
  bool open(const std::string& path);
  void close();
  bool isOpen() const { return f_ != nullptr; }
  // time in nanoseconds since the start of the run
  void write(uint64_t timeNs, const Bytes& pkt, unsigned node, Point at);
  uint64_t records() const { return records_; }

 private:
  uint32_t interfaceOf(unsigned node, Point at);
  void block(uint32_t type, const Bytes& body);
  std::FILE* f_ = nullptr;
  uint64_t records_ = 0;
  std::map<std::pair<unsigned, Point>, uint32_t> ifaces_;
};

}  // namespace ni

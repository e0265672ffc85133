// SPDX-License-Identifier: Apache-2.0
#include "pcap.hpp"

namespace ni {

namespace {
void putLe(Bytes& b, uint64_t v, unsigned n) {
  for (unsigned i = 0; i < n; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void pad4(Bytes& b) {
  while (b.size() % 4) b.push_back(0);
}
// A pcapng option: code, length, value padded to 4 bytes.
void option(Bytes& b, uint16_t code, const Bytes& value) {
  putLe(b, code, 2);
  putLe(b, value.size(), 2);
  b.insert(b.end(), value.begin(), value.end());
  pad4(b);
}
constexpr uint32_t kShb = 0x0A0D0D0A, kIdb = 1, kEpb = 6;
constexpr uint16_t kLinkTypeErf = 197;
}  // namespace

bool CaptureWriter::open(const std::string& path) {
  close();
  f_ = std::fopen(path.c_str(), "wb");
  if (!f_) return false;
  Bytes shb;
  putLe(shb, 0x1A2B3C4D, 4);            // byte-order magic
  putLe(shb, 1, 2);                     // version 1.0
  putLe(shb, 0, 2);
  putLe(shb, ~uint64_t{0}, 8);          // section length not given
  option(shb, 4, Bytes{'n', 'i', '_', 's', 'i', 'm'});  // shb_userappl
  putLe(shb, 0, 4);                     // opt_endofopt
  block(kShb, shb);
  return true;
}

void CaptureWriter::close() {
  if (f_) std::fclose(f_);
  f_ = nullptr;
  ifaces_.clear();
}

void CaptureWriter::block(uint32_t type, const Bytes& body) {
  Bytes b;
  const uint32_t total = static_cast<uint32_t>(12 + body.size());
  putLe(b, type, 4);
  putLe(b, total, 4);
  b.insert(b.end(), body.begin(), body.end());
  putLe(b, total, 4);
  std::fwrite(b.data(), 1, b.size(), f_);
}

// The interface of a node's capture point: described (IDB) before its first packet.
uint32_t CaptureWriter::interfaceOf(unsigned node, Point at) {
  const auto key = std::make_pair(node, at);
  auto it = ifaces_.find(key);
  if (it != ifaces_.end()) return it->second;
  const uint32_t id = static_cast<uint32_t>(ifaces_.size());
  ifaces_[key] = id;
  Bytes idb;
  putLe(idb, kLinkTypeErf, 2);
  putLe(idb, 0, 2);  // reserved
  putLe(idb, 0, 4);  // snaplen: no limit
  const std::string name = "node" + std::to_string(node) + (at == Point::Tx ? " tx" : " rx");
  option(idb, 2, Bytes(name.begin(), name.end()));  // if_name
  const std::string desc = at == Point::Tx ? "packets as node " + std::to_string(node) + "'s NI sent them"
                                           : "packets as they reached node " + std::to_string(node) + "'s NI";
  option(idb, 3, Bytes(desc.begin(), desc.end()));  // if_description
  option(idb, 9, Bytes{9});                          // if_tsresol: nanoseconds
  putLe(idb, 0, 4);
  block(kIdb, idb);
  return id;
}

void CaptureWriter::write(uint64_t timeNs, const Bytes& pkt, unsigned node, Point at) {
  if (!f_) return;
  const uint32_t iface = interfaceOf(node, at);
  // ERF header: 64-bit little-endian timestamp (32.32 fixed-point seconds), type,
  // flags (interface in bits 1:0, varying-length record), rlen, lctr, wlen (big endian).
  const uint64_t sec = timeNs / 1000000000ull;
  const uint64_t frac = ((timeNs % 1000000000ull) << 32) / 1000000000ull;
  const uint64_t ts = (sec << 32) | frac;
  Bytes rec(16, 0);
  for (int i = 0; i < 8; ++i) rec[i] = static_cast<uint8_t>(ts >> (8 * i));
  rec[8] = 21;  // ERF_TYPE_INFINIBAND
  rec[9] = static_cast<uint8_t>(0x04 | (at == Point::Rx ? 1 : 0));
  putBe(&rec[10], 2, 16 + pkt.size());
  putBe(&rec[14], 2, pkt.size());
  rec.insert(rec.end(), pkt.begin(), pkt.end());
  Bytes epb;
  putLe(epb, iface, 4);
  putLe(epb, timeNs >> 32, 4);
  putLe(epb, timeNs & 0xFFFFFFFFu, 4);
  putLe(epb, rec.size(), 4);
  putLe(epb, rec.size(), 4);
  epb.insert(epb.end(), rec.begin(), rec.end());
  pad4(epb);
  block(kEpb, epb);
  ++records_;
}

}  // namespace ni

// SPDX-License-Identifier: Apache-2.0
// Benchmark of the DMA engine in a two-node system (node 0 sends to node 1), every width:
//  - latency from the doorbell (the last beat of its register write taken by the NI)
//    to the first fabric beat of an 8-byte put, with the data inline and from memory,
//    and the memory round trip the NI sees (MRd out to its completion's first beat in);
//  - message rate of 8-byte inline puts from one FIFO and from all eight FIFOs, against
//    the two bounds: the fabric link (beats of one packet) and the host port (beats
//    of the completions that bring the two 64-byte slots of each message);
//  - throughput of a 256 KiB put from memory: payload bytes per cycle on the fabric
//    against the link's payload bandwidth (packets of MaxPayload back to back);
//  - throughput of a 256 KiB memory-FIFO send into a reception FIFO at node 1: message
//    bytes per cycle on the fabric against the link's bandwidth for send packets
//    (MaxPayload - 64 data bytes behind a 16-byte entry header);
//  - throughput of a 256 KiB local copy from memory to memory at node 0: bytes per
//    cycle of its MWr TLPs on the host port, against what the port carries when each
//    MaxPayload bytes cost one MWr and one MRd on it.
// Writes JSON and a Markdown table; fails when a put falls below 95 % of the link,
// inline data does not save a memory round trip, or the message rate falls more than
// 10 % below the host-port bound (one FIFO) or below one FIFO's (all FIFOs).   usage: bench_dma [out.json] [out.md]
// (NI_LINK_LATENCY=n in the environment sets the fabric link latency, default 10;
// NI_FABRIC_CREDITS=n the switch's packet slots per input and VC, default 16.)
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "dma.hpp"
#include "driver.hpp"
#include "ni_regs.hpp"
#include "system.hpp"

using namespace ni;

namespace {

constexpr uint64_t kRegion = 0x4000'0000, kRing = 0x1000'0000, kSrc = 0x2000'0000, kRcv = 0x3000'0000;
constexpr uint16_t kSlots = 1024;
constexpr unsigned kMemLatency = 20;  // the node model's memory (sim/node.hpp)

struct Figures {
  unsigned width = 0;
  uint64_t latInline = 0, latMemory = 0, roundTrip = 0;
  double rateOne = 0, rateAll = 0, rateLink = 0, rateHost = 0;
  double putBpc = 0, linkBpc = 0, sendBpc = 0, linkSendBpc = 0, copyBpc = 0, hostCopyBpc = 0;
  bool ok = true;
};

class Bench {
 public:
  explicit Bench(unsigned width) {
    SystemConfig c;
    c.nodes = 2;
    c.dataBits = width;
    // NI_LINK_LATENCY: fabric link latency (default 10), to see what the ACK round trip costs.
    if (const char* l = std::getenv("NI_LINK_LATENCY")) c.linkLatency = static_cast<unsigned>(std::atoi(l));
    if (const char* l = std::getenv("NI_FABRIC_CREDITS")) c.fabricCredits = static_cast<unsigned>(std::atoi(l));
    sys_ = std::make_unique<System>(c);
    sys_->reset();
    sys_->setMemId(1, 1, MemRegion{true, kRegion, 1 << 24, true, true});
    sys_->setMemId(0, 1, MemRegion{true, kRegion, 1 << 24, true, true});  // local copies
    for (unsigned f = 0; f < 8; ++f) {
      driver::setInjFifo(sys_->csrWriter(0), f, kRing + f * 0x10'0000, kSlots);
      rings_.emplace_back(kRing + f * 0x10'0000, kSlots);
    }
    ok_ = sys_->drain();
  }
  bool ok() const { return ok_; }

  void post(unsigned f, uint32_t len, bool inl, uint64_t dst) {
    DmaDescriptor d;
    d.op = static_cast<uint8_t>(DmaOp::Put);
    d.flags = inl ? kDescInline : 0;
    d.dest = lidOf(1);
    d.qid = 1;
    d.len = len;
    d.dst = dst;
    d.src = kSrc;
    Bytes data(len, static_cast<uint8_t>(f + 1));
    if (!inl) sys_->node(0).memory().write(kSrc, data);
    ok_ &= rings_[f].post(d, data, head(f), writeMem());
  }
  // Node 0's memory, where the producer writes descriptors and data.
  InjRing::MemWrite writeMem() {
    return [this](uint64_t a, const Bytes& b) { sys_->node(0).memory().write(a, b); };
  }
  uint16_t head(unsigned f) { return static_cast<uint16_t>(sys_->readCsr(0, regs::INJ_HEAD(f))); }
  void ring(unsigned f) { driver::ringDoorbell(sys_->csrWriter(0), f, rings_[f].tail()); }

  // Cycles from the doorbell's last beat entering the NI to its first fabric beat; also
  // the round trip of the NI's first memory read.
  uint64_t latency(bool inl, uint64_t* roundTrip) {
    post(0, 8, inl, 0x100);
    ring(0);
    uint64_t tBell = 0, tFab = 0, tRd = 0, tCpl = 0;
    for (uint64_t c = 0; c < 20000 && !tFab; ++c) {
      sys_->tick();
      const NicIn& in = sys_->nicIn(0);
      const NicOut& out = sys_->nicOut(0);
      const uint64_t now = sys_->cycle();
      if (!tBell && in.host[0].inValid && out.host[0].inReady && in.host[0].in.last) tBell = now;
      if (tBell && !tRd && out.host[0].outValid && in.host[0].outReady && (out.host[0].out.data[0] | 0x20) == 0x20) tRd = now;  // an MRd (3 or 4 DW)
      if (tRd && !tCpl && in.host[0].inValid && out.host[0].inReady && in.host[0].in.data[0] == 0x4A) tCpl = now;
      if (tBell && out.fabOutValid && in.fabOutReady) tFab = now;
    }
    ok_ &= tBell && tFab && sys_->drain();
    if (roundTrip) *roundTrip = tCpl - tRd;
    return tFab - tBell;
  }

  // Fabric beats of node 0 from the first to the last of `packets` packets.
  uint64_t sendSpan(unsigned packets) {
    uint64_t first = 0, last = 0;
    unsigned seen = 0;
    for (uint64_t c = 0; c < 5'000'000 && seen < packets; ++c) {
      sys_->tick();
      const NicIn& in = sys_->nicIn(0);
      const NicOut& out = sys_->nicOut(0);
      if (out.fabOutValid && in.fabOutReady && out.fabOut.dest == 0) {
        if (!first) first = sys_->cycle();
        if (out.fabOut.last) ++seen, last = sys_->cycle();
      }
    }
    ok_ &= seen == packets && sys_->drain();
    return last - first + 1;
  }

  double messageRate(unsigned fifos, unsigned perFifo) {
    for (unsigned f = 0; f < fifos; ++f)
      for (unsigned k = 0; k < perFifo; ++k) post(f, 8, true, 0x1000 + 64 * k);
    for (unsigned f = 0; f < fifos; ++f) ring(f);
    const unsigned n = fifos * perFifo;
    return double(n) / double(sendSpan(n));
  }

  double putThroughput(uint32_t bytes, unsigned maxPayload) {
    post(0, bytes, false, 0x10'0000);
    ring(0);
    const unsigned packets = bytes / maxPayload;
    return double(bytes) / double(sendSpan(packets));
  }

  // One message sent into reception FIFO 0 of node 1, which holds it whole.
  double sendThroughput(uint32_t bytes, unsigned maxPayload) {
    driver::setRcvFifo(sys_->csrWriter(1), 0, kRcv, 4096);
    DmaDescriptor d;
    d.op = static_cast<uint8_t>(DmaOp::Send);
    d.dest = lidOf(1);
    d.len = bytes;
    d.src = kSrc;
    const Bytes data(bytes, 0x5A);
    sys_->node(0).memory().write(kSrc, data);
    ok_ &= sys_->drain() && rings_[0].post(d, data, head(0), writeMem());
    ring(0);
    const size_t packets = dmaPackets(d, data, lidOf(0), 0, maxPayload).size();
    const uint64_t span = sendSpan(static_cast<unsigned>(packets));
    ok_ &= sys_->readCsr(1, regs::RFIFO_TAIL(0)) == packets;  // every entry taken
    return double(bytes) / double(span);
  }

  // One local copy from memory at node 0: host-port cycles from its first MWr beat to
  // the last beat of its last MWr; the data is checked in memory.
  double copyThroughput(uint32_t bytes, unsigned maxPayload) {
    DmaDescriptor d;
    d.op = static_cast<uint8_t>(DmaOp::Copy);
    d.qid = 1;
    d.len = bytes;
    d.src = kSrc;
    Bytes data(bytes);
    for (size_t i = 0; i < bytes; ++i) data[i] = static_cast<uint8_t>(i * 7 + i / 256);
    sys_->node(0).memory().write(kSrc, data);
    ok_ &= rings_[0].post(d, data, head(0), writeMem());
    ring(0);
    const unsigned tlps = bytes / maxPayload;
    uint64_t first = 0, last = 0;
    unsigned seen = 0;
    bool start = true, isCopy = false;  // at a TLP's first beat; the TLP is a copy's MWr
    for (uint64_t c = 0; c < 5'000'000 && seen < tlps; ++c) {
      sys_->tick();
      const NicIn& in = sys_->nicIn(0);
      const NicOut& out = sys_->nicOut(0);
      if (!out.host[0].outValid || !in.host[0].outReady) continue;
      if (start) isCopy = (out.host[0].out.data[0] | 0x20) == 0x60 && out.host[0].out.data.size() > 6 && out.host[0].out.data[4] == 0x01;  // an MWr of the NI (3 or 4 DW)
      if (isCopy && !first) first = sys_->cycle();
      start = out.host[0].out.last;
      if (isCopy && out.host[0].out.last) ++seen, last = sys_->cycle();
    }
    ok_ &= seen == tlps && sys_->drain() && sys_->node(0).memory().read(kRegion, bytes) == data;
    return double(bytes) / double(last - first + 1);
  }

 private:
  std::unique_ptr<System> sys_;
  std::vector<InjRing> rings_;
  bool ok_ = true;
};

unsigned beatsOf(unsigned bytes, unsigned bpb) { return (bytes + bpb - 1) / bpb; }

}  // namespace

int main(int argc, char** argv) {
  const std::string jsonPath = argc > 1 ? argv[1] : "dma_bench.json";
  const std::string mdPath = argc > 2 ? argv[2] : "dma_bench.md";
  std::vector<Figures> all;
  bool ok = true;
  for (unsigned w : {64u, 128u, 256u, 512u}) {
    const unsigned bpb = w / 8;
    Figures f;
    f.width = w;
    {
      Bench b(w);
      f.latInline = b.latency(true, nullptr);
      f.latMemory = b.latency(false, &f.roundTrip);
      f.ok &= b.ok();
    }
    {
      Bench b(w);
      f.rateOne = b.messageRate(1, 400);
      f.ok &= b.ok();
    }
    {
      Bench b(w);
      f.rateAll = b.messageRate(8, 50);
      f.ok &= b.ok();
    }
    {
      Bench b(w);
      f.putBpc = b.putThroughput(256 * 1024, 256);
      f.ok &= b.ok();
    }
    {
      Bench b(w);
      f.sendBpc = b.sendThroughput(256 * 1024, 256);
      f.ok &= b.ok();
    }
    {
      Bench b(w);
      f.copyBpc = b.copyThroughput(256 * 1024, 256);
      f.ok &= b.ok();
    }
    // Bounds. Fabric: an 8-byte put is LRH/BTH/TEH 32 + TLP header 16 + 8 + CRCs 6 = 62 bytes.
    f.rateLink = 1.0 / beatsOf(62, bpb);
    // Host port: two 64-byte slots per message, read 256 bytes (four slots, two messages)
    // per completion, whose 12 header bytes and 256 data bytes take whole beats (a TLP
    // starts in lane 0): 5 beats at 512 bits, 2.5 cycles a message.
    f.rateHost = 2.0 / beatsOf(12 + 256, bpb);
    f.linkBpc = 256.0 / beatsOf(32 + 16 + 256 + 6, bpb);
    f.linkSendBpc = 192.0 / beatsOf(32 + 16 + 16 + 192 + 6, bpb);
    // Host port out, per 256 bytes copied: the MWr (16 + 256 bytes) and the MRd (16).
    f.hostCopyBpc = 256.0 / (beatsOf(16 + 256, bpb) + beatsOf(16, bpb));
    // The figures, checked (bench_dma_completes in ctest): a put at 95 % of the
    // link's payload bandwidth, inline data saving at least a memory round trip, and the
    // 8-byte message rate from all FIFOs within 10 % of one FIFO's (turns hand over
    // without a memory round trip) and, from one FIFO, of the host-port bound.
    if (f.putBpc < 0.95 * f.linkBpc) f.ok = false, std::printf("W%u: put below 95 %% of the link\n", w);
    if (f.rateAll < 0.9 * f.rateOne) f.ok = false, std::printf("W%u: all FIFOs below 90 %% of one\n", w);
    if (f.rateOne < 0.9 * f.rateHost) f.ok = false, std::printf("W%u: one FIFO below 90 %% of the host bound\n", w);
    if (f.latMemory < f.latInline + f.roundTrip) f.ok = false, std::printf("W%u: inline saves no round trip\n", w);
    ok &= f.ok;
    all.push_back(f);
    std::printf("W%u: latency inline %lu, from memory %lu (round trip %lu); rate one FIFO %.4f, all %.4f "
                "(link %.4f, host %.4f msg/cycle); put %.2f B/cycle of %.2f (%.3f); send %.2f of %.2f (%.3f); "
                "copy %.2f of %.2f (%.3f)%s\n",
                w, (unsigned long)f.latInline, (unsigned long)f.latMemory, (unsigned long)f.roundTrip, f.rateOne,
                f.rateAll, f.rateLink, f.rateHost, f.putBpc, f.linkBpc, f.putBpc / f.linkBpc, f.sendBpc, f.linkSendBpc,
                f.sendBpc / f.linkSendBpc, f.copyBpc, f.hostCopyBpc, f.copyBpc / f.hostCopyBpc, f.ok ? "" : " FAILED");
  }
  std::ofstream js(jsonPath), md(mdPath);
  js << "[\n";
  for (size_t i = 0; i < all.size(); ++i) {
    const Figures& f = all[i];
    js << "  {\"width\": " << f.width << ", \"latency_inline\": " << f.latInline << ", \"latency_memory\": " << f.latMemory
       << ", \"mem_round_trip\": " << f.roundTrip << ", \"rate_one_fifo\": " << f.rateOne << ", \"rate_all_fifos\": "
       << f.rateAll << ", \"rate_link_bound\": " << f.rateLink << ", \"rate_host_bound\": " << f.rateHost
       << ", \"put_bytes_per_cycle\": " << f.putBpc << ", \"link_payload_bytes_per_cycle\": " << f.linkBpc
       << ", \"send_bytes_per_cycle\": " << f.sendBpc << ", \"link_send_bytes_per_cycle\": " << f.linkSendBpc
       << ", \"copy_bytes_per_cycle\": " << f.copyBpc << ", \"host_copy_bytes_per_cycle\": " << f.hostCopyBpc << "}"
       << (i + 1 < all.size() ? "," : "") << "\n";
  }
  js << "]\n";
  md << "| data width | doorbell to first fabric beat, 8 B inline / from memory (cycles) | memory round trip seen by the NI "
        "(cycles) | 8 B inline puts, one FIFO / all FIFOs (msg/cycle) | bound: fabric link / host port (msg/cycle) | "
        "256 KiB put (payload B/cycle) | of the link's payload bandwidth | 256 KiB send into a reception FIFO (B/cycle) | "
        "of the link's send bandwidth | 256 KiB local copy (B/cycle) | of the host port's bandwidth for it |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|\n";
  char buf[512];
  for (const Figures& f : all) {
    std::snprintf(buf, sizeof buf, "| %u | %lu / %lu | %lu | %.4f / %.4f | %.4f / %.4f | %.2f | %.3f | %.2f | %.3f | %.2f | %.3f |\n",
                  f.width, (unsigned long)f.latInline, (unsigned long)f.latMemory, (unsigned long)f.roundTrip,
                  f.rateOne, f.rateAll, f.rateLink, f.rateHost, f.putBpc, f.putBpc / f.linkBpc, f.sendBpc,
                  f.sendBpc / f.linkSendBpc, f.copyBpc, f.copyBpc / f.hostCopyBpc);
    md << buf;
  }
  md << "\nMemory model: " << kMemLatency << " cycles from request to completion, one CplD per read.\n";
  return ok ? 0 : 1;
}

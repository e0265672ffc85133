// SPDX-License-Identifier: Apache-2.0
// NicModel over each verilated nic_top configuration.
#include <verilated.h>
#if VM_TRACE
#include <verilated_fst_c.h>
#endif

// The fuzz build (NI_FUZZ) verilates the 64-bit NI alone; the others are optional here.
#include "Vnic64.h"
#if __has_include("Vnic128.h")
#define NI_ALL_WIDTHS 1
#include "Vnic128.h"
#include "Vnic256.h"
#include "Vnic512.h"
#include "Vnic64_mtu4096.h"
#include "Vnic64_p2.h"
#include "Vnic64_p4.h"
#include "Vnic64_small.h"
#else
#define NI_ALL_WIDTHS 0
#endif
// The post-synthesis build (NI_NETLIST): Vnic64 is the netlist, Vnic64_rtl the RTL.
#if __has_include("Vnic64_rtl.h")
#define NI_LOCKSTEP 1
#include "Vnic64_rtl.h"
#else
#define NI_LOCKSTEP 0
#endif
#include "nic_model.hpp"
#include "verilated_ports.hpp"

#include <cstdio>
#include <sstream>
#include <type_traits>

namespace ni {

namespace {

template <class M, unsigned Bpb, unsigned MaxPayload = 256, unsigned Ports = 1>
class NicAdapter final : public NicModel {
 public:
  NicAdapter(VerilatedContext* ctx, const std::string& name) : m_(ctx, name.c_str()) {}
  ~NicAdapter() override { closeTrace(); }

  unsigned bytesPerBeat() const override { return Bpb; }
  unsigned maxPayload() const override { return MaxPayload; }
  unsigned hostPorts() const override { return Ports; }
  void setClock(bool high) override { m_.clk_i = high; }
  void setReset(bool active) override { m_.rst_ni = !active; }
  void eval() override {
    m_.eval();
    lowPending = false;
  }

  void drive(const NicIn& in) override {
    for (unsigned p = 0; p < Ports; ++p) {
      const HostPortIn& h = in.host[p];
      uint8_t buf[Bpb] = {};
      for (unsigned i = 0; i < Bpb && i < h.in.data.size(); ++i) buf[i] = h.in.data[i];
      toPortAt(m_.s_host_axis_tdata, p * Bpb, buf, Bpb);
      setField(m_.s_host_axis_tkeep, p * Bpb, Bpb, h.in.keep);
      setField(m_.s_host_axis_tlast, p, 1, h.in.last);
      setField(m_.s_host_axis_tvalid, p, 1, h.inValid);
      setField(m_.m_host_axis_tready, p, 1, h.outReady);
    }
    m_.s_fab_axis_tvalid = in.fabInValid;
    put(m_.s_fab_axis_tdata, in.fabIn.data);
    m_.s_fab_axis_tkeep = static_cast<std::remove_reference_t<decltype(m_.s_fab_axis_tkeep)>>(in.fabIn.keep);
    m_.s_fab_axis_tlast = in.fabIn.last;
    m_.s_fab_axis_tdest = in.fabIn.dest & 1;
    m_.m_fab_axis_tready = in.fabOutReady;
    m_.fab_tx_credit_i = in.fabTxCredit & 3;
    eval();
  }

  NicOut read() const override {
    NicOut o;
    for (unsigned p = 0; p < Ports; ++p) {
      HostPortOut& h = o.host[p];
      h.inReady = getField(m_.s_host_axis_tready, p, 1);
      h.outValid = getField(m_.m_host_axis_tvalid, p, 1);
      h.out.data.resize(Bpb);
      fromPortAt(m_.m_host_axis_tdata, p * Bpb, h.out.data.data(), Bpb);
      h.out.keep = getField(m_.m_host_axis_tkeep, p * Bpb, Bpb);
      h.out.last = getField(m_.m_host_axis_tlast, p, 1);
      h.out.user = getField(m_.m_host_axis_tuser, p, 1);
    }
    o.hostReqRoom = m_.s_host_req_room_o;
    o.fabInReady = m_.s_fab_axis_tready;
    o.fabOutValid = m_.m_fab_axis_tvalid;
    o.fabOut.data.resize(Bpb);
    fromPort(m_.m_fab_axis_tdata, o.fabOut.data.data(), Bpb);
    o.fabOut.keep = m_.m_fab_axis_tkeep;
    o.fabOut.last = m_.m_fab_axis_tlast;
    o.fabOut.dest = m_.m_fab_axis_tdest;
    o.fabRxCredit = m_.fab_rx_credit_o;
    return o;
  }

  bool openTrace(const std::string& path) override {
#if VM_TRACE
    closeTrace();
    Verilated::traceEverOn(true);
    tfp_ = std::make_unique<VerilatedFstC>();
    m_.trace(tfp_.get(), 99);
    tfp_->open(path.c_str());
    return true;
#else
    (void)path;
    return false;
#endif
  }
  void dumpTrace(uint64_t time) override {
    time_ = time;
#if VM_TRACE
    if (tfp_ && inWindow()) tfp_->dump(time);
#endif
  }
  void setTraceWindow(uint64_t from, uint64_t cycles) override {
    from_ = from;
    until_ = cycles ? from + cycles : 0;
  }
  void closeTrace() override {
#if VM_TRACE
    if (tfp_) tfp_->close();
    tfp_.reset();
#endif
  }
  bool tracing() const override {
#if VM_TRACE
    return tfp_ != nullptr && inWindow();
#else
    return false;
#endif
  }

 private:
  template <class P>
  void put(P& port, const Bytes& b) {
    uint8_t buf[Bpb] = {};
    for (unsigned i = 0; i < Bpb && i < b.size(); ++i) buf[i] = b[i];
    toPort(port, buf, Bpb);
  }
  // The clock driver's time advances by 2 a cycle.
  bool inWindow() const { return time_ / 2 >= from_ && (until_ == 0 || time_ / 2 < until_); }
  M m_;
  uint64_t time_ = 0, from_ = 0, until_ = 0;  // last dump time; the window in cycles
#if VM_TRACE
  std::unique_ptr<VerilatedFstC> tfp_;
#endif
};

#if NI_LOCKSTEP
// Where two NIs' outputs of one cycle differ ("" if nowhere): the payload of a beat
// counts only while it is valid.
std::string outputDifference(const NicOut& a, const NicOut& b, unsigned ports) {
  std::ostringstream d;
  auto beat = [&d](const char* what, const Beat& x, const Beat& y) {
    if (x.data != y.data || x.keep != y.keep || x.last != y.last || x.user != y.user || x.dest != y.dest) {
      d << what << ": data";
      for (auto* v : {&x, &y}) {
        d << (v == &x ? " " : " vs ");
        for (auto it = v->data.rbegin(); it != v->data.rend(); ++it) d << std::hex << (*it >> 4) << (*it & 15);
        d << std::dec << " keep " << std::hex << v->keep << std::dec << " last " << v->last << " user " << v->user
          << " dest " << unsigned{v->dest};
      }
    }
  };
  auto flag = [&d](const char* what, unsigned x, unsigned y) {
    if (x != y) d << what << " " << x << " vs " << y << "; ";
  };
  for (unsigned p = 0; p < ports; ++p) {
    flag("s_host_axis_tready", a.host[p].inReady, b.host[p].inReady);
    flag("m_host_axis_tvalid", a.host[p].outValid, b.host[p].outValid);
    if (a.host[p].outValid && b.host[p].outValid) beat("m_host_axis", a.host[p].out, b.host[p].out);
  }
  flag("s_host_req_room_o", a.hostReqRoom, b.hostReqRoom);
  flag("s_fab_axis_tready", a.fabInReady, b.fabInReady);
  flag("m_fab_axis_tvalid", a.fabOutValid, b.fabOutValid);
  if (a.fabOutValid && b.fabOutValid) beat("m_fab_axis", a.fabOut, b.fabOut);
  flag("fab_rx_credit_o", a.fabRxCredit, b.fabRxCredit);
  return d.str();
}

// The netlist NI, with the RTL NI beside it fed the same inputs. The first cycle in
// which an output differs is reported and marks an error in the context (as a failed
// RTL assertion does), which stops the test; the netlist's outputs are the ones seen.
class LockstepNic final : public NicModel {
 public:
  LockstepNic(VerilatedContext* ctx, const std::string& name)
      : ctx_(ctx), name_(name), net_(ctx, name + ".net"), rtl_(ctx, name + ".rtl") {}
  unsigned bytesPerBeat() const override { return 8; }
  unsigned maxPayload() const override { return 256; }
  unsigned hostPorts() const override { return 1; }
  void setClock(bool high) override {
    if (high) ++cycle_;
    net_.setClock(high);
    rtl_.setClock(high);
  }
  void setReset(bool active) override {
    net_.setReset(active);
    rtl_.setReset(active);
  }
  void eval() override {
    net_.eval();
    rtl_.eval();
    lowPending = false;
  }
  void drive(const NicIn& in) override {
    net_.drive(in);
    rtl_.drive(in);
    lowPending = false;
    if (diverged_) return;
    const std::string d = outputDifference(net_.read(), rtl_.read(), 1);
    if (d.empty()) return;
    diverged_ = true;
    std::fprintf(stderr, "[lockstep] %s: netlist and RTL differ in cycle %llu (netlist vs RTL): %s\n",
                 name_.c_str(), static_cast<unsigned long long>(cycle_), d.c_str());
    ctx_->gotError(true);
  }
  NicOut read() const override { return net_.read(); }
  bool openTrace(const std::string& path) override { return rtl_.openTrace(path); }
  void dumpTrace(uint64_t time) override { rtl_.dumpTrace(time); }
  void setTraceWindow(uint64_t from, uint64_t cycles) override { rtl_.setTraceWindow(from, cycles); }
  void closeTrace() override { rtl_.closeTrace(); }
  bool tracing() const override { return rtl_.tracing(); }

 private:
  VerilatedContext* ctx_;
  std::string name_;
  NicAdapter<Vnic64, 8> net_;
  NicAdapter<Vnic64_rtl, 8> rtl_;
  uint64_t cycle_ = 0;
  bool diverged_ = false;
};
#endif

}  // namespace

bool nicBuilt(unsigned bits, unsigned maxPayload, unsigned hostPorts, const std::string& config) {
  if (config == "small") return NI_ALL_WIDTHS && bits == 64 && maxPayload == 256 && hostPorts == 1;
  if (config != "default") return false;
  if (hostPorts != 1) return NI_ALL_WIDTHS && bits == 64 && maxPayload == 256 && (hostPorts == 2 || hostPorts == 4);
  if (!NI_ALL_WIDTHS) return bits == 64 && maxPayload == 256;
  if (maxPayload == 4096) return bits == 64;
  return maxPayload == 256 && (bits == 64 || bits == 128 || bits == 256 || bits == 512);
}

std::unique_ptr<NicModel> makeNic(unsigned bits, VerilatedContext* ctx, const std::string& name, unsigned maxPayload,
                                  unsigned hostPorts, const std::string& config) {
  if (!nicBuilt(bits, maxPayload, hostPorts, config)) return nullptr;
#if NI_ALL_WIDTHS
  if (config == "small") return std::make_unique<NicAdapter<Vnic64_small, 8>>(ctx, name);
#endif
  if (bits == 64 && maxPayload == 256 && hostPorts == 1) {
#if NI_LOCKSTEP
    return std::make_unique<LockstepNic>(ctx, name);
#endif
    return std::make_unique<NicAdapter<Vnic64, 8>>(ctx, name);
  }
#if NI_ALL_WIDTHS
  if (hostPorts == 2) return std::make_unique<NicAdapter<Vnic64_p2, 8, 256, 2>>(ctx, name);
  if (hostPorts == 4) return std::make_unique<NicAdapter<Vnic64_p4, 8, 256, 4>>(ctx, name);
  if (maxPayload == 4096) return std::make_unique<NicAdapter<Vnic64_mtu4096, 8, 4096>>(ctx, name);
  switch (bits) {
    case 128: return std::make_unique<NicAdapter<Vnic128, 16>>(ctx, name);
    case 256: return std::make_unique<NicAdapter<Vnic256, 32>>(ctx, name);
    case 512: return std::make_unique<NicAdapter<Vnic512, 64>>(ctx, name);
    default: break;
  }
#endif
  return nullptr;
}

}  // namespace ni

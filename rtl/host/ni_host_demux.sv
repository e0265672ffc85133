// SPDX-License-Identifier: Apache-2.0
// Host ports out: the one TLP stream of ni_host_tx sent to the port it belongs to.
// A completion (Cpl, CplD: read data, error completions, write confirmations) goes
// to the port whose number is the bus number of its Requester ID (CPU p has bus p);
// a completion naming no port is dropped and counted (ev_bad_port_o). Requests go to
// the port s_axis_tdest names: an interrupt to the port it is for, the NI's memory
// reads and writes to port 0, the port of the node's memory.
//
// Beats enter through a queue of two (the registered block boundary: s_axis_tready is
// a register), then pass a one-beat stage (hold) in which the route is decided: at 64
// bits the Requester ID is in the second beat, read at the queue's head. Whether a
// beat is a completion, and at 128 bits and up its port, are decoded as it enters the
// input queue and stored beside it, so the decision is a register and a compare, not
// the header decode. Each port has a one-beat output register, so a port that stalls
// blocks the shared stream only when a beat for it arrives.
// A port that holds a beat back for stall_cycles_i cycles (0: never) is declared
// down: the NI drops the TLPs for it (ev_drop_o, one per TLP) and the other ports go
// on. If the port was in the middle of a TLP, a nullified last beat (tuser) closes it
// once the port takes the beat it holds. up_i brings a port back at the next TLP
// boundary.
`default_nettype none
`include "ni_assert.svh"

module ni_host_demux #(
  parameter int unsigned DataW = 64,
  parameter int unsigned HostPorts = 2,
  localparam int unsigned KeepW = DataW / 8,
  localparam int unsigned PortW = (HostPorts > 1) ? $clog2(HostPorts) : 1
) (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic [DataW-1:0] s_axis_tdata,
  input  logic [KeepW-1:0] s_axis_tkeep,
  input  logic s_axis_tlast,
  input  logic s_axis_tuser,
  input  logic s_axis_tvalid,
  output logic s_axis_tready,
  input  logic [7:0] s_axis_tdest,  // port of a request (read with its first beat)
  output logic [HostPorts-1:0][DataW-1:0] m_axis_tdata,
  output logic [HostPorts-1:0][KeepW-1:0] m_axis_tkeep,
  output logic [HostPorts-1:0] m_axis_tlast,
  output logic [HostPorts-1:0] m_axis_tuser,
  output logic [HostPorts-1:0] m_axis_tvalid,
  input  logic [HostPorts-1:0] m_axis_tready,
  input  logic [31:0] stall_cycles_i,
  input  logic [HostPorts-1:0] up_i,
  output logic [HostPorts-1:0] down_o,
  output logic ev_bad_port_o,
  output logic ev_drop_o
);
  localparam int unsigned BeatW = DataW + KeepW + 2;  // {user, last, keep, data}

  // ------------------------------------------------------------ input queue
  // Each beat is stored with its header decoded as if it were a TLP's first beat
  // (completion or not; the port and validity of the bus number in header byte 8, which
  // at 64 bits is the next beat's byte 0; those of tdest), so that the route is decided
  // from registers and a multiplexer.
  localparam int unsigned DecW = 1 + 2 * (1 + PortW);
  logic [7:0] s_bus;
  if (DataW == 64) begin : gen_bus_next_beat
    assign s_bus = s_axis_tdata[7:0];
  end else begin : gen_bus_this_beat
    assign s_bus = s_axis_tdata[71:64];
  end
  logic [DecW-1:0] s_dec;
  assign s_dec = {ni_pkg::is_cpl(s_axis_tdata[7:0]),
                  32'(s_bus) >= HostPorts, PortW'(s_bus), 32'(s_axis_tdest) >= HostPorts, PortW'(s_axis_tdest)};
  logic [DataW-1:0] i_tdata;
  logic [KeepW-1:0] i_tkeep;
  logic i_tlast, i_tuser, i_tvalid, i_tready;
  logic i_cpl, i_bus_bad, i_req_bad;
  logic [PortW-1:0] i_bus_port, i_req_port;
  ni_fifo #(.Width(BeatW + DecW), .Depth(2)) u_in_q (
    .clk_i, .rst_ni, .wdata_i({s_dec, s_axis_tuser, s_axis_tlast, s_axis_tkeep, s_axis_tdata}),
    .wvalid_i(s_axis_tvalid), .wready_o(s_axis_tready),
    .rdata_o({i_cpl, i_bus_bad, i_bus_port, i_req_bad, i_req_port, i_tuser, i_tlast, i_tkeep, i_tdata}),
    .rvalid_o(i_tvalid), .rready_i(i_tready));

  // ------------------------------------------------------------ hold stage
  logic hold_valid_q, hold_first_q, in_first_q;
  logic [BeatW-1:0] hold_q;
  logic hold_last;
  assign hold_last = hold_q[BeatW-2];

  // The held first beat's port: for a completion the bus number of its Requester ID,
  // for a request its tdest. At 64 bits the bus number is in the next beat, at the
  // queue's head; from 128 bits on the port is chosen as the beat enters.
  logic bad_new, hdr_ready;
  logic [PortW-1:0] port_new;
  if (DataW == 64) begin : gen_hdr_two_beats
    logic hold_cpl_q, hold_bad_q;
    logic [PortW-1:0] hold_port_q;
    always_ff @(posedge clk_i) begin
      if (i_tvalid && i_tready) {hold_cpl_q, hold_bad_q, hold_port_q} <= {i_cpl, i_req_bad, i_req_port};
    end
    assign bad_new = hold_cpl_q ? i_bus_bad : hold_bad_q;
    assign port_new = hold_cpl_q ? i_bus_port : hold_port_q;
    assign hdr_ready = i_tvalid || hold_last;
  end else begin : gen_hdr_one_beat
    logic hold_bad_q;
    logic [PortW-1:0] hold_port_q;
    always_ff @(posedge clk_i) begin
      if (i_tvalid && i_tready) {hold_bad_q, hold_port_q} <= i_cpl ? {i_bus_bad, i_bus_port} : {i_req_bad, i_req_port};
    end
    assign bad_new = hold_bad_q;
    assign port_new = hold_port_q;
    assign hdr_ready = 1'b1;
  end

  // Route of the TLP passing: decided once its header is readable.
  logic routed_q, routed_d, bad_q, bad_d, dropping_q, dropping_d, decide;
  logic [PortW-1:0] route_q, route_d, route;
  logic bad, drop, fwd_valid, fwd_go;
  assign decide = hold_valid_q && hold_first_q && !routed_q && hdr_ready;
  assign route = routed_q ? route_q : port_new;
  assign bad = routed_q ? bad_q : bad_new;

  // ------------------------------------------------------------ port registers
  logic [HostPorts-1:0] out_valid_q, out_valid_d, open_q, open_d, close_q, close_d, down_q, down_d;
  logic [HostPorts-1:0] up_pend_q, up_pend_d, take;
  logic [HostPorts-1:0][BeatW-1:0] out_q, out_d;
  logic [HostPorts-1:0][31:0] stall_q, stall_d;

  assign take = ~out_valid_q | m_axis_tready;  // the register can take a beat
  assign fwd_valid = hold_valid_q && (routed_q || decide);
  assign drop = dropping_q || bad || down_q[route];
  assign fwd_go = fwd_valid && (drop || (take[route] && !close_q[route]));
  assign i_tready = !hold_valid_q || fwd_go;

  always_comb begin
    routed_d = routed_q;
    route_d = route_q;
    bad_d = bad_q;
    dropping_d = dropping_q;
    if (decide) begin
      routed_d = 1'b1;
      route_d = port_new;
      bad_d = bad_new;
    end
    if (fwd_go) begin
      dropping_d = drop && !hold_last;
      if (hold_last) routed_d = 1'b0;
    end
  end
  assign ev_bad_port_o = decide && bad_new;
  assign ev_drop_o = fwd_go && drop && !bad && !dropping_q;

  always_comb begin
    out_valid_d = out_valid_q & ~m_axis_tready;
    out_d = out_q;
    open_d = open_q;
    close_d = close_q;
    down_d = down_q;
    up_pend_d = up_pend_q | up_i;
    for (int p = 0; p < HostPorts; p++) begin
      // Cycles the port has held a beat back.
      stall_d[p] = (out_valid_q[p] && !m_axis_tready[p]) ? stall_q[p] + 32'd1 : 32'd0;
      if (close_q[p] && take[p]) begin
        out_valid_d[p] = 1'b1;
        out_d[p] = {1'b1, 1'b1, {(KeepW - 1){1'b0}}, 1'b1, DataW'(0)};  // one byte, nullified
        close_d[p] = 1'b0;
        open_d[p] = 1'b0;
      end else if (fwd_go && !drop && 32'(route) == p) begin
        out_valid_d[p] = 1'b1;
        out_d[p] = hold_q;
        open_d[p] = !hold_last;
      end
      if (stall_cycles_i != 0 && stall_q[p] == stall_cycles_i && !down_q[p]) begin
        down_d[p] = 1'b1;
        close_d[p] = open_q[p];
        open_d[p] = 1'b0;
      end
      // Back up between TLPs of the shared stream for this port.
      if (up_pend_d[p] && !(routed_q && 32'(route_q) == p)) begin
        up_pend_d[p] = 1'b0;
        down_d[p] = 1'b0;
        stall_d[p] = 32'd0;
      end
    end
  end
  assign down_o = down_q;
  for (genvar p = 0; p < HostPorts; p++) begin : gen_port_out
    assign {m_axis_tuser[p], m_axis_tlast[p], m_axis_tkeep[p], m_axis_tdata[p]} = out_q[p];
    assign m_axis_tvalid[p] = out_valid_q[p];
    `NI_ASSERT_AXIS_STABLE(PortOutStable_A, m_axis_tvalid[p], m_axis_tready[p], out_q[p])
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      hold_valid_q <= 1'b0;
      hold_first_q <= 1'b0;
      in_first_q <= 1'b1;
      routed_q <= 1'b0;
      route_q <= '0;
      bad_q <= 1'b0;
      dropping_q <= 1'b0;
      out_valid_q <= '0;
      open_q <= '0;
      close_q <= '0;
      down_q <= '0;
      up_pend_q <= '0;
      stall_q <= '0;
    end else begin
      if (i_tvalid && i_tready) begin
        hold_valid_q <= 1'b1;
        hold_first_q <= in_first_q;
        in_first_q <= i_tlast;
      end else if (fwd_go) begin
        hold_valid_q <= 1'b0;
      end
      routed_q <= routed_d;
      route_q <= route_d;
      bad_q <= bad_d;
      dropping_q <= dropping_d;
      out_valid_q <= out_valid_d;
      open_q <= open_d;
      close_q <= close_d;
      down_q <= down_d;
      up_pend_q <= up_pend_d;
      stall_q <= stall_d;
    end
  end
  // The payload of a register: no reset needed.
  always_ff @(posedge clk_i) begin
    if (i_tvalid && i_tready) begin
      hold_q <= {i_tuser, i_tlast, i_tkeep, i_tdata};
    end
    out_q <= out_d;
  end

  // A port's register is written only when it can take a beat.
  `NI_ASSERT(DemuxNoOverwrite_A, fwd_go && !drop |-> take[route])
endmodule

`default_nettype wire

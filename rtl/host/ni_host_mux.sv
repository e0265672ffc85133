// SPDX-License-Identifier: Apache-2.0
// Host ports in: the TLP streams of several host links (one per CPU) merged into
// the one stream ni_host_rx takes, round robin per TLP. A TLP passes whole before
// the next one starts; the next is picked in the cycle the last beat leaves, so
// there is no bubble between TLPs. Fair share: with every port offering TLPs of the
// same size, each gets 1/HostPorts of the beats.
`default_nettype none
`include "ni_assert.svh"

module ni_host_mux #(
  parameter int unsigned DataW = 64,
  parameter int unsigned HostPorts = 2,
  localparam int unsigned KeepW = DataW / 8,
  localparam int unsigned PortW = (HostPorts > 1) ? $clog2(HostPorts) : 1
) (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic [HostPorts-1:0][DataW-1:0] s_axis_tdata,
  input  logic [HostPorts-1:0][KeepW-1:0] s_axis_tkeep,
  input  logic [HostPorts-1:0] s_axis_tlast,
  input  logic [HostPorts-1:0] s_axis_tvalid,
  output logic [HostPorts-1:0] s_axis_tready,
  output logic [DataW-1:0] m_axis_tdata,
  output logic [KeepW-1:0] m_axis_tkeep,
  output logic m_axis_tlast,
  output logic m_axis_tvalid,
  input  logic m_axis_tready
);
  logic busy_q, busy_d;  // a TLP is passing (its port is held)
  logic [PortW-1:0] cur_q, cur_d, rr_q, rr_d, pick, sel;
  logic any;

  // Round robin among the ports offering a beat, starting at rr_q.
  always_comb begin
    pick = rr_q;
    any = 1'b0;
    for (int k = HostPorts - 1; k >= 0; k--) begin
      if (s_axis_tvalid[(32'(rr_q) + k) % HostPorts]) begin
        pick = PortW'((32'(rr_q) + k) % HostPorts);
        any = 1'b1;
      end
    end
  end
  // The port is held from the cycle its first beat is offered (AXI4-Stream).
  assign sel = busy_q ? cur_q : pick;
  assign m_axis_tdata = s_axis_tdata[sel];
  assign m_axis_tkeep = s_axis_tkeep[sel];
  assign m_axis_tlast = s_axis_tlast[sel];
  assign m_axis_tvalid = busy_q ? s_axis_tvalid[sel] : any;
  always_comb begin
    s_axis_tready = '0;
    s_axis_tready[sel] = m_axis_tready && (busy_q || any);
  end

  always_comb begin
    busy_d = busy_q;
    cur_d = cur_q;
    rr_d = rr_q;
    if (!busy_q && any) begin
      busy_d = 1'b1;
      cur_d = pick;
      rr_d = (32'(pick) == HostPorts - 1) ? '0 : pick + PortW'(1);
    end
    if (m_axis_tvalid && m_axis_tready && m_axis_tlast) busy_d = 1'b0;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      busy_q <= 1'b0;
      cur_q <= '0;
      rr_q <= '0;
    end else begin
      busy_q <= busy_d;
      cur_q <= cur_d;
      rr_q <= rr_d;
    end
  end

  `NI_ASSERT_AXIS_STABLE(MuxOutStable_A, m_axis_tvalid, m_axis_tready,
                         {m_axis_tdata, m_axis_tkeep, m_axis_tlast})
endmodule

`default_nettype wire

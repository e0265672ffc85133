// SPDX-License-Identifier: Apache-2.0
// Formal harness of ni_fab_tx's credit counters (scripts/formal.py, job
// fab_tx_credits). The next hop is an abstract one with Slots packet slots per
// virtual channel: it gives a credit for each slot that is free and not yet promised
// (all of them after reset, as ni_fab_rx does), a packet fills a slot of its VC when
// it starts, and filled slots are freed at any time. The sources and the hop are free
// inputs. Proved for every reachable state, per VC: credits held + slots filled =
// credits the hop gave out for slots not freed since (at most Slots). So the NI never
// starts a packet into a full hop, and a credit returned in the cycle a packet starts
// is not lost.
`default_nettype none
`include "ni_assert.svh"

module fab_tx_credits #(
  parameter int unsigned Slots = 4,
  localparam int unsigned NumSrc = 2,
  localparam int unsigned BeatW = 64 + 8 + 2
) (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic [NumSrc*ni_pkg::TxDescW-1:0] src_hdr_i,
  input  logic [NumSrc-1:0] src_hdr_valid_i,
  input  logic [NumSrc-1:0][BeatW-1:0] src_beat_i,
  input  logic [NumSrc-1:0] src_beat_valid_i,
  input  logic m_axis_tready,
  input  logic [ni_pkg::NumVc-1:0] credit_i,  // the hop gives a credit (if it has one to give)
  input  logic [ni_pkg::NumVc-1:0] free_i     // the hop empties a slot (if one is filled)
);
  logic [NumSrc-1:0] src_hdr_ready, src_beat_ready;
  logic [ni_pkg::NumVc-1:0][7:0] credits, out_q, out_d, filled_q, filled_d;
  logic [ni_pkg::NumVc-1:0] credit, freed, start;
  logic [63:0] tdata;
  logic [7:0] tkeep;
  logic tlast, tdest, tvalid, ev_tx;

  ni_fab_tx #(.DataW(64), .NumSrc(NumSrc)) u_dut (
    .clk_i, .rst_ni, .node_id_i(16'h0001), .pkey_i(16'hFFFF),
    .src_hdr_i, .src_hdr_valid_i, .src_hdr_ready_o(src_hdr_ready),
    .src_beat_i, .src_beat_valid_i, .src_beat_ready_o(src_beat_ready),
    .m_axis_tdata(tdata), .m_axis_tkeep(tkeep), .m_axis_tlast(tlast), .m_axis_tdest(tdest),
    .m_axis_tvalid(tvalid), .m_axis_tready, .credit_i(credit), .credits_o(credits), .ev_tx_pkt_o(ev_tx)
  );

  // A packet starts when a source's header is taken; it fills a slot of its VC.
  ni_pkg::tx_desc_t hdr0, hdr1;
  assign hdr0 = src_hdr_i[0 +: ni_pkg::TxDescW];
  assign hdr1 = src_hdr_i[ni_pkg::TxDescW +: ni_pkg::TxDescW];
  always_comb begin
    for (int v = 0; v < ni_pkg::NumVc; v++) begin
      start[v] = (src_hdr_valid_i[0] && src_hdr_ready[0] && 32'(hdr0.vc) == v) ||
                 (src_hdr_valid_i[1] && src_hdr_ready[1] && 32'(hdr1.vc) == v);
      credit[v] = credit_i[v] && 32'(out_q[v]) < Slots;
      freed[v] = free_i[v] && filled_q[v] != 8'd0;
      out_d[v] = out_q[v] + 8'(credit[v]) - 8'(freed[v]);
      filled_d[v] = filled_q[v] + 8'(start[v]) - 8'(freed[v]);
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      out_q <= '0;
      filled_q <= '0;
    end else begin
      out_q <= out_d;
      filled_q <= filled_d;
    end
  end

  `NI_ASSERT(OneStart_A, !(src_hdr_ready[0] && src_hdr_ready[1]))
  `NI_ASSERT(CreditsVc0_A, 32'(credits[0]) + 32'(filled_q[0]) == 32'(out_q[0]) && 32'(out_q[0]) <= Slots)
  `NI_ASSERT(CreditsVc1_A, 32'(credits[1]) + 32'(filled_q[1]) == 32'(out_q[1]) && 32'(out_q[1]) <= Slots)

  logic unused;
  assign unused = ^{src_beat_ready, tdata, tkeep, tlast, tdest, tvalid, ev_tx};
endmodule

`default_nettype wire

// SPDX-License-Identifier: Apache-2.0
// Merges two request sources (host requests from ni_wc, DMA packets from ni_dma_inj)
// into the one stream ni_retx takes: header record, then the packet's beats. Round
// robin per packet; a packet's beats all pass before the next header.
`default_nettype none
`include "ni_assert.svh"

module ni_req_merge #(
  parameter int unsigned DataW = 64,
  localparam int unsigned BeatW = DataW + DataW / 8 + 2,  // {bad, last, keep, data}
  localparam int unsigned HdrW = ni_pkg::TxDescW
) (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic [1:0][HdrW-1:0] in_hdr_i,
  input  logic [1:0] in_hdr_valid_i,
  output logic [1:0] in_hdr_ready_o,
  input  logic [1:0][BeatW-1:0] in_beat_i,
  input  logic [1:0] in_beat_valid_i,
  output logic [1:0] in_beat_ready_o,
  output logic [HdrW-1:0] out_hdr_o,
  output logic out_hdr_valid_o,
  input  logic out_hdr_ready_i,
  output logic [BeatW-1:0] out_beat_o,
  output logic out_beat_valid_o,
  input  logic out_beat_ready_i
);
  logic busy_q, busy_d;       // a header passed; the rest of its beats are passing
  logic sel_q, sel_d;         // source of the packet passing, or of the header offered
  logic prio_q, prio_d;       // source picked first when both offer a header
  logic offering_q, offering_d;
  logic pick, cur, hdr_go, beat_go, beat_last;

  // The header offered stays with its source until taken; its first beats are offered
  // with it (ni_retx takes a packet's header and first beat together).
  assign pick = (in_hdr_valid_i[prio_q] || !in_hdr_valid_i[!prio_q]) ? prio_q : !prio_q;
  assign cur = (busy_q || offering_q) ? sel_q : pick;

  assign out_hdr_o = in_hdr_i[cur];
  assign out_hdr_valid_o = !busy_q && in_hdr_valid_i[cur];
  assign in_hdr_ready_o[0] = !busy_q && !cur && out_hdr_ready_i;
  assign in_hdr_ready_o[1] = !busy_q && cur && out_hdr_ready_i;
  assign out_beat_o = in_beat_i[cur];
  assign out_beat_valid_o = (busy_q || in_hdr_valid_i[cur]) && in_beat_valid_i[cur];
  assign in_beat_ready_o[0] = (busy_q || in_hdr_valid_i[cur]) && !cur && out_beat_ready_i;
  assign in_beat_ready_o[1] = (busy_q || in_hdr_valid_i[cur]) && cur && out_beat_ready_i;
  assign hdr_go = out_hdr_valid_o && out_hdr_ready_i;
  assign beat_go = out_beat_valid_o && out_beat_ready_i;
  assign beat_last = out_beat_o[BeatW-2];

  always_comb begin
    busy_d = busy_q;
    sel_d = cur;
    prio_d = prio_q;
    offering_d = out_hdr_valid_o && !out_hdr_ready_i;
    if (hdr_go) begin
      busy_d = !(beat_go && beat_last);
      prio_d = !cur;
    end else if (busy_q && beat_go && beat_last) begin
      busy_d = 1'b0;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      busy_q <= 1'b0;
      sel_q <= 1'b0;
      prio_q <= 1'b0;
      offering_q <= 1'b0;
    end else begin
      busy_q <= busy_d;
      sel_q <= sel_d;
      prio_q <= prio_d;
      offering_q <= offering_d;
    end
  end

  `NI_ASSERT_AXIS_STABLE(MergeHdrStable_A, out_hdr_valid_o, out_hdr_ready_i, out_hdr_o)
  // A packet's beats pass only with or after its header.
  `NI_ASSERT(MergeBeatAfterHdr_A, beat_go |-> busy_q || hdr_go)
endmodule

`default_nettype wire

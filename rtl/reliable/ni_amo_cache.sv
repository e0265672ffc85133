// SPDX-License-Identifier: Apache-2.0
// Results of the atomics this NI executed, the last one per source node, so that a
// resent atomic is answered with its original result instead of executing twice.
// ni_host_rx writes a record (the completion TLP as it left, with the request's
// source and PSN) when an atomic's completion goes out; ni_fab_rx looks a duplicate
// atomic up and, on a hit, queues the response header on the generated-packet
// path; this block then supplies that response's beats (the stored completion) to
// the framer, in the order of those headers. Senders keep one atomic per
// destination in flight (ni_retx), so the last record of a source is the only one
// a duplicate can ask for. docs/architecture.md#reliable-delivery.
`default_nettype none
`include "ni_assert.svh"

module ni_amo_cache #(
  parameter int unsigned DataW = 64,
  parameter int unsigned NumPeers = 64,
  localparam int unsigned Bpb = DataW / 8,
  localparam int unsigned KeepW = Bpb,
  localparam int unsigned BeatW = DataW + KeepW + 2,  // {bad, last, keep, data}
  localparam int unsigned RecBytes = ni_pkg::AmoCplBytes,
  localparam int unsigned RecW = RecBytes * 8,
  localparam int unsigned PeerW = $clog2(NumPeers),
  localparam int unsigned RecBeats = (RecBytes + Bpb - 1) / Bpb,
  localparam int unsigned RbW = (RecBeats > 1) ? $clog2(RecBeats) : 1
) (
  input  logic clk_i,
  input  logic rst_ni,
  // A completion of an atomic left for the fabric (its TLP bytes, byte p at [8p +: 8]).
  input  logic wr_valid_i,
  input  logic [15:0] wr_lid_i,
  input  logic [23:0] wr_psn_i,
  input  logic [RecW-1:0] wr_tlp_i,
  input  logic [4:0] wr_len_i,
  // Is the result of the atomic from this source with this PSN kept, and can it be replayed now?
  input  logic [15:0] q_lid_i,
  input  logic [23:0] q_psn_i,
  output logic q_hit_o,
  output logic [4:0] q_len_o,
  input  logic replay_i,  // the response header for the record looked up was queued
  // Beats of the replayed responses, to the framer.
  output logic [BeatW-1:0] beat_o,
  output logic beat_valid_o,
  input  logic beat_ready_i
);
  logic [NumPeers-1:0] valid_q, valid_d;
  logic [23:0] psn_mem_q [NumPeers];
  logic [4:0] len_mem_q [NumPeers];
  logic [RecW-1:0] tlp_mem_q [NumPeers];

  logic [PeerW-1:0] wr_peer, q_peer;
  logic wr_ok;
  assign wr_peer = wr_lid_i[PeerW-1:0];
  assign q_peer = q_lid_i[PeerW-1:0];
  assign wr_ok = wr_valid_i && ni_pkg::lid_has_peer(wr_lid_i, 16'(NumPeers));

  // Replays waiting for the framer; a full queue answers "not kept" (the sender resends).
  // The kept completions are read with a register (a block RAM: 64 sources of RecW
  // bits, which as LUT RAM cost more logic cells than the rest of the block): the one
  // a replay names is read in the replay's cycle, before that cycle's write, and enters
  // the queue two cycles later (through the RAM's output register) with its last beat's
  // index and lanes worked out; the queue offers it the cycle after (a replay is rare:
  // its cycles buy registers after the RAM and after the queue). rq_used counts the
  // queue's records and the one on its way, against its depth.
  localparam int unsigned RqDepth = 2;
  localparam int unsigned RqW = RbW + KeepW + RecW;
  logic [RqW-1:0] rq_head;
  logic rq_wready, rq_rvalid, rq_pop, rd_pend_q, rq_pend_q;
  logic [RecW-1:0] rd_tlp_q, rq_tlp_q;
  logic [4:0] rd_len_q, rq_len_q;
  logic [RbW-1:0] rd_last_beat;
  logic [KeepW-1:0] rd_last_keep;
  logic [1:0] rq_used_q, rq_used_d;
  always_ff @(posedge clk_i) begin
    rd_tlp_q <= tlp_mem_q[q_peer];
    rd_len_q <= len_mem_q[q_peer];
    rq_tlp_q <= rd_tlp_q;  // the block RAM's output register (its clock-to-out is long)
    rq_len_q <= rd_len_q;
  end
  always_comb begin
    rd_last_beat = RbW'((32'(rq_len_q) - 1) / Bpb);
    for (int j = 0; j < Bpb; j++) rd_last_keep[j] = 32'(rd_last_beat) * Bpb + j < 32'(rq_len_q);
  end
  ni_fifo #(.Width(RqW), .Depth(RqDepth)) u_replay_q (
    .clk_i, .rst_ni,
    .wdata_i({rd_last_beat, rd_last_keep, rq_tlp_q}), .wvalid_i(rq_pend_q), .wready_o(rq_wready),
    .rdata_o(rq_head), .rvalid_o(rq_rvalid), .rready_i(rq_pop)
  );
  assign rq_used_d = rq_used_q + 2'(replay_i) - 2'(rq_pop);

  assign q_hit_o = ni_pkg::lid_has_peer(q_lid_i, 16'(NumPeers)) && valid_q[q_peer] && psn_mem_q[q_peer] == q_psn_i &&
                   32'(rq_used_q) < RqDepth;
  assign q_len_o = len_mem_q[q_peer];

  // Beats of the record at the head of the queue; lanes past its length are zero.
  logic [RbW-1:0] bi_q, bi_d, head_last_beat;
  logic [KeepW-1:0] head_last_keep, keep;
  logic [RecW-1:0] head_tlp;
  logic beat_last;
  assign {head_last_beat, head_last_keep, head_tlp} = rq_head;
  assign beat_last = bi_q == head_last_beat;
  assign keep = beat_last ? head_last_keep : '1;
  logic [RecBeats*DataW-1:0] head_beats;  // the record padded to whole beats
  assign head_beats = (RecBeats * DataW)'(head_tlp);
  always_comb begin
    beat_o = '0;
    for (int j = 0; j < Bpb; j++) begin
      for (int b = 0; b < RecBeats; b++) begin
        if (32'(bi_q) == b && keep[j]) beat_o[j*8 +: 8] = head_beats[(b * Bpb + j)*8 +: 8];
      end
    end
    beat_o[DataW +: KeepW] = keep;
    beat_o[DataW + KeepW] = beat_last;
  end
  assign beat_valid_o = rq_rvalid;
  assign rq_pop = beat_valid_o && beat_ready_i && beat_last;

  always_comb begin
    valid_d = valid_q;
    if (wr_ok) valid_d[wr_peer] = 1'b1;
    bi_d = bi_q;
    if (beat_valid_o && beat_ready_i) bi_d = beat_last ? '0 : bi_q + RbW'(1);
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      valid_q <= '0;
      bi_q <= '0;
      rd_pend_q <= 1'b0;
      rq_pend_q <= 1'b0;
      rq_used_q <= '0;
    end else begin
      valid_q <= valid_d;
      bi_q <= bi_d;
      rd_pend_q <= replay_i;
      rq_pend_q <= rd_pend_q;
      rq_used_q <= rq_used_d;
    end
  end

  always_ff @(posedge clk_i) begin
    if (wr_ok) begin
      psn_mem_q[wr_peer] <= wr_psn_i;
      len_mem_q[wr_peer] <= wr_len_i;
      tlp_mem_q[wr_peer] <= wr_tlp_i;
    end
  end

  `NI_ASSERT(ReplayKept_A, replay_i |-> q_hit_o)
  `NI_ASSERT(ReplayRoom_A, rq_pend_q |-> rq_wready)
  `NI_ASSERT(RecordFits_A, wr_ok |-> (wr_len_i >= 5'd12 && 32'(wr_len_i) <= RecBytes))
endmodule

`default_nettype wire

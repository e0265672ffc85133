// SPDX-License-Identifier: Apache-2.0
// Formal harness of ni_dma_inj's ring pointers (scripts/formal.py, job dma_rings):
// two injection FIFOs of fixed sizes (software changes a size only while the FIFO is
// disabled, then resets it), every other input free: doorbells with any tail value,
// resets, enables, remote pushes, memory completions (as the block assumes them),
// back-pressure. Proved for every reachable state: each FIFO's head and tail stay
// inside its ring, and the size the engine uses is that ring's (size_o is 0 only in
// the first cycle after reset).
`default_nettype none
`include "ni_assert.svh"

module dma_rings #(
  parameter int unsigned Size0 = 5,
  parameter int unsigned Size1 = 3,
  localparam int unsigned NumFifos = 2,
  localparam int unsigned BeatW = 64 + 8 + 2
) (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic [NumFifos-1:0][63:0] base_i,
  input  logic [NumFifos-1:0] enable_i,
  input  logic [15:0] tail_i,           // one doorbell value, for the FIFO whose tail_we_i is set
  input  logic [NumFifos-1:0] tail_we_i,
  input  logic [NumFifos-1:0] reset_i,
  input  logic [NumFifos-1:0] remote_i,
  input  logic [NumFifos-1:0] push_i,
  input  logic [31:0] rndv_thresh_i,
  input  logic rd_ready_i,
  input  logic [63:0] s_cpl_tdata,
  input  logic [7:0] s_cpl_tkeep,
  input  logic s_cpl_tlast,
  input  logic s_cpl_tvalid,
  input  logic out_hdr_ready_i,
  input  logic out_beat_ready_i,
  input  logic raw_hdr_ready_i,
  input  logic raw_beat_ready_i,
  input  logic loc_beat_ready_i,
  input  logic [1:0] mem_valid_i,
  input  logic [1:0] mem_perm_r_i,
  input  logic [1:0] mem_perm_w_i,
  input  logic mem_we_i,
  input  logic mem_widx_i,
  input  logic [51:0] mem_wbase_i,
  input  logic [19:0] mem_wpages_i
);
  logic [NumFifos-1:0][15:0] size, size_used, head, tail;
  assign size[0] = 16'(Size0);
  assign size[1] = 16'(Size1);
  ni_pkg::tx_desc_t out_hdr;
  logic [BeatW-1:0] out_beat, loc_beat;
  logic [NumFifos-1:0] err, busy, ev_err;
  logic [NumFifos-1:0][3:0] code;
  logic ev_rts, rd_valid, out_hdr_valid, out_beat_valid, raw_hdr_valid, raw_beat_valid, loc_beat_valid;
  logic cpl_ready, inj_cnt_valid, loc_cnt_valid;
  logic [63:0] rd_addr;
  logic [12:0] rd_bytes, inj_cnt_bytes, loc_cnt_bytes;
  logic [7:0] rd_tag;
  logic [4:0] inj_cnt_id, loc_cnt_id;

  ni_dma_inj #(.DataW(64), .MaxPayload(64), .NumFifos(NumFifos), .SlotBytes(64), .BatchSlots(4),
               .NumMemId(2)) u_dut (
    .clk_i, .rst_ni, .node_id_i(16'h0001),
    .base_i, .size_i(size), .size_o(size_used), .enable_i, .tail_i, .tail_we_i, .reset_i, .remote_i, .push_i,
    .tail_o(tail), .head_o(head), .err_o(err), .err_code_o(code), .busy_o(busy),
    .rndv_thresh_i, .ev_rts_o(ev_rts),
    .rd_valid_o(rd_valid), .rd_ready_i, .rd_addr_o(rd_addr), .rd_bytes_o(rd_bytes), .rd_tag_o(rd_tag),
    .s_cpl_tdata, .s_cpl_tkeep, .s_cpl_tlast, .s_cpl_tvalid, .s_cpl_tready(cpl_ready),
    .out_hdr_o(out_hdr), .out_hdr_valid_o(out_hdr_valid), .out_hdr_ready_i,
    .out_beat_o(out_beat), .out_beat_valid_o(out_beat_valid), .out_beat_ready_i,
    .raw_hdr_valid_o(raw_hdr_valid), .raw_hdr_ready_i, .raw_beat_valid_o(raw_beat_valid), .raw_beat_ready_i,
    .mem_valid_i, .mem_perm_r_i, .mem_perm_w_i, .mem_we_i, .mem_widx_i, .mem_wbase_i, .mem_wpages_i,
    .loc_beat_o(loc_beat), .loc_beat_valid_o(loc_beat_valid), .loc_beat_ready_i,
    .inj_cnt_valid_o(inj_cnt_valid), .inj_cnt_id_o(inj_cnt_id), .inj_cnt_bytes_o(inj_cnt_bytes),
    .loc_cnt_valid_o(loc_cnt_valid), .loc_cnt_id_o(loc_cnt_id), .loc_cnt_bytes_o(loc_cnt_bytes),
    .ev_err_o(ev_err)
  );

  // The size in use is the ring's, from the first cycle after reset on.
  `NI_ASSERT(SizeInUse0_A, size_used[0] == size[0] || (size_used[0] == '0 && head[0] == '0 && tail[0] == '0 && !busy[0]))
  `NI_ASSERT(SizeInUse1_A, size_used[1] == size[1] || (size_used[1] == '0 && head[1] == '0 && tail[1] == '0 && !busy[1]))
  `NI_ASSERT(HeadInRing0_A, head[0] < size[0])
  `NI_ASSERT(TailInRing0_A, tail[0] < size[0])
  `NI_ASSERT(HeadInRing1_A, head[1] < size[1])
  `NI_ASSERT(TailInRing1_A, tail[1] < size[1])
endmodule

`default_nettype wire

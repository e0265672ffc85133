// SPDX-License-Identifier: Apache-2.0
// Formal harness of ni_fab_rx's reception-FIFO tails (scripts/formal.py, job
// fab_rx_rings): two reception FIFOs of 5 and 3 slots and two remote-fed injection
// FIFOs of 4 and 2 (sizes fixed, as software keeps them while a FIFO runs); every other
// input free: packets of any content (within the sender's credits), software heads of
// any value (RFIFO_HEAD), resets at any time. Proved for every reachable state: each
// reception FIFO's tail, where the NI writes the next entry, stays inside its ring, so
// no entry lands outside its FIFO's memory.
`default_nettype none
`include "ni_assert.svh"

module fab_rx_rings #(
  parameter int unsigned Rf0 = 5,
  parameter int unsigned Rf1 = 3,
  parameter int unsigned Ri0 = 4,
  parameter int unsigned Ri1 = 2
) (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic [15:0] node_id_i,
  input  logic [0:0] mcast_valid_i,
  input  logic [0:0][15:0] mcast_lid_i,
  input  logic [63:0] s_axis_tdata,
  input  logic [7:0] s_axis_tkeep,
  input  logic s_axis_tlast,
  input  logic s_axis_tdest,
  input  logic s_axis_tvalid,
  input  logic [1:0] mem_valid_i,
  input  logic [1:0] mem_perm_r_i,
  input  logic [1:0] mem_perm_w_i,
  input  logic [1:0] mem_perm_a_i,
  input  logic mem_we_i,
  input  logic mem_widx_i,
  input  logic [51:0] mem_wbase_i,
  input  logic [19:0] mem_wpages_i,
  input  logic [15:0] mem_wkey_i,
  input  logic trk_free_avail_i,
  input  logic [0:0] trk_free_tag_i,
  input  logic [1:0] rf_enable_i,
  input  logic [1:0][63:0] rf_base_i,
  input  logic [1:0][15:0] rf_head_i,
  input  logic [1:0] rf_reset_i,
  input  logic [1:0][15:0] rf_key_i,
  input  logic raw_enable_i,
  input  logic [7:0] raw_fifo_i,
  input  logic [1:0] ri_remote_i,
  input  logic [1:0] ri_err_i,
  input  logic [1:0][63:0] ri_base_i,
  input  logic [1:0][15:0] ri_head_i,
  input  logic [1:0] ri_reset_i,
  input  logic q_hit_i,
  input  logic q_held_i,
  input  logic q_conf_i,
  input  logic [23:0] q_cpl_i,
  input  logic [51:0] q_back_i,
  input  logic amo_hit_i,
  input  logic [4:0] amo_len_i,
  input  logic gen_ready_i,
  input  logic m_axis_tready,
  input  logic [1:0][15:0] ri_tail_i  // the engine's tails (in their rings: dma_rings)
);
  logic [1:0][15:0] rf_size, ri_size, ri_tail;
  assign rf_size = {16'(Rf1), 16'(Rf0)};
  assign ri_size = {16'(Ri1), 16'(Ri0)};
  assign ri_tail = ri_tail_i;
  // The engine's tail, where ours restarts on a reset, is inside its ring (dma_rings).
  `NI_ASSUME(EngineTailInRing_A, ri_tail_i[0] < ri_size[0] && ri_tail_i[1] < ri_size[1])
  logic s_axis_tready;
  logic [ni_pkg::NumVc-1:0] credit;
  logic trk_commit;
  logic [0:0] trk_commit_tag;
  logic [15:0] trk_commit_node;
  logic [15:0] trk_commit_reqid;
  logic [7:0] trk_commit_otag;
  logic [23:0] trk_commit_psn;
  logic [1:0] trk_commit_kind;
  logic [51:0] trk_commit_page;
  logic [1:0][15:0] rf_tail;
  logic [1:0] ri_push;
  logic ev_rget_rx;
  logic ev_key_err;
  logic rel_valid;
  logic [2:0] rel_kind;
  logic [15:0] rel_lid;
  logic [23:0] rel_psn;
  logic [15:0] q_lid;
  logic [23:0] q_psn;
  logic amo_replay;
  ni_pkg::tx_desc_t gen_hdr;
  logic gen_valid;
  logic [63:0] m_axis_tdata;
  logic [7:0] m_axis_tkeep;
  logic m_axis_tlast;
  logic m_axis_tuser;
  logic m_axis_tcni;
  logic m_axis_tvalid;
  logic ev_rx_pkt;
  logic ev_crc_err;
  logic ev_memid_err;
  logic ev_bounds_err;
  logic ev_nak_tx;
  logic ev_nak_rx;
  logic ev_bad_pkt;
  logic ev_rd_served;
  logic ev_dup;
  logic ev_oos;
  logic rcnt_valid;
  logic [4:0] rcnt_id;
  logic [12:0] rcnt_bytes;
  logic ev_rnr_tx;
  logic ev_rnr_rx;
  logic ev_raw_rx;
  logic ev_raw_drop;

  ni_fab_rx #(.DataW(64), .NumMemId(2), .MaxPayload(256), .RxCredits(2), .NumTags(2), .NumMcast(1),
              .NumPeers(2), .NumRfifo(2), .NumInj(2)) u_dut (
    .clk_i,
    .rst_ni,
    .node_id_i,
    .mcast_valid_i,
    .mcast_lid_i,
    .s_axis_tdata,
    .s_axis_tkeep,
    .s_axis_tlast,
    .s_axis_tdest,
    .s_axis_tvalid,
    .s_axis_tready(s_axis_tready),
    .credit_o(credit),
    .mem_valid_i,
    .mem_perm_r_i,
    .mem_perm_w_i,
    .mem_perm_a_i,
    .mem_we_i,
    .mem_widx_i,
    .mem_wbase_i,
    .mem_wpages_i,
    .mem_wkey_i,
    .trk_free_avail_i,
    .trk_free_tag_i,
    .trk_commit_o(trk_commit),
    .trk_commit_tag_o(trk_commit_tag),
    .trk_commit_node_o(trk_commit_node),
    .trk_commit_reqid_o(trk_commit_reqid),
    .trk_commit_otag_o(trk_commit_otag),
    .trk_commit_psn_o(trk_commit_psn),
    .trk_commit_kind_o(trk_commit_kind),
    .trk_commit_page_o(trk_commit_page),
    .rf_enable_i,
    .rf_base_i,
    .rf_size_i(rf_size),
    .rf_head_i,
    .rf_reset_i,
    .rf_key_i,
    .raw_enable_i,
    .raw_fifo_i,
    .rf_tail_o(rf_tail),
    .ri_remote_i,
    .ri_err_i,
    .ri_base_i,
    .ri_size_i(ri_size),
    .ri_head_i,
    .ri_tail_i(ri_tail),
    .ri_reset_i,
    .ri_push_o(ri_push),
    .ev_rget_rx_o(ev_rget_rx),
    .ev_key_err_o(ev_key_err),
    .rel_valid_o(rel_valid),
    .rel_kind_o(rel_kind),
    .rel_lid_o(rel_lid),
    .rel_psn_o(rel_psn),
    .q_lid_o(q_lid),
    .q_psn_o(q_psn),
    .q_hit_i,
    .q_held_i,
    .q_conf_i,
    .q_cpl_i,
    .q_back_i,
    .amo_hit_i,
    .amo_len_i,
    .amo_replay_o(amo_replay),
    .gen_hdr_o(gen_hdr),
    .gen_valid_o(gen_valid),
    .gen_ready_i,
    .m_axis_tdata(m_axis_tdata),
    .m_axis_tkeep(m_axis_tkeep),
    .m_axis_tlast(m_axis_tlast),
    .m_axis_tuser(m_axis_tuser),
    .m_axis_tcni(m_axis_tcni),
    .m_axis_tvalid(m_axis_tvalid),
    .m_axis_tready,
    .ev_rx_pkt_o(ev_rx_pkt),
    .ev_crc_err_o(ev_crc_err),
    .ev_memid_err_o(ev_memid_err),
    .ev_bounds_err_o(ev_bounds_err),
    .ev_nak_tx_o(ev_nak_tx),
    .ev_nak_rx_o(ev_nak_rx),
    .ev_bad_pkt_o(ev_bad_pkt),
    .ev_rd_served_o(ev_rd_served),
    .ev_dup_o(ev_dup),
    .ev_oos_o(ev_oos),
    .rcnt_valid_o(rcnt_valid),
    .rcnt_id_o(rcnt_id),
    .rcnt_bytes_o(rcnt_bytes),
    .ev_rnr_tx_o(ev_rnr_tx),
    .ev_rnr_rx_o(ev_rnr_rx),
    .ev_raw_rx_o(ev_raw_rx),
    .ev_raw_drop_o(ev_raw_drop)
  );

  `NI_ASSERT(RfTailInRing0_A, rf_tail[0] < rf_size[0])
  `NI_ASSERT(RfTailInRing1_A, rf_tail[1] < rf_size[1])
endmodule

`default_nettype wire

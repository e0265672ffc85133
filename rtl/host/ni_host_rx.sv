// SPDX-License-Identifier: Apache-2.0
// Host receive: classifies each TLP from the host port and routes it: CSR access,
// request through a window (to the fabric, VC0), completion of a read this NI
// serves (back to the fabric, VC1), completion of a DMA engine read, or refusal
// (counter, status, UR completion).
//
// Three pipelines, each a few logic levels a cycle from registers (docs/architecture.md,
// "the host receive pipeline"):
// - port side: the host's beats enter an 8-beat queue (the registered boundary), each
//   stored with its end byte and keep check; a TLP's header bytes are collected and
//   pushed, as its header beat enters, into a header queue, and its ART lookup starts;
// - decisions, ahead of the beats: a header is decoded (one stage), then decided with
//   its ART answer and, for a completion, the read tracker (the next): class, refusal,
//   rewrites and header records, into a queue of two decisions. A request's decision
//   reads the register block's window attributes, so none is made behind a register
//   write until that write took effect;
// - beats: the head beat goes on once its TLP is decided, with the length and keep
//   checks against the decision, into an output queue of two (the registered boundary
//   toward the combiner, the merge and the DMA engine).
// Skid registers (ni_skid) hold the heads the stages start from: the beat queue's, the
// ART answers', the decoded header, the decisions' control fields.
// What is passed on leaves exactly as long as its Length says: a malformed TLP is cut
// there or padded to it, and its last beat is marked bad (stomped).
`default_nettype none
`include "ni_assert.svh"

module ni_host_rx #(
  parameter int unsigned DataW = 64,
  parameter int unsigned MaxPayload = 256,
  parameter logic [63:0] CsrBase = 64'h0000_00F0_0000_0000,
  parameter logic [15:0] NiReqId = 16'h0100,
  parameter int unsigned NumArt = 16,  // windows: a write to ART_CTRL[i < NumArt] fences the lookups
  // Beats of the input queue: enough to hide a request's lookup and decision behind
  // the beats before it (a TLP's first beat waits in it for its decision). nic_top's
  // room toward the root complex counts them, and the ni_pkg::HostRxHeldBeats more the
  // block holds.
  parameter int unsigned InDepth = 8,
  localparam int unsigned Bpb = DataW / 8,
  localparam int unsigned KeepW = Bpb,
  localparam int unsigned AmoBytes = ni_pkg::AmoCplBytes
) (
  input  logic clk_i,
  input  logic rst_ni,
  // Hold the decisions (nic_top: a register write waits in its boundary register).
  input  logic dec_hold_i,
  // Host port, TLPs from the root complex.
  input  logic [DataW-1:0] s_axis_tdata,
  input  logic [KeepW-1:0] s_axis_tkeep,
  input  logic s_axis_tlast,
  input  logic s_axis_tvalid,
  output logic s_axis_tready,
  // ART lookup (ni_art): an address out, its answer some cycles later, in order. The
  // attributes kept in the register block (wc, conf_*, mcast_empty) are those of the
  // window art_win_o, the answer the decision is taking.
  output logic art_look_valid_o,
  output logic [63:0] art_addr_o,
  input  logic art_busy_i,      // the ART's table is being updated: no lookup now
  input  logic art_upd_done_i,  // an ART_CTRL write reached the ART's table
  input  logic art_res_valid_i,
  output logic [7:0] art_win_o,
  input  logic art_hit_i,
  input  logic art_rx_xlate_i,
  input  logic art_perm_r_i,
  input  logic art_perm_w_i,
  input  logic art_perm_a_i,
  input  logic art_wc_i,
  input  logic art_conf_all_i,     // every write through the window is confirmed
  input  logic [1:0] art_conf_at_i,  // its confirmation point (ni_pkg::CONF_AT_*)
  input  logic [7:0] art_index_i,
  input  logic [15:0] art_node_i,
  input  logic art_mcast_empty_i,  // art_node_i is an NI-replicated group without members
  input  logic [15:0] art_memid_i,
  input  logic [51:0] art_delta_i,      // added to the address's page: the page tunneled
  input  logic [51:0] art_back_page_i,  // -art_delta_i
  // Read tracker lookup for completions coming back from local memory, by the tag of
  // the completion being decided; released as it is decided.
  output logic [7:0] trk_tag_o,
  input  logic trk_hit_i,
  input  logic [15:0] trk_node_i,
  input  logic [15:0] trk_reqid_i,
  input  logic [9:0] trk_otag_i,     // the requester's tag, 10 bits
  input  logic [23:0] trk_psn_i,
  input  logic [1:0] trk_kind_i,     // ni_pkg::TRK_*
  input  logic [51:0] trk_page_i,    // memory-ID base page of a translated confirmed write
  output logic trk_release_o,
  // Completion of an atomic or memory-confirmed write served for a peer, as it left,
  // with the request's source and PSN (kept by ni_amo_cache for a resent duplicate).
  // TLP byte p at [8p +: 8].
  output logic amo_wr_valid_o,
  output logic [15:0] amo_wr_lid_o,
  output logic [23:0] amo_wr_psn_o,
  output logic [AmoBytes*8-1:0] amo_wr_tlp_o,
  output logic [4:0] amo_wr_len_o,
  // Tunnel requests (VC0) and responses (VC1) toward the fabric framer. A header
  // record is handed over with its TLP's first beat, which reaches the beat output
  // two cycles later.
  output ni_pkg::tx_desc_t req_hdr_o,
  output ni_pkg::wc_meta_t req_meta_o,  // for the write combiner, with req_hdr_o
  output logic req_hdr_valid_o,
  input  logic req_hdr_ready_i,
  output logic [DataW+KeepW+1:0] req_beat_o,  // {bad, last, keep, data}
  output logic req_beat_valid_o,
  input  logic req_beat_ready_i,
  output ni_pkg::tx_desc_t rsp_hdr_o,
  output logic rsp_hdr_valid_o,
  input  logic rsp_hdr_ready_i,
  output logic [DataW+KeepW+1:0] rsp_beat_o,
  output logic rsp_beat_valid_o,
  input  logic rsp_beat_ready_i,
  // Completions of the DMA engine's reads (tags 0x80-0x9F), whole TLPs.
  output logic [DataW-1:0] dma_cpl_tdata,
  output logic [KeepW-1:0] dma_cpl_tkeep,
  output logic dma_cpl_tlast,
  output logic dma_cpl_tuser,  // with tlast: the completion was malformed (stomped)
  output logic dma_cpl_tvalid,
  input  logic dma_cpl_tready,
  // CSR access (single DW), with the TLP's last beat.
  output logic csr_valid_o,
  input  logic csr_ready_i,
  output logic csr_write_o,
  output logic [11:0] csr_addr_o,
  output logic [31:0] csr_wdata_o,
  output logic [3:0] csr_be_o,
  output logic [15:0] csr_reqid_o,
  output logic [9:0] csr_tag_o,      // 10 bits: T9 and T8 of byte 1 above byte 6
  // Completion the NI makes toward the host: UR for a refused read, atomic or DMWr;
  // the confirmation of a write the sending NI confirms itself (CONF_AT_SENDER).
  output ni_pkg::own_cpl_t ur_o,
  output logic ur_valid_o,
  input  logic ur_ready_i,
  // Memory confirmed a write the NI confirmed on its behalf (CONF_AT_RX_NI): its tag.
  output logic mem_conf_valid_o,
  output logic [7:0] mem_conf_tag_o,
  output logic mem_conf_ok_o,   // status SC: memory took the write
  // Events, one per TLP with its last beat.
  output logic ev_win_miss_o,
  output logic ev_perm_o,
  output logic ev_malformed_o,
  output logic ev_unsup_o,
  output logic ev_cpl_unexp_o,
  output logic ev_poison_o  // a poisoned TLP (EP) passed on poisoned, or a poisoned register write dropped
);
  localparam int unsigned CapBytes = 20;  // TLP header + first data DW
  localparam int unsigned ResDepth = 8;  // answers of the ART waiting for their TLP's decision
  localparam int unsigned RcW = $clog2(ResDepth + 1);
  localparam int unsigned PosW = 14;     // byte positions: counted up to 16 KiB, then held
  localparam int unsigned BnW = 11;      // beat numbers: past the longest TLP's end at 64 bits
  localparam int unsigned KcntW = $clog2(Bpb + 1);

  typedef enum logic [2:0] {
    ClsReq, ClsRsp, ClsCsr, ClsDrop, ClsDma
  } cls_e;

  typedef enum logic [2:0] {
    ErrNone, ErrWinMiss, ErrPerm, ErrMalformed, ErrUnsup, ErrCplUnexp
  } err_e;

  // ============================================================ port side
  // The port's beat position (p_bs_q bytes, the next beat's p_nbs_q; and as a beat
  // index up to the header's, p_bidx_q); a TLP's header beat is the one that holds byte
  // 15 (the address's last), or its last beat if it ends before.
  localparam int unsigned HdrBeat = 15 / Bpb;
  localparam int unsigned BidxW = (HdrBeat > 0) ? $clog2(HdrBeat + 1) : 1;
  logic [PosW-1:0] p_bs_q, p_nbs_q, p_end;
  logic [BidxW-1:0] p_bidx_q;
  logic [127:0] p_cap_q, p_hdr_bytes;
  logic p_hdr_done_q, p_hdr, p_fence, p_acc;
  logic p_viol_q, p_stall_q, withdrawn;
  logic [KcntW-1:0] p_kcnt;
  logic p_hole;
  assign p_kcnt = KcntW'(ni_pkg::keep_count(64'(s_axis_tkeep)));
  // Where the beat's bytes end: a beat position is a multiple of Bpb, so below a full
  // beat the count is its low bits (no adder).
  assign p_end = (32'(p_kcnt) == Bpb) ? p_nbs_q : (p_bs_q | PosW'(p_kcnt));
  assign p_hdr = !p_hdr_done_q && (32'(p_bidx_q) == HdrBeat || s_axis_tlast);
  // Every beat but the last has all its bytes, the last a run of lanes from lane 0.
  assign p_hole = s_axis_tlast ? (s_axis_tkeep & (s_axis_tkeep + KeepW'(1))) != '0 : s_axis_tkeep != '1;
  // The header's 16 bytes: those of earlier beats, and this beat's.
  always_comb begin
    p_hdr_bytes = p_cap_q;
    for (int p = 0; p < 16; p++) begin
      if (p / Bpb == 32'(p_bidx_q)) p_hdr_bytes[p*8 +: 8] = s_axis_tdata[(p % Bpb)*8 +: 8];
    end
  end

  // Lookups: the address of each TLP but a completion (Cpl, CplD: first byte), taken as
  // its header beat enters; a write to ART_CTRL fences (below).
  logic lk_valid_q, lk_fence_q, lk_go, lk_room;
  logic [63:0] lk_addr_q, p_addr;
  logic p_cpl, p_data;
  assign p_cpl = ni_pkg::is_cpl(p_hdr_bytes[7:0]);
  assign p_data = p_hdr_bytes[6];
  always_comb begin
    for (int k = 0; k < 8; k++) p_addr[k*8 +: 8] = p_hdr_bytes[(15 - k)*8 +: 8];
    p_addr[1:0] = 2'b00;
    p_fence = 1'b0;
    for (int i = 0; i < NumArt; i++) begin
      if (p_data && p_addr[63:12] == CsrBase[63:12] && p_addr[11:0] == 12'h11c + 12'(i * 32)) p_fence = 1'b1;
    end
  end

  // The beat queue: {viol, hole, bytes kept, last, keep, data}. viol: the host withdrew
  // tvalid before a beat was taken (a protocol violation) since the last TLP ended.
  localparam int unsigned QW = 2 + KcntW + 1 + KeepW + DataW;
  logic [DataW-1:0] f_tdata;
  logic [KeepW-1:0] f_tkeep;
  logic [KcntW-1:0] f_kcnt;
  logic f_tlast, f_hole, f_viol, f_qvalid, f_tready, in_wready, in_valid, in_take;
  logic [QW-1:0] in_head;
  // The header queue: one entry per TLP, {completion (no lookup), fence, last, end
  // byte, header bytes}.
  localparam int unsigned HqW = 1 + 1 + 1 + PosW + 128;
  logic [HqW-1:0] hq_head;
  logic hq_wready, hq_valid, hq_pop;
  assign lk_room = !lk_valid_q || lk_go;
  // Until a TLP's header beat is in, a beat may be it: it needs room in the header
  // queue and the lookup register too (registers only: the host's tlast comes late).
  logic hdr_room;
  assign hdr_room = p_hdr_done_q || (hq_wready && lk_room);
  assign s_axis_tready = in_wready && hdr_room;
  assign p_acc = s_axis_tvalid && s_axis_tready;
  // (Both written from their counts, FreeWrite: the host's valid comes late.)
  ni_fifo #(.Width(QW), .Depth(InDepth), .FreeWrite(1)) u_in_q (
    .clk_i, .rst_ni,
    .wdata_i({p_viol_q, p_hole, p_kcnt, s_axis_tlast, s_axis_tkeep, s_axis_tdata}),
    .wvalid_i(s_axis_tvalid && hdr_room), .wready_o(in_wready),
    .rdata_o(in_head), .rvalid_o(in_valid), .rready_i(in_take));
  // The head beat waits in a skid register: the beat stage starts from registers.
  ni_skid #(.Width(QW)) u_in_skid (
    .clk_i, .rst_ni, .wdata_i(in_head), .wvalid_i(in_valid), .wready_o(in_take),
    .rdata_o({f_viol, f_hole, f_kcnt, f_tlast, f_tkeep, f_tdata}), .rvalid_o(f_qvalid), .rready_i(f_tready));
  ni_fifo #(.Width(HqW), .Depth(InDepth), .FreeWrite(1)) u_hdr_q (
    .clk_i, .rst_ni, .wdata_i({p_cpl, p_fence, s_axis_tlast, p_end, p_hdr_bytes}),
    .wvalid_i(p_acc && p_hdr), .wready_o(hq_wready),
    .rdata_o(hq_head), .rvalid_o(hq_valid), .rready_i(hq_pop));
  assign withdrawn = p_stall_q && !s_axis_tvalid;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      p_bs_q <= '0;
      p_nbs_q <= PosW'(Bpb);
      p_bidx_q <= '0;
      p_hdr_done_q <= 1'b0;
      p_viol_q <= 1'b0;
      p_stall_q <= 1'b0;
      lk_valid_q <= 1'b0;
    end else begin
      if (p_acc) begin
        p_bs_q <= s_axis_tlast ? '0 : (p_nbs_q[PosW-1] ? p_bs_q : p_nbs_q);
        p_nbs_q <= s_axis_tlast ? PosW'(Bpb) : (p_nbs_q[PosW-1] ? p_nbs_q : p_nbs_q + PosW'(Bpb));
        p_bidx_q <= s_axis_tlast ? '0 : (32'(p_bidx_q) == HdrBeat ? p_bidx_q : p_bidx_q + BidxW'(1));
        p_hdr_done_q <= !s_axis_tlast && (p_hdr_done_q || p_hdr);
      end
      p_viol_q <= !(p_acc && s_axis_tlast) && (p_viol_q || withdrawn);
      p_stall_q <= s_axis_tvalid && !s_axis_tready;
      if (p_acc && p_hdr && !p_cpl) lk_valid_q <= 1'b1;
      else if (lk_go) lk_valid_q <= 1'b0;
    end
  end
  // Without the handshake as an enable: a beat offered writes its lanes until it is
  // taken (the next one has lanes of its own), and the lookup's address is taken in
  // every cycle the lookup register is free (valid only with a header beat taken).
  always_ff @(posedge clk_i) begin
    p_cap_q <= p_hdr_bytes;
    if (lk_room) begin
      lk_addr_q <= p_addr;
      lk_fence_q <= p_fence;
    end
  end

  // ============================================================ decode (stage 1)
  // The ART's answers, in the order of the TLPs that take a lookup (every TLP but a
  // completion: the answers to the host's and the DMA engine's reads cross without
  // the ART's latency).
  localparam int unsigned ArtW = 5 + 8 + 16 + 16 + 52 + 52;
  logic [ArtW-1:0] r_head, r_qhead;
  logic r_valid, r_pop, r_room, r_qvalid, r_qtake;
  ni_fifo #(.Width(ArtW), .Depth(ResDepth), .FallThrough(1), .FreeWrite(1)) u_res_q (
    .clk_i, .rst_ni,
    .wdata_i({art_hit_i, art_rx_xlate_i, art_perm_r_i, art_perm_w_i, art_perm_a_i, art_index_i,
              art_node_i, art_memid_i, art_delta_i, art_back_page_i}),
    .wvalid_i(art_res_valid_i), .wready_o(r_room), .rdata_o(r_qhead), .rvalid_o(r_qvalid), .rready_i(r_qtake));
  // The answer the decision takes sits in a skid register: the decision starts from
  // registers (and so does the window index the register block reads attributes by).
  // The ART's answer is not registered in the ART (its priority and table read follow
  // its compare register): this queue and skid register are the boundary's register.
  ni_skid #(.Width(ArtW)) u_res_skid (
    .clk_i, .rst_ni, .wdata_i(r_qhead), .wvalid_i(r_qvalid), .wready_o(r_qtake),
    .rdata_o(r_head), .rvalid_o(r_valid), .rready_i(r_pop));
  // The header at the head of the header queue is read into a register (k0_q), then
  // decoded into a skid register (k1), where it meets its ART answer (a request's).
  logic [HqW-1:0] k0_q;
  logic k0_valid_q, k0_move;
  logic [127:0] hb;
  logic [PosW-1:0] h_end;
  logic h_cpl, h_fence, h_last;
  assign {h_cpl, h_fence, h_last, h_end, hb} = k0_q;

  logic [7:0] ft;
  logic [9:0] len_dw;
  logic [12:0] len_bytes;
  logic [63:0] addr;
  logic is_mwr, is_atomic;
  logic [4:0] op_bytes;  // atomic operand size
  logic [12:0] tlp_hdr_bytes, fwd_bytes;
  assign ft = hb[0 +: 8];
  assign len_dw = {hb[2*8 +: 2], hb[3*8 +: 8]};
  assign len_bytes = (len_dw == 10'd0) ? 13'd4096 : {1'b0, len_dw, 2'b00};
  always_comb begin
    for (int k = 0; k < 8; k++) addr[k*8 +: 8] = hb[(15 - k)*8 +: 8];
    addr[1:0] = 2'b00;
  end
  assign is_mwr = ft == ni_pkg::TLP_MWR64;
  assign is_atomic = ni_pkg::is_atomic(ft);
  // AtomicOp operands: FetchAdd/Swap 4 or 8 bytes; CAS carries compare and swap
  // values of 4, 8 or 16 bytes each. The target is aligned to the operand size.
  always_comb begin
    op_bytes = '0;
    if (ft == ni_pkg::TLP_CAS64) begin
      if (len_dw == 10'd2 || len_dw == 10'd4 || len_dw == 10'd8) op_bytes = 5'(len_dw * 2);
    end else if (len_dw == 10'd1 || len_dw == 10'd2) begin
      op_bytes = 5'(len_dw * 4);
    end
  end
  assign tlp_hdr_bytes = ft[5] ? 13'd16 : 13'd12;  // Fmt bit 0: a 4DW header (completions are 3DW)
  assign fwd_bytes = tlp_hdr_bytes + (ft[6] ? len_bytes : 13'd0);
  // With the digest: the small constants added first, so each is one adder on the Length.
  logic [12:0] exp_bytes;
  assign exp_bytes = (tlp_hdr_bytes + (hb[2*8 + 7] ? 13'd4 : 13'd0)) + (ft[6] ? len_bytes : 13'd0);

  typedef struct packed {
    logic fence;           // the ART_CTRL write that fenced the lookups
    logic is_cpl, is_mrd, is_mwr, is_dmwr, is_atomic, is_np_unsup, is_p_unsup;
    logic has_data, td, ep;
    logic runt, runt_named;  // cut inside its header; still naming requester and tag
    logic bad_shape;       // atomic of an illegal size or alignment, or too long, or across 4 KiB
    logic csr_hit;         // the NI's own registers
    logic one_dw;          // Length 1 DW
    logic be_full;         // every byte enabled (combinable)
    logic cpl_ni, cpl_dma; // a completion for the NI's requester ID; of a DMA engine read
    logic cpl_ok;          // completion status SC
    logic [12:0] exp_bytes;  // where the TLP's bytes end (digest included)
    logic [12:0] fwd_bytes;  // where the TLP passed on ends (no digest)
    logic [12:0] len_bytes;
    logic [7:0] ft;
    logic [7:0] be;
    logic [9:0] tag;       // 10 bits: T9, T8 (byte 1 bits 7, 3) and byte 6
    logic [15:0] reqid;
    logic [63:0] addr;     // request address; a completion's requester ID and tag are its bytes 8-10
  } dec_t;
  localparam int unsigned DecW = 20 + 3 * 13 + 8 + 8 + 10 + 16 + 64;  // $bits(dec_t), for Yosys
`ifdef VERILATOR
  if (DecW != $bits(dec_t)) begin : gen_bad_dec_width
    $error("ni_host_rx: DecW does not match dec_t");
  end
`endif
  dec_t k1_d, k1;
  logic k1_valid, k1_take, k1_room;
  always_comb begin
    k1_d.fence = h_fence;
    k1_d.is_cpl = ni_pkg::is_cpl(ft);
    k1_d.is_mrd = ft == ni_pkg::TLP_MRD64;
    k1_d.is_mwr = is_mwr;
    k1_d.is_dmwr = ni_pkg::is_dmwr(ft);
    k1_d.is_atomic = is_atomic;
    // Requests of kinds this NI does not carry: 3DW memory requests, atomics and DMWr;
    // non-posted I/O and configuration requests (IORd, IOWr, CfgRd0/1, CfgWr0/1), which
    // a root complex waits for: each gets a UR completion.
    k1_d.is_np_unsup = (ft == ni_pkg::TLP_MRD32) || (ft == 8'h4C) || (ft == 8'h4D) ||
                       (ft == 8'h4E) || (ft == 8'h5B) || (ft == 8'h02) || (ft == 8'h42) ||
                       (ft == 8'h04) || (ft == 8'h05) || (ft == 8'h44) || (ft == 8'h45);
    k1_d.is_p_unsup = ft == ni_pkg::TLP_MWR32;
    k1_d.has_data = ft[6];
    k1_d.td = hb[2*8 + 7];
    k1_d.ep = hb[2*8 + 6];
    k1_d.runt = h_last && h_end < PosW'(tlp_hdr_bytes);
    k1_d.runt_named = h_end >= PosW'(8);
    k1_d.bad_shape = is_atomic ? !(op_bytes != '0 && (addr[3:0] & 4'(op_bytes - 5'd1)) == 4'd0)
                               : (len_bytes > 13'(MaxPayload) || ({1'b0, addr[11:0]} + len_bytes) > 13'd4096);
    k1_d.csr_hit = addr[63:12] == CsrBase[63:12];
    k1_d.one_dw = len_dw == 10'd1;
    k1_d.be_full = hb[7*8 +: 4] == 4'hF && ((len_dw == 10'd1) ? hb[7*8+4 +: 4] == 4'h0 : hb[7*8+4 +: 4] == 4'hF);
    // The NI's own requests use 8-bit tags: a completion naming a 10-bit tag (T9 or T8
    // set) is not the answer to one of them.
    k1_d.cpl_ni = {hb[8*8 +: 8], hb[9*8 +: 8]} == NiReqId && !hb[1*8 + 7] && !hb[1*8 + 3];
    k1_d.cpl_dma = hb[10*8+5 +: 3] == 3'b100;  // tags 0x80-0x9F
    k1_d.cpl_ok = hb[6*8+5 +: 3] == ni_pkg::CPL_SC;
    k1_d.fwd_bytes = fwd_bytes;
    k1_d.exp_bytes = exp_bytes;
    k1_d.len_bytes = len_bytes;
    k1_d.ft = ft;
    k1_d.be = hb[7*8 +: 8];
    k1_d.tag = {hb[1*8 + 7], hb[1*8 + 3], hb[6*8 +: 8]};
    k1_d.reqid = {hb[4*8 +: 8], hb[5*8 +: 8]};
    k1_d.addr = addr;
  end
  // The decoded headers wait in a skid register, whose room is a register: no ready
  // runs from the decisions back through the stages before them.
  assign k0_move = k0_valid_q && k1_room;
  assign hq_pop = hq_valid && (!k0_valid_q || k0_move);
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) k0_valid_q <= 1'b0;
    else if (!k0_valid_q || k0_move) k0_valid_q <= hq_valid;
  end
  always_ff @(posedge clk_i) begin
    if (hq_pop) k0_q <= hq_head;
  end
  ni_skid #(.Width(DecW)) u_k1_q (
    .clk_i, .rst_ni, .wdata_i(k1_d), .wvalid_i(k0_move), .wready_o(k1_room),
    .rdata_o(k1), .rvalid_o(k1_valid), .rready_i(k1_take));

  // ============================================================ decision (stage 2)
  logic art_hit, art_rx_xlate, art_perm_r, art_perm_w, art_perm_a;
  logic [7:0] art_index;
  logic [15:0] art_node, art_memid;
  logic [63:0] art_out_addr;
  logic [51:0] art_delta, art_back_page;
  assign {art_hit, art_rx_xlate, art_perm_r, art_perm_w, art_perm_a, art_index, art_node, art_memid,
          art_delta, art_back_page} = r_head;
  // The address as tunneled: the ART gives the page delta, added here from registers (the
  // answer's skid and the decoded header) into the decision queue, beside the decision.
  assign art_out_addr = {k1.addr[63:12] + art_delta, k1.addr[11:0]};
  // The window's write combining, confirmation and group state (art_wc_i, art_conf_*_i,
  // art_mcast_empty_i) are kept in the register block, read by art_win_o as it is decided.
  assign art_win_o = art_index;
  assign trk_tag_o = k1.addr[5*8 +: 8];  // a completion's byte 10: its tag
  // A window whose destination is a multicast LID (0xC000 and up, as in IB) takes writes only.
  logic art_mcast;
  assign art_mcast = art_node[15:14] == 2'b11;

  cls_e cls;
  err_e err;
  logic ur;
  always_comb begin
    cls = ClsDrop;
    err = ErrMalformed;
    ur = 1'b0;
    if (k1.runt) begin
      // A non-posted request cut inside its header still names its requester and tag
      // (bytes 4-6): it gets its UR.
      ur = k1.runt_named && (k1.is_mrd || k1.is_atomic || k1.is_dmwr || k1.is_np_unsup);
    end else if (k1.is_cpl) begin
      if (k1.cpl_ni && k1.cpl_dma) begin
        cls = ClsDma;  // a read of the DMA engine
        err = ErrNone;
      end else if (trk_hit_i && k1.cpl_ni) begin
        // Memory's confirmation of a write this NI confirmed already ends here.
        cls = (trk_kind_i == ni_pkg::TRK_CONF_NI) ? ClsDrop : ClsRsp;
        err = ErrNone;
      end else begin
        err = ErrCplUnexp;
      end
    end else if (k1.is_mrd || k1.is_mwr || k1.is_dmwr || k1.is_atomic) begin
      // Memory requests; a refused read, atomic or DMWr is answered with UR.
      ur = !k1.is_mwr;
      if (k1.bad_shape) begin
        err = ErrMalformed;
      end else if (k1.csr_hit) begin
        if (k1.is_atomic || k1.is_dmwr) begin
          err = ErrUnsup;  // the registers take single-DW reads and writes only
        end else if (k1.one_dw) begin
          cls = ClsCsr;  // a read keeps its UR for the case its length turns out wrong
          err = ErrNone;
        end
      end else if (!art_hit) begin
        err = ErrWinMiss;
      end else if (k1.is_mrd ? !art_perm_r : (k1.is_mwr || k1.is_dmwr) ? !art_perm_w : !art_perm_a) begin
        err = ErrPerm;
      end else if (art_mcast && (!k1.is_mwr || art_mcast_empty_i)) begin
        err = ErrUnsup;  // a multicast group takes posted writes only, and needs members
      end else begin
        cls = ClsReq;
        err = ErrNone;
        ur = 1'b0;
      end
    end else if (k1.is_np_unsup) begin
      err = ErrUnsup;
      ur = 1'b1;
    end else if (k1.is_p_unsup) begin
      err = ErrUnsup;
    end
  end

  // Confirmed writes: a DMWr, or any write through a window with conf_all (not to a
  // multicast group: those stay posted). The confirmation point is the window's. The
  // sending NI's confirmation goes to the CPU at once and the write travels as an MWr;
  // the receiver's points travel as a DMWr with the point in the TEH flags.
  logic confirmed, conf_sender, conf_rx_ni;
  assign confirmed = k1.is_dmwr || (k1.is_mwr && art_conf_all_i && !art_mcast);
  assign conf_sender = confirmed && art_conf_at_i == ni_pkg::CONF_AT_SENDER;
  assign conf_rx_ni = confirmed && art_conf_at_i == ni_pkg::CONF_AT_RX_NI;

  // The decision: what the beats of the TLP need. The fields the beat stage decides on
  // come last (Ctl*): they wait in a skid register, the data fields in LUT RAM.
  typedef struct packed {
    logic [12:0] fwd_bytes;  // where the TLP passed on ends (no digest)
    logic [7:0] ft_out;    // TLP type byte as passed on
    logic [7:0] be;
    logic [9:0] tag;
    logic [15:0] reqid;
    logic [63:0] addr;     // the request's address (a confirmation names it)
    // The request's address as tunneled; a completion: {requester ID, tag bits 7:0,
    // 38'h0, tag bits 9:8} (bytes 8-10, and T9, T8 of byte 1).
    logic [63:0] out_addr;
    logic [15:0] node;     // destination LID; of a completion, its requester's
    logic [15:0] memid;
    logic [23:0] psn;      // a completion's request's PSN
    logic [3:0] teh;       // TEH flags of a request: conf at memory, conf at the NI, rx_xlate
    logic [51:0] page;     // a request: its page offset from the window (ni_retx); a confirmation: memory-ID base page
    logic [10:0] pkt_words;
    logic wc;              // combinable
    logic [7:0] win;
    logic [12:0] len_bytes;
    // Control fields.
    logic [2:0] cls;       // cls_e
    logic is_req, is_rsp;  // cls is ClsReq, ClsRsp (registered: the beat's rewrites read them)
    logic [2:0] err;       // err_e
    logic ur;              // refused and answered UR at its last beat (if non-posted)
    logic own;             // may make a completion of its own at its last beat (UR, confirmation)
    logic conf_sender;     // a write the sending NI confirms
    logic runt, has_data, ep;
    logic csr_write;       // a register write (the decisions after it wait for it)
    logic fence;           // the ART_CTRL write that fenced the lookups
    logic conf_mem;        // a memory-confirmed write's confirmation: its address goes back
    logic amo;             // an atomic's or memory-confirmed write's completion: recorded
    logic amo_fits;        // ... and short enough to be (AmoBytes)
    logic td;              // a digest follows the TLP passed on
    logic [KeepW-1:0] end_keep;  // the lanes of the beat where the TLP passed on ends
    // Where the TLP's bytes end (digest included), and where what is passed on ends: the
    // beat (numbered from 0) and the bytes kept in it (1 to Bpb).
    logic [BnW-1:0] exp_beat, fwd_beat;
    logic [KcntW-1:0] exp_lane, fwd_lane;
  } dcs_t;
  localparam int unsigned CtlW = 3 + 2 + 3 + 12 + KeepW + 2 * BnW + 2 * KcntW;
  localparam int unsigned DcsW = 13 + 8 + 8 + 10 + 16 + 64 + 64 + 16 + 16 + 24 + 4 + 52 + 11 + 1 + 8 + 13 + CtlW;
`ifdef VERILATOR
  if (DcsW != $bits(dcs_t)) begin : gen_bad_dcs_width
    $error("ni_host_rx: DcsW does not match dcs_t");
  end
`endif
  dcs_t dn, dh;
  logic dq_wready, dq_valid, dq_pop, dec_take;
  logic [1:0] csr_pend_q;  // register writes decided and not yet made (the decisions' queue holds two)
  always_comb begin
    dn = '0;
    dn.cls = cls;
    dn.is_req = cls == ClsReq;
    dn.is_rsp = cls == ClsRsp;
    dn.err = err;
    dn.ur = ur;
    dn.conf_sender = cls == ClsReq && conf_sender;
    dn.own = (ur && (cls == ClsDrop || cls == ClsCsr)) || dn.conf_sender;
    dn.runt = k1.runt;
    dn.has_data = k1.has_data;
    dn.ep = k1.ep;
    dn.csr_write = cls == ClsCsr && k1.has_data;
    dn.fence = k1.fence && !k1.is_cpl;
    dn.conf_mem = cls == ClsRsp && trk_kind_i == ni_pkg::TRK_CONF_MEM;
    dn.amo = cls == ClsRsp && (trk_kind_i == ni_pkg::TRK_ATOMIC || trk_kind_i == ni_pkg::TRK_CONF_MEM);
    dn.td = k1.exp_bytes != k1.fwd_bytes;
    dn.fwd_bytes = k1.fwd_bytes;
    dn.amo_fits = k1.fwd_bytes <= 13'(AmoBytes);
    dn.ft_out = (cls != ClsReq || !confirmed) ? k1.ft : conf_sender ? ni_pkg::TLP_MWR64 : ni_pkg::TLP_DMWR64;
    dn.be = k1.be;
    dn.tag = k1.tag;
    dn.reqid = k1.reqid;
    dn.addr = k1.addr;
    dn.len_bytes = k1.len_bytes;
    for (int j = 0; j < KeepW; j++) begin
      dn.end_keep[j] = (k1.fwd_bytes % 13'(Bpb) == 13'd0) || 13'(j) < k1.fwd_bytes % 13'(Bpb);
    end
    dn.exp_beat = BnW'((k1.exp_bytes - 13'd1) / 13'(Bpb));
    dn.exp_lane = KcntW'((k1.exp_bytes - 13'd1) % 13'(Bpb)) + KcntW'(1);
    dn.fwd_beat = BnW'((k1.fwd_bytes - 13'd1) / 13'(Bpb));
    dn.fwd_lane = KcntW'((k1.fwd_bytes - 13'd1) % 13'(Bpb)) + KcntW'(1);
    dn.pkt_words = 11'((13'(ni_pkg::FabHdrBytes) + k1.fwd_bytes + 13'd4) >> 2);
    if (k1.is_cpl) begin
      dn.out_addr = {trk_reqid_i, trk_otag_i[7:0], 38'h0, trk_otag_i[9:8]};
      dn.node = trk_node_i;
      dn.psn = trk_psn_i;
      dn.page = trk_page_i;
    end else begin
      dn.out_addr = art_out_addr;
      dn.node = art_node;
      dn.memid = art_memid;
      dn.teh = {confirmed && !conf_sender && !conf_rx_ni, conf_rx_ni, 1'b0, art_rx_xlate};
      dn.page = art_back_page;
      // A write the combiner may merge: posted, through a combining window, every byte
      // enabled (First BE all ones; Last BE all ones, or none for a single DW).
      dn.wc = k1.is_mwr && !confirmed && art_wc_i && k1.be_full;
      dn.win = art_index;
    end
  end
  // A decision is taken when there is room for it, with the TLP's ART answer (a
  // completion needs none). One that reads the register block's window attributes (every
  // TLP but a completion or a register access) waits behind a register write until
  // that write has taken effect; register accesses keep their order on the beats.
  logic reads_regs;
  assign reads_regs = !k1.is_cpl && !k1.csr_hit;
  assign dec_take = k1_valid && (k1.is_cpl || r_valid) && dq_wready && (csr_pend_q == '0 || !reads_regs) &&
                    !dec_hold_i;
  assign r_pop = dec_take && !k1.is_cpl;
  assign k1_take = dec_take;
  // The decisions, two deep: the control fields in a skid register (the beat stage
  // starts from registers), the data fields in LUT RAM written from the count
  // (FreeWrite), in DqParts queues side by side (one write enable would drive every cell
  // of the record). All are written and read together.
  localparam int unsigned DatW = DcsW - CtlW;
  localparam int unsigned DqParts = 3;
  localparam int unsigned DqPartW = (DatW + DqParts - 1) / DqParts;
  logic [DqParts*DqPartW-1:0] dn_w, dh_w;
  logic [DqParts-1:0] dq_part_wready, dq_part_valid;
  logic [CtlW-1:0] dh_ctl;
  logic dq_ctl_wready, dq_ctl_valid;
  assign dn_w = (DqParts*DqPartW)'(dn[DcsW-1:CtlW]);
  assign dh = {dh_w[DatW-1:0], dh_ctl};
  ni_skid #(.Width(CtlW)) u_dec_ctl_q (
    .clk_i, .rst_ni, .wdata_i(dn[CtlW-1:0]), .wvalid_i(dec_take), .wready_o(dq_ctl_wready),
    .rdata_o(dh_ctl), .rvalid_o(dq_ctl_valid), .rready_i(dq_pop));
  for (genvar k = 0; k < DqParts; k++) begin : gen_dec_q
    ni_fifo #(.Width(DqPartW), .Depth(2), .FreeWrite(1)) u_dec_q (
      .clk_i, .rst_ni, .wdata_i(dn_w[k*DqPartW +: DqPartW]), .wvalid_i(dec_take), .wready_o(dq_part_wready[k]),
      .rdata_o(dh_w[k*DqPartW +: DqPartW]), .rvalid_o(dq_part_valid[k]), .rready_i(dq_pop));
  end
  assign dq_wready = dq_ctl_wready;
  assign dq_valid = dq_ctl_valid;
  `NI_ASSERT(DecPartsTogether_A, dq_part_valid == {DqParts{dq_valid}} && dq_part_wready == {DqParts{dq_wready}})

  // The tracker's entry is taken with the decision (its fields are in the decision):
  // a completion served, and memory's confirmation of a write the NI confirmed, which
  // ends here and releases the NI's copy (mem_conf_*).
  logic consume;
  assign consume = dec_take && k1.is_cpl && cls == ClsDrop && err == ErrNone;
  assign trk_release_o = (dec_take && k1.is_cpl && cls == ClsRsp) || consume;
  assign mem_conf_valid_o = consume;
  assign mem_conf_ok_o = k1.cpl_ok;
  assign mem_conf_tag_o = trk_tag_o;

  // ============================================================ beats
  // The TLP at the head of the beat queue is the one at the head of the decisions.
  logic [PosW-1:0] bs_q, nbs_q;  // byte position of the head beat, and of the one after it
  logic [BnW-1:0] bn_q;          // its number in its TLP (held at its largest)
  // The head beat's index among the beats that hold the first AmoBytes bytes (those
  // read or rewritten here), held one past them: a lane's byte is found without an adder.
  localparam int unsigned BiMax = (AmoBytes - 1) / Bpb + 1;
  logic [BiMax:0] bidx_oh_q;     // one-hot: a lane's rewrite is chosen by one bit
  logic first_q;                 // the head beat is its TLP's first
  cls_e cur_cls;
  logic fwd_cls, accept;
  assign cur_cls = cls_e'(dh.cls);
  assign fwd_cls = cur_cls == ClsReq || cur_cls == ClsRsp || cur_cls == ClsDma;

  // A TLP's bytes must end where its Length (and digest) say. past_q: a beat before its
  // last already reached that end (the count is not needed past it, so no length wraps
  // it). A beat before the last leaves whole (a hole in it makes the TLP malformed), so
  // it reaches an end by its lanes. The beats are counted (bn_q), so each check is an
  // equality with the decision's end beat and, in the last beat, a compare of its bytes.
  logic past_q, reach, lanes_reach, reach_fwd, len_bad, tlp_bad, cut_q, hole_q;
  logic at_exp, at_fwd;
  assign at_exp = bn_q == dh.exp_beat;
  assign at_fwd = bn_q == dh.fwd_beat;
  assign reach = past_q || (at_exp && (!f_tlast || f_kcnt >= dh.exp_lane));
  assign lanes_reach = cut_q || at_fwd;
  assign reach_fwd = f_tlast ? cut_q || (at_fwd && f_kcnt >= dh.fwd_lane) : lanes_reach;
  assign len_bad = f_tlast && (past_q || (!(at_exp && f_kcnt == dh.exp_lane) && !dh.runt));
  // A hole in a beat, a withdrawn tvalid or the wrong length: the TLP is malformed.
  assign tlp_bad = len_bad || (f_tlast && (hole_q || f_hole || f_viol));

  // The header view: the TLP's first 20 bytes as they arrive (register data, the
  // confirmation's address), with this beat's.
  logic [CapBytes*8-1:0] cap_q, view;
  always_comb begin
    view = cap_q;
    for (int p = 0; p < CapBytes; p++) begin
      if (bidx_oh_q[p / Bpb]) view[p*8 +: 8] = f_tdata[(p % Bpb)*8 +: 8];
    end
  end

  // The beat with this TLP's rewrites: TD cleared (the digest does not go on); a
  // request's type byte and address; a completion's requester ID and tag; a
  // memory-confirmed write's confirmation names the address as it was tunneled (minus
  // the memory ID's base; least significant byte first, so every beat has the bytes
  // below the ones it changes).
  logic [63:0] conf_back;
  // The subtraction in two halves, bytes 12-15 and 16-19: at 128 bits and below they
  // arrive in two beats, and the borrow of the first half waits in a register (written
  // while the beat holding byte 12 is at the head, as cap_q is).
  localparam bit ConfSplit = 12 / Bpb != 16 / Bpb;
  logic [32:0] cb_lo;
  logic cb_borrow_q;
  assign cb_lo = {1'b0, view[12*8 +: 32]} - {1'b0, dh.page[19:0], 12'h0};
  logic cb_borrow;
  assign cb_borrow = ConfSplit ? cb_borrow_q : cb_lo[32];
  assign conf_back = {view[16*8 +: 32] - dh.page[51:20] - 32'(cb_borrow), cb_lo[31:0]};
  // The subtraction has a cycle of its own: a beat holding any of the bytes 12-19 of a
  // memory-confirmed write's confirmation waits at the head for a cycle (cb_ready_q),
  // while the result goes into conf_back_q (written in every cycle from the head beat).
  // Such confirmations are rare and short; no other beat waits.
  logic [63:0] conf_back_q;
  logic cb_need, cb_ready_q;
  assign cb_need = dh.conf_mem && (bidx_oh_q[12 / Bpb] || bidx_oh_q[16 / Bpb]);
  always_ff @(posedge clk_i) begin
    if (bidx_oh_q[12 / Bpb]) cb_borrow_q <= cb_lo[32];
    conf_back_q <= conf_back;
  end
  logic [DataW-1:0] in_data;
  always_comb begin
    in_data = f_tdata;
    if (first_q) in_data[2*8 + 7] = 1'b0;
    if (first_q) in_data[7:0] = dh.ft_out;
    if (dh.is_req) begin
      for (int p = 8; p < 16; p++) begin
        if (bidx_oh_q[p / Bpb])
          in_data[(p % Bpb)*8 +: 8] = dh.out_addr[(15 - p)*8 +: 8];
      end
    end
    if (dh.is_rsp) begin
      if (first_q) begin  // T9, T8: the requester's 10-bit tag (memory answered the NI's 8-bit one)
        in_data[1*8 + 7] = dh.out_addr[1];
        in_data[1*8 + 3] = dh.out_addr[0];
      end
      for (int p = 8; p < 11; p++) begin
        if (bidx_oh_q[p / Bpb])
          in_data[(p % Bpb)*8 +: 8] = dh.out_addr[(15 - p)*8 +: 8];
      end
    end
    if (dh.conf_mem) begin
      for (int p = 12; p < 20; p++) begin
        if (bidx_oh_q[p / Bpb])
          in_data[(p % Bpb)*8 +: 8] = conf_back_q[(p - 12)*8 +: 8];
      end
    end
  end

  // Each beat passed on goes into an output queue of two as it is taken (the registered
  // boundary toward the combiner, the merge and the DMA engine). The beat where the
  // Length ends while a digest's beats are still to come is held (hold_q, held_*) and
  // goes in with the TLP's last beat, marked bad if the TLP turned out malformed.
  // pad_q: zero beats follow a TLP that ended before its Length, up to it (the input
  // waits meanwhile).
  logic hold_q, held_bad_q;
  logic [DataW-1:0] held_data_q;
  logic [KeepW-1:0] held_keep_q;
  logic out_wready;
  logic pad_q;
  logic [PosW-1:0] pad_at_q;  // byte position of the next zero beat
  logic [12:0] pad_fwd_q;     // where the padded TLP ends (its decision is gone by then)
  logic [KeepW-1:0] pad_keep_q;  // and the lanes of its last beat
  cls_e pad_cls_q;            // and its class

  // What a beat needs: its TLP decided and room in the output queue; the first beat of a tunneled
  // TLP hands over its header record; the last issues the register access or the
  // TLP's own completion (their readies are asked of every last beat that may need
  // them, so that no check of the beat's length gates its ready).
  logic need_hdr, hdr_ready, last_ok;
  assign need_hdr = first_q && (dh.is_req || dh.is_rsp);
  assign hdr_ready = dh.is_req ? req_hdr_ready_i : rsp_hdr_ready_i;
  assign last_ok = !f_tlast || ((cur_cls != ClsCsr || csr_ready_i) && (!dh.own || ur_ready_i));
  logic beat_go;  // the head beat may go, as far as its decision and the output queue go
  assign beat_go = dq_valid && out_wready && !pad_q && (!cb_need || cb_ready_q);
  assign f_tready = beat_go && (!need_hdr || hdr_ready) && last_ok;
  assign accept = f_qvalid && f_tready;
  assign dq_pop = accept && f_tlast;

  assign req_hdr_valid_o = f_qvalid && beat_go && need_hdr && dh.is_req && last_ok;
  assign rsp_hdr_valid_o = f_qvalid && beat_go && need_hdr && dh.is_rsp && last_ok;
  `NI_ASSERT(ClsBitsAreCls_A, !dq_valid || (dh.is_req == (cur_cls == ClsReq) && dh.is_rsp == (cur_cls == ClsRsp)))
  always_comb begin
    req_hdr_o = '0;
    req_hdr_o.kind = ni_pkg::TX_REQ;
    req_hdr_o.back_page = dh.page;
    req_hdr_o.dlid = dh.node;
    req_hdr_o.pkt_words = dh.pkt_words;
    req_hdr_o.stamp_psn = 1'b1;
    req_hdr_o.flags = {4'h0, dh.teh};
    req_hdr_o.memid = dh.memid;
    rsp_hdr_o = '0;
    rsp_hdr_o.kind = ni_pkg::TX_RSP;
    rsp_hdr_o.vc = 1'b1;
    rsp_hdr_o.dlid = dh.node;
    rsp_hdr_o.pkt_words = dh.pkt_words;
    rsp_hdr_o.psn = dh.psn;  // a response carries its request's PSN (ni_retx matches it)
  end
  assign req_meta_o.wc = dh.wc;
  assign req_meta_o.win = dh.win;
  assign req_meta_o.addr = dh.out_addr;
  assign req_meta_o.bytes = dh.len_bytes;

  // Register access and the TLP's own completion, with its last beat.
  // Poisoned data (EP) is passed on poisoned (tunneled, or to the DMA engine, which
  // fails the read) and counted; it never writes a register.
  // Each valid waits for the other's ready where a beat may need both (a register read
  // that turns out malformed is answered UR), never for its own.
  logic csr_poison, own_now, issue;
  assign issue = f_qvalid && beat_go && f_tlast;
  assign csr_poison = dh.has_data && dh.ep;
  assign csr_valid_o = issue && cur_cls == ClsCsr && !tlp_bad && !csr_poison && (!dh.own || ur_ready_i);
  assign csr_write_o = dh.has_data;
  assign csr_addr_o = {dh.addr[11:2], 2'b00};
  assign csr_wdata_o = view[16*8 +: 32];  // byte 16 is the lowest-addressed byte
  assign csr_be_o = dh.be[3:0];
  assign csr_reqid_o = dh.reqid;
  assign csr_tag_o = dh.tag;
  // UR for a refused non-posted request; the confirmation of a write the sending NI
  // confirms (UR instead if its length turned out wrong).
  assign own_now = (dh.ur && (cur_cls == ClsDrop || (cur_cls == ClsCsr && tlp_bad))) || dh.conf_sender;
  assign ur_valid_o = issue && own_now && (cur_cls != ClsCsr || csr_ready_i);
  always_comb begin
    ur_o = '0;
    ur_o.kind = ni_pkg::OWN_CPL;
    ur_o.status = ni_pkg::CPL_UR;
    ur_o.reqid = dh.reqid;
    ur_o.tag = dh.tag;
    ur_o.addr = {57'h0, dh.addr[6:0]};
    if (dh.conf_sender && !tlp_bad) begin
      ur_o.kind = ni_pkg::OWN_CONF;
      ur_o.status = ni_pkg::CPL_SC;
      ur_o.addr = dh.addr;
    end
  end
  `NI_ASSERT(HdrPushedWithBeat_A, ((req_hdr_valid_o && req_hdr_ready_i) || (rsp_hdr_valid_o && rsp_hdr_ready_i)) |-> accept)
  `NI_ASSERT(CsrIssuedWithBeat_A, (csr_valid_o && csr_ready_i) |-> accept)
  `NI_ASSERT(UrIssuedWithBeat_A, (ur_valid_o && ur_ready_i) |-> accept)
  `NI_ASSERT(OwnAsked_A, ur_valid_o |-> dh.own)

  // Atomic results: the completion as it left, recorded with its last beat.
  logic [AmoBytes*8-1:0] amo_tlp_q, amo_tlp_d;
  always_comb begin
    amo_tlp_d = amo_tlp_q;
    for (int p = 0; p < AmoBytes; p++) begin
      if (bidx_oh_q[p / Bpb]) amo_tlp_d[p*8 +: 8] = in_data[(p % Bpb)*8 +: 8];
    end
  end
  assign amo_wr_valid_o = accept && f_tlast && dh.amo && dh.amo_fits && !tlp_bad;
  assign amo_wr_lid_o = dh.node;
  assign amo_wr_psn_o = dh.psn;
  assign amo_wr_tlp_o = amo_tlp_d;
  assign amo_wr_len_o = 5'(dh.fwd_bytes);

  // Events, counted once per TLP at its last beat.
  err_e fin_err;
  logic fin;
  assign fin_err = (tlp_bad && err_e'(dh.err) == ErrNone) ? ErrMalformed : err_e'(dh.err);
  assign fin = accept && f_tlast;
  assign ev_win_miss_o = fin && fin_err == ErrWinMiss;
  assign ev_perm_o = fin && fin_err == ErrPerm;
  assign ev_malformed_o = fin && fin_err == ErrMalformed;
  assign ev_unsup_o = fin && fin_err == ErrUnsup;
  assign ev_cpl_unexp_o = fin && fin_err == ErrCplUnexp;
  assign ev_poison_o = fin && dh.has_data && dh.ep && !tlp_bad && cur_cls != ClsDrop;

  // The beat into the output queue (o_w*), and whether one goes in (o_push).
  localparam int unsigned OutW = 3 + 2 + KeepW + DataW;
  logic o_push, o_wbad, o_wlast;
  logic [KeepW-1:0] o_wkeep;
  logic [DataW-1:0] o_wdata;
  cls_e o_wcls;
  logic hold_d, pad_d, pad_last, td;
  logic [PosW-1:0] pad_at_d;
  assign td = dh.td;
  // The zero beat being the last, a register: found beside the beats from the position
  // after this zero beat, or from the first zero beat's position as a pad starts (an
  // adder and a compare off the path into the output queue).
  logic pad_last_q, pad_last_d;
  assign pad_last = pad_last_q;
  assign pad_last_d = pad_q ? (out_wready ? pad_at_q + PosW'(2 * Bpb) >= PosW'(pad_fwd_q) : pad_last_q) :
                              nbs_q + PosW'(Bpb) >= PosW'(dh.fwd_bytes);
  `NI_ASSERT(PadLastIsPos_A, !pad_q || pad_last_q == (pad_at_q + PosW'(Bpb) >= PosW'(pad_fwd_q)))
  always_comb begin
    o_push = 1'b0;
    o_wcls = cur_cls;
    o_wdata = in_data;
    o_wkeep = f_tlast ? f_tkeep : '1;  // a hole before the last beat leaves as a byte (stomped)
    o_wlast = f_tlast;
    o_wbad = tlp_bad;
    hold_d = hold_q;
    pad_d = pad_q;
    pad_at_d = pad_at_q;
    if (pad_q) begin
      o_push = out_wready;
      o_wcls = pad_cls_q;
      o_wdata = '0;
      o_wkeep = pad_last ? pad_keep_q : '1;
      o_wlast = pad_last;
      o_wbad = 1'b1;
      if (out_wready) begin
        pad_at_d = pad_at_q + PosW'(Bpb);
        pad_d = !pad_last;
      end
    end else if (hold_q) begin
      // The held beat, with the TLP's last: it learns whether the TLP was whole.
      o_push = accept && f_tlast;
      o_wdata = held_data_q;
      o_wkeep = held_keep_q;
      o_wlast = 1'b1;
      o_wbad = held_bad_q || tlp_bad;
      if (accept) hold_d = !f_tlast;
    end else if (fwd_cls && !cut_q) begin
      o_push = accept;
      if (reach_fwd) begin
        o_wkeep = dh.end_keep;  // the Length ends in this beat
        o_wlast = 1'b1;
        // More beats: the digest's (held for them), or a TLP longer than its Length.
        if (!f_tlast) begin
          o_wbad = !td;
          o_push = accept && !td;
          if (accept) hold_d = td;
        end
      end else if (len_bad) begin
        // Ended early: this beat leaves whole, and zero beats follow up to the Length
        // unless this beat's lanes reach it.
        o_wkeep = lanes_reach ? dh.end_keep : '1;
        o_wlast = lanes_reach;
        if (accept) begin
          pad_d = !lanes_reach;
          pad_at_d = nbs_q;
        end
      end
    end
  end
  `NI_ASSERT(HoldNotPadded_A, !(hold_q && pad_q))

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      bs_q <= '0;
      nbs_q <= PosW'(Bpb);
      bidx_oh_q <= (BiMax+1)'(1);
      bn_q <= '0;
      first_q <= 1'b1;
      past_q <= 1'b0;
      cut_q <= 1'b0;
      hole_q <= 1'b0;
      hold_q <= 1'b0;
      pad_q <= 1'b0;
      pad_at_q <= '0;
      pad_last_q <= 1'b0;
      cb_ready_q <= 1'b0;
    end else begin
      cb_ready_q <= cb_need && f_qvalid && dq_valid && !accept;
      if (accept) begin
        first_q <= f_tlast;
        bs_q <= f_tlast ? '0 : (nbs_q[PosW-1] ? bs_q : nbs_q);
        bidx_oh_q <= f_tlast ? (BiMax+1)'(1) : (bidx_oh_q[BiMax] ? bidx_oh_q : bidx_oh_q << 1);
        bn_q <= f_tlast ? '0 : (bn_q == '1 ? bn_q : bn_q + BnW'(1));
        nbs_q <= f_tlast ? PosW'(Bpb) : (nbs_q[PosW-1] ? nbs_q : nbs_q + PosW'(Bpb));
        past_q <= !f_tlast && (past_q || reach);
        cut_q <= !f_tlast && (cut_q || reach_fwd);
        hole_q <= !f_tlast && (hole_q || f_hole);
      end
      hold_q <= hold_d;
      pad_q <= pad_d;
      pad_at_q <= pad_at_d;
      pad_last_q <= pad_last_d;
    end
  end
  // Data without enables from the beat's handshake: the head beat's lanes are written
  // in every cycle it waits (it stays until taken, and the beat after it writes lanes
  // of its own); what a hold or a pad needs is taken in every cycle before it starts.
  always_ff @(posedge clk_i) begin
    cap_q <= view;
    amo_tlp_q <= amo_tlp_d;
    if (!hold_q) begin
      held_data_q <= in_data;
      held_keep_q <= dh.end_keep;
      held_bad_q <= 1'b0;
    end else if (accept) begin
      held_bad_q <= held_bad_q || tlp_bad;
    end
    if (!pad_q) begin
      pad_fwd_q <= dh.fwd_bytes;
      pad_keep_q <= dh.end_keep;
      pad_cls_q <= cur_cls;
    end
  end

  // The output queue: {class, bad, last, keep, data} (written from its count, FreeWrite).
  logic [OutW-1:0] o_head;
  logic o_valid, o_ready, o_bad, o_last;
  logic [2:0] o_cls;
  logic [KeepW-1:0] o_keep;
  logic [DataW-1:0] o_data;
  ni_fifo #(.Width(OutW), .Depth(2), .FreeWrite(1)) u_out_q (
    .clk_i, .rst_ni, .wdata_i({o_wcls, o_wbad, o_wlast, o_wkeep, o_wdata}), .wvalid_i(o_push),
    .wready_o(out_wready), .rdata_o(o_head), .rvalid_o(o_valid), .rready_i(o_ready));
  assign {o_cls, o_bad, o_last, o_keep, o_data} = o_head;
  assign req_beat_o = {o_bad, o_last, o_keep, o_data};
  assign rsp_beat_o = {o_bad, o_last, o_keep, o_data};
  assign req_beat_valid_o = o_valid && o_cls == ClsReq;
  assign rsp_beat_valid_o = o_valid && o_cls == ClsRsp;
  assign dma_cpl_tdata = o_data;
  assign dma_cpl_tkeep = o_keep;
  assign dma_cpl_tlast = o_last;
  assign dma_cpl_tuser = o_bad;
  assign dma_cpl_tvalid = o_valid && o_cls == ClsDma;
  assign o_ready = (o_cls == ClsReq) ? req_beat_ready_i : (o_cls == ClsRsp) ? rsp_beat_ready_i : dma_cpl_tready;
  `NI_ASSERT(OutClassPassed_A, !o_valid || o_cls == ClsReq || o_cls == ClsRsp || o_cls == ClsDma)

  // ============================================================ lookup flow and fences
  // Lookups go when no fence is up and the result queue has room for their answers
  // (r_cnt_q: lookups launched whose answers no decision has taken). A fence goes up
  // when an ART_CTRL write's lookup goes; no lookup goes after it until that write took
  // effect in the ART (art_upd_done_i), or turned out not to be made (malformed,
  // poisoned). Its header carries the mark from the port side to its decision, and the
  // decision to its last beat.
  logic fence_q, fence_wait_q, csr_issued;
  logic [RcW-1:0] r_cnt_q;
  // r_full_q: r_cnt_q is at ResDepth (registered: the port's ready depends on lk_go).
  logic r_full_q;
  logic [RcW-1:0] r_cnt_d;
  assign r_cnt_d = r_cnt_q + RcW'(lk_go) - RcW'(r_pop);
  assign lk_go = lk_valid_q && !fence_q && !art_busy_i && !r_full_q;
  assign art_look_valid_o = lk_go;
  assign art_addr_o = lk_addr_q;
  assign csr_issued = csr_valid_o && csr_ready_i;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      r_cnt_q <= '0;
      r_full_q <= 1'b0;
      fence_q <= 1'b0;
      fence_wait_q <= 1'b0;
      csr_pend_q <= '0;
    end else begin
      r_cnt_q <= r_cnt_d;
      r_full_q <= r_cnt_d == RcW'(ResDepth);
      if (lk_go && lk_fence_q) fence_q <= 1'b1;
      if (fin && dh.fence) begin
        if (csr_issued) fence_wait_q <= 1'b1;
        else fence_q <= 1'b0;
      end
      if (fence_wait_q && art_upd_done_i) begin
        fence_wait_q <= 1'b0;
        fence_q <= 1'b0;
      end
      // A register write decided: no decision after it until it is made (or dropped).
      csr_pend_q <= csr_pend_q + 2'(dec_take && cls == ClsCsr && k1.has_data) - 2'(fin && dh.csr_write);
    end
  end
  // The fencing TLP's lookup is the last one launched: no answer is left behind it.
  `NI_ASSERT(CsrPendBound_A, csr_pend_q != 2'd3)
  `NI_ASSERT(FenceAnsweredLast_A, !(r_pop && k1.fence) || (fence_q && r_cnt_q == RcW'(1)))
  `NI_ASSERT(CplMarkedAtPort_A, !k0_valid_q || h_cpl == k1_d.is_cpl)
  // The result queue never overflows (r_cnt_q counts its words and the lookups in the ART).
  `NI_ASSERT(ResQueueRoom_A, !art_res_valid_i || r_room)
  `NI_ASSERT(ResForLookup_A, !r_pop || r_cnt_q != '0)
  // The host's side of the handshake (a detector: the NI survives the violation).
  `NI_PROTOCOL(HostValidHeld_A, !withdrawn)

  logic unused;
  assign unused = ^{k1.td, r_room, dh_w};
endmodule

`default_nettype wire

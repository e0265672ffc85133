// SPDX-License-Identifier: Apache-2.0
// Host receive: classifies each TLP from the host port and routes it: CSR access,
// request through a window (to the fabric, VC0), completion of a read this NI
// serves (back to the fabric, VC1), or refusal (counter, status, UR completion).
// The host's beats enter a queue (the registered block boundary) whose depth hides
// the ART's latency: a TLP's address is looked up in the pipelined ART as its header
// beat enters, and the answer waits in a result queue for the beat to leave the queue
// and be decided on. One beat of delay after that (register H) lets the class be known
// before a TLP's first beat moves on; addresses and tags are rewritten on the way.
`default_nettype none
`include "ni_assert.svh"

module ni_host_rx #(
  parameter int unsigned DataW = 64,
  parameter int unsigned MaxPayload = 256,
  parameter logic [63:0] CsrBase = 64'h0000_00F0_0000_0000,
  parameter logic [15:0] NiReqId = 16'h0100,
  parameter int unsigned NumArt = 16,  // windows: a write to ART_CTRL[i < NumArt] fences the lookups
  localparam int unsigned Bpb = DataW / 8,
  localparam int unsigned KeepW = Bpb,
  localparam int unsigned AmoBytes = ni_pkg::AmoCplBytes
) (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic [15:0] node_id_i,
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
  input  logic [63:0] art_out_addr_i,
  // Read tracker lookup for completions coming back from local memory.
  output logic [7:0] trk_tag_o,
  input  logic trk_hit_i,
  input  logic [15:0] trk_node_i,
  input  logic [15:0] trk_reqid_i,
  input  logic [7:0] trk_otag_i,
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
  // Tunnel requests (VC0) and responses (VC1) toward the fabric framer.
  output ni_pkg::tx_hdr_t req_hdr_o,
  output ni_pkg::wc_meta_t req_meta_o,  // for the write combiner, with req_hdr_o
  output logic req_hdr_valid_o,
  output logic req_hdr_pending_o,  // a request header is decided now (valid or waiting)
  input  logic req_hdr_ready_i,
  output logic [DataW+KeepW+1:0] req_beat_o,  // {bad, last, keep, data}
  output logic req_beat_valid_o,
  input  logic req_beat_ready_i,
  output ni_pkg::tx_hdr_t rsp_hdr_o,
  output logic rsp_hdr_valid_o,
  input  logic rsp_hdr_ready_i,
  output logic [DataW+KeepW+1:0] rsp_beat_o,
  output logic rsp_beat_valid_o,
  input  logic rsp_beat_ready_i,
  // Completions of the DMA engine's reads (tags 0x80-0x8F), whole TLPs.
  output logic [DataW-1:0] dma_cpl_tdata,
  output logic [KeepW-1:0] dma_cpl_tkeep,
  output logic dma_cpl_tlast,
  output logic dma_cpl_tuser,  // with tlast: the completion was malformed (stomped)
  output logic dma_cpl_tvalid,
  input  logic dma_cpl_tready,
  // CSR access (single DW).
  output logic csr_valid_o,
  input  logic csr_ready_i,
  output logic csr_write_o,
  output logic [11:0] csr_addr_o,
  output logic [31:0] csr_wdata_o,
  output logic [3:0] csr_be_o,
  output logic [15:0] csr_reqid_o,
  output logic [7:0] csr_tag_o,
  // Completion the NI makes toward the host: UR for a refused read, atomic or DMWr;
  // the confirmation of a write the sending NI confirms itself (CONF_AT_SENDER).
  output ni_pkg::own_cpl_t ur_o,
  output logic ur_valid_o,
  input  logic ur_ready_i,
  // Memory confirmed a write the NI confirmed on its behalf (CONF_AT_RX_NI): its tag.
  output logic mem_conf_valid_o,
  output logic [7:0] mem_conf_tag_o,
  output logic mem_conf_ok_o,   // status SC: memory took the write
  // Events.
  output logic ev_win_miss_o,
  output logic ev_perm_o,
  output logic ev_malformed_o,
  output logic ev_unsup_o,
  output logic ev_cpl_unexp_o,
  output logic ev_poison_o  // a poisoned TLP (EP) passed on poisoned, or a poisoned register write dropped
);
  localparam int unsigned CapBytes = 20;  // TLP header + first data DW
  localparam int unsigned BeatCntW = 10;

  typedef enum logic [2:0] {
    ClsReq, ClsRsp, ClsCsr, ClsDrop, ClsDma
  } cls_e;

  typedef enum logic [2:0] {
    ErrNone, ErrWinMiss, ErrPerm, ErrMalformed, ErrUnsup, ErrCplUnexp
  } err_e;


  // ------------------------------------------------------------ input queue and lookups
  // f_*: the beats as the decision takes them, out of the input queue.
  localparam int unsigned InDepth = 8;
  localparam int unsigned ResDepth = 8;  // answers of the ART waiting for their TLP's decision
  localparam int unsigned RcW = $clog2(ResDepth + 1);
  logic [DataW-1:0] f_tdata;
  logic [KeepW-1:0] f_tkeep;
  logic f_tlast, f_tvalid, f_tready, f_viol, f_qvalid, in_wready;
  // lk_*: the lookup of the last header beat that entered, until the ART takes it.
  logic lk_valid_q, lk_fence_q, lk_go, lk_room;
  logic [63:0] lk_addr_q;
  logic p_viol_q, p_stall_q, withdrawn, p_acc;
  assign lk_room = !lk_valid_q || lk_go;
  assign s_axis_tready = in_wready && lk_room;
  assign p_acc = s_axis_tvalid && s_axis_tready;
  ni_fifo #(.Width(DataW + KeepW + 2), .Depth(InDepth)) u_in_q (
    .clk_i, .rst_ni, .wdata_i({p_viol_q, s_axis_tlast, s_axis_tkeep, s_axis_tdata}),
    .wvalid_i(s_axis_tvalid && lk_room), .wready_o(in_wready),
    .rdata_o({f_viol, f_tlast, f_tkeep, f_tdata}), .rvalid_o(f_qvalid), .rready_i(f_tready));
  assign f_tvalid = f_qvalid && !dec_hold_i;
  // The host withdrew tvalid before its beat was taken (a protocol violation): marked on
  // the beats that follow, up to the end of that TLP.
  assign withdrawn = p_stall_q && !s_axis_tvalid;

  // The port's beat position; a TLP's header beat is the first that holds byte 15 (the
  // address's last), or its last beat if it ends before. ART_CTRL writes fence (below).
  logic [BeatCntW-1:0] p_beat_q;
  logic [12:0] p_bs;
  logic p_hdr_done_q, p_hdr, p_fence;
  logic p_data_q, p_data;  // the TLP carries data (Fmt bit 1)
  logic p_cpl_q, p_cpl;    // the TLP is a completion: it takes no lookup
  logic [63:0] p_addr;
  assign p_bs = 13'(p_beat_q) * 13'(Bpb);
  assign p_hdr = !p_hdr_done_q && ((p_bs + 13'(Bpb) > 13'd15) || s_axis_tlast);
  assign p_data = (p_beat_q == '0) ? s_axis_tdata[6] : p_data_q;
  assign p_cpl = (p_beat_q == '0) ? ni_pkg::is_cpl(s_axis_tdata[7:0]) : p_cpl_q;
  always_comb begin
    p_addr = '0;
    for (int p = 8; p < 16; p++) begin
      if (32'(p) >= 32'(p_bs) && 32'(p) < 32'(p_bs) + Bpb) p_addr[(15 - p)*8 +: 8] = s_axis_tdata[(p % Bpb)*8 +: 8];
    end
    p_addr[1:0] = 2'b00;
    // A write of a window's ART_CTRL: the TLPs after it are looked up once it took effect.
    p_fence = 1'b0;
    for (int i = 0; i < NumArt; i++) begin
      if (p_data && p_addr[63:12] == CsrBase[63:12] && p_addr[11:0] == 12'h11c + 12'(i * 32)) p_fence = 1'b1;
    end
  end
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      p_beat_q <= '0;
      p_hdr_done_q <= 1'b0;
      p_viol_q <= 1'b0;
      p_stall_q <= 1'b0;
      lk_valid_q <= 1'b0;
    end else begin
      if (p_acc) begin
        p_beat_q <= s_axis_tlast ? '0 : (p_beat_q == '1 ? p_beat_q : p_beat_q + BeatCntW'(1));
        p_hdr_done_q <= !s_axis_tlast && (p_hdr_done_q || p_hdr);
      end
      p_viol_q <= !(p_acc && s_axis_tlast) && (p_viol_q || withdrawn);
      p_stall_q <= s_axis_tvalid && !s_axis_tready;
      if (p_acc && p_hdr && !p_cpl) lk_valid_q <= 1'b1;
      else if (lk_go) lk_valid_q <= 1'b0;
    end
  end
  always_ff @(posedge clk_i) begin
    if (p_acc && p_beat_q == '0) begin
      p_data_q <= s_axis_tdata[6];
      p_cpl_q <= p_cpl;
    end
    if (p_acc && p_hdr) begin
      lk_addr_q <= p_addr;
      lk_fence_q <= p_fence;
    end
  end

  // ------------------------------------------------------------ header view
  logic [BeatCntW-1:0] beat_q, beat_d;
  logic [CapBytes*8-1:0] cap_q, cap_d, view;
  logic decided_q, decided_d;
  cls_e cls_q, cls_d, cls_new;
  err_e err_q, err_d, err_new;
  logic ur_q, ur_d, ur_new;
  logic [12:0] exp_bytes_q, exp_bytes_d, exp_bytes_new;  // where the TLP's bytes end (digest included)
  logic [12:0] fwd_bytes_q, fwd_bytes_d, fwd_bytes_new;  // where the TLP passed on ends (no digest)
  logic [12:0] bs;  // byte position of the current input beat
  localparam int unsigned KcntW = $clog2(Bpb + 1);
  logic [KcntW-1:0] kcnt;

  assign bs = 13'(beat_q) * 13'(Bpb);

  always_comb begin
    view = cap_q;
    for (int p = 0; p < CapBytes; p++) begin
      if (32'(p) >= 32'(bs) && 32'(p) < 32'(bs) + Bpb) begin
        view[p*8 +: 8] = f_tdata[(p % Bpb)*8 +: 8];
      end
    end
    kcnt = KcntW'(ni_pkg::keep_count(64'(f_tkeep)));
  end

  // Fields of the TLP header (docs/formats.md).
  logic [7:0] ft;
  logic td, ep;
  logic [9:0] len_dw;
  logic [12:0] len_bytes;
  logic [15:0] reqid, cpl_reqid;
  logic [7:0] tag, cpl_tag, be;
  logic [63:0] addr;
  logic [31:0] wdata;
  logic has_data, is_cpl, is_mrd, is_mwr, is_dmwr, is_write, is_atomic, atomic_ok, is_np_unsup, is_p_unsup;
  logic [4:0] op_bytes;  // atomic operand size

  assign ft = view[0 +: 8];
  assign td = view[2*8 + 7];
  assign ep = view[2*8 + 6];
  assign len_dw = {view[2*8 +: 2], view[3*8 +: 8]};
  assign len_bytes = (len_dw == 10'd0) ? 13'd4096 : {1'b0, len_dw, 2'b00};
  assign reqid = {view[4*8 +: 8], view[5*8 +: 8]};
  assign tag = view[6*8 +: 8];
  assign be = view[7*8 +: 8];
  assign addr = {view[8*8 +: 8], view[9*8 +: 8], view[10*8 +: 8], view[11*8 +: 8],
                 view[12*8 +: 8], view[13*8 +: 8], view[14*8 +: 8], view[15*8+2 +: 6], 2'b00};
  assign cpl_reqid = {view[8*8 +: 8], view[9*8 +: 8]};
  assign cpl_tag = view[10*8 +: 8];
  assign wdata = view[16*8 +: 32];  // byte 16 is the lowest-addressed byte
  assign has_data = ft[6];
  assign is_cpl = ni_pkg::is_cpl(ft);
  assign is_mrd = ft == ni_pkg::TLP_MRD64;
  assign is_mwr = ft == ni_pkg::TLP_MWR64;
  assign is_dmwr = ni_pkg::is_dmwr(ft);
  assign is_write = is_mwr || is_dmwr;
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
  assign atomic_ok = op_bytes != '0 && (addr[3:0] & 4'(op_bytes - 5'd1)) == 4'd0;
  // Requests of kinds this NI does not carry: 3DW memory requests, atomics and DMWr;
  // non-posted I/O and configuration requests (IORd, IOWr, CfgRd0/1, CfgWr0/1), which
  // a root complex waits for: each gets a UR completion.
  assign is_np_unsup = (ft == ni_pkg::TLP_MRD32) || (ft == 8'h4C) || (ft == 8'h4D) ||
                       (ft == 8'h4E) || (ft == 8'h5B) || (ft == 8'h02) || (ft == 8'h42) ||
                       (ft == 8'h04) || (ft == 8'h05) || (ft == 8'h44) || (ft == 8'h45);
  assign is_p_unsup = ft == ni_pkg::TLP_MWR32;

  // ------------------------------------------------------------ ART lookup
  // The answers, in the order of the TLPs; the decision takes the head's when it
  // decides the TLP at the head of the beat queue. Every TLP but a completion has one
  // lookup, launched from its header beat (or its last, if it is shorter), as the
  // decision's hdr_beat below. A completion (Cpl, CplD in its first byte, read the same
  // way on both sides) has none and does not wait for one: the answers to the host's
  // and the DMA engine's reads cross without the ART's latency.
  localparam int unsigned ArtW = 5 + 8 + 16 + 16 + 64;
  logic [ArtW-1:0] art_res;
  logic r_valid, r_pop;
  logic [ArtW-1:0] r_head;
  assign art_res = {art_hit_i, art_rx_xlate_i, art_perm_r_i, art_perm_w_i, art_perm_a_i, art_index_i,
                    art_node_i, art_memid_i, art_out_addr_i};
  logic r_room;
  ni_fifo #(.Width(ArtW), .Depth(ResDepth), .FallThrough(1)) u_res_q (
    .clk_i, .rst_ni, .wdata_i(art_res), .wvalid_i(art_res_valid_i), .wready_o(r_room),
    .rdata_o(r_head), .rvalid_o(r_valid), .rready_i(r_pop));
  logic art_hit, art_rx_xlate, art_perm_r, art_perm_w, art_perm_a;
  logic [7:0] art_index;
  logic [15:0] art_node, art_memid;
  logic [63:0] art_out_addr;
  assign {art_hit, art_rx_xlate, art_perm_r, art_perm_w, art_perm_a, art_index, art_node, art_memid,
          art_out_addr} = r_head;
  // The window's write combining, confirmation and group state (art_wc_i, art_conf_*_i,
  // art_mcast_empty_i) are kept in the register block, read by art_win_o as it is decided.
  assign art_win_o = art_index;
  logic hdr_now;
  // Not while the TLP before is padded to its Length (pad_q): the header beat waits, and
  // nothing of its TLP (header record, register access, UR) is offered meanwhile.
  assign hdr_now = f_tvalid && !decided_q && hdr_beat && !pad_q;
  // The header beat waits for its ART answer: nothing of its TLP is issued meanwhile
  // (at 128 bits and up a whole TLP can be that beat, and its register access or UR
  // would otherwise be offered every cycle it waits).
  logic dec_wait, f_issue;
  assign dec_wait = hdr_now && !r_valid && !is_cpl;
  // A window whose destination is a multicast LID (0xC000 and up, as in IB) takes writes only.
  logic art_mcast;
  assign art_mcast = art_node[15:14] == 2'b11;
  assign trk_tag_o = cpl_tag;

  // ------------------------------------------------------------ classification
  logic hdr_beat, decide_now, runt, cross4k, csr_hit;
  logic [12:0] tlp_hdr_bytes, end_bytes;

  assign tlp_hdr_bytes = ft[5] ? 13'd16 : 13'd12;  // Fmt bit 0: a 4DW header (completions are 3DW)
  assign end_bytes = bs + 13'(kcnt);
  assign runt = f_tlast && (end_bytes < tlp_hdr_bytes);
  assign hdr_beat = (bs + 13'(Bpb) > 13'd15) || f_tlast;
  assign decide_now = hdr_now && (r_valid || is_cpl);
  assign r_pop = decide_now && accept && !is_cpl;
  assign cross4k = ({1'b0, addr[11:0]} + len_bytes) > 13'd4096;
  assign csr_hit = addr[63:12] == CsrBase[63:12];

  always_comb begin
    cls_new = ClsDrop;
    err_new = ErrMalformed;
    ur_new = 1'b0;
    // A TLP digest (TD, an ECRC DW after the data) is not checked: PCIe has a receiver
    // that does not check ECRC ignore it. It is part of the TLP's length here, and is
    // taken off (TD cleared) where the TLP is passed on.
    fwd_bytes_new = tlp_hdr_bytes + (has_data ? len_bytes : 13'd0);
    exp_bytes_new = fwd_bytes_new + (td ? 13'd4 : 13'd0);
    if (runt) begin
      // A non-posted request cut inside its header still names its requester and tag
      // (bytes 4-6): it gets its UR.
      ur_new = (!runt || end_bytes >= 13'd8) && (is_mrd || is_atomic || is_dmwr || is_np_unsup);
    end else if (is_cpl) begin
      if (cpl_reqid == NiReqId && cpl_tag[7:4] == 4'h8) begin
        cls_new = ClsDma;  // a read of the DMA engine
        err_new = ErrNone;
      end else if (trk_hit_i && cpl_reqid == NiReqId) begin
        // Memory's confirmation of a write this NI confirmed already ends here.
        cls_new = (trk_kind_i == ni_pkg::TRK_CONF_NI) ? ClsDrop : ClsRsp;
        err_new = ErrNone;
      end else begin
        err_new = ErrCplUnexp;
      end
    end else if (is_mrd || is_write || is_atomic) begin
      // Memory requests; a refused read, atomic or DMWr is answered with UR.
      ur_new = !is_mwr;
      if (is_atomic ? !atomic_ok : (len_bytes > 13'(MaxPayload) || cross4k)) begin
        err_new = ErrMalformed;
      end else if (csr_hit) begin
        if (is_atomic || is_dmwr) begin
          err_new = ErrUnsup;  // the registers take single-DW reads and writes only
        end else if (len_dw == 10'd1) begin
          cls_new = ClsCsr;  // a read keeps its UR for the case its length turns out wrong
          err_new = ErrNone;
        end
      end else if (!art_hit) begin
        err_new = ErrWinMiss;
      end else if (is_mrd ? !art_perm_r : is_write ? !art_perm_w : !art_perm_a) begin
        err_new = ErrPerm;
      end else if (art_mcast && (!is_mwr || art_mcast_empty_i)) begin
        err_new = ErrUnsup;  // a multicast group takes posted writes only, and needs members
      end else begin
        cls_new = ClsReq;
        err_new = ErrNone;
        ur_new = 1'b0;
      end
    end else if (is_np_unsup) begin
      err_new = ErrUnsup;
      ur_new = 1'b1;
    end else if (is_p_unsup) begin
      err_new = ErrUnsup;
    end
  end

  // Confirmed writes: a DMWr, or any write through a window with conf_all (not to a
  // multicast group: those stay posted). The confirmation point is the window's. The
  // sending NI's confirmation goes to the CPU at once and the write travels as an MWr;
  // the receiver's points travel as a DMWr with the point in the TEH flags.
  logic confirmed, conf_sender, conf_rx_ni;
  logic [7:0] ft_out_new;
  assign confirmed = is_dmwr || (is_mwr && art_conf_all_i && !art_mcast);
  assign conf_sender = confirmed && art_conf_at_i == ni_pkg::CONF_AT_SENDER;
  assign conf_rx_ni = confirmed && art_conf_at_i == ni_pkg::CONF_AT_RX_NI;
  assign ft_out_new = !confirmed ? ft : conf_sender ? ni_pkg::TLP_MWR64 : ni_pkg::TLP_DMWR64;

  // A write the combiner may merge: posted, through a combining window, every byte
  // enabled (First BE all ones; Last BE all ones, or none for a single DW).
  assign req_meta_o.wc = is_mwr && !confirmed && art_wc_i && be[3:0] == 4'hF &&
                         ((len_dw == 10'd1) ? be[7:4] == 4'h0 : be[7:4] == 4'hF);
  assign req_meta_o.win = art_index;
  assign req_meta_o.addr = art_out_addr;
  assign req_meta_o.bytes = len_bytes;

  // Header records for the framer.
  logic [10:0] pkt_words;
  assign pkt_words = 11'((13'(ni_pkg::FabHdrBytes) + fwd_bytes_new + 13'd4) >> 2);

  always_comb begin
    req_hdr_o = '0;
    req_hdr_o.bytes = ni_pkg::fab_header(ni_pkg::OP_TUNNEL_REQ, 1'b0, art_node, node_id_i,
                                         pkt_words, 24'h0,
                                         {4'h0, confirmed && !conf_sender && !conf_rx_ni, conf_rx_ni,
                                          1'b0, art_rx_xlate}, art_memid, 8'h0);
    req_hdr_o.back_page = addr[63:12] - art_out_addr[63:12];
    req_hdr_o.len = 6'(ni_pkg::FabHdrBytes);
    req_hdr_o.has_payload = 1'b1;
    req_hdr_o.vc = 1'b0;
    req_hdr_o.stamp_psn = 1'b1;
    rsp_hdr_o = '0;
    rsp_hdr_o.bytes = ni_pkg::fab_header(ni_pkg::OP_TUNNEL_RSP, 1'b1, trk_node_i, node_id_i,
                                         pkt_words, trk_psn_i, 8'h0, 16'h0, 8'h0);
    rsp_hdr_o.len = 6'(ni_pkg::FabHdrBytes);
    rsp_hdr_o.has_payload = 1'b1;
    rsp_hdr_o.vc = 1'b1;
    rsp_hdr_o.stamp_psn = 1'b0;  // a response carries its request's PSN (ni_retx matches it)
  end

  // Memory's answer to a DMWr the NI forwarded: a memory-confirmed write goes back to
  // its sender with the address translated (conf_back); the confirmation of a write the
  // NI confirmed itself ends here and releases the NI's copy (mem_conf_*).
  logic conf_q, conf_d, conf_cur, cpl_ok;
  logic [51:0] conf_page_q, conf_page_d;
  logic [63:0] conf_back, conf_addr;
  assign cpl_ok = view[6*8+5 +: 3] == ni_pkg::CPL_SC;
  assign conf_cur = decide_now ? (cls_new == ClsRsp && trk_kind_i == ni_pkg::TRK_CONF_MEM) : conf_q;
  assign conf_page_d = decide_now ? trk_page_i : conf_page_q;
  assign conf_addr = view[12*8 +: 64];
  assign conf_back = conf_addr - {conf_page_d, 12'h0};
  assign conf_d = (accept && f_tlast) ? 1'b0 : (accept ? conf_cur : conf_q);
  logic consume_now;
  assign consume_now = decide_now && accept && is_cpl && cls_new == ClsDrop && err_new == ErrNone;
  assign mem_conf_valid_o = consume_now;
  assign mem_conf_ok_o = cpl_ok;
  assign mem_conf_tag_o = cpl_tag;

  // ------------------------------------------------------------ beat pipeline
  // Input beat with this TLP's rewrites applied (only the header beat changes).
  logic [DataW-1:0] in_data;
  always_comb begin
    in_data = f_tdata;
    if (bs == 13'd0) in_data[2*8 + 7] = 1'b0;  // TD: the digest does not go on
    if (decide_now && cls_new == ClsReq) begin
      if (bs == 13'd0) in_data[7:0] = ft_out_new;
      for (int p = 8; p < 16; p++) begin
        if (32'(p) >= 32'(bs) && 32'(p) < 32'(bs) + Bpb)
          in_data[(p % Bpb)*8 +: 8] = art_out_addr[(15 - p)*8 +: 8];
      end
    end
    if (decide_now && cls_new == ClsRsp) begin
      for (int p = 8; p < 11; p++) begin
        if (32'(p) >= 32'(bs) && 32'(p) < 32'(bs) + Bpb)
          in_data[(p % Bpb)*8 +: 8] = (p == 10) ? trk_otag_i : trk_reqid_i[(9 - p)*8 +: 8];
      end
    end
    // A memory-confirmed write: memory's confirmation names the address it wrote; the
    // NI names the address as it was tunneled (minus the memory ID's base). Least
    // significant byte first, so every beat has the bytes below the ones it changes.
    if (conf_cur) begin
      for (int p = 12; p < 20; p++) begin
        if (32'(p) >= 32'(bs) && 32'(p) < 32'(bs) + Bpb)
          in_data[(p % Bpb)*8 +: 8] = conf_back[(p - 12)*8 +: 8];
      end
    end
  end

  // The TLP type byte of a request may change (confirmed writes). At 64 bits the
  // class is decided with the second beat, while the first one waits in H.
  logic [7:0] h_ft;
  assign h_ft = (h_valid_q && !h_dec_q && decide_now && cls_new == ClsReq) ? ft_out_new : h_data_q[7:0];

  logic h_valid_q, h_valid_d, h_last_q, h_last_d, h_bad_q, h_bad_d, h_dec_q, h_dec_d;
  logic [DataW-1:0] h_data_q, h_data_d;
  logic [KeepW-1:0] h_keep_q, h_keep_d;
  cls_e h_cls_q, h_cls_d, h_cls;
  logic h_known, h_push, h_dest_ready, accept;
  logic len_bad, tlp_bad, need_hdr_push, hdr_ready, last_ok;

  // A first beat waiting in H (at 64 bits) leaves only with the header beat that
  // decides its class, in the cycle that beat is taken: a host that withdraws tvalid
  // before the handshake (an AXI4-Stream violation) then leaves nothing half sent.
  logic h_go_new;
  assign h_go_new = decide_now && (!need_hdr_push || hdr_ready) && last_ok;
  assign h_known = h_valid_q && (h_dec_q || h_go_new) && !hold_q;
  assign h_cls = h_dec_q ? h_cls_q : cls_new;
  assign h_dest_ready = (h_cls == ClsReq) ? req_beat_ready_i :
                        (h_cls == ClsRsp) ? rsp_beat_ready_i :
                        (h_cls == ClsDma) ? dma_cpl_tready : 1'b1;
  assign h_push = h_known && h_dest_ready;

  // The packet's class as seen by the current input beat.
  cls_e cur_cls;
  err_e cur_err;
  logic cur_ur;
  logic [12:0] cur_exp, cur_fwd;
  logic cur_td;
  assign cur_cls = decided_q ? cls_q : cls_new;
  assign cur_err = decided_q ? err_q : err_new;
  assign cur_ur = decided_q ? ur_q : ur_new;
  assign cur_exp = decided_q ? exp_bytes_q : exp_bytes_new;
  assign cur_fwd = decided_q ? fwd_bytes_q : fwd_bytes_new;
  assign cur_td = cur_exp != cur_fwd;
  // A TLP's bytes must end where its Length (and digest) say. past_q: a beat before its
  // last already reached that end (the byte count is not needed past it, so no length
  // wraps it). A beat before the last leaves whole (a hole in it makes the TLP
  // malformed), so it reaches an end by its lanes, not by the bytes its keep marks:
  // counted by keep, a hole there let the end pass unseen and the TLP leave longer
  // than its Length.
  logic past_q, past_d, reach, fwd_cls;
  assign reach = f_tlast ? end_bytes >= cur_exp : bs + 13'(Bpb) >= cur_exp;
  // The same for the end of what is passed on (cur_fwd, before the digest); lanes_reach:
  // this beat's lanes reach it. cut_q: a beat before this one was the last passed on.
  logic lanes_reach, reach_fwd, cut_q, cut_d;
  assign lanes_reach = bs + 13'(Bpb) >= cur_fwd;
  assign reach_fwd = f_tlast ? end_bytes >= cur_fwd : lanes_reach;
  assign len_bad = f_tlast && (past_q || (end_bytes != cur_exp && !runt));
  // Every beat but the last has all its bytes, the last a run of lanes from lane 0
  // (keep_hole); hole_q: an earlier beat of this TLP had a hole. Such a TLP is as
  // malformed as one of the wrong length.
  logic hole_q, hole_d, keep_hole;
  assign keep_hole = f_tlast ? (f_tkeep & (f_tkeep + KeepW'(1))) != '0 : f_tkeep != '1;
  // f_viol: the host withdrew tvalid before a beat was taken (an AXI4-Stream violation)
  // since the last TLP ended (port side, below); the TLP then ending is as malformed.
  assign tlp_bad = len_bad || (f_tlast && (hole_q || keep_hole || f_viol));
  // What is passed on leaves exactly as long as its Length says, so a malformed TLP is
  // stomped in a TLP of its own length: a tunneled one in a packet of the right PktLen
  // (the receiver refuses it with NAK 0x61 and the sender does not resend it), a DMA
  // read's completion with its last beat marked bad (the engine finds a completion's
  // end by its Length, and fails the read). Cut at that length (the beats after it,
  // a digest's or a TLP longer than its Length, are taken and dropped), or padded to
  // it with zero beats (pad_q; the input waits meanwhile).
  assign fwd_cls = cur_cls == ClsReq || cur_cls == ClsRsp || cur_cls == ClsDma;
  // hold_q: H holds the last beat passed on while the digest's last beat is still to
  // come; it leaves with that beat, stomped if the TLP turned out malformed.
  logic hold_q, hold_d, h_free;
  assign h_free = !h_valid_q || h_push || hold_q;
  logic pad_q, pad_d;
  logic [12:0] pad_at_q, pad_at_d;  // byte position of the next zero beat
  logic [12:0] keep_end;            // bytes of the TLP's Length in this output beat
  logic [KeepW-1:0] keep_upto;
  assign keep_end = pad_q ? fwd_bytes_q - pad_at_q : cur_fwd - bs;
  always_comb begin
    for (int j = 0; j < KeepW; j++) keep_upto[j] = 13'(j) < keep_end;
  end

  assign need_hdr_push = decide_now && (cls_new == ClsReq || cls_new == ClsRsp);
  assign hdr_ready = (cls_new == ClsReq) ? req_hdr_ready_i : rsp_hdr_ready_i;
  // Actions taken with the last beat: CSR access or UR completion.
  // Poisoned data (EP) is passed on poisoned (tunneled, or to the DMA engine, which
  // fails the read) and counted; it never writes a register.
  logic csr_poison;
  assign csr_poison = cur_cls == ClsCsr && has_data && ep;
  assign last_ok = !f_tlast ||
                   ((cur_cls == ClsCsr && !tlp_bad && !csr_poison) ? csr_ready_i : own_now ? ur_ready_i : 1'b1);
  assign f_tready = h_free && (!need_hdr_push || hdr_ready) && last_ok && !dec_wait && !pad_q &&
                    !dec_hold_i;
  assign accept = f_tvalid && f_tready;
  // A beat that may issue its TLP's register access or UR: one that goes with it, so
  // each is issued once.
  assign f_issue = f_tvalid && !dec_wait && !pad_q && (!need_hdr_push || hdr_ready);
  `NI_ASSERT(HdrPushedWithBeat_A, ((req_hdr_valid_o && req_hdr_ready_i) || (rsp_hdr_valid_o && rsp_hdr_ready_i)) |-> accept)
  `NI_ASSERT(CsrIssuedWithBeat_A, (csr_valid_o && csr_ready_i) |-> accept)
  `NI_ASSERT(UrIssuedWithBeat_A, (ur_valid_o && ur_ready_i) |-> accept)

  assign req_hdr_valid_o = need_hdr_push && cls_new == ClsReq && h_free && last_ok;
  assign rsp_hdr_valid_o = need_hdr_push && cls_new == ClsRsp && h_free && last_ok;
  assign req_hdr_pending_o = need_hdr_push && cls_new == ClsReq;
  assign trk_release_o = (rsp_hdr_valid_o && rsp_hdr_ready_i) || consume_now;

  assign req_beat_o = {h_bad_q, h_last_q, h_keep_q, h_data_q[DataW-1:8], h_ft};
  assign rsp_beat_o = {h_bad_q, h_last_q, h_keep_q, h_data_q};
  assign req_beat_valid_o = h_known && h_cls == ClsReq;
  assign rsp_beat_valid_o = h_known && h_cls == ClsRsp;
  assign dma_cpl_tdata = h_data_q;
  assign dma_cpl_tkeep = h_keep_q;
  assign dma_cpl_tlast = h_last_q;
  assign dma_cpl_tuser = h_bad_q;
  assign dma_cpl_tvalid = h_known && h_cls == ClsDma;

  // CSR request and UR completion, issued with the last beat.
  assign csr_valid_o = f_issue && f_tlast && cur_cls == ClsCsr && !tlp_bad && !csr_poison && h_free;
  assign csr_write_o = ft[6];
  assign csr_addr_o = {addr[11:2], 2'b00};
  assign csr_wdata_o = wdata;
  assign csr_be_o = be[3:0];
  assign csr_reqid_o = reqid;
  assign csr_tag_o = tag;
  // With the last beat: UR for a refused non-posted request; the confirmation of a
  // write the sending NI confirms (UR instead if its length turned out wrong).
  logic own_now, conf_snd_q, conf_snd_d, conf_snd_cur;
  assign conf_snd_cur = decided_q ? conf_snd_q : (cls_new == ClsReq && conf_sender);
  assign conf_snd_d = accept ? (conf_snd_cur && !f_tlast) : conf_snd_q;
  assign own_now = (cur_ur && (cur_cls == ClsDrop || (cur_cls == ClsCsr && tlp_bad))) ||
                   (cur_cls == ClsReq && conf_snd_cur);
  assign ur_valid_o = f_issue && f_tlast && own_now && h_free;
  always_comb begin
    ur_o = '0;
    ur_o.kind = ni_pkg::OWN_CPL;
    ur_o.status = ni_pkg::CPL_UR;
    ur_o.reqid = reqid;
    ur_o.tag = tag;
    ur_o.addr = {57'h0, addr[6:0]};
    if (cur_cls == ClsReq && !tlp_bad) begin
      ur_o.kind = ni_pkg::OWN_CONF;
      ur_o.status = ni_pkg::CPL_SC;
      ur_o.addr = addr;
    end
  end

  // ------------------------------------------------------------ atomic results
  logic [AmoBytes*8-1:0] amo_tlp_q, amo_tlp_d;
  logic amo_q, amo_d, amo_cur;  // the completion coming in answers an atomic served for a peer
  logic [15:0] amo_lid_q, amo_lid_d;
  logic [23:0] amo_psn_q, amo_psn_d;
  always_comb begin
    amo_tlp_d = amo_tlp_q;
    for (int p = 0; p < AmoBytes; p++) begin
      if (32'(p) >= 32'(bs) && 32'(p) < 32'(bs) + Bpb) amo_tlp_d[p*8 +: 8] = in_data[(p % Bpb)*8 +: 8];
    end
    amo_cur = amo_q;
    amo_lid_d = amo_lid_q;
    amo_psn_d = amo_psn_q;
    if (decide_now) begin
      amo_cur = cls_new == ClsRsp && (trk_kind_i == ni_pkg::TRK_ATOMIC || trk_kind_i == ni_pkg::TRK_CONF_MEM);
      amo_lid_d = trk_node_i;
      amo_psn_d = trk_psn_i;
    end
    amo_d = amo_q;
    if (accept) amo_d = amo_cur && !f_tlast;
  end
  assign amo_wr_valid_o = accept && f_tlast && amo_cur && !tlp_bad && cur_fwd <= 13'(AmoBytes);
  assign amo_wr_lid_o = amo_lid_d;
  assign amo_wr_psn_o = amo_psn_d;
  assign amo_wr_tlp_o = amo_tlp_d;
  assign amo_wr_len_o = 5'(cur_fwd);

  // Events, counted once per TLP at its last beat.
  err_e fin_err;
  always_comb begin
    fin_err = cur_err;
    if (tlp_bad && cur_err == ErrNone) fin_err = ErrMalformed;
  end
  logic fin;
  assign fin = accept && f_tlast;
  assign ev_win_miss_o = fin && fin_err == ErrWinMiss;
  assign ev_perm_o = fin && fin_err == ErrPerm;
  assign ev_malformed_o = fin && fin_err == ErrMalformed;
  assign ev_unsup_o = fin && fin_err == ErrUnsup;
  assign ev_cpl_unexp_o = fin && fin_err == ErrCplUnexp;
  assign ev_poison_o = fin && has_data && ep && !tlp_bad && cur_cls != ClsDrop;

  always_comb begin
    beat_d = beat_q;
    cap_d = cap_q;
    decided_d = decided_q;
    cls_d = cls_q;
    err_d = err_q;
    ur_d = ur_q;
    exp_bytes_d = exp_bytes_q;
    fwd_bytes_d = fwd_bytes_q;
    cut_d = cut_q;
    hold_d = hold_q;
    h_valid_d = h_valid_q && !h_push;
    h_data_d = h_data_q;
    h_keep_d = h_keep_q;
    h_last_d = h_last_q;
    h_bad_d = h_bad_q;
    h_dec_d = h_dec_q;
    h_cls_d = h_cls;
    past_d = past_q;
    hole_d = hole_q;
    pad_d = pad_q;
    pad_at_d = pad_at_q;
    if (pad_q && (!h_valid_q || h_push)) begin
      h_valid_d = 1'b1;
      h_data_d = '0;
      h_keep_d = keep_upto;
      h_last_d = keep_end <= 13'(Bpb);
      h_bad_d = 1'b1;
      pad_at_d = pad_at_q + 13'(Bpb);
      pad_d = !h_last_d;
    end
    if (accept) begin
      cap_d = view;
      beat_d = (beat_q == '1) ? beat_q : beat_q + BeatCntW'(1);
      if (decide_now) begin
        decided_d = 1'b1;
        cls_d = cls_new;
        err_d = err_new;
        ur_d = ur_new;
        exp_bytes_d = exp_bytes_new;
        fwd_bytes_d = fwd_bytes_new;
      end
      h_valid_d = !(cut_q && fwd_cls);
      h_data_d = in_data;
      h_keep_d = f_tlast ? f_tkeep : '1;  // a hole before the last beat leaves as a byte (stomped)
      h_last_d = f_tlast;
      h_bad_d = tlp_bad;
      hole_d = !f_tlast && (hole_q || keep_hole);
      h_dec_d = decided_q || decide_now;
      h_cls_d = cur_cls;
      past_d = !f_tlast && (past_q || reach);
      cut_d = !f_tlast && (cut_q || reach_fwd);
      if (fwd_cls && !cut_q && reach_fwd) begin
        h_keep_d = keep_upto;  // the Length ends in this beat
        h_last_d = 1'b1;
        // More beats: the digest's (held for it), or a TLP longer than its Length.
        h_bad_d = f_tlast ? tlp_bad : !cur_td;
        hold_d = !f_tlast && cur_td;
      end else if (hold_q) begin
        h_valid_d = 1'b1;  // the held beat stays, and learns whether the TLP was whole
        h_data_d = h_data_q;
        h_keep_d = h_keep_q;
        h_last_d = 1'b1;
        h_bad_d = h_bad_q || tlp_bad;
        hold_d = !f_tlast;
      end else if (fwd_cls && !cut_q && len_bad) begin
        // Ended early: this beat leaves whole, and zero beats follow up to the Length
        // unless this beat's lanes reach it.
        h_keep_d = lanes_reach ? keep_upto : '1;
        h_last_d = lanes_reach;
        pad_d = !lanes_reach;
        pad_at_d = bs + 13'(Bpb);
      end
      if (f_tlast) begin
        beat_d = '0;
        decided_d = 1'b0;
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      beat_q <= '0;
      decided_q <= 1'b0;
      cls_q <= ClsDrop;
      err_q <= ErrNone;
      ur_q <= 1'b0;
      exp_bytes_q <= '0;
      fwd_bytes_q <= '0;
      cut_q <= 1'b0;
      hold_q <= 1'b0;
      h_valid_q <= 1'b0;
      amo_q <= 1'b0;
      conf_q <= 1'b0;
      conf_snd_q <= 1'b0;
      h_dec_q <= 1'b0;
      h_cls_q <= ClsDrop;
      h_last_q <= 1'b0;
      h_bad_q <= 1'b0;
      past_q <= 1'b0;
      hole_q <= 1'b0;
      pad_q <= 1'b0;
      pad_at_q <= '0;
    end else begin
      beat_q <= beat_d;
      decided_q <= decided_d;
      cls_q <= cls_d;
      err_q <= err_d;
      ur_q <= ur_d;
      exp_bytes_q <= exp_bytes_d;
      fwd_bytes_q <= fwd_bytes_d;
      cut_q <= cut_d;
      hold_q <= hold_d;
      h_valid_q <= h_valid_d;
      amo_q <= amo_d;
      conf_q <= conf_d;
      conf_snd_q <= conf_snd_d;
      h_dec_q <= h_dec_d;
      h_cls_q <= h_cls_d;
      h_last_q <= h_last_d;
      h_bad_q <= h_bad_d;
      past_q <= past_d;
      hole_q <= hole_d;
      pad_q <= pad_d;
      pad_at_q <= pad_at_d;
    end
  end

  always_ff @(posedge clk_i) begin
    cap_q <= cap_d;
    h_data_q <= h_data_d;
    h_keep_q <= h_keep_d;
    conf_page_q <= conf_page_d;
    if (accept) begin
      amo_tlp_q <= amo_tlp_d;
      amo_lid_q <= amo_lid_d;
      amo_psn_q <= amo_psn_d;
    end
  end

  // ------------------------------------------------------------ lookup flow and fence
  // Lookups go when no fence is up and the result queue has room for their answers
  // (r_cnt_q: lookups launched whose answers the decision has not taken). A fence goes
  // up when an ART_CTRL write's lookup goes; no lookup goes after it until that write
  // took effect in the ART (art_upd_done_i), or turned out not to be made (malformed,
  // poisoned). Being the last lookup launched, its TLP is the one decided when the
  // answer count falls to zero (dec_fenced).
  logic fence_q, fence_wait_q, dec_fenced_q, dec_fenced, csr_issued;
  logic [RcW-1:0] r_cnt_q;
  assign lk_go = lk_valid_q && !fence_q && !art_busy_i && r_cnt_q != RcW'(ResDepth);
  assign art_look_valid_o = lk_go;
  assign art_addr_o = lk_addr_q;
  assign dec_fenced = dec_fenced_q || (r_pop && fence_q && r_cnt_q == RcW'(1));
  assign csr_issued = csr_valid_o && csr_ready_i;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      r_cnt_q <= '0;
      fence_q <= 1'b0;
      fence_wait_q <= 1'b0;
      dec_fenced_q <= 1'b0;
    end else begin
      r_cnt_q <= r_cnt_q + RcW'(lk_go) - RcW'(r_pop);
      dec_fenced_q <= dec_fenced && !(accept && f_tlast);
      if (lk_go && lk_fence_q) fence_q <= 1'b1;
      if (accept && f_tlast && dec_fenced) begin
        if (csr_issued) fence_wait_q <= 1'b1;
        else fence_q <= 1'b0;
      end
      if (fence_wait_q && art_upd_done_i) begin
        fence_wait_q <= 1'b0;
        fence_q <= 1'b0;
      end
    end
  end
  // The result queue never overflows (r_cnt_q counts its words and the lookups in the ART).
  `NI_ASSERT(ResQueueRoom_A, !art_res_valid_i || r_room)
  `NI_ASSERT(ResForLookup_A, !r_pop || r_cnt_q != '0)

  // A first beat is offered only with its header beat and the readies that beat needs
  // (h_go_new): it goes back if the host withdraws that beat, or if one of those readies
  // falls (never in nic_top, where each is a queue that only this block fills).
  logic h_cond_q, h_back;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) h_cond_q <= 1'b0;
    else h_cond_q <= h_valid_q && !h_dec_q;
  end
  assign h_back = h_cond_q && !h_go_new;
  `NI_ASSERT_AXIS_STABLE_UNLESS(ReqBeatStable_A, req_beat_valid_o, req_beat_ready_i, req_beat_o, h_back)
  `NI_ASSERT_AXIS_STABLE_UNLESS(RspBeatStable_A, rsp_beat_valid_o, rsp_beat_ready_i, rsp_beat_o, h_back)
  // A beat of a TLP whose class is still open is only ever the first one.
  `NI_ASSERT(UndecidedFirst_A, (h_valid_q && !h_dec_q) |-> (beat_q == BeatCntW'(1)))
  // The host's side of the handshake (a detector: the NI survives the violation).
  `NI_PROTOCOL(HostValidHeld_A, !withdrawn)
endmodule

`default_nettype wire

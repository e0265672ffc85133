// SPDX-License-Identifier: Apache-2.0
// Request path toward the framer, with the write combiner. Tunneled requests from
// ni_host_rx arrive as a header record plus the TLP's beats; they leave as header
// records and beats for ni_fab_tx (source 2). With InReg both inputs pass a queue
// without fall-through first (a cycle more, for FPGA clocks).
//
// A posted write through a combining window opens a packet: its beats enter the
// beat queue, but its header record is held back. Later writes that continue it
// (same window and destination, next address, still within MaxPayload and the
// 4 KiB page) lose their TLP header: their data is rotated onto the end of the open
// packet. The open packet is sent (flushed) when anything else arrives, when it
// cannot grow, after an idle timeout, or on a flush request (WC_FLUSH / ART_CTRL
// write). Only then is its header record released; the TLP Length and Last BE of
// its first beat are corrected as the framer reads it. The framer never reads an
// open packet's beats, so a malformed write (length mismatch, seen at its last beat)
// is taken back out of the queue.
//
// NI-replicated multicast happens on the read side: a packet whose DLID is a group
// of the MGRP table is offered once per member, each copy with the member's DLID
// and memory ID; its beats are read again for every copy and freed after the last.
// A combined packet that starts where the previous packet pushed toward the framer
// ended, with the same header (destination, memory ID, flags) and a unicast
// destination, is marked as a continuation (tx_hdr_t.cont): it may travel without
// TEH and TLP header, the receiver taking memory ID and address from the packet
// before it in the source's sequence. Anything else pushed in between breaks the run.
// Rules and outcomes: docs/architecture.md.
`default_nettype none
`include "ni_assert.svh"

module ni_wc #(
  parameter int unsigned DataW = 64,
  parameter int unsigned MaxPayload = 256,
  parameter int unsigned Beats = 16,       // beat queue depth
  parameter int unsigned Hdrs = 4,         // header records toward the framer
  parameter int unsigned RoomMargin = 2,   // TLPs that may start after room_o was sampled
  parameter int unsigned RoomTlps = 1,     // whole TLPs room_o promises (one per host port)
  parameter int unsigned Groups = 4,       // NI-replicated multicast groups
  parameter int unsigned GroupMembers = 4, // members per group
  // 1: the header and beat inputs are registered (queues without fall-through): a
  // cycle more of latency, and no path from ni_host_rx through the merge decision
  // and back; and the merge decision reads its compares registered (a cycle per write
  // that finds a packet open). For FPGA clocks; see docs/synthesis.md.
  parameter int unsigned InReg = 0,
  localparam int unsigned Bpb = DataW / 8,
  localparam int unsigned KeepW = Bpb,
  localparam int unsigned BeatW = DataW + KeepW + 2  // {bad, last, keep, data}
) (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic [15:0] timeout_i,  // idle cycles before an open packet is sent
  input  logic flush_i,           // send the open packet once all earlier requests are in
  // NI-replicated multicast groups (MGRP_CTRL, MGRP_MEMBER[g * GroupMembers + m]).
  input  logic [Groups-1:0] grp_valid_i,
  input  logic [Groups-1:0][15:0] grp_lid_i,
  input  logic [Groups-1:0][2:0] grp_members_i,
  input  logic [Groups*GroupMembers-1:0][15:0] mbr_dlid_i,
  input  logic [Groups*GroupMembers-1:0][15:0] mbr_memid_i,
  // Requests from ni_host_rx.
  input  ni_pkg::tx_hdr_t in_hdr_i,
  input  ni_pkg::wc_meta_t in_meta_i,
  input  logic in_hdr_valid_i,
  output logic in_hdr_ready_o,
  // A request's header is decided at the host port this cycle, whether or not it can
  // be handed over yet (at 64 bits it goes with the TLP's first beat, which waits
  // for in_beat_ready_o): lets an open packet that it does not continue be sent.
  input  logic in_hdr_pending_i,
  input  logic [BeatW-1:0] in_beat_i,
  input  logic in_beat_valid_i,
  output logic in_beat_ready_o,
  // Toward ni_fab_tx.
  output ni_pkg::tx_hdr_t out_hdr_o,
  output logic out_hdr_valid_o,
  input  logic out_hdr_ready_i,
  output logic [BeatW-1:0] out_beat_o,
  output logic out_beat_valid_o,
  input  logic out_beat_ready_i,
  // 1: a whole request TLP fits now (see nic_top's s_host_req_room_o).
  output logic room_o,
  output logic ev_merged_o  // a write was appended to an open packet
);
  localparam int unsigned HdrW = ni_pkg::TxHdrW;
  localparam int unsigned MetaW = ni_pkg::WcMetaW;
  localparam int unsigned LaneW = $clog2(Bpb);
  localparam int unsigned FillW = $clog2(Bpb + 1);
  localparam int unsigned PtrW = $clog2(Beats);
  localparam int unsigned CntW = $clog2(Beats + 1);
  localparam int unsigned MaxTlpBeats = (ni_pkg::TlpHdrBytes + MaxPayload + Bpb - 1) / Bpb;
  localparam int unsigned InHdrs = 2;

  // Correction of the first beat of a combined TLP: Length (bytes 2-3) and BEs (byte 7).
  typedef struct packed {
    logic en;
    logic [9:0] len_dw;
    logic [7:0] be;
  } patch_t;
  localparam int unsigned PatchW = 1 + 10 + 8;  // $bits(patch_t), written out for Yosys
`ifdef VERILATOR
  if (PatchW != $bits(patch_t)) begin : gen_bad_patch_width
    $error("ni_wc: PatchW does not match patch_t");
  end
`endif

  // ------------------------------------------------------------ input header queue
  // Whether a write opens a packet depends on the write alone: found as it enters and
  // kept with it (a write that fills a packet or ends on a page boundary by itself
  // is sent as is).
  ni_pkg::tx_hdr_t ih;
  ni_pkg::wc_meta_t im;
  logic ih_valid, take, in_starts_open, starts_open;
  logic [11:0] in_end;
  assign in_end = in_meta_i.addr[11:0] + in_meta_i.bytes[11:0];
  assign in_starts_open = in_meta_i.wc && in_meta_i.bytes < 13'(MaxPayload) && in_end != 12'h0;
  ni_fifo #(.Width(HdrW + MetaW + 1), .Depth(InHdrs), .FallThrough((InReg == 0) ? 1 : 0)) u_in_q (
    .clk_i, .rst_ni, .wdata_i({in_hdr_i, in_meta_i, in_starts_open}), .wvalid_i(in_hdr_valid_i),
    .wready_o(in_hdr_ready_o), .rdata_o({ih, im, starts_open}), .rvalid_o(ih_valid), .rready_i(take));

  // ------------------------------------------------------------ input beats
  // The beat the combiner works on (ib): the input itself, or with InReg the head of
  // a two-beat queue. A first beat goes in with its header or after it, so the
  // header is at the head of its queue by the time the beat is.
  logic [BeatW-1:0] ib;
  logic ib_valid, ib_ready, hdr_pending;
  logic [1:0] in_beats;  // beats in that queue, for room_o
  if (InReg != 0) begin : gen_in_reg
    ni_fifo #(.Width(BeatW), .Depth(2), .FallThrough(0)) u_in_beat_q (
      .clk_i, .rst_ni, .wdata_i(in_beat_i), .wvalid_i(in_beat_valid_i),
      .wready_o(in_beat_ready_o), .rdata_o(ib), .rvalid_o(ib_valid), .rready_i(ib_ready));
    // Two places, no fall-through: a head when valid, and a second beat when full.
    assign in_beats = 2'(ib_valid) + 2'(!in_beat_ready_o);
    // A header decided at the host port is in the queue before its first beat.
    assign hdr_pending = 1'b0;
    logic unused_pending;
    assign unused_pending = in_hdr_pending_i;
  end else begin : gen_in_pass
    assign ib = in_beat_i;
    assign ib_valid = in_beat_valid_i;
    assign in_beat_ready_o = ib_ready;
    assign in_beats = '0;
    assign hdr_pending = in_hdr_pending_i;
  end

  // ------------------------------------------------------------ output header queue
  ni_pkg::tx_hdr_t oq_hdr, oq_head;
  patch_t oq_patch, oq_rpatch;
  logic oq_push, oq_ready, oq_pop;
  // Its LUT RAM written from its count (FreeWrite): the merge decision comes late.
  ni_fifo #(.Width(HdrW + PatchW), .Depth(Hdrs), .FreeWrite(1)) u_out_q (
    .clk_i, .rst_ni, .wdata_i({oq_hdr, oq_patch}), .wvalid_i(oq_push), .wready_o(oq_ready),
    .rdata_o({oq_head, oq_rpatch}), .rvalid_o(out_hdr_valid_o), .rready_i(oq_pop));

  // ------------------------------------------------------------ state
  typedef enum logic [1:0] {ModePass, ModeNew, ModeAppend} mode_e;
  logic busy_q;                     // a TLP's header is taken, its last beat is not
  mode_e mode_q;
  logic [LaneW-1:0] rot_q;          // lane rotation of an appended TLP's data
  logic [1:0] bidx_q;               // beat index in the TLP (saturating)
  ni_pkg::wc_meta_t meta_q;
  logic open_q;                     // an open packet exists
  logic open_cont_q;                // ... and it continues the packet pushed before it
  logic chain_q;                    // the last packet pushed was combined, to a unicast LID
  ni_pkg::tx_hdr_t open_hdr_q;
  logic [7:0] open_win_q;
  logic [63:0] next_addr_q;
  logic [12:0] open_len_q;          // payload bytes in the open packet
  logic [FillW-1:0] fill_q;         // lanes of held_q in use (the open packet's last beat)
  logic [DataW-1:0] held_q;
  // Taken back if the TLP turns out malformed.
  logic [FillW-1:0] snap_fill_q;
  logic [DataW-1:0] snap_held_q;
  logic [PtrW-1:0] snap_wptr_q;
  logic [CntW-1:0] n_pushed_q;      // beats this TLP pushed
  // Flush requests wait for the requests that reached the NI before them: a flush
  // requested when h headers had come in is due once h TLPs are done (mod 8; at
  // most 3 are ever between the two counts).
  logic [7:0] flush_mark_q;
  logic [2:0] hin_cnt_q, done_cnt_q;
  logic [15:0] idle_q;
  logic [3:0] in_hdrs_q, out_hdrs_q;  // header records in the input and output queues
  // Beat queue.
  logic [BeatW-1:0] mem_q [Beats];
  logic [PtrW-1:0] wptr_q, rptr_q;
  logic [CntW-1:0] cnt_q;

  // ------------------------------------------------------------ what to do with the next TLP
  logic fl_due, can_grow, hdr_same, appendable, want_flush, do_flush, space;
  mode_e new_mode;
  assign space = cnt_q != CntW'(Beats);
  assign fl_due = flush_mark_q[done_cnt_q];
  // The open packet's room and the idle timeout are compared on the next state and
  // read registered: take, which gates wide enables, then starts at registers.
  logic can_grow_q, idle_over_q;
  assign can_grow = can_grow_q;
  always_comb begin
    hdr_same = 1'b1;  // destination, memory ID and flags; not the packet length
    for (int p = 0; p < ni_pkg::TxHdrBytes; p++) begin
      if (p != 4 && p != 5 && ih.bytes[p*8 +: 8] != open_hdr_q.bytes[p*8 +: 8]) hdr_same = 1'b0;
    end
  end
  // The head write continues the open packet (the compares, without open_q).
  logic app_now;
  assign app_now = can_grow && im.wc && im.win == open_win_q && im.addr == next_addr_q && hdr_same &&
                   14'(open_len_q) + 14'(im.bytes) <= 14'(MaxPayload);
  // With InReg the decision reads app_now registered a cycle before (look_q), valid
  // (look_vld_q) when neither the head nor the open packet has changed since. While a
  // packet is open a TLP thus waits a cycle after the one before it; without an open
  // packet nothing needs comparing.
  logic decided, look_q, look_vld_q;  // (registered with the next state)
  assign decided = InReg == 0 || !open_q || look_vld_q;
  assign appendable = open_q && ((InReg != 0) ? look_vld_q && look_q : app_now);
  // With the input queue empty, ih shows the header being decided (fall-through).
  logic hdr_seen;
  assign hdr_seen = ih_valid || (in_hdrs_q == '0 && hdr_pending);
  assign want_flush = open_q && !busy_q &&
                      (fl_due || !can_grow || (hdr_seen && decided && !appendable) ||
                       (!hdr_seen && idle_over_q));
  assign do_flush = want_flush && oq_ready && space;
  assign new_mode = appendable ? ModeAppend : starts_open ? ModeNew : ModePass;
  assign take = !busy_q && ih_valid && decided && !fl_due && !want_flush && (new_mode != ModePass || oq_ready);

  // The current TLP as seen by the input beat: the one in progress, or while none is
  // the one at the head of the input queue, which a beat entering now belongs to
  // (BeatHasHeader_A: its header is taken in this cycle). Only a beat reads these;
  // selected by busy_q, not by take, the merge does not wait for the take decision.
  mode_e cur_mode;
  logic [LaneW-1:0] cur_rot;
  logic [1:0] cur_bidx;
  ni_pkg::wc_meta_t cur_meta;
  logic [FillW-1:0] cur_snap_fill;
  logic [DataW-1:0] cur_snap_held;
  logic [PtrW-1:0] cur_snap_wptr;
  logic [CntW-1:0] cur_n_pushed;
  assign cur_mode = busy_q ? mode_q : new_mode;
  assign cur_rot = busy_q ? rot_q : ((new_mode == ModeAppend) ? LaneW'(open_len_q) : '0);
  assign cur_bidx = busy_q ? bidx_q : 2'd0;
  assign cur_meta = busy_q ? meta_q : im;
  assign cur_snap_fill = busy_q ? snap_fill_q : fill_q;
  assign cur_snap_held = busy_q ? snap_held_q : held_q;
  assign cur_snap_wptr = busy_q ? snap_wptr_q : wptr_q;
  assign cur_n_pushed = busy_q ? n_pushed_q : '0;

  // ------------------------------------------------------------ beat merge
  logic [DataW-1:0] in_data, rot, merged;
  logic [KeepW-1:0] in_keep, dmask;
  logic in_last, in_bad, beat_in;
  logic [FillW-1:0] n;
  logic [2*DataW-1:0] rot2;
  assign {in_bad, in_last, in_keep, in_data} = ib;
  // A beat may enter in the cycle its header is taken: a beat offered while no TLP is
  // in progress is the first of the TLP whose header is at the head of the input
  // queue or arriving now (at 64 bits ni_host_rx sends the header with the second
  // beat). take_if_hdr is take with the header assumed valid, so that ready does not
  // depend on in_hdr_valid_i (which ni_host_rx derives from this ready).
  logic take_if_hdr;
  assign take_if_hdr = !busy_q && !fl_due && !(open_q && (!can_grow || !appendable)) &&
                       (new_mode != ModePass || oq_ready);
  // With InReg a first beat reaches the combiner with its header or after it: take.
  assign ib_ready = (busy_q || (InReg != 0 ? take : take_if_hdr)) && space;
  assign beat_in = ib_valid && ib_ready;
  assign rot2 = {in_data, in_data} << (32'(cur_rot) * 8);
  assign rot = rot2[2*DataW-1:DataW];
  always_comb begin
    // An appended TLP keeps only its data: the 16 header bytes are dropped.
    for (int j = 0; j < Bpb; j++) begin
      dmask[j] = in_keep[j] && !(cur_mode == ModeAppend && 32'(cur_bidx) * Bpb + j < ni_pkg::TlpHdrBytes);
    end
    n = '0;
    for (int j = 0; j < Bpb; j++) n = n + FillW'(dmask[j]);
    for (int j = 0; j < Bpb; j++) merged[j*8 +: 8] = (32'(j) < 32'(fill_q)) ? held_q[j*8 +: 8] : rot[j*8 +: 8];
  end

  logic held_full, comb_push, rollback, commit;
  logic [FillW:0] fill_sum;
  assign held_full = fill_q == FillW'(Bpb);
  assign fill_sum = (FillW+1)'(fill_q) + (FillW+1)'(n);
  // A full held beat stays held only at the end of a TLP (it may be the packet's last
  // beat, which a flush marks); inside a TLP more data is sure to follow, so full
  // beats are pushed at once and the TLP's own last beat can close the packet.
  logic push_held, push_merged_full;
  assign push_held = held_full && (n != '0 || !in_last);
  assign push_merged_full = !held_full && (fill_sum > (FillW+1)'(Bpb) ||
                                           (fill_sum == (FillW+1)'(Bpb) && !in_last));
  assign comb_push = push_held || push_merged_full;
  assign rollback = beat_in && cur_mode != ModePass && in_last && in_bad;
  assign commit = beat_in && cur_mode != ModePass && in_last && !in_bad;

  // A packet that this TLP fills (MaxPayload or the page end) is closed with its
  // last beat, when that beat completes the packet in one push: no flush cycle, so
  // full packets stream at one beat per cycle. Otherwise the flush follows.
  logic [12:0] new_len;
  logic [63:0] new_next;
  logic close_now;
  assign new_len = (cur_mode == ModeNew) ? cur_meta.bytes : open_len_q + cur_meta.bytes;
  assign new_next = ((cur_mode == ModeNew) ? cur_meta.addr : next_addr_q) + 64'(cur_meta.bytes);
  assign close_now = commit && (new_len >= 13'(MaxPayload) || new_next[11:0] == 12'h0) &&
                     !held_full && fill_sum <= (FillW+1)'(Bpb) && oq_ready;

  // The registered compare (InReg): valid the next cycle unless the head or the open
  // packet changes in this one. A packet opens, grows or closes with a TLP's last beat
  // and is sent by a flush; after a flush none is open, and nothing reads the compare
  // until a TLP opens one.
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      look_q <= 1'b0;
      look_vld_q <= 1'b0;
    end else begin
      look_q <= app_now;
      look_vld_q <= ih_valid && !take && !(beat_in && in_last);
    end
  end

  // ------------------------------------------------------------ beat queue writes
  logic push;
  logic [BeatW-1:0] push_beat;
  logic [KeepW-1:0] tail_keep, close_keep;
  always_comb begin
    for (int j = 0; j < Bpb; j++) tail_keep[j] = 32'(j) < 32'(fill_q);
    for (int j = 0; j < Bpb; j++) close_keep[j] = 32'(j) < 32'(fill_sum);
    push = 1'b0;
    push_beat = '0;
    if (do_flush) begin
      push = 1'b1;
      push_beat = {1'b0, 1'b1, tail_keep, held_q};
    end else if (beat_in && cur_mode == ModePass) begin
      push = 1'b1;
      push_beat = ib;
    end else if (close_now) begin
      push = 1'b1;
      push_beat = {1'b0, 1'b1, close_keep, merged};
    end else if (beat_in && comb_push && !rollback) begin
      push = 1'b1;
      push_beat = {1'b0, 1'b0, {KeepW{1'b1}}, push_held ? held_q : merged};
    end
  end

  // Header record of a flushed packet: final LRH length; TLP fields corrected on read.
  logic [10:0] flush_words;
  logic [12:0] flush_len;
  assign flush_len = close_now ? new_len : open_len_q;
  assign flush_words = 11'((ni_pkg::FabHdrBytes + ni_pkg::TlpHdrBytes + 32'(flush_len) + 4) >> 2);
  always_comb begin
    oq_hdr = ih;
    oq_patch = '0;
    if (do_flush || close_now) begin
      oq_hdr = open_hdr_q;
      oq_hdr.cont = open_cont_q;
      oq_hdr.bytes[4*8 +: 8] = {5'b0, flush_words[10:8]};
      oq_hdr.bytes[5*8 +: 8] = flush_words[7:0];
      oq_patch.en = 1'b1;
      oq_patch.len_dw = flush_len[11:2];  // 4096 bytes: 0, as PCIe encodes it
      oq_patch.be = {(flush_len > 13'd4) ? 4'hF : 4'h0, 4'hF};
    end
  end
  assign oq_push = do_flush || close_now || (take && new_mode == ModePass);

  // ------------------------------------------------------------ multicast copies
  // The head header is offered once per member of its group (copy_q counts); the
  // queue entry is popped with the last copy.
  localparam int unsigned MbrW = $clog2(Groups * GroupMembers);
  localparam int unsigned CopyW = $clog2(GroupMembers);
  logic [15:0] head_dlid;
  logic grp_hit, last_copy, hdr_take, rd_replay_q, cur_replay;
  logic [MbrW-1:0] mbr;
  logic [CopyW-1:0] copy_q;
  assign head_dlid = {oq_head.bytes[2*8 +: 8], oq_head.bytes[3*8 +: 8]};
  always_comb begin
    grp_hit = 1'b0;
    mbr = '0;
    last_copy = 1'b1;
    for (int g = 0; g < Groups; g++) begin
      if (grp_valid_i[g] && grp_lid_i[g] == head_dlid && grp_members_i[g] != 3'd0) begin
        grp_hit = 1'b1;
        mbr = MbrW'(g * GroupMembers) + MbrW'(copy_q);
        last_copy = 32'(copy_q) + 1 >= 32'(grp_members_i[g]);
      end
    end
    out_hdr_o = oq_head;
    if (grp_hit) begin
      out_hdr_o.bytes[2*8 +: 8] = mbr_dlid_i[mbr][15:8];
      out_hdr_o.bytes[3*8 +: 8] = mbr_dlid_i[mbr][7:0];
      out_hdr_o.bytes[22*8 +: 8] = mbr_memid_i[mbr][15:8];
      out_hdr_o.bytes[23*8 +: 8] = mbr_memid_i[mbr][7:0];
    end
  end
  assign hdr_take = out_hdr_valid_o && out_hdr_ready_i;
  assign oq_pop = hdr_take && last_copy;
  // The beats being read belong to a copy that is not the last: read them again.
  assign cur_replay = hdr_take ? !last_copy : rd_replay_q;

  // ------------------------------------------------------------ read side
  // The patch of the packet whose first beat is next: its header is at the head of
  // the header queue until the framer takes it, then in rd_patch_q.
  logic pop, free, rd_first_q, hdr_popped_q;
  patch_t rd_patch_q, rd_patch;
  logic [BeatW-1:0] rbeat, mem_rd_q;
  logic [CntW-1:0] open_beats_q;  // beats of the open packet in the queue
  logic [CntW-1:0] replayed_q;    // beats read by a copy that is not the last, not freed
  logic [PtrW-1:0] rd_start_q, rd_start;  // the packet's first beat, where a copy starts again
  assign rd_patch = hdr_popped_q ? rd_patch_q : oq_rpatch;
  always_comb begin
    rbeat = mem_rd_q;
    if (rd_first_q && rd_patch.en) begin
      rbeat[2*8 +: 2] = rd_patch.len_dw[9:8];
      rbeat[3*8 +: 8] = rd_patch.len_dw[7:0];
      rbeat[7*8 +: 8] = rd_patch.be;
    end
  end
  assign out_beat_o = rbeat;
  assign out_beat_valid_o = cnt_q != open_beats_q + replayed_q;
  assign pop = out_beat_valid_o && out_beat_ready_i;
  assign free = pop && !cur_replay;
  assign rd_start = rd_first_q ? rptr_q : rd_start_q;

  // ------------------------------------------------------------ room for the root complex
  assign room_o = 32'(Beats) - 32'(cnt_q) - 32'(in_beats) >= RoomTlps * MaxTlpBeats + RoomMargin &&
                  32'(in_hdrs_q) + 32'(out_hdrs_q) + RoomMargin + RoomTlps - 1 <= Hdrs;
  assign ev_merged_o = commit && cur_mode == ModeAppend;

  // ------------------------------------------------------------ next state
  logic busy_d, open_d, rd_first_d, open_cont_d, chain_d;
  // The open packet goes to an NI-replicated group (copies to several LIDs).
  logic open_grp;
  always_comb begin
    open_grp = 1'b0;
    for (int g = 0; g < Groups; g++) begin
      if (grp_valid_i[g] && grp_members_i[g] != 3'd0 &&
          grp_lid_i[g] == {open_hdr_q.bytes[2*8 +: 8], open_hdr_q.bytes[3*8 +: 8]}) open_grp = 1'b1;
    end
  end
  // A new combined packet continues the run: the header of the last one pushed is
  // still in open_hdr_q and its end address in next_addr_q.
  logic continues;
  assign continues = chain_q && hdr_same && im.addr == next_addr_q;
  logic [7:0] flush_mark_d;
  mode_e mode_d;
  logic [LaneW-1:0] rot_d;
  logic [1:0] bidx_d;
  ni_pkg::wc_meta_t meta_d;
  ni_pkg::tx_hdr_t open_hdr_d;
  logic [7:0] open_win_d;
  logic [63:0] next_addr_d;
  logic [12:0] open_len_d;
  logic [FillW-1:0] fill_d, snap_fill_d;
  logic [DataW-1:0] held_d, snap_held_d;
  logic [PtrW-1:0] snap_wptr_d, wptr_d, rptr_d;
  logic [CntW-1:0] n_pushed_d, cnt_d, open_beats_d;
  logic [2:0] hin_cnt_d, done_cnt_d;
  logic [15:0] idle_d;
  logic [3:0] in_hdrs_d, out_hdrs_d;
  patch_t rd_patch_d;
  logic hdr_popped_d, rd_replay_d;
  logic [CopyW-1:0] copy_d;
  logic [PtrW-1:0] rd_start_d;
  logic [CntW-1:0] replayed_d;
  logic in_push;
  assign in_push = in_hdr_valid_i && in_hdr_ready_o;

  always_comb begin
    busy_d = busy_q;
    mode_d = mode_q;
    rot_d = rot_q;
    bidx_d = bidx_q;
    meta_d = meta_q;
    open_d = open_q;
    open_cont_d = open_cont_q;
    chain_d = chain_q;
    open_hdr_d = open_hdr_q;
    open_win_d = open_win_q;
    next_addr_d = next_addr_q;
    open_len_d = open_len_q;
    fill_d = fill_q;
    held_d = held_q;
    snap_fill_d = snap_fill_q;
    snap_held_d = snap_held_q;
    snap_wptr_d = snap_wptr_q;
    n_pushed_d = n_pushed_q;
    flush_mark_d = flush_mark_q;
    hin_cnt_d = hin_cnt_q + 3'(in_push);
    done_cnt_d = done_cnt_q;
    in_hdrs_d = in_hdrs_q + 4'(in_push) - 4'(take);
    out_hdrs_d = out_hdrs_q + 4'(oq_push && oq_ready) - 4'(oq_pop);
    copy_d = hdr_take ? (last_copy ? '0 : copy_q + CopyW'(1)) : copy_q;
    rd_replay_d = cur_replay;
    rd_start_d = rd_start;
    replayed_d = replayed_q;
    if (pop && cur_replay) replayed_d = rbeat[DataW + KeepW] ? '0 : replayed_q + CntW'(1);
    // Idle means no request although the root complex may send one: cycles in which
    // room_o holds it back do not count, or a slow fabric would shrink packets.
    if (!open_q || busy_q || hdr_seen) idle_d = '0;
    else if (room_o && idle_q != '1) idle_d = idle_q + 16'd1;
    else idle_d = idle_q;
    if (fl_due && !busy_q && (!open_q || do_flush)) flush_mark_d[done_cnt_q] = 1'b0;
    if (flush_i) flush_mark_d[hin_cnt_q + 3'(in_push)] = 1'b1;

    // The TLP in progress. Its metadata and the snapshot for a rollback are read only
    // while it is (busy_q, or in the cycle of take through cur_*): captured in every
    // cycle without one, they need no enable from take.
    if (!busy_q) begin
      meta_d = im;
      snap_fill_d = fill_q;
      snap_held_d = held_q;
      snap_wptr_d = wptr_q;
    end
    if (take) begin
      busy_d = 1'b1;
      mode_d = new_mode;
      rot_d = cur_rot;
      bidx_d = '0;
      n_pushed_d = '0;
      if (new_mode == ModeNew) begin
        open_hdr_d = ih;
        open_win_d = im.win;
        open_cont_d = continues;
      end
    end
    if (beat_in) begin
      bidx_d = (cur_bidx == 2'd3) ? cur_bidx : cur_bidx + 2'd1;
      n_pushed_d = cur_n_pushed + CntW'(push);
      if (in_last) begin
        busy_d = 1'b0;
        done_cnt_d = done_cnt_q + 3'd1;
      end
      if (cur_mode != ModePass) begin
        if (push_held) begin
          held_d = rot;
          fill_d = n;
        end else if (push_merged_full) begin
          held_d = rot;
          fill_d = FillW'(fill_sum - (FillW+1)'(Bpb));
        end else begin
          held_d = merged;
          fill_d = FillW'(fill_sum);
        end
      end
    end
    if (commit) begin
      open_d = !close_now;
      open_len_d = new_len;
      next_addr_d = new_next;
    end
    if (rollback) begin
      held_d = cur_snap_held;
      fill_d = cur_snap_fill;
    end
    if (do_flush || close_now) begin
      open_d = 1'b0;
      fill_d = '0;
    end
    // The run: a combined packet to a unicast LID extends it, any other packet breaks
    // it, and so does a new packet taken back (open_hdr_q is no longer the last one's).
    if (do_flush || close_now) chain_d = open_hdr_q.bytes[2*8+6 +: 2] != 2'b11 && !open_grp;
    else if (take && new_mode == ModePass) chain_d = 1'b0;
    if (rollback && cur_mode == ModeNew) chain_d = 1'b0;

    // Beat queue; beats of the open packet are not offered to the framer yet.
    wptr_d = wptr_q;
    if (rollback) wptr_d = cur_snap_wptr;
    else if (push) wptr_d = (wptr_q == PtrW'(Beats - 1)) ? '0 : wptr_q + PtrW'(1);
    rptr_d = rptr_q;
    if (pop && cur_replay && rbeat[DataW + KeepW]) rptr_d = rd_start;
    else if (pop) rptr_d = (rptr_q == PtrW'(Beats - 1)) ? '0 : rptr_q + PtrW'(1);
    cnt_d = cnt_q + CntW'(push) - CntW'(free) - (rollback ? cur_n_pushed : '0);
    open_beats_d = (do_flush || close_now) ? '0 : open_beats_q + CntW'(push && cur_mode != ModePass) -
                                   (rollback ? cur_n_pushed : '0);
    rd_first_d = pop ? rbeat[DataW + KeepW] : rd_first_q;
    hdr_popped_d = (pop && rbeat[DataW + KeepW]) ? 1'b0 : (hdr_take ? 1'b1 : hdr_popped_q);
    rd_patch_d = hdr_take ? oq_rpatch : rd_patch_q;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      busy_q <= 1'b0;
      mode_q <= ModePass;
      rot_q <= '0;
      bidx_q <= '0;
      open_q <= 1'b0;
      open_cont_q <= 1'b0;
      chain_q <= 1'b0;
      open_win_q <= '0;
      next_addr_q <= '0;
      open_len_q <= '0;
      fill_q <= '0;
      snap_fill_q <= '0;
      snap_wptr_q <= '0;
      n_pushed_q <= '0;
      flush_mark_q <= '0;
      hin_cnt_q <= '0;
      done_cnt_q <= '0;
      idle_q <= '0;
      can_grow_q <= 1'b0;
      idle_over_q <= 1'b0;
      wptr_q <= '0;
      rptr_q <= '0;
      cnt_q <= '0;
      open_beats_q <= '0;
      rd_first_q <= 1'b1;
      hdr_popped_q <= 1'b0;
      rd_patch_q <= '0;
      in_hdrs_q <= '0;
      out_hdrs_q <= '0;
      copy_q <= '0;
      rd_replay_q <= 1'b0;
      rd_start_q <= '0;
      replayed_q <= '0;
    end else begin
      busy_q <= busy_d;
      mode_q <= mode_d;
      rot_q <= rot_d;
      bidx_q <= bidx_d;
      open_q <= open_d;
      open_cont_q <= open_cont_d;
      chain_q <= chain_d;
      open_win_q <= open_win_d;
      next_addr_q <= next_addr_d;
      open_len_q <= open_len_d;
      fill_q <= fill_d;
      snap_fill_q <= snap_fill_d;
      snap_wptr_q <= snap_wptr_d;
      n_pushed_q <= n_pushed_d;
      flush_mark_q <= flush_mark_d;
      hin_cnt_q <= hin_cnt_d;
      done_cnt_q <= done_cnt_d;
      idle_q <= idle_d;
      can_grow_q <= open_len_d < 13'(MaxPayload) && next_addr_d[11:0] != 12'h0;
      // Read only while a packet is open, a cycle at least after it opened.
      idle_over_q <= idle_d >= timeout_i;
      wptr_q <= wptr_d;
      rptr_q <= rptr_d;
      cnt_q <= cnt_d;
      open_beats_q <= open_beats_d;
      rd_first_q <= rd_first_d;
      hdr_popped_q <= hdr_popped_d;
      rd_patch_q <= rd_patch_d;
      in_hdrs_q <= in_hdrs_d;
      out_hdrs_q <= out_hdrs_d;
      copy_q <= copy_d;
      rd_replay_q <= rd_replay_d;
      rd_start_q <= rd_start_d;
      replayed_q <= replayed_d;
    end
  end

  // Datapath: not reset.
  always_ff @(posedge clk_i) begin
    meta_q <= meta_d;
    open_hdr_q <= open_hdr_d;
    held_q <= held_d;
    snap_held_q <= snap_held_d;
    if (push && !rollback) mem_q[wptr_q] <= push_beat;
  end
  // Registered read port (block RAM): it reads the next cycle's read pointer and
  // passes a beat written there in the same cycle through.
  always_ff @(posedge clk_i) begin
    mem_rd_q <= (push && !rollback && wptr_q == rptr_d) ? push_beat : mem_q[rptr_d];
  end

  logic unused;
  assign unused = ^{cur_meta.wc, cur_meta.win, rot2[DataW-1:0]};

  `NI_ASSERT(BeatHasHeader_A, (beat_in && !busy_q) |-> take)
  `NI_ASSERT(PushHasRoom_A, push |-> space)
  `NI_ASSERT(FillInRange_A, 32'(fill_q) <= Bpb)
  `NI_ASSERT(OpenFitsPayload_A, open_q |-> (32'(open_len_q) <= MaxPayload))
  `NI_ASSERT(OpenHasBytes_A, (open_q && !busy_q) |-> (fill_q != '0))
  `NI_ASSERT(CanGrowIsCurrent_A, can_grow_q == (open_len_q < 13'(MaxPayload) && next_addr_q[11:0] != 12'h0))
  `NI_ASSERT(LookIsCurrent_A, (InReg != 0 && open_q && look_vld_q) |-> (look_q == app_now))
  `NI_ASSERT(OneFlushSource_A, !(do_flush && (take || beat_in)))
  `NI_ASSERT(ReplayWithinQueue_A, 32'(replayed_q) + 32'(open_beats_q) <= 32'(cnt_q))
  `NI_ASSERT(CloseFitsPayload_A, close_now |-> (32'(new_len) <= MaxPayload))
  `NI_ASSERT_AXIS_STABLE(OutBeatStable_A, out_beat_valid_o, out_beat_ready_i, out_beat_o)
endmodule

`default_nettype wire

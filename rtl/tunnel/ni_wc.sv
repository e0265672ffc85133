// SPDX-License-Identifier: Apache-2.0
// Request path toward the framer, with the write combiner. Tunneled requests from
// ni_host_rx arrive as a header record plus the TLP's beats; they leave as header
// records and beats for ni_fab_tx (source 2). Both inputs are registered: header
// records enter a queue, beats a skid register.
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
// The decision for a header is ready before its first beat: the header waits in a
// decision register (H2), compared on its way in with the header before it (which
// the open packet ends with unless that one was taken back), and against the room
// the open packet will have once the header before it is in. So a write that
// continues the open packet enters at one beat per cycle, and every decision reads
// registers.
//
// NI-replicated multicast happens on the read side: a packet whose DLID is a group
// of the MGRP table is offered once per member, each copy with the member's DLID
// and memory ID; its beats are read again for every copy and freed after the last.
// A combined packet that starts where the previous packet pushed toward the framer
// ended, with the same header (destination, memory ID, flags) and a unicast
// destination, is marked as a continuation (tx_desc_t kind TX_CONT): it may travel without
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
  localparam int unsigned Bpb = DataW / 8,
  localparam int unsigned KeepW = Bpb,
  localparam int unsigned BeatW = DataW + KeepW + 2  // {bad, last, keep, data}
) (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic [15:0] timeout_i,  // idle cycles before an open packet is sent
  input  logic flush_i,           // send the open packet once all earlier requests are in
  // NI-replicated multicast groups (MGRP_CTRL); the member table MGRP_MEMBER is read
  // one entry at a time (g * GroupMembers + m: mbr_idx_o, a function of registers
  // only; its entry back in the same cycle, from a LUT RAM of ni_csr_regs).
  input  logic [Groups-1:0] grp_valid_i,
  input  logic [Groups-1:0][15:0] grp_lid_i,
  input  logic [Groups-1:0][2:0] grp_members_i,
  output logic [$clog2(Groups * GroupMembers)-1:0] mbr_idx_o,
  input  logic [15:0] mbr_dlid_i,
  input  logic [15:0] mbr_memid_i,
  // Requests from ni_host_rx: a header record, then the TLP's beats (the first may
  // come in the same cycle as its header).
  input  ni_pkg::tx_desc_t in_hdr_i,
  input  ni_pkg::wc_meta_t in_meta_i,
  input  logic in_hdr_valid_i,
  output logic in_hdr_ready_o,
  input  logic [BeatW-1:0] in_beat_i,
  input  logic in_beat_valid_i,
  output logic in_beat_ready_o,
  // Toward ni_fab_tx.
  output ni_pkg::tx_desc_t out_hdr_o,
  output logic out_hdr_valid_o,
  input  logic out_hdr_ready_i,
  output logic [BeatW-1:0] out_beat_o,
  output logic out_beat_valid_o,
  input  logic out_beat_ready_i,
  // 1: a whole request TLP fits now (see nic_top's s_host_req_room_o).
  output logic room_o,
  output logic ev_merged_o  // a write was appended to an open packet
);
  localparam int unsigned HdrW = ni_pkg::TxDescW;
  localparam int unsigned MetaW = ni_pkg::WcMetaW;
  localparam int unsigned LaneW = $clog2(Bpb);
  localparam int unsigned FillW = $clog2(Bpb + 1);
  localparam int unsigned PtrW = $clog2(Beats);
  localparam int unsigned CntW = $clog2(Beats + 1);
  localparam int unsigned MaxTlpBeats = (ni_pkg::TlpHdrBytes + MaxPayload + Bpb - 1) / Bpb;
  localparam int unsigned InHdrs = 2;
  localparam logic [13:0] Max14 = 14'(MaxPayload);

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
  // The header records in a queue of two (LUT RAM); beside them, the fields the
  // decisions compare in a skid register (flip-flops, near the compares). Both take a
  // header in the same cycles and give it up together, so both are always as full.
  ni_pkg::tx_desc_t ih;
  ni_pkg::wc_meta_t im;
  logic [39:0] ikey;  // DLID, TEH flags, memory ID: the fields a combined packet shares
  logic ih_valid, ik_valid, h2_load, hq_wready, hk_wready;
  // Written from its count (FreeWrite): the valid comes late from ni_host_rx.
  ni_fifo #(.Width(HdrW), .Depth(InHdrs), .FreeWrite(1)) u_in_q (
    .clk_i, .rst_ni, .wdata_i(in_hdr_i), .wvalid_i(in_hdr_valid_i && hk_wready),
    .wready_o(hq_wready), .rdata_o(ih), .rvalid_o(ih_valid), .rready_i(h2_load));
  // With them what H2 finds about a header as it loads that does not depend on the
  // open packet, found as the header enters: whether it ends on a 4 KiB boundary
  // (ipage), and its compares with the header before it (pred: the last one that
  // entered, which H2 holds when this one loads, every header passing H2 in order;
  // PredFoundAtEntry_A): same key (fkey), starts where pred ends (fend) or where pred
  // starts (fstart), same combining window (fwin). H2's decisions then read registers.
  logic ipage, fkey, fend, fstart, fwin;
  logic [11:0] in_end_lo;
  logic [39:0] in_key, last_key_q;
  logic [63:0] last_addr_q, last_end_q;
  logic last_wc_q;
  logic [7:0] last_win_q;
  assign in_end_lo = in_meta_i.addr[11:0] + in_meta_i.bytes[11:0];
  assign in_key = {in_hdr_i.dlid, in_hdr_i.flags, in_hdr_i.memid};
  always_ff @(posedge clk_i) begin
    if (in_hdr_valid_i && in_hdr_ready_o) begin
      last_key_q <= in_key;
      last_addr_q <= in_meta_i.addr;
      last_end_q <= in_meta_i.addr + 64'(in_meta_i.bytes);
      last_wc_q <= in_meta_i.wc;
      last_win_q <= in_meta_i.win;
    end
  end
  ni_skid #(.Width(5 + MetaW + 40)) u_in_key (
    .clk_i, .rst_ni,
    .wdata_i({in_end_lo == 12'h0, in_key == last_key_q, in_meta_i.addr == last_end_q, in_meta_i.addr == last_addr_q,
              in_meta_i.wc && last_wc_q && in_meta_i.win == last_win_q, in_meta_i, in_key}),
    .wvalid_i(in_hdr_valid_i && hq_wready), .wready_o(hk_wready),
    .rdata_o({ipage, fkey, fend, fstart, fwin, im, ikey}), .rvalid_o(ik_valid), .rready_i(h2_load));
  assign in_hdr_ready_o = hq_wready && hk_wready;

  // ------------------------------------------------------------ input beats
  logic [BeatW-1:0] ib;
  logic ib_valid, ib_ready;
  ni_skid #(.Width(BeatW)) u_in_beat (
    .clk_i, .rst_ni, .wdata_i(in_beat_i), .wvalid_i(in_beat_valid_i), .wready_o(in_beat_ready_o),
    .rdata_o(ib), .rvalid_o(ib_valid), .rready_i(ib_ready));

  // ------------------------------------------------------------ output header queue
  // With each record: the NI-replicated group its DLID names, if any (found as its
  // header entered H2).
  localparam int unsigned GidxW = (Groups > 1) ? $clog2(Groups) : 1;
  ni_pkg::tx_desc_t oq_hdr, oq_head;
  logic oq_wlen_en, oq_len_en;  // a combined packet, with its payload bytes:
  logic [12:0] oq_wlen, oq_len;  // its LRH length and TLP Length are set from them in O
  logic oq_push, oq_ready, oq_pop, oq_wgrp, oq_grp;
  logic [GidxW-1:0] oq_wgidx, oq_gidx;
  // A record enters the queue through a register (st_*): the push is decided late in
  // the cycle, and the queue's count and pointers then follow a flip-flop. Room is
  // counted with the record in the register (out_hdrs_q, and oq_ready from it as a
  // register), so the queue always takes it (StageDrains_A).
  localparam int unsigned OqW = HdrW + 14 + 1 + GidxW;
  logic st_valid_q, oq_fifo_ready, oq_room_q;
  logic [OqW-1:0] st_rec_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) st_valid_q <= 1'b0;
    else st_valid_q <= oq_push;
  end
  always_ff @(posedge clk_i) st_rec_q <= {oq_hdr, oq_wlen_en, oq_wlen, oq_wgrp, oq_wgidx};
  ni_fifo #(.Width(OqW), .Depth(Hdrs)) u_out_q (
    .clk_i, .rst_ni, .wdata_i(st_rec_q), .wvalid_i(st_valid_q),
    .wready_o(oq_fifo_ready), .rdata_o({oq_head, oq_len_en, oq_len, oq_grp, oq_gidx}), .rvalid_o(oq_valid),
    .rready_i(oq_pop));
  assign oq_ready = oq_room_q;
  `NI_ASSERT(StageDrains_A, st_valid_q |-> oq_fifo_ready)
  `NI_ASSERT(RecordHasRoom_A, oq_push |-> oq_ready)

  // ------------------------------------------------------------ state
  typedef enum logic [1:0] {ModePass, ModeNew, ModeAppend} mode_e;
  logic busy_q;                     // a TLP's header is taken, its last beat is not
  mode_e mode_q;
  logic [1:0] bidx_q;               // beat index in the TLP (saturating)
  logic [12:0] bytes_q;             // its payload bytes
  logic [FillW-1:0] lanes_q;        // lanes of the TLP's last beat
  logic [FillW-1:0] thr_q;          // its last beat's threshold (h2_thr_*_q) in its mode
  logic [FillW-1:0] nl_q;           // and its data lanes (Bpb - thr_q)
  logic closes_q;                   // the TLP closes the packet it continues
  logic open_q;                     // an open packet exists
  logic open_cont_q;                // ... and it continues the packet pushed before it
  logic open_uni_q;                 // ... and goes to a unicast LID that is no group
  logic chain_q;                    // the last packet pushed was combined, to a unicast LID
  ni_pkg::tx_desc_t open_hdr_q;
  logic open_grp_q;
  logic [GidxW-1:0] open_gidx_q;
  logic [12:0] open_len_q;          // payload bytes in the open packet (0 while none is)
  // The write decisions' view of the open packet, as it is once the TLPs taken so far
  // are in it: a write may continue it (app_ok_q), the room it has (room_q, and
  // room_snap_q as before the last take), and whether the last TLP taken was taken
  // back out of it (rb_q: the packet then ends where that TLP began).
  logic app_ok_q, rb_q;
  logic [13:0] room_q, room_snap_q;
  logic [13:0] room_take_q;  // the room H2's take leaves: (open_q ? room_q : MaxPayload) - its bytes
  logic [FillW-1:0] fill_q;         // lanes of held_q in use (the open packet's last beat)
  logic [DataW-1:0] held_q;
  // Taken back if the TLP turns out malformed.
  logic [FillW-1:0] snap_fill_q;
  logic [DataW-1:0] snap_held_q;
  logic [PtrW-1:0] snap_wptr_q;
  // Flush requests wait for the requests that reached the NI before them: a flush
  // requested when h headers had come in is due once h TLPs are done (mod 8; at
  // most 4 are ever between the two counts: 2 in the input queue, H2, one in progress).
  logic [7:0] flush_mark_q;
  logic [2:0] hin_cnt_q, done_cnt_q, flush_at_q;
  logic flush_q, fl_due_q;  // fl_due_q: flush_mark_q[done_cnt_q], registered
  logic [15:0] idle_q;
  logic idle_over_q, room_seen_q;  // room_seen_q: room_o a cycle ago
  localparam int unsigned OhW = $clog2(Hdrs + 1);
  logic [3:0] in_hdrs_q;  // header records not yet taken
  logic [OhW-1:0] out_hdrs_q;  // header records in the output queue (its count)
  logic [1:0] in_beats_q;             // beats in the input skid register
  // Beat queue.
  logic [BeatW-1:0] mem_q [Beats];
  logic [PtrW-1:0] wptr_q, rptr_q;
  // Beats pushed (wcnt_q), freed (fcnt_q) and visible to the framer (vis_q: pushed up
  // to the last beat of the last packet sent or closed), counted modulo 2^(CntW+1):
  // each count changes by one at most, under an enable (no adder behind the late push).
  logic [CntW:0] wcnt_q, fcnt_q, vis_q, snap_wcnt_q;
  logic [CntW-1:0] cnt_q;  // beats in the queue
  assign cnt_q = CntW'(wcnt_q - fcnt_q);

  // ------------------------------------------------------------ decision register (H2)
  // The header being decided, and what was found about it on its way in, against the
  // header before it (pred: the last one in H2, whose fields H2 still holds) and
  // against the room the open packet has once pred is in it. Each finding exists
  // twice: for pred in the packet (main) and for pred taken back out of it (rb).
  ni_pkg::tx_desc_t h2_hdr_q;
  logic [39:0] h2_key_q;
  ni_pkg::wc_meta_t h2_meta_q;
  logic h2_valid_q;
  logic [63:0] h2_end_q;              // the address after its data
  logic h2_open_q;                    // it opens a packet when it continues none
  logic h2_page_q;                    // it ends on a 4 KiB boundary
  logic h2_uni_q;                     // its DLID is unicast and no NI-replicated group
  logic h2_grp_q;                     // its DLID is the NI-replicated group h2_gidx_q
  logic [GidxW-1:0] h2_gidx_q;
  logic [FillW-1:0] h2_lanes_q;       // lanes of its last beat
  // Bpb minus the data lanes of its last beat, opening a packet (new) or continuing
  // one (app: the TLP header lanes drop out): a last beat with fill_q lanes held
  // overflows the held beat when fill_q is above it.
  logic [FillW-1:0] h2_thr_new_q, h2_thr_app_q;
  logic [FillW-1:0] h2_nl_app_q;      // its last beat's data lanes continuing one (Bpb - h2_thr_app_q)
  logic h2_chain_q, h2_chain_rb_q;    // same key as pred, starts where the packet ends
  logic h2_pair_q, h2_pair_rb_q;      // ... and both combinable, through one window
  logic h2_fits_q, h2_fits_rb_q;      // the packet has room for it
  logic h2_fill_q, h2_fill_rb_q;      // ... exactly: it fills the packet

  // What the head of the input queue is found to be on its way into H2.
  logic [63:0] in_end;
  logic [13:0] room_new, room_base;
  logic key_same, win_same, at_end, at_start, in_grp;
  logic [GidxW-1:0] in_gidx;
  logic fl_due, appendable, fill_now, want_flush, do_flush, space, take, hdr_seen;
  mode_e new_mode;
  assign in_end = im.addr + 64'(im.bytes);
  // The header fields a combined packet shares: LRH DLID, TEH flags, memory ID. The
  // other bytes of a request's record are the same for every request, bytes 4-5 (LRH
  // length) excepted (SameRecordInPacket_A).
  assign key_same = fkey;
  assign win_same = fwin;
  assign at_end = fend;
  assign at_start = fstart;
  // The findings made at entry are the compares with H2's pred (once a header has
  // been in H2: its registers are not reset).
  logic h2_ever_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) h2_ever_q <= 1'b0;
    else if (h2_load) h2_ever_q <= 1'b1;
  end
  `NI_ASSERT(PredFoundAtEntry_A, !(h2_load && h2_ever_q) ||
             (fkey == (ikey == h2_key_q) && fend == (im.addr == h2_end_q) && fstart == (im.addr == h2_meta_q.addr) &&
              fwin == (im.wc && h2_meta_q.wc && im.win == h2_meta_q.win)))
  // Taken in this cycle, pred leaves the packet with room room_take_q (formed a cycle
  // before: the room as H2's take sets it);
  // taken before, with room_q (room_snap_q before it, should it be taken back).
  assign room_new = (take && h2_valid_q) ? room_take_q : room_q;
  assign room_base = take ? room_q : room_snap_q;
  always_comb begin
    in_grp = 1'b0;
    in_gidx = '0;
    for (int g = 0; g < Groups; g++) begin
      if (grp_valid_i[g] && grp_members_i[g] != 3'd0 &&
          grp_lid_i[g] == ikey[39:24]) begin  // DLID
        in_grp = 1'b1;
        in_gidx = GidxW'(g);
      end
    end
  end
  assign h2_load = ih_valid && (!h2_valid_q || take);
  // What H2 is found to be as it loads.
  logic ld_open, ld_pair, ld_pair_rb, ld_fits, ld_fits_rb;
  logic [FillW-1:0] ld_lanes;
  assign ld_lanes = FillW'((32'(im.bytes) + ni_pkg::TlpHdrBytes - 1) % Bpb + 1);
  // The TLP header's lanes in its last beat (a TLP of one beat, wider than its header),
  // which drop out when it continues a packet.
  logic [FillW-1:0] ld_hdr_lanes;
  assign ld_hdr_lanes = (Bpb > ni_pkg::TlpHdrBytes && 32'(im.bytes) + ni_pkg::TlpHdrBytes <= Bpb) ?
                        FillW'(ni_pkg::TlpHdrBytes) : '0;
  assign ld_open = im.wc && im.bytes < 13'(MaxPayload) && !ipage;
  `NI_ASSERT(PageEndIsSum_A, !ik_valid || ipage == (in_end[11:0] == 12'h0))
  assign ld_pair = key_same && at_end && win_same;
  assign ld_pair_rb = key_same && at_start && win_same;
  // Each compare against both rooms it may meet, chosen after: take (go_q) selects
  // the result, not the compare's operand.
  logic fits_take, fits_q, fits_snap;
  assign fits_take = 14'(im.bytes) <= room_take_q;
  assign fits_q = 14'(im.bytes) <= room_q;
  assign fits_snap = 14'(im.bytes) <= room_snap_q;
  assign ld_fits = (take && h2_valid_q) ? fits_take : fits_q;
  assign ld_fits_rb = take ? fits_q : fits_snap;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) h2_valid_q <= 1'b0;
    else h2_valid_q <= h2_load || (h2_valid_q && !take);
  end
  // The record itself is read only while H2 is valid: loaded whenever H2 may take a
  // header, whether or not one comes (its enable does not wait for the queue's valid).
  always_ff @(posedge clk_i) begin
    if (!h2_valid_q || take) h2_hdr_q <= ih;
  end
  // Datapath: not reset (pred's fields are read only once a packet is open).
  always_ff @(posedge clk_i) begin
    if (h2_load) begin
      h2_key_q <= ikey;
      h2_meta_q <= im;
      h2_end_q <= in_end;
      h2_open_q <= ld_open;
      h2_page_q <= ipage;
      h2_uni_q <= ikey[31:30] != 2'b11 && !in_grp;
      h2_grp_q <= in_grp;
      h2_gidx_q <= in_gidx;
      h2_lanes_q <= ld_lanes;
      h2_thr_new_q <= FillW'(Bpb) - ld_lanes;
      h2_thr_app_q <= FillW'(Bpb) - ld_lanes + ld_hdr_lanes;
      h2_nl_app_q <= ld_lanes - ld_hdr_lanes;
      h2_chain_q <= key_same && at_end;
      h2_chain_rb_q <= key_same && at_start;
      h2_pair_q <= ld_pair;
      h2_pair_rb_q <= ld_pair_rb;
      h2_fits_q <= ld_fits;
      h2_fill_q <= 14'(im.bytes) == room_new;
      h2_fits_rb_q <= ld_fits_rb;
      h2_fill_rb_q <= 14'(im.bytes) == room_base;
    end
  end

  // ------------------------------------------------------------ what to do with H2
  // The queue full, a register: its next value from the count's compares (formed from
  // registers beside the decisions) and the late push and free, one LUT after them, so
  // no subtraction of the counts sits before the decisions that wait for space.
  logic full_q, full_d, eq_full, eq_m1, snap_full;
  assign eq_full = cnt_q == CntW'(Beats);
  assign eq_m1 = cnt_q == CntW'(Beats - 1);
  assign snap_full = CntW'(snap_wcnt_q - fcnt_q) == CntW'(Beats);
  assign full_d = rollback ? ((busy_q ? snap_full : eq_full) && !free) :
                  push ? (free ? eq_full : eq_m1) : (eq_full && !free);
  assign space = !full_q;
  assign fl_due = fl_due_q;
  assign appendable = app_ok_q && (rb_q ? h2_pair_rb_q && h2_fits_rb_q : h2_pair_q && h2_fits_q);
  assign fill_now = rb_q ? h2_fill_rb_q : h2_fill_q;
  assign hdr_seen = ih_valid || h2_valid_q;
  assign want_flush = open_q && !busy_q &&
                      (fl_due || !app_ok_q || (h2_valid_q && !appendable) || (!hdr_seen && idle_over_q));
  assign do_flush = want_flush && oq_ready && space;
  assign new_mode = appendable ? ModeAppend : h2_open_q ? ModeNew : ModePass;
  // The mode H2 is taken in: with a packet open only to continue it (else the packet
  // is flushed first), so the mode follows from registers (TakeModeIsMode_A).
  mode_e take_mode;
  assign take_mode = open_q ? ModeAppend : (h2_open_q ? ModeNew : ModePass);
  // take_now: the take as the registers say; the logic uses it registered a cycle
  // ahead (take = go_q, found from the next state: TakeIsAhead_A), so that the input
  // beat's enable reads registers. (A TLP sent as it is then asks for room for two
  // records in the output queue, not knowing this cycle's push and pop.)
  logic take_now, go_q, en_q;  // en_q: busy_q || go_q, registered as such
  assign take_now = !busy_q && h2_valid_q && !fl_due && (open_q ? appendable : (h2_open_q || oq_ready));
  assign take = go_q;

  // The TLP as the input beat sees it: the one in progress, or while none is the one
  // in H2, which a beat entering now belongs to (BeatHasHeader_A: taken in this cycle).
  mode_e cur_mode;
  logic [1:0] cur_bidx;
  logic [12:0] cur_bytes;
  logic [FillW-1:0] cur_lanes, cur_snap_fill;
  logic cur_closes;
  logic [DataW-1:0] cur_snap_held;
  logic [PtrW-1:0] cur_snap_wptr;
  assign cur_mode = busy_q ? mode_q : take_mode;
  assign cur_bidx = busy_q ? bidx_q : 2'd0;
  assign cur_bytes = busy_q ? bytes_q : h2_meta_q.bytes;
  assign cur_lanes = busy_q ? lanes_q : h2_lanes_q;
  assign cur_closes = busy_q ? closes_q : (open_q && (h2_page_q || fill_now));
  assign cur_snap_fill = busy_q ? snap_fill_q : fill_q;
  assign cur_snap_held = busy_q ? snap_held_q : held_q;
  assign cur_snap_wptr = busy_q ? snap_wptr_q : wptr_q;

  // ------------------------------------------------------------ beat merge
  // A continuing TLP's data is rotated onto the open packet's end (open_len_q, 0 when
  // no packet is open, which a new packet's data needs). Its lanes are counted from
  // its length: every beat but the last is full (ni_host_rx cuts or pads a TLP to its
  // Length; KeepFromLength_A), and the 16 TLP header bytes of a continuing TLP drop out.
  logic [DataW-1:0] in_data, rot, merged;
  logic [KeepW-1:0] in_keep;
  logic in_last, in_bad, beat_in;
  logic [FillW-1:0] n, drop, cur_thr;
  logic [2*DataW-1:0] rot2;
  assign cur_thr = busy_q ? thr_q : (open_q ? h2_thr_app_q : h2_thr_new_q);
  // The last beat's data lanes (Bpb - cur_thr) and whether the held lanes leave room
  // for them (fill_q <= cur_thr): each formed from registers for every candidate
  // threshold, then chosen, so neither a subtraction nor a compare waits for the choice.
  logic [FillW-1:0] cur_nl;
  logic fill_le_thr;
  assign cur_nl = busy_q ? nl_q : (open_q ? h2_nl_app_q : h2_lanes_q);
  assign fill_le_thr = busy_q ? fill_q <= thr_q : (open_q ? fill_q <= h2_thr_app_q : fill_q <= h2_thr_new_q);
  assign {in_bad, in_last, in_keep, in_data} = ib;
  assign ib_ready = en_q && space;
  assign beat_in = ib_valid && ib_ready;
  assign rot2 = {in_data, in_data} << (32'(open_len_q[LaneW-1:0]) * 8);
  assign rot = rot2[2*DataW-1:DataW];
  always_comb begin
    drop = '0;
    if (32'(cur_bidx) * Bpb < ni_pkg::TlpHdrBytes) begin
      drop = FillW'((ni_pkg::TlpHdrBytes - 32'(cur_bidx) * Bpb > Bpb) ? Bpb : ni_pkg::TlpHdrBytes - 32'(cur_bidx) * Bpb);
    end
    // The last beat's lanes: Bpb - cur_thr (below); the others lose drop lanes when
    // continuing a packet.
    n = in_last ? cur_nl : ((cur_mode == ModeAppend) ? FillW'(Bpb) - drop : FillW'(Bpb));
    for (int j = 0; j < Bpb; j++) merged[j*8 +: 8] = (32'(j) < 32'(fill_q)) ? held_q[j*8 +: 8] : rot[j*8 +: 8];
  end

  logic held_full, comb_push, rollback, commit;
  logic [FillW:0] fill_sum;
  assign held_full = fill_q == FillW'(Bpb);
  assign fill_sum = (FillW+1)'(fill_q) + (FillW+1)'(n);
  // A full held beat stays held only at the end of a TLP (it may be the packet's last
  // beat, which a flush marks); inside a TLP more data is sure to follow, so full
  // beats are pushed at once and the TLP's own last beat can close the packet. (A last
  // beat always has data, LastBeatHasData_A: a full held beat is pushed with any beat.)
  // Whether the beat completes the held one is a compare of fill_q with thresholds
  // formed before: the last beat's (cur_thr), or the lanes a beat before it loses to
  // the TLP header (drop; none, opening a packet).
  logic push_held, push_merged_full;
  assign push_held = held_full;
  assign push_merged_full = !held_full && (in_last ? !fill_le_thr : (cur_mode != ModeAppend || fill_q >= drop));
  assign comb_push = push_held || push_merged_full;
  assign rollback = beat_in && cur_mode != ModePass && in_last && in_bad;
  assign commit = beat_in && cur_mode != ModePass && in_last && !in_bad;

  // A TLP that fills the packet (MaxPayload or the page end, found before its take)
  // closes it with its last beat, when that beat completes the packet in one push: no
  // flush cycle, so full packets stream at one beat per cycle. Otherwise the flush
  // follows.
  logic [12:0] new_len;
  logic close_now;
  assign new_len = ((cur_mode == ModeNew) ? 13'd0 : open_len_q) + cur_bytes;
  logic close_ok;  // close_now, but for whether the beat enters
  assign close_ok = cur_mode != ModePass && in_last && !in_bad && cur_closes && !held_full &&
                    fill_le_thr && oq_ready;
  assign close_now = beat_in && close_ok;

  // The held beat and its fill after the input beat, should it enter: formed from
  // registers, the late beat_in only enables them.
  logic [DataW-1:0] held_new;
  logic [FillW-1:0] fill_new;
  always_comb begin
    held_new = held_q;
    fill_new = fill_q;
    if (cur_mode != ModePass) begin
      if (in_last && in_bad) begin  // taken back
        held_new = cur_snap_held;
        fill_new = cur_snap_fill;
      end else if (push_held) begin
        held_new = rot;
        fill_new = n;
      end else if (push_merged_full) begin
        held_new = rot;
        fill_new = FillW'(fill_sum - (FillW+1)'(Bpb));
      end else begin
        held_new = merged;
        fill_new = FillW'(fill_sum);
      end
      if (close_ok) fill_new = '0;
    end
  end

  // ------------------------------------------------------------ beat queue writes
  // The lanes pushed are the input beat's (sent as it is) or the merged ones: held_q
  // below fill_q (all of it when full, as a flush pushes it), then the rotated input.
  logic push, pass_sel;
  logic [BeatW-1:0] push_beat;
  logic [KeepW-1:0] tail_keep, close_keep, push_keep, close_keep_busy, close_keep_app, close_keep_new;
  // A TLP sent as it is, from registers: a TLP taken with no packet open (none is,
  // so no flush either) that opens none.
  assign pass_sel = busy_q ? mode_q == ModePass : !open_q && !h2_open_q;
  // The word written tells a flush and a close from their causes without the push's
  // own terms (room, the beat's valid): the word counts only when pushed, and then a
  // flush is wanted only when it is made (no beat enters while one is wanted,
  // FlushAlone_A), and a close is possible only with its beat.
  always_comb begin
    for (int j = 0; j < Bpb; j++) tail_keep[j] = 32'(j) < 32'(fill_q);
    // A close's lanes (the held ones and the last beat's: below fill_q + cur_nl, which
    // is fill_sum whenever a TLP's last beat closes) for each candidate of cur_nl, from
    // registers, then chosen: no adder and compare behind the input beat's decisions.
    for (int j = 0; j < Bpb; j++) begin
      close_keep_busy[j] = 32'(j) < 32'(fill_q) + 32'(nl_q);
      close_keep_app[j] = 32'(j) < 32'(fill_q) + 32'(h2_nl_app_q);
      close_keep_new[j] = 32'(j) < 32'(fill_q) + 32'(h2_lanes_q);
    end
    close_keep = busy_q ? close_keep_busy : (open_q ? close_keep_app : close_keep_new);
    push_keep = want_flush ? tail_keep : (close_ok ? close_keep : '1);
    if (pass_sel) push_beat = ib;
    else push_beat = {1'b0, want_flush || close_ok, push_keep, merged};
  end
  assign room_take_d = open_d ? room_db : room_max_b;
  `NI_ASSERT(RoomTakeIsSum_A, room_take_d == (open_d ? room_d : Max14) - take_bytes)
  `NI_ASSERT(FlushAlone_A, want_flush |-> !beat_in)
  `NI_ASSERT(CloseKeepIsSum_A, !close_ok || close_keep == KeepW'((65'(1) << fill_sum) - 65'(1)))
  `NI_ASSERT(PushedWordsCause_A, push && !pass_sel |-> (want_flush == do_flush) && (close_ok == close_now || !beat_in))
  assign push = do_flush || (beat_in && (cur_mode == ModePass || ((close_now || comb_push) && !rollback)));

  // Header record of a flushed packet, with its payload bytes (its LRH length and TLP
  // fields are set as it enters O). A push while a packet is open is its flush (a TLP
  // sent as it is is taken only while none is): the record's source follows open_q,
  // not the push's late cause; and a push with an entering beat is the close of a TLP
  // that continued the packet (its length new_len; a flush comes without a beat,
  // FlushAlone_A), the others come without one. The length is chosen by beat_in, which
  // reads the input queue and registers, not by the flush decision.
  always_comb begin
    oq_hdr = h2_hdr_q;
    oq_wlen_en = 1'b0;
    oq_wlen = open_len_q;
    oq_wgrp = h2_grp_q;
    oq_wgidx = h2_gidx_q;
    if (open_q) begin
      oq_hdr = open_hdr_q;
      oq_hdr.kind = open_cont_q ? ni_pkg::TX_CONT : ni_pkg::TX_REQ;
      oq_wlen_en = 1'b1;
      oq_wgrp = open_grp_q;
      oq_wgidx = open_gidx_q;
    end
    if (beat_in) oq_wlen = new_len;
  end
  assign oq_push = do_flush || close_now || (take && take_mode == ModePass && !by_pass);

  // ------------------------------------------------------------ multicast copies
  // A header record is offered from an output register (O), once per member of the
  // NI-replicated group its DLID was found to name as it entered H2 (copy_q counts the
  // copies loaded); the queue entry is popped with its last copy. A TLP sent as it is
  // goes from H2 straight into O when the queue and its entry register are empty and O
  // free (by_pass): offered a cycle after its take, with its first beat.
  localparam int unsigned MbrW = $clog2(Groups * GroupMembers);
  localparam int unsigned CopyW = $clog2(GroupMembers);
  logic oq_valid, head_last, o_free, hdr_take, rd_replay_q, cur_replay, h2_single, by_pass;
  logic o_valid_q, o_last_q;
  ni_pkg::tx_desc_t o_hdr_q;
  patch_t o_patch_q;
  logic [MbrW-1:0] mbr;
  logic [CopyW-1:0] copy_q;
  logic [10:0] oq_words;
  assign oq_words = 11'((ni_pkg::FabHdrBytes + ni_pkg::TlpHdrBytes + 32'(oq_len) + 4) >> 2);
  assign mbr = MbrW'(32'(oq_gidx) * GroupMembers + 32'(copy_q));
  assign mbr_idx_o = mbr;
  assign head_last = !oq_grp || 32'(copy_q) + 1 >= 32'(grp_members_i[oq_gidx]);
  assign h2_single = !h2_grp_q || grp_members_i[h2_gidx_q] == 3'd1;
  assign hdr_take = o_valid_q && out_hdr_ready_i;
  assign o_free = !o_valid_q || out_hdr_ready_i;
  assign by_pass = take && take_mode == ModePass && !oq_valid && !st_valid_q && o_free && h2_single;
  assign oq_pop = oq_valid && o_free && head_last;
  assign out_hdr_o = o_hdr_q;
  assign out_hdr_valid_o = o_valid_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) o_valid_q <= 1'b0;
    else if (o_free) o_valid_q <= oq_valid || by_pass;
  end
  // Loaded in every cycle it is free, whether or not a record comes (no wide enable
  // from the take).
  always_ff @(posedge clk_i) begin
    if (o_free) begin
      if (!oq_valid) begin
        o_hdr_q <= h2_hdr_q;
        o_patch_q <= '0;
        o_last_q <= 1'b1;
      end else begin
        o_hdr_q <= oq_head;
        if (oq_len_en) begin
          o_hdr_q.pkt_words <= oq_words;
        end
        if (oq_grp) begin
          o_hdr_q.dlid <= mbr_dlid_i;
          o_hdr_q.memid <= mbr_memid_i;
        end
        o_patch_q.en <= oq_len_en;
        o_patch_q.len_dw <= oq_len[11:2];  // 4096 bytes: 0, as PCIe encodes it
        o_patch_q.be <= {(oq_len > 13'd4) ? 4'hF : 4'h0, 4'hF};
        o_last_q <= head_last;
      end
    end
  end
  // The beats being read belong to a copy that is not the last: read them again.
  assign cur_replay = hdr_take ? !o_last_q : rd_replay_q;

  // ------------------------------------------------------------ read side
  // The patch of the packet whose first beat is next: its header is in O until the
  // framer takes it, then in rd_patch_q.
  logic pop, free, rd_first_q, hdr_popped_q;
  patch_t rd_patch_q, rd_patch;
  logic [BeatW-1:0] rbeat, mem_rd_q;
  logic [CntW-1:0] replayed_q;    // beats read by a copy that is not the last, not freed
  logic [PtrW-1:0] rd_start_q, rd_start;  // the packet's first beat, where a copy starts again
  assign rd_patch = hdr_popped_q ? rd_patch_q : o_patch_q;
  always_comb begin
    rbeat = mem_rd_q;
    if (rd_first_q && rd_patch.en) begin
      rbeat[2*8 +: 2] = rd_patch.len_dw[9:8];
      rbeat[3*8 +: 8] = rd_patch.len_dw[7:0];
      rbeat[7*8 +: 8] = rd_patch.be;
    end
  end
  assign out_beat_o = rbeat;
  // A packet's first beat waits until its header record is offered (its patch is then
  // in O) or taken.
  assign out_beat_valid_o = CntW'(vis_q - fcnt_q) != replayed_q && (!rd_first_q || hdr_popped_q || o_valid_q);
  assign pop = out_beat_valid_o && out_beat_ready_i;
  assign free = pop && !cur_replay;
  assign rd_start = rd_first_q ? rptr_q : rd_start_q;

  // ------------------------------------------------------------ room for the root complex
  assign room_o = 32'(Beats) - 32'(cnt_q) - 32'(in_beats_q) >= RoomTlps * MaxTlpBeats + RoomMargin &&
                  32'(in_hdrs_q) + 32'(out_hdrs_q) + RoomMargin + RoomTlps - 1 <= Hdrs;
  assign ev_merged_o = commit && cur_mode == ModeAppend;

  // ------------------------------------------------------------ next state
  logic busy_d, open_d, rd_first_d, open_cont_d, open_uni_d, chain_d, app_ok_d, rb_d;
  logic [7:0] flush_mark_d;
  mode_e mode_d;
  logic [1:0] bidx_d;
  logic [12:0] open_len_d;
  logic [13:0] room_d, room_snap_d;
  // room_take_q's next value, (open_d ? room_d : MaxPayload) minus the next H2 record's
  // bytes: the subtraction made from each candidate room beside the decisions (all
  // registers), and the decisions choose among the results (room_db follows room_d).
  // (Each with both records' bytes, the queue head's and H2's: the choice between them,
  // h2_load, comes after the subtractions too.)
  logic [13:0] take_bytes, room_q_b, room_take_b, room_snap_b, room_max_b, room_db, room_take_d;
  function automatic logic [13:0] less_take_bytes(input logic [13:0] room, input logic load,
                                                  input logic [12:0] head_bytes, input logic [12:0] h2_bytes);
    less_take_bytes = load ? room - 14'(head_bytes) : room - 14'(h2_bytes);
  endfunction
  assign take_bytes = h2_load ? 14'(im.bytes) : 14'(h2_meta_q.bytes);
  assign room_q_b = less_take_bytes(room_q, h2_load, im.bytes, h2_meta_q.bytes);
  assign room_take_b = less_take_bytes(room_take_q, h2_load, im.bytes, h2_meta_q.bytes);
  assign room_snap_b = less_take_bytes(room_snap_q, h2_load, im.bytes, h2_meta_q.bytes);
  assign room_max_b = less_take_bytes(Max14, h2_load, im.bytes, h2_meta_q.bytes);
  logic [FillW-1:0] fill_d;
  logic [DataW-1:0] held_d;
  logic [PtrW-1:0] wptr_d, rptr_d;
  logic [2:0] hin_cnt_d, done_cnt_d;
  logic [15:0] idle_d;
  logic [3:0] in_hdrs_d;
  logic [OhW-1:0] out_hdrs_d;
  patch_t rd_patch_d;
  logic hdr_popped_d, rd_replay_d;
  logic [CopyW-1:0] copy_d;
  logic [PtrW-1:0] rd_start_d;
  logic [CntW-1:0] replayed_d;
  logic in_push;
  assign in_push = in_hdr_valid_i && in_hdr_ready_o;
  // The flush due next cycle, at done_cnt_q or (a TLP done now) the count after it;
  // the late done decides between the two.
  logic fl_clear, fl_due0, fl_due1;
  logic [2:0] done_next;
  assign fl_clear = fl_due && !busy_q && (!open_q || do_flush);
  assign done_next = done_cnt_q + 3'd1;
  assign fl_due0 = (flush_q && flush_at_q == done_cnt_q) || (flush_mark_q[done_cnt_q] && !fl_clear);
  assign fl_due1 = (flush_q && flush_at_q == done_next) || flush_mark_q[done_next];

  always_comb begin
    busy_d = busy_q;
    mode_d = mode_q;
    bidx_d = bidx_q;
    open_d = open_q;
    open_cont_d = open_cont_q;
    open_uni_d = open_uni_q;
    chain_d = chain_q;
    app_ok_d = app_ok_q;
    rb_d = rb_q;
    room_d = room_q;
    room_db = room_q_b;
    room_snap_d = room_snap_q;
    open_len_d = open_len_q;
    fill_d = fill_q;
    held_d = held_q;
    flush_mark_d = flush_mark_q;
    hin_cnt_d = hin_cnt_q + 3'(in_push);
    done_cnt_d = done_cnt_q;
    in_hdrs_d = in_hdrs_q + 4'(in_push) - 4'(take);
    out_hdrs_d = out_hdrs_q + OhW'(oq_push) - OhW'(oq_pop);
    copy_d = (oq_valid && o_free) ? (head_last ? '0 : copy_q + CopyW'(1)) : copy_q;
    rd_replay_d = cur_replay;
    rd_start_d = rd_start;
    replayed_d = replayed_q;
    if (pop && cur_replay) replayed_d = rbeat[DataW + KeepW] ? '0 : replayed_q + CntW'(1);
    // Idle means no request although the root complex may send one: cycles in which
    // room_o holds it back do not count, or a slow fabric would shrink packets.
    if (!open_q || busy_q || hdr_seen) idle_d = '0;
    else if (room_seen_q && idle_q != '1) idle_d = idle_q + 16'd1;
    else idle_d = idle_q;
    if (fl_clear) flush_mark_d[done_cnt_q] = 1'b0;
    if (flush_q) flush_mark_d[flush_at_q] = 1'b1;

    if (take) begin
      busy_d = 1'b1;
      mode_d = take_mode;
      bidx_d = '0;
      rb_d = 1'b0;
      // The packet as it will be once this TLP is in: its room, and whether a write
      // may continue it (not if this TLP fills it or ends the page).
      room_snap_d = room_q;
      room_d = room_take_q;
      room_db = room_take_b;
      app_ok_d = take_mode != ModePass && !(open_q && (h2_page_q || fill_now));
      if (take_mode == ModeNew) begin
        open_cont_d = chain_q && (rb_q ? h2_chain_rb_q : h2_chain_q);
        open_uni_d = h2_uni_q;
      end
    end
    if (beat_in) begin
      bidx_d = (cur_bidx == 2'd3) ? cur_bidx : cur_bidx + 2'd1;
      if (in_last) begin
        busy_d = 1'b0;
        done_cnt_d = done_cnt_q + 3'd1;
      end
      held_d = held_new;
      fill_d = fill_new;
    end
    if (commit) begin
      open_d = !close_now;
      open_len_d = new_len;
    end
    if (rollback) begin
      // Taken back: the packet is as before this TLP (none, if it opened one).
      app_ok_d = cur_mode == ModeAppend;
      rb_d = cur_mode == ModeAppend;
      room_d = busy_q ? room_snap_q : room_q;  // (taken in this cycle: room_q is before it)
      room_db = busy_q ? room_snap_b : room_q_b;
    end
    if (do_flush) fill_d = '0;
    if (do_flush || close_now) begin
      open_d = 1'b0;
      open_len_d = '0;
      app_ok_d = 1'b0;
    end
    // The run: a combined packet to a unicast LID extends it, any other packet breaks
    // it, and so does a new packet taken back.
    if (do_flush || close_now) chain_d = open_uni_q;
    else if (take && take_mode == ModePass) chain_d = 1'b0;
    if (rollback && cur_mode == ModeNew) chain_d = 1'b0;

    // Beat queue; beats of the open packet are not offered to the framer yet.
    wptr_d = wptr_q;
    if (rollback) wptr_d = cur_snap_wptr;
    else if (push) wptr_d = (wptr_q == PtrW'(Beats - 1)) ? '0 : wptr_q + PtrW'(1);
    rptr_d = rptr_q;
    if (pop && cur_replay && rbeat[DataW + KeepW]) rptr_d = rd_start;
    else if (pop) rptr_d = (rptr_q == PtrW'(Beats - 1)) ? '0 : rptr_q + PtrW'(1);
    rd_first_d = pop ? rbeat[DataW + KeepW] : rd_first_q;
    hdr_popped_d = (pop && rbeat[DataW + KeepW]) ? 1'b0 : (hdr_take ? 1'b1 : hdr_popped_q);
    rd_patch_d = hdr_take ? o_patch_q : rd_patch_q;
  end

  // The take of the next cycle, from the next state (take_now of the next cycle).
  logic go_d, h2_valid_n, fl_due_n;
  assign h2_valid_n = h2_load || (h2_valid_q && !take);
  assign fl_due_n = (beat_in && in_last) ? fl_due1 : fl_due0;
  // A header loading into H2 brings the room compares (carry chains, the latest terms):
  // go_d is a sum with each compare ANDed last with what selects it (GoIsSum_A).
  logic go_base, go_app, go_keep, go_none, go_k_take, go_k_q, go_k_snap;
  logic oq_two;  // room for two records in the output queue (a TLP sent as it is asks it)
  assign oq_two = 32'(out_hdrs_q) + 2 <= Hdrs;
  assign go_base = !busy_d && h2_valid_n && !fl_due_n;
  assign go_app = go_base && open_d && app_ok_d;
  assign go_keep = go_base && (open_d ? app_ok_d && (rb_d ? h2_pair_rb_q && h2_fits_rb_q : h2_pair_q && h2_fits_q)
                                      : h2_open_q || oq_two);
  assign go_none = h2_load ? go_base && !open_d && (ld_open || oq_two) : go_keep;
  assign go_k_take = h2_load && go_app && !rb_d && ld_pair && take && h2_valid_q;
  assign go_k_q = h2_load && go_app && (rb_d ? ld_pair_rb && take : ld_pair && !(take && h2_valid_q));
  assign go_k_snap = h2_load && go_app && rb_d && ld_pair_rb && !take;
  assign go_d = go_none || (go_k_take && fits_take) || (go_k_q && fits_q) || (go_k_snap && fits_snap);
  `NI_ASSERT(GoIsSum_A, go_d == (go_base && (open_d ?
             app_ok_d && (rb_d ? (h2_load ? ld_pair_rb && ld_fits_rb : h2_pair_rb_q && h2_fits_rb_q)
                               : (h2_load ? ld_pair && ld_fits : h2_pair_q && h2_fits_q))
             : (h2_load ? ld_open : h2_open_q) || oq_two)))

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      go_q <= 1'b0;
      en_q <= 1'b0;
      room_take_q <= Max14;
      busy_q <= 1'b0;
      mode_q <= ModePass;
      bidx_q <= '0;
      open_q <= 1'b0;
      open_cont_q <= 1'b0;
      open_uni_q <= 1'b0;
      chain_q <= 1'b0;
      app_ok_q <= 1'b0;
      rb_q <= 1'b0;
      room_q <= Max14;
      room_snap_q <= Max14;
      open_len_q <= '0;
      fill_q <= '0;
      flush_mark_q <= '0;
      fl_due_q <= 1'b0;
      flush_q <= 1'b0;
      flush_at_q <= '0;
      hin_cnt_q <= '0;
      done_cnt_q <= '0;
      idle_q <= '0;
      idle_over_q <= 1'b0;
      room_seen_q <= 1'b0;
      wptr_q <= '0;
      rptr_q <= '0;
      wcnt_q <= '0;
      full_q <= 1'b0;
      fcnt_q <= '0;
      vis_q <= '0;
      rd_first_q <= 1'b1;
      hdr_popped_q <= 1'b0;
      rd_patch_q <= '0;
      in_hdrs_q <= '0;
      out_hdrs_q <= '0;
      oq_room_q <= 1'b1;
      in_beats_q <= '0;
      copy_q <= '0;
      rd_replay_q <= 1'b0;
      rd_start_q <= '0;
      replayed_q <= '0;
    end else begin
      go_q <= go_d;
      en_q <= go_d || busy_d;
      room_take_q <= room_take_d;
      busy_q <= busy_d;
      mode_q <= mode_d;
      bidx_q <= bidx_d;
      open_q <= open_d;
      open_cont_q <= open_cont_d;
      open_uni_q <= open_uni_d;
      chain_q <= chain_d;
      app_ok_q <= app_ok_d;
      rb_q <= rb_d;
      room_q <= room_d;
      room_snap_q <= room_snap_d;
      open_len_q <= open_len_d;
      fill_q <= fill_d;
      flush_mark_q <= flush_mark_d;
      fl_due_q <= (beat_in && in_last) ? fl_due1 : fl_due0;
      // A flush request takes effect a cycle later, for the headers in by its cycle.
      flush_q <= flush_i;
      flush_at_q <= hin_cnt_d;
      hin_cnt_q <= hin_cnt_d;
      done_cnt_q <= done_cnt_d;
      idle_q <= idle_d;
      // Read only while a packet is open, a cycle at least after it opened.
      idle_over_q <= idle_d >= timeout_i;
      room_seen_q <= room_o;
      wptr_q <= wptr_d;
      rptr_q <= rptr_d;
      // A TLP taken back takes its beats back (none pushed in its take cycle).
      full_q <= full_d;
      if (rollback) wcnt_q <= busy_q ? snap_wcnt_q : wcnt_q;
      else if (push) wcnt_q <= wcnt_q + 1'b1;
      if (free) fcnt_q <= fcnt_q + 1'b1;
      // Beats become visible as sent (a TLP sent as it is: no packet is open, all
      // pushed beats are visible) or with the last beat of a packet closed or flushed.
      if (push && (pass_sel || do_flush || close_now)) vis_q <= wcnt_q + 1'b1;
      rd_first_q <= rd_first_d;
      hdr_popped_q <= hdr_popped_d;
      rd_patch_q <= rd_patch_d;
      in_hdrs_q <= in_hdrs_d;
      out_hdrs_q <= out_hdrs_d;
      // out_hdrs_d != Hdrs, from the count and the one change the cycle makes.
      if (oq_push && !oq_pop) oq_room_q <= out_hdrs_q != OhW'(Hdrs - 1);
      else if (oq_pop && !oq_push) oq_room_q <= 1'b1;
      in_beats_q <= in_beats_q + 2'(in_beat_valid_i && in_beat_ready_o) - 2'(beat_in);
      copy_q <= copy_d;
      rd_replay_q <= rd_replay_d;
      rd_start_q <= rd_start_d;
      replayed_q <= replayed_d;
    end
  end

  // Datapath: not reset. What a TLP needs while it is in progress (its fields, the
  // snapshot for taking it back) is captured in every cycle without one, so no wide
  // enable waits for the take; the open packet's header record likewise while none
  // is open (a TLP that opens one is taken only then).
  always_ff @(posedge clk_i) begin
    if (!busy_q) begin
      bytes_q <= h2_meta_q.bytes;
      lanes_q <= h2_lanes_q;
      thr_q <= open_q ? h2_thr_app_q : h2_thr_new_q;
      nl_q <= open_q ? h2_nl_app_q : h2_lanes_q;
      closes_q <= cur_closes;
      snap_fill_q <= fill_q;
      snap_held_q <= held_q;
      snap_wptr_q <= wptr_q;
      snap_wcnt_q <= wcnt_q;
    end
    if (!busy_q && !open_q) begin
      open_hdr_q <= h2_hdr_q;
      open_grp_q <= h2_grp_q;
      open_gidx_q <= h2_gidx_q;
    end
    held_q <= held_d;
    // The slot at the write pointer is free while the queue has space: written in every
    // such cycle, whether or not a beat is pushed (no write enable behind the late push).
    if (space) mem_q[wptr_q] <= push_beat;
  end
  // Registered read port (block RAM): it reads the next cycle's read pointer and
  // passes the slot written there in the same cycle through (a beat if one was pushed;
  // if none was, the slot is not read as a beat).
  always_ff @(posedge clk_i) begin
    mem_rd_q <= (space && wptr_q == rptr_d) ? push_beat : mem_q[rptr_d];
  end

  // ------------------------------------------------------------ checks
  // Where the open packet ends (checks only: the decisions read what H2 found).
  logic [63:0] next_addr_q, end_q;
  logic [7:0] open_win_q;
  always_ff @(posedge clk_i) begin
    if (!busy_q) end_q <= h2_end_q;
    if (commit) next_addr_q <= busy_q ? end_q : h2_end_q;
    if (take && new_mode == ModeNew) open_win_q <= h2_meta_q.win;
  end
  logic [DataW-1:0] unused;
  assign unused = rot2[DataW-1:0];

  `NI_ASSERT(InQueuesTogether_A, ih_valid == ik_valid && hq_wready == hk_wready)
  `NI_ASSERT(TakeIsAhead_A, take |-> take_now)
  `NI_ASSERT(RoomTakeIsCurrent_A, !h2_valid_q || room_take_q == (open_q ? room_q : Max14) - 14'(h2_meta_q.bytes))
  `NI_ASSERT(EnableIsBusyOrTake_A, en_q == (busy_q || go_q))
  `NI_ASSERT(OutCountIsQueue_A, (out_hdrs_q != OhW'(Hdrs)) == oq_ready)
  `NI_ASSERT(BeatHasHeader_A, (beat_in && !busy_q) |-> take)
  `NI_ASSERT(PushHasRoom_A, push |-> space)
  `NI_ASSERT(FullIsCount_A, full_q == (cnt_q == CntW'(Beats)))
  `NI_ASSERT(FillInRange_A, 32'(fill_q) <= Bpb)
  `NI_ASSERT(OpenFitsPayload_A, open_q |-> (32'(open_len_q) <= MaxPayload))
  `NI_ASSERT(OpenHasBytes_A, (open_q && !busy_q) |-> (fill_q != '0))
  `NI_ASSERT(ClosedHasNoLength_A, (!open_q && !busy_q) |-> (open_len_q == '0))
  // The decision's view of the packet is the packet.
  `NI_ASSERT(RoomIsCurrent_A, (app_ok_q && !busy_q) |-> (32'(room_q) + 32'(open_len_q) == MaxPayload))
  `NI_ASSERT(AppendsAtPacketEnd_A, (take && new_mode == ModeAppend) |->
                                   (h2_meta_q.addr == next_addr_q && h2_meta_q.win == open_win_q &&
                                    32'(open_len_q) + 32'(h2_meta_q.bytes) <= MaxPayload))
  `NI_ASSERT(SameRecordInPacket_A, (take && new_mode == ModeAppend) |->
                                   ({h2_hdr_q.vc, h2_hdr_q.dlid, h2_hdr_q.flags, h2_hdr_q.aux8, h2_hdr_q.memid,
                                     h2_hdr_q.key} ==
                                    {open_hdr_q.vc, open_hdr_q.dlid, open_hdr_q.flags, open_hdr_q.aux8,
                                     open_hdr_q.memid, open_hdr_q.key}))
  `NI_ASSERT(KeepFromLength_A, (beat_in && cur_mode != ModePass && !in_bad) |->
                               (in_keep == (in_last ? KeepW'((65'(1) << cur_lanes) - 65'(1)) : '1)))
  `NI_ASSERT(FlushDueIsCurrent_A, fl_due_q == flush_mark_q[done_cnt_q])
  `NI_ASSERT(ContinuableIsOpen_A, (app_ok_q && !busy_q) |-> open_q)
  `NI_ASSERT(TakeModeIsMode_A, take |-> (take_mode == new_mode))
  `NI_ASSERT(PassSelIsPass_A, (push && !do_flush) |-> (pass_sel == (cur_mode == ModePass)))
  `NI_ASSERT(ThresholdIsLanes_A, (beat_in && cur_mode != ModePass && in_last && !in_bad) |->
                                 (32'(cur_thr) + 32'(n) == Bpb))
  `NI_ASSERT(LastBeatHasData_A, (beat_in && cur_mode != ModePass && in_last && !in_bad) |-> (n != '0))
  `NI_ASSERT(OneFlushSource_A, !(do_flush && (take || beat_in)))
  `NI_ASSERT(PushWhileOpenIsFlush_A, oq_push |-> (open_q == (do_flush || close_now)))
  `NI_ASSERT(ReplayWithinQueue_A, CntW'(vis_q - fcnt_q) >= replayed_q && CntW'(wcnt_q - vis_q) <= cnt_q)
  `NI_ASSERT(QueueWithinDepth_A, 32'(cnt_q) <= Beats)
  `NI_ASSERT(CloseFitsPayload_A, close_now |-> (32'(new_len) <= MaxPayload))
  `NI_ASSERT_AXIS_STABLE(OutBeatStable_A, out_beat_valid_o, out_beat_ready_i, out_beat_o)
endmodule

`default_nettype wire

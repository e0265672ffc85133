// SPDX-License-Identifier: Apache-2.0
// Fabric receive: per-VC packet buffers with credits, header checks, ICRC/VCRC
// check, memory-ID translation, and cut-through delivery of the tunneled TLP to
// the host port. A TLP found bad after its first beat left is nullified: its last
// beat carries tuser=1 and the root complex discards it (PCIe's nullified TLP).
// Refused requests are answered through the framer: NAK, or UR completion for reads.
// Requests to this node follow a PSN sequence per source (docs/architecture.md#
// reliable-delivery): the next one is taken and ACKed (writes), an earlier one is a
// duplicate (a write is ACKed again, a read served again, an atomic dropped), a
// later one is dropped and NAKed once with the PSN expected. A response is taken
// only while its request waits at the sender side (ni_retx); answers are reported
// to ni_retx.
// When the 32-byte header is not a whole number of beats (512 bits: half a beat),
// the TLP is shifted down to lane 0: each output beat is the upper lanes of one
// input beat (carried) and the lower lanes of the next.
// A continuation (OP_TUNNEL_CONT: LRH + CTH + data) continues the previous write
// from its source: each source's last accepted write leaves its end address,
// memory ID, translation flag and requester ID here, and the continuation is
// checked and delivered as the MWr it stands for. Its TLP header is made in place
// of its 16 header bytes, so each input beat leaves one beat later (carried whole,
// the opcode being unknown at 64 bits until the second beat).
// A send to a reception FIFO (TEH flag RFIFO, the FIFO in the memory-ID field) is
// written to the FIFO's tail slot (MaxPayload bytes each) and moves the tail when it
// arrived whole. A send that finds its FIFO full is not taken: it is answered with
// an RNR NAK and its source's later requests are dropped (unNAKed) until it comes
// again (docs/architecture.md#reception-fifos).
// A raw packet (LRH next header raw: LRH, RWH, an Ethernet frame or IP datagram, VCRC,
// no ICRC) to this node is written whole, after an entry header, into the reception
// FIFO RAW_CTRL names: its MWr header and entry header (32 bytes) are made from the
// LRH and go out before the packet's beats (at 512 bits they ride in the carry). Raw
// packets are not sequenced or answered: one that finds no room is dropped and counted.
// A remote get (TEH flag RGET, an injection FIFO in the memory-ID field) carries one
// descriptor: it is written like a send, to the tail slot (SlotBytes) of this NI's
// remote-fed injection FIFO, and the engine is told (ri_push_o) when its TLP has left
// whole for the host, so the engine's read of the slot comes after the write. A full
// FIFO is answered RNR as a full reception FIFO is; one that is not remote-fed, not
// enabled or stopped in error refuses it (NAK 0x62).
`default_nettype none
`include "ni_assert.svh"

module ni_fab_rx #(
  parameter int unsigned DataW = 64,
  parameter int unsigned NumMemId = 16,
  parameter int unsigned MaxPayload = 256,
  parameter int unsigned RxCredits = 2,
  parameter int unsigned NumTags = 16,
  parameter int unsigned NumMcast = 4,
  parameter int unsigned NumPeers = 64,
  parameter int unsigned NumRfifo = 4,
  parameter int unsigned NumInj = 8,        // injection FIFOs (remote gets land in remote-fed ones)
  parameter int unsigned SlotBytes = 64,    // injection FIFO slot
  parameter int unsigned NumCnt = 32,       // DMA byte counters (a power of two)
  parameter logic [15:0] NiReqId = 16'h0100,
  localparam int unsigned Bpb = DataW / 8,
  localparam int unsigned KeepW = Bpb,
  localparam int unsigned TagW = $clog2(NumTags),
  localparam int unsigned MaxPktBytes = ni_pkg::FabHdrBytes + ni_pkg::TlpHdrBytes + MaxPayload +
                                        ni_pkg::TrailerBytes,
  localparam int unsigned MaxPktBeats = (MaxPktBytes + Bpb - 1) / Bpb,
  localparam int unsigned PeerW = $clog2(NumPeers),
  localparam int unsigned CntW = $clog2(NumCnt)
) (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic [15:0] node_id_i,
  input  logic [15:0] pkey_i,  // P_KEY: this NI's partition (bits 14:0) and full membership (bit 15)
  // Multicast LIDs this node is a member of.
  input  logic [NumMcast-1:0] mcast_valid_i,
  input  logic [NumMcast-1:0][15:0] mcast_lid_i,
  // Fabric port in; tdest is the virtual channel.
  input  logic [DataW-1:0] s_axis_tdata,
  input  logic [KeepW-1:0] s_axis_tkeep,
  input  logic s_axis_tlast,
  input  logic s_axis_tdest,
  input  logic s_axis_tvalid,
  output logic s_axis_tready,
  output logic [ni_pkg::NumVc-1:0] credit_o,
  // Memory-ID table.
  input  logic [NumMemId-1:0] mem_valid_i,
  input  logic [NumMemId-1:0] mem_perm_r_i,
  input  logic [NumMemId-1:0] mem_perm_w_i,
  input  logic [NumMemId-1:0] mem_perm_a_i,
  // A memory ID's region and protection key (0: none) as MEMID_CTRL's write makes them
  // active (mem_we_i): kept here in a RAM read at the packet's memory ID.
  input  logic mem_we_i,
  input  logic [$clog2(NumMemId)-1:0] mem_widx_i,
  input  logic [51:0] mem_wbase_i,  // page
  input  logic [19:0] mem_wpages_i,
  input  logic [15:0] mem_wkey_i,
  // Read tracker allocation.
  input  logic trk_free_avail_i,
  input  logic [TagW-1:0] trk_free_tag_i,
  output logic trk_commit_o,
  output logic [TagW-1:0] trk_commit_tag_o,
  output logic [15:0] trk_commit_node_o,
  output logic [15:0] trk_commit_reqid_o,
  output logic [9:0] trk_commit_otag_o,  // the requester's tag, 10 bits
  output logic [23:0] trk_commit_psn_o,
  output logic [1:0] trk_commit_kind_o,   // ni_pkg::TRK_*
  output logic [51:0] trk_commit_page_o,  // memory-ID base page of a translated DMWr
  // Reception FIFOs: set up by software (base slot-aligned), tail kept here.
  input  logic [NumRfifo-1:0] rf_enable_i,
  input  logic [NumRfifo-1:0][63:0] rf_base_i,
  input  logic [NumRfifo-1:0][15:0] rf_size_i,
  input  logic [NumRfifo-1:0][15:0] rf_head_i,
  input  logic [NumRfifo-1:0] rf_reset_i,  // tail := head
  input  logic [NumRfifo-1:0][15:0] rf_key_i,  // protection keys (0: none)
  // Raw packets (RAW_CTRL): taken, and into which reception FIFO.
  input  logic raw_enable_i,
  input  logic [7:0] raw_fifo_i,
  output logic [NumRfifo-1:0][15:0] rf_tail_o,
  // Remote-fed injection FIFOs (ni_dma_inj): where a remote get's descriptor goes.
  input  logic [NumInj-1:0] ri_remote_i,     // enabled and remote-fed
  input  logic [NumInj-1:0] ri_err_i,        // stopped in error: remote gets are refused
  input  logic [NumInj-1:0][63:0] ri_base_i,
  input  logic [NumInj-1:0][15:0] ri_size_i,
  input  logic [NumInj-1:0][15:0] ri_head_i,
  input  logic [NumInj-1:0][15:0] ri_tail_i, // the engine's tail: ours restarts there on a reset
  input  logic [NumInj-1:0] ri_reset_i,
  output logic [NumInj-1:0] ri_push_o,       // a descriptor is in memory at the engine's tail
  output logic ev_rget_rx_o,                 // a remote get taken
  output logic ev_key_err_o,                 // a request refused for its protection key
  // Answers for the sender side (ni_retx), and its check of a response.
  output logic rel_valid_o,
  output logic [2:0] rel_kind_o,
  output logic [15:0] rel_lid_o,
  output logic [23:0] rel_psn_o,
  output logic [15:0] q_lid_o,
  output logic [23:0] q_psn_o,
  // q_hit_i answers this cycle's query (the class reads it); q_held_i and the three
  // below may answer the last cycle's (ni_retx QueryReg, at 64 bits, where the query
  // comes from the capture register from the third beat on): they are read from the
  // sixth beat on (a response's bytes from 44 and its last beat; a response that
  // arrives framed has 48 bytes or more).
  input  logic q_hit_i,
  input  logic q_held_i,
  // The awaited response answers a memory-confirmed write: the address it names is
  // translated back by q_back_i pages (the sender's window).
  input  logic q_conf_i,
  // {requester ID, tag} of the awaited request: a response naming others is not its answer.
  input  logic [25:0] q_cpl_i,  // {requester ID, 10-bit tag}
  input  logic [51:0] q_back_i,
  // Kept result of the atomic from q_lid_o with q_psn_o (ni_amo_cache): replayed to a duplicate.
  input  logic amo_hit_i,
  input  logic [4:0] amo_len_i,
  output logic amo_replay_o,
  // Generated responses (ACK/NAK, UR completion, replayed atomic result) to the framer.
  output ni_pkg::tx_desc_t gen_hdr_o,
  output logic gen_valid_o,
  input  logic gen_ready_i,
  // Host port out: decapsulated TLPs; tuser on the last beat = nullified.
  output logic [DataW-1:0] m_axis_tdata,
  output logic [KeepW-1:0] m_axis_tkeep,
  output logic m_axis_tlast,
  output logic m_axis_tuser,
  output logic m_axis_tcni,   // with every beat: a write this NI confirmed (ni_mem_keep keeps it)
  output logic m_axis_tvalid,
  input  logic m_axis_tready,
  // Events.
  output logic ev_rx_pkt_o,
  output logic ev_crc_err_o,
  output logic ev_memid_err_o,
  output logic ev_bounds_err_o,
  output logic ev_nak_tx_o,
  output logic ev_nak_rx_o,
  output logic ev_bad_pkt_o,
  output logic ev_pkey_err_o,  // a packet for us dropped for a P_Key outside our partition (also ev_bad_pkt_o)
  output logic ev_poison_o,    // a poisoned TLP (EP) delivered toward the host, still poisoned
  output logic ev_rd_served_o,
  output logic ev_dup_o,   // a duplicate request or response dropped
  output logic ev_oos_o,   // a request ahead of its sequence dropped
  // A DMA packet taken that names a reception counter (TEH flag RCNT, byte 21): its data bytes.
  output logic rcnt_valid_o,
  output logic [CntW-1:0] rcnt_id_o,
  output logic [12:0] rcnt_bytes_o,
  output logic ev_rnr_tx_o,  // a send refused for a full reception FIFO (RNR NAK sent)
  output logic ev_rnr_rx_o,  // an RNR NAK arrived
  output logic ev_raw_rx_o,  // a raw packet written into its reception FIFO
  output logic ev_raw_drop_o // a raw packet to this node dropped (no room, raw reception off)
);
  localparam int unsigned EntryW = DataW + KeepW + 1;
  localparam int unsigned FifoDepth = RxCredits * MaxPktBeats;
  localparam int unsigned CapBytes = 52;  // LRH, BTH, TEH, the TLP header, a confirmation's address
  localparam int unsigned MaxT = ni_pkg::FabHdrBytes + ni_pkg::TlpHdrBytes + MaxPayload;
  localparam int unsigned Off = ni_pkg::FabHdrBytes % Bpb;  // TLP lane offset: 0, or 32 at 512 bits
  localparam int unsigned OffW = (Off > 0) ? Off : 1;
  // At 64 bits the 32-byte header alone takes 4 beats: an empty output register is
  // bypassed, so a TLP's first beat enters the host queue in the cycle it leaves the
  // head queue. Wider NIs keep the register.
  localparam bit OutBypass = DataW == 64;
  localparam int unsigned MiW = $clog2(NumMemId);
  // Per source, the write a continuation continues: {requester ID, receiver
  // translates, memory ID, next address [63:2] as tunneled}.
  localparam int unsigned CtxW = 16 + 1 + MiW + 62;

  // ------------------------------------------------------------ per-VC buffers and credits
  logic [ni_pkg::NumVc-1:0] f_wready, f_rvalid, f_rready;
  logic [ni_pkg::NumVc-1:0][EntryW-1:0] f_rdata;
  logic [ni_pkg::NumVc-1:0][3:0] cred_pend_q, cred_pend_d;
  logic [ni_pkg::NumVc-1:0] vq_room;  // room for one more packet's verdict (below)

  // The buffer's block RAM read port is off the loop from a beat through
  // the decisions to the pop (the receiver's worst path, docs/synthesis.md): its head
  // passes a queue of two flip-flop entries first, a cycle of decapsulation latency.
  logic [ni_pkg::NumVc-1:0] b_rvalid, b_rready;
  logic [ni_pkg::NumVc-1:0][EntryW-1:0] b_rdata;
  for (genvar v = 0; v < ni_pkg::NumVc; v++) begin : gen_vc
    ni_fifo #(.Width(EntryW), .Depth(FifoDepth), .FallThrough(1)) u_buf (
      .clk_i, .rst_ni,
      .wdata_i({s_axis_tlast, s_axis_tkeep, s_axis_tdata}),
      .wvalid_i(s_axis_tvalid && (s_axis_tdest == 1'(v)) && (!s_axis_tlast || vq_room[v]) && !w_cut),
      .wready_o(f_wready[v]),
      .rdata_o(b_rdata[v]),
      .rvalid_o(b_rvalid[v]),
      .rready_i(b_rready[v])
    );
    ni_fifo #(.Width(EntryW), .Depth(2)) u_head_q (
      .clk_i, .rst_ni,
      .wdata_i(b_rdata[v]), .wvalid_i(b_rvalid[v]), .wready_o(b_rready[v]),
      .rdata_o(f_rdata[v]), .rvalid_o(f_rvalid[v]), .rready_i(f_rready[v])
    );
  end
  // ------------------------------------------------------------ CRC verdicts, as beats arrive
  // Both CRCs are taken on the write side of the buffers, over each beat as it arrives
  // (state per VC: the two VCs' beats may interleave on the link). A packet's verdict
  // (good, stomped) is queued for its VC, and the read side takes a last beat only with
  // its verdict. At 64 bits the verdict comes the cycle after the last beat arrived, so
  // no CRC lies on the path from a buffer's read port through the header checks to what
  // a packet does (a last beat that arrives into an empty buffer leaves one cycle
  // later; first beats do not wait).
  localparam int unsigned KcntW = $clog2(Bpb + 1);
  localparam int unsigned DwW = $clog2(Bpb / 4 + 1);
  localparam int unsigned VqCntW = $clog2(RxCredits + 1);
  logic wv, w_take, w_first, w_raw, w_over, w_len_ok;
  logic [12:0] w_bs, w_pos;
  logic signed [14:0] w_icrc_n;  // ICRC bytes in the trailer (none in a raw packet)
  logic [KcntW-1:0] w_kcnt;
  logic [ni_pkg::NumVc-1:0][12:0] wbs_q, wpos_q;  // bytes before the beat; ICRC position
  logic [ni_pkg::NumVc-1:0] wraw_q, wover_q, wlen_ok_q, wpend_q;
  logic [ni_pkg::NumVc-1:0][31:0] wc32_q, wicrc_q;
  logic [ni_pkg::NumVc-1:0][15:0] wc16_q, wvcrc_q;
  logic [31:0] w_c32_in, w_c32_all, w_c32, w_icrc;
  logic [15:0] w_c16_in, w_c16_all, w_c16, w_vcrc;
  logic [ni_pkg::NumVc-1:0][VqCntW-1:0] vq_cnt_q;  // packets whose last beat came, not yet taken
  logic [ni_pkg::NumVc-1:0] vq_wready, vq_rvalid, vq_rready, vq_good, vq_stomp;
  logic [ni_pkg::NumVc-1:0][1:0] vq_rdata;
  // A last beat also needs room for its packet's verdict: a sender within its credits
  // always finds it (RxCredits packets per VC, each freed by its last beat).
  assign s_axis_tready = (f_wready[s_axis_tdest] || w_cut) && (!s_axis_tlast || vq_room[s_axis_tdest]);
  assign wv = s_axis_tdest;
  // A packet longer than the largest this NI sends (a sender past its MTU, valid CRCs
  // or not) would overrun its credit's room in the buffer: its beats past the
  // MaxPktBeats-th are taken from the link and not written, except its last, so the
  // packet ends where it ends and fails as overrun. The byte count stops there too
  // (no wrap past 8 KiB that would make a later beat look like a packet's first).
  localparam int unsigned CutBytes = (MaxPktBeats - 1) * Bpb;
  logic w_past, w_cut;
  assign w_past = w_bs >= 13'(CutBytes);
  assign w_cut = w_past && !s_axis_tlast;
  assign w_take = s_axis_tvalid && s_axis_tready;
  assign w_bs = wbs_q[wv];
  assign w_first = w_bs == '0;
  // The packet's kind and length come with its first beat (bytes 1, 4 and 5).
  assign w_raw = w_first ? s_axis_tdata[1*8 +: 2] == ni_pkg::LnhRaw : wraw_q[wv];
  assign w_pos = w_first ? {s_axis_tdata[4*8 +: 3], s_axis_tdata[5*8 +: 8], 2'b00} - (w_raw ? 13'd0 : 13'd4)
                         : wpos_q[wv];
  assign w_icrc_n = w_raw ? 15'sd0 : 15'sd4;
  // Both CRCs take a prefix of the beat's lanes: the data before the ICRC (ICRC, with
  // its variant fields masked), that and the ICRC (VCRC). Each is stepped over the whole
  // beat with the other lanes as zeros, then back over those zeros (ni_crc_back): a
  // tree per result bit, where a step per lane would chain Bpb steps. The step back is
  // in whole DWs: a prefix that is not (n32 or n16 not a multiple of 4) is a beat cut
  // short before the trailer, a packet whose framing fails anyway.
  logic signed [14:0] rem32, rem16;  // bytes of the packet from this beat on, per CRC
  logic signed [14:0] w_off;         // a lane's place in the trailer
  logic w_vbyte;                     // ... the VCRC byte it holds: bit 0 of w_off - w_icrc_n
  logic [KcntW-1:0] n32, n16;        // lanes of this beat under each CRC
  logic [DataW-1:0] d32, d16;
  assign rem32 = $signed({2'b00, w_pos}) - $signed({2'b00, w_bs});
  assign rem16 = rem32 + w_icrc_n;
  always_comb begin
    w_kcnt = KcntW'(ni_pkg::keep_count(64'(s_axis_tkeep)));
    n32 = (rem32 <= 15'sd0) ? '0 : (rem32 >= $signed(15'(w_kcnt))) ? w_kcnt : KcntW'(rem32);
    n16 = (rem16 <= 15'sd0) ? '0 : (rem16 >= $signed(15'(w_kcnt))) ? w_kcnt : KcntW'(rem16);
    for (int j = 0; j < Bpb; j++) begin
      d16[j*8 +: 8] = (32'(j) < 32'(n16)) ? s_axis_tdata[j*8 +: 8] : 8'h00;
      d32[j*8 +: 8] = (32'(j) < 32'(n32)) ? ni_pkg::icrc_mask(32'(w_bs) + j, s_axis_tdata[j*8 +: 8]) : 8'h00;
    end
  end
  // The verdict (below). At 64 bits (the width with a clock target), from the state the
  // last beat left, the cycle after it arrived (the next packet's first beat of the VC,
  // arriving meanwhile, replaces that state only at the end of that cycle). Wider, as
  // the last beat arrives, from the state it makes: there a cycle more per packet
  // would cost the rendezvous its 95 % of the link (bench_rget, 64 KiB at 512 bits).
  localparam bit VerdictLate = DataW == 64;
  // At 64 bits the CRCs step a cycle after the beat arrived, from its lanes
  // as chosen here (c_*): the choice (a subtraction and compares of the ICRC position)
  // and the CRC trees are on two paths instead of one (the board's path at 25 MHz,
  // docs/board.md). The verdict comes a cycle later: a last beat that arrives into an
  // empty buffer leaves two cycles after it arrived instead of one (the head queue's
  // cycle and this one); first beats do not wait.
  logic c_take, c_first, c_vc;
  logic [DataW-1:0] c_d32, c_d16;
  logic [KcntW-1:0] c_n32, c_n16;
  if (VerdictLate) begin : gen_crc_reg
    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) c_take <= 1'b0;
      else c_take <= w_take;
    end
    always_ff @(posedge clk_i) begin
      if (w_take) {c_first, c_vc, c_d32, c_d16, c_n32, c_n16} <= {w_first, wv, d32, d16, n32, n16};
    end
  end else begin : gen_crc_now
    assign {c_take, c_first, c_vc, c_d32, c_d16, c_n32, c_n16} = {w_take, w_first, wv, d32, d16, n32, n16};
  end
  assign w_c32_in = c_first ? 32'hFFFF_FFFF : wc32_q[c_vc];
  assign w_c16_in = c_first ? 16'hFFFF : wc16_q[c_vc];
  ni_crc_step #(.Width(32), .Poly(ni_pkg::Crc32Poly), .Bytes(Bpb)) u_icrc_step (
    .state_i(w_c32_in), .data_i(c_d32), .state_o(w_c32_all)
  );
  ni_crc_back #(.Width(32), .Poly(ni_pkg::Crc32Poly), .MaxBytes(Bpb), .Unit(4)) u_icrc_back (
    .state_i(w_c32_all), .n_i(DwW'((Bpb - 32'(c_n32)) / 4)), .state_o(w_c32)
  );
  ni_crc_step #(.Width(16), .Poly(ni_pkg::Crc16Poly), .Bytes(Bpb)) u_vcrc_step (
    .state_i(w_c16_in), .data_i(c_d16), .state_o(w_c16_all)
  );
  ni_crc_back #(.Width(16), .Poly(ni_pkg::Crc16Poly), .MaxBytes(Bpb), .Unit(4)) u_vcrc_back (
    .state_i(w_c16_all), .n_i(DwW'((Bpb - 32'(c_n16)) / 4)), .state_o(w_c16)
  );
  // The received trailer bytes; bytes past it, or lanes that are not a prefix of a last
  // beat or the whole of another (never sent so), overrun the packet.
  always_comb begin
    w_icrc = wicrc_q[wv];
    w_vcrc = wvcrc_q[wv];
    w_over = (!w_first && wover_q[wv]) || ((s_axis_tkeep & (s_axis_tkeep + KeepW'(1))) != '0) ||
             (!s_axis_tlast && !(&s_axis_tkeep)) || w_cut;
    // Lane j holds trailer byte j - rem32 (ICRC bytes 0-3, then the VCRC's two; a raw
    // packet's trailer is its VCRC alone): 15-bit differences from rem32, where sums of
    // the byte position took 32-bit adders per lane. A byte's index comes from bits of
    // w_off, which are unsigned: a size cast of a signed value stays signed (2'(w_off)
    // is -1 for w_off = 3, byte -8), and a negative index writes nowhere in Yosys but
    // wrapped round in Verilator (docs/synthesis.md, post-synthesis simulation).
    for (int j = 0; j < Bpb; j++) begin
      w_off = $signed(15'(j)) - rem32;
      w_vbyte = w_off[0] ^ w_icrc_n[0];
      if (s_axis_tkeep[j] && w_off >= 15'sd0) begin
        if (!w_raw && w_off < 15'sd4) begin
          w_icrc[w_off[1:0]*8 +: 8] = s_axis_tdata[j*8 +: 8];
        end else if (w_off < w_icrc_n + 15'sd2) begin
          w_vcrc[w_vbyte*8 +: 8] = s_axis_tdata[j*8 +: 8];
        end else begin
          w_over = 1'b1;
        end
      end
    end
  end
  // The packet is as long as PktLen says (checked with its last beat): the beat's lanes
  // end with the VCRC.
  assign w_len_ok = $signed(15'(w_kcnt)) == rem16 + 15'sd2;

  // The verdict (VerdictLate above).
  logic [ni_pkg::NumVc-1:0] vq_push;
  for (genvar v = 0; v < ni_pkg::NumVc; v++) begin : gen_verdict
    logic raw, over, len_ok, framed;
    logic [31:0] c32, icrc;
    logic [15:0] c16, vcrc;
    // VerdictLate: the CRCs are whole a cycle later than the rest, which the next packet's
    // first beat may then replace; that is kept for the verdict (late_*).
    logic late_pend_q, late_raw_q, late_over_q, late_len_ok_q;
    logic [31:0] late_icrc_q;
    logic [15:0] late_vcrc_q;
    if (VerdictLate) begin : gen_late
      always_ff @(posedge clk_i or negedge rst_ni) begin
        if (!rst_ni) late_pend_q <= 1'b0;
        else late_pend_q <= wpend_q[v];
      end
      always_ff @(posedge clk_i) begin
        if (wpend_q[v]) {late_raw_q, late_over_q, late_len_ok_q, late_icrc_q, late_vcrc_q} <=
            {wraw_q[v], wover_q[v], wlen_ok_q[v], wicrc_q[v], wvcrc_q[v]};
      end
    end else begin : gen_now
      assign {late_pend_q, late_raw_q, late_over_q, late_len_ok_q, late_icrc_q, late_vcrc_q} = '0;
    end
    assign {raw, over, len_ok, c32, icrc, c16, vcrc} =
        VerdictLate ? {late_raw_q, late_over_q, late_len_ok_q, wc32_q[v], late_icrc_q, wc16_q[v], late_vcrc_q} :
                      {w_raw, w_over, w_len_ok, w_c32, w_icrc, w_c16, w_vcrc};
    assign vq_push[v] = VerdictLate ? late_pend_q : w_take && s_axis_tlast && wv == 1'(v);
    logic unused_early;  // wider, the verdict is taken as the last beat arrives
    assign unused_early = ^{wlen_ok_q[v], wpend_q[v]};
    assign framed = ~c16 == vcrc && !over && len_ok;
    assign vq_good[v] = framed && (raw || ~c32 == icrc);
    // Stomped by its sender (ICRC sent inverted, VCRC right): refused, never resent.
    assign vq_stomp[v] = framed && !raw && c32 == icrc;
    // FreeWrite: the pop (late) stays off its storage's write enable.
    ni_fifo #(.Width(2), .Depth(RxCredits), .FallThrough(1), .FreeWrite(1)) u_verdicts (
      .clk_i, .rst_ni,
      .wdata_i({vq_good[v], vq_stomp[v]}),
      .wvalid_i(vq_push[v]),
      .wready_o(vq_wready[v]),
      .rdata_o(vq_rdata[v]),
      .rvalid_o(vq_rvalid[v]),
      .rready_i(vq_rready[v])
    );
    assign vq_room[v] = 32'(vq_cnt_q[v]) < RxCredits;
  end
  `NI_ASSERT(VerdictRoom_A, (vq_push & ~vq_wready) == '0)
  // A sender within its credits (RxCredits packets a VC) never meets a full verdict queue.
  `NI_ASSUME(CreditRespectedPackets_A, !(s_axis_tvalid && s_axis_tlast) || vq_room[s_axis_tdest])

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      wbs_q <= '0;
      wpend_q <= '0;
      vq_cnt_q <= '0;
    end else begin
      wpend_q <= '0;
      if (w_take) begin
        wbs_q[wv] <= s_axis_tlast ? 13'd0 : w_past ? w_bs : w_bs + 13'(Bpb);
        wpend_q[wv] <= s_axis_tlast;
      end
      for (int v = 0; v < ni_pkg::NumVc; v++) begin
        vq_cnt_q[v] <= vq_cnt_q[v] + VqCntW'(w_take && s_axis_tlast && wv == 1'(v)) - VqCntW'(vq_rready[v]);
      end
    end
  end
  // Datapath: not reset (a packet's first beat starts it).
  always_ff @(posedge clk_i) begin
    if (c_take) begin
      wc32_q[c_vc] <= w_c32;
      wc16_q[c_vc] <= w_c16;
    end
    if (w_take) begin
      wpos_q[wv] <= w_pos;
      wraw_q[wv] <= w_raw;
      wicrc_q[wv] <= w_icrc;
      wvcrc_q[wv] <= w_vcrc;
      wover_q[wv] <= w_over;
      wlen_ok_q[wv] <= w_len_ok;
    end
  end

  // ------------------------------------------------------------ packet selection
  logic busy_q, busy_d, vc_q, vc_d, cur_vc;
  logic [DataW-1:0] in_data;
  logic [KeepW-1:0] in_keep;
  logic in_last, in_valid, pop;
  // Between packets, responses (VC1) go first: they always drain. The choice between
  // packets is a register (pick_q), made a cycle ahead from what each head queue will
  // hold (a beat entering it, or one there and not taken now), so the heads' valids do
  // not select the beat that every decision reads: a beat still enters the decisions
  // the cycle after it entered its head queue.
  logic pick_q;
  logic [ni_pkg::NumVc-1:0] will_have;
  assign will_have = (f_rvalid & ~f_rready) | (b_rvalid & b_rready);
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) pick_q <= 1'b1;
    else pick_q <= will_have[1] ? 1'b1 : will_have[0] ? 1'b0 : cur_vc;
  end
  assign cur_vc = busy_q ? vc_q : pick_q;
  assign {in_last, in_keep, in_data} = f_rdata[cur_vc];
  // A last beat waits for its packet's verdict.
  assign in_valid = f_rvalid[cur_vc] && (!in_last || vq_rvalid[cur_vc]);
  always_comb begin
    f_rready = '0;
    f_rready[cur_vc] = pop;
    vq_rready = '0;
    vq_rready[cur_vc] = pop && in_last;
  end

  // ------------------------------------------------------------ header view
  logic [12:0] bs_q, bs_d;
  logic [CapBytes*8-1:0] cap_q, cap_d, view;
  logic [KcntW-1:0] kcnt;
  always_comb begin
    view = cap_q;
    for (int p = 0; p < CapBytes; p++) begin
      // bs_q is a whole number of beats: an equality of the beat index, where two
      // compares per byte made carry chains at the start of the receiver's worst path.
      if (bs_q[12:$clog2(Bpb)] == (13 - $clog2(Bpb))'(p / Bpb) && in_keep[p % Bpb])
        view[p*8 +: 8] = in_data[(p % Bpb)*8 +: 8];
    end
    kcnt = KcntW'(ni_pkg::keep_count(64'(in_keep)));
  end

  logic [1:0] lnh;
  logic [15:0] dlid, slid, memid, t_reqid;
  logic [10:0] pkt_words;
  logic [7:0] opcode, teh_flags, aeth, t_ft;
  logic [9:0] t_tag;  // a request's tag: T9, T8 (TLP byte 1 bits 7, 3) and byte 6
  logic [23:0] psn;
  logic [12:0] t_pos;  // ICRC position = bytes before it
  logic [9:0] t_len_dw;
  logic [12:0] t_len_bytes;
  logic [63:0] t_addr;
  logic [PeerW-1:0] peer;
  logic is_cont;  // a continuation (its opcode is in view from the beat holding byte 8)
  logic [CtxW-1:0] ctx_mem_q [NumPeers];
  logic [NumPeers-1:0] ctx_valid_q, ctx_valid_d;
  logic [CtxW-1:0] ctx;  // of the packet's source
  logic [15:0] ctx_reqid;
  logic ctx_xlate;
  logic [MiW-1:0] ctx_mi;
  logic [61:0] ctx_addr;
  assign lnh = view[1*8 +: 2];
  assign dlid = {view[2*8 +: 8], view[3*8 +: 8]};
  assign pkt_words = {view[4*8 +: 3], view[5*8 +: 8]};
  assign slid = {view[6*8 +: 8], view[7*8 +: 8]};
  assign opcode = view[8*8 +: 8];
  // A raw packet: LRH next header raw (known from the first beat). PktLen covers it up
  // to its VCRC (there is no ICRC); its byte 8 is the RWH, not an opcode.
  logic is_raw;
  assign is_raw = lnh == ni_pkg::LnhRaw;
  assign is_cont = !is_raw && bs_q + 13'(Bpb) > 13'd8 && opcode == ni_pkg::OP_TUNNEL_CONT;
  assign t_pos = {pkt_words, 2'b00} - (is_raw ? 13'd0 : 13'd4);
  assign aeth = view[20*8 +: 8];
  // A source's context is written the cycle after its packet (below); read meanwhile, it
  // comes from the write waiting.
  logic ctx_wr_q;
  logic [PeerW-1:0] ctx_wr_peer_q;
  logic [CtxW-63:0] ctx_wr_id_q;  // {requester ID, receiver translates, memory ID}
  logic [61:0] ctx_wr_addr_q;     // the write's DW address
  logic [10:0] ctx_wr_dw_q;       // and its length in DWs
  logic [CtxW-1:0] ctx_wr;
  assign ctx_wr = {ctx_wr_id_q, ctx_wr_addr_q + 62'(ctx_wr_dw_q)};
  assign ctx = (ctx_wr_q && ctx_wr_peer_q == peer) ? ctx_wr : ctx_mem_q[peer];
  assign {ctx_reqid, ctx_xlate, ctx_mi, ctx_addr} = ctx;
  // At 64 bits the source's node (LRH bytes 6-7) and PSN (BTH bytes 17-19) are read
  // from the capture register. Every use comes a beat or more after their beat: the
  // class at byte 15 (continuation) or 31, the answer with the last beat, and a packet
  // that arrives framed has two beats or more (four for a tunneled packet, whose PSN
  // queries ni_retx and ni_amo_cache). So no path runs from the receive buffer through
  // the PSN context and those matches into the decisions (the board's worst path).
  // Wider, they arrive in the beat that decides.
  localparam bit SrcFromCap = Bpb == 8;
  logic [15:0] src_lid;  // the source's node, as the PSN context and the queries read it
  logic [23:0] bth_psn;  // the BTH's PSN (a continuation's is in its CTH)
  assign src_lid = SrcFromCap ? {cap_q[6*8 +: 8], cap_q[7*8 +: 8]} : slid;
  assign bth_psn = SrcFromCap ? {cap_q[17*8 +: 8], cap_q[18*8 +: 8], cap_q[19*8 +: 8]}
                              : {view[17*8 +: 8], view[18*8 +: 8], view[19*8 +: 8]};
  // A continuation's fields come from its source's last write; its length from PktLen.
  always_comb begin
    if (is_cont) begin
      psn = {view[13*8 +: 8], view[14*8 +: 8], view[15*8 +: 8]};
      teh_flags = ctx_xlate ? ni_pkg::TEH_RX_XLATE : 8'h0;
      memid = 16'(ctx_mi);
      t_ft = ni_pkg::TLP_MWR64;
      t_len_dw = 10'((t_pos - 13'(ni_pkg::ContHdrBytes)) >> 2);
      t_reqid = ctx_reqid;
      t_tag = 10'h0;
      t_addr = {ctx_addr, 2'b00};
    end else begin
      psn = bth_psn;
      teh_flags = view[20*8 +: 8];
      memid = {view[22*8 +: 8], view[23*8 +: 8]};
      t_ft = view[32*8 +: 8];
      t_len_dw = {view[34*8 +: 2], view[35*8 +: 8]};
      t_reqid = {view[36*8 +: 8], view[37*8 +: 8]};
      t_tag = {view[33*8 + 7], view[33*8 + 3], view[38*8 +: 8]};
      t_addr = {view[40*8 +: 8], view[41*8 +: 8], view[42*8 +: 8], view[43*8 +: 8],
                view[44*8 +: 8], view[45*8 +: 8], view[46*8 +: 8], view[47*8+2 +: 6], 2'b00};
    end
  end
  assign t_len_bytes = (t_len_dw == 10'd0) ? 13'd4096 : {1'b0, t_len_dw, 2'b00};
  logic unused_fields;
  assign unused_fields = ^{teh_flags[7:5]};

  // ------------------------------------------------------------ classification (D1: byte 31 seen)
  // ClDrop: a good packet that is not delivered (duplicate, out of sequence, unawaited response).
  // ClRaw: a raw packet written into the raw reception FIFO.
  typedef enum logic [2:0] {ClTun, ClAck, ClBad, ClDrop, ClRaw} cl_e;
  // Where a request stands in its source's sequence.
  typedef enum logic [1:0] {SeqIn, SeqDup, SeqAhead} seq_e;
  seq_e seq_q, seq_d, seq_new, seq_cur;
  // The PSN expected next from each source: a RAM (LUT RAM on an FPGA) read at the
  // packet's source, written as its packet ends; a bit per source makes a source not
  // heard from since reset expect PSN 0.
  logic [23:0] exp_mem_q [NumPeers];
  logic [NumPeers-1:0] exp_vld_q, exp_vld_d;
  logic [23:0] exp_cur;
  logic exp_we;
  logic [NumPeers-1:0] naked_q, naked_d;
  logic sequenced, sync, peer_ok;
  cl_e cl_q, cl_d, cl_new, cl_cur;
  logic d1_now, d1_q, d1_d;
  logic is_req;
  // Classified once the transport header is in view: byte 31 (LRH, BTH, TEH), or
  // byte 15 for a continuation (LRH, CTH).
  assign d1_now = !d1_q && in_valid &&
                  ((bs_q + 13'(Bpb) > (is_raw ? 13'd7 : is_cont ? 13'd15 : 13'd31)) || in_last);
  // Addressed to us: our LID, or a multicast LID we are a member of (writes only).
  logic for_us, to_group;
  always_comb begin
    to_group = 1'b0;
    for (int g = 0; g < NumMcast; g++) to_group = to_group || (mcast_valid_i[g] && dlid == mcast_lid_i[g]);
    to_group = to_group && dlid[15:14] == 2'b11;
    for_us = dlid == node_id_i || (to_group && opcode == ni_pkg::OP_TUNNEL_REQ);
  end
  // Header fields every packet of this fabric carries (docs/formats.md): LVer 0; in a
  // BTH or CTH, TVer and PadCnt 0 (payloads are whole DWs) and a P_Key of this NI's
  // partition, as in IB: the same partition (not the invalid 0), one side a full
  // member; in a BTH the tunnel's DestQP. Anything else is dropped as ClBad.
  logic [15:0] pkt_pkey;
  logic pkey_ok, fields_ok;
  assign pkt_pkey = {view[10*8 +: 8], view[11*8 +: 8]};
  assign pkey_ok = pkt_pkey[14:0] == pkey_i[14:0] && pkt_pkey[14:0] != 15'd0 && (pkt_pkey[15] || pkey_i[15]);
  assign fields_ok = view[3:0] == 4'h0 && view[9*8 +: 6] == 6'h0 &&
                     (is_cont || {view[13*8 +: 8], view[14*8 +: 8], view[15*8 +: 8]} == ni_pkg::TunnelQp);
  assign peer = src_lid[PeerW-1:0];
  assign peer_ok = ni_pkg::lid_has_peer(slid, 16'(NumPeers));
  // A send to a reception FIFO (flags in view with the rest of the transport header).
  localparam int unsigned RfW = (NumRfifo > 1) ? $clog2(NumRfifo) : 1;
  localparam int unsigned SlotShift = $clog2(MaxPayload);
  logic [NumRfifo-1:0][15:0] rf_tail_q, rf_tail_d;
  logic is_rfifo, rf_ok, rf_full;
  logic [RfW-1:0] rf;
  logic [15:0] rf_next;
  logic [63:0] rf_slot_addr;
  assign is_rfifo = is_req && !is_cont && (teh_flags & (ni_pkg::TEH_RFIFO | ni_pkg::TEH_RGET)) == ni_pkg::TEH_RFIFO;
  // A raw packet's FIFO is RAW_CTRL's.
  assign rf = is_raw ? raw_fifo_i[RfW-1:0] : memid[RfW-1:0];
  // A FIFO whose tail lies outside its ring (its size made smaller while it ran) takes
  // nothing until it is reset.
  // Each FIFO's checks (below, with the remote-fed ones') are made from its registers,
  // side by side; the packet's FIFO number (from the header or the context RAM, late)
  // then selects one bit, not the operands of a compare.
  logic [NumRfifo-1:0] rf_in_ring_v, rf_full_v;
  logic [NumRfifo-1:0][15:0] rf_next_v;
  assign rf_ok = (is_raw ? (raw_enable_i && 16'(raw_fifo_i) < 16'(NumRfifo)) : memid < 16'(NumRfifo)) &&
                 rf_enable_i[rf] && rf_in_ring_v[rf];
  assign rf_next = rf_next_v[rf];
  assign rf_full = rf_full_v[rf];
  assign rf_slot_addr = rf_base_i[rf] + (64'(rf_tail_q[rf]) << SlotShift);
  assign rf_tail_o = rf_tail_q;
  // A remote get: the injection FIFO it names, the slot it is written to.
  localparam int unsigned RiW = (NumInj > 1) ? $clog2(NumInj) : 1;
  logic [NumInj-1:0][15:0] ri_tail_q, ri_tail_d;
  logic is_rget, ri_ok, ri_full;
  logic [RiW-1:0] ri;
  logic [15:0] ri_next;
  logic [63:0] ri_slot_addr;
  assign is_rget = is_req && !is_cont && (teh_flags & ni_pkg::TEH_RGET) != 8'h0;
  assign ri = memid[RiW-1:0];
  // The tail lies in the ring (not so for a cycle if the engine took a smaller size
  // while the FIFO was empty: it stops the FIFO then).
  // Checked per FIFO and selected, as the reception FIFOs are.
  logic [NumInj-1:0] ri_in_ring_v, ri_full_v;
  logic [NumInj-1:0][15:0] ri_next_v;
  always_comb begin
    for (int f = 0; f < NumRfifo; f++) begin
      rf_in_ring_v[f] = rf_tail_q[f] < rf_size_i[f];
      rf_next_v[f] = ni_pkg::ring_step(rf_tail_q[f], rf_size_i[f]);
      rf_full_v[f] = rf_next_v[f] == rf_head_i[f];
    end
    for (int f = 0; f < NumInj; f++) begin
      ri_in_ring_v[f] = ri_tail_q[f] < ri_size_i[f];
      ri_next_v[f] = ni_pkg::ring_step(ri_tail_q[f], ri_size_i[f]);
      ri_full_v[f] = ri_next_v[f] == ri_head_i[f];
    end
  end
  assign ri_ok = memid < 16'(NumInj) && ri_remote_i[ri] && !ri_err_i[ri] && ri_in_ring_v[ri];
  assign ri_next = ri_next_v[ri];
  assign ri_full = ri_full_v[ri];
  assign ri_slot_addr = ri_base_i[ri] + (64'(ri_tail_q[ri]) << $clog2(SlotBytes));
  assign exp_cur = exp_vld_q[peer] ? exp_mem_q[peer] : 24'd0;
  assign sync = teh_flags[1];
  // Unicast requests are sequenced; a multicast group's writes are not.
  assign is_req = !is_raw && (opcode == ni_pkg::OP_TUNNEL_REQ || opcode == ni_pkg::OP_TUNNEL_CONT);
  assign sequenced = is_req && dlid == node_id_i;
  always_comb begin
    seq_new = SeqIn;
    if (sequenced) begin
      if (ni_pkg::psn_before(psn, exp_cur)) seq_new = SeqDup;
      else if (psn != exp_cur && !sync) seq_new = SeqAhead;
    end
  end
  // A tunneled request or response (not a continuation) of a valid length, and whether
  // it is dropped: a request ahead of its sequence, a send whose receiver is not ready
  // (it waits at its source; only when it would be taken now), an unawaited response.
  logic tun, tun_drop;
  cl_e cl_base;  // the class without tun_drop
  always_comb begin
    tun = (opcode == ni_pkg::OP_TUNNEL_REQ || opcode == ni_pkg::OP_TUNNEL_RSP) &&
          t_pos >= 13'd44 && t_pos <= 13'(MaxT);
    tun_drop = seq_new == SeqAhead ||
               (sequenced && seq_new == SeqIn && ((is_rfifo && rf_ok && rf_full) || (is_rget && ri_ok && ri_full))) ||
               (opcode == ni_pkg::OP_TUNNEL_RSP && !q_hit_i);
    cl_base = ClBad;
    if (lnh == ni_pkg::LnhIbaLocal && for_us && (peer_ok || !sequenced) && pkey_ok && fields_ok) begin
      if (tun) cl_base = ClTun;
      if (opcode == ni_pkg::OP_TUNNEL_CONT && t_pos >= 13'(ni_pkg::ContHdrBytes + 4) &&
          t_pos <= 13'(ni_pkg::ContHdrBytes + MaxPayload))
        cl_base = (seq_new == SeqAhead) ? ClDrop : ClTun;
      if (opcode == ni_pkg::OP_RC_ACK && t_pos == 13'(ni_pkg::NakHdrBytes)) cl_base = ClAck;
    end
    // A raw packet to this node: RWH and at least one DW, and room for it, after its
    // entry header, in a reception FIFO slot.
    if (is_raw && dlid == node_id_i && t_pos >= 13'(ni_pkg::RawHdrBytes + 4) && t_pos <= 13'(MaxPayload - 16))
      cl_base = (rf_ok && !rf_full) ? ClRaw : ClDrop;
  end
  assign cl_new = (tun && cl_base == ClTun && tun_drop) ? ClDrop : cl_base;
  // At 64 bits tun_drop is read only from cl_q, keeping q_hit_i, the FIFO checks and the
  // sequence compare off the paths into the pop and what a packet does with its last
  // beat (the board's worst path, docs/synthesis.md). A tunneled packet is classified
  // at byte 31, in a beat that emits nothing (its TLP starts at byte 32) and that ends
  // no packet that arrived framed (one with t_pos >= 44 is 50 bytes or more). A packet
  // that does end there is damaged, and its answer, a NAK, is the same as ClTun or
  // ClDrop. A continuation or a raw packet emits in the beat that classifies it: its
  // class is whole.
  localparam bit ClassLate = Bpb == 8;
  // At 64 bits no class is read in the beat that makes it: a beat that
  // needs its class at once (a raw packet's first, a continuation's second, a last
  // beat at or before byte 31) waits a cycle (cls_hold) while the class and sequence
  // place are registered, and every other classifying beat (a tunneled packet's bytes
  // 24-31) does nothing that depends on them. So the context, sequence, FIFO and
  // length checks are off the path into the pop (the board's worst path,
  // docs/synthesis.md); a raw packet and a continuation take a cycle more.
  logic cls_hold;
  assign cls_hold = ClassLate && d1_now && (is_raw || is_cont || in_last);
  assign cl_cur = d1_q ? cl_q : ClassLate ? ClBad : cl_new;
  assign seq_cur = d1_q ? seq_q : ClassLate ? SeqIn : seq_new;
  // The query names a tunneled packet (a continuation asks nothing: it is a write).
  assign q_lid_o = src_lid;
  assign q_psn_o = bth_psn;

  // ------------------------------------------------------------ request checks (D2: byte 47 seen)
  typedef enum logic [2:0] {ErrNone, ErrMemId, ErrBounds, ErrMalformed, ErrKey} err_e;
  err_e err_q, err_d, err_new;
  logic d2_now, d2_q, d2_d;
  logic [63:0] new_addr;
  logic [$clog2(NumMemId)-1:0] mi;
  logic t_mrd, t_mwr, t_dmwr, t_cni, t_atomic, t_np, t_tagged, perm_ok, rx_xlate;
  logic [12:0] t_target_bytes;  // bytes touched at the target; also the byte count of its completion
  assign d2_now = !d2_q && in_valid && cl_cur == ClTun && (bs_q + 13'(Bpb) > (is_cont ? 13'd15 : 13'd47));
  assign mi = memid[$clog2(NumMemId)-1:0];
  // The active memory IDs' {base page, pages, key}; the flags stay flip-flops.
  logic [87:0] mem_tab_q [NumMemId];
  logic [51:0] mi_base;
  logic [19:0] mi_pages;
  logic [15:0] mi_key;
  always_ff @(posedge clk_i) begin
    if (mem_we_i) mem_tab_q[mem_widx_i] <= {mem_wbase_i, mem_wpages_i, mem_wkey_i};
  end
  assign {mi_base, mi_pages, mi_key} = mem_tab_q[mi];
  assign t_mrd = t_ft == ni_pkg::TLP_MRD64;
  assign t_mwr = t_ft == ni_pkg::TLP_MWR64;
  assign t_atomic = ni_pkg::is_atomic(t_ft);
  assign t_dmwr = ni_pkg::is_dmwr(t_ft);
  // A DMWr this NI confirms itself (ACK); any other DMWr is confirmed by memory.
  assign t_cni = t_dmwr && (teh_flags & ni_pkg::TEH_CONF_NI) != 8'h0;
  // Answered by a completion (tracker tag, UR on refusal, kept result for a duplicate).
  assign t_np = t_mrd || t_atomic || (t_dmwr && !t_cni);
  assign t_tagged = t_np || t_cni;  // forwarded with a tracker tag: memory answers the NI
  assign perm_ok = t_mrd ? mem_perm_r_i[mi] : (t_mwr || t_dmwr) ? mem_perm_w_i[mi] : mem_perm_a_i[mi];
  // CAS carries two operands but touches (and returns) one operand's worth.
  assign t_target_bytes = (t_ft == ni_pkg::TLP_CAS64) ? {1'b0, t_len_bytes[12:1]} : t_len_bytes;
  assign rx_xlate = teh_flags[0];
  // Both translations land only inside the region of the memory ID the packet names:
  // receiver translation carries the offset into it, sender translation a physical
  // address that must fall inside it (this node's memory is reachable from the
  // fabric only where it was exported).
  logic [51:0] page_off;  // below the region: wraps past its size
  // The tunneled TLP fills the packet exactly: its header (3 DW for a completion,
  // 4 DW for a request) and, if its Fmt says data, Length DWs of it; and it has no
  // digest (TD clear: the sending NI takes a digest off). Anything else would reach the
  // host as a TLP the root complex cannot decode.
  logic t_cpl, t_malformed;
  logic [12:0] t_bytes_want;
  assign t_cpl = t_ft == ni_pkg::TLP_CPL || t_ft == ni_pkg::TLP_CPLD;
  assign t_bytes_want = (t_cpl ? 13'd12 : 13'd16) + (t_ft[6] ? t_len_bytes : 13'd0);
  assign t_malformed = !is_cont && (t_pos - 13'd32 != t_bytes_want || view[34*8 + 7]);
  assign page_off = rx_xlate ? t_addr[63:12] : t_addr[63:12] - mi_base;
  // The protection key a request carries (TEH bytes 24-25; a continuation carries none),
  // checked against a keyed memory ID or reception FIFO before anything is written.
  logic [15:0] teh_key;
  assign teh_key = is_cont ? 16'h0 : {view[24*8 +: 8], view[25*8 +: 8]};
  // A DMA packet that names a reception counter (TEH byte 21): one this NI has.
  logic rcnt_named, rcnt_bad;
  assign rcnt_named = !is_cont && (teh_flags & (ni_pkg::TEH_DMA | ni_pkg::TEH_RCNT)) == (ni_pkg::TEH_DMA | ni_pkg::TEH_RCNT);
  assign rcnt_bad = rcnt_named && view[21*8 +: 8] >= 8'(NumCnt);
  always_comb begin
    err_new = ErrNone;
    new_addr = is_rget ? ri_slot_addr : is_rfifo ? rf_slot_addr : rx_xlate ? {mi_base + t_addr[63:12], t_addr[11:0]} : t_addr;
    if (is_cont && seq_new != SeqIn) begin
      err_new = ErrNone;  // a duplicate is answered as before; its source has moved on
    end else if (is_cont && !ctx_valid_q[peer]) begin
      err_new = ErrMemId;  // nothing to continue: the write before it was refused or never came
    end else if (is_req) begin
      if (!(t_mrd || t_mwr || t_dmwr || t_atomic) || (dlid != node_id_i && !t_mwr)) begin
        err_new = ErrMemId;  // a group takes posted writes only
      end else if (t_malformed) begin
        err_new = ErrMalformed;
      end else if (rcnt_bad) begin
        err_new = ErrMemId;  // a counter this NI does not have
      end else if (is_rget) begin
        // One descriptor slot, by a unicast write, into a remote-fed FIFO that is running.
        if (!t_mwr || !sequenced || !ri_ok || t_len_bytes != 13'(SlotBytes)) err_new = ErrMemId;
      end else if (is_rfifo) begin
        if (!t_mwr || !sequenced || !rf_ok) err_new = ErrMemId;  // a FIFO takes unicast writes
        else if (rf_key_i[rf] != 16'h0 && teh_key != rf_key_i[rf]) err_new = ErrKey;
      end else if (memid >= 16'(NumMemId) || !mem_valid_i[mi] || !perm_ok) begin
        err_new = ErrMemId;
      end else if (mi_key != 16'h0 && teh_key != mi_key) begin
        err_new = ErrKey;
      end else if (page_off >= {32'h0, mi_pages} ||
                   ({1'b0, t_addr[11:0]} + t_target_bytes) > 13'd4096) begin
        err_new = ErrBounds;
      end
    end
  end

  // ------------------------------------------------------------ the packet's verdict
  // Valid with the last beat (taken on the write side, above).
  logic good;   // the whole packet checks out: as long as PktLen says, both CRCs right
  logic stomp;  // stomped by its sender (ICRC sent inverted, VCRC right): refused, never resent
  assign {good, stomp} = vq_rdata[cur_vc];

  // ------------------------------------------------------------ output stage
  logic o_valid_q, o_hold_q, o_last_q, o_user_q, o_cni_q;
  logic [DataW-1:0] o_data_q;
  logic [KeepW-1:0] o_keep_q;
  // What the output register (or its bypass) offers, into the host queue (u_host_q).
  logic [DataW-1:0] ho_data;
  logic [KeepW-1:0] ho_keep;
  logic ho_last, ho_user, ho_cni, ho_valid, ho_ready;
  logic out_beat, out_free, need_tag, tag_ok, need_gen, gen_ok;
  logic [TagW-1:0] tag_q, tag_d;
  // Carry: Off != 0, the upper lanes of the last input beat (in the lower lanes); a
  // continuation, the whole last input beat. A carry that still has to go out after
  // the packet's final input beat is sent on its own (flush).
  logic [DataW-1:0] cy_data_q, cy_data_new;
  logic [KeepW-1:0] cy_keep_q, cy_keep_new;
  logic [OffW-1:0] cy_part;  // Off != 0: TLP lanes the carry takes from this beat
  logic cy_valid_q, flush_q, flush_user_q, flush_go, flush_new;
  logic cy_cni_q;  // the carried TLP is a write this NI confirmed (m_axis_tcni of its flush beat)
  err_e err_cur, err_ans;
  assign err_cur = d2_q ? err_q : err_new;
  // The request checks that what a packet does with its last beat (the answer, the
  // tracker's commit, the events) depends on. Only a packet that arrived framed acts
  // on them, and at 64 bits such a packet's checks were done in a beat before its last
  // (byte 47, or 15 for a continuation, lies in an earlier beat than the end of its
  // trailer): they are read registered, keeping the checks off the paths into the pop
  // and into the tracker. A packet never checked (raw) has none.
  assign err_ans = (Bpb == 8) ? (d2_q ? err_q : ErrNone) : err_cur;
  `NI_ASSERT(ClassLateUnused_A, !(ClassLate && in_valid && !d1_q && tun && cl_base == ClTun && tun_drop) ||
                                 cls_hold || (!out_beat && !need_tag && !d2_now && !(in_last && (good || stomp))))
  // A beat that classifies without the hold (ClassLate) needs no class: it emits nothing.
  `NI_ASSERT(ClassNotNeeded_A, !(ClassLate && d1_now && !cls_hold) || (!out_beat && !need_tag && !d2_now && !raw_gen))
  `NI_ASSERT(AnswerChecksDone_A, !(Bpb == 8 && in_valid && in_last && (good || stomp) && cl_cur == ClTun) || d2_q)
  `NI_ASSERT(AnswerChecksSame_A, !(in_valid && in_last && good && (cl_cur == ClTun || cl_cur == ClRaw)) ||
                                 err_ans == err_cur)
  // What SrcFromCap relies on: a framed packet that is not refused for its form
  // (ClBad) ends past its source's beat, and past its PSN's unless it is raw or a
  // continuation.
  `NI_ASSERT(SrcCaptured_A, !(SrcFromCap && in_valid && in_last && (good || stomp) && cl_cur != ClBad) ||
                            (bs_q >= 13'd8 && (is_raw || is_cont || bs_q >= 13'd24)))
  // A duplicate write or atomic is not delivered again (a duplicate read is served
  // again). The TLP type is in view from the first beat that could leave.
  logic dup_drop, deliver;
  assign dup_drop = cl_cur == ClTun && is_req && seq_cur == SeqDup && !t_mrd;
  assign deliver = (cl_cur == ClTun && !dup_drop) || cl_cur == ClRaw;
  // A raw packet: the 32 bytes made in front of it (MWr header to the FIFO's tail
  // slot, entry header) leave first, as RawGenBeats beats of their own before its
  // first beat is taken, or (Off != 0) as the carry its first beat goes out with.
  localparam int unsigned RawGenBeats = (Off == 0) ? 32 / Bpb : 0;
  localparam int unsigned RgW = $clog2(RawGenBeats + 1) > 0 ? $clog2(RawGenBeats + 1) : 1;
  logic raw_del, raw_gen, raw_gen_go;
  logic [RgW-1:0] rg_q, rg_d;
  localparam int unsigned MadeBits = (DataW > 256) ? DataW : 256;
  logic [MadeBits-1:0] raw_made;
  assign raw_del = cl_cur == ClRaw;
  assign raw_gen = (Off == 0) && raw_del && in_valid && bs_q == '0 && 32'(rg_q) != RawGenBeats;
  always_comb begin
    raw_made = '0;
    raw_made[0 +: 128] = ni_pkg::mem_req_header(ni_pkg::TLP_MWR64, 10'((t_pos + 13'd16) >> 2), NiReqId, 8'h00,
                                                rf_slot_addr);
    // Entry header (little-endian): source LID, bytes of the raw packet that follow;
    // message length 0 marks a raw entry (a send's is never 0).
    raw_made[16 * 8 +: 128] = ni_pkg::entry_header(slid, 16'(t_pos), 32'h0, 32'h0, 32'h0);
  end
  assign out_beat = raw_del ? ((Off == 0) ? (!raw_gen && bs_q < t_pos) : (bs_q == '0 || cy_valid_q))
                   : is_cont ? (deliver && bs_q >= 13'(Bpb) && bs_q - 13'(Bpb) < t_pos)
                   : (Off == 0) ? (deliver && bs_q >= 13'd32 && bs_q < t_pos)
                                : (deliver && cy_valid_q);
  assign out_free = !o_valid_q || (ho_ready && !o_hold_q);
  assign need_tag = deliver && is_req && t_tagged && (bs_q <= 13'd38) && (bs_q + 13'(Bpb) > 13'd38);
  assign tag_ok = !need_tag || trk_free_avail_i;

  // Answer to generate with the last beat: ACK/NAK (same format, gen_syn) or a UR
  // completion. Only sequenced requests are answered: multicast writes get no answer.
  logic gen_ack, gen_ur, gen_replay, nak_once;
  logic [7:0] gen_syn, err_syn;
  // A refusal: the TLP was malformed (invalid request), or memory ID, permission or bounds.
  assign err_syn = err_ans == ErrMalformed ? ni_pkg::AETH_NAK_INV_REQ : ni_pkg::AETH_NAK_REM_ACCESS;
  logic [23:0] gen_psn;
  logic in_seq;  // this request takes the next place in its source's sequence
  assign in_seq = sequenced && cl_cur == ClTun && seq_cur == SeqIn;
  assign nak_once = sequenced && cl_cur == ClDrop && seq_cur == SeqAhead && !naked_q[peer];
  // Dropped in its place in the sequence: only a send whose reception FIFO was full.
  logic rnr;
  assign rnr = is_req && sequenced && cl_cur == ClDrop && seq_cur == SeqIn;
  // At 64 bits a packet that ends in its first beat (damaged: framed, it would be
  // ClBad) is not answered: its source's node is not yet captured (SrcFromCap). Its
  // sender's timer resends it.
  logic src_known;
  assign src_known = !SrcFromCap || bs_q != '0;
  always_comb begin
    gen_ack = 1'b0;
    gen_ur = 1'b0;
    gen_replay = 1'b0;
    gen_syn = ni_pkg::AETH_ACK;
    gen_psn = psn;
    if (sequenced && peer_ok && src_known && (cl_cur == ClTun || cl_cur == ClDrop)) begin
      if (!good && !stomp) begin
        gen_ack = 1'b1;  // damaged: ask for what comes next in this source's sequence
        gen_syn = ni_pkg::AETH_NAK_PSN_SEQ;
        gen_psn = exp_cur;
      end else if (stomp) begin
        if (in_seq) begin
          gen_ur = t_np;
          gen_ack = !t_np;
          gen_syn = ni_pkg::AETH_NAK_INV_REQ;
        end
      end else if (rnr) begin
        gen_ack = 1'b1;
        gen_syn = ni_pkg::AETH_RNR;
      end else if (nak_once) begin
        gen_ack = 1'b1;
        gen_syn = ni_pkg::AETH_NAK_PSN_SEQ;
        gen_psn = exp_cur;
      end else if (dup_drop) begin
        gen_ack = t_mwr || t_cni;  // the write arrived before: say so again
        // With its own PSN (gen_psn's default), not the last one taken: an ACK of a
        // receiving-NI confirmed write's PSN confirms that write at the sender, and the
        // last one taken may be such a write that was refused (its NAK lost).
        if (err_ans != ErrNone) gen_syn = err_syn;  // refused: say that again (a confirmation must not follow)
        // An atomic or memory-confirmed write: its first answer, if still kept.
        gen_replay = (t_atomic || (t_dmwr && !t_cni)) && amo_hit_i;
      end else if (deliver && err_ans != ErrNone) begin
        gen_ur = t_np;
        gen_ack = !t_np;
        gen_syn = err_syn;
      end else if (in_seq) begin
        gen_ack = t_mwr || t_cni;  // for t_cni this ACK is the write's confirmation
      end
    end
  end
  assign need_gen = in_last && (gen_ack || gen_ur || gen_replay);
  `NI_ASSERT(AnsweredSequenced_A, !need_gen || sequenced)
  assign amo_replay_o = gen_valid_o && gen_ready_i && gen_replay;
  // Only a sequenced request is answered: its last beat waits for room for an answer
  // whether or not it needs one (a read taken needs none). That keeps the answer's
  // decision off the pop; responses and ACKs, which are never answered, still drain.
  assign gen_ok = !(in_last && sequenced) || gen_ready_i;
  // A flush goes out in the same cycle as the next packet's first input beat (which
  // never emits: its lower lanes are header), so packets still arrive one beat a cycle.
  assign flush_go = flush_q && out_free;
  assign raw_gen_go = raw_gen && out_free && !flush_q;
  // (A raw packet's first beat emits at 512 bits: it waits for a flush to go first.)
  assign pop = in_valid && !cls_hold && !raw_gen && tag_ok && gen_ok && (!out_beat || out_free) &&
               (!flush_q || (flush_go && !out_beat));
  assign gen_valid_o = in_valid && !cls_hold && !raw_gen && need_gen && tag_ok && (!out_beat || out_free) &&
                       (!flush_q || (flush_go && !out_beat));

  // Descriptors of what the receiver answers with (the framer builds the bytes).
  always_comb begin
    gen_hdr_o = '0;
    gen_hdr_o.vc = 1'b1;
    gen_hdr_o.dlid = slid;
    gen_hdr_o.psn = psn;  // a response carries its request's PSN
    if (gen_ack) begin
      gen_hdr_o.kind = ni_pkg::TX_ACK;
      gen_hdr_o.pkt_words = 11'((ni_pkg::NakHdrBytes + 4) / 4);
      gen_hdr_o.psn = gen_psn;
      gen_hdr_o.flags = gen_syn;
    end else if (gen_replay) begin
      // The completion TLP follows as beats from ni_amo_cache.
      gen_hdr_o.kind = ni_pkg::TX_RSP;
      gen_hdr_o.pkt_words = 11'((ni_pkg::FabHdrBytes + 32'(amo_len_i) + 4) / 4);
    end else begin
      gen_hdr_o.kind = ni_pkg::TX_UR;
      gen_hdr_o.pkt_words = 11'((ni_pkg::FabHdrBytes + 12 + 4) / 4);
      gen_hdr_o.key = {2'b00, t_tag[9:8], 12'(t_target_bytes)};  // 4096 bytes: Byte Count 0
      gen_hdr_o.memid = t_reqid;
      gen_hdr_o.aux8 = t_tag[7:0];
      gen_hdr_o.flags = {1'b0, t_addr[6:0]};
    end
  end

  logic [63:0] conf_orig;
  assign conf_orig = view[44*8 +: 64] + {q_back_i, 12'h0};

  // Outgoing beat: TLP lanes only, with the receiver-side rewrites.
  logic [DataW-1:0] ob_data;
  logic [KeepW-1:0] ob_keep;
  logic ob_last, nullify;
  logic [TagW-1:0] use_tag;
  assign use_tag = need_tag ? trk_free_tag_i : tag_q;
  always_comb begin
    ob_data = in_data;
    ob_keep = '0;
    for (int j = 0; j < Bpb; j++) begin
      // A prefix even when the input's keep is not one (that packet is nullified).
      ob_keep[j] = 32'(bs_q) + j < 32'(t_pos) && (!in_last || 32'(j) < 32'(kcnt));
    end
    if (is_req && !is_cont && t_tagged) begin
      // Toward memory with the NI's requester ID and 8-bit tracker tag: T9 and T8 clear.
      for (int j = 0; j < Bpb; j++) begin
        if (32'(bs_q) + j == 33) ob_data[j*8 +: 8] = in_data[j*8 +: 8] & 8'h77;
        if (32'(bs_q) + j == 36) ob_data[j*8 +: 8] = NiReqId[15:8];
        if (32'(bs_q) + j == 37) ob_data[j*8 +: 8] = NiReqId[7:0];
        if (32'(bs_q) + j == 38) ob_data[j*8 +: 8] = 8'(use_tag);
      end
    end
    if (is_req && !is_cont) begin
      for (int j = 0; j < Bpb; j++) begin
        for (int k = 0; k < 8; k++) begin
          if (32'(bs_q) + j == 40 + k) ob_data[j*8 +: 8] = new_addr[(7 - k)*8 +: 8];
        end
      end
    end
    // A memory-confirmed write's confirmation: the address it names, as tunneled, goes
    // back to the requester's address space (least significant byte first).
    if (!is_req && !is_raw && q_conf_i) begin
      for (int j = 0; j < Bpb; j++) begin
        for (int k = 0; k < 8; k++) begin
          if (32'(bs_q) + j == 44 + k) ob_data[j*8 +: 8] = conf_orig[k*8 +: 8];
        end
      end
    end
    // A packet shorter than its length field ends its TLP with its last beat (nullified).
    ob_last = bs_q + 13'(Bpb) >= t_pos || in_last;
  end
  // A response whose request failed while it was arriving is nullified: the requester
  // already got its error completion. So is one that is not a completion of the
  // awaited request (type, requester ID, tag; known from byte 42): the request keeps
  // waiting for its answer, or its timer.
  logic rsp_gone, rsp_foreign;
  assign rsp_foreign = !t_cpl || t_malformed ||
                       {t_addr[63:48], view[33*8 + 7], view[33*8 + 3], t_addr[47:40]} != q_cpl_i;
  assign rsp_gone = !is_req && !is_raw && (!q_held_i || rsp_foreign);
  assign nullify = !good || err_cur != ErrNone || rsp_gone;

  // A continuation's TLP header (MWr, 4 DW), made in place of its LRH and CTH.
  logic [16*8-1:0] cont_tlp;
  assign cont_tlp = ni_pkg::mem_req_header(ni_pkg::TLP_MWR64, t_len_dw, t_reqid, 8'h00, new_addr);
  // This beat with the header made (stored for the carry), and the carried beat
  // with it (it may have been stored before the opcode was known).
  logic [DataW-1:0] ob_cont, cy_cont;
  always_comb begin
    ob_cont = ob_data;
    cy_cont = cy_data_q;
    for (int j = 0; j < Bpb; j++) begin
      if (32'(bs_q) + j < ni_pkg::ContHdrBytes) ob_cont[j*8 +: 8] = cont_tlp[(32'(bs_q) + j)*8 +: 8];
      if (32'(bs_q) + j >= Bpb && 32'(bs_q) + j - Bpb < ni_pkg::ContHdrBytes)
        cy_cont[j*8 +: 8] = cont_tlp[(32'(bs_q) + j - Bpb)*8 +: 8];
    end
  end

  // The beat that leaves with this pop: the input beat itself (Off == 0), the
  // carried upper lanes of the previous input beat below the lower lanes of this
  // one (Off != 0), or the previous input beat (a continuation).
  logic [DataW-1:0] e_data, cy_use;
  logic [KeepW-1:0] e_keep, cy_keep_use;
  logic e_last;
  // The carry a raw packet's first beat goes out with is the 32 bytes made for it.
  always_comb begin
    cy_use = cy_data_q;
    cy_keep_use = cy_keep_q;
    if (raw_del && bs_q == '0) begin
      for (int j = 0; j < Bpb; j++) begin
        if (j < 32) cy_use[j*8 +: 8] = raw_made[(j % 32)*8 +: 8];
        cy_keep_use[j] = j < 32;
      end
    end
  end
  always_comb begin
    e_data = ob_data;
    e_keep = ob_keep;
    e_last = ob_last;
    cy_part = '0;
    cy_data_new = ob_data;
    cy_keep_new = ob_keep;
    flush_new = 1'b0;
    if (is_cont) begin
      e_data = cy_cont;
      e_keep = cy_keep_q;
      e_last = bs_q >= t_pos;
      cy_data_new = ob_cont;
      flush_new = deliver && bs_q < t_pos;
    end else if (Off != 0) begin
      for (int j = 0; j < Bpb; j++) begin
        e_data[j*8 +: 8] = (j < OffW) ? cy_use[j*8 +: 8] : ob_data[((j + Bpb - Off) % Bpb)*8 +: 8];
        e_keep[j] = (j < OffW) ? cy_keep_use[j] : ob_keep[(j + Bpb - Off) % Bpb];
      end
      for (int i = 0; i < Bpb; i++) begin
        cy_data_new[i*8 +: 8] = ob_data[((Off + i) % Bpb)*8 +: 8];
        cy_keep_new[i] = i < OffW && deliver && ob_keep[(Off + i) % Bpb];
      end
      for (int i = 0; i < OffW; i++) cy_part[i] = cy_keep_new[i];
      e_last = bs_q + 13'(Off) >= t_pos || (in_last && cy_part == '0);
      flush_new = |cy_part;
    end
  end

  // Bypass: the beat this pop emits goes straight out while the register is empty
  // (not a last beat that must wait for the CRC verdict). Written without
  // ho_ready (out_free is 1 here), so valid never waits for ready.
  logic byp, byp_take;
  assign byp = OutBypass && !o_valid_q && !flush_q && in_valid && tag_ok && gen_ok && out_beat &&
               !(e_last && !in_last);
  assign byp_take = byp && ho_ready;
  assign ho_data = byp ? e_data : o_data_q;
  assign ho_keep = byp ? e_keep : o_keep_q;
  assign ho_last = byp ? e_last : o_last_q;
  assign ho_user = byp ? (e_last && nullify) : o_user_q;
  assign ho_cni = byp ? (is_req && t_cni) : o_cni_q;
  assign ho_valid = byp || (o_valid_q && !o_hold_q);

  // ------------------------------------------------------------ state update
  logic fin;
  assign fin = pop && in_last;
  // What this packet, arriving whole now, does when its TLP has left for the host: it
  // decrements a reception counter ({counter, data bytes}; a send's data is its payload
  // less the entry header) and/or pushes a remote get's descriptor to its FIFO. The
  // info travels with the TLP's last beat: {push, FIFO, decrement, counter, bytes}.
  logic taken, rc_take, rc_dec, ri_take;
  // The request arrived whole and good in its place in the sequence and was not refused.
  assign taken = fin && in_seq && good && err_ans == ErrNone;
  logic [RiW+CntW+14:0] rc_info, o_rc_info_q, flush_rc_info_q, ho_rc_info;
  logic o_rc_q, flush_rc_q, ho_rc;
  assign rc_dec = taken && rcnt_named;
  assign ri_take = taken && is_rget;
  assign rc_take = rc_dec || ri_take;
  assign rc_info = {ri_take, ri, rc_dec, view[21*8 +: CntW], t_len_bytes - (is_rfifo ? 13'd16 : 13'd0)};
  always_comb begin
    busy_d = busy_q;
    vc_d = vc_q;
    bs_d = bs_q;
    cap_d = cap_q;
    d1_d = d1_q;
    cl_d = cl_q;
    d2_d = d2_q;
    err_d = err_q;
    tag_d = tag_q;
    seq_d = seq_q;
    exp_vld_d = exp_vld_q;
    exp_we = 1'b0;
    naked_d = naked_q;
    rg_d = rg_q;
    // The hold (ClassLate): the class and the turn are kept; the beat is taken next cycle.
    // A raw packet's made beats leave before its first beat: its class and VC hold from
    // the first (a response arriving meanwhile must not take the turn).
    if (cls_hold || raw_gen_go || pop) begin
      busy_d = 1'b1;
      vc_d = cur_vc;
    end
    // The class is kept from the beat that classifies the packet: held, making a raw
    // packet's beats (its first beat, so d1_now) or taken.
    if (d1_now && (cls_hold || raw_gen_go || pop)) begin
      d1_d = 1'b1;
      cl_d = cl_new;
      seq_d = seq_new;
    end
    if (raw_gen_go) rg_d = rg_q + RgW'(1);
    if (pop) begin
      bs_d = bs_q + 13'(Bpb);
      cap_d = view;
      if (d2_now) begin
        d2_d = 1'b1;
        err_d = err_new;
      end
      if (need_tag) tag_d = trk_free_tag_i;
      if (in_last && in_seq && (good || stomp)) begin
        exp_we = 1'b1;
        exp_vld_d[peer] = 1'b1;
        naked_d[peer] = 1'b0;
      end
      // After an RNR NAK the source resends from that PSN by itself: what follows is
      // dropped without a NAK that would start it at once.
      if (in_last && (nak_once || rnr) && good) naked_d[peer] = 1'b1;
      if (in_last) begin
        busy_d = 1'b0;
        bs_d = '0;
        rg_d = '0;
        d1_d = 1'b0;
        d2_d = 1'b0;
      end
    end
  end

  // A remote-fed FIFO's tail here moves past a descriptor that arrived whole and was
  // taken; the engine's moves when it has left for the host (ri_push_o).
  always_comb begin
    ri_tail_d = ri_tail_q;
    for (int f = 0; f < NumInj; f++) begin
      if (ri_take && ri == RiW'(f)) ri_tail_d[f] = ri_next;
      // The engine's reset rule: slot 0 if its tail lies outside the ring.
      if (ri_reset_i[f]) ri_tail_d[f] = (ri_tail_i[f] < ri_size_i[f]) ? ri_tail_i[f] : 16'd0;
    end
  end

  // A reception FIFO's tail moves past an entry that arrived whole and was taken. A
  // reset empties it at the head, or at slot 0 if software's head lies outside the ring
  // (the next entry would land outside the FIFO's memory; found by make formal).
  always_comb begin
    rf_tail_d = rf_tail_q;
    if ((taken && is_rfifo) || (fin && good && cl_cur == ClRaw)) rf_tail_d[rf] = rf_next;
    for (int f = 0; f < NumRfifo; f++) begin
      if (rf_reset_i[f]) rf_tail_d[f] = (rf_head_i[f] < rf_size_i[f]) ? rf_head_i[f] : 16'd0;
    end
  end

  // What a continuation from this source would continue: set by each request that
  // takes its place in the sequence, valid only after a write that was accepted.
  // The end address is summed as the write lands, a cycle later: off the path from the
  // beat through the header to the context RAM.
  logic ctx_we;
  // A DMA engine's packet leaves it as it is: the host's write runs go on around them.
  assign ctx_we = fin && in_seq && (good || stomp) && !(!is_cont && (teh_flags & ni_pkg::TEH_DMA) != 8'h0);
  always_comb begin
    ctx_valid_d = ctx_valid_q;
    if (ctx_we) ctx_valid_d[peer] = good && err_ans == ErrNone && t_mwr;
  end

  // Tracker commit and events, once per packet.
  assign trk_commit_o = fin && deliver && is_req && t_tagged && good && err_ans == ErrNone;
  assign trk_commit_psn_o = psn;
  assign trk_commit_kind_o = t_atomic ? ni_pkg::TRK_ATOMIC : t_cni ? ni_pkg::TRK_CONF_NI :
                             t_dmwr ? ni_pkg::TRK_CONF_MEM : ni_pkg::TRK_READ;
  assign trk_commit_page_o = rx_xlate ? mi_base : 52'h0;
  assign trk_commit_tag_o = use_tag;  // the tag beat may be the last beat
  assign trk_commit_node_o = slid;
  assign trk_commit_reqid_o = t_reqid;
  assign trk_commit_otag_o = t_tag;
  assign ev_rx_pkt_o = fin;
  assign ev_crc_err_o = fin && !good;
  assign ev_memid_err_o = fin && good && deliver && err_ans == ErrMemId;
  assign ev_bounds_err_o = fin && good && deliver && err_ans == ErrBounds;
  assign ev_key_err_o = fin && good && deliver && err_ans == ErrKey;
  assign ev_nak_tx_o = fin && gen_ack && gen_syn != ni_pkg::AETH_ACK;
  assign ev_dup_o = fin && good && (dup_drop || (cl_cur == ClDrop && !is_req && !is_raw) ||
                                     (cl_cur == ClTun && rsp_gone));
  assign ev_raw_rx_o = fin && good && cl_cur == ClRaw;
  assign ev_raw_drop_o = fin && good && is_raw && cl_cur == ClDrop;
  assign ev_oos_o = fin && good && cl_cur == ClDrop && is_req && seq_cur == SeqAhead;
  assign ev_rnr_tx_o = fin && good && rnr;
  // The reception counter drops when the packet's TLP has left whole for the host
  // (its last beat taken; the host port takes it in the same cycle): a counter read
  // that follows finds the data in memory (PCIe ordering: the read's completion comes
  // after the write on the host port). The counter travels with the TLP's last beat.
  logic leave, lv_push, lv_dec, lv_rc;
  logic [RiW-1:0] lv_fifo;
  assign ho_rc = byp ? rc_take : o_rc_q;
  assign ho_rc_info = byp ? rc_info : o_rc_info_q;
  // The host port: a queue of two beats without fall-through. What the output
  // register offers goes into it while it has room (a registered ready), so the host
  // side's ready (through ni_mem_keep and ni_host_tx) never reaches the pop. A beat's
  // counter and push go with it and act as it leaves the queue for the host.
  ni_fifo #(.Width(DataW + KeepW + 4 + RiW + CntW + 15), .Depth(2)) u_host_q (
    .clk_i, .rst_ni,
    .wdata_i({ho_data, ho_keep, ho_last, ho_user, ho_cni, ho_rc, ho_rc_info}),
    .wvalid_i(ho_valid), .wready_o(ho_ready),
    .rdata_o({m_axis_tdata, m_axis_tkeep, m_axis_tlast, m_axis_tuser, m_axis_tcni, lv_rc,
              lv_push, lv_fifo, lv_dec, rcnt_id_o, rcnt_bytes_o}),
    .rvalid_o(m_axis_tvalid), .rready_i(m_axis_tready)
  );
  assign leave = m_axis_tvalid && m_axis_tready && m_axis_tlast && lv_rc;
  assign rcnt_valid_o = leave && lv_dec;
  for (genvar f = 0; f < NumInj; f++) begin : gen_push
    assign ri_push_o[f] = leave && lv_push && lv_fifo == RiW'(f);
  end
  assign ev_rget_rx_o = ri_take;
  assign ev_rnr_rx_o = fin && good && cl_cur == ClAck && aeth[7:5] == 3'b001;

  // Answers for ni_retx: ACK or NAK, or an awaited response that arrived whole.
  always_comb begin
    rel_valid_o = 1'b0;
    rel_kind_o = ni_pkg::REL_ACK;
    if (fin && good && cl_cur == ClAck) begin
      rel_valid_o = aeth == ni_pkg::AETH_ACK || aeth == ni_pkg::AETH_NAK_PSN_SEQ ||
                    aeth == ni_pkg::AETH_NAK_INV_REQ || aeth == ni_pkg::AETH_NAK_REM_ACCESS;
      if (aeth == ni_pkg::AETH_NAK_PSN_SEQ) rel_kind_o = ni_pkg::REL_NAK_SEQ;
      if (aeth == ni_pkg::AETH_NAK_INV_REQ || aeth == ni_pkg::AETH_NAK_REM_ACCESS) rel_kind_o = ni_pkg::REL_REFUSED;
      if (aeth[7:5] == 3'b001) begin  // RNR, whatever its timer field
        rel_valid_o = 1'b1;
        rel_kind_o = ni_pkg::REL_RNR;
      end
    end
    if (fin && good && cl_cur == ClTun && !is_req && !rsp_gone) begin
      rel_valid_o = 1'b1;
      rel_kind_o = ni_pkg::REL_RSP;
    end
  end
  assign rel_lid_o = slid;
  assign rel_psn_o = psn;
  assign ev_nak_rx_o = fin && good && cl_cur == ClAck && aeth[7:5] == 3'b011;
  assign ev_bad_pkt_o = fin && good && (cl_cur == ClBad || (deliver && is_req && err_ans == ErrMalformed));
  assign ev_pkey_err_o = fin && good && cl_cur == ClBad && lnh == ni_pkg::LnhIbaLocal && for_us && !pkey_ok;
  // A tunneled TLP with data and EP set (TLP byte 2 bit 6, packet byte 34), passed on.
  assign ev_poison_o = fin && good && deliver && !is_raw && !is_cont && view[32*8 + 6] && view[34*8 + 6] &&
                       err_ans == ErrNone;
  assign ev_rd_served_o = trk_commit_o && (t_mrd || t_atomic);

  always_comb begin
    for (int v = 0; v < ni_pkg::NumVc; v++) begin
      cred_pend_d[v] = cred_pend_q[v];
      credit_o[v] = cred_pend_q[v] != 4'd0;
      if (credit_o[v]) cred_pend_d[v] = cred_pend_d[v] - 4'd1;
      if (fin && cur_vc == 1'(v)) cred_pend_d[v] = cred_pend_d[v] + 4'd1;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      busy_q <= 1'b0;
      vc_q <= 1'b0;
      bs_q <= '0;
      d1_q <= 1'b0;
      d2_q <= 1'b0;
      cl_q <= ClBad;
      rg_q <= '0;
      seq_q <= SeqIn;
      exp_vld_q <= '0;
      naked_q <= '0;
      rf_tail_q <= '0;
      ri_tail_q <= '0;
      ctx_valid_q <= '0;
      ctx_wr_q <= 1'b0;
      err_q <= ErrNone;
      o_valid_q <= 1'b0;
      o_hold_q <= 1'b0;
      o_user_q <= 1'b0;
      o_last_q <= 1'b0;
      for (int v = 0; v < ni_pkg::NumVc; v++) cred_pend_q[v] <= 4'(RxCredits);
      cy_valid_q <= 1'b0;
      flush_q <= 1'b0;
      flush_user_q <= 1'b0;
      o_rc_q <= 1'b0;
      flush_rc_q <= 1'b0;
    end else begin
      if (pop) begin
        cy_valid_q <= |cy_part && !in_last;
        flush_q <= flush_new && in_last;
        flush_user_q <= nullify;
        flush_rc_q <= rc_take;
      end else if (flush_go) begin
        flush_q <= 1'b0;
      end
      busy_q <= busy_d;
      vc_q <= vc_d;
      bs_q <= bs_d;
      d1_q <= d1_d;
      d2_q <= d2_d;
      cl_q <= cl_d;
      rg_q <= rg_d;
      seq_q <= seq_d;
      exp_vld_q <= exp_vld_d;
      naked_q <= naked_d;
      rf_tail_q <= rf_tail_d;
      ri_tail_q <= ri_tail_d;
      ctx_valid_q <= ctx_valid_d;
      ctx_wr_q <= ctx_we;
      err_q <= err_d;
      cred_pend_q <= cred_pend_d;
      // Output register: load a TLP beat, release a held last beat, or drain.
      if (pop && out_beat) begin
        o_valid_q <= !byp_take;  // a bypassed beat taken at once is not kept
        o_last_q <= e_last;
        o_hold_q <= e_last && !in_last;
        o_user_q <= e_last && in_last && nullify;
        o_rc_q <= e_last && rc_take;
      end else if (flush_go) begin
        o_valid_q <= 1'b1;
        o_last_q <= 1'b1;
        o_hold_q <= 1'b0;
        o_user_q <= flush_user_q;
        o_rc_q <= flush_rc_q;
      end else if (raw_gen_go) begin
        o_valid_q <= 1'b1;
        o_last_q <= 1'b0;
        o_hold_q <= 1'b0;
        o_user_q <= 1'b0;
        o_rc_q <= 1'b0;
      end else begin
        if (pop && in_last && o_hold_q) begin
          o_hold_q <= 1'b0;
          o_user_q <= nullify;
          o_rc_q <= rc_take;
        end
        if (ho_valid && ho_ready) o_valid_q <= 1'b0;
      end
    end
  end

  always_ff @(posedge clk_i) begin
    if (ctx_we) begin
      ctx_wr_peer_q <= peer;
      ctx_wr_id_q <= {t_reqid, rx_xlate, mi};
      ctx_wr_addr_q <= t_addr[63:2];
      ctx_wr_dw_q <= t_len_bytes[12:2];
    end
    if (ctx_wr_q) ctx_mem_q[ctx_wr_peer_q] <= ctx_wr;
    if (exp_we) exp_mem_q[peer] <= psn + 24'd1;
    cap_q <= cap_d;
    tag_q <= tag_d;
    if (pop && out_beat) begin
      o_data_q <= e_data;
      o_keep_q <= e_keep;
      o_cni_q <= is_req && t_cni;
    end else if (flush_go) begin
      o_data_q <= cy_data_q;
      o_keep_q <= cy_keep_q;
      o_cni_q <= cy_cni_q;
    end else if (raw_gen_go) begin
      o_data_q <= raw_made[32'(rg_q) * DataW % MadeBits +: DataW];
      o_keep_q <= '1;
      o_cni_q <= 1'b0;
    end
    if (pop && out_beat) o_rc_info_q <= rc_info;
    if (pop && in_last && o_hold_q && !out_beat) o_rc_info_q <= rc_info;
    if (flush_go && !(pop && out_beat)) o_rc_info_q <= flush_rc_info_q;
    if (pop) flush_rc_info_q <= rc_info;
    if (pop) begin
      cy_cni_q <= is_req && t_cni;
      cy_data_q <= cy_data_new;
      cy_keep_q <= cy_keep_new;
    end
  end

  `NI_ASSUME(CreditRespected_A, !s_axis_tvalid || f_wready[s_axis_tdest] || w_cut)
  // The header view's byte selects rely on it.
  `NI_ASSERT(BsWholeBeats_A, bs_q[$clog2(Bpb)-1:0] == '0)
  // The output register takes one beat at a time: a flush only beside a beat that does not emit.
  `NI_ASSERT(FlushAlone_A, !flush_go || !(pop && out_beat))
  `NI_ASSERT_AXIS_STABLE(HostOutStable_A, ho_valid, ho_ready, {ho_data, ho_keep, ho_last, ho_user, ho_cni})
endmodule

`default_nettype wire

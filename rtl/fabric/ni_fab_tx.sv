// SPDX-License-Identifier: Apache-2.0
// Fabric transmit: picks a source packet (round robin among sources whose VC has
// credit), builds its LRH/BTH/extension header from the source's descriptor
// (ni_pkg::tx_desc_t, ni_pkg::tx_header), sends it, then its payload beats, and the ICRC
// and VCRC right after the last payload byte. Output is packed: no null bytes.
// The CRCs are computed beside the beats, not on their way out (see "trailer").
// When the 32-byte header is not a whole number of beats (512 bits: half a beat),
// payload lanes are shifted up by the remainder and the bytes that do not fit are
// carried into the next beat. A continuation (kind TX_CONT) has no header beats:
// its 16 header bytes (LRH, CTH) replace the TLP header in the payload's own lanes.
// A raw packet (kind TX_RAW) is its beats, LRH included, followed by a VCRC alone
// (IBA raw packets carry no ICRC); a stomped one gets its VCRC inverted.
`default_nettype none
`include "ni_assert.svh"

module ni_fab_tx #(
  parameter int unsigned DataW = 64,
  parameter int unsigned NumSrc = 3,
  parameter int unsigned RestSrc = 0,  // the source the pick rests on while none offers a header
  parameter logic [15:0] CplId = 16'h0100,  // completer ID of a UR answer (the NI's requester ID)
  localparam int unsigned Bpb = DataW / 8,
  localparam int unsigned KeepW = Bpb,
  localparam int unsigned BeatW = DataW + KeepW + 2  // {bad, last, keep, data}
) (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic [15:0] node_id_i,
  input  logic [15:0] pkey_i,     // P_KEY: stamped into every BTH and CTH (not a raw packet)
  // Sources: a header descriptor, then (unless an ACK, NAK or UR answer) a beat stream
  // ending in last.
  input  logic [NumSrc*ni_pkg::TxDescW-1:0] src_hdr_i,  // tx_desc_t per source, source 0 lowest
  input  logic [NumSrc-1:0] src_hdr_valid_i,
  output logic [NumSrc-1:0] src_hdr_ready_o,
  input  logic [NumSrc-1:0][BeatW-1:0] src_beat_i,
  input  logic [NumSrc-1:0] src_beat_valid_i,
  output logic [NumSrc-1:0] src_beat_ready_o,
  // Fabric port out; tdest is the virtual channel.
  output logic [DataW-1:0] m_axis_tdata,
  output logic [KeepW-1:0] m_axis_tkeep,
  output logic m_axis_tlast,
  output logic m_axis_tdest,
  output logic m_axis_tvalid,
  input  logic m_axis_tready,
  // A pulse returns one packet credit for that VC.
  input  logic [ni_pkg::NumVc-1:0] credit_i,
  output logic [ni_pkg::NumVc-1:0][7:0] credits_o,  // credits held now (FAB_CREDITS)
  output logic ev_tx_pkt_o
);
  localparam int unsigned Off = ni_pkg::FabHdrBytes % Bpb;  // payload lane shift: 0, or 32 at 512 bits
  localparam int unsigned OffW = (Off > 0) ? Off : 1;
  localparam logic [Bpb-1:0] LowLanes = Bpb'((65'(1) << Off) - 65'(1));  // lanes below Off
  localparam logic signed [7:0] BpbR = 8'(Bpb);  // rel's scale: lanes, 8 bits signed
  localparam int unsigned NzW = $clog2(Bpb + 1);  // a count of lanes, 0 to Bpb
  // Packet bytes 0 and 12 are masked for the ICRC (ni_pkg::icrc_mask): byte 12 is lane
  // Lane12 of the beat that starts at byte Beat12.
  localparam int unsigned Lane12 = 12 % Bpb;
  localparam int unsigned Beat12 = 12 / Bpb * Bpb;
  localparam int unsigned BeatQDepth = 8;  // holds the beats framed while a trailer waits

  // How a packet travels: pick (its header into the pick queue) -> frame (from the
  // queue's head when the framer is idle: each beat's lanes, and where the trailer
  // starts in it, rel) -> output skid register, directly if nothing waits and the beat
  // cannot hold trailer lanes, else through the beat queue and its head register. A
  // beat with trailer lanes waits there until its packet's ICRC and VCRC are in the
  // trailer queue: the CRC pipeline beside the beats takes 4 cycles from a packet's
  // last data beat. Back to back, later packets are framed meanwhile, so the port stays
  // busy and only a packet after an idle port waits.

  // ------------------------------------------------------------ pick
  // The pick takes a source's header (round robin among sources whose VC has credit)
  // into the pick queue, stamping SLID, P_Key and PSN and taking its credit; the framer
  // starts the queue's head. So the wide multiplexer of the sources' headers ends in
  // the queue, and the framer starts from a register's word: a credit is held for at
  // most the two packets queued.
  // The source is chosen a cycle ahead (pick_q, one-hot), so the multiplexer of the
  // headers is selected by a register: the take then checks only that the picked
  // source still offers a header and that its VC has credit. The pick guesses where
  // the next header comes from, so that a stream of headers is taken without a gap: a
  // source just taken stays a candidate (last in the round robin) in case it offers
  // another header at once; with no candidate, a source that offers a header without
  // credit is picked (taken as its credit comes); with no header offered, the pick
  // rests on RestSrc (nic_top: ni_retx, whose requests the latency budget is about),
  // whose next header is then taken in the cycle it comes.
  logic [NumSrc-1:0] pick_q, pick_d, rr_oh_q, rr_oh_d;
  logic [ni_pkg::NumVc-1:0][7:0] credits_q, credits_d;
  logic [ni_pkg::NumVc-1:0] has_credit_q;  // credits_q != 0, registered with it
  logic [ni_pkg::NumVc-1:0][23:0] psn_q, psn_d, psn_inc;
  logic [ni_pkg::NumVc-1:0][7:0] cred_keep, cred_take;
  logic [ni_pkg::NumVc-1:0] take_vc, has_credit_d;
  ni_pkg::tx_desc_t hdr_new;
  logic take;        // the picked header enters the pick queue
  logic pq_wready;   // the pick queue has room (a register)
  logic [NumSrc-1:0] eligible;   // offers a header of a VC with credit
  logic [NumSrc-1:0] cand;       // candidates of the next pick
  logic [ni_pkg::NumVc-1:0][NumSrc-1:0] src_on_vc;  // source s offers a header of VC v
  // Each source's header as a struct of its own (Yosys reads no member of an indexed
  // array of structs).
  for (genvar s = 0; s < NumSrc; s++) begin : gen_src
    ni_pkg::tx_desc_t h;
    assign h = src_hdr_i[s * ni_pkg::TxDescW +: ni_pkg::TxDescW];
    for (genvar v = 0; v < ni_pkg::NumVc; v++) begin : gen_vc
      assign src_on_vc[v][s] = src_hdr_valid_i[s] && 32'(h.vc) == v;
    end
    assign eligible[s] = src_hdr_valid_i[s] && has_credit_q[h.vc];
    logic unused_h;  // only the VC is needed here
    assign unused_h = ^h;
  end
  // Round robin: the first eligible source at or after the one rr_oh marks, one-hot
  // (one fixed priority order per start, no modulo built).
  function automatic logic [NumSrc-1:0] rr_pick(logic [NumSrc-1:0] elig, logic [NumSrc-1:0] rr_oh);
    rr_pick = '0;
    for (int r = 0; r < NumSrc; r++) begin
      if (rr_oh[r]) begin
        for (int k = NumSrc - 1; k >= 0; k--) begin
          if (elig[(r + k) % NumSrc]) rr_pick = NumSrc'(1) << ((r + k) % NumSrc);
        end
      end
    end
  endfunction
  // The header through an AND-OR of the sources under the registered pick.
  always_comb begin
    hdr_new = '0;
    for (int k = 0; k < NumSrc; k++) begin
      hdr_new = hdr_new | (src_hdr_i[k * ni_pkg::TxDescW +: ni_pkg::TxDescW] & {ni_pkg::TxDescW{pick_q[k]}});
    end
  end
  assign take = |(pick_q & eligible) && pq_wready;
  assign credits_o = credits_q;

  always_comb begin
    src_hdr_ready_o = take ? pick_q : '0;
    ev_tx_pkt_o = take;
    // The source after a take's; the next pick (above).
    rr_oh_d = take ? {pick_q[NumSrc-2:0], pick_q[NumSrc-1]} : rr_oh_q;
    cand = eligible | (take ? pick_q : '0);
    if (cand != '0) pick_d = rr_pick(cand, rr_oh_d);
    else if (src_hdr_valid_i != '0) pick_d = rr_pick(src_hdr_valid_i, rr_oh_d);
    else pick_d = NumSrc'(1) << RestSrc;
    // Per VC, the next credits with and without a take of that VC, from registers and
    // credit_i only: the take chooses between them. The PSN is stamped as the framer
    // starts the packet (the pick queue keeps the order), off the pick's path.
    for (int v = 0; v < ni_pkg::NumVc; v++) begin
      cred_keep[v] = credits_q[v] + 8'(credit_i[v]);
      cred_take[v] = cred_keep[v] - 8'd1;
      take_vc[v] = take && |(pick_q & src_on_vc[v]);
      credits_d[v] = take_vc[v] ? cred_take[v] : cred_keep[v];
      has_credit_d[v] = take_vc[v] ? cred_take[v] != 8'd0 : cred_keep[v] != 8'd0;
    end
  end
  `NI_ASSERT(PickOneHot_A, $onehot0(pick_q))

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rr_oh_q <= NumSrc'(1);
      pick_q <= NumSrc'(1) << RestSrc;
      credits_q <= '0;
      has_credit_q <= '0;
      psn_q <= '0;
    end else begin
      rr_oh_q <= rr_oh_d;
      pick_q <= pick_d;
      credits_q <= credits_d;
      has_credit_q <= has_credit_d;
      psn_q <= psn_d;
    end
  end

  // The pick queue, a skid register: {the kind's flags the framer decides on, source,
  // the descriptor}, without back_page (ni_retx's, not the wire's).
  localparam int unsigned PqW = 3 + NumSrc + ni_pkg::TxDescW - 52;
  logic [PqW-1:0] pq_head;
  logic pq_valid, pq_pop;
  // What the framer works from: the header bytes built from the descriptor and what
  // the framing decides on.
  typedef struct packed {
    logic raw;          // a raw packet: its beats are the whole packet, then a VCRC
    logic cont;         // a continuation: the header bytes replace its beats' first 16
    logic has_payload;  // beats follow the header bytes
    logic vc;
    logic [2:0] kind;   // its header length says where the header ends (not for raw and cont)
    logic [ni_pkg::TxHdrBytes*8-1:0] bytes;  // byte p at bits [8p +: 8]
  } frame_hdr_t;
  frame_hdr_t pq_hdr;
  ni_pkg::tx_desc_t pq_desc;
  logic [NumSrc-1:0] pq_src;  // one-hot
  logic unused_back;
  assign unused_back = ^hdr_new.back_page;
  ni_skid #(.Width(PqW)) u_pick_q (
    .clk_i, .rst_ni,
    .wdata_i({hdr_new.kind == ni_pkg::TX_RAW, hdr_new.kind == ni_pkg::TX_CONT,
              hdr_new.kind != ni_pkg::TX_ACK && hdr_new.kind != ni_pkg::TX_UR, pick_q, hdr_new.kind, hdr_new.vc,
              hdr_new.dlid, hdr_new.pkt_words, hdr_new.stamp_psn, hdr_new.psn, hdr_new.flags, hdr_new.aux8, hdr_new.memid,
              hdr_new.key}),
    .wvalid_i(take), .wready_o(pq_wready),
    .rdata_o(pq_head), .rvalid_o(pq_valid), .rready_i(pq_pop));
  always_comb begin
    pq_desc = '0;
    pq_hdr = '0;
    {pq_hdr.raw, pq_hdr.cont, pq_hdr.has_payload, pq_src, pq_desc.kind, pq_desc.vc, pq_desc.dlid, pq_desc.pkt_words, pq_desc.stamp_psn, pq_desc.psn,
     pq_desc.flags, pq_desc.aux8, pq_desc.memid, pq_desc.key} = pq_head;
    // The framer's record of the packet, built from the queued descriptor.
    pq_hdr.bytes = ni_pkg::tx_header(pq_desc, node_id_i, pkey_i, psn_q[pq_desc.vc], CplId);
    pq_hdr.kind = pq_desc.kind;
    pq_hdr.vc = pq_desc.vc;
  end

  // ------------------------------------------------------------ frame
  // StCarry: payload bytes left over from the last payload beat (Off != 0 only).
  typedef enum logic [2:0] {StIdle, StHdr, StPay, StTrl, StCarry} state_e;
  state_e state_q, state_d;
  logic [OffW*8-1:0] carry_q, carry_d;
  logic [6:0] carry_n_q, carry_n_d;
  logic [Bpb-1:0] carry_mask_q, carry_mask_d;  // carry_n_q lanes
  frame_hdr_t hdr_q, hdr_d, hcur;
  // The packet's source, one-hot: each select of a source's beat is then one gate of
  // registers (idle_q, the queue head's and src_q's bits) before the AND-OR.
  logic [NumSrc-1:0] src_q, src_d, src;
  // The packet's beats framed so far (saturating: only the first few are told apart).
  localparam int unsigned BiW = 3;
  logic [BiW-1:0] bi_q, bi_d, bi;
  // The header bytes from this beat on (hrem), whether the header ends in this beat with
  // room for the trailer (hend6) or at all (hend0), and a header-only packet's lanes of
  // header in this beat (hmask): functions of the kind (its header length) and the beat
  // count alone, six bits, so no length is subtracted or compared in the cycle.
  logic signed [7:0] hrem;
  logic hend6, hend0;
  logic [Bpb-1:0] hmask;
  logic signed [7:0] trl_rel_q, trl_rel_d;
  logic bad_q, bad_d, bad_in;
  state_e st;
  // A packet starts when the framer is idle and the pick queue has a header: its first
  // beat is framed in that same cycle, so back-to-back packets leave no idle beat
  // between them. The framer's values select the queue's head on idle_q, a register
  // of its own, not on `starting` (a decision on the queue's valid would drive every
  // lane's multiplexer); while idle without a header, nothing is framed.
  logic starting, idle_q;
  assign starting = idle_q && pq_valid;
  assign pq_pop = starting;
  assign hcur = idle_q ? pq_hdr : hdr_q;
  assign st = idle_q ? ((pq_hdr.cont || pq_hdr.raw) ? StPay : StHdr) : state_q;
  assign bi = idle_q ? '0 : bi_q;
  // A table over the kind and the beat count (equalities, which become LUTs; a
  // subtraction and compares of the length would become carry chains):
  // {hrem, hrem - Bpb, hend6, hend0, hmask}.
  localparam int unsigned HposW = 8 + 8 + 2 + Bpb;
  function automatic logic [HposW-1:0] hdr_pos(input logic [2:0] kind, input logic [BiW-1:0] b);
    hdr_pos = '0;
    for (int k = 0; k < 8; k++) begin
      for (int i = 0; i < (1 << BiW); i++) begin
        if (kind == 3'(k) && b == BiW'(i)) begin
          hdr_pos[Bpb + 2 +: 16] = {8'(32'(ni_pkg::tx_header_len(3'(k))) - i * Bpb),
                                    8'(32'(ni_pkg::tx_header_len(3'(k))) - i * Bpb - Bpb)};
          hdr_pos[Bpb + 1] = 32'(ni_pkg::tx_header_len(3'(k))) <= i * Bpb + Bpb - 6;
          hdr_pos[Bpb] = 32'(ni_pkg::tx_header_len(3'(k))) <= i * Bpb + Bpb;
          for (int j = 0; j < Bpb; j++) hdr_pos[j] = 32'(ni_pkg::tx_header_len(3'(k))) > i * Bpb + j;
        end
      end
    end
  endfunction
  // The entry for the beat being framed: for a packet's first beat from the queue's
  // head (its kind, beat 0), else from hp_q, looked up as the beat before was framed
  // (the kind and the beat count in registers then), so one multiplexer of registers
  // stands before the framing's decisions.
  logic [HposW-1:0] hp, hp_q, hp_d;
  logic [BiW-1:0] bi_inc, bi_q_inc;  // the beat count after this beat (it stops at its top)
  assign bi_q_inc = (bi_q == '1) ? bi_q : bi_q + BiW'(1);
  assign bi_inc = idle_q ? BiW'(1) : bi_q_inc;
  // (Called from always_comb: Yosys makes latches of a function's loop variables in a
  // continuous assignment.)
  // The entry after this beat's: looked up from registers alone (the queue's head's
  // kind, or hdr_q's kind and bi_q), the idle choice after the tables.
  logic [HposW-1:0] hp_start, hp_same, hp_next, hp_next_idle, hp_next_busy;
  always_comb begin
    hp_start = hdr_pos(pq_hdr.kind, '0);
    hp_same = hdr_pos(hcur.kind, bi);  // what hp stands for (HposIsTable_A)
    hp_next_idle = hdr_pos(pq_hdr.kind, BiW'(1));
    hp_next_busy = hdr_pos(hdr_q.kind, bi_q_inc);
    hp_next = idle_q ? hp_next_idle : hp_next_busy;
  end
  assign hp = idle_q ? hp_start : hp_q;
  assign {hrem, hrem_m, hend6, hend0, hmask} = hp;
  always_ff @(posedge clk_i) hp_q <= hp_d;
  `NI_ASSERT(HposIsTable_A, hp == hp_same)
  assign bad_in = idle_q ? 1'b0 : bad_q;
  assign src = idle_q ? pq_src : src_q;
  `NI_ASSERT(IdleIsState_A, idle_q == (state_q == StIdle))
  always_comb begin
    for (int v = 0; v < ni_pkg::NumVc; v++) begin
      psn_inc[v] = psn_q[v] + 24'd1;
      psn_d[v] = (starting && pq_desc.stamp_psn && 32'(pq_desc.vc) == v) ? psn_inc[v] : psn_q[v];
    end
  end

  logic [BeatW-1:0] sbeat;
  logic [DataW-1:0] pay_data;
  logic [KeepW-1:0] pay_keep;
  logic pay_last, pay_bad, pay_valid;
  always_comb begin
    sbeat = '0;
    for (int k = 0; k < NumSrc; k++) sbeat = sbeat | (src_beat_i[k] & {BeatW{src[k]}});
  end
  assign pay_data = sbeat[DataW-1:0];
  assign pay_keep = sbeat[DataW +: KeepW];
  assign pay_last = sbeat[DataW + KeepW];
  assign pay_bad = sbeat[DataW + KeepW + 1];
  // Whether the source has a beat (and whether it is last), and whether this beat takes
  // one: for an idle framer from the queue's head, else from the framer's registers,
  // each from registers and the sources' valid bits before the idle choice, so the
  // framer's decision (fr_beat) waits for no multiplexer of src.
  logic pay_valid_busy, pay_valid_idle, pay_last_busy, pay_last_idle, pay_take_busy, pay_take_idle;
  always_comb begin
    pay_valid_busy = 1'b0;
    pay_valid_idle = 1'b0;
    pay_last_busy = 1'b0;
    pay_last_idle = 1'b0;
    for (int k = 0; k < NumSrc; k++) begin
      pay_valid_busy = pay_valid_busy | (src_beat_valid_i[k] & src_q[k]);
      pay_valid_idle = pay_valid_idle | (src_beat_valid_i[k] & pq_src[k]);
      pay_last_busy = pay_last_busy | (src_beat_i[k][DataW + KeepW] & src_q[k]);
      pay_last_idle = pay_last_idle | (src_beat_i[k][DataW + KeepW] & pq_src[k]);
    end
    // pay_take (below) as it would be from the state's registers or the head's flags.
    pay_take_busy = state_q == StPay ||
                    (Off != 0 && !hdr_q.cont && !hdr_q.raw && state_q == StHdr && hdr_q.has_payload);
    pay_take_idle = pq_hdr.cont || pq_hdr.raw || (Off != 0 && pq_hdr.has_payload);
  end
  assign pay_valid = |(src_beat_valid_i & src);  // (for PayTake_A)

  logic mix;             // payload lanes shifted up by Off, below them header or carried bytes
  logic pay_take;        // this beat consumes the current payload beat
  logic beat_avail;      // the framer has a beat to give
  logic fr_beat;         // and gives it (to the output register or the beat queue)
  // Where the trailer starts relative to this beat (rel, 8 bits signed: a trailer begun
  // in the beat before is negative), or none in this beat (rel_none).
  logic signed [7:0] rel;
  logic signed [7:0] rel_m;  // rel - Bpb, where the trailer spills into the next beat
  logic signed [7:0] hrem_m, kcnt_off, kcnt_m, kcnt_off_m;  // offsets of hrem and kcnt, from tables
  logic rel_none;
  logic [DataW-1:0] f_data;  // lanes below rel; the others are not cleared here
  logic f_last, f_spill, f_bad;
  // Lanes of a mixed last beat (Off != 0): at most MixEnd6 leave room for the trailer,
  // at most MixEnd0 end the payload in this beat.
  localparam int unsigned MixEnd6 = (Off != 0) ? Bpb - Off - 6 : 0;
  localparam int unsigned MixEnd0 = (Off != 0) ? Bpb - Off : 0;
  logic signed [7:0] f_rel8;  // rel clipped to Bpb (no trailer lane in this beat)
  // The lanes below f_rel8, for the CRCs: from keeps and registered masks, not from a
  // compare of rel (MaskIsRel_A).
  logic [Bpb-1:0] f_mask, pay_mask;
  logic [Bpb-1:0] selh_exp;  // what selh stands for (SelhIsState_A)
  always_comb begin
    for (int j = 0; j < Bpb; j++) begin
      selh_exp[j] = st == StHdr || (hcur.cont && 32'(bi) * Bpb + j < ni_pkg::ContHdrBytes);
    end
  end
  // The header beat is the lowest beat of the header record: the record moves down a
  // beat as each beat is framed (hdr_d), so no multiplexer of the beat count stands
  // before the lanes.
  localparam int unsigned HdrBeats = (ni_pkg::TxHdrBytes + Bpb - 1) / Bpb;
  localparam int unsigned HdrW = ni_pkg::TxHdrBytes * 8;
  logic [DataW-1:0] hbeat;
  assign hbeat = DataW'(hcur.bytes);
  `NI_ASSERT(HeaderBeatCounted_A, !(st == StHdr && !idle_q) || 32'(bi_q) < HdrBeats)
  logic [NzW-1:0] kcnt;
  // Without a lane shift (Off 0), a lane takes the header beat (selh) or the payload:
  // the header in StHdr, a continuation's first 16 bytes. selh comes from registers
  // (idle: from the queue's flags; else selh_q, made a cycle ahead), so the lanes'
  // multiplexers wait for no decision of this cycle.
  logic [Bpb-1:0] selh, selh_q, selh_d, selh_next;
  always_comb begin
    for (int j = 0; j < Bpb; j++) begin
      selh[j] = idle_q ? !pq_hdr.raw && (!pq_hdr.cont || j < ni_pkg::ContHdrBytes) : selh_q[j];
      selh_next[j] = (st == StHdr && !hend0) || (hcur.cont && (32'(bi) + 1) * Bpb + j < ni_pkg::ContHdrBytes);
    end
    selh_d = fr_beat ? selh_next : selh;
  end
  always_ff @(posedge clk_i) selh_q <= selh_d;

  always_comb begin
    // The payload beat's lanes from its highest DW kept (a last beat's keep is its low
    // lanes, LastKeepLow_A, and whole DWs, KcntIsCount_A; any other is full): a table
    // over one keep bit per DW, with the offsets rel and trl_rel need folded in, not an
    // adder tree and adders behind it.
    kcnt = '0;
    kcnt_off = '0;
    kcnt_m = '0;
    kcnt_off_m = '0;
    for (int j = 0; j < Bpb; j += 4) begin
      if (pay_keep[j]) begin
        kcnt = NzW'(j + 4);
        kcnt_off = 8'(j + 4 + Off);
        kcnt_m = 8'(j + 4 - Bpb);
        kcnt_off_m = 8'(j + 4 + Off - Bpb);
      end
    end
    mix = (Off != 0) && !hcur.cont && !hcur.raw && ((st == StHdr && hcur.has_payload) || st == StPay);
    pay_take = (st == StPay) || mix;
    rel = '0;
    rel_m = '0;
    rel_none = 1'b1;
    case (st)
      StHdr: begin
        if (!hcur.has_payload) begin
          rel = hrem;
          rel_m = hrem_m;
          rel_none = 1'b0;
        end else if (mix) begin
          rel = kcnt_off;
          rel_m = kcnt_off_m;
          rel_none = !(pay_last && 32'(kcnt) <= Bpb - Off);
        end
      end
      StPay: begin
        rel = mix ? kcnt_off : 8'(kcnt);
        rel_m = mix ? kcnt_off_m : kcnt_m;
        rel_none = !pay_last || (mix && 32'(kcnt) > Bpb - Off);
      end
      StTrl: begin
        rel = trl_rel_q;
        rel_none = 1'b0;
      end
      StCarry: begin
        rel = 8'(carry_n_q);
        rel_none = 1'b0;
      end
      default: ;
    endcase
    // A beat unless it takes a payload beat the source does not have yet (PayTake_A).
    beat_avail = (idle_q ? pq_valid && (!pay_take_idle || pay_valid_idle) : !pay_take_busy || pay_valid_busy);
    for (int j = 0; j < Bpb; j++) begin
      if (Off == 0) f_data[j*8 +: 8] = selh[j] ? hbeat[j*8 +: 8] : pay_data[j*8 +: 8];
      else if (st == StHdr && (!mix || LowLanes[j])) f_data[j*8 +: 8] = hbeat[j*8 +: 8];
      else if ((mix || st == StCarry) && LowLanes[j]) f_data[j*8 +: 8] = carry_q[(j % OffW)*8 +: 8];
      else if (mix) f_data[j*8 +: 8] = pay_data[((j + Bpb - Off) % Bpb)*8 +: 8];  // j >= Off here
      else if (hcur.cont && 32'(bi) * Bpb + j < ni_pkg::ContHdrBytes) f_data[j*8 +: 8] = hbeat[j*8 +: 8];
      else f_data[j*8 +: 8] = pay_data[j*8 +: 8];
    end
    f_bad = bad_in || (pay_take && pay_bad);
    // rel exceeds Bpb only in a header-only packet's header before its last beat.
    f_rel8 = (rel_none || (st == StHdr && !hcur.has_payload && !hend0)) ? BpbR : rel;
    // The trailer (ICRC, VCRC) ends in this beat (f_last), or starts in it and spills
    // into the next (f_spill): from flags and single keep bits, no compare of rel (a last
    // beat's keep is its low lanes, so "at most n lanes" is !keep[n]). A trailer begun
    // in the beat before, or carried bytes, always end in this one.
    case (st)
      StHdr: begin
        if (!hcur.has_payload) begin
          f_last = hend6;
          f_spill = hend0 && !hend6;
        end else begin
          f_last = mix && pay_last && !pay_keep[MixEnd6];
          f_spill = mix && pay_last && pay_keep[MixEnd6] && !pay_keep[MixEnd0];
        end
      end
      StPay: begin
        if (mix) begin
          f_last = pay_last && !pay_keep[MixEnd6];
          f_spill = pay_last && pay_keep[MixEnd6] && !pay_keep[MixEnd0];
        end else begin
          f_last = pay_last && !pay_keep[hcur.raw ? Bpb - 2 : Bpb - 6];
          f_spill = pay_last && pay_keep[hcur.raw ? Bpb - 2 : Bpb - 6];
        end
      end
      StTrl, StCarry: begin
        f_last = 1'b1;
        f_spill = 1'b0;
      end
      default: begin
        f_last = 1'b0;
        f_spill = 1'b0;
      end
    endcase
  end
  always_comb begin
    // A payload beat's lanes: all but a last beat's are full (a last beat's keep is its
    // low lanes); shifted up by Off below the header or carried bytes when mixed.
    pay_mask = pay_last ? pay_keep : '1;
    if (mix) pay_mask = LowLanes | Bpb'({pay_mask, Bpb'(0)} >> (Bpb - Off));
    case (st)
      StHdr: f_mask = !hcur.has_payload ? hmask : (mix ? pay_mask : '1);
      StPay: f_mask = pay_mask;
      StCarry: f_mask = carry_mask_q;
      default: f_mask = '0;  // StTrl: the trailer began in the beat before
    endcase
  end
  // The flags are the compares of rel they stand for.
  `NI_ASSERT(MaskIsRel_A, !fr_beat || f_mask == Bpb'((65'(1) << f_rel8[6:0]) - 65'(1)) ||
                          (f_rel8 < 8'sd0 && f_mask == '0))
  `NI_ASSERT(LastIsRel_A, !fr_beat || f_last == (!rel_none && rel <= BpbR - (hcur.raw ? 8'sd2 : 8'sd6)))
  `NI_ASSERT(RelClipped_A, !fr_beat || f_rel8 == ((rel_none || rel > BpbR) ? BpbR : rel))
  `NI_ASSERT(SpillIsRel_A, !fr_beat || f_last || f_spill == (!rel_none && rel <= BpbR))
  `NI_ASSERT(DataEndsOnDw_A, !(fr_beat && !rel_none && rel >= 8'sd0 && rel < BpbR) || rel[1:0] == 2'b00)
  `NI_ASSERT(TrlRelIsRel_A, !(fr_beat && f_spill) || rel_m == rel - BpbR)
  `NI_ASSERT(KcntIsCount_A, !(fr_beat && pay_take && pay_last) || 32'(kcnt) == 32'(ni_pkg::keep_count(64'(pay_keep))))
  `NI_ASSERT(SelhIsState_A, Off != 0 || !fr_beat || selh == selh_exp)
  `NI_ASSERT(LastKeepLow_A, !(fr_beat && pay_take && pay_last) || (pay_keep & (pay_keep + KeepW'(1))) == '0)

  // The table's entry for the next cycle's beat: this one's again, or the one after a
  // beat framed (looked up beside the framing; fr_beat only selects).
  assign hp_d = fr_beat ? hp_next : hp;
  always_comb begin
    src_beat_ready_o = '0;
    state_d = state_q;
    src_d = src_q;
    bi_d = bi_q;
    trl_rel_d = trl_rel_q;
    bad_d = bad_q;
    carry_d = carry_q;
    carry_n_d = carry_n_q;
    carry_mask_d = carry_mask_q;
    // While idle the registers follow the queue's head (unused until a start); the
    // state leaves StIdle only with a header.
    hdr_d = hcur;
    if (fr_beat) hdr_d.bytes = HdrW'({DataW'(0), hcur.bytes} >> DataW);
    if (idle_q) begin
      src_d = pq_src;
      bi_d = '0;
      bad_d = 1'b0;
    end
    if (starting) state_d = st;  // StHdr, or StPay for a continuation or a raw packet
    if (fr_beat) begin
      src_beat_ready_o = src & {NumSrc{pay_take}};
      bi_d = bi_inc;
      bad_d = f_bad;
      trl_rel_d = rel_m;  // where the trailer starts, seen from the next beat
      if (mix) begin
        for (int j = 0; j < OffW; j++) carry_d[j*8 +: 8] = pay_data[((Bpb - Off + j) % Bpb) * 8 +: 8];
        carry_n_d = 7'(32'(kcnt) - (Bpb - Off));
        carry_mask_d = Bpb'(pay_keep >> (Bpb - Off));
      end
      if (f_last) begin
        state_d = StIdle;
      end else if (f_spill) begin
        state_d = StTrl;  // trailer (or its VCRC part) spills into the next beat
      end else if (mix && pay_last) begin
        state_d = StCarry;  // the last payload bytes did not fit: they go out next
      end else if (st == StHdr && hend0) begin
        state_d = StPay;
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q <= StIdle;
      idle_q <= 1'b1;
      src_q <= '0;
      bad_q <= 1'b0;
    end else begin
      state_q <= state_d;
      idle_q <= state_d == StIdle;
      src_q <= src_d;
      bad_q <= bad_d;
    end
  end
  always_ff @(posedge clk_i) begin
    hdr_q <= hdr_d;
    bi_q <= bi_d;
    trl_rel_q <= trl_rel_d;
    carry_q <= carry_d;
    carry_n_q <= carry_n_d;
    carry_mask_q <= carry_mask_d;
  end

  // ------------------------------------------------------------ trailer
  // The CRC pipeline sees every framed beat (c1), steps the ICRC and VCRC states over
  // the whole beat with the lanes from rel on as zeros, then in the beat where the
  // data ends (0 <= rel < Bpb) steps them back over those zero lanes (c2: a CRC
  // stepped over zero bytes is an invertible linear map), and steps the VCRC on over
  // the four ICRC bytes (c3), which pushes the packet's trailer. So no cycle holds a
  // chain of per-lane CRC steps. Every packet is whole DWs (a TLP; a raw datagram
  // padded by its producer) and starts on a DW lane, so the data ends on a DW lane and
  // the step back is over whole DWs (DataEndsOnDw_A): Bpb/4 + 1 matrices, not Bpb + 1.
  logic [DataW-1:0] c1_data_q;  // the beat's data lanes (below rel), the others zero
  logic signed [7:0] c1_rel_q;
  logic c1_valid_q, c1_first_q, c1_has12_q, c1_bad_q, c1_raw_q;
  logic c2_bad_q, c2_raw_q;
  logic c3_valid_q, c3_bad_q, c3_raw_q;
  logic [31:0] s32_q, c3_back_q, c3_icrc;
  logic [15:0] s16_q, c3_s16_q;

  // c1: both states over the beat's data lanes (the ICRC's with its fields masked).
  logic [31:0] c32;
  logic [15:0] c16;
  logic [DataW-1:0] d32;
  always_comb begin
    for (int j = 0; j < Bpb; j++) begin
      d32[j*8 +: 8] = c1_data_q[j*8 +: 8];
      if (c1_first_q && j == 0) d32[j*8 +: 8] = d32[j*8 +: 8] | 8'hF0;
      if (c1_has12_q && j == Lane12) d32[j*8 +: 8] = 8'hFF;
    end
  end
  ni_crc_step #(.Width(32), .Poly(ni_pkg::Crc32Poly), .Bytes(Bpb)) u_c1_icrc (
    .state_i(c1_first_q ? 32'hFFFF_FFFF : s32_q), .data_i(d32), .state_o(c32)
  );
  ni_crc_step #(.Width(16), .Poly(ni_pkg::Crc16Poly), .Bytes(Bpb)) u_c1_vcrc (
    .state_i(c1_first_q ? 16'hFFFF : s16_q), .data_i(c1_data_q), .state_o(c16)
  );

  // c2: in the beat where the data ends, back over the lanes after it. The states c1
  // left are in s32_q and s16_q (c2 follows a c1 beat).
  logic c2_end_q;
  localparam int unsigned DwN = Bpb / 4;
  localparam int unsigned DwNW = $clog2(DwN + 1);
  logic [DwNW-1:0] c2_after_q;  // DWs after the data, worked out from rel in c1
  logic [31:0] back32;
  logic [15:0] back16;
  ni_crc_back #(.Width(32), .Poly(ni_pkg::Crc32Poly), .MaxBytes(Bpb), .Unit(4)) u_c2_icrc (
    .state_i(s32_q), .n_i(c2_after_q), .state_o(back32)
  );
  ni_crc_back #(.Width(16), .Poly(ni_pkg::Crc16Poly), .MaxBytes(Bpb), .Unit(4)) u_c2_vcrc (
    .state_i(s16_q), .n_i(c2_after_q), .state_o(back16)
  );

  // c3: the ICRC (the state stepped back, inverted here rather than before c3's
  // register, with a stomped packet's ICRC inverted again); the VCRC on over its bytes
  // (a raw packet has none); the trailer.
  logic [15:0] vcrc, c3_s16_icrc;
  assign c3_icrc = c3_back_q ^ {32{!c3_bad_q}};
  ni_crc_step #(.Width(16), .Poly(ni_pkg::Crc16Poly), .Bytes(4)) u_c3_vcrc (
    .state_i(c3_s16_q), .data_i(c3_icrc), .state_o(c3_s16_icrc)
  );
  assign vcrc = ~(c3_raw_q ? c3_s16_q : c3_s16_icrc) ^ {16{c3_raw_q && c3_bad_q}};

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      {c1_valid_q, c2_end_q, c3_valid_q} <= '0;
    end else begin
      {c1_valid_q, c2_end_q, c3_valid_q} <= {fr_beat, c1_valid_q && c1_rel_q >= 8'sd0 && c1_rel_q < 8'(Bpb), c2_end_q};
    end
  end
  // c1 takes the framer's beat in every cycle (c1_valid_q says whether it was one): no
  // enable of the framer's decision on its registers.
  always_ff @(posedge clk_i) begin
    // Masked as it is framed, so the CRC steps start from register bits.
    for (int j = 0; j < Bpb; j++) c1_data_q[j*8 +: 8] <= f_data[j*8 +: 8] & {8{f_mask[j]}};
    c1_rel_q <= f_rel8;
    c1_first_q <= bi == '0;
    c1_has12_q <= 32'(bi) == Beat12 / Bpb;
    c1_bad_q <= f_bad;
    c1_raw_q <= hcur.raw;
    if (c1_valid_q) begin
      s32_q <= c32;
      s16_q <= c16;
    end
    c2_after_q <= DwNW'((Bpb - 32'(c1_rel_q[6:0])) / 4);
    c2_bad_q <= c1_bad_q;
    c2_raw_q <= c1_raw_q;
    c3_back_q <= back32;
    c3_s16_q <= back16;
    c3_bad_q <= c2_bad_q;
    c3_raw_q <= c2_raw_q;
  end

  // Trailers, one per packet in order: {VCRC, ICRC}.
  // A packet's trailer waits for its last beat, which is queued or in the head register:
  // as many trailers as those beats at most.
  logic [47:0] trl;
  logic trl_valid, trl_pop, trl_wready;
  ni_fifo #(.Width(48), .Depth(BeatQDepth + 1)) u_trl_q (
    .clk_i, .rst_ni, .wdata_i({vcrc, c3_icrc}), .wvalid_i(c3_valid_q), .wready_o(trl_wready),
    .rdata_o(trl), .rvalid_o(trl_valid), .rready_i(trl_pop)
  );

  // ------------------------------------------------------------ beat queue, output
  // A queued beat: {raw, last, vc, rel clipped to Bpb (no trailer lane), lanes}. rel
  // lies in -5 to Bpb: its low RelK bits tell those Bpb + 6 values apart, so only they
  // are queued and decoded.
  localparam int unsigned RelK = $clog2(Bpb + 6);
  localparam int unsigned QW = 3 + RelK + DataW;
  logic [QW-1:0] q_in, q_head;
  logic q_valid, q_ready, q_wready, q_push, bypass;
  logic adv;
  logic [DataW-1:0] o_data;
  // The queue's head passes a register (hd_*) before its lanes are assembled with the
  // trailer, with rel decoded as it enters: the lanes of data below rel (dmask), for each
  // lane the trailer byte it holds, one-hot (tsel: {VCRC, ICRC} bytes 5 to 0), the lanes
  // kept, and whether any lane waits for the trailer. So assembling a lane is an AND-OR
  // of register bits and the trailer, no compare of rel.
  logic hd_valid_q, hd_go;
  logic [DataW-1:0] hd_data_q;
  logic [Bpb-1:0] hd_dmask_q, hd_keep_q;
  logic [Bpb-1:0][5:0] hd_tsel_q;
  logic hd_last_q, hd_vc_q, hd_trl_q;
  logic q_raw;
  logic [RelK-1:0] q_rel;
  // The output is a skid register (the registered block boundary): adv, its room, is a
  // register, so the fabric port's ready reaches no decision here.
  logic o_wvalid;
  logic [DataW+KeepW+1:0] o_word;
  // A beat that cannot hold trailer lanes goes straight to the output when nothing is
  // queued; the others (a last payload beat, a header-only packet's last header beat, a
  // trailer or carry beat: a choice from flags, off the lane count) are queued, and an
  // empty queue has room.
  logic may_trl;
  assign may_trl = st == StTrl || st == StCarry || (st == StHdr && !hcur.has_payload && hend0) ||
                   (idle_q ? pay_take_idle && pay_last_idle : pay_take_busy && pay_last_busy);
  `NI_ASSERT(PayTake_A, pay_take == (idle_q ? pay_take_idle : pay_take_busy) &&
                        pay_last == (idle_q ? pay_last_idle : pay_last_busy) &&
                        pay_valid == (idle_q ? pay_valid_idle : pay_valid_busy))
  assign bypass = !q_valid && !hd_valid_q && adv && !may_trl;
  assign fr_beat = beat_avail && q_wready;
  assign q_push = fr_beat && !bypass;
  assign q_in = {hcur.raw, f_last, hcur.vc, f_rel8[RelK-1:0], f_data};
  ni_fifo #(.Width(QW), .Depth(BeatQDepth), .FreeWrite(1)) u_beat_q (
    .clk_i, .rst_ni,
    .wdata_i(q_in),
    .wvalid_i(q_push), .wready_o(q_wready),
    .rdata_o(q_head), .rvalid_o(q_valid), .rready_i(q_ready)
  );
  assign q_raw = q_head[QW-1];
  assign q_rel = q_head[DataW +: RelK];
  assign hd_go = hd_valid_q && adv && (!hd_trl_q || trl_valid);
  assign q_ready = !hd_valid_q || hd_go;
  assign trl_pop = hd_go && hd_last_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) hd_valid_q <= 1'b0;
    else if (q_ready) hd_valid_q <= q_valid;
  end
  always_ff @(posedge clk_i) begin
    if (q_ready) begin
      {hd_last_q, hd_vc_q} <= q_head[QW-2 -: 2];
      hd_data_q <= q_head[DataW-1:0];
      // Decoded through equalities of RelK bits over rel's range, -5 to Bpb (LUTs of
      // RelK inputs, where compares would become carry chains). The loop counts
      // u = rel + 5 from 0, and every bound and constant is non-negative: Yosys 0.70 ran
      // a loop from -5 to int'(Bpb) not at all (it compared the bounds unsigned), so its
      // netlist kept no lane.
      hd_trl_q <= 1'b0;
      hd_dmask_q <= '0;
      hd_keep_q <= '0;
      hd_tsel_q <= '0;
      for (int unsigned u = 0; u <= Bpb + 5; u++) begin
        if (q_rel == RelK'((u + (1 << RelK) - 5) % (1 << RelK))) begin  // rel = u - 5
          hd_trl_q <= u < Bpb + 5;
          for (int unsigned j = 0; j < Bpb; j++) begin
            hd_dmask_q[j] <= u > j + 5;
            hd_keep_q[j] <= q_raw ? u > j + 3 : u >= j;
            // Lane j holds trailer byte k = j - rel: byte k of trl, or of a raw packet's
            // trailer (its VCRC alone) byte k + 4.
            for (int unsigned k = 0; k < 6; k++) begin
              if (j + 5 == u + k) begin
                if (!q_raw) hd_tsel_q[j][k] <= 1'b1;
                else if (k < 2) hd_tsel_q[j][k + 4] <= 1'b1;
              end
            end
          end
        end
      end
    end
  end

  // The queued beat's lanes: data below rel, then ICRC (not in a raw packet), VCRC.
  always_comb begin
    for (int j = 0; j < Bpb; j++) begin
      o_data[j*8 +: 8] = hd_data_q[j*8 +: 8] & {8{hd_dmask_q[j]}};
      for (int b = 0; b < 6; b++) o_data[j*8 +: 8] = o_data[j*8 +: 8] | (trl[b*8 +: 8] & {8{hd_tsel_q[j][b]}});
    end
  end

  assign o_wvalid = (fr_beat && bypass) || hd_go;
  assign o_word = hd_go ? {hd_vc_q, hd_last_q, hd_keep_q, o_data} : {hcur.vc, 1'b0, {KeepW{1'b1}}, f_data};
  ni_skid #(.Width(DataW + KeepW + 2)) u_out (
    .clk_i, .rst_ni, .wdata_i(o_word), .wvalid_i(o_wvalid), .wready_o(adv),
    .rdata_o({m_axis_tdest, m_axis_tlast, m_axis_tkeep, m_axis_tdata}), .rvalid_o(m_axis_tvalid),
    .rready_i(m_axis_tready));

  `NI_ASSERT(TrailerRoom_A, !c3_valid_q || trl_wready)
  `NI_ASSERT(BypassNoTrailer_A, !(fr_beat && bypass) || rel_none || rel >= BpbR)
  `NI_ASSERT_AXIS_STABLE(FabOutStable_A, m_axis_tvalid, m_axis_tready,
                         {m_axis_tdata, m_axis_tkeep, m_axis_tlast, m_axis_tdest})
  // A header followed by payload is exactly the fabric header: payload lanes start at Off.
  // What the sources and the fabric promise (assumptions of the formal proof).
  `NI_ASSUME(KnownKind_A, !take || hdr_new.kind <= ni_pkg::TX_RAW)
  // Credits never wrap: the fabric returns no more than it was owed.
  `NI_ASSUME(CreditNoWrap_A, !(credit_i[0] && credits_q[0] == 8'hFF) && !(credit_i[1] && credits_q[1] == 8'hFF))
endmodule

`default_nettype wire

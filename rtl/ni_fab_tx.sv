// SPDX-License-Identifier: Apache-2.0
// Fabric transmit: picks a source packet (round robin among sources whose VC has
// credit), sends its LRH/BTH/extension header, its payload beats, and the ICRC
// and VCRC right after the last payload byte. Output is packed: no null bytes.
// The CRCs are computed beside the beats, not on their way out (see "trailer").
// When the 32-byte header is not a whole number of beats (512 bits: half a beat),
// payload lanes are shifted up by the remainder and the bytes that do not fit are
// carried into the next beat. A continuation (tx_hdr_t.cont) has no header beats:
// its 16 header bytes (LRH, CTH) replace the TLP header in the payload's own lanes.
// A raw packet (tx_hdr_t.raw) is its beats, LRH included, followed by a VCRC alone
// (IBA raw packets carry no ICRC); a stomped one gets its VCRC inverted.
`default_nettype none
`include "ni_assert.svh"

module ni_fab_tx #(
  parameter int unsigned DataW = 64,
  parameter int unsigned NumSrc = 3,
  localparam int unsigned Bpb = DataW / 8,
  localparam int unsigned KeepW = Bpb,
  localparam int unsigned BeatW = DataW + KeepW + 2  // {bad, last, keep, data}
) (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic [15:0] node_id_i,
  input  logic [15:0] pkey_i,     // P_KEY: stamped into every BTH and CTH (not a raw packet)
  // Sources: a header record, then (if has_payload) a beat stream ending in last.
  input  logic [NumSrc*ni_pkg::TxHdrW-1:0] src_hdr_i,  // tx_hdr_t per source, source 0 lowest
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
  localparam int unsigned SrcW = (NumSrc > 1) ? $clog2(NumSrc) : 1;
  localparam int unsigned Off = ni_pkg::FabHdrBytes % Bpb;  // payload lane shift: 0, or 32 at 512 bits
  localparam int unsigned OffW = (Off > 0) ? Off : 1;
  localparam logic [Bpb-1:0] LowLanes = Bpb'((65'(1) << Off) - 65'(1));  // lanes below Off
  localparam logic signed [15:0] BpbS = 16'(Bpb);
  localparam int unsigned NzW = $clog2(Bpb + 1);  // a count of lanes, 0 to Bpb
  // Packet bytes 0 and 12 are masked for the ICRC (ni_pkg::icrc_mask): byte 12 is lane
  // Lane12 of the beat that starts at byte Beat12.
  localparam int unsigned Lane12 = 12 % Bpb;
  localparam int unsigned Beat12 = 12 / Bpb * Bpb;
  localparam int unsigned BeatQDepth = 8;  // holds the beats framed while a trailer waits

  // How a beat travels: pick (when the framer is idle) -> frame (the beat's lanes;
  // where the trailer starts in it, rel) -> output register, directly if nothing
  // waits, else through the beat queue (a packet's first beat always: that keeps the
  // pick off the path to the output register). A beat with trailer lanes waits in
  // the queue until its packet's ICRC and VCRC are in the trailer queue: the CRC
  // pipeline beside the beats takes 4 cycles from a packet's last data beat. Back to
  // back, later packets are framed meanwhile, so the port stays busy and only a
  // packet after an idle port waits.

  // ------------------------------------------------------------ pick
  logic pick_valid;
  logic [SrcW-1:0] pick;
  logic [NumSrc-1:0] eligible;
  logic [SrcW-1:0] rr_q, rr_d;
  logic [ni_pkg::NumVc-1:0][7:0] credits_q, credits_d;
  logic [ni_pkg::NumVc-1:0] has_credit_q;  // credits_q != 0, registered with it
  logic [ni_pkg::NumVc-1:0][23:0] psn_q, psn_d;
  ni_pkg::tx_hdr_t hdr_new;
  logic starting;  // the framer starts the picked packet
  // Each source's header as a struct of its own (Yosys reads no member of an indexed
  // array of structs).
  for (genvar s = 0; s < NumSrc; s++) begin : gen_src
    ni_pkg::tx_hdr_t h;
    assign h = src_hdr_i[s * ni_pkg::TxHdrW +: ni_pkg::TxHdrW];
    assign eligible[s] = src_hdr_valid_i[s] && has_credit_q[h.vc];
    logic unused_h;  // only the VC is needed here
    assign unused_h = ^h;
  end
  always_comb begin
    pick_valid = 1'b0;
    pick = '0;
    // Round robin: the first eligible source at or after rr_q.
    for (int k = NumSrc - 1; k >= 0; k--) begin
      if (eligible[(32'(rr_q) + 32'(k)) % NumSrc]) begin
        pick_valid = 1'b1;
        pick = SrcW'((32'(rr_q) + 32'(k)) % NumSrc);
      end
    end
    hdr_new = src_hdr_i[32'(pick) * ni_pkg::TxHdrW +: ni_pkg::TxHdrW];
    hdr_new.bytes[6*8 +: 8] = node_id_i[15:8];
    hdr_new.bytes[7*8 +: 8] = node_id_i[7:0];
    if (!hdr_new.raw) begin
      hdr_new.bytes[10*8 +: 8] = pkey_i[15:8];
      hdr_new.bytes[11*8 +: 8] = pkey_i[7:0];
    end
    if (hdr_new.stamp_psn) begin
      hdr_new.bytes[17*8 +: 8] = psn_q[hdr_new.vc][23:16];
      hdr_new.bytes[18*8 +: 8] = psn_q[hdr_new.vc][15:8];
      hdr_new.bytes[19*8 +: 8] = psn_q[hdr_new.vc][7:0];
    end
  end
  // A packet is picked when the framer is idle, and framed from that cycle on: a
  // source that offers its next header only after its last beat (ni_retx) leaves no
  // idle beat between its packets, and a credit is taken only as its packet starts
  // (picked a packet ahead into a register, it would be held there for a packet).
  assign credits_o = credits_q;

  always_comb begin
    src_hdr_ready_o = '0;
    rr_d = rr_q;
    credits_d = credits_q;
    psn_d = psn_q;
    ev_tx_pkt_o = 1'b0;
    for (int v = 0; v < ni_pkg::NumVc; v++) begin
      if (credit_i[v]) credits_d[v] = credits_d[v] + 8'd1;
    end
    if (starting) begin
      src_hdr_ready_o[pick] = 1'b1;
      if (hdr_new.stamp_psn) psn_d[hdr_new.vc] = psn_q[hdr_new.vc] + 24'd1;
      credits_d[hdr_new.vc] = credits_d[hdr_new.vc] - 8'd1;
      rr_d = (pick == SrcW'(NumSrc - 1)) ? '0 : pick + SrcW'(1);
      ev_tx_pkt_o = 1'b1;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rr_q <= '0;
      credits_q <= '0;
      has_credit_q <= '0;
      psn_q <= '0;
    end else begin
      rr_q <= rr_d;
      credits_q <= credits_d;
      for (int v = 0; v < ni_pkg::NumVc; v++) has_credit_q[v] <= credits_d[v] != 8'd0;
      psn_q <= psn_d;
    end
  end

  // ------------------------------------------------------------ frame
  // StCarry: payload bytes left over from the last payload beat (Off != 0 only).
  typedef enum logic [2:0] {StIdle, StHdr, StPay, StTrl, StCarry} state_e;
  state_e state_q, state_d;
  logic [OffW*8-1:0] carry_q, carry_d;
  logic [6:0] carry_n_q, carry_n_d;
  ni_pkg::tx_hdr_t hdr_q, hdr_d, hcur;
  logic [SrcW-1:0] src_q, src_d, src;
  logic [12:0] bs_q, bs_d, bs;
  logic signed [7:0] trl_rel_q, trl_rel_d;
  logic bad_q, bad_d, bad_in;
  state_e st;
  // A packet starts when the framer is idle and a header is picked: its first beat is
  // framed in that same cycle, so back-to-back packets leave no idle beat between them.
  assign starting = (state_q == StIdle) && pick_valid;
  assign hcur = starting ? hdr_new : hdr_q;
  assign st = starting ? ((hdr_new.cont || hdr_new.raw) ? StPay : StHdr) : state_q;
  assign bs = starting ? '0 : bs_q;
  assign bad_in = starting ? 1'b0 : bad_q;
  assign src = starting ? pick : src_q;
  logic unused_stamp;
  // stamp_psn is applied at the pick already; back_page is for ni_retx, not the wire.
  assign unused_stamp = ^{hcur.stamp_psn, hcur.back_page, hcur.bytes};  // bytes: hbeat reads them

  logic [BeatW-1:0] sbeat;
  logic [DataW-1:0] pay_data;
  logic [KeepW-1:0] pay_keep;
  logic pay_last, pay_bad, pay_valid;
  assign sbeat = src_beat_i[src];
  assign pay_data = sbeat[DataW-1:0];
  assign pay_keep = sbeat[DataW +: KeepW];
  assign pay_last = sbeat[DataW + KeepW];
  assign pay_bad = sbeat[DataW + KeepW + 1];
  assign pay_valid = src_beat_valid_i[src];

  logic mix;             // payload lanes shifted up by Off, below them header or carried bytes
  logic pay_take;        // this beat consumes the current payload beat
  logic beat_avail;      // the framer has a beat to give
  logic fr_beat;         // and gives it (to the output register or the beat queue)
  logic signed [15:0] rel;  // trailer start relative to this beat (>= Bpb: not in this beat)
  logic [DataW-1:0] f_data;  // lanes below rel; the others are not cleared here
  logic f_last, f_bad;
  logic signed [7:0] f_rel8;  // rel clipped to Bpb (no trailer lane in this beat)
  // The header record in whole beats: bs is always a whole number of beats, so a lane
  // of the header is a lane of one of these beats (a beat multiplexer, not a byte shifter).
  localparam int unsigned HdrBeats = (ni_pkg::TxHdrBytes + Bpb - 1) / Bpb;
  localparam int unsigned BsLow = $clog2(Bpb);
  logic [HdrBeats*DataW-1:0] hbytes;
  logic [DataW-1:0] hbeat;
  // A starting packet's header beat is its first: the pick reaches it through no
  // beat multiplexer.
  assign hbytes = (HdrBeats*DataW)'(hdr_q.bytes);
  always_comb begin
    hbeat = '0;
    for (int b = 0; b < HdrBeats; b++) begin
      if (32'(bs_q[12:BsLow]) == b) hbeat = hbytes[b*DataW +: DataW];
    end
    if (starting) hbeat = DataW'(hdr_new.bytes);
  end
  `NI_ASSERT(BeatAlignedBs_A, bs[BsLow-1:0] == '0)
  logic [NzW-1:0] kcnt;

  always_comb begin
    kcnt = NzW'(ni_pkg::keep_count(64'(pay_keep)));
    mix = (Off != 0) && !hcur.cont && !hcur.raw && ((st == StHdr && hcur.has_payload) || st == StPay);
    pay_take = (st == StPay) || mix;
    case (st)
      StHdr: begin
        if (!hcur.has_payload) rel = starting ? $signed(16'(hdr_new.len)) : $signed({3'b0, 13'(hdr_q.len) - bs_q});
        else if (!mix) rel = 16'sd32767;
        else rel = (pay_last && 32'(kcnt) <= Bpb - Off) ? 16'(Off + 32'(kcnt)) : 16'sd32767;
      end
      StPay: begin
        if (!mix) rel = pay_last ? $signed(16'(kcnt)) : 16'sd32767;
        else rel = (pay_last && 32'(kcnt) <= Bpb - Off) ? 16'(Off + 32'(kcnt)) : 16'sd32767;
      end
      StTrl: rel = 16'(trl_rel_q);
      StCarry: rel = 16'(carry_n_q);
      default: rel = 16'sd32767;
    endcase
    beat_avail = (st == StHdr && (!mix || pay_valid)) || (st == StTrl) || (st == StCarry) ||
                 (st == StPay && pay_valid);
    for (int j = 0; j < Bpb; j++) begin
      if (st == StHdr && (!mix || LowLanes[j])) f_data[j*8 +: 8] = hbeat[j*8 +: 8];
      else if ((mix || st == StCarry) && LowLanes[j]) f_data[j*8 +: 8] = carry_q[(j % OffW)*8 +: 8];
      else if (mix) f_data[j*8 +: 8] = pay_data[((j + Bpb - Off) % Bpb)*8 +: 8];  // j >= Off here
      else if (hcur.cont && 32'(bs) + j < ni_pkg::ContHdrBytes) f_data[j*8 +: 8] = hbeat[j*8 +: 8];
      else f_data[j*8 +: 8] = pay_data[j*8 +: 8];
    end
    f_bad = bad_in || (pay_take && pay_bad);
    f_rel8 = (rel > BpbS) ? 8'(Bpb) : 8'(rel);
    // The trailer (ICRC, VCRC) ends in this beat. All signed 16-bit: Yosys sized a sum
    // with a cast of a 32-bit value at 32 bits, where a trailer begun in the beat before
    // (rel < 0) wrapped differently (docs/synthesis.md).
    f_last = rel <= BpbS - (hcur.raw ? 16'sd2 : 16'sd6);
  end

  always_comb begin
    src_beat_ready_o = '0;
    state_d = state_q;
    hdr_d = hdr_q;
    src_d = src_q;
    bs_d = bs_q;
    trl_rel_d = trl_rel_q;
    bad_d = bad_q;
    carry_d = carry_q;
    carry_n_d = carry_n_q;
    if (starting) begin
      hdr_d = hdr_new;
      src_d = pick;
      state_d = st;  // StHdr, or StPay for a continuation or a raw packet
      bs_d = '0;
      bad_d = 1'b0;
    end
    if (fr_beat) begin
      src_beat_ready_o[src] = pay_take;
      bs_d = bs + 13'(Bpb);
      bad_d = f_bad;
      trl_rel_d = 8'(rel - 16'(Bpb));
      if (mix) begin
        for (int j = 0; j < OffW; j++) carry_d[j*8 +: 8] = pay_data[((Bpb - Off + j) % Bpb) * 8 +: 8];
        carry_n_d = 7'(32'(kcnt) - (Bpb - Off));
      end
      if (f_last) begin
        state_d = StIdle;
      end else if (rel <= 16'(Bpb)) begin
        state_d = StTrl;  // trailer (or its VCRC part) spills into the next beat
      end else if (mix && pay_last) begin
        state_d = StCarry;  // the last payload bytes did not fit: they go out next
      end else if (st == StHdr && 32'(bs) + Bpb >= 32'(hcur.len)) begin
        state_d = StPay;
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q <= StIdle;
      src_q <= '0;
      bad_q <= 1'b0;
    end else begin
      state_q <= state_d;
      src_q <= src_d;
      bad_q <= bad_d;
    end
  end
  always_ff @(posedge clk_i) begin
    hdr_q <= hdr_d;
    bs_q <= bs_d;
    trl_rel_q <= trl_rel_d;
    carry_q <= carry_d;
    carry_n_q <= carry_n_d;
  end

  // ------------------------------------------------------------ trailer
  // The CRC pipeline sees every framed beat (c1), steps the ICRC and VCRC states over
  // the whole beat with the lanes from rel on as zeros, then in the beat where the
  // data ends (0 <= rel < Bpb) steps them back over those zero lanes (c2: a CRC
  // stepped over zero bytes is an invertible linear map), and steps the VCRC on over
  // the four ICRC bytes (c3), which pushes the packet's trailer. So no cycle holds a
  // chain of per-lane CRC steps.
  logic [DataW-1:0] c1_data_q;
  logic signed [7:0] c1_rel_q, c2_rel_q;
  logic c1_valid_q, c1_first_q, c1_has12_q, c1_bad_q, c1_raw_q;
  logic c2_valid_q, c2_bad_q, c2_raw_q;
  logic c3_valid_q, c3_bad_q, c3_raw_q;
  logic [31:0] s32_q, c3_icrc_q;
  logic [15:0] s16_q, c3_s16_q;

  // c1: both states over the beat's data lanes (the ICRC's with its fields masked).
  logic [31:0] c32;
  logic [15:0] c16;
  logic [DataW-1:0] d16, d32;
  always_comb begin
    for (int j = 0; j < Bpb; j++) begin
      d16[j*8 +: 8] = (32'(j) < 32'(c1_rel_q) && c1_rel_q >= 8'sd0) ? c1_data_q[j*8 +: 8] : 8'h00;
      d32[j*8 +: 8] = d16[j*8 +: 8];
      if (c1_first_q && j == 0) d32[j*8 +: 8] = d32[j*8 +: 8] | 8'hF0;
      if (c1_has12_q && j == Lane12) d32[j*8 +: 8] = 8'hFF;
    end
  end
  ni_crc_step #(.Width(32), .Poly(ni_pkg::Crc32Poly), .Bytes(Bpb)) u_c1_icrc (
    .state_i(c1_first_q ? 32'hFFFF_FFFF : s32_q), .data_i(d32), .state_o(c32)
  );
  ni_crc_step #(.Width(16), .Poly(ni_pkg::Crc16Poly), .Bytes(Bpb)) u_c1_vcrc (
    .state_i(c1_first_q ? 16'hFFFF : s16_q), .data_i(d16), .state_o(c16)
  );

  // c2: in the beat where the data ends, back over the lanes after it. The states c1
  // left are in s32_q and s16_q (c2 follows a c1 beat).
  logic c2_end;
  logic [NzW-1:0] c2_after;
  logic [31:0] back32;
  logic [15:0] back16;
  assign c2_end = c2_valid_q && c2_rel_q >= 8'sd0 && c2_rel_q < 8'(Bpb);
  assign c2_after = NzW'(Bpb - 32'(c2_rel_q[6:0]));
  ni_crc_back #(.Width(32), .Poly(ni_pkg::Crc32Poly), .MaxBytes(Bpb)) u_c2_icrc (
    .state_i(s32_q), .n_i(c2_after), .state_o(back32)
  );
  ni_crc_back #(.Width(16), .Poly(ni_pkg::Crc16Poly), .MaxBytes(Bpb)) u_c2_vcrc (
    .state_i(s16_q), .n_i(c2_after), .state_o(back16)
  );

  // c3: the VCRC on over the ICRC bytes (a raw packet has none); the trailer.
  logic [15:0] vcrc, c3_s16_icrc;
  ni_crc_step #(.Width(16), .Poly(ni_pkg::Crc16Poly), .Bytes(4)) u_c3_vcrc (
    .state_i(c3_s16_q), .data_i(c3_icrc_q), .state_o(c3_s16_icrc)
  );
  assign vcrc = ~(c3_raw_q ? c3_s16_q : c3_s16_icrc) ^ {16{c3_raw_q && c3_bad_q}};

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      {c1_valid_q, c2_valid_q, c3_valid_q} <= '0;
    end else begin
      {c1_valid_q, c2_valid_q, c3_valid_q} <= {fr_beat, c1_valid_q, c2_end};
    end
  end
  always_ff @(posedge clk_i) begin
    if (fr_beat) begin
      c1_data_q <= f_data;
      c1_rel_q <= f_rel8;
      c1_first_q <= bs == '0;
      c1_has12_q <= bs == 13'(Beat12);
      c1_bad_q <= f_bad;
      c1_raw_q <= hcur.raw;
    end
    if (c1_valid_q) begin
      s32_q <= c32;
      s16_q <= c16;
    end
    c2_rel_q <= c1_rel_q;
    c2_bad_q <= c1_bad_q;
    c2_raw_q <= c1_raw_q;
    c3_icrc_q <= ~back32 ^ {32{c2_bad_q}};
    c3_s16_q <= back16;
    c3_bad_q <= c2_bad_q;
    c3_raw_q <= c2_raw_q;
  end

  // Trailers, one per packet in order: {VCRC, ICRC}.
  // A packet's trailer waits for its last beat, which is queued: as many trailers as
  // queued beats at most.
  logic [47:0] trl;
  logic trl_valid, trl_pop, trl_wready;
  ni_fifo #(.Width(48), .Depth(BeatQDepth)) u_trl_q (
    .clk_i, .rst_ni, .wdata_i({vcrc, c3_icrc_q}), .wvalid_i(c3_valid_q), .wready_o(trl_wready),
    .rdata_o(trl), .rvalid_o(trl_valid), .rready_i(trl_pop)
  );

  // ------------------------------------------------------------ beat queue, output
  // A queued beat: {raw, last, vc, rel clipped to Bpb (no trailer lane), lanes}.
  localparam int unsigned QW = 3 + 8 + DataW;
  logic [QW-1:0] q_in, q_head;
  logic q_valid, q_ready, q_wready, q_push, bypass;
  logic adv;
  logic [DataW-1:0] h_data, o_data;
  logic signed [15:0] h_rel;
  logic h_raw, h_last, h_vc, h_trl;
  logic [KeepW-1:0] o_keep;
  logic [DataW-1:0] o_data_q;
  logic [KeepW-1:0] o_keep_q;
  logic o_last_q, o_valid_q, o_vc_q;
  assign adv = !o_valid_q || m_axis_tready;
  // A beat without trailer lanes goes straight to an output register that can take it
  // when nothing is queued; the others are queued (an empty queue has room).
  assign bypass = !q_valid && adv && rel >= BpbS && !starting;  // (a starting beat is queued: a shorter path from the pick)
  assign fr_beat = beat_avail && q_wready;
  assign q_push = fr_beat && !bypass;
  assign q_in = {hcur.raw, f_last, hcur.vc, f_rel8, f_data};
  ni_fifo #(.Width(QW), .Depth(BeatQDepth)) u_beat_q (
    .clk_i, .rst_ni,
    .wdata_i(q_in),
    .wvalid_i(q_push), .wready_o(q_wready),
    .rdata_o(q_head), .rvalid_o(q_valid), .rready_i(q_ready)
  );
  assign {h_raw, h_last, h_vc} = q_head[QW-1 -: 3];
  assign h_rel = {{8{q_head[DataW + 7]}}, q_head[DataW +: 8]};  // sign-extended
  assign h_data = q_head[DataW-1:0];
  assign h_trl = h_rel < BpbS;  // a trailer lane: wait for the trailer
  assign q_ready = adv && (!h_trl || trl_valid);
  assign trl_pop = q_valid && q_ready && h_last;

  // The queued beat's lanes: data below rel, then ICRC (not in a raw packet), VCRC.
  always_comb begin
    for (int j = 0; j < Bpb; j++) begin
      o_data[j*8 +: 8] = 8'h00;
      if ($signed(16'(j)) < h_rel) o_data[j*8 +: 8] = h_data[j*8 +: 8];
      for (int k = 0; k < 6; k++) begin
        if (32'(j) - 32'(h_rel) == 32'(k)) begin
          if (h_raw) o_data[j*8 +: 8] = (k < 2) ? trl[32 + (k % 2)*8 +: 8] : 8'h00;
          else o_data[j*8 +: 8] = trl[k*8 +: 8];
        end
      end
      o_keep[j] = $signed(16'(j)) < h_rel + (h_raw ? 16'sd2 : 16'sd6);
    end
  end

  assign m_axis_tdata = o_data_q;
  assign m_axis_tkeep = o_keep_q;
  assign m_axis_tlast = o_last_q;
  assign m_axis_tdest = o_vc_q;
  assign m_axis_tvalid = o_valid_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) o_valid_q <= 1'b0;
    else if (adv) o_valid_q <= (fr_beat && bypass) || (q_valid && q_ready);
  end
  always_ff @(posedge clk_i) begin
    if (adv && fr_beat && bypass) begin
      o_data_q <= f_data;
      o_keep_q <= '1;
      o_last_q <= 1'b0;
      o_vc_q <= hcur.vc;
    end else if (q_valid && q_ready) begin
      o_data_q <= o_data;
      o_keep_q <= o_keep;
      o_last_q <= h_last;
      o_vc_q <= h_vc;
    end
  end

  `NI_ASSERT(TrailerRoom_A, !c3_valid_q || trl_wready)
  `NI_ASSERT_AXIS_STABLE(FabOutStable_A, m_axis_tvalid, m_axis_tready,
                         {m_axis_tdata, m_axis_tkeep, m_axis_tlast, m_axis_tdest})
  // A header followed by payload is exactly the fabric header: payload lanes start at Off.
  // What the sources and the fabric promise (assumptions of the formal proof).
  `NI_ASSUME(PayloadHeaderLen_A, !(starting && hdr_new.has_payload && !hdr_new.cont && !hdr_new.raw) ||
                                 (32'(hdr_new.len) == ni_pkg::FabHdrBytes))
  `NI_ASSUME(ContHasPayload_A, !(starting && (hdr_new.cont || hdr_new.raw)) || hdr_new.has_payload)
  // Credits never wrap: the fabric returns no more than it was owed.
  `NI_ASSUME(CreditNoWrap_A, !(credit_i[0] && credits_q[0] == 8'hFF) && !(credit_i[1] && credits_q[1] == 8'hFF))
endmodule

`default_nettype wire

// SPDX-License-Identifier: Apache-2.0
// Fabric transmit: picks a source packet (round robin among sources whose VC has
// credit), sends its LRH/BTH/extension header, its payload beats, and the ICRC
// and VCRC right after the last payload byte. Output is packed: no null bytes.
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

  // StCarry: payload bytes left over from the last payload beat (Off != 0 only).
  typedef enum logic [2:0] {StIdle, StHdr, StPay, StTrl, StCarry} state_e;
  state_e state_q, state_d;
  logic [OffW*8-1:0] carry_q, carry_d;
  logic [6:0] carry_n_q, carry_n_d;

  ni_pkg::tx_hdr_t hdr_q, hdr_d;
  logic [SrcW-1:0] src_q, src_d, rr_q, rr_d;
  logic [12:0] bs_q, bs_d;
  logic [31:0] crc32_q, crc32_d;
  logic [15:0] crc16_q, crc16_d;
  logic signed [7:0] trl_rel_q, trl_rel_d;
  logic bad_q, bad_d;
  logic [ni_pkg::NumVc-1:0][7:0] credits_q, credits_d;
  logic [ni_pkg::NumVc-1:0][23:0] psn_q, psn_d;

  // ------------------------------------------------------------ source choice
  logic pick_valid;
  logic [SrcW-1:0] pick;
  logic [NumSrc-1:0] eligible;
  // Each source's header as a struct of its own (Yosys reads no member of an indexed
  // array of structs).
  for (genvar s = 0; s < NumSrc; s++) begin : gen_src
    ni_pkg::tx_hdr_t h;
    assign h = src_hdr_i[s * ni_pkg::TxHdrW +: ni_pkg::TxHdrW];
    assign eligible[s] = src_hdr_valid_i[s] && credits_q[h.vc] != 8'd0;
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
  end

  // ------------------------------------------------------------ next output beat
  // A packet starts in the cycle its source is picked: its first header beat goes
  // out in that same cycle, so back-to-back packets leave no idle beat between them.
  logic starting;
  ni_pkg::tx_hdr_t hdr_new, hcur;
  state_e st;
  logic [12:0] bs;
  logic [31:0] crc32_in;
  logic [15:0] crc16_in;
  logic bad_in;
  logic [SrcW-1:0] src;
  assign starting = (state_q == StIdle) && pick_valid;
  assign credits_o = credits_q;
  always_comb begin
    hdr_new = src_hdr_i[32'(pick) * ni_pkg::TxHdrW +: ni_pkg::TxHdrW];
    hdr_new.bytes[6*8 +: 8] = node_id_i[15:8];
    hdr_new.bytes[7*8 +: 8] = node_id_i[7:0];
    if (hdr_new.stamp_psn) begin
      hdr_new.bytes[17*8 +: 8] = psn_q[hdr_new.vc][23:16];
      hdr_new.bytes[18*8 +: 8] = psn_q[hdr_new.vc][15:8];
      hdr_new.bytes[19*8 +: 8] = psn_q[hdr_new.vc][7:0];
    end
  end
  assign hcur = starting ? hdr_new : hdr_q;
  assign st = starting ? ((hdr_new.cont || hdr_new.raw) ? StPay : StHdr) : state_q;
  assign bs = starting ? '0 : bs_q;
  assign crc32_in = starting ? 32'hFFFF_FFFF : crc32_q;
  assign crc16_in = starting ? 16'hFFFF : crc16_q;
  assign bad_in = starting ? 1'b0 : bad_q;
  assign src = starting ? pick : src_q;
  logic unused_stamp;
  // stamp_psn is applied to hdr_new already; back_page is for ni_retx, not the wire.
  assign unused_stamp = ^{hcur.stamp_psn, hcur.back_page};

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
  logic out_load;        // the output register takes a new beat this cycle
  logic beat_avail;      // the state machine has a beat to give
  logic signed [15:0] rel;  // trailer start relative to this beat (>= Bpb: not in this beat)
  logic [DataW-1:0] nb_data;
  logic [KeepW-1:0] nb_keep;
  logic nb_last;
  logic [31:0] c32, icrc;
  logic [15:0] c16, vcrc;
  // The header record in whole beats: bs is always a whole number of beats, so a lane
  // of the header is a lane of one of these beats (a beat multiplexer, not a byte shifter).
  localparam int unsigned HdrBeats = (ni_pkg::TxHdrBytes + Bpb - 1) / Bpb;
  localparam int unsigned BsLow = $clog2(Bpb);
  logic [HdrBeats*DataW-1:0] hbytes;
  logic [DataW-1:0] hbeat;
  assign hbytes = (HdrBeats*DataW)'(hcur.bytes);
  always_comb begin
    hbeat = '0;
    for (int b = 0; b < HdrBeats; b++) begin
      if (32'(bs[12:BsLow]) == b) hbeat = hbytes[b*DataW +: DataW];
    end
  end
  `NI_ASSERT(BeatAlignedBs_A, bs[BsLow-1:0] == '0)
  localparam int unsigned KcntW = $clog2(Bpb + 1);
  localparam logic signed [15:0] BpbS = 16'(Bpb);
  logic [KcntW-1:0] kcnt;
  logic [31:0] icrc_n;   // ICRC bytes in the trailer
  assign icrc_n = hcur.raw ? 32'd0 : 32'd4;

  always_comb begin
    kcnt = '0;
    for (int j = 0; j < Bpb; j++) kcnt = kcnt + KcntW'(pay_keep[j]);
    mix = (Off != 0) && !hcur.cont && !hcur.raw && ((st == StHdr && hcur.has_payload) || st == StPay);
    pay_take = (st == StPay) || mix;
    case (st)
      StHdr: begin
        if (!hcur.has_payload) rel = $signed({3'b0, 13'(hcur.len) - bs});
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

    // Data lanes and the ICRC over them (variant fields masked).
    nb_data = '0;
    nb_keep = '0;
    c32 = crc32_in;
    for (int j = 0; j < Bpb; j++) begin
      if (32'(j) < 32'(rel) && rel >= 0) begin
        if (st == StHdr && (!mix || LowLanes[j])) nb_data[j*8 +: 8] = hbeat[j*8 +: 8];
        else if ((mix || st == StCarry) && LowLanes[j]) nb_data[j*8 +: 8] = carry_q[(j % OffW)*8 +: 8];
        else if (mix) nb_data[j*8 +: 8] = pay_data[((j + Bpb - Off) % Bpb)*8 +: 8];  // j >= Off here
        else if (hcur.cont && 32'(bs) + j < ni_pkg::ContHdrBytes) nb_data[j*8 +: 8] = hbeat[j*8 +: 8];
        else nb_data[j*8 +: 8] = pay_data[j*8 +: 8];
        nb_keep[j] = 1'b1;
        c32 = ni_pkg::crc32_byte(c32, (st == StHdr || (hcur.cont && 32'(bs) + j < ni_pkg::ContHdrBytes))
                                          ? ni_pkg::icrc_mask(32'(bs) + j, nb_data[j*8 +: 8]) : nb_data[j*8 +: 8]);
      end
    end
    icrc = ~c32 ^ ((bad_in || (pay_take && pay_bad)) ? 32'hFFFF_FFFF : 32'h0);
    // ICRC lanes (not in a raw packet), then the VCRC over everything before it. A lane
    // holds data or an ICRC byte, never both: one CRC step per lane, over what it holds.
    c16 = crc16_in;
    for (int j = 0; j < Bpb; j++) begin
      for (int k = 0; k < 4; k++) begin
        if (!hcur.raw && 32'(j) - 32'(rel) == 32'(k)) begin
          nb_data[j*8 +: 8] = icrc[k*8 +: 8];
          nb_keep[j] = 1'b1;
        end
      end
      if (nb_keep[j]) c16 = ni_pkg::crc16_byte(c16, nb_data[j*8 +: 8]);
    end
    vcrc = ~c16 ^ ((hcur.raw && (bad_in || (pay_take && pay_bad))) ? 16'hFFFF : 16'h0);
    for (int j = 0; j < Bpb; j++) begin
      for (int k = 0; k < 2; k++) begin
        if (32'(j) - 32'(rel) == 32'(k) + icrc_n) begin
          nb_data[j*8 +: 8] = vcrc[k*8 +: 8];
          nb_keep[j] = 1'b1;
        end
      end
    end
    // The trailer (ICRC, VCRC) ends in this beat. All signed 16-bit: Yosys sized a sum
    // with a cast of icrc_n (16'(icrc_n)) at icrc_n's 32 bits, where a trailer begun in
    // the beat before (rel < 0) wrapped differently (docs/synthesis.md).
    nb_last = rel <= BpbS - (hcur.raw ? 16'sd2 : 16'sd6);
  end

  // ------------------------------------------------------------ output register
  logic [DataW-1:0] o_data_q;
  logic [KeepW-1:0] o_keep_q;
  logic o_last_q, o_valid_q, o_vc_q;
  assign out_load = beat_avail && (!o_valid_q || m_axis_tready);
  assign m_axis_tdata = o_data_q;
  assign m_axis_tkeep = o_keep_q;
  assign m_axis_tlast = o_last_q;
  assign m_axis_tdest = o_vc_q;
  assign m_axis_tvalid = o_valid_q;

  always_comb begin
    src_hdr_ready_o = '0;
    src_beat_ready_o = '0;
    state_d = state_q;
    hdr_d = hdr_q;
    src_d = src_q;
    rr_d = rr_q;
    bs_d = bs_q;
    crc32_d = crc32_q;
    crc16_d = crc16_q;
    trl_rel_d = trl_rel_q;
    bad_d = bad_q;
    credits_d = credits_q;
    psn_d = psn_q;
    carry_d = carry_q;
    carry_n_d = carry_n_q;
    ev_tx_pkt_o = 1'b0;
    for (int v = 0; v < ni_pkg::NumVc; v++) begin
      if (credit_i[v]) credits_d[v] = credits_d[v] + 8'd1;
    end
    if (starting) begin
      src_hdr_ready_o[pick] = 1'b1;
      hdr_d = hdr_new;
      if (hdr_new.stamp_psn) psn_d[hdr_new.vc] = psn_q[hdr_new.vc] + 24'd1;
      credits_d[hdr_new.vc] = credits_d[hdr_new.vc] - 8'd1;
      src_d = pick;
      rr_d = (pick == SrcW'(NumSrc - 1)) ? '0 : pick + SrcW'(1);
      state_d = st;  // StHdr, or StPay for a continuation
      bs_d = '0;
      crc32_d = 32'hFFFF_FFFF;
      crc16_d = 16'hFFFF;
      bad_d = 1'b0;
      ev_tx_pkt_o = 1'b1;
    end
    if (st != StIdle && out_load) begin
      src_beat_ready_o[src] = pay_take;
      bs_d = bs + 13'(Bpb);
      crc32_d = c32;
      crc16_d = c16;
      bad_d = bad_in || (pay_take && pay_bad);
      trl_rel_d = 8'(rel - 16'(Bpb));
      if (mix) begin
        for (int j = 0; j < OffW; j++) carry_d[j*8 +: 8] = pay_data[((Bpb - Off + j) % Bpb) * 8 +: 8];
        carry_n_d = 7'(32'(kcnt) - (Bpb - Off));
      end
      if (nb_last) begin
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
      rr_q <= '0;
      credits_q <= '0;
      psn_q <= '0;
      o_valid_q <= 1'b0;
      bad_q <= 1'b0;
    end else begin
      state_q <= state_d;
      src_q <= src_d;
      rr_q <= rr_d;
      credits_q <= credits_d;
      psn_q <= psn_d;
      bad_q <= bad_d;
      if (out_load) o_valid_q <= 1'b1;
      else if (m_axis_tready) o_valid_q <= 1'b0;
    end
  end

  always_ff @(posedge clk_i) begin
    hdr_q <= hdr_d;
    bs_q <= bs_d;
    crc32_q <= crc32_d;
    crc16_q <= crc16_d;
    trl_rel_q <= trl_rel_d;
    carry_q <= carry_d;
    carry_n_q <= carry_n_d;
    if (out_load) begin
      o_data_q <= nb_data;
      o_keep_q <= nb_keep;
      o_last_q <= nb_last;
      o_vc_q <= hcur.vc;
    end
  end

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

// SPDX-License-Identifier: Apache-2.0
// DMA byte counters (seed 003): software loads a counter with the bytes it expects;
// the injection engine takes off the data bytes of each packet that leaves for a
// descriptor naming it (injection counter), the fabric receiver those of each DMA
// packet taken that names it in its TEH (reception counter), and the injection
// engine those of each local-copy TLP written (a reception counter of this node). A
// counter stops at 0; the decrement that brings it there sets its hit-zero bit and
// raises ev_zero_o (STATUS.cnt_zero, which can interrupt); a counter at 0 stays there
// without a new hit. Loading a counter clears its hit-zero bit (in the load's cycle). All
// three decrements may come in every cycle, also for the same counter.
//
// The counters live in block RAM, with one subtractor for all of them (the way
// Corundum keeps statistics counters: accumulate where the events arrive, apply in a
// pipeline):
// - Each source adds its bytes to a running sum per counter (sum_mem, block RAM of its
//   own): S0 reads at the decrement's counter, S1 takes the RAM's output into a
//   register, S2 adds and writes. The two decrements before it may not be in the RAM
//   yet (one is written in this cycle, one was written in the cycle of the read, which
//   block RAM leaves undefined), so their sums are taken from S2's result registers.
// - An update pipeline applies what the sources added since its last visit to one
//   counter a cycle, in stages 0 to 8: 0 picks the counter (a load, else the next
//   counter of a round-robin walk over all of them), 2 reads the three sums (the
//   decrements up to the pick's cycle: that cycle's own, written in this one, is taken
//   from S2), 4 adds two of them, 5 forms their total and stores it (taken_mem), 6
//   takes off the total stored at the last visit (what was added since), 7 subtracts
//   that from the value (val_mem), 8 finds the hit (the difference is negative or 0
//   while the value counts) and writes the live and hit-zero bits; 9 writes the value's
//   copy for register reads (0 where it does not count).
// - A load goes through the same stages: the decrements up to its own cycle are
//   applied to the old value first (they may hit zero), then it sets the value.
// - Every block-RAM read is registered before its data is used, so an update of the
//   same counter one or two stages ahead (behind a load, or with fewer counters than
//   stages) has not written what the read needs. Where one does, the read is reset to
//   0 (the RAM's own output reset) and the value is taken from the update ahead: a
//   register ORed in, or one LUT4 a bit, never a wide multiplexer.
// A counter's hit is therefore found a few cycles after its last decrement (at most
// NumCnt + 9 while no load keeps stage 0). A register read (rd_idx_i, answered in the
// next cycle from a block-RAM copy of the value) gives the value stage 8 last wrote, or the
// value of a load still in the stages: a value at most a cycle older than that, and
// never one from before a load. The running sums count modulo 2**SumW: what a counter gains
// between two visits must stay below that (NumCnt cycles of all three sources at most:
// 3 * 8191 bytes each).
`default_nettype none
`include "ni_assert.svh"

module ni_dma_cnt #(
  parameter int unsigned NumCnt = 32,
  parameter int unsigned SumW = 24,
  localparam int unsigned IdW = $clog2(NumCnt)
) (
  input  logic clk_i,
  input  logic rst_ni,
  // Software: load counter load_idx_i with load_value_i (a CNT_LOAD write).
  input  logic load_i,
  input  logic [IdW-1:0] load_idx_i,
  input  logic [31:0] load_value_i,
  // Decrements: injection side, reception side, local copy.
  input  logic inj_valid_i,
  input  logic [IdW-1:0] inj_id_i,
  input  logic [12:0] inj_bytes_i,
  input  logic rcv_valid_i,
  input  logic [IdW-1:0] rcv_id_i,
  input  logic [12:0] rcv_bytes_i,
  input  logic loc_valid_i,
  input  logic [IdW-1:0] loc_id_i,
  input  logic [12:0] loc_bytes_i,
  // Software: read counter rd_idx_i (a CNT_VALUE read); the value (as of this cycle)
  // comes in the next.
  input  logic [IdW-1:0] rd_idx_i,
  output logic [31:0] rd_value_o,
  output logic [NumCnt-1:0] zero_o,  // hit zero since last loaded
  output logic ev_zero_o,            // a counter reached zero (a cycle after stage 8 found it) ...
  output logic [IdW-1:0] ev_zero_idx_o  // ... this one
);
  localparam int unsigned Srcs = 3;
  localparam int unsigned Last = 7;  // the stage that forms the value and writes val_mem
  localparam int unsigned Wr = 8;    // the stage that finds the hit, writes live_q, zero_q
  logic [Srcs-1:0] src_valid;
  logic [Srcs-1:0][IdW-1:0] src_id;
  logic [Srcs-1:0][12:0] src_bytes;
  assign src_valid = {loc_valid_i, rcv_valid_i, inj_valid_i};
  assign src_id = {loc_id_i, rcv_id_i, inj_id_i};
  assign src_bytes = {loc_bytes_i, rcv_bytes_i, inj_bytes_i};

  // The update pipeline's stages 1 to 8: the op in each (valid, a load, its counter, a
  // load's value).
  logic [Wr:1] st_v_q, st_load_q;
  logic [Wr:1][IdW-1:0] st_idx_q;
  logic [Wr:1][31:0] st_value_q;

  // ------------------------------------------------------------ sources
  // s1..s3: the decrement in S1, S2, and the one before it (its sum in s3_sum_q).
  // Forwarding without a wide multiplexer: when a decrement of one of the two before
  // names the same counter, S0's read is reset to 0 (the block RAM's own output
  // reset), and the sum it needs is either the one S2 is forming (taken from s3_sum_q
  // in S2) or the one before it (kept in s2_pre_q, otherwise 0), so that S2 adds
  // s3_sum_q or the OR of two words: one LUT4 a bit.
  logic [Srcs-1:0] s1_v_q, s2_v_q;
  logic [Srcs-1:0][IdW-1:0] s1_id_q, s2_id_q;
  logic [Srcs-1:0][12:0] s1_bytes_q, s2_bytes_q;
  logic [Srcs-1:0][SumW-1:0] s1_dout, s2_rd_q, s2_pre_q, s2_sum, s3_sum_q;
  logic [Srcs-1:0] s0_near1, s0_near2;  // S0's counter is S1's, S2's
  logic [Srcs-1:0] s1_near1_q, s1_near2_q, s2_near1_q;
  logic [Srcs-1:0] p2_near;                // stage 2's counter is S2's
  logic [Srcs-1:0][SumW-1:0] p3_dout;     // the pipeline's read (stage 2's counter), in stage 3
  for (genvar s = 0; s < Srcs; s++) begin : gen_src
    // Not reset: only differences of it are used. A read and a write of one address in
    // a cycle never matter (no_rw_check: no logic to define them).
    (* ram_style = "block", no_rw_check *) logic [SumW-1:0] sum_mem [NumCnt];
    logic [SumW-1:0] own_q, pipe_q;
    always_ff @(posedge clk_i) begin
      if (s0_near1[s] || s0_near2[s]) own_q <= '0;
      else own_q <= sum_mem[src_id[s]];
      if (p2_near[s]) pipe_q <= '0;
      else pipe_q <= sum_mem[st_idx_q[2]];
      if (s2_v_q[s]) sum_mem[s2_id_q[s]] <= s2_sum[s];
    end
    assign s0_near1[s] = s1_v_q[s] && s1_id_q[s] == src_id[s];
    assign s0_near2[s] = s2_v_q[s] && s2_id_q[s] == src_id[s];
    assign p2_near[s] = s2_v_q[s] && s2_id_q[s] == st_idx_q[2];
    assign s1_dout[s] = own_q;
    assign p3_dout[s] = pipe_q;
    assign s2_sum[s] = (s2_near1_q[s] ? s3_sum_q[s] : s2_rd_q[s] | s2_pre_q[s]) + SumW'(s2_bytes_q[s]);
  end
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      {s1_v_q, s2_v_q} <= '0;
    end else begin
      s1_v_q <= src_valid;
      s2_v_q <= s1_v_q;
    end
  end
  always_ff @(posedge clk_i) begin
    s1_id_q <= src_id;
    s1_bytes_q <= src_bytes;
    s1_near1_q <= s0_near1;
    s1_near2_q <= s0_near2;
    s2_id_q <= s1_id_q;
    s2_bytes_q <= s1_bytes_q;
    s2_rd_q <= s1_dout;
    s2_near1_q <= s1_near1_q;
    for (int s = 0; s < Srcs; s++) begin
      // The sum of the decrement two before (in s3_sum_q now) where it is the one S2 needs.
      s2_pre_q[s] <= (s1_near2_q[s] && !s1_near1_q[s]) ? s3_sum_q[s] : '0;
    end
    s3_sum_q <= s2_sum;
  end

  // ------------------------------------------------------------ 0: pick
  // The counter at rr_q is visited (whether or not a source named it: an update that
  // finds nothing added writes what was there) when no load takes the stage; the
  // pointer waits on it while a load does.
  logic [IdW-1:0] rr_q;
  logic [IdW-1:0] a_idx;
  assign a_idx = load_i ? load_idx_i : rr_q;

  // ------------------------------------------------------------ 2, 3: read the sums
  // Stage 2 reads at its counter; the decrement of the pick's own cycle is in S2 now
  // (written at the end of this cycle): where it names the counter, the read is reset
  // and its sum (in s3_sum_q next cycle) is kept instead.
  logic [Srcs-1:0] p3_near_q;
  logic [Srcs-1:0][SumW-1:0] p4_rd_q, p4_fsum_q, p4_sum;

  // ------------------------------------------------------------ 4: add two
  logic [SumW-1:0] p5_pair_q, p5_last_q;
  for (genvar s = 0; s < Srcs; s++) begin : gen_p4
    assign p4_sum[s] = p4_rd_q[s] | p4_fsum_q[s];
  end

  // ------------------------------------------------------------ 5: total, stored
  // taken_mem: the total of the three sums at the counter's last visit. Stage 4 reads
  // it; the update one stage ahead writes it in the cycle of that read, so its total
  // (in p7_total_q when this one is in 6) is taken instead.
  (* ram_style = "block", no_rw_check *) logic [SumW-1:0] taken_mem [NumCnt];
  logic [SumW-1:0] p5_taken_dout, p5_total, p6_total_q, p6_taken_q, p7_total_q;
  assign p5_total = p5_pair_q + p5_last_q;

  // ------------------------------------------------------------ 6: what was added
  logic [SumW-1:0] p6_added, p7_added_q;
  assign p6_added = p6_total_q - (p6_near1_q ? p7_total_q : p6_taken_q);

  // ------------------------------------------------------------ 7: the new value
  // val_mem: the value, read by stage 5. The updates one and two stages ahead write it
  // after that read and in its cycle: where one of them names the counter, the read is
  // reset, and stage 7 takes the value of the one ahead (r8_val_q, formed in the cycle
  // before) or of the one two ahead (kept in p7_pre_q, otherwise 0). The value is
  // written whether or not it counts (one that does not is never used).
  (* ram_style = "block", no_rw_check *) logic [31:0] val_mem [NumCnt];
  logic [31:0] p6_val_dout, p7_rd_q, p7_pre_q, p7_val, r8_val_q, new_val;
  logic p5_near1, p5_near2, p6_near1_q, p6_near2_q, p7_near1_q;
  logic [32:0] p7_diff, r8_diff_q;
  assign p5_near1 = st_v_q[6] && st_idx_q[6] == st_idx_q[5];
  assign p5_near2 = st_v_q[Last] && st_idx_q[Last] == st_idx_q[5];
  assign p7_val = p7_near1_q ? r8_val_q : p7_rd_q | p7_pre_q;
  assign p7_diff = {1'b0, p7_val} - 33'(p7_added_q);
  assign new_val = st_load_q[Last] ? st_value_q[Last] : p7_diff[31:0];

  // ------------------------------------------------------------ 8: the hit
  // The difference gives the hit: what was added reaches the value (the difference is
  // negative or 0) of a counter whose value counts (live_q: it is not 0). live_q is
  // read by stage 7 and written here: the update one stage ahead's (r9_live_q) is
  // taken where it names the counter.
  logic [NumCnt-1:0] live_q, zero_q;
  logic r8_live, r8_live_q, r8_near_q, r8_behind_q, r8_hit, new_live, r9_live_q, load_behind;
  assign r8_live = r8_near_q ? r9_live_q : r8_live_q;
  assign r8_hit = r8_live && (r8_diff_q[32] || r8_diff_q[31:0] == 32'd0);
  assign new_live = st_load_q[Wr] ? st_value_q[Wr] != 32'd0 : r8_live && !r8_hit;
  // Decodes of stage 8's counter: dec8, it is written (a bit of live_q is one LUT4 with
  // it); set8, its hit-zero bit is set. A bit of zero_q is a flip-flop whose synchronous
  // reset is the load's decode and whose enable is set8 (written as such: as one
  // expression, the synthesis gave each bit a LUT4 of its own, about 70 cells more).
  // From 8 counters on, stage 8's decodes are made of two parts (8 x 4), kept nets,
  // which the bit's LUT4 combines: the synthesis would otherwise decode the counter
  // again for every bit.
  logic [NumCnt-1:0] dec8, set8;
  logic r8_zset;
  assign r8_zset = r8_hit && !st_load_q[Wr] && !r8_behind_q;
  logic [NumCnt-1:0] dec_ld;
  always_comb begin
    dec_ld = '0;
    dec_ld[load_idx_i] = load_i;
  end
  if (IdW >= 3) begin : gen_dec8_split
    (* keep *) logic [NumCnt/4-1:0] hi;
    (* keep *) logic [3:0] lo, set_lo;
    always_comb begin
      hi = '0;
      hi[st_idx_q[Wr][IdW-1:2]] = st_v_q[Wr];
      lo = '0;
      lo[st_idx_q[Wr][1:0]] = 1'b1;
      set_lo = r8_zset ? lo : '0;
    end
    for (genvar k = 0; k < NumCnt; k++) begin : gen_bit
      assign dec8[k] = hi[k / 4] && lo[k % 4];
      assign set8[k] = hi[k / 4] && set_lo[k % 4];
    end
  end else begin : gen_dec8_whole
    always_comb begin
      dec8 = '0;
      dec8[st_idx_q[Wr]] = st_v_q[Wr];
    end
    assign set8 = r8_zset ? dec8 : '0;
  end
  // A load of stage 7's counter follows it (in stages 0 to 6): a hit of decrements
  // before that load leaves the hit-zero bit clear (registered for stage 8, where a
  // load in stage 0 clears the bit in the same cycle).
  always_comb begin
    load_behind = load_i && load_idx_i == st_idx_q[Last];
    for (int k = 1; k < Last; k++) begin
      if (st_v_q[k] && st_load_q[k] && st_idx_q[k] == st_idx_q[Last]) load_behind = 1'b1;
    end
  end

  // ------------------------------------------------------------ read
  // A register read (rd_idx_i) is answered in the next cycle, as of its request cycle:
  // - a load of the counter still in the stages (1 to 8): the youngest one's value.
  //   Loads wait in lv_mem (LUT RAM, 16 slots: a slot is not written again until 8
  //   more loads, so it still holds the value when the answer reads it); the stages
  //   carry their slot, and the request registers the slot of the youngest match.
  // - else the value in rd_mem (block RAM: val_mem's copy for this read), written by
  //   stage 9 from r9_val_q, which stage 8 fills with its value where it counts and
  //   clears where it does not (the flip-flops' synchronous reset): so no live bit is
  //   looked up for the read. Where stage 9 writes the counter in the request's cycle
  //   (the read would be undefined), r9_val_q is taken instead.
  // The RAM's read is reset to 0 (its output reset) unless it is the answer, and so is
  // the register for stage 9's value: the answer is the OR of those two words and a
  // load's value, one LUT4 a bit.
  logic [3:0] lv_wr_q;
  logic [Wr:1][3:0] st_slot_q;
  logic [31:0] lv_mem [16];
  (* ram_style = "block", no_rw_check *) logic [31:0] rd_mem [NumCnt];
  logic [3:0] rd_slot, rd_slot_q;
  logic rd_loaded, rd_near, rd_loaded_q, r9_v_q;
  logic [31:0] rd_dout_q, r9_val_q, rd_near_q;
  assign rd_near = r9_v_q && ev_zero_idx_o == rd_idx_i;  // ev_zero_idx_o: stage 9's counter
  always_comb begin
    rd_loaded = 1'b0;
    rd_slot = st_slot_q[1];
    for (int k = Wr; k >= 1; k--) begin  // the youngest (lowest stage) last
      if (st_v_q[k] && st_load_q[k] && st_idx_q[k] == rd_idx_i) begin
        rd_loaded = 1'b1;
        rd_slot = st_slot_q[k];
      end
    end
  end
  always_ff @(posedge clk_i) begin
    if (rd_loaded || rd_near) rd_dout_q <= '0;
    else rd_dout_q <= rd_mem[rd_idx_i];
    if (r9_v_q) rd_mem[ev_zero_idx_o] <= r9_val_q;
    rd_loaded_q <= rd_loaded;
    rd_slot_q <= rd_slot;
    if (rd_near && !rd_loaded) rd_near_q <= r9_val_q;
    else rd_near_q <= '0;
    if (new_live) r9_val_q <= r8_val_q;
    else r9_val_q <= '0;
  end
  assign rd_value_o = rd_dout_q
                    | rd_near_q | (rd_loaded_q ? lv_mem[rd_slot_q] : 32'd0);
  assign zero_o = zero_q;

  // ------------------------------------------------------------ registers
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      st_v_q <= '0;
      r9_v_q <= 1'b0;
      live_q <= '0;
      zero_q <= '0;
      rr_q <= '0;
      lv_wr_q <= '0;
      ev_zero_o <= 1'b0;
    end else begin
      st_v_q <= {st_v_q[Wr-1:1], 1'b1};  // stage 0 always picks a counter
      r9_v_q <= st_v_q[Wr];
      if (!load_i) rr_q <= rr_q + IdW'(1);
      if (load_i) lv_wr_q <= lv_wr_q + 4'd1;
      // A load clears the hit-zero bit in its own cycle (a register read right after it
      // must see the bit clear); a hit found later of decrements before it (a load in
      // stages 0 to 6 when the hit was found, or in stage 0 now) raises the event but
      // leaves the bit clear.
      for (int k = 0; k < NumCnt; k++) begin
        if (dec8[k]) live_q[k] <= new_live;
        if (dec_ld[k]) zero_q[k] <= 1'b0;
        else if (set8[k]) zero_q[k] <= 1'b1;
      end
      ev_zero_o <= st_v_q[Wr] && r8_hit;
    end
  end
  // Datapath: not reset (the valid bits say what the stages hold).
  always_ff @(posedge clk_i) begin
    st_load_q <= {st_load_q[Wr-1:1], load_i};
    st_idx_q <= {st_idx_q[Wr-1:1], a_idx};
    st_value_q <= {st_value_q[Wr-1:1], load_value_i};
    st_slot_q <= {st_slot_q[Wr-1:1], lv_wr_q};
    if (load_i) lv_mem[lv_wr_q] <= load_value_i;
    // 2, 3: the sums
    p3_near_q <= p2_near;
    p4_rd_q <= p3_dout;
    for (int s = 0; s < Srcs; s++) begin
      p4_fsum_q[s] <= p3_near_q[s] ? s3_sum_q[s] : '0;  // S2's sum as stage 2 read
    end
    // 4, 5, 6: the total, stored, and what was added since the last one
    p5_pair_q <= p4_sum[0] + p4_sum[1];
    p5_last_q <= p4_sum[2];
    p5_taken_dout <= taken_mem[st_idx_q[4]];
    if (st_v_q[5]) taken_mem[st_idx_q[5]] <= p5_total;
    p6_total_q <= p5_total;
    p6_taken_q <= p5_taken_dout;
    p7_total_q <= p6_total_q;
    p7_added_q <= p6_added;
    // 5, 6, 7: the value
    if (p5_near1 || p5_near2) p6_val_dout <= '0;
    else p6_val_dout <= val_mem[st_idx_q[5]];
    p6_near1_q <= p5_near1;
    p6_near2_q <= p5_near2;
    p7_rd_q <= p6_val_dout;
    p7_near1_q <= p6_near1_q;
    p7_pre_q <= (p6_near2_q && !p6_near1_q) ? r8_val_q : '0;  // formed by the update two ahead
    if (st_v_q[Last]) val_mem[st_idx_q[Last]] <= new_val;
    r8_val_q <= new_val;
    r8_diff_q <= p7_diff;
    r8_live_q <= live_q[st_idx_q[Last]];
    r8_near_q <= p7_near1_q;  // the update one ahead names the counter
    r8_behind_q <= load_behind;
    r9_live_q <= new_live;
    ev_zero_idx_o <= st_idx_q[Wr];
  end
endmodule

`default_nettype wire

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
// The counters live in RAM (LUT RAM on an FPGA), with one subtractor for all of them:
// - Each source adds its bytes to a running sum per counter (sum_mem, its own RAM: a
//   read, an add and a write in the cycle of its decrement).
// - An update pipeline applies what the sources added since its last visit to one
//   counter a cycle: A picks the counter (a load, else the next counter of a round-
//   robin walk over all of them), B reads the three sums and the total taken before
//   (taken_mem), C forms what was added (their sum, less the total taken) and stores
//   the new total, D subtracts it from the value (val_mem), stopping at 0, and finds
//   the hit.
// - A load goes through the same stages: the decrements up to its own cycle are
//   applied to the old value first (they may hit zero), then it sets the value.
// - A counter is not picked while an update of it is in the stages (its value and
//   total would be read before they are written); a load may follow one, and takes
//   the results still on their way (the total from C, the value from D).
// A counter's hit is therefore found a few cycles after its last decrement (at most
// NumCnt + 4 while no load keeps stage A). A register read (rd_idx_i, answered in the
// same cycle) gives the value as last written, or the value of a load still in the
// stages: a value at most that many cycles old, and never one from before a load.
// The running sums count modulo 2**SumW: what a counter gains between two visits must
// stay below that (NumCnt cycles of all three sources at most: 3 * 8191 bytes each).
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
  // Software: read counter rd_idx_i (a CNT_VALUE read), answered in the same cycle.
  input  logic [IdW-1:0] rd_idx_i,
  output logic [31:0] rd_value_o,
  output logic [NumCnt-1:0] zero_o,  // hit zero since last loaded
  output logic ev_zero_o,            // a counter reached zero (a cycle after D found it) ...
  output logic [IdW-1:0] ev_zero_idx_o  // ... this one
);
  localparam int unsigned Srcs = 3;
  logic [Srcs-1:0] src_valid;
  logic [Srcs-1:0][IdW-1:0] src_id;
  logic [Srcs-1:0][12:0] src_bytes;
  assign src_valid = {loc_valid_i, rcv_valid_i, inj_valid_i};
  assign src_id = {loc_id_i, rcv_id_i, inj_id_i};
  assign src_bytes = {loc_bytes_i, rcv_bytes_i, inj_bytes_i};

  // The stages' registers (B, C, D: the op in that stage).
  logic b_valid_q, c_valid_q, d_valid_q;
  logic b_load_q, c_load_q, d_load_q;
  logic [IdW-1:0] b_idx_q, c_idx_q, d_idx_q;
  logic [31:0] b_value_q, c_value_q, d_value_q;  // a load's value
  logic c_value_nz_q, d_value_nz_q;
  logic [SumW-1:0] c_pair_q, c_last_q;           // the sources' sums, read in B: the
                                                 // first two added, the third
  logic [SumW-1:0] c_taken_q;                    // the total taken before, read in B
  logic [SumW-1:0] d_added_q;                    // what was added since, formed in C
  logic [31:0] d_val_q;                          // the value before, read in C
  logic d_live_q;                                // ... and whether it counts (not at 0)

  // Per counter: the value is not 0 (live), it hit zero since loaded.
  logic [NumCnt-1:0] live_q, zero_q;
  logic [IdW-1:0] rr_q;

  // ------------------------------------------------------------ sources
  logic [Srcs-1:0][SumW-1:0] b_sum;
  for (genvar s = 0; s < Srcs; s++) begin : gen_src
    logic [SumW-1:0] sum_mem [NumCnt];  // not reset: only differences of it are used
    always_ff @(posedge clk_i) begin
      if (src_valid[s]) sum_mem[src_id[s]] <= sum_mem[src_id[s]] + SumW'(src_bytes[s]);
    end
    assign b_sum[s] = sum_mem[b_idx_q];
  end

  // ------------------------------------------------------------ A: pick
  // The counter at rr_q is visited (whether or not a source named it: an update that
  // finds nothing added writes what was there) when no load takes the stage and no
  // update of it is in B, C or D (behind a load, or with fewer than 4 counters); the
  // pointer waits on it while a load takes the stage.
  logic busy, issue, a_valid;
  logic [IdW-1:0] a_idx;
  assign busy = (b_valid_q && b_idx_q == rr_q) || (c_valid_q && c_idx_q == rr_q) ||
                (d_valid_q && d_idx_q == rr_q);
  assign issue = !load_i && !busy;
  assign a_valid = load_i || issue;
  assign a_idx = load_i ? load_idx_i : rr_q;

  // ------------------------------------------------------------ B: read the sums
  // (the first two added here, so that C has one carry chain per result)
  logic [SumW-1:0] taken_mem [NumCnt];  // the sum of the three sums at the last update
  logic [SumW-1:0] c_total;             // that sum now (formed in C)
  logic [SumW-1:0] b_taken;
  // An update of the same counter in C stores its total at the end of this cycle.
  assign b_taken = (c_valid_q && c_idx_q == b_idx_q) ? c_total : taken_mem[b_idx_q];

  // ------------------------------------------------------------ C: what was added
  // c_added = pair + last - taken, as one add of a carry-save pair (x, y): the bits of
  // pair + last + ~taken, and their carries moved up a place with the 1 of -taken.
  logic [31:0] val_mem [NumCnt];
  logic [SumW-1:0] c_added, csa_x, csa_y, c_untaken;
  logic [31:0] c_val;
  logic c_live;
  logic [31:0] d_val_new;
  logic d_live_new, d_hit;
  assign c_total = c_pair_q + c_last_q;
  assign c_untaken = ~c_taken_q;
  assign csa_x = c_pair_q ^ c_last_q ^ c_untaken;
  assign csa_y = {(c_pair_q[SumW-2:0] & c_last_q[SumW-2:0]) | (c_pair_q[SumW-2:0] & c_untaken[SumW-2:0]) |
                  (c_last_q[SumW-2:0] & c_untaken[SumW-2:0]), 1'b1};
  assign c_added = csa_x + csa_y;
  `NI_ASSERT(AddedIsDifference_A, c_valid_q |-> c_added == c_total - c_taken_q)
  // An update of the same counter in D writes its results at the end of this cycle.
  assign c_val = (d_valid_q && d_idx_q == c_idx_q) ? d_val_new : val_mem[c_idx_q];
  // (The live bits read at one index each are kept nets of their own: Yosys would
  // otherwise build the 32-to-1 multiplexer again for every bit it gates.)
  (* keep *) logic c_live_mem;
  assign c_live_mem = live_q[c_idx_q];
  assign c_live = (d_valid_q && d_idx_q == c_idx_q) ? d_live_new : c_live_mem;

  // ------------------------------------------------------------ D: the new value
  // load_behind: a load of D's counter follows it (in A, B or C).
  logic load_behind;
  assign load_behind = (load_i && load_idx_i == d_idx_q) || (b_valid_q && b_load_q && b_idx_q == d_idx_q) ||
                       (c_valid_q && c_load_q && c_idx_q == d_idx_q);
  assign d_hit = d_live_q && {8'd0, d_added_q} >= 32'(d_val_q);
  always_comb begin
    d_val_new = (d_live_q && !d_hit) ? d_val_q - 32'(d_added_q) : 32'd0;
    d_live_new = d_live_q && !d_hit;
    if (d_load_q) begin
      d_val_new = d_value_q;
      d_live_new = d_value_nz_q;
    end
  end

  // ------------------------------------------------------------ read
  // The youngest load of the counter still in the stages, else the value written.
  (* keep *) logic rd_live;
  assign rd_live = live_q[rd_idx_i];
  always_comb begin
    rd_value_o = rd_live ? val_mem[rd_idx_i] : 32'd0;
    if (d_valid_q && d_load_q && d_idx_q == rd_idx_i) rd_value_o = d_value_q;
    if (c_valid_q && c_load_q && c_idx_q == rd_idx_i) rd_value_o = c_value_q;
    if (b_valid_q && b_load_q && b_idx_q == rd_idx_i) rd_value_o = b_value_q;
  end
  assign zero_o = zero_q;

  // ------------------------------------------------------------ registers
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      {b_valid_q, c_valid_q, d_valid_q} <= '0;
      live_q <= '0;
      zero_q <= '0;
      rr_q <= '0;
      ev_zero_o <= 1'b0;
    end else begin
      b_valid_q <= a_valid;
      c_valid_q <= b_valid_q;
      d_valid_q <= c_valid_q;
      if (!load_i) rr_q <= rr_q + IdW'(1);
      if (d_valid_q) live_q[d_idx_q] <= d_live_new;
      // A load clears the hit-zero bit in its own cycle (a register read right after it
      // must see the bit clear); a hit found later of decrements before it raises the
      // event but leaves the bit clear.
      if (d_valid_q && d_hit && !d_load_q && !load_behind) zero_q[d_idx_q] <= 1'b1;
      if (load_i) zero_q[load_idx_i] <= 1'b0;
      ev_zero_o <= d_valid_q && d_hit;
    end
  end
  // Datapath: not reset (the valid bits say what the stages hold).
  always_ff @(posedge clk_i) begin
    b_load_q <= load_i;
    b_idx_q <= a_idx;
    b_value_q <= load_value_i;
    c_load_q <= b_load_q;
    c_idx_q <= b_idx_q;
    c_value_q <= b_value_q;
    c_value_nz_q <= b_value_q != 32'd0;
    c_pair_q <= b_sum[0] + b_sum[1];
    c_last_q <= b_sum[2];
    // (The enable and the reset term below keep these registers at the RAMs' outputs: a
    // plain register there would be moved to the read address, putting the RAM's read
    // in front of the next stage's carry chain.)
    if (b_valid_q) c_taken_q <= b_taken;
    d_load_q <= c_load_q;
    d_idx_q <= c_idx_q;
    d_value_q <= c_value_q;
    d_value_nz_q <= c_value_nz_q;
    d_added_q <= c_added;
    d_val_q <= c_live ? c_val : 32'd0;  // read only while live
    d_live_q <= c_live;
    if (c_valid_q) taken_mem[c_idx_q] <= c_total;
    if (d_valid_q) val_mem[d_idx_q] <= d_val_new;
    ev_zero_idx_o <= d_idx_q;
  end

  // A counter is in the stages at most once, except behind a load (which may follow
  // an update of it).
  `NI_ASSERT(NoPickInFlight_A, issue |-> !busy)
  `NI_ASSERT(DrainBehindNothing_A, (b_valid_q && !b_load_q) |->
             !((c_valid_q && c_idx_q == b_idx_q) || (d_valid_q && d_idx_q == b_idx_q)))
endmodule

`default_nettype wire

// SPDX-License-Identifier: Apache-2.0
// DMA byte counters (seed 003): software loads a counter with the bytes it expects;
// the injection engine takes off the data bytes of each packet that leaves for a
// descriptor naming it (injection counter), the fabric receiver those of each DMA
// packet taken that names it in its TEH (reception counter), and the injection
// engine those of each local-copy TLP written (a reception counter of this node). A
// counter stops at 0;
// the decrement that brings it there sets its hit-zero bit and raises its bit of ev_zero_o
// (STATUS.cnt_zero, which can interrupt); a counter at 0 stays there without a new
// hit. Loading a counter clears its hit-zero bit; a load shows in value_o from the
// next cycle on and wins over a decrement in its own cycle. NumCnt is a power of two.
// All three decrements may come in one cycle, also for the same counter.
`default_nettype none

module ni_dma_cnt #(
  parameter int unsigned NumCnt = 32,
  localparam int unsigned IdW = $clog2(NumCnt)
) (
  input  logic clk_i,
  input  logic rst_ni,
  // Software: load counter i with load_value_i (one register write: one counter at a time).
  input  logic [NumCnt-1:0] load_i,
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
  output logic [NumCnt-1:0][31:0] value_o,
  output logic [NumCnt-1:0] zero_o,  // hit zero since last loaded
  output logic [NumCnt-1:0] ev_zero_o  // bit i: counter i reached zero this cycle
);
  logic [NumCnt-1:0][31:0] val_q, val_d;
  logic [NumCnt-1:0] zero_q, zero_d;
  logic [NumCnt-1:0] nz_q, nz_d;  // the value is not 0 (a flag, not a 32-bit test per counter)
  logic [NumCnt-1:0] hit;

  // The bytes a counter loses this cycle, summed once per source rather than per
  // counter: each source's sum adds the bytes of the later sources that name its
  // counter too, and a counter takes the sum of the first source naming it.
  logic ir, il, rl;  // two sources name the same counter
  logic [14:0] inj_sum, rcv_sum, loc_sum;
  assign ir = inj_valid_i && rcv_valid_i && inj_id_i == rcv_id_i;
  assign il = inj_valid_i && loc_valid_i && inj_id_i == loc_id_i;
  assign rl = rcv_valid_i && loc_valid_i && rcv_id_i == loc_id_i;
  assign inj_sum = 15'(inj_bytes_i) + (ir ? 15'(rcv_bytes_i) : 15'd0) + (il ? 15'(loc_bytes_i) : 15'd0);
  assign rcv_sum = 15'(rcv_bytes_i) + (rl ? 15'(loc_bytes_i) : 15'd0);
  assign loc_sum = 15'(loc_bytes_i);

  always_comb begin
    logic [14:0] dec;
    logic [32:0] diff;
    val_d = val_q;
    zero_d = zero_q;
    nz_d = nz_q;
    hit = '0;
    for (int i = 0; i < NumCnt; i++) begin
      dec = '0;
      diff = '0;
      if (inj_valid_i && inj_id_i == IdW'(i)) dec = inj_sum;
      else if (rcv_valid_i && rcv_id_i == IdW'(i)) dec = rcv_sum;
      else if (loc_valid_i && loc_id_i == IdW'(i)) dec = loc_sum;
      if (dec != 15'd0 && nz_q[i]) begin
        // One subtractor: its borrow is the comparison (a counter stops at 0).
        diff = {1'b0, val_q[i]} - {18'b0, dec};
        val_d[i] = diff[32] ? 32'd0 : diff[31:0];
        nz_d[i] = !diff[32] && diff[31:0] != 32'd0;
        hit[i] = !nz_d[i] && !load_i[i];  // a load in the same cycle wins
      end
      if (hit[i]) zero_d[i] = 1'b1;
      if (load_i[i]) begin
        val_d[i] = load_value_i;
        zero_d[i] = 1'b0;
        nz_d[i] = load_value_i != 32'd0;
      end
    end
  end
  assign value_o = val_q;
  assign zero_o = zero_q;
  assign ev_zero_o = hit;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      val_q <= '0;
      zero_q <= '0;
      nz_q <= '0;
    end else begin
      val_q <= val_d;
      zero_q <= zero_d;
      nz_q <= nz_d;
    end
  end

endmodule

`default_nettype wire

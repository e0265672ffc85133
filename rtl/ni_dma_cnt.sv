// SPDX-License-Identifier: Apache-2.0
// DMA byte counters (seed 003): software loads a counter with the bytes it expects;
// the injection engine takes off the data bytes of each packet that leaves for a
// descriptor naming it (injection counter), the fabric receiver those of each DMA
// packet taken that names it in its TEH (reception counter), and the injection
// engine those of each local-copy TLP written (a reception counter of this node). A
// counter stops at 0;
// the decrement that brings it there sets its hit-zero bit and raises its bit of ev_zero_o
// (STATUS.cnt_zero, which can interrupt); a counter at 0 stays there without a new
// hit. Loading a counter clears its hit-zero bit. NumCnt is a power of two.
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
  logic [14:0] dec;
  logic [32:0] diff;
  logic [NumCnt-1:0] hit;

  always_comb begin
    val_d = val_q;
    zero_d = zero_q;
    hit = '0;
    for (int i = 0; i < NumCnt; i++) begin
      dec = '0;
      diff = '0;
      if (inj_valid_i && inj_id_i == IdW'(i)) dec = dec + {2'b0, inj_bytes_i};
      if (rcv_valid_i && rcv_id_i == IdW'(i)) dec = dec + {2'b0, rcv_bytes_i};
      if (loc_valid_i && loc_id_i == IdW'(i)) dec = dec + {2'b0, loc_bytes_i};
      if (dec != 15'd0 && val_q[i] != 32'd0) begin
        // One subtractor: its borrow is the comparison (a counter stops at 0).
        diff = {1'b0, val_q[i]} - {18'b0, dec};
        val_d[i] = diff[32] ? 32'd0 : diff[31:0];
        hit[i] = val_d[i] == 32'd0 && !load_i[i];  // a load in the same cycle wins
      end
      if (hit[i]) zero_d[i] = 1'b1;
      if (load_i[i]) begin
        val_d[i] = load_value_i;
        zero_d[i] = 1'b0;
      end
    end
  end
  // A load shows at once: a register read right after the load's write sees it.
  always_comb begin
    for (int i = 0; i < NumCnt; i++) begin
      value_o[i] = load_i[i] ? load_value_i : val_q[i];
      zero_o[i] = zero_q[i] && !load_i[i];
    end
  end
  assign ev_zero_o = hit;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      val_q <= '0;
      zero_q <= '0;
    end else begin
      val_q <= val_d;
      zero_q <= zero_d;
    end
  end

endmodule

`default_nettype wire

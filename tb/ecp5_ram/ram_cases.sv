// SPDX-License-Identifier: Apache-2.0
// Memories in the styles Yosys maps to the ECP5 block RAM DP16KD, one per geometry and
// write mode that sim/ecp5_cells.v models. test_ecp5_ram runs this RTL in lockstep
// with its own synth_ecp5 netlist (the DP16KDs simulated by that model) and compares
// every read: the model must mean what Yosys meant by its mapping.
// All memories share the ports' inputs; each takes the address bits it needs. Where
// both ports write, port B has its own clock: with one clock, Yosys 0.70 mapped them to
// flip-flops (it orders two write ports of one clock; the block RAM has no such order).
// Plain Verilog `always`, not always_ff: a memory written by two processes is how
// Yosys infers a true dual port, and SystemVerilog allows that only outside always_ff.
`default_nettype none

module ram_cases (
  input  wire clk_i,   // port A's clock, and the clock of the single-clock memories
  input  wire clkb_i,  // port B's clock in the memories both of whose ports write
  input  wire rst_ni,  // asynchronous reset of fifo_o
  input  wire srst_i,  // synchronous clear of w36_o
  input  wire a_en_i,
  input  wire a_we_i,
  input  wire [3:0] a_be_i,
  input  wire [13:0] a_addr_i,
  input  wire [71:0] a_wdata_i,
  input  wire b_en_i,
  input  wire b_we_i,
  input  wire [1:0] b_be_i,
  input  wire [13:0] b_addr_i,
  input  wire [17:0] b_wdata_i,
  output reg  [0:0] w1_a_o, w1_b_o,    // 16384 x 1, both ports read and write, old data
  output reg  [1:0] w2_a_o, w2_b_o,    // 8192 x 2, a write shows the new data
  output reg  [3:0] w4_a_o, w4_b_o,    // 4096 x 4, a write leaves the output
  output reg  [8:0] w9_a_o, w9_b_o,    // 2048 x 9, old data
  output reg  [17:0] w18_a_o, w18_b_o, // 1024 x 18, two 9-bit byte enables per port
  output reg  [35:0] w36_o,            // 512 x 36, port A writes 4 bytes, port B reads
  output reg  [31:0] host_a_o, host_b_o,  // ni_board_host's node memory, 4096 words
  output reg  [71:0] fifo_o            // ni_fifo's style: 512 x 72, the written word forwarded
);
  reg [0:0] m1 [16384];
  always @(posedge clk_i) if (a_en_i) begin
    if (a_we_i) m1[a_addr_i] <= a_wdata_i[0:0];
    w1_a_o <= m1[a_addr_i];
  end
  always @(posedge clkb_i) if (b_en_i) begin
    if (b_we_i) m1[b_addr_i] <= b_wdata_i[0:0];
    w1_b_o <= m1[b_addr_i];
  end

  reg [1:0] m2 [8192];
  always @(posedge clk_i) if (a_en_i) begin
    if (a_we_i) begin
      m2[a_addr_i[12:0]] <= a_wdata_i[1:0];
      w2_a_o <= a_wdata_i[1:0];
    end else w2_a_o <= m2[a_addr_i[12:0]];
  end
  always @(posedge clkb_i) if (b_en_i) begin
    if (b_we_i) begin
      m2[b_addr_i[12:0]] <= b_wdata_i[1:0];
      w2_b_o <= b_wdata_i[1:0];
    end else w2_b_o <= m2[b_addr_i[12:0]];
  end

  reg [3:0] m4 [4096];
  always @(posedge clk_i) if (a_en_i) begin
    if (a_we_i) m4[a_addr_i[11:0]] <= a_wdata_i[3:0];
    else w4_a_o <= m4[a_addr_i[11:0]];
  end
  always @(posedge clkb_i) if (b_en_i) begin
    if (b_we_i) m4[b_addr_i[11:0]] <= b_wdata_i[3:0];
    else w4_b_o <= m4[b_addr_i[11:0]];
  end

  reg [8:0] m9 [2048];
  always @(posedge clk_i) if (a_en_i) begin
    if (a_we_i) m9[a_addr_i[10:0]] <= a_wdata_i[8:0];
    w9_a_o <= m9[a_addr_i[10:0]];
  end
  always @(posedge clkb_i) if (b_en_i) begin
    if (b_we_i) m9[b_addr_i[10:0]] <= b_wdata_i[8:0];
    w9_b_o <= m9[b_addr_i[10:0]];
  end

  reg [17:0] m18 [1024];
  always @(posedge clk_i) if (a_en_i) begin
    if (a_we_i && a_be_i[0]) m18[a_addr_i[9:0]][8:0] <= a_wdata_i[8:0];
    if (a_we_i && a_be_i[1]) m18[a_addr_i[9:0]][17:9] <= a_wdata_i[17:9];
    w18_a_o <= m18[a_addr_i[9:0]];
  end
  always @(posedge clkb_i) if (b_en_i) begin
    if (b_we_i && b_be_i[0]) m18[b_addr_i[9:0]][8:0] <= b_wdata_i[8:0];
    if (b_we_i && b_be_i[1]) m18[b_addr_i[9:0]][17:9] <= b_wdata_i[17:9];
    w18_b_o <= m18[b_addr_i[9:0]];
  end

  // The read register has a synchronous reset.
  reg [35:0] m36 [512];
  integer i;
  always @(posedge clk_i) begin
    if (a_en_i && a_we_i)
      for (i = 0; i < 4; i = i + 1)
        if (a_be_i[i]) m36[a_addr_i[8:0]][9*i +: 9] <= a_wdata_i[9*i +: 9];
    if (srst_i) w36_o <= 36'b0;
    else if (b_en_i) w36_o <= m36[b_addr_i[8:0]];
  end

  // As rtl/board/ni_board_host.sv writes its memory: bytes on port A, reads on both.
  reg [31:0] mh [4096];
  integer b;
  always @(posedge clk_i) begin
    if (a_we_i)
      for (b = 0; b < 4; b = b + 1)
        if (a_be_i[b]) mh[a_addr_i[11:0]][8*b +: 8] <= a_wdata_i[8*b +: 8];
    host_a_o <= mh[a_addr_i[11:0]];
  end
  always @(posedge clk_i) host_b_o <= mh[b_addr_i[11:0]];

  // As rtl/common/ni_fifo.sv reads its block RAM: the read register has an asynchronous reset
  // and shows the word being written to the address it reads.
  reg [71:0] mf [512];
  always @(posedge clk_i) if (a_en_i && a_we_i) mf[a_addr_i[8:0]] <= a_wdata_i;
  always @(posedge clk_i or negedge rst_ni)
    if (!rst_ni) fifo_o <= 72'b0;
    else if (b_en_i) fifo_o <= (a_en_i && a_we_i && a_addr_i[8:0] == b_addr_i[8:0]) ? a_wdata_i : mf[b_addr_i[8:0]];
endmodule

`default_nettype wire

// SPDX-License-Identifier: Apache-2.0
// Simulation model of the ECP5 block RAM DP16KD, for the board top's netlist as Yosys
// maps it to ECP5 cells (make postsynth). Yosys ships models of the other cells it
// maps to (LUT4, PFUMX, L6MUX21, CCU2C, TRELLIS_FF, TRELLIS_DPR16X4: included below
// from its share/ecp5 directory) but declares DP16KD without a body, so it is written
// here. It covers what Yosys's mapping (share/lattice/brams_map_16kd.v) produces:
//   - both ports of one width: 1, 2, 4, 9 or 18 bits (true dual port; at 18 bits
//     AD1:0 are the write enables of the two 9-bit bytes), or 36 (port A writes
//     {DIB, DIA} with AD3:0 as the four byte enables, port B reads {DOB, DOA});
//   - the address in AD13 down to AD(log2 of the width, 5 at 36 bits);
//   - REGMODE NOREG: the read data register is the output, one cycle after the
//     address; WRITEMODE NORMAL (a write leaves the output), WRITETHROUGH (shows the
//     data written), READBEFOREWRITE (shows the word before the write);
//   - RST clears the output register (RESETMODE ASYNC at once, SYNC at the clock).
// Anything else (mixed widths, OUTREG, chip-select decoding, initial contents) stops
// the simulation at time 0 rather than being simulated wrong.
`include "common_sim.vh"
`include "ccu2c_sim.vh"

module DP16KD (
  input  DIA17, DIA16, DIA15, DIA14, DIA13, DIA12, DIA11, DIA10, DIA9, DIA8, DIA7, DIA6, DIA5, DIA4, DIA3, DIA2, DIA1, DIA0,
  input  ADA13, ADA12, ADA11, ADA10, ADA9, ADA8, ADA7, ADA6, ADA5, ADA4, ADA3, ADA2, ADA1, ADA0,
  input  CEA, OCEA, CLKA, WEA, CSA2, CSA1, CSA0, RSTA,
  input  DIB17, DIB16, DIB15, DIB14, DIB13, DIB12, DIB11, DIB10, DIB9, DIB8, DIB7, DIB6, DIB5, DIB4, DIB3, DIB2, DIB1, DIB0,
  input  ADB13, ADB12, ADB11, ADB10, ADB9, ADB8, ADB7, ADB6, ADB5, ADB4, ADB3, ADB2, ADB1, ADB0,
  input  CEB, OCEB, CLKB, WEB, CSB2, CSB1, CSB0, RSTB,
  output DOA17, DOA16, DOA15, DOA14, DOA13, DOA12, DOA11, DOA10, DOA9, DOA8, DOA7, DOA6, DOA5, DOA4, DOA3, DOA2, DOA1, DOA0,
  output DOB17, DOB16, DOB15, DOB14, DOB13, DOB12, DOB11, DOB10, DOB9, DOB8, DOB7, DOB6, DOB5, DOB4, DOB3, DOB2, DOB1, DOB0
);
  parameter integer DATA_WIDTH_A = 18;
  parameter integer DATA_WIDTH_B = 18;
  parameter REGMODE_A = "NOREG";
  parameter REGMODE_B = "NOREG";
  parameter RESETMODE = "SYNC";
  parameter ASYNC_RESET_RELEASE = "SYNC";
  parameter CSDECODE_A = "0b000";
  parameter CSDECODE_B = "0b000";
  parameter WRITEMODE_A = "NORMAL";
  parameter WRITEMODE_B = "NORMAL";
  parameter CLKAMUX = "CLKA";
  parameter CLKBMUX = "CLKB";
  parameter GSR = "ENABLED";
  parameter [319:0] INITVAL_00 = 320'h0;
  parameter [319:0] INITVAL_01 = 320'h0;
  parameter [319:0] INITVAL_02 = 320'h0;
  parameter [319:0] INITVAL_03 = 320'h0;
  parameter [319:0] INITVAL_04 = 320'h0;
  parameter [319:0] INITVAL_05 = 320'h0;
  parameter [319:0] INITVAL_06 = 320'h0;
  parameter [319:0] INITVAL_07 = 320'h0;
  parameter [319:0] INITVAL_08 = 320'h0;
  parameter [319:0] INITVAL_09 = 320'h0;
  parameter [319:0] INITVAL_0A = 320'h0;
  parameter [319:0] INITVAL_0B = 320'h0;
  parameter [319:0] INITVAL_0C = 320'h0;
  parameter [319:0] INITVAL_0D = 320'h0;
  parameter [319:0] INITVAL_0E = 320'h0;
  parameter [319:0] INITVAL_0F = 320'h0;
  parameter [319:0] INITVAL_10 = 320'h0;
  parameter [319:0] INITVAL_11 = 320'h0;
  parameter [319:0] INITVAL_12 = 320'h0;
  parameter [319:0] INITVAL_13 = 320'h0;
  parameter [319:0] INITVAL_14 = 320'h0;
  parameter [319:0] INITVAL_15 = 320'h0;
  parameter [319:0] INITVAL_16 = 320'h0;
  parameter [319:0] INITVAL_17 = 320'h0;
  parameter [319:0] INITVAL_18 = 320'h0;
  parameter [319:0] INITVAL_19 = 320'h0;
  parameter [319:0] INITVAL_1A = 320'h0;
  parameter [319:0] INITVAL_1B = 320'h0;
  parameter [319:0] INITVAL_1C = 320'h0;
  parameter [319:0] INITVAL_1D = 320'h0;
  parameter [319:0] INITVAL_1E = 320'h0;
  parameter [319:0] INITVAL_1F = 320'h0;
  parameter [319:0] INITVAL_20 = 320'h0;
  parameter [319:0] INITVAL_21 = 320'h0;
  parameter [319:0] INITVAL_22 = 320'h0;
  parameter [319:0] INITVAL_23 = 320'h0;
  parameter [319:0] INITVAL_24 = 320'h0;
  parameter [319:0] INITVAL_25 = 320'h0;
  parameter [319:0] INITVAL_26 = 320'h0;
  parameter [319:0] INITVAL_27 = 320'h0;
  parameter [319:0] INITVAL_28 = 320'h0;
  parameter [319:0] INITVAL_29 = 320'h0;
  parameter [319:0] INITVAL_2A = 320'h0;
  parameter [319:0] INITVAL_2B = 320'h0;
  parameter [319:0] INITVAL_2C = 320'h0;
  parameter [319:0] INITVAL_2D = 320'h0;
  parameter [319:0] INITVAL_2E = 320'h0;
  parameter [319:0] INITVAL_2F = 320'h0;
  parameter [319:0] INITVAL_30 = 320'h0;
  parameter [319:0] INITVAL_31 = 320'h0;
  parameter [319:0] INITVAL_32 = 320'h0;
  parameter [319:0] INITVAL_33 = 320'h0;
  parameter [319:0] INITVAL_34 = 320'h0;
  parameter [319:0] INITVAL_35 = 320'h0;
  parameter [319:0] INITVAL_36 = 320'h0;
  parameter [319:0] INITVAL_37 = 320'h0;
  parameter [319:0] INITVAL_38 = 320'h0;
  parameter [319:0] INITVAL_39 = 320'h0;
  parameter [319:0] INITVAL_3A = 320'h0;
  parameter [319:0] INITVAL_3B = 320'h0;
  parameter [319:0] INITVAL_3C = 320'h0;
  parameter [319:0] INITVAL_3D = 320'h0;
  parameter [319:0] INITVAL_3E = 320'h0;
  parameter [319:0] INITVAL_3F = 320'h0;

  localparam integer W = DATA_WIDTH_A;
  localparam integer Lsb = W == 36 ? 5 : W == 18 ? 4 : W == 9 ? 3 : W == 4 ? 2 : W == 2 ? 1 : 0;
  localparam integer Depth = 1 << (14 - Lsb);
  localparam integer Bytes = W == 36 ? 4 : W == 18 ? 2 : 1;  // write enables per word
  localparam integer ByteW = W / Bytes;

  initial begin
    if (DATA_WIDTH_B != W || !(W == 1 || W == 2 || W == 4 || W == 9 || W == 18 || W == 36))
      $fatal(1, "DP16KD model: widths %0d and %0d not modelled", DATA_WIDTH_A, DATA_WIDTH_B);
    if (REGMODE_A != "NOREG" || REGMODE_B != "NOREG" || CSDECODE_A != "0b000" || CSDECODE_B != "0b000")
      $fatal(1, "DP16KD model: output registers and chip-select decoding not modelled");
    if ((|INITVAL_00) || (|INITVAL_01) || (|INITVAL_02) || (|INITVAL_03) || (|INITVAL_04) || (|INITVAL_05) || (|INITVAL_06) || (|INITVAL_07) ||
        (|INITVAL_08) || (|INITVAL_09) || (|INITVAL_0A) || (|INITVAL_0B) || (|INITVAL_0C) || (|INITVAL_0D) || (|INITVAL_0E) || (|INITVAL_0F) ||
        (|INITVAL_10) || (|INITVAL_11) || (|INITVAL_12) || (|INITVAL_13) || (|INITVAL_14) || (|INITVAL_15) || (|INITVAL_16) || (|INITVAL_17) ||
        (|INITVAL_18) || (|INITVAL_19) || (|INITVAL_1A) || (|INITVAL_1B) || (|INITVAL_1C) || (|INITVAL_1D) || (|INITVAL_1E) || (|INITVAL_1F) ||
        (|INITVAL_20) || (|INITVAL_21) || (|INITVAL_22) || (|INITVAL_23) || (|INITVAL_24) || (|INITVAL_25) || (|INITVAL_26) || (|INITVAL_27) ||
        (|INITVAL_28) || (|INITVAL_29) || (|INITVAL_2A) || (|INITVAL_2B) || (|INITVAL_2C) || (|INITVAL_2D) || (|INITVAL_2E) || (|INITVAL_2F) ||
        (|INITVAL_30) || (|INITVAL_31) || (|INITVAL_32) || (|INITVAL_33) || (|INITVAL_34) || (|INITVAL_35) || (|INITVAL_36) || (|INITVAL_37) ||
        (|INITVAL_38) || (|INITVAL_39) || (|INITVAL_3A) || (|INITVAL_3B) || (|INITVAL_3C) || (|INITVAL_3D) || (|INITVAL_3E) || (|INITVAL_3F))
      $fatal(1, "DP16KD model: initial contents not modelled");
  end

  wire [17:0] dia = {DIA17, DIA16, DIA15, DIA14, DIA13, DIA12, DIA11, DIA10, DIA9, DIA8, DIA7, DIA6, DIA5, DIA4, DIA3, DIA2, DIA1, DIA0};
  wire [17:0] dib = {DIB17, DIB16, DIB15, DIB14, DIB13, DIB12, DIB11, DIB10, DIB9, DIB8, DIB7, DIB6, DIB5, DIB4, DIB3, DIB2, DIB1, DIB0};
  wire [13:0] ada = {ADA13, ADA12, ADA11, ADA10, ADA9, ADA8, ADA7, ADA6, ADA5, ADA4, ADA3, ADA2, ADA1, ADA0};
  wire [13:0] adb = {ADB13, ADB12, ADB11, ADB10, ADB9, ADB8, ADB7, ADB6, ADB5, ADB4, ADB3, ADB2, ADB1, ADB0};
  wire clka = CLKAMUX == "INV" ? ~CLKA : CLKA;
  wire clkb = CLKBMUX == "INV" ? ~CLKB : CLKB;
  wire ena = CEA && {CSA2, CSA1, CSA0} == 3'b000;
  wire enb = CEB && {CSB2, CSB1, CSB0} == 3'b000;
  wire [13-Lsb:0] addr_a = ada[13:Lsb];
  wire [13-Lsb:0] addr_b = adb[13:Lsb];
  wire [35:0] din_a = W == 36 ? {dib, dia} : {18'b0, dia};
  wire [35:0] din_b = {18'b0, dib};
  // Byte enables: AD3:0 at 36 bits, AD1:0 at 18; one enable for the word below.
  wire [3:0] be_a = W == 36 ? ada[3:0] : W == 18 ? {2'b0, ada[1:0]} : 4'b0001;
  wire [3:0] be_b = W == 18 ? {2'b0, adb[1:0]} : 4'b0001;
  // At 36 bits port A only writes (WEA is tied high, the byte enables decide).
  wire we_a = W == 36 ? 1'b1 : WEA;
  wire we_b = W == 36 ? 1'b0 : WEB;

  reg [W-1:0] mem [0:Depth-1];
  reg [W-1:0] rd_a, rd_b;  // the output registers
  integer i;
  initial for (i = 0; i < Depth; i = i + 1) mem[i] = {W{1'b0}};
  initial begin rd_a = {W{1'b0}}; rd_b = {W{1'b0}}; end

  // A write's word: the enabled bytes from the input, the others kept.
  function [W-1:0] merge(input [W-1:0] old, input [35:0] din, input [3:0] be);
    integer b;
    begin
      merge = old;
      for (b = 0; b < Bytes; b = b + 1)
        if (be[b]) merge[b*ByteW +: ByteW] = din[b*ByteW +: ByteW];
    end
  endfunction

  wire arst_a = RESETMODE == "ASYNC" && RSTA;
  wire arst_b = RESETMODE == "ASYNC" && RSTB;
  always @(posedge clka or posedge arst_a) begin
    if (arst_a) rd_a <= {W{1'b0}};
    else begin
      if (ena && we_a) mem[addr_a] <= merge(mem[addr_a], din_a, be_a);
      if (RESETMODE == "SYNC" && RSTA) rd_a <= {W{1'b0}};
      else if (ena && W != 36) begin
        if (!we_a || WRITEMODE_A == "READBEFOREWRITE") rd_a <= mem[addr_a];
        else if (WRITEMODE_A == "WRITETHROUGH") rd_a <= merge(mem[addr_a], din_a, be_a);
      end
    end
  end
  always @(posedge clkb or posedge arst_b) begin
    if (arst_b) rd_b <= {W{1'b0}};
    else begin
      if (enb && we_b) mem[addr_b] <= merge(mem[addr_b], din_b, be_b);
      if (RESETMODE == "SYNC" && RSTB) rd_b <= {W{1'b0}};
      else if (enb) begin
        if (!we_b || WRITEMODE_B == "READBEFOREWRITE") rd_b <= mem[addr_b];
        else if (WRITEMODE_B == "WRITETHROUGH") rd_b <= merge(mem[addr_b], din_b, be_b);
      end
    end
  end

  wire [35:0] dout_a = {{(36 - W){1'b0}}, rd_a};
  wire [35:0] dout_b = {{(36 - W){1'b0}}, rd_b};
  // At 36 bits both pin groups carry port B's word.
  assign {DOA17, DOA16, DOA15, DOA14, DOA13, DOA12, DOA11, DOA10, DOA9, DOA8, DOA7, DOA6, DOA5, DOA4, DOA3, DOA2, DOA1, DOA0} = W == 36 ? dout_b[17:0] : dout_a[17:0];
  assign {DOB17, DOB16, DOB15, DOB14, DOB13, DOB12, DOB11, DOB10, DOB9, DOB8, DOB7, DOB6, DOB5, DOB4, DOB3, DOB2, DOB1, DOB0} = W == 36 ? dout_b[35:18] : dout_b[17:0];
endmodule

// SPDX-License-Identifier: Apache-2.0
// Synchronous first-word-fall-through FIFO with valid/ready on both sides.
// FallThrough=1: when empty, a written word is offered on the read side in the
// same cycle (and not stored if it is taken), saving a cycle of latency.
// From RamDepth entries on, the storage has a registered read port (block RAM on an
// FPGA) that reads the next cycle's head and passes a word written to it through:
// the same behaviour, one cycle of reads ahead.
// FreeWrite=1 (LUT storage only): the slot at the write pointer, free while the FIFO is
// not full, is written in every such cycle whether or not a word comes. The write
// enable of a wide LUT RAM, which drives every cell of it, then follows the count (a
// register) instead of the writer's valid, which may come late in the cycle.
`default_nettype none
`include "ni_assert.svh"

module ni_fifo #(
  parameter int unsigned Width = 8,
  parameter int unsigned Depth = 4,
  parameter int unsigned FallThrough = 0,
  parameter int unsigned FreeWrite = 0,
  localparam int unsigned RamDepth = 16,
  localparam int unsigned PtrW = (Depth > 1) ? $clog2(Depth) : 1,
  localparam int unsigned CntW = $clog2(Depth + 1)
) (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic [Width-1:0] wdata_i,
  input  logic wvalid_i,
  output logic wready_o,
  output logic [Width-1:0] rdata_o,
  output logic rvalid_o,
  input  logic rready_i
);
  logic [Width-1:0] mem_q [Depth];
  logic [PtrW-1:0] wptr_q, wptr_d, rptr_q, rptr_d;
  logic [CntW-1:0] cnt_q, cnt_d;
  logic push, pop, empty, pass;
  // Full and empty are kept as registers beside the count, so that the ready and valid
  // a writer and a reader see come straight from flip-flops (FlagsAreCount_A).
  logic full_q, filled_q;  // filled_q: not empty (every register resets to 0)
  logic [Width-1:0] head;

  assign empty = !filled_q;
  assign pass = FallThrough != 0 && empty;  // the read side shows the write side
  assign wready_o = !full_q;
  assign rvalid_o = pass ? wvalid_i : !empty;
  assign rdata_o = pass ? wdata_i : head;
  assign push = wvalid_i && wready_o && !(pass && rready_i);
  assign pop = !empty && rready_i;

  always_comb begin
    wptr_d = wptr_q;
    rptr_d = rptr_q;
    if (push) wptr_d = (wptr_q == PtrW'(Depth - 1)) ? '0 : wptr_q + PtrW'(1);
    if (pop) rptr_d = (rptr_q == PtrW'(Depth - 1)) ? '0 : rptr_q + PtrW'(1);
    cnt_d = cnt_q + CntW'(push) - CntW'(pop);
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      wptr_q <= '0;
      rptr_q <= '0;
      cnt_q <= '0;
      full_q <= 1'b0;
      filled_q <= 1'b0;
    end else begin
      wptr_q <= wptr_d;
      rptr_q <= rptr_d;
      cnt_q <= cnt_d;
      // Each from the count as it is and the one change the cycle may make.
      if (push && !pop) begin
        full_q <= cnt_q == CntW'(Depth - 1);
        filled_q <= 1'b1;
      end else if (pop && !push) begin
        full_q <= 1'b0;
        filled_q <= cnt_q != CntW'(1);
      end
    end
  end

  // Storage is datapath: not reset.
  localparam bit WriteFree = FreeWrite != 0 && Depth < RamDepth;
  always_ff @(posedge clk_i) begin
    if (WriteFree ? wready_o : push) mem_q[wptr_q] <= wdata_i;
  end
  if (Depth >= RamDepth) begin : gen_ram_read
    always_ff @(posedge clk_i) begin
      head <= (push && wptr_q == rptr_d) ? wdata_i : mem_q[rptr_d];
    end
  end else begin : gen_lut_read
    assign head = mem_q[rptr_q];
  end

  `NI_ASSERT_AXIS_STABLE(RdStable_A, rvalid_o, rready_i, rdata_o)
  // Invariants, checked in every simulation and proved by make formal (k-induction):
  // the count stays within the depth, the pointers within the storage and count
  // apart, and the read side shows the word at the read pointer.
  `NI_ASSERT(CntBound_A, cnt_q <= CntW'(Depth))
  `NI_ASSERT(FlagsAreCount_A, full_q == (cnt_q == CntW'(Depth)) && filled_q == (cnt_q != '0))
  `NI_ASSERT(PtrRange_A, 32'(wptr_q) < Depth && 32'(rptr_q) < Depth)
  `NI_ASSERT(PtrCnt_A, 32'(wptr_q) == (32'(rptr_q) + 32'(cnt_q)) % Depth)
  logic [Width-1:0] at_rptr;  // (for the assertion only; Verilator 5.006 fails on the select inside it)
  assign at_rptr = mem_q[rptr_q];
  `NI_ASSERT(HeadIsReadPtr_A, cnt_q == '0 || head == at_rptr)
endmodule

`default_nettype wire

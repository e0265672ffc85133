// SPDX-License-Identifier: Apache-2.0
// Skid register: a pipeline stage of two words whose output and ready are registers,
// one word a cycle through it. The word on the output sits in a register (no read mux
// behind it), and the input's ready depends on nothing of the cycle: a word offered
// while the output is held goes into the skid register, and the input waits until
// the skid register is empty again (the skid mode of verilog-axis's axis_register).
`default_nettype none
`include "ni_assert.svh"

module ni_skid #(
  parameter int unsigned Width = 8
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
  logic [Width-1:0] out_q, skid_q;
  logic out_valid_q, skid_valid_q, out_free;
  assign wready_o = !skid_valid_q;
  assign rdata_o = out_q;
  assign rvalid_o = out_valid_q;
  assign out_free = !out_valid_q || rready_i;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      out_valid_q <= 1'b0;
      skid_valid_q <= 1'b0;
    end else if (skid_valid_q) begin
      if (out_free) begin
        out_valid_q <= 1'b1;
        skid_valid_q <= 1'b0;
      end
    end else if (out_free) begin
      out_valid_q <= wvalid_i;
    end else begin
      skid_valid_q <= wvalid_i;
    end
  end
  // Data without a reset; the skid register takes the input whenever it is empty.
  always_ff @(posedge clk_i) begin
    if (out_free) out_q <= skid_valid_q ? skid_q : wdata_i;
    if (!skid_valid_q) skid_q <= wdata_i;
  end

  `NI_ASSERT(SkidOnlyBehindOutput_A, !skid_valid_q || out_valid_q)
endmodule

`default_nettype wire

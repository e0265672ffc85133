// SPDX-License-Identifier: Apache-2.0
// A block boundary that nic_top's BoundaryRegs may register: with Enable, a queue of
// Depth words without fall-through (ni_fifo), so that no combinational path crosses
// it; without, wires. docs/architecture.md lists the boundaries. FreeWrite: ni_fifo's
// (the queue's storage written from its count, for a writer whose valid comes late).
`default_nettype none

module ni_boundary #(
  parameter int unsigned Width = 8,
  parameter int unsigned Depth = 2,
  parameter int unsigned Enable = 0,
  parameter int unsigned FreeWrite = 0
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
  if (Enable != 0) begin : gen_queue
    ni_fifo #(.Width(Width), .Depth(Depth), .FreeWrite(FreeWrite)) u_q (
      .clk_i, .rst_ni, .wdata_i, .wvalid_i, .wready_o, .rdata_o, .rvalid_o, .rready_i);
  end else begin : gen_wires
    assign rdata_o = wdata_i;
    assign rvalid_o = wvalid_i;
    assign wready_o = rready_i;
    logic unused_clk;
    assign unused_clk = ^{clk_i, rst_ni, FreeWrite};
  end
endmodule

`default_nettype wire

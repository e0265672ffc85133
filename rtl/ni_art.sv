// SPDX-License-Identifier: Apache-2.0
// Address-range association table lookup: which window holds an address, and where it goes.
// Storage lives in the register block; this is the combinational match + translation.
`default_nettype none

module ni_art #(
  parameter int unsigned NumEntries = 16
) (
  input  logic [63:0] addr_i,
  // Window table, page numbers (address bits 63:12).
  input  logic [NumEntries-1:0] valid_i,
  input  logic [NumEntries-1:0] rx_xlate_i,
  input  logic [NumEntries-1:0] perm_r_i,
  input  logic [NumEntries-1:0] perm_w_i,
  input  logic [NumEntries-1:0] perm_a_i,
  input  logic [NumEntries-1:0][51:0] base_i,
  input  logic [NumEntries-1:0][51:0] limit_i,
  input  logic [NumEntries-1:0][51:0] xlate_i,
  input  logic [NumEntries-1:0][15:0] node_i,
  input  logic [NumEntries-1:0][15:0] memid_i,
  // Result: the lowest-numbered matching window wins.
  output logic hit_o,
  output logic [$clog2(NumEntries)-1:0] index_o,
  output logic rx_xlate_o,
  output logic perm_r_o,
  output logic perm_w_o,
  output logic perm_a_o,
  output logic [15:0] node_o,
  output logic [15:0] memid_o,
  // Address to put in the tunneled TLP: remote address (sender-side translation)
  // or offset into the destination's memory ID (receiver-side translation).
  output logic [63:0] out_addr_o
);
  logic [NumEntries-1:0] match;
  logic [51:0] page;
  assign page = addr_i[63:12];

  always_comb begin
    for (int i = 0; i < NumEntries; i++) begin
      match[i] = valid_i[i] && (page >= base_i[i]) && (page < limit_i[i]);
    end
  end

  always_comb begin
    hit_o = 1'b0;
    index_o = '0;
    for (int i = NumEntries - 1; i >= 0; i--) begin
      if (match[i]) begin
        hit_o = 1'b1;
        index_o = i[$clog2(NumEntries)-1:0];
      end
    end
  end

  assign rx_xlate_o = rx_xlate_i[index_o];
  assign perm_r_o = perm_r_i[index_o];
  assign perm_w_o = perm_w_i[index_o];
  assign perm_a_o = perm_a_i[index_o];
  assign node_o = node_i[index_o];
  assign memid_o = memid_i[index_o];
  assign out_addr_o = {(rx_xlate_i[index_o] ? 52'h0 : xlate_i[index_o]) + page - base_i[index_o],
                       addr_i[11:0]};
endmodule

`default_nettype wire

// SPDX-License-Identifier: Apache-2.0
// Address-range association table: which window holds an address, and where it goes.
// A pipeline that takes a lookup every cycle and answers in the next cycle, in order:
//   S0  the address against every window's base and limit (the registers of
//       ni_csr_regs), compares registered;
//   S1  the lowest-numbered matching window (priority), and its attributes and page
//       deltas from a LUT RAM read by that index: the answer, from registers through
//       a few levels, for the user's input register (ni_host_rx's answer queue).
// The LUT RAM holds per window delta = (rx_xlate ? 0 : xlate) - base (pages), so the
// output page is page + delta (the user adds it: the ART's answer has no adder), and
// its negation, how far a confirmation moves the address back. It is written by an
// update pipeline when ART_CTRL[i] is written (wr_i[i]: the staged registers take effect
// then): the entry's registers are read by index over two stages, the deltas
// subtracted, the entry written (4 cycles), upd_done_o pulsed. Lookups
// must not start while an update is in flight (busy_o): ni_host_rx holds them back.
`default_nettype none
`include "ni_assert.svh"

module ni_art #(
  parameter int unsigned NumEntries = 16,
  localparam int unsigned IdxW = $clog2(NumEntries)
) (
  input  logic clk_i,
  input  logic rst_ni,
  // Window table, page numbers (address bits 63:12), as the registers hold them.
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
  input  logic [NumEntries-1:0] wr_i,  // ART_CTRL[i] written: its registers hold the new values next cycle
  output logic busy_o,                 // an update is in flight: start no lookup
  output logic upd_done_o,             // the update's entry is in the table (lookups may start)
  // Lookup: an address in, its answer in the next cycle (not registered here: ni_host_rx
  // writes it into its answer queue).
  input  logic look_valid_i,
  input  logic [63:0] addr_i,
  output logic res_valid_o,
  output logic hit_o,                  // the lowest-numbered matching window wins
  output logic [IdxW-1:0] index_o,
  output logic rx_xlate_o,
  output logic perm_r_o,
  output logic perm_w_o,
  output logic perm_a_o,
  output logic [15:0] node_o,
  output logic [15:0] memid_o,
  // What to add to addr_i's page for the address in the tunneled TLP: the remote page
  // (sender-side translation) or the page offset into the destination's memory ID
  // (receiver-side translation). 0 on a miss.
  output logic [51:0] delta_o,
  // -delta_o: how far a confirmation of the write moves its address back (ni_retx), so
  // no one subtracts the two.
  output logic [51:0] back_page_o
);
  // ------------------------------------------------------------ table (LUT RAM)
  typedef struct packed {
    logic [51:0] delta, back;
    logic rx_xlate, perm_r, perm_w, perm_a;
    logic [15:0] node, memid;
  } entry_t;
  // Plain words: Yosys 0.70 reads an unpacked array of a packed struct as one struct
  // (the array dimension lost, the writes bit selects) without a warning.
  localparam int unsigned EntW = 52 + 52 + 4 + 16 + 16;
  logic [EntW-1:0] tbl [NumEntries];

  // Update: U0 which entry; U1 in each group of four windows the one of them (by the
  // index's low two bits); U2 the group (by the rest); U3 the delta and the write. The
  // pick of one window's 140 bits out of all is split over two registered stages (one
  // stage was 142 MHz alone, all routing from the index).
  localparam int unsigned Groups = (NumEntries + 3) / 4;
  localparam int unsigned SrcW = 52 + 52 + 4 + 16 + 16;  // base, xlate, rx_xlate and perms, node, memid
  logic u0_q, u1_q, u2_q;
  logic [IdxW-1:0] u0_idx_q, u1_idx_q, u2_idx_q, wr_idx;
  logic [SrcW-1:0] grp_d [Groups];
  logic [SrcW-1:0] grp_q [Groups];
  logic [SrcW-1:0] src_q;
  logic [51:0] s_base, s_xlate;
  logic [35:0] s_attr;
  entry_t u_ent;
  always_comb begin
    wr_idx = '0;
    for (int i = 0; i < NumEntries; i++) begin
      if (wr_i[i]) wr_idx = IdxW'(i);
    end
    for (int g = 0; g < Groups; g++) begin
      grp_d[g] = '0;
      for (int j = 0; j < 4; j++) begin
        if (4 * g + j < NumEntries && 32'(u0_idx_q) % 4 == j) begin
          grp_d[g] = {base_i[4 * g + j], xlate_i[4 * g + j], rx_xlate_i[4 * g + j], perm_r_i[4 * g + j],
                      perm_w_i[4 * g + j], perm_a_i[4 * g + j], node_i[4 * g + j], memid_i[4 * g + j]};
        end
      end
    end
  end
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      u0_q <= 1'b0;
      u1_q <= 1'b0;
      u2_q <= 1'b0;
      upd_done_o <= 1'b0;
    end else begin
      u0_q <= |wr_i;
      u1_q <= u0_q;
      u2_q <= u1_q;
      upd_done_o <= u2_q;
    end
  end
  always_ff @(posedge clk_i) begin
    u0_idx_q <= wr_idx;
    u1_idx_q <= u0_idx_q;
    u2_idx_q <= u1_idx_q;
    for (int g = 0; g < Groups; g++) grp_q[g] <= grp_d[g];
    src_q <= grp_q[32'(u1_idx_q) / 4];
  end
  assign {s_base, s_xlate, s_attr} = src_q;
  always_comb begin
    u_ent.rx_xlate = s_attr[35];
    {u_ent.perm_r, u_ent.perm_w, u_ent.perm_a} = s_attr[34:32];
    u_ent.node = s_attr[31:16];
    u_ent.memid = s_attr[15:0];
    u_ent.delta = (u_ent.rx_xlate ? 52'h0 : s_xlate) - s_base;
    u_ent.back = s_base - (u_ent.rx_xlate ? 52'h0 : s_xlate);
  end
  always_ff @(posedge clk_i) begin
    if (u2_q) tbl[u2_idx_q] <= u_ent;
  end
  assign busy_o = u0_q || u1_q || u2_q;

  // ------------------------------------------------------------ lookup
  logic s1_q;
  logic [NumEntries-1:0] match, match_q;
  logic hit;
  logic [IdxW-1:0] idx;
  always_comb begin
    for (int i = 0; i < NumEntries; i++) begin
      match[i] = valid_i[i] && (addr_i[63:12] >= base_i[i]) && (addr_i[63:12] < limit_i[i]);
    end
    hit = |match_q;
    idx = '0;
    for (int i = NumEntries - 1; i >= 0; i--) begin
      if (match_q[i]) idx = IdxW'(i);
    end
  end
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) s1_q <= 1'b0;
    else s1_q <= look_valid_i;
  end
  always_ff @(posedge clk_i) match_q <= match;
  logic unused_off;  // the offset in the page is the user's (it adds the delta to the page)
  assign unused_off = ^addr_i[11:0];
  entry_t ent;
  assign ent = tbl[idx];
  assign res_valid_o = s1_q;
  assign hit_o = hit;
  assign index_o = idx;
  assign rx_xlate_o = hit && ent.rx_xlate;
  assign perm_r_o = hit && ent.perm_r;
  assign perm_w_o = hit && ent.perm_w;
  assign perm_a_o = hit && ent.perm_a;
  assign node_o = hit ? ent.node : 16'h0;
  assign memid_o = hit ? ent.memid : 16'h0;
  assign delta_o = hit ? ent.delta : 52'h0;
  assign back_page_o = hit ? ent.back : 52'h0;

  // A lookup never starts while an update is in flight (ni_host_rx's fence): it would
  // compare against the new registers and read the old entry. (One in flight when the
  // update starts compared against the old registers and reads the old entry.)
  `NI_ASSERT(ArtLookNotDuringUpdate_A, !(look_valid_i && (busy_o || |wr_i)))
endmodule

`default_nettype wire

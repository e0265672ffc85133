// SPDX-License-Identifier: Apache-2.0
// Address-range association table: which window holds an address, and where it goes.
// A pipeline that takes a lookup every cycle and answers in the next cycle, in order:
//   S0  the address against every window's base and limit (registers of this block),
//       compares registered;
//   S1  the lowest-numbered matching window (priority), and its attributes and page
//       deltas from a LUT RAM read by that index: the answer, from registers through
//       a few levels, for the user's input register (ni_host_rx's answer queue).
// The LUT RAM holds per window delta = (rx_xlate ? 0 : xlate) - base (pages), so the
// output page is page + delta (the user adds it: the ART's answer has no adder), and
// its negation, how far a confirmation moves the address back.
// The table is this block's own: ni_csr_regs keeps only the staged values and hands
// over one entry's when its ART_CTRL is written (wr_i[i], w*_i in the same cycle). The
// update takes two cycles: the write's cycle registers the entry (u0_*); in the next,
// U0, its flags (ART_CTRL, updated by then) are read by index, the deltas subtracted,
// and the entry and its base, limit and node written; upd_done_o pulses in the cycle
// after U0. Lookups must not start while an update is in flight (busy_o): ni_host_rx
// holds them back.
`default_nettype none
`include "ni_assert.svh"

module ni_art #(
  parameter int unsigned NumEntries = 16,
  localparam int unsigned IdxW = $clog2(NumEntries)
) (
  input  logic clk_i,
  input  logic rst_ni,
  // Window flags: ART_CTRL, registers of ni_csr_regs (read by index during an update,
  // valid_i at every lookup).
  input  logic [NumEntries-1:0] valid_i,
  input  logic [NumEntries-1:0] rx_xlate_i,
  input  logic [NumEntries-1:0] perm_r_i,
  input  logic [NumEntries-1:0] perm_w_i,
  input  logic [NumEntries-1:0] perm_a_i,
  // ART_CTRL[i] written: window i's staged values (page numbers, address bits 63:12)
  // take effect; they come in the same cycle.
  input  logic [NumEntries-1:0] wr_i,
  input  logic [51:0] wbase_i,
  input  logic [51:0] wlimit_i,
  input  logic [51:0] wxlate_i,
  input  logic [15:0] wnode_i,
  input  logic [15:0] wmemid_i,
  output logic [NumEntries-1:0][15:0] win_node_o,  // every window's destination as it took effect
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

  logic [NumEntries-1:0][51:0] base_q, limit_q;
  logic [NumEntries-1:0][15:0] node_q;
  logic u0_q;  // |u0_wr_q, a register of its own (the RAM's write enable and busy_o)
  logic [NumEntries-1:0] u0_wr_q;  // the entry, one-hot: a write enable per entry from a register
  logic [IdxW-1:0] wr_idx, u0_idx_q;
  logic [51:0] u0_base_q, u0_limit_q, u0_xlate_q;
  logic [15:0] u0_node_q, u0_memid_q;
  entry_t u_ent;
  always_comb begin
    wr_idx = '0;
    for (int i = 0; i < NumEntries; i++) begin
      if (wr_i[i]) wr_idx = IdxW'(i);
    end
  end
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      u0_q <= 1'b0;
      u0_wr_q <= '0;
      upd_done_o <= 1'b0;
    end else begin
      u0_q <= |wr_i;
      u0_wr_q <= wr_i;
      upd_done_o <= u0_q;
    end
  end
  always_ff @(posedge clk_i) begin
    if (|wr_i) begin
      u0_idx_q <= wr_idx;
      u0_base_q <= wbase_i;
      u0_limit_q <= wlimit_i;
      u0_xlate_q <= wxlate_i;
      u0_node_q <= wnode_i;
      u0_memid_q <= wmemid_i;
    end
  end
  always_comb begin
    u_ent.rx_xlate = rx_xlate_i[u0_idx_q];
    u_ent.perm_r = perm_r_i[u0_idx_q];
    u_ent.perm_w = perm_w_i[u0_idx_q];
    u_ent.perm_a = perm_a_i[u0_idx_q];
    u_ent.node = u0_node_q;
    u_ent.memid = u0_memid_q;
    // Both translations' deltas from registers; the flag, read by index, picks last.
    u_ent.delta = u_ent.rx_xlate ? 52'h0 - u0_base_q : u0_xlate_q - u0_base_q;
    u_ent.back = u_ent.rx_xlate ? u0_base_q : u0_base_q - u0_xlate_q;
  end
  always_ff @(posedge clk_i) begin
    if (u0_q) tbl[u0_idx_q] <= u_ent;
    for (int i = 0; i < NumEntries; i++) begin
      if (u0_wr_q[i]) begin
        base_q[i] <= u0_base_q;
        limit_q[i] <= u0_limit_q;
        node_q[i] <= u0_node_q;
      end
    end
  end
  assign busy_o = u0_q;
  assign win_node_o = node_q;

  // ------------------------------------------------------------ lookup
  logic s1_q;
  logic [NumEntries-1:0] match, match_q;
  logic hit;
  logic [IdxW-1:0] idx;
  always_comb begin
    for (int i = 0; i < NumEntries; i++) begin
      match[i] = valid_i[i] && (addr_i[63:12] >= base_q[i]) && (addr_i[63:12] < limit_q[i]);
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
  // compare against the new flags and the old base and limit. (One in flight when the
  // update starts compared against the old registers and reads the old entry.)
  `NI_ASSERT(ArtOneWrite_A, $onehot0(wr_i))
  `NI_ASSERT(ArtLookNotDuringUpdate_A, !(look_valid_i && (busy_o || |wr_i)))
endmodule

`default_nettype wire

// SPDX-License-Identifier: Apache-2.0
// The register block's event counters (32 bits each, wrapping) in RAM: each counter has a
// narrow accumulator of its events, and a drain adds one accumulator a cycle into the
// counter's RAM word, round robin, so only one 32-bit adder works on the counters however
// many there are. Every counter may count an event in every cycle: an accumulator holds
// the events of one round (N cycles) and is emptied once a round, so none is ever lost.
// A software write clears a counter (and wins over its event in the same cycle): its
// accumulator empties and a flag says that its RAM word counts as 0 until the drain
// next writes it (a reset sets every flag). A read gives a counter's value as of its
// request cycle (that cycle's events not included) in the next cycle: the RAM word
// (unless flagged), the accumulator, and what the drain is adding in that cycle; the
// word and the sum of the other two are registered in the request cycle.
// The RAM is written once (the drain) and read at two addresses (the drain's and the
// software's): two LUT RAM copies written alike.
`default_nettype none
`include "ni_assert.svh"

module ni_event_counters #(
  parameter int unsigned N = 4,       // counters
  parameter int unsigned AddrW = 8,   // the word-address bits that name a counter
  parameter logic [N*AddrW-1:0] Addrs = '0,  // counter k's word address at bits [k*AddrW +: AddrW]
  localparam int unsigned IdxW = (N > 1) ? $clog2(N) : 1,
  localparam int unsigned AccW = $clog2(N + 2)  // the events of one round and the cycle after
) (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic [N-1:0] inc_i,          // counter k counts an event
  input  logic [N-1:0] clr_i,          // software writes counter k (it becomes 0)
  input  logic [AddrW-1:0] rd_addr_i,  // a read's word address, in its request cycle
  output logic rd_hit_o,               // it names a counter (same cycle)
  output logic [31:0] rd_value_o       // that counter's value, the cycle after the request
);
  logic [N-1:0][AccW-1:0] acc_q, acc_d;
  logic [N-1:0] zero_q, zero_d;  // the RAM word counts as 0 (cleared, or reset)
  logic [IdxW-1:0] rr_q;         // the counter the drain takes next
  logic [IdxW-1:0] dr_idx_q;     // the counter the drain adds to in this cycle
  logic [AccW-1:0] dr_take_q;    // what it adds
  logic [31:0] dr_word_q;        // the word it adds to (0 if flagged), read a cycle before
  logic [31:0] mem_dr [N];       // the copy the drain reads
  logic [31:0] mem_rd [N];       // the copy software reads
  logic [31:0] dr_sum;

  // The drain's first stage: take the accumulator of counter rr_q (nothing if it is
  // cleared in this cycle) and start it again from this cycle's event.
  always_comb begin
    for (int k = 0; k < N; k++) begin
      if (clr_i[k]) acc_d[k] = '0;
      else acc_d[k] = ((32'(rr_q) == k) ? AccW'(0) : acc_q[k]) + AccW'(inc_i[k]);
      // The drain's second stage writes the word it adds to (a clear in this cycle
      // keeps the flag).
      zero_d[k] = clr_i[k] || (zero_q[k] && 32'(dr_idx_q) != k);
    end
  end
  // The drain's second stage: the word plus what was taken. The first read the word
  // (the counter written in that cycle is another one: N >= 2).
  assign dr_sum = dr_word_q + 32'(dr_take_q);

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      acc_q <= '0;
      zero_q <= '1;
      rr_q <= '0;
      dr_idx_q <= '0;
      dr_take_q <= '0;
    end else begin
      acc_q <= acc_d;
      zero_q <= zero_d;
      rr_q <= (32'(rr_q) == N - 1) ? '0 : rr_q + IdxW'(1);
      dr_idx_q <= rr_q;
      dr_take_q <= clr_i[rr_q] ? '0 : acc_q[rr_q];
    end
  end
  // Storage is datapath: not reset (the zero flags stand for it).
  always_ff @(posedge clk_i) begin
    dr_word_q <= (zero_q[rr_q] || clr_i[rr_q]) ? 32'd0 : mem_dr[rr_q];
    mem_dr[dr_idx_q] <= dr_sum;
    mem_rd[dr_idx_q] <= dr_sum;
  end

  // A read: which counter (the word address against the N constants), then its parts
  // into registers; their sum the cycle after.
  logic [IdxW-1:0] rd_idx;
  always_comb begin
    rd_idx = '0;
    rd_hit_o = 1'b0;
    for (int k = 0; k < N; k++) begin
      if (rd_addr_i == Addrs[k*AddrW +: AddrW]) begin
        rd_idx = IdxW'(k);
        rd_hit_o = 1'b1;
      end
    end
  end
  // The word is registered as read, its flag applied (a register with a reset term
  // stays at the RAM's output: it cannot move to the read address, where it would put
  // the RAM's read in front of the sum); the two small parts are added beside it.
  logic [31:0] rd_word_q;
  logic [AccW:0] rd_part_q;
  logic [AccW-1:0] rd_take;  // what the drain adds to it in this cycle
  assign rd_take = (dr_idx_q == rd_idx) ? dr_take_q : '0;
  always_ff @(posedge clk_i) begin
    rd_word_q <= zero_q[rd_idx] ? 32'd0 : mem_rd[rd_idx];
    rd_part_q <= (AccW+1)'(acc_q[rd_idx]) + (AccW+1)'(rd_take);
  end
  assign rd_value_o = rd_word_q + 32'(rd_part_q);

  // An accumulator never wraps: it is emptied every N cycles.
  for (genvar k = 0; k < N; k++) begin : gen_acc_chk
    `NI_ASSERT(AccNoWrap_A, !(inc_i[k] && !clr_i[k] && 32'(rr_q) != k && acc_q[k] == '1))
  end
  if (N < 2) begin : gen_n_chk
    $error("ni_event_counters: N must be 2 or more (the drain reads a word a cycle before it writes it)");
  end
  `NI_ASSERT(RrInRange_A, 32'(rr_q) < N && 32'(dr_idx_q) < N)
endmodule

`default_nettype wire

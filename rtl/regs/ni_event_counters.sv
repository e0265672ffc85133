// SPDX-License-Identifier: Apache-2.0
// The register block's event counters (32 bits each, wrapping), split in two parts:
// - the low L bits of each counter are a counter of flip-flops that counts its events
//   (one a cycle at most); when it wraps it sets the counter's carry flag;
// - the high 32 - L bits of all counters are one LUT RAM. A drain visits one counter a
//   cycle, round robin: it takes the counter's carry flag and reads its RAM word into a
//   register (D1), then adds the two and writes the word (D2): one adder for all
//   counters. L is chosen so that a low part cannot wrap twice between two visits
//   (2**L > N), so no event is ever lost, even with every counter counting in every
//   cycle.
// A software write clears a counter (and wins over its event in the same cycle): the
// low part and the carry flag become 0, and a flag says that the RAM word counts as 0
// until the drain next writes it (a reset sets every flag).
// A read: the request's address names a counter (or none); the value comes two cycles
// after the request, as of the end of the request's cycle (its events and clears
// included), or 0 if the address names no counter. The request's cycle decodes the
// address into an index (registered); the next takes the parts at that index into
// registers (the RAM word or 0, the low part, and the carry not yet in the word: the
// flag's, or the one D2 adds in that cycle); the output is their sum. The RAM is
// written once (D2) and read at two indexes (D1's and the read's): two LUT-RAM copies
// written alike.
`default_nettype none
`include "ni_assert.svh"

module ni_event_counters #(
  parameter int unsigned N = 4,       // counters
  parameter int unsigned AddrW = 8,   // the address bits that name a counter
  parameter logic [N*AddrW-1:0] Addrs = '0,  // counter k's address at bits [k*AddrW +: AddrW]
  localparam int unsigned IdxW = (N > 1) ? $clog2(N) : 1,
  localparam int unsigned L = $clog2(N + 1),  // low bits: 2**L > N
  localparam int unsigned HiW = 32 - L
) (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic [N-1:0] inc_i,          // counter k counts an event
  input  logic [AddrW-1:0] addr_i,     // a request's address (any cycle) ...
  input  logic wr_i,                   // ... a write: it clears the counter it names
  output logic [31:0] rd_value_o       // the named counter's value, two cycles after the request
);
  logic [N-1:0][L-1:0] lo_q, lo_d;
  logic [N-1:0] carry_q, carry_d;  // the low part wrapped since the drain's last visit
  logic [N-1:0] zero_q, zero_d;    // the RAM word counts as 0 (cleared, or reset)
  logic [N-1:0] match, clr;
  logic [IdxW-1:0] rr_q;           // the counter the drain visits in this cycle ...
  logic [N-1:0] take_q;            // ... as a one-hot token (no decode per counter)
  logic [N-1:0] take2_q;           // the counter D2 writes in this cycle (one-hot, or none)
  logic [IdxW-1:0] dr_idx_q;       // ... its index
  logic [HiW-1:0] dr_word_q;       // ... the word it adds to (0 if flagged)
  logic dr_carry_q;                // ... and the carry it adds
  logic [HiW-1:0] mem_dr [N];      // the copy the drain reads
  logic [HiW-1:0] mem_rd [N];      // the copy reads read
  logic [HiW-1:0] dr_sum;

  always_comb begin
    for (int k = 0; k < N; k++) begin
      match[k] = addr_i == Addrs[k*AddrW +: AddrW];
      clr[k] = wr_i && match[k];
      lo_d[k] = lo_q[k] + L'(inc_i[k]);
      carry_d[k] = !clr[k] && ((inc_i[k] && lo_q[k] == '1) || (carry_q[k] && !take_q[k]));
      zero_d[k] = clr[k] || (zero_q[k] && !take2_q[k]);  // D2 writes the word
    end
  end
  // D2: the word plus the carry. A clear in this cycle keeps the flag, so what is
  // written then is never used.
  assign dr_sum = dr_word_q + HiW'(dr_carry_q);

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      carry_q <= '0;
      zero_q <= '1;
      rr_q <= '0;
      take_q <= N'(1);
      take2_q <= '0;
    end else begin
      carry_q <= carry_d;
      zero_q <= zero_d;
      rr_q <= (32'(rr_q) == N - 1) ? '0 : rr_q + IdxW'(1);
      take_q <= {take_q[N-2:0], take_q[N-1]};
      take2_q <= take_q;
    end
  end
  // The low parts are cleared synchronously, by a clear or while the reset is held (the
  // clock runs then; an ECP5 also starts them at 0): the flip-flop's own synchronous
  // reset, where an asynchronous one would need a multiplexer in front of every bit.
  always_ff @(posedge clk_i) begin
    for (int k = 0; k < N; k++) begin
      if (clr[k] || !rst_ni) lo_q[k] <= '0;
      else lo_q[k] <= lo_d[k];
    end
  end
  // Storage is datapath: not reset (the zero flags and take2_q stand for it). D1 reads
  // the word a visit ago written by D2 (N >= 2): never the one D2 writes now.
  always_ff @(posedge clk_i) begin
    if (zero_q[rr_q] || clr[rr_q]) dr_word_q <= '0;
    else dr_word_q <= mem_dr[rr_q];
    dr_carry_q <= carry_q[rr_q] && !clr[rr_q];
    dr_idx_q <= rr_q;
    mem_dr[dr_idx_q] <= dr_sum;
    mem_rd[dr_idx_q] <= dr_sum;
  end

  // A read: the index of the counter the address names, registered; then its parts.
  logic [IdxW-1:0] rd_idx, rd_idx_q;
  logic rd_hit_q;
  logic [HiW-1:0] rd_word_q;
  logic [L-1:0] rd_lo_q;
  logic rd_carry_q;
  always_comb begin
    rd_idx = '0;
    for (int k = 0; k < N; k++) begin
      if (match[k]) rd_idx = rd_idx | IdxW'(k);  // at most one matches: an OR, no priority
    end
  end
  always_ff @(posedge clk_i) begin
    rd_idx_q <= rd_idx;
    rd_hit_q <= |match;
    // The parts, 0 unless the request named a counter. A carry D2 adds in this cycle is
    // not in the word read (written at the cycle's end), nor in the flag (taken by D1).
    if (!rd_hit_q || zero_q[rd_idx_q]) rd_word_q <= '0;
    else rd_word_q <= mem_rd[rd_idx_q];
    if (!rd_hit_q) rd_lo_q <= '0;
    else rd_lo_q <= lo_q[rd_idx_q];
    rd_carry_q <= rd_hit_q && (carry_q[rd_idx_q] || (take2_q[rd_idx_q] && dr_carry_q));
  end
  assign rd_value_o = {rd_word_q + HiW'(rd_carry_q), rd_lo_q};

  // A carry is never lost: the low part does not wrap again before the drain takes it.
  for (genvar k = 0; k < N; k++) begin : gen_carry_chk
    `NI_ASSERT(CarryTaken_A, !(inc_i[k] && lo_q[k] == '1 && carry_q[k] && !take_q[k] && !clr[k]))
  end
  if (N < 2) begin : gen_n_chk
    $error("ni_event_counters: N must be 2 or more (D1 reads a word a cycle before D2 writes it)");
  end
  `NI_ASSERT(RrInRange_A, 32'(rr_q) < N && take_q == N'(1) << rr_q)
  `NI_ASSERT(OneMatch_A, $onehot0(match))
endmodule

`default_nettype wire

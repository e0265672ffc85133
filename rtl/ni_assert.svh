// SPDX-License-Identifier: Apache-2.0
// Assertion macros: clocked SVA under Verilator, immediate asserts under FORMAL, nothing otherwise.
`ifndef NI_ASSERT_SVH
`define NI_ASSERT_SVH

// NI_ASSUME states what a block's inputs promise: checked like an assertion in
// simulation, assumed by the formal proofs.
`ifdef VERILATOR
  `define NI_ASSERT(name, prop) \
    name: assert property (@(posedge clk_i) disable iff (!rst_ni) (prop));
  `define NI_ASSUME(name, prop) \
    name: assert property (@(posedge clk_i) disable iff (!rst_ni) (prop));
  // An AXI4-Stream handshake: while valid waits for ready, valid and the payload hold.
  `define NI_ASSERT_AXIS_STABLE(name, valid, ready, payload) \
    name: assert property (@(posedge clk_i) disable iff (!rst_ni) \
      ((valid) && !(ready)) |=> ((valid) && $stable(payload)));
`elsif FORMAL
  `define NI_ASSERT(name, prop) \
    always_ff @(posedge clk_i) if (rst_ni) name: assert (prop);
  `define NI_ASSUME(name, prop) \
    always_ff @(posedge clk_i) if (rst_ni) name: assume (prop);
  `define NI_ASSERT_AXIS_STABLE(name, valid, ready, payload)
`else
  `define NI_ASSERT(name, prop)
  `define NI_ASSUME(name, prop)
  `define NI_ASSERT_AXIS_STABLE(name, valid, ready, payload)
`endif

`endif

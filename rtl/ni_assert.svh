// SPDX-License-Identifier: Apache-2.0
// Assertion macros: clocked SVA under Verilator, immediate asserts under FORMAL, nothing otherwise.
`ifndef NI_ASSERT_SVH
`define NI_ASSERT_SVH

// NI_ASSUME states what a block's inputs promise: checked like an assertion in
// simulation, assumed by the formal proofs.
//
// NI_PROTOCOL detects a protocol violation at an input the NI does not trust (the
// host port): the NI must survive it (and count it), so in simulation it only warns,
// and the proofs do not assume it.
`ifdef VERILATOR
  `define NI_PROTOCOL(name, prop) \
    name: assert property (@(posedge clk_i) disable iff (!rst_ni) (prop)) \
      else $warning("protocol violation at an input");
  `define NI_ASSERT(name, prop) \
    name: assert property (@(posedge clk_i) disable iff (!rst_ni) (prop));
  `define NI_ASSUME(name, prop) \
    name: assert property (@(posedge clk_i) disable iff (!rst_ni) (prop));
  // An AXI4-Stream handshake: while valid waits for ready, valid and the payload hold.
  `define NI_ASSERT_AXIS_STABLE(name, valid, ready, payload) \
    name: assert property (@(posedge clk_i) disable iff (!rst_ni) \
      ((valid) && !(ready)) |=> ((valid) && $stable(payload)));
  // The same, excused in a cycle where an upstream violation (excuse) withdrew it.
  `define NI_ASSERT_AXIS_STABLE_UNLESS(name, valid, ready, payload, excuse) \
    name: assert property (@(posedge clk_i) disable iff (!rst_ni) \
      ((valid) && !(ready)) |=> ((excuse) || ((valid) && $stable(payload))));
`elsif FORMAL
  `define NI_PROTOCOL(name, prop)
  `define NI_ASSERT(name, prop) \
    always_ff @(posedge clk_i) if (rst_ni) name: assert (prop);
  `define NI_ASSUME(name, prop) \
    always_ff @(posedge clk_i) if (rst_ni) name: assume (prop);
  `define NI_ASSERT_AXIS_STABLE(name, valid, ready, payload)
  `define NI_ASSERT_AXIS_STABLE_UNLESS(name, valid, ready, payload, excuse)
`else
  `define NI_PROTOCOL(name, prop)
  `define NI_ASSERT(name, prop)
  `define NI_ASSUME(name, prop)
  `define NI_ASSERT_AXIS_STABLE(name, valid, ready, payload)
  `define NI_ASSERT_AXIS_STABLE_UNLESS(name, valid, ready, payload, excuse)
`endif

`endif

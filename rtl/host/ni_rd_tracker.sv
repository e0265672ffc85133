// SPDX-License-Identifier: Apache-2.0
// Remote reads, atomics and confirmed writes this NI is serving: maps the tag the NI used
// toward local memory back to the requesting node and the requester's own ID and tag.
`default_nettype none
`include "ni_assert.svh"

module ni_rd_tracker #(
  parameter int unsigned NumTags = 16,
  localparam int unsigned TagW = $clog2(NumTags)
) (
  input  logic clk_i,
  input  logic rst_ni,
  // Allocation (fabric receive side): lowest free tag, committed once the read is forwarded.
  output logic free_avail_o,
  output logic [TagW-1:0] free_tag_o,
  input  logic commit_i,
  input  logic [TagW-1:0] commit_tag_i,
  input  logic [15:0] commit_node_i,
  input  logic [15:0] commit_reqid_i,
  input  logic [9:0] commit_otag_i,  // the requester's tag (10 bits)
  input  logic [23:0] commit_psn_i,   // the request's PSN, echoed by its response
  input  logic [1:0] commit_kind_i,   // ni_pkg::TRK_*
  input  logic [51:0] commit_page_i,  // memory-ID base page (TRK_CONF_MEM through a memory ID)
  // Lookup and release (host receive side, when memory's completion arrives).
  input  logic [7:0] lookup_tag_i,
  output logic lookup_hit_o,
  output logic [15:0] lookup_node_o,
  output logic [15:0] lookup_reqid_o,
  output logic [9:0] lookup_otag_o,
  output logic [23:0] lookup_psn_o,
  output logic [1:0] lookup_kind_o,
  output logic [51:0] lookup_page_o,
  input  logic release_i,
  // A write ni_mem_keep gave up on: its tag is free again (memory never answered).
  input  logic drop_i,
  input  logic [7:0] drop_tag_i
);
  logic [NumTags-1:0] valid_q, valid_d;
  // A tag's record: one write port, one asynchronous read port (LUT RAM).
  localparam int unsigned RecW = 16 + 16 + 10 + 24 + 2 + 52;
  logic [RecW-1:0] rec_mem_q [NumTags];
  logic [TagW-1:0] lidx;

  assign lidx = lookup_tag_i[TagW-1:0];
  assign lookup_hit_o = (lookup_tag_i < 8'(NumTags)) && valid_q[lidx];
  assign {lookup_node_o, lookup_reqid_o, lookup_otag_o, lookup_psn_o, lookup_kind_o, lookup_page_o} =
      rec_mem_q[lidx];

  always_comb begin
    free_avail_o = 1'b0;
    free_tag_o = '0;
    for (int i = NumTags - 1; i >= 0; i--) begin
      if (!valid_q[i]) begin
        free_avail_o = 1'b1;
        free_tag_o = i[TagW-1:0];
      end
    end
  end

  always_comb begin
    valid_d = valid_q;
    if (release_i && lookup_hit_o) valid_d[lidx] = 1'b0;
    if (drop_i) valid_d[drop_tag_i[TagW-1:0]] = 1'b0;
    if (commit_i) valid_d[commit_tag_i] = 1'b1;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) valid_q <= '0;
    else valid_q <= valid_d;
  end

  always_ff @(posedge clk_i) begin
    if (commit_i) begin
      rec_mem_q[commit_tag_i] <= {commit_node_i, commit_reqid_i, commit_otag_i, commit_psn_i, commit_kind_i,
                                  commit_page_i};
    end
  end

  `NI_ASSERT(CommitFree_A, commit_i |-> !valid_q[commit_tag_i])
  `NI_ASSERT(ReleaseHit_A, release_i |-> lookup_hit_o)
  `NI_ASSERT(DropHeld_A, drop_i |-> drop_tag_i < 8'(NumTags) && valid_q[drop_tag_i[TagW-1:0]])
endmodule

`default_nettype wire

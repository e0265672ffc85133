// SPDX-License-Identifier: Apache-2.0
// 3 DW requests widened to 4 DW, in front of ni_host_rx. PCIe sends a memory request
// whose address lies below 4 GiB with a 3 DW header (Fmt 000/010: MRd, MWr, the
// AtomicOps, DMWr); the NI handles the 4 DW form. Such a TLP leaves here with Fmt bit 0
// set (byte 0 | 0x20) and four zero bytes (address bits 63:32) put in at byte 8: its
// bytes 8.. follow four bytes later, so it may take one beat more (the input waits a
// cycle). Whatever else passes unchanged: 4 DW requests, completions, the kinds the NI
// refuses (ni_host_rx answers them). A TLP that ends before byte 8 gets nothing put
// in; one cut or too long keeps its error (its bytes still disagree with its Length).
// It adds no cycle: the output is the input's beat rearranged (its registers hold the
// last four bytes of the beat before), and ni_host_rx's input queue, whose ready is a
// register, takes it.
`default_nettype none
`include "ni_assert.svh"

module ni_host_widen #(
  parameter int unsigned DataW = 64,
  localparam int unsigned KeepW = DataW / 8
) (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic [DataW-1:0] s_axis_tdata,
  input  logic [KeepW-1:0] s_axis_tkeep,
  input  logic s_axis_tlast,
  input  logic s_axis_tuser,   // with tlast: passed on with the TLP's last beat (nullified)
  input  logic s_axis_tvalid,
  output logic s_axis_tready,
  output logic [DataW-1:0] m_axis_tdata,
  output logic [KeepW-1:0] m_axis_tkeep,
  output logic m_axis_tlast,
  output logic m_axis_tuser,
  output logic m_axis_tvalid,
  input  logic m_axis_tready,
  output logic ev_widened_o  // a 3 DW request was widened (its first beat)
);
  localparam int unsigned Bpb = KeepW;
  if (DataW < 64 || (DataW & (DataW - 1)) != 0) begin : gen_bad_width
    $error("ni_host_widen: DataW must be a power of two from 64");
  end

  // Fmt/Type of the 3 DW requests the NI serves in their 4 DW form.
  function automatic logic is_3dw_req(input logic [7:0] ft);
    is_3dw_req = !ft[5] && ni_pkg::is_mem_req(ft | 8'h20);
  endfunction

  logic first_q;                 // the next input beat starts a TLP
  logic wide_q;                  // the TLP passing is widened
  logic [31:0] carry_q;          // its last four input bytes not yet out ...
  logic [3:0] carry_keep_q;      // ... (those present)
  logic flush_q;                 // one more beat out: the carry, the TLP's last ...
  logic user_q;                  // ... with this tuser
  logic wide, take;
  logic [31:0] carry_d;
  logic [3:0] carry_keep_d;

  assign wide = first_q ? is_3dw_req(s_axis_tdata[7:0]) : wide_q;
  assign s_axis_tready = m_axis_tready && !flush_q;
  assign take = s_axis_tvalid && s_axis_tready;
  assign m_axis_tvalid = flush_q || s_axis_tvalid;

  // A widened TLP's first beat out: bytes 0..7 (Fmt bit 0 set), at 128 bits and up the
  // four zero bytes and its bytes 8.. after them.
  logic [DataW-1:0] first_data;
  logic [KeepW-1:0] first_keep;
  if (Bpb == 8) begin : gen_narrow
    assign first_data = {s_axis_tdata[DataW-1:8], s_axis_tdata[7:0] | 8'h20};
    assign first_keep = s_axis_tkeep;
  end else begin : gen_wide
    assign first_data = {s_axis_tdata[DataW-33:64], 32'd0, s_axis_tdata[63:8], s_axis_tdata[7:0] | 8'h20};
    assign first_keep = {s_axis_tkeep[KeepW-5:8], {4{s_axis_tkeep[8]}}, s_axis_tkeep[7:0]};
  end

  always_comb begin
    m_axis_tdata = s_axis_tdata;
    m_axis_tkeep = s_axis_tkeep;
    m_axis_tlast = s_axis_tlast;
    carry_d = s_axis_tdata[DataW-32 +: 32];
    carry_keep_d = s_axis_tkeep[KeepW-4 +: 4];
    if (flush_q) begin
      m_axis_tdata = '0;
      m_axis_tdata[31:0] = carry_q;
      m_axis_tkeep = '0;
      m_axis_tkeep[3:0] = carry_keep_q;
      m_axis_tlast = 1'b1;
    end else if (wide && first_q) begin
      m_axis_tdata = first_data;
      m_axis_tkeep = first_keep;
      if (Bpb == 8) begin
        // The whole beat is bytes 0..7: the four zero bytes lead the next beat.
        carry_d = '0;
        carry_keep_d = s_axis_tlast ? 4'h0 : 4'hF;
      end
      m_axis_tlast = s_axis_tlast && carry_keep_d == '0;
    end else if (wide) begin
      m_axis_tdata = {s_axis_tdata[DataW-33:0], carry_q};
      m_axis_tkeep = {s_axis_tkeep[KeepW-5:0], carry_keep_q};
      m_axis_tlast = s_axis_tlast && carry_keep_d == '0;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      first_q <= 1'b1;
      wide_q <= 1'b0;
      flush_q <= 1'b0;
      user_q <= 1'b0;
    end else begin
      if (flush_q && m_axis_tready) flush_q <= 1'b0;
      if (take) begin
        first_q <= s_axis_tlast;
        wide_q <= wide;
        flush_q <= wide && s_axis_tlast && carry_keep_d != '0;
        user_q <= s_axis_tuser;
      end
    end
  end
  always_ff @(posedge clk_i) begin
    if (take) begin
      carry_q <= carry_d;
      carry_keep_q <= carry_keep_d;
    end
  end
  assign m_axis_tuser = flush_q ? user_q : s_axis_tuser && m_axis_tlast;
  assign ev_widened_o = take && first_q && wide;

endmodule

`default_nettype wire

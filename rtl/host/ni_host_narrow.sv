// SPDX-License-Identifier: Apache-2.0
// The NI's own requests below 4 GiB narrowed to 3 DW, behind ni_host_tx. PCIe wants a
// memory request whose address is below 4 GiB in the 3 DW form; the NI's blocks make
// every request with the 4 DW header. A 4 DW request (MRd, MWr, AtomicOp, DMWr) whose
// address bits 63:32 (its bytes 8..11) are zero leaves with Fmt bit 0 clear (byte 0 &
// ~0x20) and those four bytes taken out: its bytes 12.. follow four bytes earlier.
// Anything else passes unchanged (completions, requests above 4 GiB, a request cut
// inside its header). Every beat waits in a holding register until the next one comes
// (or it is a TLP's last): a narrowed beat is made of two input beats, and at 64 bits
// the decision reads the second beat. One beat a cycle while the input streams; a
// narrowed TLP whose last beat had more than four bytes makes one beat more at its end.
// The output is a skid register.
`default_nettype none
`include "ni_assert.svh"

module ni_host_narrow #(
  parameter int unsigned DataW = 64,
  parameter int unsigned DestW = 8,
  localparam int unsigned KeepW = DataW / 8
) (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic [DataW-1:0] s_axis_tdata,
  input  logic [KeepW-1:0] s_axis_tkeep,
  input  logic s_axis_tlast,
  input  logic s_axis_tuser,   // with tlast: the TLP is nullified
  input  logic [DestW-1:0] s_axis_tdest,
  input  logic s_axis_tvalid,
  output logic s_axis_tready,
  output logic [DataW-1:0] m_axis_tdata,
  output logic [KeepW-1:0] m_axis_tkeep,
  output logic m_axis_tlast,
  output logic m_axis_tuser,
  output logic [DestW-1:0] m_axis_tdest,
  output logic m_axis_tvalid,
  input  logic m_axis_tready,
  output logic ev_narrowed_o  // a request is narrowed (as the beat that decides it comes in)
);
  localparam int unsigned Bpb = KeepW;
  if (DataW < 64 || (DataW & (DataW - 1)) != 0) begin : gen_bad_width
    $error("ni_host_narrow: DataW must be a power of two from 64");
  end

  // The holding register: a beat not yet out. In a narrowed TLP after its first beat it
  // holds Bpb - 4 bytes (lanes 0..Bpb-5), which the next beat's first four complete.
  logic h_valid_q, h_last_q, h_user_q;
  logic [DataW-1:0] h_data_q;
  logic [KeepW-1:0] h_keep_q;
  logic [DestW-1:0] h_dest_q;
  logic undecided_q;  // 64 bits: it holds a request's first beat; the next decides
  logic narrow_q;     // the TLP in the holding register is narrowed

  logic take, emit, out_ready, out_valid;
  logic [DataW-1:0] out_data, h_data_d;
  logic [KeepW-1:0] out_keep, h_keep_d;
  logic out_last, out_user, h_valid_d, h_last_d, h_user_d, undecided_d, narrow_d;
  logic [DestW-1:0] out_dest, h_dest_d;
  logic dec_narrow;  // 64 bits: the held first beat and this one make a request below 4 GiB

  assign s_axis_tready = !h_valid_q || out_ready;
  assign out_valid = h_valid_q && (h_last_q || s_axis_tvalid);
  assign take = s_axis_tvalid && s_axis_tready;
  assign emit = out_valid && out_ready;
  assign dec_narrow = ni_pkg::is_mem_req(h_data_q[7:0]) && s_axis_tdata[31:0] == '0 && &s_axis_tkeep;

  // A TLP's first beat into the holding register.
  logic [DataW-1:0] first_data;
  logic [KeepW-1:0] first_keep;
  logic first_narrow, first_undecided;
  if (Bpb == 8) begin : gen_first_narrow
    // The address's upper half comes in the next beat: held undecided.
    assign first_data = s_axis_tdata;
    assign first_keep = s_axis_tkeep;
    assign first_narrow = 1'b0;
    assign first_undecided = !s_axis_tlast && ni_pkg::is_mem_req(s_axis_tdata[7:0]);
  end else begin : gen_first_wide
    // The whole header is in this beat: narrowed, bytes 0..7 and 12.. move into lanes
    // 0..Bpb-5 (the next beat's first four bytes complete them).
    assign first_narrow = ni_pkg::is_mem_req(s_axis_tdata[7:0]) && s_axis_tdata[95:64] == '0 && &s_axis_tkeep[15:0];
    assign first_data = first_narrow ? {32'd0, s_axis_tdata[DataW-1:96], s_axis_tdata[63:8],
                                        s_axis_tdata[7:0] & 8'hDF}
                                     : s_axis_tdata;
    assign first_keep = first_narrow ? {4'h0, s_axis_tkeep[KeepW-1:12], s_axis_tkeep[7:0]} : s_axis_tkeep;
    assign first_undecided = 1'b0;
  end

  always_comb begin
    // Out: the holding register, completed by this beat's first four bytes when narrowed.
    out_data = h_data_q;
    out_keep = h_keep_q;
    out_last = h_last_q;
    out_user = h_user_q;
    out_dest = h_dest_q;
    if (!h_last_q && narrow_q && !undecided_q) begin
      out_data[DataW-32 +: 32] = s_axis_tdata[31:0];
      out_keep[KeepW-4 +: 4] = s_axis_tkeep[3:0];
      out_last = s_axis_tlast && s_axis_tkeep[KeepW-1:4] == '0;
      out_user = s_axis_tuser && out_last;
    end else if (undecided_q && dec_narrow) begin
      out_data[7:0] = h_data_q[7:0] & 8'hDF;
    end
    // The holding register next.
    h_valid_d = h_valid_q && !emit;
    h_data_d = h_data_q;
    h_keep_d = h_keep_q;
    h_last_d = h_last_q;
    h_user_d = h_user_q;
    h_dest_d = h_dest_q;
    undecided_d = undecided_q;
    narrow_d = narrow_q;
    if (take) begin
      h_user_d = s_axis_tuser;
      h_last_d = s_axis_tlast;
      h_valid_d = 1'b1;
      if (!h_valid_q || h_last_q) begin
        // A TLP's first beat.
        h_data_d = first_data;
        h_keep_d = first_keep;
        h_dest_d = s_axis_tdest;
        undecided_d = first_undecided;
        narrow_d = first_narrow;
      end else if (undecided_q ? dec_narrow : narrow_q) begin
        // The rest of a narrowed TLP: this beat's bytes 4.. wait for the next four.
        h_data_d = '0;
        h_data_d[DataW-33:0] = s_axis_tdata[DataW-1:32];
        h_keep_d = '0;
        h_keep_d[KeepW-5:0] = s_axis_tkeep[KeepW-1:4];
        // Its last bytes all went out with this beat: nothing is held.
        if (s_axis_tlast && s_axis_tkeep[KeepW-1:4] == '0) h_valid_d = 1'b0;
        undecided_d = 1'b0;
        narrow_d = 1'b1;
      end else begin
        h_data_d = s_axis_tdata;
        h_keep_d = s_axis_tkeep;
        undecided_d = 1'b0;
      end
    end
  end
  // (At 64 bits a narrowed TLP's first held beat is Bpb bytes: it goes out as it is,
  // byte 0 changed, when the next decides; after it the held beats are Bpb - 4 bytes.)

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) h_valid_q <= 1'b0;
    else h_valid_q <= h_valid_d;
  end
  always_ff @(posedge clk_i) begin
    h_data_q <= h_data_d;
    h_keep_q <= h_keep_d;
    h_last_q <= h_last_d;
    h_user_q <= h_user_d;
    h_dest_q <= h_dest_d;
    undecided_q <= undecided_d;
    narrow_q <= narrow_d;
  end
  assign ev_narrowed_o = take && ((!h_valid_q || h_last_q) ? first_narrow : undecided_q && dec_narrow);

  ni_skid #(.Width(DataW + KeepW + 2 + DestW)) u_out (
    .clk_i, .rst_ni, .wdata_i({out_dest, out_user, out_last, out_keep, out_data}), .wvalid_i(out_valid),
    .wready_o(out_ready),
    .rdata_o({m_axis_tdest, m_axis_tuser, m_axis_tlast, m_axis_tkeep, m_axis_tdata}), .rvalid_o(m_axis_tvalid),
    .rready_i(m_axis_tready));
endmodule

`default_nettype wire

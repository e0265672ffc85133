// SPDX-License-Identifier: Apache-2.0
// Host transmit: merges decapsulated TLPs and the NI's own TLPs (CSR read data;
// UR and CA completions, write confirmations, interrupts; the DMA engine's memory
// reads and its local-copy writes) onto the host port, round robin at TLP boundaries.
// Every source holds its beat until taken, and the choice of source is held from the
// cycle it is first offered; the beats chosen enter an output queue of two (the
// registered block boundary: the host port's ready and this block's outputs are
// registers), so a decapsulated TLP's beat reaches the host port a cycle after it
// arrives here. The NI's own TLPs are built into a staging register per source first,
// and leave a cycle after they are handed over at the earliest.
`default_nettype none
`include "ni_assert.svh"

module ni_host_tx #(
  parameter int unsigned DataW = 64,
  parameter logic [15:0] NiReqId = 16'h0100,
  localparam int unsigned Bpb = DataW / 8,
  localparam int unsigned KeepW = Bpb
) (
  input  logic clk_i,
  input  logic rst_ni,
  // Decapsulated TLPs from the fabric.
  input  logic [DataW-1:0] s_axis_tdata,
  input  logic [KeepW-1:0] s_axis_tkeep,
  input  logic s_axis_tlast,
  input  logic s_axis_tuser,
  input  logic s_axis_tvalid,
  output logic s_axis_tready,
  // The NI's own completion, confirmation or interrupt (ni_pkg::own_cpl_t).
  input  ni_pkg::own_cpl_t ur_i,
  input  logic ur_valid_i,
  output logic ur_ready_o,
  // CSR read completion: {data, reqid, tag, lower address}.
  input  logic [64:0] rd_i,
  input  logic rd_valid_i,
  output logic rd_ready_o,
  // A memory read of the DMA engine (MRd, requester ID NiReqId).
  input  logic [63:0] dma_rd_addr_i,
  input  logic [12:0] dma_rd_bytes_i,
  input  logic [7:0] dma_rd_tag_i,
  input  logic dma_rd_valid_i,
  output logic dma_rd_ready_o,
  // The DMA engine's local-copy MWr TLPs, beats {bad, last, keep, data} (bad: nullified).
  input  logic [DataW+KeepW+1:0] copy_beat_i,
  input  logic copy_valid_i,
  output logic copy_ready_o,
  // Host port out.
  output logic [DataW-1:0] m_axis_tdata,
  output logic [KeepW-1:0] m_axis_tkeep,
  output logic m_axis_tlast,
  output logic m_axis_tuser,
  output logic m_axis_tvalid,
  input  logic m_axis_tready,
  // With every beat: the host port of an interrupt (the port ur_i.reqid[15:8] names);
  // 0 for every other TLP (ni_host_demux sends a completion to the port its Requester
  // ID names and the NI's memory requests to port 0).
  output logic [7:0] m_axis_tdest
);
  typedef enum logic [2:0] {SrcFab, SrcUr, SrcRd, SrcDma, SrcCopy, SrcNone} src_e;
  localparam int unsigned NumSrc = 5;

  // ------------------------------------------------------------ the NI's own TLPs
  // Each own source (ur_i, rd_i, the DMA engine's read) has a staging register: its TLP
  // is built into it as bytes and lanes (docs/formats.md) when the source hands it over,
  // and leaves from there a beat at a time (a beat counter picks the lanes), so every
  // lane of the output comes from a register. A stage takes its next TLP when it is
  // empty or its last beat is being taken, so one source's own TLPs (the DMA engine's
  // reads, which its throughput needs) go back to back.
  localparam int unsigned OwnBytes = 20;  // the longest: a write confirmation, an interrupt
  localparam int unsigned OwnBeats = (OwnBytes + Bpb - 1) / Bpb;
  localparam int unsigned OwnBeatW = OwnBeats > 1 ? $clog2(OwnBeats) : 1;
  localparam int unsigned OwnW = OwnBeats * DataW;
  localparam int unsigned OwnKeepW = OwnBeats * Bpb;
  localparam int unsigned OwnTlpW = 8 + OwnBeatW + OwnKeepW + OwnW;
  // A TLP of `len` bytes as a stage holds it: {the host port (an interrupt's; else 0),
  // its last beat, the lanes kept, the bytes (byte p at [8p +: 8])}.
  function automatic logic [OwnTlpW-1:0] own_tlp(input logic [OwnBytes*8-1:0] bytes, input logic [4:0] len,
                                                 input logic [7:0] dest);
    logic [OwnKeepW-1:0] keep;
    for (int p = 0; p < OwnKeepW; p++) keep[p] = p < 32'(len);
    own_tlp = {dest, OwnBeatW'((32'(len) - 1) / Bpb), keep, OwnW'(bytes)};
  endfunction

  // A completion (Cpl with a status; CplD of CSR read data; CplD of a write confirmation
  // whose data is the address, least significant byte first).
  function automatic logic [OwnBytes*8-1:0] cpl_bytes(input logic [7:0] ft, input logic [7:0] len_dw,
                                                      input logic [2:0] status, input logic [7:0] byte_count,
                                                      input logic [15:0] reqid, input logic [9:0] tag,
                                                      input logic [6:0] laddr, input logic [63:0] data);
    cpl_bytes = (OwnBytes*8)'({data, ni_pkg::cpl_header(ft, len_dw, NiReqId, status, 12'(byte_count), reqid, tag,
                                                        laddr)});
  endfunction

  logic [OwnTlpW-1:0] ur_tlp, rd_tlp, dma_tlp;
  always_comb begin
    unique case (ur_i.kind)
      ni_pkg::OWN_CONF:
        ur_tlp = own_tlp(cpl_bytes(ni_pkg::TLP_CPLD, 8'd2, ni_pkg::CPL_SC, 8'd8, ur_i.reqid, ur_i.tag,
                                   ur_i.addr[6:0], ur_i.addr), 5'd20, 8'd0);
      ni_pkg::OWN_IRQ:
        ur_tlp = own_tlp({ur_i.data, ni_pkg::mem_req_header(ni_pkg::TLP_MWR64, 10'd1, NiReqId, 8'h00,
                                                            {ur_i.addr[63:2], 2'b00})}, 5'd20, ur_i.reqid[15:8]);
      default:
        ur_tlp = own_tlp(cpl_bytes(ni_pkg::TLP_CPL, 8'd0, ur_i.status, 8'd4, ur_i.reqid, ur_i.tag,
                                   ur_i.addr[6:0], 64'd0), 5'd12, 8'd0);
    endcase
  end
  // rd_i: {data, reqid, tag (10 bits), lower address}.
  assign rd_tlp = own_tlp(cpl_bytes(ni_pkg::TLP_CPLD, 8'd1, ni_pkg::CPL_SC, 8'd4, rd_i[32:17], rd_i[16:7],
                                    rd_i[6:0], {32'h0, rd_i[64:33]}), 5'd16, 8'd0);
  logic [9:0] dma_dw;
  assign dma_dw = dma_rd_bytes_i[11:2];  // 4096 bytes: Length 0 (1024 DW); DW multiples
  assign dma_tlp = own_tlp((OwnBytes*8)'(ni_pkg::mem_req_header(ni_pkg::TLP_MRD64, dma_dw, NiReqId, dma_rd_tag_i,
                                                               {dma_rd_addr_i[63:2], 2'b00})), 5'd16, 8'd0);
  logic unused;
  assign unused = ^{dma_rd_bytes_i[12], dma_rd_bytes_i[1:0], dma_rd_addr_i[1:0]};

  // The stages, in the order of src_e from SrcUr (separate arrays: Yosys reads no member
  // of an indexed array of structs).
  localparam int unsigned NumOwn = 3;
  logic [NumOwn-1:0][7:0] st_dest_q;
  logic [NumOwn-1:0][OwnBeatW-1:0] st_end_q, st_beat_q;  // its last beat, the beat at the head
  logic [NumOwn-1:0][OwnKeepW-1:0] st_keep_q;
  logic [NumOwn-1:0][OwnW-1:0] st_data_q;
  logic [NumOwn-1:0] stage_v_q, own_in_valid, own_in_ready, own_last, own_shift, own_done;
  logic [NumOwn-1:0][OwnTlpW-1:0] own_in;
  assign own_in = {dma_tlp, rd_tlp, ur_tlp};
  assign own_in_valid = {dma_rd_valid_i, rd_valid_i, ur_valid_i};
  assign own_in_ready = ~stage_v_q | own_done;
  assign {dma_rd_ready_o, rd_ready_o, ur_ready_o} = own_in_ready;
  logic [NumOwn-1:0][DataW-1:0] own_data;
  logic [NumOwn-1:0][KeepW-1:0] own_keep;
  // own_last: the beat at the head is the stage's last, a register (set as the stage
  // loads or steps), so the arbiter's view of a stage reads no compare.
  logic [NumOwn-1:0] own_last_q;
  assign own_last = own_last_q;
  for (genvar k = 0; k < NumOwn; k++) begin : gen_stage
    logic [7:0] in_dest;
    logic [OwnBeatW-1:0] in_end;
    logic [OwnKeepW-1:0] in_keep;
    logic [OwnW-1:0] in_data;
    logic unused_in;
    assign {in_dest, in_end, in_keep, in_data} = own_in[k];
    assign unused_in = ^{in_dest, in_keep, in_data};
    assign own_data[k] = st_data_q[k][32'(st_beat_q[k]) * DataW +: DataW];
    assign own_keep[k] = st_keep_q[k][32'(st_beat_q[k]) * Bpb +: Bpb];
    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) begin
        {st_dest_q[k], st_end_q[k], st_keep_q[k], st_data_q[k]} <= '0;
        st_beat_q[k] <= '0;
        stage_v_q[k] <= 1'b0;
        own_last_q[k] <= 1'b0;
      end else if (own_in_valid[k] && own_in_ready[k]) begin
        {st_dest_q[k], st_end_q[k], st_keep_q[k], st_data_q[k]} <= own_in[k];
        st_beat_q[k] <= '0;
        stage_v_q[k] <= 1'b1;
        own_last_q[k] <= in_end == '0;
      end else if (own_done[k]) begin
        stage_v_q[k] <= 1'b0;
      end else if (own_shift[k]) begin
        st_beat_q[k] <= st_beat_q[k] + 1'b1;
        own_last_q[k] <= st_beat_q[k] + 1'b1 == st_end_q[k];
      end
    end
  end

  // ------------------------------------------------------------ arbiter
  // Round robin among waiting sources, starting after the last one served. The pick is
  // made a cycle ahead (into the one-hot s_*_q) and taken when no TLP is going out: a
  // source holds its valid until its TLP is taken, so a registered pick is still
  // waiting, or was the source just served (then the next pick follows a cycle later,
  // unless that source is the next to offer a TLP).
  src_e cur_q, cur_d, pick, sel_q, sel_d;
  logic [2:0] rr_q, rr_d;
  logic [NumSrc-1:0] want;
  // An own source counts as waiting once its TLP is offered (an empty stage takes it in
  // this cycle, so it is there when the pick takes effect), and no longer once its last
  // beat is taken unless its next TLP is offered (a one-beat TLP, at 128 bits and wider,
  // was otherwise picked again for a cycle with nothing to send).
  assign want = {copy_valid_i, (stage_v_q & ~own_done) | own_in_valid, s_axis_tvalid};
  // (One fixed priority order per value of rr_q: the source numbers are constants, no
  // modulo is built.)
  always_comb begin
    pick = SrcNone;
    for (int r = 0; r < NumSrc; r++) begin
      if (32'(rr_q) == r) begin
        for (int k = NumSrc - 1; k >= 0; k--) begin
          if (want[(r + k) % NumSrc]) pick = src_e'(3'((r + k) % NumSrc));
        end
      end
    end
  end

  // The beat chosen (o_*), into the output queue: an AND-OR of the sources under their
  // one-hot selects (each steering every lane).
  logic s_fab_q, s_copy_q;
  logic [NumOwn-1:0] s_own_q;
  logic o_tlast, o_tvalid, o_tready;
  logic load;
  localparam int unsigned OW = 8 + 2 + KeepW + DataW;  // {dest, user, last, keep, data}
  logic [OW-1:0] o_word;
  always_comb begin
    o_word = ({OW{s_fab_q}} & {8'd0, s_axis_tuser, s_axis_tlast, s_axis_tkeep, s_axis_tdata}) |
             ({OW{s_copy_q}} & {8'd0, copy_beat_i});
    for (int k = 0; k < NumOwn; k++) begin
      o_word = o_word | ({OW{s_own_q[k]}} & {st_dest_q[k], 1'b0, own_last[k], own_keep[k], own_data[k]});
    end
    o_tlast = o_word[DataW + KeepW];
    o_tvalid = (s_fab_q && s_axis_tvalid) || (s_copy_q && copy_valid_i) || |(s_own_q & stage_v_q);
  end
  assign load = o_tvalid && o_tready;
  assign s_axis_tready = s_fab_q && o_tready;
  assign copy_ready_o = s_copy_q && o_tready;
  // A stage's beat is taken when it is selected and the output queue has room (its
  // valid is the stage's own: no wider term on the way to the stage's enables).
  assign own_shift = s_own_q & stage_v_q & {NumOwn{o_tready}};
  assign own_done = own_shift & own_last;
  ni_fifo #(.Width(OW), .Depth(2), .FreeWrite(1)) u_out_q (
    .clk_i, .rst_ni, .wdata_i(o_word), .wvalid_i(o_tvalid), .wready_o(o_tready),
    .rdata_o({m_axis_tdest, m_axis_tuser, m_axis_tlast, m_axis_tkeep, m_axis_tdata}),
    .rvalid_o(m_axis_tvalid), .rready_i(m_axis_tready));

  always_comb begin
    cur_d = cur_q;
    rr_d = rr_q;
    // The choice is held from the cycle its first beat is offered.
    if (cur_q == SrcNone && o_tvalid) begin
      cur_d = sel_q;
      rr_d = (sel_q == SrcCopy) ? 3'd0 : 3'(sel_q) + 3'd1;
    end
    if (load && o_tlast) cur_d = SrcNone;
  end

  // With no source waiting the pick stays where it was: a source whose next TLP comes a
  // cycle after its last (the decapsulated TLPs, whose fabric header beats leave a gap)
  // is then taken without a cycle to pick it again.
  assign sel_d = (cur_d != SrcNone) ? cur_d : (pick != SrcNone) ? pick : sel_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      cur_q <= SrcNone;
      sel_q <= SrcNone;
      {s_copy_q, s_own_q, s_fab_q} <= '0;
      rr_q <= '0;
    end else begin
      cur_q <= cur_d;
      sel_q <= sel_d;
      {s_copy_q, s_own_q, s_fab_q} <= {sel_d == SrcCopy, sel_d == SrcDma, sel_d == SrcRd, sel_d == SrcUr,
                                       sel_d == SrcFab};
      rr_q <= rr_d;
    end
  end

  `NI_ASSERT_AXIS_STABLE(HostOutStable_A, o_tvalid, o_tready, o_word)
  for (genvar k = 0; k < NumOwn; k++) begin : gen_last_a
    `NI_ASSERT(OwnLastIsHead_A, !stage_v_q[k] || own_last_q[k] == (st_beat_q[k] == st_end_q[k]))
  end
endmodule

`default_nettype wire

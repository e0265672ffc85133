// SPDX-License-Identifier: Apache-2.0
// Host transmit: merges decapsulated TLPs and the NI's own TLPs (CSR read data;
// UR and CA completions, write confirmations, interrupts; the DMA engine's memory
// reads and its local-copy writes) onto the host port, round robin at TLP boundaries.
// Every source holds its beat until taken, and the choice of source is held from the
// cycle it is first offered; the beats chosen enter an output queue of two (the
// registered block boundary: the host port's ready and this block's outputs are
// registers), so a decapsulated TLP's beat reaches the host port a cycle after it
// arrives here.
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
  input  logic [62:0] rd_i,
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
  src_e cur_q, cur_d, pick, sel, sel_d;
  logic [1:0] lbeat;
  logic [2:0] rr_q, rr_d;
  logic [1:0] lbeat_q, lbeat_d;

  // Round robin among waiting sources, starting after the last one served. The pick is
  // made a cycle ahead (into sel_q) and taken when no TLP is going out: a source holds
  // its valid until its TLP is taken, so a registered pick is still waiting, or was the
  // source just served (then the next pick follows a cycle later).
  logic [NumSrc-1:0] want;
  assign want = {copy_valid_i, dma_rd_valid_i, rd_valid_i, ur_valid_i, s_axis_tvalid};
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

  // The NI's own TLP as bytes (docs/formats.md): a completion (Cpl UR/CA; CplD of
  // CSR read data, or a write confirmation whose data is the address, least
  // significant byte first), or an interrupt (MWr of one DW).
  logic [159:0] loc;
  logic [4:0] loc_len_q;  // the own TLP's bytes, registered with its select
  // The NI's own completions and interrupts (ur_i) differ in length: in the cycle after
  // one is taken, the next one's length is being registered (it was not yet at the head
  // when its select was), so it waits a cycle.
  logic ur_taken_q;
  logic [15:0] c_reqid;
  logic [7:0] c_tag;
  logic [6:0] c_laddr;
  logic is_rd, is_conf, is_irq;
  // sel is the TLP going out, or else the pick made a cycle ahead, kept one-hot in
  // registers (s_*_q, each steering every lane of the output). A TLP's beat count
  // lbeat_q is 0 between TLPs.
  src_e sel_q;
  logic s_fab_q, s_ur_q, s_rd_q, s_dma_q, s_copy_q;
  assign sel = sel_q;
  assign lbeat = lbeat_q;
  assign is_rd = s_rd_q;
  assign is_conf = s_ur_q && ur_i.kind == ni_pkg::OWN_CONF;
  assign is_irq = s_ur_q && ur_i.kind == ni_pkg::OWN_IRQ;
  assign {c_reqid, c_tag, c_laddr} = is_rd ? rd_i[30:0] : {ur_i.reqid, ur_i.tag, ur_i.addr[6:0]};
  logic [9:0] dma_dw;
  assign dma_dw = dma_rd_bytes_i[11:2];  // 4096 bytes: Length 0 (1024 DW); DW multiples
  logic unused;
  assign unused = ^{dma_rd_bytes_i[12], dma_rd_bytes_i[1:0], dma_rd_addr_i[1:0]};
  always_comb begin
    loc = '0;
    if (s_dma_q) begin
      loc[0 +: 128] = ni_pkg::mem_req_header(ni_pkg::TLP_MRD64, dma_dw, NiReqId, dma_rd_tag_i,
                                             {dma_rd_addr_i[63:2], 2'b00});
    end else if (is_irq) begin
      loc[0 +: 128] = ni_pkg::mem_req_header(ni_pkg::TLP_MWR64, 10'd1, NiReqId, 8'h00,
                                             {ur_i.addr[63:2], 2'b00});
      loc[16*8 +: 32] = ur_i.data;
    end else begin
      loc[0*8 +: 8] = (is_rd || is_conf) ? ni_pkg::TLP_CPLD : ni_pkg::TLP_CPL;
      loc[3*8 +: 8] = is_rd ? 8'd1 : is_conf ? 8'd2 : 8'd0;
      loc[4*8 +: 8] = NiReqId[15:8];
      loc[5*8 +: 8] = NiReqId[7:0];
      loc[6*8 +: 8] = {is_rd ? ni_pkg::CPL_SC : ur_i.status, 5'd0};
      loc[7*8 +: 8] = is_conf ? 8'd8 : 8'd4;
      loc[8*8 +: 8] = c_reqid[15:8];
      loc[9*8 +: 8] = c_reqid[7:0];
      loc[10*8 +: 8] = c_tag;
      loc[11*8 +: 8] = {1'b0, c_laddr};
      loc[12*8 +: 64] = is_conf ? ur_i.addr : {32'h0, rd_i[62:31]};
    end
  end

  // The beat chosen (o_*), into the output queue.
  logic [DataW-1:0] o_tdata;
  logic [KeepW-1:0] o_tkeep;
  logic o_tlast, o_tuser, o_tvalid, o_tready;
  logic [7:0] o_tdest;
  logic load;
  logic s_loc;  // one of the NI's own TLPs (built in loc)
  logic [DataW-1:0] loc_data;
  logic [KeepW-1:0] loc_keep;
  logic [DataW+KeepW+1:0] fab_beat;
  logic [4*DataW-1:0] loc_beats;  // loc in whole beats (lbeat counts up to 3)
  assign loc_beats = (4*DataW)'(loc);
  assign s_loc = s_ur_q || s_rd_q || s_dma_q;
  assign fab_beat = {s_axis_tuser, s_axis_tlast, s_axis_tkeep, s_axis_tdata};
  always_comb begin
    for (int j = 0; j < Bpb; j++) begin
      loc_data[j*8 +: 8] = loc_beats[(32'(lbeat) * Bpb + j) * 8 +: 8];
      loc_keep[j] = 32'(lbeat) * Bpb + j < 32'(loc_len_q);
      if (!loc_keep[j]) loc_data[j*8 +: 8] = 8'h00;
    end
    // AND-OR of the sources under their one-hot selects.
    {o_tuser, o_tlast, o_tkeep, o_tdata} =
        ({(DataW + KeepW + 2){s_fab_q}} & fab_beat) | ({(DataW + KeepW + 2){s_copy_q}} & copy_beat_i) |
        ({(DataW + KeepW + 2){s_loc}} & {1'b0, 32'(lbeat) * Bpb + Bpb >= 32'(loc_len_q), loc_keep, loc_data});
    o_tvalid = (s_ur_q && ur_valid_i && !ur_taken_q) || (s_rd_q && rd_valid_i) || (s_dma_q && dma_rd_valid_i) ||
               (s_fab_q && s_axis_tvalid) || (s_copy_q && copy_valid_i);
  end

  assign o_tdest = is_irq ? ur_i.reqid[15:8] : 8'd0;
  assign load = o_tvalid && o_tready;
  assign s_axis_tready = s_fab_q && o_tready;
  assign ur_ready_o = s_ur_q && load && o_tlast;
  assign rd_ready_o = s_rd_q && load && o_tlast;
  assign dma_rd_ready_o = s_dma_q && load && o_tlast;
  assign copy_ready_o = s_copy_q && o_tready;
  ni_fifo #(.Width(8 + DataW + KeepW + 2), .Depth(2), .FreeWrite(1)) u_out_q (
    .clk_i, .rst_ni, .wdata_i({o_tdest, o_tuser, o_tlast, o_tkeep, o_tdata}), .wvalid_i(o_tvalid),
    .wready_o(o_tready), .rdata_o({m_axis_tdest, m_axis_tuser, m_axis_tlast, m_axis_tkeep, m_axis_tdata}),
    .rvalid_o(m_axis_tvalid), .rready_i(m_axis_tready));

  always_comb begin
    cur_d = cur_q;
    rr_d = rr_q;
    lbeat_d = lbeat_q;
    // The choice is held from the cycle its first beat is offered.
    if (cur_q == SrcNone && o_tvalid) begin
      cur_d = sel;
      rr_d = (sel == SrcCopy) ? 3'd0 : 3'(sel) + 3'd1;
    end
    if (load) begin
      lbeat_d = lbeat + 2'd1;
      if (o_tlast) begin
        cur_d = SrcNone;
        lbeat_d = '0;
      end
    end
  end

  assign sel_d = (cur_d == SrcNone) ? pick : cur_d;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      cur_q <= SrcNone;
      sel_q <= SrcNone;
      loc_len_q <= 5'd12;
      ur_taken_q <= 1'b0;
      {s_fab_q, s_ur_q, s_rd_q, s_dma_q, s_copy_q} <= '0;
      rr_q <= '0;
      lbeat_q <= '0;
    end else begin
      cur_q <= cur_d;
      sel_q <= sel_d;
      ur_taken_q <= ur_ready_o;
      loc_len_q <= (sel_d == SrcDma || sel_d == SrcRd) ? 5'd16 :
                   (sel_d == SrcUr && ur_i.kind != ni_pkg::OWN_CPL) ? 5'd20 : 5'd12;
      {s_fab_q, s_ur_q, s_rd_q, s_dma_q, s_copy_q} <=
          {sel_d == SrcFab, sel_d == SrcUr, sel_d == SrcRd, sel_d == SrcDma, sel_d == SrcCopy};
      rr_q <= rr_d;
      lbeat_q <= lbeat_d;
    end
  end

  `NI_ASSERT_AXIS_STABLE(HostOutStable_A, o_tvalid, o_tready, {o_tdata, o_tkeep, o_tlast, o_tuser})
endmodule

`default_nettype wire

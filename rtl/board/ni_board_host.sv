// SPDX-License-Identifier: Apache-2.0
// Board self-test: one node's root complex and memory (on-chip RAM). Serves the NI's
// TLPs (MWr; DMWr and its write confirmation; MRd with one CplD; the NI sends them with
// the 3 DW header below 4 GiB, and ni_host_widen gives them their 4 DW form here), hands completions of
// the CPU's requests to the sequencer, and sends the sequencer's requests (CPU loads
// and stores) to the NI. DataW = 64 only. Speed is not the point: one DW a cycle.
`default_nettype none
`include "ni_assert.svh"

module ni_board_host #(
  parameter int unsigned MemBytes = 16384,  // node memory: addresses 0 .. MemBytes-1
  parameter int unsigned MaxPayload = 256,
  localparam int unsigned MemWords = MemBytes / 4,
  localparam int unsigned WordAw = $clog2(MemWords),
  localparam int unsigned RxBeats = (16 + MaxPayload) / 8
) (
  input  logic clk_i,
  input  logic rst_ni,
  // TLPs to the NI (its host input).
  output logic [63:0] m_axis_tdata,
  output logic [7:0] m_axis_tkeep,
  output logic m_axis_tlast,
  output logic m_axis_tvalid,
  input  logic m_axis_tready,
  input  logic ni_room_i,  // the NI's s_host_req_room_o: a request starts only then
  // TLPs from the NI; tuser on the last beat: nullified, discarded.
  input  logic [63:0] s_axis_tdata,
  input  logic [7:0] s_axis_tkeep,
  input  logic s_axis_tlast,
  input  logic s_axis_tuser,
  input  logic s_axis_tvalid,
  output logic s_axis_tready,
  // CPU requests from the sequencer: 4 or 8 bytes at a DW-aligned address.
  input  logic req_valid_i,
  output logic req_ready_o,
  input  logic [1:0] req_kind_i,   // ReqRead, ReqWrite, ReqConfWrite
  input  logic [63:0] req_addr_i,
  input  logic req_two_i,          // 1: 8 bytes, 0: 4 bytes
  input  logic [63:0] req_data_i,  // memory byte order: byte 0 in bits 7:0
  // Completions of the CPU's requests (pulse).
  output logic cpl_valid_o,
  output logic [2:0] cpl_status_o,
  output logic [63:0] cpl_data_o,  // the first 8 data bytes; 0 without data
  // The CPU's own 8-byte accesses to memory; loc_done_o pulses when one is done.
  input  logic loc_valid_i,
  input  logic loc_write_i,
  input  logic [WordAw+1:0] loc_addr_i,  // byte address, 8-byte aligned
  input  logic [63:0] loc_wdata_i,
  output logic loc_done_o,
  output logic [63:0] loc_rdata_o
);
  localparam logic [1:0] ReqRead = 2'd0, ReqWrite = 2'd1, ReqConfWrite = 2'd2;
  localparam logic [7:0] FtMRd = 8'h20, FtMWr = 8'h60, FtDMWr = 8'h7B, FtCpl = 8'h0A, FtCplD = 8'h4A;
  localparam logic [7:0] FtFetchAdd = 8'h6C, FtCas = 8'h6E;
  localparam int unsigned BeatW = $clog2(RxBeats + 1);

  // A DW from four TLP bytes: byte 0 travels in lane 0 (bits 7:0).
  function automatic logic [31:0] dw4(input logic [7:0] b0, input logic [7:0] b1,
                                      input logic [7:0] b2, input logic [7:0] b3);
    dw4 = {b3, b2, b1, b0};
  endfunction

  // ------------------------------------------------------------ memory
  // Port A: writes of TLPs, the CPU's own accesses. Port B: reads for completions.
  logic [31:0] mem_q [MemWords];
  logic a_we;
  logic [3:0] a_be;
  logic [WordAw-1:0] a_addr, b_addr;
  logic [31:0] a_wdata, a_rdata_q, b_rdata_q;
  always_ff @(posedge clk_i) begin
    if (a_we) begin
      for (int b = 0; b < 4; b++) begin
        if (a_be[b]) mem_q[a_addr][8*b +: 8] <= a_wdata[8*b +: 8];
      end
    end
    a_rdata_q <= mem_q[a_addr];
  end
  always_ff @(posedge clk_i) b_rdata_q <= mem_q[b_addr];

  // ------------------------------------------------------------ answers owed to the NI
  typedef enum logic [1:0] { JobData, JobConf, JobUr } job_e;
  typedef struct packed {
    job_e kind;
    logic [63:0] addr;
    logic [6:0] len;     // DWs of read data (MaxPayload / 4 at most)
    logic [15:0] reqid;
    logic [7:0] tag;
  } job_t;
  localparam int unsigned JobW = 2 + 64 + 7 + 16 + 8;  // job_t
  job_t job_in, job_out;
  logic job_push, job_full_n, job_valid, job_pop;
  // The NI has at most its read tags and kept writes outstanding: four answers queue here.
  ni_fifo #(.Width(JobW), .Depth(4)) u_jobs (
    .clk_i, .rst_ni,
    .wdata_i(job_in), .wvalid_i(job_push), .wready_o(job_full_n),
    .rdata_o(job_out), .rvalid_o(job_valid), .rready_i(job_pop)
  );

  // ------------------------------------------------------------ receive: TLPs from the NI
  typedef enum logic [2:0] { RRecv, RDecode, RWrite, RAnswer, RLocal } rx_state_e;
  rx_state_e rx_q, rx_d;
  logic [63:0] rx_buf_q [RxBeats];
  logic [63:0] hdr0_q, hdr1_q;
  logic [BeatW-1:0] rx_n_q, rx_n_d;      // beats taken of the TLP coming in
  logic [BeatW:0] rx_dws_q, rx_dws_d;    // its DWs, once whole
  logic rx_null_q, rx_null_d, rx_long_q, rx_long_d;
  logic [6:0] wr_d_q, wr_d_d;            // data DW being written
  logic [1:0] loc_step_q, loc_step_d;
  logic [31:0] loc_lo_q, loc_lo_d;
  job_t job_q, job_d;

  // The NI's TLPs in the 4 DW form (w_).
  logic [63:0] w_tdata;
  logic [7:0] w_tkeep;
  logic w_tlast, w_tuser, w_tvalid, w_tready, w_widened;
  ni_host_widen #(.DataW(64)) u_widen (
    .clk_i, .rst_ni,
    .s_axis_tdata, .s_axis_tkeep, .s_axis_tlast, .s_axis_tuser, .s_axis_tvalid, .s_axis_tready,
    .m_axis_tdata(w_tdata), .m_axis_tkeep(w_tkeep), .m_axis_tlast(w_tlast), .m_axis_tuser(w_tuser),
    .m_axis_tvalid(w_tvalid), .m_axis_tready(w_tready), .ev_widened_o(w_widened));

  logic [7:0] ft;
  logic [9:0] len_dw;
  logic [63:0] addr;
  logic [3:0] first_be, last_be;
  logic in_mem, take, reads_owed, tx_reading;
  logic [63:0] rd_beat;
  assign ft = hdr0_q[7:0];
  assign len_dw = {hdr0_q[17:16], hdr0_q[31:24]};
  assign first_be = hdr0_q[59:56];
  assign last_be = hdr0_q[63:60];
  assign addr = {hdr1_q[7:0], hdr1_q[15:8], hdr1_q[23:16], hdr1_q[31:24],
                 hdr1_q[39:32], hdr1_q[47:40], hdr1_q[55:48], hdr1_q[63:58], 2'b00};
  // The whole request lies inside memory (Length 0 means 1024 DW: never inside).
  assign in_mem = len_dw != '0 && (addr + {52'd0, len_dw, 2'b00}) <= 64'(MemBytes);
  // Request data DW d is TLP DW 4 + d: beat 2 + d/2, half d%2.
  assign rd_beat = rx_buf_q[BeatW'(2 + 32'(wr_d_q[6:1]))];
  assign take = w_tvalid && w_tready;
  assign reads_owed = job_valid || tx_reading;
  // The CPU's own accesses go between the NI's TLPs, when the NI offered none in the
  // cycle before (the NI's traffic here ends; a poll of the CPU must not keep out the
  // write it waits for). From the cycle before, so that the ready does not depend on
  // the NI's valid: that made one path of the receiver's decisions, this ready and the
  // NI's other host-side sources.
  logic loc_go, ni_valid_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) ni_valid_q <= 1'b0;
    else ni_valid_q <= w_tvalid;
  end
  assign loc_go = rx_n_q == '0 && loc_valid_i && !ni_valid_q;
  assign w_tready = rx_q == RRecv && !loc_go;

  always_ff @(posedge clk_i) begin
    if (take && 32'(rx_n_q) < RxBeats) rx_buf_q[rx_n_q] <= w_tdata;
    if (take && rx_n_q == BeatW'(0)) hdr0_q <= w_tdata;
    if (take && rx_n_q == BeatW'(1)) hdr1_q <= w_tdata;
  end

  always_comb begin
    rx_d = rx_q;
    rx_n_d = rx_n_q;
    rx_dws_d = rx_dws_q;
    rx_null_d = rx_null_q;
    rx_long_d = rx_long_q;
    wr_d_d = wr_d_q;
    loc_step_d = loc_step_q;
    loc_lo_d = loc_lo_q;
    job_d = job_q;
    job_push = 1'b0;
    a_we = 1'b0;
    a_be = 4'hF;
    a_addr = addr[WordAw+1:2] + WordAw'(wr_d_q);
    a_wdata = wr_d_q[0] ? rd_beat[63:32] : rd_beat[31:0];
    cpl_valid_o = 1'b0;
    loc_done_o = 1'b0;
    unique case (rx_q)
      RRecv: begin
        if (loc_go) begin
          rx_d = RLocal;
          loc_step_d = '0;
        end else if (take) begin
          rx_n_d = (32'(rx_n_q) < RxBeats) ? rx_n_q + BeatW'(1) : rx_n_q;
          if (32'(rx_n_q) >= RxBeats) rx_long_d = 1'b1;
          if (w_tlast) begin
            rx_dws_d = {rx_n_q, 1'b0} + (BeatW + 1)'(w_tkeep[4] ? 2 : 1);
            rx_null_d = w_tuser;
            rx_d = RDecode;
          end
        end
      end
      RDecode: begin
        rx_d = RRecv;
        rx_n_d = '0;
        rx_long_d = 1'b0;
        wr_d_d = '0;
        job_d.addr = addr;
        job_d.len = len_dw[6:0];
        job_d.reqid = {hdr0_q[39:32], hdr0_q[47:40]};
        job_d.tag = hdr0_q[55:48];
        if (rx_null_q) begin
          // A nullified TLP is dropped whole: nothing of it was applied.
        end else if (ft == FtCpl || ft == FtCplD) begin
          // Completions go to the CPU, whose requester ID (0x0000) is the only one here.
          cpl_valid_o = 1'b1;
        end else if ((ft == FtMWr || ft == FtDMWr) && !rx_long_q &&
                     32'(rx_dws_q) == 4 + 32'(len_dw) && in_mem) begin
          // A write waits for the reads before it: they answer with memory as it was
          // when they arrived (as the simulator's memory does).
          rx_d = reads_owed ? RDecode : RWrite;
          if (reads_owed) begin
            rx_n_d = rx_n_q;
            rx_long_d = rx_long_q;
          end
        end else if (ft == FtMRd && rx_dws_q == (BeatW + 1)'(4) && in_mem &&
                     32'(len_dw) * 4 <= MaxPayload) begin
          job_d.kind = JobData;
          rx_d = RAnswer;
        end else if (ft == FtMRd || ft == FtDMWr || (ft >= FtFetchAdd && ft <= FtCas)) begin
          // A request this memory cannot serve gets Unsupported Request.
          job_d.kind = JobUr;
          rx_d = RAnswer;
        end
        // Anything else (a posted write outside memory, an undecodable TLP) is dropped.
      end
      RWrite: begin
        a_we = 1'b1;
        a_be = (wr_d_q == '0) ? first_be : (10'(wr_d_q) == len_dw - 10'd1) ? last_be : 4'hF;
        wr_d_d = wr_d_q + 7'd1;
        if (10'(wr_d_q) == len_dw - 10'd1) begin
          rx_d = RRecv;
          if (ft == FtDMWr) begin
            job_d.kind = JobConf;
            rx_d = RAnswer;
          end
        end
      end
      RAnswer: begin
        job_push = 1'b1;
        if (job_full_n) rx_d = RRecv;
      end
      RLocal: begin
        // Write: low DW, high DW, done. Read: address low; take low, address high; done
        // (the high DW is in a_rdata_q then).
        a_addr = {loc_addr_i[WordAw+1:3], loc_step_q == 2'd1};
        a_we = loc_write_i && loc_step_q != 2'd2;
        a_wdata = (loc_step_q == 2'd1) ? loc_wdata_i[63:32] : loc_wdata_i[31:0];
        loc_step_d = loc_step_q + 2'd1;
        if (loc_step_q == 2'd1) loc_lo_d = a_rdata_q;
        if (loc_step_q == 2'd2) begin
          loc_done_o = 1'b1;
          rx_d = RRecv;
        end
      end
      default: rx_d = RRecv;
    endcase
  end
  assign job_in = job_q;
  assign loc_rdata_o = {a_rdata_q, loc_lo_q};
  // Completion: status in byte 6 (7:5); data from TLP DW 3 on.
  assign cpl_status_o = hdr0_q[55:53];
  assign cpl_data_o = (ft != FtCplD) ? 64'd0 : (len_dw == 10'd1) ? {32'd0, hdr1_q[63:32]} :
                      {rx_buf_q[2][31:0], hdr1_q[63:32]};

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rx_q <= RRecv;
      rx_n_q <= '0;
      rx_long_q <= 1'b0;
    end else begin
      rx_q <= rx_d;
      rx_n_q <= rx_n_d;
      rx_long_q <= rx_long_d;
    end
  end
  always_ff @(posedge clk_i) begin
    rx_dws_q <= rx_dws_d;
    rx_null_q <= rx_null_d;
    wr_d_q <= wr_d_d;
    loc_step_q <= loc_step_d;
    loc_lo_q <= loc_lo_d;
    job_q <= job_d;
  end

  // ------------------------------------------------------------ transmit: TLPs to the NI
  // Answers owed to the NI go first; a CPU request starts only while the NI has room.
  typedef enum logic [1:0] { TIdle, TFill, TSend } tx_state_e;
  tx_state_e tx_q, tx_d;
  logic [3:0][31:0] th_q, th_d;     // header DWs
  logic [2:0] th_n_q, th_n_d;       // header DWs: 3 or 4
  logic [7:0] tot_q, tot_d;         // DWs in the TLP
  logic from_mem_q, from_mem_d;     // data from memory, else from tdat_q
  logic [63:0] tdat_q, tdat_d;
  logic [WordAw-1:0] tmem_q, tmem_d;
  logic [7:0] pos_q, pos_d;         // DW of the TLP being filled
  logic wait_q, wait_d;             // memory read issued, data next cycle
  logic [63:0] beat_q, beat_d;
  logic [7:0] tag_q, tag_d;         // the CPU's next tag
  logic [7:0] data_i;               // data DW index of pos_q
  logic [31:0] dw_val;
  logic [11:0] bc;
  assign tx_reading = tx_q != TIdle && from_mem_q;
  assign data_i = pos_q - 8'(th_n_q);
  assign b_addr = tmem_q + WordAw'(data_i);
  assign bc = {3'd0, job_out.len, 2'b00};

  always_comb begin
    tx_d = tx_q;
    th_d = th_q;
    th_n_d = th_n_q;
    tot_d = tot_q;
    from_mem_d = from_mem_q;
    tdat_d = tdat_q;
    tmem_d = tmem_q;
    pos_d = pos_q;
    wait_d = wait_q;
    beat_d = beat_q;
    tag_d = tag_q;
    job_pop = 1'b0;
    req_ready_o = 1'b0;
    dw_val = (pos_q < 8'(th_n_q)) ? th_q[pos_q[1:0]] : data_i[0] ? tdat_q[63:32] : tdat_q[31:0];
    unique case (tx_q)
      TIdle: begin
        pos_d = '0;
        wait_d = 1'b0;
        from_mem_d = 1'b0;
        th_n_d = 3'd3;
        tmem_d = job_out.addr[WordAw+1:2];
        th_d[2] = dw4(job_out.reqid[15:8], job_out.reqid[7:0], job_out.tag, {1'b0, job_out.addr[6:0]});
        th_d[3] = '0;
        if (job_valid) begin
          job_pop = 1'b1;
          tx_d = TFill;
          unique case (job_out.kind)
            JobData: begin
              th_d[0] = dw4(FtCplD, 8'h00, 8'h00, {1'b0, job_out.len});
              th_d[1] = dw4(8'h00, 8'h00, {4'h0, bc[11:8]}, bc[7:0]);
              tot_d = 8'd3 + {1'b0, job_out.len};
              from_mem_d = 1'b1;
            end
            JobConf: begin
              // A write confirmation names the address written, least significant byte first.
              th_d[0] = dw4(FtCplD, 8'h00, 8'h00, 8'd2);
              th_d[1] = dw4(8'h00, 8'h00, 8'h00, 8'd8);
              tot_d = 8'd5;
              tdat_d = job_out.addr;
            end
            default: begin
              th_d[0] = dw4(FtCpl, 8'h00, 8'h00, 8'h00);
              th_d[1] = dw4(8'h00, 8'h00, 8'h20, 8'd4);  // status UR, Byte Count 4
              tot_d = 8'd3;
            end
          endcase
        end else if (req_valid_i && ni_room_i) begin
          req_ready_o = 1'b1;
          tx_d = TFill;
          tag_d = tag_q + 8'd1;
          th_n_d = 3'd4;
          th_d[0] = dw4(req_kind_i == ReqRead ? FtMRd : req_kind_i == ReqWrite ? FtMWr :
                        req_kind_i == ReqConfWrite ? FtDMWr : FtMWr,
                        8'h00, 8'h00, req_two_i ? 8'd2 : 8'd1);
          th_d[1] = dw4(8'h00, 8'h00, tag_q, req_two_i ? 8'hFF : 8'h0F);
          th_d[2] = dw4(req_addr_i[63:56], req_addr_i[55:48], req_addr_i[47:40], req_addr_i[39:32]);
          th_d[3] = dw4(req_addr_i[31:24], req_addr_i[23:16], req_addr_i[15:8], {req_addr_i[7:2], 2'b00});
          tot_d = 8'd4 + ((req_kind_i == ReqRead) ? 8'd0 : req_two_i ? 8'd2 : 8'd1);
          tdat_d = req_data_i;
        end
      end
      TFill: begin
        if (from_mem_q && pos_q >= 8'(th_n_q) && !wait_q) begin
          wait_d = 1'b1;  // b_addr is out; the data comes next cycle
        end else begin
          wait_d = 1'b0;
          if (from_mem_q && pos_q >= 8'(th_n_q)) dw_val = b_rdata_q;
          if (pos_q[0]) beat_d[63:32] = dw_val;
          else beat_d = {32'd0, dw_val};
          pos_d = pos_q + 8'd1;
          if (pos_q[0] || pos_q + 8'd1 == tot_q) tx_d = TSend;
        end
      end
      TSend: begin
        if (m_axis_tready) tx_d = (pos_q == tot_q) ? TIdle : TFill;
      end
      default: tx_d = TIdle;
    endcase
  end
  assign m_axis_tvalid = tx_q == TSend;
  assign m_axis_tdata = beat_q;
  assign m_axis_tkeep = pos_q[0] ? 8'h0F : 8'hFF;
  assign m_axis_tlast = pos_q == tot_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      tx_q <= TIdle;
      tag_q <= '0;
    end else begin
      tx_q <= tx_d;
      tag_q <= tag_d;
    end
  end
  always_ff @(posedge clk_i) begin
    th_q <= th_d;
    th_n_q <= th_n_d;
    tot_q <= tot_d;
    from_mem_q <= from_mem_d;
    tdat_q <= tdat_d;
    tmem_q <= tmem_d;
    pos_q <= pos_d;
    wait_q <= wait_d;
    beat_q <= beat_d;
  end

  // Lanes past a DW, address bits below a DW or a word, header fields this memory ignores.
  logic unused;
  assign unused = ^{w_tkeep[7:5], w_tkeep[3:0], w_widened, req_addr_i[1:0], loc_addr_i[2:0],
                    hdr0_q[23:18], hdr0_q[15:8]};

  `NI_ASSERT_AXIS_STABLE(TxStable_A, m_axis_tvalid, m_axis_tready, {m_axis_tdata, m_axis_tkeep, m_axis_tlast})
  // Only a request waits for room; the NI always takes an answer.
  `NI_ASSERT(ReqUnderRoom_A, !(req_ready_o && !ni_room_i))
endmodule

`default_nettype wire

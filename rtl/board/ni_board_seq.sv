// SPDX-License-Identifier: Apache-2.0
// Board self-test sequencer: plays the CPUs of both nodes through a fixed program
// (setup, tunneled write, tunneled read, confirmed write, DMA put), checks every
// answer, and reports one line over the UART and the result on the LEDs.
// Node 0 (LID 1) sends; node 1 (LID 2) exports memory ID 0 (its bytes 0x1000-0x2FFF).
// With one node (its fabric port looped back), node 0 plays both parts.
`default_nettype none

module ni_board_seq #(
  parameter int unsigned Nodes = 2,           // 2, or 1: node 0 sends to itself
  parameter int unsigned WaitCycles = 32768,  // longest wait for an answer or a poll
  parameter logic [63:0] CsrBase = 64'h0000_00F0_0000_0000,
  parameter int unsigned MemAw = 14            // byte address bits of a node's memory
) (
  input  logic clk_i,
  input  logic rst_ni,
  // Per node n: CPU requests (see ni_board_host).
  output logic [1:0] req_valid_o,
  input  logic [1:0] req_ready_i,
  output logic [1:0] req_kind_o,
  output logic [63:0] req_addr_o,
  output logic req_two_o,
  output logic [63:0] req_data_o,
  input  logic [1:0] cpl_valid_i,
  input  logic [1:0][2:0] cpl_status_i,
  input  logic [1:0][63:0] cpl_data_i,
  // Per node n: the CPU's own accesses to its memory.
  output logic [1:0] loc_valid_o,
  output logic loc_write_o,
  output logic [MemAw-1:0] loc_addr_o,
  output logic [63:0] loc_wdata_o,
  input  logic [1:0] loc_done_i,
  input  logic [1:0][63:0] loc_rdata_i,
  // Report.
  output logic [7:0] uart_data_o,
  output logic uart_valid_o,
  input  logic uart_ready_i,
  output logic done_o,
  output logic pass_o,
  output logic [4:0] group_ok_o  // bit g: group g passed
);
  // Operations of the program.
  localparam logic [2:0] OpCsrWr = 3'd0,  // register write (MWr, 1 DW) at CsrBase + addr
                         OpCsrRd = 3'd1,  // register read (MRd, 1 DW); data[31:0] expected
                         OpMemWr = 3'd2,  // the CPU writes its own memory (8 bytes)
                         OpStore = 3'd3,  // MWr, 8 bytes, through the NI
                         OpLoad = 3'd4,   // MRd, 8 bytes, through the NI; data expected
                         OpCStore = 3'd5, // DMWr, 8 bytes: a confirmation naming addr expected
                         OpPoll = 3'd6,   // read own memory until it holds data (WaitCycles)
                         OpEnd = 3'd7;
  // Groups, in the order the report names them.
  localparam logic [2:0] GCsr = 3'd0, GWrite = 3'd1, GRead = 3'd2, GConf = 3'd3, GDma = 3'd4;
  localparam logic N0 = 1'b0, N1 = Nodes == 2;
  localparam logic [63:0] Lid1 = 64'(Nodes);  // the LID of node 1 (of node 0 itself with one node)
  localparam logic [63:0] Win0 = 64'h0000_0080_0000_0000;  // node 0's window 0 -> node 1 0x1000
  localparam logic [63:0] Win1 = 64'h0000_0080_0000_1000;  // window 1: the same, confirmed at memory
  localparam int unsigned StepW = 3 + 3 + 1 + 64 + 64;

  // Byte k of word i of the DMA message is 8i + k: a lane or word out of place shows.
  function automatic logic [63:0] pattern(input int i);
    pattern = 64'h0706_0504_0302_0100 + 64'(i) * 64'h0808_0808_0808_0808;
  endfunction

  // Step i of the program: {group, op, node, addr, data}.
  function automatic logic [StepW-1:0] step_at(input int i);
    int w;  // the message word of steps 33-40 and 45-52
    w = (i >= 45) ? i - 45 : i - 33;
    step_at = {GDma, OpEnd, N0, 64'd0, 64'd0};
    case (i)
      // Setup: both register blocks answer; node IDs; node 1 exports memory ID 0;
      // node 0's windows 0 and 1 lead there (sender translation, window 1 confirmed
      // by node 1's memory).
      0:  step_at = {GCsr, OpCsrRd, N0, 64'h000, 64'h4E49_0001};
      1:  step_at = {GCsr, OpCsrRd, N1, 64'h000, 64'h4E49_0001};
      2:  step_at = {GCsr, OpCsrWr, N0, 64'h008, 64'd1};
      3:  step_at = {GCsr, OpCsrWr, N1, 64'h008, Lid1};
      4:  step_at = {GCsr, OpCsrWr, N1, 64'h400, 64'h1000};  // MEMID_BASE_LO
      5:  step_at = {GCsr, OpCsrWr, N1, 64'h408, 64'h2000};  // MEMID_SIZE
      6:  step_at = {GCsr, OpCsrWr, N1, 64'h40C, 64'h31};    // MEMID_CTRL: valid, read, write
      7:  step_at = {GCsr, OpCsrWr, N0, 64'h104, 64'h80};    // ART_BASE_HI (BASE_LO stays 0)
      8:  step_at = {GCsr, OpCsrWr, N0, 64'h108, 64'h1000};  // ART_LIMIT_LO
      9:  step_at = {GCsr, OpCsrWr, N0, 64'h10C, 64'h80};    // ART_LIMIT_HI
      10: step_at = {GCsr, OpCsrWr, N0, 64'h110, 64'h1000};  // ART_XLATE_LO
      11: step_at = {GCsr, OpCsrWr, N0, 64'h118, Lid1};      // ART_DEST: node 1, memory ID 0
      12: step_at = {GCsr, OpCsrWr, N0, 64'h11C, 64'h31};    // ART_CTRL: valid, read, write
      13: step_at = {GCsr, OpCsrWr, N0, 64'h120, 64'h1000};
      14: step_at = {GCsr, OpCsrWr, N0, 64'h124, 64'h80};
      15: step_at = {GCsr, OpCsrWr, N0, 64'h128, 64'h2000};
      16: step_at = {GCsr, OpCsrWr, N0, 64'h12C, 64'h80};
      17: step_at = {GCsr, OpCsrWr, N0, 64'h130, 64'h1000};
      18: step_at = {GCsr, OpCsrWr, N0, 64'h138, Lid1};
      19: step_at = {GCsr, OpCsrWr, N0, 64'h13C, 64'h431};   // conf_at 2: node 1's memory
      20: step_at = {GCsr, OpCsrRd, N0, 64'h11C, 64'h31};
      // A store through window 0 lands in node 1's memory.
      21: step_at = {GWrite, OpStore, N0, Win0 + 64'h008, 64'h0123_4567_89AB_CDEF};
      22: step_at = {GWrite, OpPoll, N1, 64'h1008, 64'h0123_4567_89AB_CDEF};
      // Loads through window 0 return node 1's memory.
      23: step_at = {GRead, OpMemWr, N1, 64'h1100, 64'hFEDC_BA98_7654_3210};
      24: step_at = {GRead, OpLoad, N0, Win0 + 64'h100, 64'hFEDC_BA98_7654_3210};
      25: step_at = {GRead, OpLoad, N0, Win0 + 64'h008, 64'h0123_4567_89AB_CDEF};
      // A confirmed write: the confirmation comes once node 1's memory has the data.
      26: step_at = {GConf, OpCStore, N0, Win1 + 64'h010, 64'h5A5A_A5A5_0F0F_F0F0};
      27: step_at = {GConf, OpPoll, N1, 64'h1010, 64'h5A5A_A5A5_0F0F_F0F0};
      // DMA: a put descriptor with 64 inline bytes in node 0's injection FIFO 0
      // (0x800, 4 slots of 64 bytes) to memory ID 0 of node 1 at offset 0x1000.
      28: step_at = {GDma, OpMemWr, N0, 64'h800, 64'h0002_0102 | (Lid1 << 32)};  // put, inline, 2 slots, to node 1
      29: step_at = {GDma, OpMemWr, N0, 64'h808, 64'd64};                     // len
      30: step_at = {GDma, OpMemWr, N0, 64'h810, 64'd0};                      // src (inline)
      31: step_at = {GDma, OpMemWr, N0, 64'h818, 64'h1000};                   // dst offset
      32: step_at = {GDma, OpMemWr, N0, 64'h820, 64'd0};                      // tag
      41: step_at = {GDma, OpCsrWr, N0, 64'h600, 64'h800};   // INJ_BASE_LO
      42: step_at = {GDma, OpCsrWr, N0, 64'h608, 64'd4};     // INJ_SIZE
      43: step_at = {GDma, OpCsrWr, N0, 64'h614, 64'd1};     // INJ_CTRL: enable
      44: step_at = {GDma, OpCsrWr, N0, 64'h60C, 64'd2};     // INJ_TAIL: doorbell
      53: step_at = {GDma, OpCsrRd, N0, 64'h610, 64'd2};     // INJ_HEAD moved past both slots
      54: step_at = {GDma, OpCsrRd, N0, 64'h618, 64'd0};     // INJ_STATUS: no error
      default: ;
    endcase
    // The message's eight words: written in the slot after the descriptor (33-40),
    // polled for where the put lands (45-52).
    if (i >= 33 && i <= 40) step_at = {GDma, OpMemWr, N0, 64'h840 + 64'(w) * 64'd8, pattern(w)};
    if (i >= 45 && i <= 52) step_at = {GDma, OpPoll, N1, 64'h2000 + 64'(w) * 64'd8, pattern(w)};
  endfunction

  // The report line; the dots are filled in (positions below).
  localparam int unsigned MsgLen = 85;
  localparam logic [8*83-1:0] Msg =
    "NI self-test csr:.. write:.. read:.. confirm:.. dma:.. step:.. cycles:........ ....";
  localparam int unsigned PosStep = 60, PosCycles = 70, PosResult = 79;
  localparam logic [31:0] Pass = "PASS", Fail = "FAIL";
  // Where group g's two status characters go.
  function automatic int group_pos(input int g);
    group_pos = (g == 0) ? 17 : (g == 1) ? 26 : (g == 2) ? 34 : (g == 3) ? 45 : 52;
  endfunction

  function automatic logic [7:0] hex(input logic [3:0] v);
    hex = (v < 4'd10) ? 8'h30 + 8'(v) : 8'h37 + 8'(v);
  endfunction

  typedef enum logic [2:0] { SFetch, SIssue, SWait, SNext, SReport, SDone } state_e;
  state_e st_q, st_d;
  logic [5:0] idx_q, idx_d;
  logic [StepW-1:0] step_q, step_d;
  logic [2:0] grp, op;
  logic node;
  logic [63:0] saddr, sdata;
  assign {grp, op, node, saddr, sdata} = step_q;
  logic [$clog2(WaitCycles + 1)-1:0] wait_q, wait_d;
  logic [31:0] cycles_q;
  logic pass_q, pass_d, done_q, done_d;
  logic [6:0] ch_q, ch_d;  // report character being sent
  logic answer_ok;
  logic [7:0] ch;

  always_comb begin
    // The answer a step waits for: a completion with status SC and the data expected.
    answer_ok = cpl_status_i[node] == 3'd0;
    unique case (op)
      OpCsrRd: answer_ok = answer_ok && cpl_data_i[node][31:0] == sdata[31:0];
      OpLoad: answer_ok = answer_ok && cpl_data_i[node] == sdata;
      OpCStore: answer_ok = answer_ok && cpl_data_i[node] == saddr;
      default: ;
    endcase
  end

  assign req_kind_o = (op == OpCsrRd || op == OpLoad) ? 2'd0 : (op == OpCStore) ? 2'd2 : 2'd1;
  assign req_addr_o = (op == OpCsrWr || op == OpCsrRd) ? CsrBase + saddr : saddr;
  assign req_two_o = !(op == OpCsrWr || op == OpCsrRd);
  assign req_data_o = sdata;
  assign loc_write_o = op == OpMemWr;
  assign loc_addr_o = saddr[MemAw-1:0];
  assign loc_wdata_o = sdata;
  always_comb begin
    req_valid_o = '0;
    loc_valid_o = '0;
    if (st_q == SIssue) begin
      if (op == OpMemWr || op == OpPoll) loc_valid_o[node] = 1'b1;
      else if (op != OpEnd) req_valid_o[node] = 1'b1;
    end
  end

  always_comb begin
    st_d = st_q;
    idx_d = idx_q;
    step_d = step_q;
    wait_d = wait_q;
    pass_d = pass_q;
    done_d = done_q;
    ch_d = ch_q;
    uart_valid_o = 1'b0;
    unique case (st_q)
      SFetch: begin
        step_d = step_at(int'(idx_q));
        wait_d = '0;
        st_d = SIssue;
      end
      SIssue: begin
        if (op == OpEnd) begin
          pass_d = 1'b1;
          st_d = SReport;
        end else if (op == OpMemWr || op == OpPoll) begin
          if (loc_done_i[node]) begin
            if (op == OpMemWr || loc_rdata_i[node] == sdata) st_d = SNext;
            else if (32'(wait_q) >= WaitCycles) st_d = SReport;
          end
          wait_d = wait_q + 1'b1;
        end else if (req_ready_i[node]) begin
          st_d = (op == OpCsrWr || op == OpStore) ? SNext : SWait;
        end
      end
      SWait: begin
        wait_d = wait_q + 1'b1;
        if (cpl_valid_i[node]) st_d = answer_ok ? SNext : SReport;
        else if (32'(wait_q) >= WaitCycles) st_d = SReport;
      end
      SNext: begin
        idx_d = idx_q + 6'd1;
        st_d = SFetch;
      end
      SReport: begin
        uart_valid_o = 1'b1;
        if (uart_ready_i) begin
          ch_d = ch_q + 7'd1;
          if (32'(ch_q) == MsgLen - 1) begin
            done_d = 1'b1;
            st_d = SDone;
          end
        end
      end
      default: ;  // SDone: the LEDs show the result until reset
    endcase
  end

  // The groups before grp, the one the program stopped in, passed; on a pass, all did.
  always_comb begin
    ch = (32'(ch_q) < 83) ? Msg[8*(82 - 32'(ch_q)) +: 8] : (32'(ch_q) == 83) ? 8'h0D : 8'h0A;
    for (int g = 0; g < 5; g++) begin
      if (32'(ch_q) == group_pos(g) || 32'(ch_q) == group_pos(g) + 1) begin
        if (pass_q || 3'(g) < grp) ch = (32'(ch_q) == group_pos(g)) ? "o" : "k";
        else if (3'(g) == grp) ch = (32'(ch_q) == group_pos(g)) ? "N" : "G";
        else ch = "-";
      end
    end
    if (32'(ch_q) == PosStep) ch = hex({2'b00, idx_q[5:4]});
    if (32'(ch_q) == PosStep + 1) ch = hex(idx_q[3:0]);
    for (int k = 0; k < 8; k++) begin
      if (32'(ch_q) == PosCycles + k) ch = hex(cycles_q[4*(7-k) +: 4]);
    end
    for (int k = 0; k < 4; k++) begin
      if (32'(ch_q) == PosResult + k) ch = pass_q ? Pass[8*(3-k) +: 8] : Fail[8*(3-k) +: 8];
    end
  end
  assign uart_data_o = ch;
  assign done_o = done_q;
  assign pass_o = pass_q;
  always_comb begin
    for (int g = 0; g < 5; g++) group_ok_o[g] = done_q && (pass_q || 3'(g) < grp);
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      st_q <= SFetch;
      idx_q <= '0;
      step_q <= '0;
      wait_q <= '0;
      cycles_q <= '0;
      pass_q <= 1'b0;
      done_q <= 1'b0;
      ch_q <= '0;
    end else begin
      st_q <= st_d;
      idx_q <= idx_d;
      step_q <= step_d;
      wait_q <= wait_d;
      if (st_q != SReport && st_q != SDone) cycles_q <= cycles_q + 32'd1;
      pass_q <= pass_d;
      done_q <= done_d;
      ch_q <= ch_d;
    end
  end
endmodule

`default_nettype wire

// SPDX-License-Identifier: Apache-2.0
// Board top (ULX3S 85F; runs the same in Verilator): two NIs joined by an on-chip
// fabric link, each with on-chip RAM as its node's memory behind a root-complex model,
// and a self-test sequencer that reports over the UART and on the LEDs. Nodes = 1: one
// NI whose fabric output is looped back to its input (what fits an 85F now).
// Pins: constraints/ulx3s.lpf. docs/board.md says what the self-test does.
`default_nettype none

module ni_board_top #(
  parameter int unsigned Nodes = 2,        // 2 NIs on a link, or 1 NI looped back
  parameter int unsigned ClkDiv = 4,       // NI clock = board clock / ClkDiv (1, 2, 4 or 8)
  parameter int unsigned BoardHz = 25_000_000,  // the oscillator's frequency
  parameter int unsigned WaitCycles = 32768,
  parameter int unsigned MemBytes = 16384, // each node's memory
  // The NIs: the board configuration of rtl/ni_configs.json.
  parameter int unsigned NumTags = 4,
  parameter int unsigned RetxSlots = 4,
  parameter int unsigned NumPeers = 4,
  parameter int unsigned MemKeepSlots = 2,
  parameter int unsigned NumArt = 4,
  parameter int unsigned NumMemId = 4,
  parameter int unsigned NumInj = 2,
  parameter int unsigned NumRfifo = 2,
  parameter int unsigned NumCnt = 4
) (
  input  logic clk_i,         // board oscillator (ULX3S: 25 MHz)
  input  logic rst_ni,        // the PWR button (low when pressed): restarts the self-test
  input  logic link_fault_i,  // while high, the link corrupts every beat (ULX3S F1 button)
  output logic uart_tx_o,     // 115200 8N1 to the board's USB serial port
  output logic [7:0] led_o    // 0-4: groups passed, 5: running, 6: PASS, 7: FAIL
);
  localparam int unsigned DataW = 64;
  localparam int unsigned ClkPerBit = BoardHz / ClkDiv / 115_200;  // UART at 115200 baud
  localparam int unsigned MemAw = $clog2(MemBytes);
  if (ClkDiv != 1 && ClkDiv != 2 && ClkDiv != 4 && ClkDiv != 8) begin : gen_bad_div
    $error("ni_board_top: ClkDiv must be 1, 2, 4 or 8");
  end
  if (Nodes != 1 && Nodes != 2) begin : gen_bad_nodes
    $error("ni_board_top: Nodes must be 1 or 2");
  end

  // ------------------------------------------------------------ clock and reset
  // The NI does not reach the board's 25 MHz yet (docs/synthesis.md): it runs on a
  // divided clock. A divider keeps this top free of vendor primitives.
  logic clk;
  if (ClkDiv == 1) begin : gen_no_div
    assign clk = clk_i;
  end else begin : gen_div
    logic [$clog2(ClkDiv)-1:0] div_q = '0;
    always_ff @(posedge clk_i) div_q <= div_q + 1'b1;
    assign clk = div_q[$clog2(ClkDiv)-1];
  end
  // Reset held for 16 cycles after configuration and while the button is pressed;
  // released synchronously.
  logic [4:0] por_q = '0;
  logic [1:0] btn_q = '0;
  logic rst_n;
  always_ff @(posedge clk) begin
    btn_q <= {btn_q[0], rst_ni};
    if (!btn_q[1]) por_q <= '0;
    else if (!por_q[4]) por_q <= por_q + 5'd1;
  end
  assign rst_n = por_q[4];

  // ------------------------------------------------------------ two nodes
  // Per node.
  logic [Nodes-1:0][DataW-1:0] h2n_tdata, n2h_tdata, fab_tdata, link_tdata;
  logic [Nodes-1:0][7:0] h2n_tkeep, n2h_tkeep, fab_tkeep, link_tkeep;
  logic [Nodes-1:0] h2n_tlast, h2n_tvalid, h2n_tready, n2h_tlast, n2h_tuser, n2h_tvalid, n2h_tready;
  logic [Nodes-1:0] room, fab_tlast, fab_tdest, fab_tvalid, fab_tready;
  logic [Nodes-1:0] link_tlast, link_tdest, link_tvalid, link_tready;
  logic [Nodes-1:0][1:0] credit_out;
  // The sequencer's side, for two nodes always.
  logic [1:0] req_valid, req_ready, cpl_valid, loc_valid, loc_done;
  logic [1:0][2:0] cpl_status;
  logic [1:0][63:0] cpl_data, loc_rdata;
  logic [1:0] req_kind;
  logic [63:0] req_addr, req_data, loc_wdata;
  logic req_two, loc_write;
  logic [MemAw-1:0] loc_addr;
  logic link_fault_q;
  always_ff @(posedge clk) link_fault_q <= link_fault_i;

  for (genvar n = 0; n < Nodes; n++) begin : gen_node
    localparam int unsigned Peer = Nodes - 1 - n;  // the other end of the link (itself with one node)
    nic_top #(
      .DataW(DataW), .NumTags(NumTags), .RetxSlots(RetxSlots), .NumPeers(NumPeers),
      .MemKeepSlots(MemKeepSlots), .NumArt(NumArt), .NumMemId(NumMemId), .NumInj(NumInj), .NumRfifo(NumRfifo),
      .NumCnt(NumCnt)
    ) u_nic (
      .clk_i(clk), .rst_ni(rst_n),
      .s_host_axis_tdata(h2n_tdata[n]), .s_host_axis_tkeep(h2n_tkeep[n]),
      .s_host_axis_tlast(h2n_tlast[n]), .s_host_axis_tvalid(h2n_tvalid[n]),
      .s_host_axis_tready(h2n_tready[n]), .s_host_req_room_o(room[n]),
      .m_host_axis_tdata(n2h_tdata[n]), .m_host_axis_tkeep(n2h_tkeep[n]),
      .m_host_axis_tlast(n2h_tlast[n]), .m_host_axis_tuser(n2h_tuser[n]),
      .m_host_axis_tvalid(n2h_tvalid[n]), .m_host_axis_tready(n2h_tready[n]),
      .m_fab_axis_tdata(fab_tdata[n]), .m_fab_axis_tkeep(fab_tkeep[n]),
      .m_fab_axis_tlast(fab_tlast[n]), .m_fab_axis_tdest(fab_tdest[n]),
      .m_fab_axis_tvalid(fab_tvalid[n]), .m_fab_axis_tready(fab_tready[n]),
      .fab_tx_credit_i(credit_out[Peer]),
      // The link: the other NI's fabric output (or its own), through u_link.
      .s_fab_axis_tdata(link_tdata[n]), .s_fab_axis_tkeep(link_tkeep[n]),
      .s_fab_axis_tlast(link_tlast[n]), .s_fab_axis_tdest(link_tdest[n]),
      .s_fab_axis_tvalid(link_tvalid[n]), .s_fab_axis_tready(link_tready[n]),
      .fab_rx_credit_o(credit_out[n])
    );
    // The link into this node: a two-beat register stage (a beat a cycle), as a long
    // on-chip link has, so no path runs from one NI's output register into the other's
    // receive logic. A faulty link flips a bit of every beat: the receiver drops the
    // packet on its CRCs and returns the credit; the sender resends, then gives up.
    ni_fifo #(.Width(DataW + 8 + 2), .Depth(2)) u_link (
      .clk_i(clk), .rst_ni(rst_n),
      .wdata_i({fab_tdata[Peer] ^ {63'd0, link_fault_q}, fab_tkeep[Peer], fab_tlast[Peer], fab_tdest[Peer]}),
      .wvalid_i(fab_tvalid[Peer]), .wready_o(fab_tready[Peer]),
      .rdata_o({link_tdata[n], link_tkeep[n], link_tlast[n], link_tdest[n]}),
      .rvalid_o(link_tvalid[n]), .rready_i(link_tready[n])
    );

    ni_board_host #(.MemBytes(MemBytes)) u_host (
      .clk_i(clk), .rst_ni(rst_n),
      .m_axis_tdata(h2n_tdata[n]), .m_axis_tkeep(h2n_tkeep[n]), .m_axis_tlast(h2n_tlast[n]),
      .m_axis_tvalid(h2n_tvalid[n]), .m_axis_tready(h2n_tready[n]), .ni_room_i(room[n]),
      .s_axis_tdata(n2h_tdata[n]), .s_axis_tkeep(n2h_tkeep[n]), .s_axis_tlast(n2h_tlast[n]),
      .s_axis_tuser(n2h_tuser[n]), .s_axis_tvalid(n2h_tvalid[n]), .s_axis_tready(n2h_tready[n]),
      .req_valid_i(req_valid[n]), .req_ready_o(req_ready[n]), .req_kind_i(req_kind),
      .req_addr_i(req_addr), .req_two_i(req_two), .req_data_i(req_data),
      .cpl_valid_o(cpl_valid[n]), .cpl_status_o(cpl_status[n]), .cpl_data_o(cpl_data[n]),
      .loc_valid_i(loc_valid[n]), .loc_write_i(loc_write), .loc_addr_i(loc_addr),
      .loc_wdata_i(loc_wdata), .loc_done_o(loc_done[n]), .loc_rdata_o(loc_rdata[n])
    );
  end
  // With one node, the sequencer never addresses node 1.
  for (genvar n = Nodes; n < 2; n++) begin : gen_no_node
    assign req_ready[n] = 1'b0;
    assign cpl_valid[n] = 1'b0;
    assign cpl_status[n] = '0;
    assign cpl_data[n] = '0;
    assign loc_done[n] = 1'b0;
    assign loc_rdata[n] = '0;
    logic unused_node;  // (the sequencer's requests to it stay low)
    assign unused_node = ^{req_valid[n], loc_valid[n]};
  end

  // ------------------------------------------------------------ self-test and report
  logic [7:0] uart_data;
  logic uart_valid, uart_ready, done, pass;
  logic [4:0] group_ok;
  ni_board_seq #(.Nodes(Nodes), .WaitCycles(WaitCycles), .MemAw(MemAw)) u_seq (
    .clk_i(clk), .rst_ni(rst_n),
    .req_valid_o(req_valid), .req_ready_i(req_ready), .req_kind_o(req_kind),
    .req_addr_o(req_addr), .req_two_o(req_two), .req_data_o(req_data),
    .cpl_valid_i(cpl_valid), .cpl_status_i(cpl_status), .cpl_data_i(cpl_data),
    .loc_valid_o(loc_valid), .loc_write_o(loc_write), .loc_addr_o(loc_addr),
    .loc_wdata_o(loc_wdata), .loc_done_i(loc_done), .loc_rdata_i(loc_rdata),
    .uart_data_o(uart_data), .uart_valid_o(uart_valid), .uart_ready_i(uart_ready),
    .done_o(done), .pass_o(pass), .group_ok_o(group_ok)
  );
  ni_uart_tx #(.ClkPerBit(ClkPerBit)) u_uart (
    .clk_i(clk), .rst_ni(rst_n), .data_i(uart_data), .valid_i(uart_valid),
    .ready_o(uart_ready), .tx_o(uart_tx_o)
  );
  assign led_o = {done && !pass, done && pass, !done, group_ok};
endmodule

`default_nettype wire

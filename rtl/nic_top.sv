// SPDX-License-Identifier: Apache-2.0
// NI top level: host ports (TLPs; one link per CPU), fabric port (IB-framed packets, two VCs with
// credits), registers, address-range association table, encapsulation and
// decapsulation. Block diagram and data flow: docs/architecture.md.
`default_nettype none

module nic_top #(
  parameter int unsigned DataW = 64,        // 64, 128, 256 or 512
  // Register arrays, powers of two from 2 up to what the register map has room for.
  parameter int unsigned NumArt = 16,       // windows: up to 16
  parameter int unsigned NumMemId = 16,     // receiver memory IDs: up to 16
  parameter int unsigned NumInj = 8,        // injection FIFOs: up to 8
  parameter int unsigned NumRfifo = 4,      // reception FIFOs: up to 4
  parameter int unsigned NumCnt = 32,       // DMA byte counters: up to 32
  parameter int unsigned MaxPayload = 256,  // largest TLP payload, bytes: 256 to 4096
  parameter int unsigned RxCredits = 3,     // packet slots per VC at the fabric input (docs/architecture.md)
  parameter int unsigned NumTags = 16,      // remote reads served at once
  parameter int unsigned RetxSlots = 32,    // requests awaiting an answer at once
  parameter int unsigned NumPeers = 64,     // LIDs 1..NumPeers have a PSN sequence (a power of two)
  parameter int unsigned MemKeepSlots = 4,  // writes this NI confirmed, kept until memory confirms
  parameter int unsigned SlotBytes = 64,    // injection FIFO slot: 64 .. MaxPayload, a power of two
  parameter logic [63:0] CsrBase = 64'h0000_00F0_0000_0000,
  parameter logic [15:0] NiReqId = 16'h0100,
  parameter int unsigned HostPorts = 1,     // host links (CPUs): 1, 2 or 4
  localparam int unsigned Bpb = DataW / 8,
  localparam int unsigned KeepW = Bpb
) (
  input  logic clk_i,
  input  logic rst_ni,
  // Host ports (element p: port p): TLPs from the root complex.
  input  logic [HostPorts-1:0][DataW-1:0] s_host_axis_tdata,
  input  logic [HostPorts-1:0][KeepW-1:0] s_host_axis_tkeep,
  input  logic [HostPorts-1:0] s_host_axis_tlast,
  input  logic [HostPorts-1:0] s_host_axis_tvalid,
  output logic [HostPorts-1:0] s_host_axis_tready,
  // 1: a whole request TLP (MaxPayload) fits now, on every port at once. The root
  // complex starts a request only then, so a request never stalls mid-way in front
  // of memory's completions (PCIe keeps them apart with credits per TLP class). One
  // cycle late is safe.
  output logic s_host_req_room_o,
  // Host ports: TLPs to the root complex; tuser on the last beat = nullified TLP.
  output logic [HostPorts-1:0][DataW-1:0] m_host_axis_tdata,
  output logic [HostPorts-1:0][KeepW-1:0] m_host_axis_tkeep,
  output logic [HostPorts-1:0] m_host_axis_tlast,
  output logic [HostPorts-1:0] m_host_axis_tuser,
  output logic [HostPorts-1:0] m_host_axis_tvalid,
  input  logic [HostPorts-1:0] m_host_axis_tready,
  // Fabric port out; tdest = VC. One credit pulse per packet slot freed downstream.
  output logic [DataW-1:0] m_fab_axis_tdata,
  output logic [KeepW-1:0] m_fab_axis_tkeep,
  output logic m_fab_axis_tlast,
  output logic m_fab_axis_tdest,
  output logic m_fab_axis_tvalid,
  input  logic m_fab_axis_tready,
  input  logic [1:0] fab_tx_credit_i,
  // Fabric port in; the NI pulses a credit per slot (RxCredits per VC after reset).
  input  logic [DataW-1:0] s_fab_axis_tdata,
  input  logic [KeepW-1:0] s_fab_axis_tkeep,
  input  logic s_fab_axis_tlast,
  input  logic s_fab_axis_tdest,
  input  logic s_fab_axis_tvalid,
  output logic s_fab_axis_tready,
  output logic [1:0] fab_rx_credit_o
);
  localparam int unsigned BeatW = DataW + KeepW + 2;
  localparam int unsigned HdrW = ni_pkg::TxDescW;
  localparam int unsigned TagW = $clog2(NumTags);
`ifdef VERILATOR
  // The package's struct widths (written out for Yosys) match the structs.
  if (ni_pkg::TxDescW != $bits(ni_pkg::tx_desc_t) || ni_pkg::OwnCplW != $bits(ni_pkg::own_cpl_t) ||
      ni_pkg::WcMetaW != $bits(ni_pkg::wc_meta_t)) begin : gen_bad_struct_width
    $error("ni_pkg: a struct width constant does not match its struct");
  end
`endif
  // Beats buffered toward the framer: enough to cover its header beats and keep it busy.
  localparam int unsigned TunBeats = 2 * (ni_pkg::FabHdrBytes / Bpb) + 4;
  // Requests: room for two whole TLPs, so the root complex can stream them (or one
  // open combined packet and a TLP), and the margin of beats and headers that may
  // still enter after room was sampled.
  localparam int unsigned MaxTlpBeats = (ni_pkg::TlpHdrBytes + MaxPayload + Bpb - 1) / Bpb;
  // With several host ports, each may start a TLP on the same room signal. The margin
  // also covers what ni_host_rx holds on its way in (its input queue and
  // ni_pkg::HostRxHeldBeats more): requests admitted under room_o but not yet in the
  // combiner's queue, as many beats and as many TLPs. Without it a request could wait
  // there for room with a completion behind it that the room depends on. ni_host_widen
  // in front of it holds up to WidenHeldBeats more (the beat it makes of a widened TLP's
  // last bytes); a widened TLP is no longer than a 4 DW one of the same payload.
  localparam int unsigned HrxInDepth = 8;
  localparam int unsigned WidenHeldBeats = 1;
  localparam int unsigned HrxBeats = HrxInDepth + ni_pkg::HostRxHeldBeats + WidenHeldBeats;
  localparam int unsigned RoomMargin = 2 + HrxBeats;
  localparam int unsigned ReqBeats = (HostPorts + 1) * MaxTlpBeats + RoomMargin;
  localparam int unsigned ReqHdrs = HostPorts + 1 + RoomMargin;
  if (HostPorts != 1 && HostPorts != 2 && HostPorts != 4) begin : gen_bad_host_ports
    $error("nic_top: HostPorts must be 1, 2 or 4");
  end
  if (NumArt < 2 || NumArt > 16 || (NumArt & (NumArt - 1)) != 0 ||
      NumMemId < 2 || NumMemId > 16 || (NumMemId & (NumMemId - 1)) != 0 ||
      NumInj < 2 || NumInj > 8 || (NumInj & (NumInj - 1)) != 0 ||
      NumRfifo < 2 || NumRfifo > 4 || (NumRfifo & (NumRfifo - 1)) != 0 ||
      NumCnt < 2 || NumCnt > 32 || (NumCnt & (NumCnt - 1)) != 0) begin : gen_bad_arrays
    $error("nic_top: NumArt, NumMemId (up to 16), NumInj (8), NumRfifo (4), NumCnt (32) must be powers of two from 2");
  end

  // ------------------------------------------------------------ registers
  logic [15:0] node_id, pkey;
  // The host link as the NI's blocks see it (ports merged; see "host ports" below),
  // and its TLPs with 3 DW requests widened to 4 DW (wid_), as ni_host_rx takes them.
  logic [DataW-1:0] hin_tdata, hout_tdata, wid_tdata;
  logic [KeepW-1:0] hin_tkeep, hout_tkeep, wid_tkeep;
  logic hin_tlast, hin_tvalid, hin_tready, hout_tlast, hout_tuser, hout_tvalid, hout_tready;
  logic wid_tlast, wid_tuser, wid_tvalid, wid_tready, ev_widened;
  logic [7:0] hout_tdest;
  // ni_host_tx's TLPs (ntx_), before its requests below 4 GiB are narrowed to 3 DW.
  logic [DataW-1:0] ntx_tdata;
  logic [KeepW-1:0] ntx_tkeep;
  logic ntx_tlast, ntx_tuser, ntx_tvalid, ntx_tready, ev_narrowed;
  logic [7:0] ntx_tdest;
  logic [31:0] host_stall;
  logic host_up_written;
  logic [3:0] host_up_ports;
  logic [HostPorts-1:0] host_down;
  logic ev_host_bad_port, ev_host_drop;
  // A register request as ni_host_rx issues it (hrx_csr_*), and as the register block
  // takes it a cycle later (csr_*, see "register requests" below).
  logic hrx_csr_valid, hrx_csr_ready, hrx_csr_write;
  logic [11:0] hrx_csr_addr;
  logic [31:0] hrx_csr_wdata;
  logic [3:0] hrx_csr_be;
  logic [15:0] hrx_csr_reqid;
  logic [9:0] hrx_csr_tag;
  logic hrx_tready;
  logic csr_valid, csr_ready, csr_write;
  logic [11:0] csr_addr;
  logic [31:0] csr_wdata, csr_rdata;
  logic [3:0] csr_be;
  logic [15:0] csr_reqid;
  logic [9:0] csr_tag;
  logic csr_hit;
  logic rdc_ready, rdc_valid, rdc_rd_ready;

  // A window's staged base, limit, translation and destination as ART_CTRL's write
  // makes them take effect: ni_art keeps the active copies.
  logic [19:0] art_wbase_lo, art_wlimit_lo, art_wxlate_lo;
  logic [31:0] art_wbase_hi, art_wlimit_hi, art_wxlate_hi;
  logic [15:0] art_wnode, art_wmemid;
  logic [NumArt-1:0][15:0] art_node;  // every window's destination (ni_art's copy)
  logic [NumArt-1:0] art_valid, art_rx_xlate, art_perm_r, art_perm_w, art_perm_a, art_wc;
  logic [NumArt-1:0] art_ctrl_written, art_conf_all;
  logic [NumArt-1:0][1:0] art_conf_at;
  // Interrupt configuration: a copy per host port (banked registers).
  logic [HostPorts-1:0][29:0] intr_addr_lo;
  logic [HostPorts-1:0][31:0] intr_addr_hi, intr_data;
  logic [HostPorts-1:0][13:0] intr_mask;
  logic ev_conf, ev_irq;
  logic [15:0] wc_timeout;
  logic wc_flush_written, wc_flush_value;
  // A memory ID's base, size and key as MEMID_CTRL's write makes them active: the
  // injection engine and the receiver keep the active copies in RAMs of their own.
  localparam int unsigned MiW = $clog2(NumMemId);
  logic [NumMemId-1:0] mem_ctrl_written;
  logic mem_we;
  logic [MiW-1:0] mem_widx;
  logic [19:0] mem_wbase_lo, mem_wpages;
  logic [31:0] mem_wbase_hi;
  logic [15:0] mem_wkey;
  logic [NumMemId-1:0] mem_valid, mem_perm_r, mem_perm_w, mem_perm_a;
  logic [3:0][15:0] mcast_lid;
  logic [3:0] mcast_valid;
  logic [3:0][15:0] grp_lid;
  logic [3:0][2:0] grp_members;
  logic [3:0] grp_valid;
  logic [3:0] mbr_idx;  // the member entry ni_wc reads
  logic [15:0] mbr_dlid, mbr_memid;

  always_comb begin
    mem_widx = '0;
    for (int id = 0; id < NumMemId; id++) begin
      if (mem_ctrl_written[id]) mem_widx = MiW'(id);
    end
  end
  assign mem_we = |mem_ctrl_written;

  // Events.
  logic ev_win_miss, ev_perm, ev_malformed, ev_unsup, ev_cpl_unexp, ev_tx_pkt;
  logic hrx_win_miss, hrx_perm, hrx_malformed, hrx_unsup, hrx_cpl_unexp, hrx_poison;  // as ni_host_rx reports them
  logic ev_poison_host, ev_poison_fab, ev_pkey_err, frx_poison, frx_pkey_err;
  // ni_fab_rx's events as it reports them (registered into ev_* below).
  logic frx_rget_rx, frx_key_err, frx_rx_pkt, frx_crc_err, frx_memid_err, frx_bounds_err, frx_nak_tx,
        frx_nak_rx, frx_bad_pkt, frx_rd_served, frx_dup, frx_oos, frx_rnr_tx, frx_rnr_rx, frx_raw_rx,
        frx_raw_drop;
  logic [ni_pkg::NumVc-1:0][7:0] fab_credits;  // transmit credits held (FAB_CREDITS)
  logic ev_rx_pkt, ev_crc_err, ev_memid_err, ev_bounds_err, ev_nak_tx, ev_nak_rx, ev_bad_pkt, ev_rd_served;
  logic ev_wc_merged, ev_dup, ev_oos, ev_retx, ev_retx_fail, ev_retx_conf, ev_ack_unsent;
  logic [31:0] retx_timeout;
  logic [7:0] retx_limit;
  logic [31:0] mem_timeout;
  logic [7:0] mem_limit;
  logic ev_mem_reissue, ev_mem_fail;
  // Injection FIFOs.
  logic [NumInj-1:0][31:0] inj_base_lo, inj_base_hi;
  logic [NumInj-1:0][63:0] inj_base;
  logic [NumInj-1:0][15:0] inj_size, inj_size_used, inj_head, inj_tail_now;
  logic [15:0] inj_tail, inj_tail_q;  // a doorbell's slot, in its write cycle and the next
  logic [NumInj-1:0][3:0] inj_code;
  logic [NumInj-1:0] inj_tail_written, inj_ctrl_written, inj_enable, inj_reset_bit, inj_err, inj_busy;
  logic [NumInj-1:0] inj_tail_we_q, inj_ctrl_we_q;
  // Remote-fed FIFOs: remote gets land in them (ni_fab_rx) and move their tails.
  logic [NumInj-1:0] inj_remote, inj_push, frx_push;
  logic ev_rget_rx;
  logic [NumInj-1:0] ev_inj_err;  // FIFO i stopped in error
  logic ev_dma_err;
  // A ring base's bits below its slot size are not used: every slot lies in the ring,
  // whatever software wrote (INJ_BASE_LO, RFIFO_BASE_LO).
  localparam int unsigned InjSlotShift = $clog2(SlotBytes);
  localparam int unsigned RfSlotShift = $clog2(MaxPayload);
  for (genvar i = 0; i < NumInj; i++) begin : gen_inj_cat
    assign inj_base[i] = {inj_base_hi[i], inj_base_lo[i][31:InjSlotShift], InjSlotShift'(0)};
  end
  // Reception FIFOs.
  logic [NumRfifo-1:0][31:0] rf_base_lo, rf_base_hi;
  logic [NumRfifo-1:0][63:0] rf_base;
  logic [NumRfifo-1:0][15:0] rf_size, rf_head, rf_tail;
  logic [NumRfifo-1:0] rf_ctrl_written, rf_enable, rf_reset_bit, rf_ctrl_we_q;
  logic [NumRfifo-1:0][15:0] rf_key;
  logic ev_key_err;
  logic ev_rts;
  logic [31:0] rndv_thresh;
  logic ev_rnr_tx, ev_rnr_rx, ev_raw_rx, ev_raw_drop;
  logic raw_enable;
  logic [7:0] raw_fifo;
  // DMA byte counters.
  localparam int unsigned CntW = $clog2(NumCnt);
  logic [31:0] cnt_load_value;  // CNT_LOAD as written (the register block keeps it in a RAM)
  logic [NumCnt-1:0] cnt_load_written, cnt_zero;
  logic [4:0] cnt_rd_idx;        // CNT_VALUE: the counter a register read names ...
  logic [31:0] cnt_rd_value;     // ... and its value, in the next cycle
  logic [CntW-1:0] ev_cnt_idx;   // the counter that reached zero (with ev_cnt_zero)
  logic ev_cnt_zero, rcnt_valid;
  logic [CntW-1:0] rcnt_id;
  logic [12:0] rcnt_bytes;
  logic [31:0] rnr_delay;
  for (genvar i = 0; i < NumRfifo; i++) begin : gen_rf_cat
    assign rf_base[i] = {rf_base_hi[i], rf_base_lo[i][31:RfSlotShift], RfSlotShift'(0)};
  end
  // A doorbell or control write acts the cycle after, when the register holds the value
  // (a doorbell's slot is held here: INJ_TAIL is kept in a RAM).
  always_ff @(posedge clk_i) inj_tail_q <= inj_tail;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      inj_tail_we_q <= '0;
      inj_ctrl_we_q <= '0;
      rf_ctrl_we_q <= '0;
    end else begin
      inj_tail_we_q <= inj_tail_written;
      inj_ctrl_we_q <= inj_ctrl_written;
      rf_ctrl_we_q <= rf_ctrl_written;
    end
  end

  // ------------------------------------------------------------ register requests
  // ni_host_rx's register requests reach the register block through
  // a register (a one-entry queue), so that no path runs from the host link's header
  // through the ART and ni_host_rx's decisions into the registers and what their writes
  // start (ni_wc's flush, the DMA engine). While a request waits there ni_host_rx decides
  // nothing (its input queue goes on filling): a register write takes effect before the
  // next TLP is decided, and the host link's order stays as it was.
  logic csr_hold;  // ni_host_rx's decisions hold for a register request
  ni_fifo #(.Width(1 + 12 + 32 + 4 + 16 + 10), .Depth(1)) u_csr_q (
    .clk_i, .rst_ni,
    .wdata_i({hrx_csr_write, hrx_csr_addr, hrx_csr_wdata, hrx_csr_be, hrx_csr_reqid, hrx_csr_tag}),
    .wvalid_i(hrx_csr_valid), .wready_o(hrx_csr_ready),
    .rdata_o({csr_write, csr_addr, csr_wdata, csr_be, csr_reqid, csr_tag}),
    .rvalid_o(csr_valid), .rready_i(csr_ready));
  assign csr_hold = csr_valid;
  // A read's answer comes from the register block's read pipeline three cycles after
  // its request (rd_valid), its completion's requester and tag beside it through three
  // registers. A read is taken when its answer will have room in u_rdc_q: a credit per
  // slot, taken by a read, given back as a completion leaves (nothing else writes
  // there), so reads go one a cycle. A write may follow a read at once (the read
  // answers the state of its own cycle).
  localparam int unsigned RdcDepth = 4;  // reads in the pipeline (three) and answers waiting
  logic csr_rd_valid, csr_rd_take, csr_rd1_q, csr_rd2_q, csr_rd3_q;
  logic [2:0] csr_rd_credits_q;
  logic [32:0] csr_rd_meta1_q, csr_rd_meta2_q, csr_rd_meta3_q;  // {requester, tag, lower address}
  // A completion's Lower Address: the address of the first byte the read enables.
  logic [1:0] csr_first_byte;
  assign csr_first_byte = csr_be[0] ? 2'd0 : csr_be[1] ? 2'd1 : csr_be[2] ? 2'd2 : csr_be[3] ? 2'd3 : 2'd0;
  assign csr_rd_take = csr_valid && csr_ready && !csr_write;
  assign csr_ready = csr_write || csr_rd_credits_q != '0;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      csr_rd_credits_q <= 3'(RdcDepth);
      {csr_rd1_q, csr_rd2_q, csr_rd3_q} <= '0;
    end else begin
      csr_rd_credits_q <= csr_rd_credits_q - 3'(csr_rd_take) + 3'(rdc_valid && rdc_rd_ready);
      {csr_rd1_q, csr_rd2_q, csr_rd3_q} <= {csr_rd_take, csr_rd1_q, csr_rd2_q};
    end
  end
  always_ff @(posedge clk_i) begin
    csr_rd_meta1_q <= {csr_reqid, csr_tag, csr_addr[6:2], csr_first_byte};
    csr_rd_meta2_q <= csr_rd_meta1_q;
    csr_rd_meta3_q <= csr_rd_meta2_q;
  end
  `NI_ASSERT(CsrReadAnswered_A, csr_rd_valid == csr_rd3_q && (!csr_rd_valid || rdc_ready))
  assign wid_tready = hrx_tready;
  // The events of ni_host_rx and ni_fab_rx count a cycle later: both take them at the
  // end of their deepest decisions, and the status, counters and interrupts they set
  // would otherwise lie on those paths. ni_host_rx's go with the bus of the TLP that
  // caused them (rx_bus, for the interrupts below).
  logic [7:0] rx_bus;
  // Unexpected completions are found by ni_host_rx (wrong requester or tag) and by the
  // DMA engine (its tag, but no read waits for it): both can end in one cycle, so one
  // waits its turn to count.
  logic dma_cpl_unexp;
  logic [2:0] cpl_unexp_pend_q, cpl_unexp_sum;
  assign cpl_unexp_sum = cpl_unexp_pend_q + 3'(hrx_cpl_unexp) + 3'(dma_cpl_unexp);
  // One TLP makes at most one of the two, so the wait stays short.
  `NI_ASSERT(CplUnexpWait_A, cpl_unexp_pend_q < 3'd6)
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      {ev_win_miss, ev_perm, ev_malformed, ev_unsup, ev_cpl_unexp} <= '0;
      cpl_unexp_pend_q <= '0;
      {ev_poison_host, ev_poison_fab, ev_pkey_err} <= '0;
      rx_bus <= '0;
      {ev_rget_rx, ev_key_err, ev_rx_pkt, ev_crc_err, ev_memid_err, ev_bounds_err, ev_nak_tx, ev_nak_rx,
       ev_bad_pkt, ev_rd_served, ev_dup, ev_oos, ev_rnr_tx, ev_rnr_rx, ev_raw_rx, ev_raw_drop} <= '0;
    end else begin
      {ev_win_miss, ev_perm, ev_malformed, ev_unsup} <= {hrx_win_miss, hrx_perm, hrx_malformed, hrx_unsup};
      ev_cpl_unexp <= cpl_unexp_sum != '0;
      {ev_poison_host, ev_poison_fab, ev_pkey_err} <= {hrx_poison, frx_poison, frx_pkey_err};
      cpl_unexp_pend_q <= (cpl_unexp_sum != '0) ? cpl_unexp_sum - 3'd1 : '0;
      rx_bus <= hrx_csr_reqid[15:8];  // the TLP ni_host_rx finishes
      {ev_rget_rx, ev_key_err, ev_rx_pkt, ev_crc_err, ev_memid_err, ev_bounds_err, ev_nak_tx, ev_nak_rx,
       ev_bad_pkt, ev_rd_served, ev_dup, ev_oos, ev_rnr_tx, ev_rnr_rx, ev_raw_rx, ev_raw_drop} <=
          {frx_rget_rx, frx_key_err, frx_rx_pkt, frx_crc_err, frx_memid_err, frx_bounds_err, frx_nak_tx,
           frx_nak_rx, frx_bad_pkt, frx_rd_served, frx_dup, frx_oos, frx_rnr_tx, frx_rnr_rx, frx_raw_rx,
           frx_raw_drop};
    end
  end

  // A register request's bank (its copy of a banked register): the port its
  // Requester ID names, as for its completion.
  logic [7:0] csr_bank;
  assign csr_bank = (HostPorts == 1) ? 8'd0 : csr_reqid[15:8];
  ni_csr_regs #(.NumArt(NumArt), .NumMemId(NumMemId), .NumInj(NumInj), .NumRfifo(NumRfifo), .NumCnt(NumCnt),
                .Banks(HostPorts)) u_regs (
    .clk_i, .rst_ni,
    .req_valid_i(csr_valid && csr_ready), .req_write_i(csr_write), .req_addr_i(csr_addr),
    .req_wdata_i(csr_wdata), .req_be_i(csr_be), .req_bank_i(csr_bank),
    .rdata_o(csr_rdata), .rd_valid_o(csr_rd_valid), .rd_hit_o(csr_hit),
    .caps_data_bytes_i(8'(Bpb)), .caps_art_entries_i(8'(NumArt)),
    .caps_memid_entries_i(8'(NumMemId)), .caps_rx_credits_i(8'(RxCredits)),
    .caps2_max_payload_i(16'(MaxPayload)),
    .node_id_lid_o(node_id), .p_key_pkey_o(pkey),
    .pkey_err_cnt_inc_i(ev_pkey_err), .poison_host_cnt_inc_i(ev_poison_host),
    .poison_fab_cnt_inc_i(ev_poison_fab),
    .status_win_miss_set_i(ev_win_miss), .status_perm_set_i(ev_perm),
    .status_malformed_set_i(ev_malformed), .status_unsupported_set_i(ev_unsup),
    .status_crc_err_set_i(ev_crc_err), .status_memid_err_set_i(ev_memid_err),
    .status_bounds_err_set_i(ev_bounds_err), .status_nak_rx_set_i(ev_nak_rx),
    .status_bad_pkt_set_i(ev_bad_pkt), .status_cpl_unexp_set_i(ev_cpl_unexp),
    .status_retx_fail_set_i(ev_retx_fail), .status_mem_fail_set_i(ev_mem_fail),
    .status_dma_err_set_i(ev_dma_err), .dma_err_cnt_inc_i(ev_dma_err),
    .caps4_inj_fifos_i(8'(NumInj)), .caps4_rcv_fifos_i(8'(NumRfifo)), .caps4_slot_bytes_i(16'(SlotBytes)),
    .cnt_load_written_o(cnt_load_written), .cnt_load_value_o(cnt_load_value), .cnt_value_rd_idx_o(cnt_rd_idx),
    .cnt_value_value_i(cnt_rd_value),
    .cnt_zero_hit_i(32'(cnt_zero)), .caps5_counters_i(8'(NumCnt)), .caps5_host_ports_i(8'(HostPorts)),
    .host_port_err_cnt_inc_i(ev_host_bad_port), .host_drop_cnt_inc_i(ev_host_drop),
    .host_stall_cycles_o(host_stall), .host_port_up_written_o(host_up_written),
    .host_port_up_ports_o(host_up_ports), .host_port_down_ports_i(4'(host_down)),
    .fab_credits_vc0_i(fab_credits[0]), .fab_credits_vc1_i(fab_credits[1]), .status_cnt_zero_set_i(ev_cnt_zero),
    .retx_busy_pending_i(retx_pending_q),
    .rnr_tx_cnt_inc_i(ev_rnr_tx), .rnr_rx_cnt_inc_i(ev_rnr_rx), .rnr_delay_cycles_o(rnr_delay),
    .raw_ctrl_enable_o(raw_enable), .raw_ctrl_fifo_o(raw_fifo),
    .raw_rx_cnt_inc_i(ev_raw_rx), .raw_drop_cnt_inc_i(ev_raw_drop),
    .rfifo_base_lo_addr_o(rf_base_lo), .rfifo_base_hi_addr_o(rf_base_hi), .rfifo_size_slots_o(rf_size),
    .rfifo_head_slot_o(rf_head), .rfifo_tail_slot_i(rf_tail), .rfifo_ctrl_written_o(rf_ctrl_written),
    .rfifo_ctrl_enable_o(rf_enable), .rfifo_ctrl_reset_o(rf_reset_bit),
    .inj_base_lo_addr_o(inj_base_lo), .inj_base_hi_addr_o(inj_base_hi), .inj_size_slots_o(inj_size),
    .inj_tail_written_o(inj_tail_written), .inj_tail_slot_o(inj_tail), .inj_head_slot_i(inj_head),
    .inj_ctrl_written_o(inj_ctrl_written), .inj_ctrl_enable_o(inj_enable), .inj_ctrl_reset_o(inj_reset_bit),
    .inj_ctrl_remote_o(inj_remote), .rget_rx_cnt_inc_i(ev_rget_rx),
    .inj_status_err_i(inj_err), .inj_status_code_i(inj_code), .inj_status_busy_i(inj_busy),
    .mem_timeout_cycles_o(mem_timeout), .mem_limit_reissues_o(mem_limit),
    .mem_reissue_cnt_inc_i(ev_mem_reissue), .mem_fail_cnt_inc_i(ev_mem_fail),
    .dup_cnt_inc_i(ev_dup), .retx_cnt_inc_i(ev_retx), .oos_cnt_inc_i(ev_oos), .ack_unsent_cnt_inc_i(ev_ack_unsent),
    .retx_fail_cnt_inc_i(ev_retx_fail),
    .conf_cnt_inc_i(ev_conf), .intr_cnt_inc_i(ev_irq),
    .intr_addr_lo_addr_o(intr_addr_lo), .intr_addr_hi_addr_o(intr_addr_hi),
    .intr_data_data_o(intr_data), .intr_mask_mask_o(intr_mask),
    .retx_timeout_cycles_o(retx_timeout), .retx_limit_resends_o(retx_limit),
    .caps3_retx_slots_i(8'(RetxSlots)), .caps3_peers_i(8'(NumPeers)),
    .tx_pkts_inc_i(ev_tx_pkt),
    .rx_pkts_inc_i(ev_rx_pkt),
    .win_miss_cnt_inc_i(ev_win_miss),
    .perm_cnt_inc_i(ev_perm),
    .malformed_cnt_inc_i(ev_malformed),
    .unsup_cnt_inc_i(ev_unsup),
    .crc_err_cnt_inc_i(ev_crc_err),
    .memid_err_cnt_inc_i(ev_memid_err),
    .bounds_err_cnt_inc_i(ev_bounds_err),
    .nak_tx_cnt_inc_i(ev_nak_tx),
    .nak_rx_cnt_inc_i(ev_nak_rx),
    .bad_pkt_cnt_inc_i(ev_bad_pkt),
    .rd_served_cnt_inc_i(ev_rd_served),
    .cpl_unexp_cnt_inc_i(ev_cpl_unexp),
    .wc_merged_cnt_inc_i(ev_wc_merged),
    .wc_timeout_cycles_o(wc_timeout), .wc_flush_flush_o(wc_flush_value), .wc_flush_written_o(wc_flush_written),
    .art_base_lo_addr_cmt_o(art_wbase_lo), .art_base_hi_addr_cmt_o(art_wbase_hi),
    .art_limit_lo_addr_cmt_o(art_wlimit_lo), .art_limit_hi_addr_cmt_o(art_wlimit_hi),
    .art_xlate_lo_addr_cmt_o(art_wxlate_lo), .art_xlate_hi_addr_cmt_o(art_wxlate_hi),
    .art_dest_node_cmt_o(art_wnode), .art_dest_memid_cmt_o(art_wmemid),
    .art_ctrl_valid_o(art_valid), .art_ctrl_rx_xlate_o(art_rx_xlate),
    .art_ctrl_perm_r_o(art_perm_r), .art_ctrl_perm_w_o(art_perm_w), .art_ctrl_perm_a_o(art_perm_a),
    .art_ctrl_wc_o(art_wc), .art_ctrl_written_o(art_ctrl_written),
    .art_ctrl_conf_all_o(art_conf_all), .art_ctrl_conf_at_o(art_conf_at),
    .memid_base_lo_addr_cmt_o(mem_wbase_lo), .memid_base_hi_addr_cmt_o(mem_wbase_hi),
    .memid_size_bytes_cmt_o(mem_wpages), .memid_ctrl_written_o(mem_ctrl_written),
    .memid_ctrl_valid_o(mem_valid), .memid_ctrl_perm_r_o(mem_perm_r),
    .memid_ctrl_perm_w_o(mem_perm_w), .memid_ctrl_perm_a_o(mem_perm_a), .memid_key_key_cmt_o(mem_wkey),
    .rfifo_key_key_o(rf_key), .key_err_cnt_inc_i(ev_key_err),
    .rndv_threshold_bytes_o(rndv_thresh),
    .rts_tx_cnt_inc_i(ev_rts),
    .mcast_lid_lid_o(mcast_lid), .mcast_lid_valid_o(mcast_valid),
    .mgrp_ctrl_lid_o(grp_lid), .mgrp_ctrl_members_o(grp_members), .mgrp_ctrl_valid_o(grp_valid),
    .mgrp_member_hw_idx_i(mbr_idx), .mgrp_member_dlid_o(mbr_dlid), .mgrp_member_memid_o(mbr_memid)
  );

  // ------------------------------------------------------------ ART lookup
  // A pipeline: ni_host_rx looks a TLP's address up as its header beat enters and takes
  // the answer a few cycles later, when it decides the TLP (rtl/tunnel/ni_art.sv).
  logic [63:0] art_addr;
  logic [51:0] art_delta, art_back_page;
  logic art_look_valid, art_res_valid, art_busy, art_upd_done;
  logic art_hit, art_hit_rx_xlate, art_hit_perm_r, art_hit_perm_w, art_hit_perm_a;
  logic [15:0] art_hit_node, art_hit_memid;
  logic [$clog2(NumArt)-1:0] art_index;
  logic [7:0] hrx_art_win;  // the window of the TLP ni_host_rx decides now
  logic [$clog2(NumArt)-1:0] art_win;
  assign art_win = hrx_art_win[$clog2(NumArt)-1:0];

  ni_art #(.NumEntries(NumArt)) u_art (
    .clk_i, .rst_ni,
    .valid_i(art_valid), .rx_xlate_i(art_rx_xlate), .perm_r_i(art_perm_r), .perm_w_i(art_perm_w),
    .perm_a_i(art_perm_a), .wr_i(art_ctrl_written), .wbase_i({art_wbase_hi, art_wbase_lo}),
    .wlimit_i({art_wlimit_hi, art_wlimit_lo}), .wxlate_i({art_wxlate_hi, art_wxlate_lo}),
    .wnode_i(art_wnode), .wmemid_i(art_wmemid), .win_node_o(art_node), .busy_o(art_busy),
    .upd_done_o(art_upd_done),
    .look_valid_i(art_look_valid), .addr_i(art_addr), .res_valid_o(art_res_valid),
    .hit_o(art_hit), .index_o(art_index), .rx_xlate_o(art_hit_rx_xlate), .perm_r_o(art_hit_perm_r),
    .perm_w_o(art_hit_perm_w), .perm_a_o(art_hit_perm_a), .node_o(art_hit_node),
    .memid_o(art_hit_memid), .delta_o(art_delta), .back_page_o(art_back_page)
  );

  // A window to an NI-replicated group with no members: its writes are refused. Known
  // per window from the registers alone, so that the lookup only picks a bit (as for
  // art_wc and art_conf_all) instead of comparing the hit window's node with the groups.
  logic [NumArt-1:0] win_mcast_empty;
  always_comb begin
    for (int w = 0; w < NumArt; w++) begin
      win_mcast_empty[w] = 1'b0;
      for (int g = 0; g < 4; g++) begin
        if (grp_valid[g] && grp_lid[g] == art_node[w] && grp_members[g] == 3'd0) win_mcast_empty[w] = 1'b1;
      end
    end
  end

  // ------------------------------------------------------------ read tracker
  logic [7:0] trk_tag;
  logic [9:0] trk_otag, trk_commit_otag;  // the requester's 10-bit tag
  logic [23:0] trk_psn, trk_commit_psn;
  logic trk_hit, trk_release, trk_free_avail, trk_commit, trk_drop;
  logic [7:0] trk_drop_tag;
  logic [1:0] trk_kind, trk_commit_kind;
  logic [51:0] trk_page, trk_commit_page;
  logic [15:0] trk_node, trk_reqid, trk_commit_node, trk_commit_reqid;
  logic [TagW-1:0] trk_free_tag, trk_commit_tag;

  ni_rd_tracker #(.NumTags(NumTags)) u_trk (
    .clk_i, .rst_ni,
    .free_avail_o(trk_free_avail), .free_tag_o(trk_free_tag),
    .commit_i(trk_commit), .commit_tag_i(trk_commit_tag), .commit_node_i(trk_commit_node),
    .commit_reqid_i(trk_commit_reqid), .commit_otag_i(trk_commit_otag), .commit_psn_i(trk_commit_psn),
    .commit_kind_i(trk_commit_kind), .commit_page_i(trk_commit_page),
    .lookup_tag_i(trk_tag), .lookup_hit_o(trk_hit), .lookup_node_o(trk_node),
    .lookup_reqid_o(trk_reqid), .lookup_otag_o(trk_otag), .lookup_psn_o(trk_psn),
    .lookup_kind_o(trk_kind), .lookup_page_o(trk_page),
    .release_i(trk_release), .drop_i(trk_drop), .drop_tag_i(trk_drop_tag)
  );

  // ------------------------------------------------------------ host receive
  ni_pkg::tx_desc_t req_hdr, rsp_hdr, gen_hdr;
  ni_pkg::wc_meta_t req_meta;
  logic req_hdr_valid, req_hdr_ready, rsp_hdr_valid, rsp_hdr_ready;
  logic [BeatW-1:0] req_beat, rsp_beat;
  logic req_beat_valid, req_beat_ready, rsp_beat_valid, rsp_beat_ready;
  ni_pkg::own_cpl_t hrx_ur, ur;  // ni_host_rx's own TLPs as it issues them, as the choice below takes them
  logic hrx_ur_valid, hrx_ur_ready, ur_valid, ur_ready;
  logic mem_conf_valid, mem_conf_ok;
  logic [7:0] mem_conf_tag;
  logic amo_wr_valid;
  logic [15:0] amo_wr_lid;
  logic [23:0] amo_wr_psn;
  logic [ni_pkg::AmoCplBytes*8-1:0] amo_wr_tlp;
  logic [4:0] amo_wr_len;

  // Completions for the DMA engine's reads, as ni_host_rx sends them (hrx_) and as the
  // engine takes them.
  logic [DataW-1:0] hrx_cpl_tdata, dma_cpl_tdata;
  logic [KeepW-1:0] hrx_cpl_tkeep, dma_cpl_tkeep;
  logic hrx_cpl_tlast, hrx_cpl_tuser, hrx_cpl_tvalid, hrx_cpl_tready;
  logic dma_cpl_tlast, dma_cpl_tuser, dma_cpl_tvalid, dma_cpl_tready;

  ni_host_widen #(.DataW(DataW)) u_host_widen (
    .clk_i, .rst_ni,
    .s_axis_tdata(hin_tdata), .s_axis_tkeep(hin_tkeep), .s_axis_tlast(hin_tlast), .s_axis_tuser(1'b0),
    .s_axis_tvalid(hin_tvalid), .s_axis_tready(hin_tready),
    .m_axis_tdata(wid_tdata), .m_axis_tkeep(wid_tkeep), .m_axis_tlast(wid_tlast), .m_axis_tuser(wid_tuser),
    .m_axis_tvalid(wid_tvalid), .m_axis_tready(wid_tready), .ev_widened_o(ev_widened)
  );

  ni_host_rx #(.DataW(DataW), .MaxPayload(MaxPayload), .CsrBase(CsrBase),
               .NiReqId(NiReqId), .NumArt(NumArt), .InDepth(HrxInDepth)) u_host_rx (
    .clk_i, .rst_ni, .dec_hold_i(csr_hold),
    .s_axis_tdata(wid_tdata), .s_axis_tkeep(wid_tkeep),
    .s_axis_tlast(wid_tlast), .s_axis_tvalid(wid_tvalid),
    .s_axis_tready(hrx_tready),
    .art_look_valid_o(art_look_valid), .art_addr_o(art_addr), .art_busy_i(art_busy),
    .art_upd_done_i(art_upd_done), .art_res_valid_i(art_res_valid), .art_win_o(hrx_art_win),
    .art_hit_i(art_hit), .art_rx_xlate_i(art_hit_rx_xlate),
    .art_perm_r_i(art_hit_perm_r), .art_perm_w_i(art_hit_perm_w), .art_perm_a_i(art_hit_perm_a),
    .art_wc_i(art_wc[art_win]), .art_index_i(8'(art_index)), .art_node_i(art_hit_node),
    .art_conf_all_i(art_conf_all[art_win]), .art_conf_at_i(art_conf_at[art_win]),
    .art_mcast_empty_i(win_mcast_empty[art_win]),
    .art_memid_i(art_hit_memid), .art_delta_i(art_delta), .art_back_page_i(art_back_page),
    .trk_tag_o(trk_tag), .trk_hit_i(trk_hit), .trk_node_i(trk_node), .trk_reqid_i(trk_reqid),
    .trk_otag_i(trk_otag), .trk_psn_i(trk_psn), .trk_kind_i(trk_kind), .trk_page_i(trk_page),
    .trk_release_o(trk_release),
    .amo_wr_valid_o(amo_wr_valid), .amo_wr_lid_o(amo_wr_lid), .amo_wr_psn_o(amo_wr_psn),
    .amo_wr_tlp_o(amo_wr_tlp), .amo_wr_len_o(amo_wr_len),
    .req_hdr_o(req_hdr), .req_meta_o(req_meta), .req_hdr_valid_o(req_hdr_valid),
    .req_hdr_ready_i(req_hdr_ready),
    .req_beat_o(req_beat), .req_beat_valid_o(req_beat_valid), .req_beat_ready_i(req_beat_ready),
    .rsp_hdr_o(rsp_hdr), .rsp_hdr_valid_o(rsp_hdr_valid), .rsp_hdr_ready_i(rsp_hdr_ready),
    .rsp_beat_o(rsp_beat), .rsp_beat_valid_o(rsp_beat_valid), .rsp_beat_ready_i(rsp_beat_ready),
    .dma_cpl_tdata(hrx_cpl_tdata), .dma_cpl_tkeep(hrx_cpl_tkeep), .dma_cpl_tlast(hrx_cpl_tlast),
    .dma_cpl_tuser(hrx_cpl_tuser),
    .dma_cpl_tvalid(hrx_cpl_tvalid), .dma_cpl_tready(hrx_cpl_tready),
    .csr_valid_o(hrx_csr_valid), .csr_ready_i(hrx_csr_ready), .csr_write_o(hrx_csr_write),
    .csr_addr_o(hrx_csr_addr), .csr_wdata_o(hrx_csr_wdata), .csr_be_o(hrx_csr_be),
    .csr_reqid_o(hrx_csr_reqid), .csr_tag_o(hrx_csr_tag),
    .ur_o(hrx_ur), .ur_valid_o(hrx_ur_valid), .ur_ready_i(hrx_ur_ready),
    .mem_conf_valid_o(mem_conf_valid), .mem_conf_tag_o(mem_conf_tag), .mem_conf_ok_o(mem_conf_ok),
    .ev_win_miss_o(hrx_win_miss), .ev_perm_o(hrx_perm), .ev_malformed_o(hrx_malformed),
    .ev_unsup_o(hrx_unsup), .ev_cpl_unexp_o(hrx_cpl_unexp), .ev_poison_o(hrx_poison)
  );
  // The DMA engine's completions pass a queue of two without
  // fall-through: ni_host_rx knows a beat's class at the end of its header's path through
  // the ART, and the engine's completion handling (its staging RAMs' addresses) would
  // otherwise follow in the same cycle. They reach the engine a cycle later.
  ni_fifo #(.Width(DataW + KeepW + 2), .Depth(2)) u_hrx_cpl_q (
    .clk_i, .rst_ni, .wdata_i({hrx_cpl_tdata, hrx_cpl_tkeep, hrx_cpl_tlast, hrx_cpl_tuser}),
    .wvalid_i(hrx_cpl_tvalid), .wready_o(hrx_cpl_tready),
    .rdata_o({dma_cpl_tdata, dma_cpl_tkeep, dma_cpl_tlast, dma_cpl_tuser}), .rvalid_o(dma_cpl_tvalid),
    .rready_i(dma_cpl_tready));

  // ------------------------------------------------------------ queues toward the framer
  // Sources of the framer: 0 = tunneled completions (VC1), 1 = generated ACK/NAK/UR and
  // replayed atomic results (VC1, beats from ni_amo_cache), 2 = tunneled requests (VC0),
  // 3 = the DMA engine's raw packets (VC0, unsequenced: they bypass ni_retx).
  // Framer sources 0-3 (separate signals: Yosys misreads ports bound to elements of
  // an array of structs).
  ni_pkg::tx_desc_t fw_rsp_hdr, fw_gen_hdr, fw_retx_hdr;
  logic [3:0] src_hdr_valid, src_hdr_ready, src_beat_valid, src_beat_ready;
  logic [3:0][BeatW-1:0] src_beat;
  logic gen_valid, gen_ready;
  ni_pkg::tx_desc_t wc_hdr;
  logic wc_hdr_valid, wc_hdr_ready, wc_beat_valid, wc_beat_ready;
  logic [BeatW-1:0] wc_beat;

  ni_fifo #(.Width(HdrW), .Depth(2)) u_rsp_hdr_q (
    .clk_i, .rst_ni, .wdata_i(rsp_hdr), .wvalid_i(rsp_hdr_valid), .wready_o(rsp_hdr_ready),
    .rdata_o(fw_rsp_hdr), .rvalid_o(src_hdr_valid[0]), .rready_i(src_hdr_ready[0]));
  ni_fifo #(.Width(BeatW), .Depth(TunBeats)) u_rsp_beat_q (
    .clk_i, .rst_ni, .wdata_i(rsp_beat), .wvalid_i(rsp_beat_valid), .wready_o(rsp_beat_ready),
    .rdata_o(src_beat[0]), .rvalid_o(src_beat_valid[0]), .rready_i(src_beat_ready[0]));
  // The receiver's answer valid comes late (its decisions): the queue's LUT RAM is
  // written from its count instead (FreeWrite).
  ni_fifo #(.Width(HdrW), .Depth(2), .FreeWrite(1)) u_gen_q (
    .clk_i, .rst_ni, .wdata_i(gen_hdr), .wvalid_i(gen_valid), .wready_o(gen_ready),
    .rdata_o(fw_gen_hdr), .rvalid_o(src_hdr_valid[1]), .rready_i(src_hdr_ready[1]));
  logic [15:0] q_lid;
  logic [23:0] q_psn;
  logic amo_hit, amo_replay;
  logic [4:0] amo_len;
  ni_amo_cache #(.DataW(DataW), .NumPeers(NumPeers)) u_amo (
    .clk_i, .rst_ni,
    .wr_valid_i(amo_wr_valid), .wr_lid_i(amo_wr_lid), .wr_psn_i(amo_wr_psn), .wr_tlp_i(amo_wr_tlp),
    .wr_len_i(amo_wr_len),
    .q_lid_i(q_lid), .q_psn_i(q_psn), .q_hit_o(amo_hit), .q_len_o(amo_len), .replay_i(amo_replay),
    .beat_o(src_beat[1]), .beat_valid_o(src_beat_valid[1]), .beat_ready_i(src_beat_ready[1])
  );
  // Requests (with the write combiner) and the room signal for the root complex.
  ni_wc #(.DataW(DataW), .MaxPayload(MaxPayload), .Beats(ReqBeats), .Hdrs(ReqHdrs),
          .RoomMargin(RoomMargin), .RoomTlps(HostPorts)) u_wc (
    .clk_i, .rst_ni, .timeout_i(wc_timeout), .flush_i(wc_flush_written || |art_ctrl_written),
    .grp_valid_i(grp_valid), .grp_lid_i(grp_lid), .grp_members_i(grp_members),
    .mbr_idx_o(mbr_idx), .mbr_dlid_i(mbr_dlid), .mbr_memid_i(mbr_memid),
    .in_hdr_i(req_hdr), .in_meta_i(req_meta), .in_hdr_valid_i(req_hdr_valid),
    .in_hdr_ready_o(req_hdr_ready),
    .in_beat_i(req_beat), .in_beat_valid_i(req_beat_valid), .in_beat_ready_o(req_beat_ready),
    .out_hdr_o(wc_hdr), .out_hdr_valid_o(wc_hdr_valid), .out_hdr_ready_i(wc_hdr_ready),
    .out_beat_o(wc_beat), .out_beat_valid_o(wc_beat_valid), .out_beat_ready_i(wc_beat_ready),
    .room_o(s_host_req_room_o), .ev_merged_o(ev_wc_merged)
  );

  // DMA injection engine: its packets join the host's requests ahead of ni_retx.
  ni_pkg::tx_desc_t dma_hdr, mrg_hdr;
  logic dma_hdr_valid, dma_hdr_ready, dma_beat_valid, dma_beat_ready;
  logic [BeatW-1:0] dma_beat, mrg_beat;
  logic mrg_hdr_valid, mrg_hdr_ready, mrg_beat_valid, mrg_beat_ready;
  // The engine's read requests as it issues them (eng_rd_) and as ni_host_tx takes them.
  logic [63:0] eng_rd_addr, dma_rd_addr;
  logic [12:0] eng_rd_bytes, dma_rd_bytes;
  logic [7:0] eng_rd_tag, dma_rd_tag;
  logic eng_rd_valid, eng_rd_ready, dma_rd_valid, dma_rd_ready;
  logic inj_cnt_valid, eng_loc_cnt_valid, loc_cnt_valid, copy_cnt_valid;
  logic [CntW-1:0] inj_cnt_id, eng_loc_cnt_id, loc_cnt_id;
  logic [12:0] inj_cnt_bytes, eng_loc_cnt_bytes, loc_cnt_bytes;
  // Local copies: the engine's MWr TLPs to the host port, as the engine issues them
  // (eng_copy_) and as ni_host_tx takes them.
  logic [BeatW-1:0] eng_copy_beat, copy_beat;
  logic eng_copy_valid, eng_copy_ready, copy_valid, copy_ready;
  // The engine's raw packets as it issues them, for the framer.
  ni_pkg::tx_desc_t raw_hdr;
  logic raw_hdr_valid, raw_hdr_ready, raw_beat_valid, raw_beat_ready;
  ni_dma_inj #(.DataW(DataW), .MaxPayload(MaxPayload), .NumFifos(NumInj), .SlotBytes(SlotBytes),
               .NumMemId(NumMemId), .NumCnt(NumCnt), .NiReqId(NiReqId)) u_dma_inj (
    .clk_i, .rst_ni, .node_id_i(node_id),
    .base_i(inj_base), .size_i(inj_size), .size_o(inj_size_used), .enable_i(inj_enable), .tail_i(inj_tail_q),
    .tail_we_i(inj_tail_we_q), .reset_i(inj_ctrl_we_q & inj_reset_bit),
    .remote_i(inj_remote), .push_i(inj_push), .tail_o(inj_tail_now),
    .head_o(inj_head), .err_o(inj_err), .err_code_o(inj_code), .busy_o(inj_busy),
    .rndv_thresh_i(rndv_thresh), .ev_rts_o(ev_rts),
    .rd_valid_o(eng_rd_valid), .rd_ready_i(eng_rd_ready), .rd_addr_o(eng_rd_addr),
    .rd_bytes_o(eng_rd_bytes), .rd_tag_o(eng_rd_tag),
    .s_cpl_tdata(dma_cpl_tdata), .s_cpl_tkeep(dma_cpl_tkeep), .s_cpl_tlast(dma_cpl_tlast), .s_cpl_tuser(dma_cpl_tuser),
    .s_cpl_tvalid(dma_cpl_tvalid), .s_cpl_tready(dma_cpl_tready),
    .out_hdr_o(dma_hdr), .out_hdr_valid_o(dma_hdr_valid), .out_hdr_ready_i(dma_hdr_ready),
    .out_beat_o(dma_beat), .out_beat_valid_o(dma_beat_valid), .out_beat_ready_i(dma_beat_ready),
    .raw_hdr_valid_o(raw_hdr_valid), .raw_hdr_ready_i(raw_hdr_ready),
    .raw_beat_valid_o(raw_beat_valid), .raw_beat_ready_i(raw_beat_ready),
    .mem_valid_i(mem_valid), .mem_perm_r_i(mem_perm_r), .mem_perm_w_i(mem_perm_w),
    .mem_we_i(mem_we), .mem_widx_i(mem_widx), .mem_wbase_i({mem_wbase_hi, mem_wbase_lo}), .mem_wpages_i(mem_wpages),
    .loc_beat_o(eng_copy_beat), .loc_beat_valid_o(eng_copy_valid), .loc_beat_ready_i(eng_copy_ready),
    .inj_cnt_valid_o(inj_cnt_valid), .inj_cnt_id_o(inj_cnt_id), .inj_cnt_bytes_o(inj_cnt_bytes),
    .loc_cnt_valid_o(eng_loc_cnt_valid), .loc_cnt_id_o(eng_loc_cnt_id), .loc_cnt_bytes_o(eng_loc_cnt_bytes),
    .ev_err_o(ev_inj_err), .ev_cpl_unexp_o(dma_cpl_unexp)
  );
  // The engine's raw packets reach the framer through queues of two
  // without fall-through: the framer's choice among its sources (ni_retx's valid among
  // them) would otherwise reach the engine's next beat, read and slot address.
  ni_fifo #(.Width(ni_pkg::TxDescW), .Depth(2)) u_raw_hdr_q (
    .clk_i, .rst_ni, .wdata_i(dma_hdr), .wvalid_i(raw_hdr_valid), .wready_o(raw_hdr_ready),
    .rdata_o(raw_hdr), .rvalid_o(src_hdr_valid[3]), .rready_i(src_hdr_ready[3]));
  ni_fifo #(.Width(BeatW), .Depth(2)) u_raw_beat_q (
    .clk_i, .rst_ni, .wdata_i(dma_beat), .wvalid_i(raw_beat_valid), .wready_o(raw_beat_ready),
    .rdata_o(src_beat[3]), .rvalid_o(src_beat_valid[3]), .rready_i(src_beat_ready[3]));
  // The engine's read requests and local-copy beats reach ni_host_tx
  // through queues of two without fall-through: ni_host_tx picks among its sources
  // without a register, and the engine's next read and beat would otherwise wait on
  // that pick, which waits on the engine's own valids. A copy's counter decrement goes
  // with its last beat through the queue and counts as that beat leaves, as it does
  // without the queue: a counter read that follows finds the data in memory.
  ni_fifo #(.Width(64 + 13 + 8), .Depth(2)) u_dma_rd_q (
    .clk_i, .rst_ni, .wdata_i({eng_rd_addr, eng_rd_bytes, eng_rd_tag}),
    .wvalid_i(eng_rd_valid), .wready_o(eng_rd_ready),
    .rdata_o({dma_rd_addr, dma_rd_bytes, dma_rd_tag}), .rvalid_o(dma_rd_valid),
    .rready_i(dma_rd_ready));
  ni_fifo #(.Width(BeatW + 1 + CntW + 13), .Depth(2)) u_copy_q (
    .clk_i, .rst_ni,
    .wdata_i({eng_copy_beat, eng_loc_cnt_valid, eng_loc_cnt_id, eng_loc_cnt_bytes}),
    .wvalid_i(eng_copy_valid), .wready_o(eng_copy_ready),
    .rdata_o({copy_beat, copy_cnt_valid, loc_cnt_id, loc_cnt_bytes}), .rvalid_o(copy_valid),
    .rready_i(copy_ready));
  assign loc_cnt_valid = copy_valid && copy_ready && copy_cnt_valid;
  ni_req_merge #(.DataW(DataW)) u_req_merge (
    .clk_i, .rst_ni,
    .in_hdr_i({dma_hdr, wc_hdr}), .in_hdr_valid_i({dma_hdr_valid, wc_hdr_valid}),
    .in_hdr_ready_o({dma_hdr_ready, wc_hdr_ready}),
    .in_beat_i({dma_beat, wc_beat}), .in_beat_valid_i({dma_beat_valid, wc_beat_valid}),
    .in_beat_ready_o({dma_beat_ready, wc_beat_ready}),
    .out_hdr_o(mrg_hdr), .out_hdr_valid_o(mrg_hdr_valid), .out_hdr_ready_i(mrg_hdr_ready),
    .out_beat_o(mrg_beat), .out_beat_valid_o(mrg_beat_valid), .out_beat_ready_i(mrg_beat_ready)
  );
  // The merged requests reach ni_retx through two queues without
  // fall-through. ni_retx takes a header with its packet's first beat, and only when
  // the packet before has passed whole: the beat queue's head is then that first beat.
  ni_pkg::tx_desc_t rq_hdr;
  logic [BeatW-1:0] rq_beat;
  logic rq_hdr_valid, rq_hdr_ready, rq_beat_valid, rq_beat_ready;
  ni_fifo #(.Width(ni_pkg::TxDescW), .Depth(2)) u_req_hdr_q (
    .clk_i, .rst_ni, .wdata_i(mrg_hdr), .wvalid_i(mrg_hdr_valid), .wready_o(mrg_hdr_ready),
    .rdata_o(rq_hdr), .rvalid_o(rq_hdr_valid), .rready_i(rq_hdr_ready));
  ni_fifo #(.Width(BeatW), .Depth(2)) u_req_beat_q (
    .clk_i, .rst_ni, .wdata_i(mrg_beat), .wvalid_i(mrg_beat_valid), .wready_o(mrg_beat_ready),
    .rdata_o(rq_beat), .rvalid_o(rq_beat_valid), .rready_i(rq_beat_ready));

  // Sequencing, copies and resends of the requests (reliable delivery).
  ni_pkg::tx_desc_t rt_hdr;
  logic [BeatW-1:0] rt_beat;
  logic rt_hdr_valid, rt_hdr_ready, rt_beat_valid, rt_beat_ready;
  logic rel_valid, q_hit, q_held, q_conf, fail_valid, fail_ready;
  logic [51:0] q_back;
  logic [25:0] q_cpl;
  logic [2:0] rel_kind;
  logic [15:0] rel_lid;
  logic [23:0] rel_psn;
  ni_pkg::own_cpl_t fail_word;
  logic [$clog2(RetxSlots):0] retx_used;
  logic retx_pending, retx_pending_q;  // RETX_BUSY, a cycle late: off ni_retx's paths
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) retx_pending_q <= 1'b0;
    else retx_pending_q <= retx_pending;
  end
  // At 64 bits ni_fab_rx holds its query a cycle before it reads the answer a response's
  // outcome depends on: the match is registered (QueryReg), off the receiver's loop.
  ni_retx #(.DataW(DataW), .NumSlots(RetxSlots), .SlotBeats(MaxTlpBeats), .NumPeers(NumPeers),
            .QueryReg(DataW == 64 ? 1 : 0)) u_retx (
    .clk_i, .rst_ni, .timeout_i(retx_timeout), .limit_i(retx_limit), .rnr_delay_i(rnr_delay),
    .in_hdr_i(rq_hdr), .in_hdr_valid_i(rq_hdr_valid), .in_hdr_ready_o(rq_hdr_ready),
    .in_beat_i(rq_beat), .in_beat_valid_i(rq_beat_valid), .in_beat_ready_o(rq_beat_ready),
    .out_hdr_o(rt_hdr), .out_hdr_valid_o(rt_hdr_valid), .out_hdr_ready_i(rt_hdr_ready),
    .out_beat_o(rt_beat), .out_beat_valid_o(rt_beat_valid), .out_beat_ready_i(rt_beat_ready),
    .ev_valid_i(rel_valid), .ev_kind_i(rel_kind), .ev_lid_i(rel_lid), .ev_psn_i(rel_psn),
    .q_lid_i(q_lid), .q_psn_i(q_psn), .q_hit_o(q_hit), .q_held_o(q_held), .q_conf_o(q_conf), .q_back_o(q_back),
    .q_cpl_o(q_cpl),
    .fail_o(fail_word), .fail_valid_o(fail_valid), .fail_ready_i(fail_ready),
    .used_o(retx_used), .pending_o(retx_pending), .ev_retx_o(ev_retx), .ev_fail_o(ev_retx_fail), .ev_conf_o(ev_retx_conf),
    .ev_unsent_o(ev_ack_unsent)
  );

  // ni_retx's beats reach the framer through a queue of four without fall-through (its
  // storage written from the count: ni_retx's valid comes late), its headers through a
  // queue of two (the framer's choice among its sources would otherwise return into
  // ni_retx in the cycle its offer is made). ni_retx takes the next request only when
  // the packet before has passed it whole, and the header then needs a cycle more than
  // the beats to reach the framer's pick: with four beats of room ni_retx runs far enough
  // ahead that back to back the next header is there when the last beat is framed (with
  // two, the DMA engine's puts lost a cycle per packet at 256 and 512 bits). ni_retx
  // hands over a packet's first beat only with its header (BeatWithHeader_A): while it
  // offers a header, its beat waits for the header to be taken.
  logic rt_beat_wready, rt_beat_may;
  ni_fifo #(.Width(ni_pkg::TxDescW), .Depth(2), .FreeWrite(1)) u_retx_hdr_q (
    .clk_i, .rst_ni, .wdata_i(rt_hdr), .wvalid_i(rt_hdr_valid), .wready_o(rt_hdr_ready),
    .rdata_o(fw_retx_hdr), .rvalid_o(src_hdr_valid[2]), .rready_i(src_hdr_ready[2]));
  assign rt_beat_may = !rt_hdr_valid || rt_hdr_ready;
  ni_fifo #(.Width(BeatW), .Depth(4), .FreeWrite(1)) u_retx_beat_q (
    .clk_i, .rst_ni, .wdata_i(rt_beat), .wvalid_i(rt_beat_valid && rt_beat_may), .wready_o(rt_beat_wready),
    .rdata_o(src_beat[2]), .rvalid_o(src_beat_valid[2]), .rready_i(src_beat_ready[2]));
  assign rt_beat_ready = rt_beat_wready && rt_beat_may;

  // ------------------------------------------------------------ fabric transmit
  ni_fab_tx #(.DataW(DataW), .NumSrc(4), .RestSrc(2), .CplId(NiReqId)) u_fab_tx (
    .clk_i, .rst_ni, .node_id_i(node_id), .pkey_i(pkey),
    .src_hdr_i({raw_hdr, fw_retx_hdr, fw_gen_hdr, fw_rsp_hdr}), .src_hdr_valid_i(src_hdr_valid), .src_hdr_ready_o(src_hdr_ready),
    .src_beat_i(src_beat), .src_beat_valid_i(src_beat_valid), .src_beat_ready_o(src_beat_ready),
    .m_axis_tdata(m_fab_axis_tdata), .m_axis_tkeep(m_fab_axis_tkeep), .m_axis_tlast(m_fab_axis_tlast),
    .m_axis_tdest(m_fab_axis_tdest), .m_axis_tvalid(m_fab_axis_tvalid),
    .m_axis_tready(m_fab_axis_tready), .credit_i(fab_tx_credit_i), .credits_o(fab_credits),
    .ev_tx_pkt_o(ev_tx_pkt)
  );

  // ------------------------------------------------------------ fabric receive
  logic [DataW-1:0] dec_tdata;
  logic [KeepW-1:0] dec_tkeep;
  logic dec_tlast, dec_tuser, dec_tcni, dec_tvalid, dec_tready;

  ni_fab_rx #(.DataW(DataW), .NumMemId(NumMemId), .MaxPayload(MaxPayload), .RxCredits(RxCredits),
              .NumTags(NumTags), .NumPeers(NumPeers), .NumRfifo(NumRfifo), .NumInj(NumInj),
              .SlotBytes(SlotBytes), .NumCnt(NumCnt), .NiReqId(NiReqId)) u_fab_rx (
    .clk_i, .rst_ni, .node_id_i(node_id), .pkey_i(pkey), .mcast_valid_i(mcast_valid), .mcast_lid_i(mcast_lid),
    .s_axis_tdata(s_fab_axis_tdata), .s_axis_tkeep(s_fab_axis_tkeep), .s_axis_tlast(s_fab_axis_tlast),
    .s_axis_tdest(s_fab_axis_tdest), .s_axis_tvalid(s_fab_axis_tvalid),
    .s_axis_tready(s_fab_axis_tready), .credit_o(fab_rx_credit_o),
    .mem_valid_i(mem_valid), .mem_perm_r_i(mem_perm_r), .mem_perm_w_i(mem_perm_w), .mem_perm_a_i(mem_perm_a),
    .mem_we_i(mem_we), .mem_widx_i(mem_widx), .mem_wbase_i({mem_wbase_hi, mem_wbase_lo}), .mem_wpages_i(mem_wpages),
    .mem_wkey_i(mem_wkey),
    .trk_free_avail_i(trk_free_avail), .trk_free_tag_i(trk_free_tag), .trk_commit_o(trk_commit),
    .trk_commit_tag_o(trk_commit_tag), .trk_commit_node_o(trk_commit_node),
    .trk_commit_reqid_o(trk_commit_reqid), .trk_commit_otag_o(trk_commit_otag),
    .trk_commit_psn_o(trk_commit_psn), .trk_commit_kind_o(trk_commit_kind),
    .trk_commit_page_o(trk_commit_page),
    .rf_enable_i(rf_enable), .rf_base_i(rf_base), .rf_size_i(rf_size), .rf_head_i(rf_head),
    .rf_reset_i(rf_ctrl_we_q & rf_reset_bit), .rf_key_i(rf_key), .rf_tail_o(rf_tail),
    .raw_enable_i(raw_enable), .raw_fifo_i(raw_fifo),
    .ri_remote_i(inj_remote & inj_enable), .ri_err_i(inj_err), .ri_base_i(inj_base), .ri_size_i(inj_size_used),
    .ri_head_i(inj_head), .ri_tail_i(inj_tail_now), .ri_reset_i(inj_ctrl_we_q & inj_reset_bit),
    .ri_push_o(frx_push), .ev_rget_rx_o(frx_rget_rx), .ev_key_err_o(frx_key_err),
    .rel_valid_o(rel_valid), .rel_kind_o(rel_kind), .rel_lid_o(rel_lid), .rel_psn_o(rel_psn),
    .q_lid_o(q_lid), .q_psn_o(q_psn), .q_hit_i(q_hit), .q_held_i(q_held), .q_conf_i(q_conf), .q_back_i(q_back),
    .q_cpl_i(q_cpl),
    .amo_hit_i(amo_hit), .amo_len_i(amo_len), .amo_replay_o(amo_replay),
    .gen_hdr_o(gen_hdr), .gen_valid_o(gen_valid), .gen_ready_i(gen_ready),
    .m_axis_tdata(dec_tdata), .m_axis_tkeep(dec_tkeep), .m_axis_tlast(dec_tlast),
    .m_axis_tuser(dec_tuser), .m_axis_tcni(dec_tcni), .m_axis_tvalid(dec_tvalid), .m_axis_tready(dec_tready),
    .ev_rx_pkt_o(frx_rx_pkt), .ev_crc_err_o(frx_crc_err), .ev_memid_err_o(frx_memid_err),
    .ev_bounds_err_o(frx_bounds_err), .ev_nak_tx_o(frx_nak_tx), .ev_nak_rx_o(frx_nak_rx),
    .ev_bad_pkt_o(frx_bad_pkt), .ev_pkey_err_o(frx_pkey_err), .ev_poison_o(frx_poison), .ev_rd_served_o(frx_rd_served), .ev_dup_o(frx_dup), .ev_oos_o(frx_oos),
    .rcnt_valid_o(rcnt_valid), .rcnt_id_o(rcnt_id), .rcnt_bytes_o(rcnt_bytes),
    .ev_rnr_tx_o(frx_rnr_tx), .ev_rnr_rx_o(frx_rnr_rx), .ev_raw_rx_o(frx_raw_rx), .ev_raw_drop_o(frx_raw_drop)
  );

  // A remote get's push reaches the DMA engine a cycle after its TLP
  // left for the host (the descriptor is in memory all the same): the host port's ready,
  // through the receiver's host queue, stays off the engine's ring pointers.
  logic [NumInj-1:0] frx_push_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) frx_push_q <= '0;
    else frx_push_q <= frx_push;
  end
  assign inj_push = frx_push_q;

  // A counter takes a decrement a cycle after it is signalled (as the packet's or TLP's
  // last beat leaves; a counter read that follows still finds the data where it went):
  // the engine's and the receiver's decisions and the host port's ready stay off the
  // counters' subtractors and the interrupt logic behind them.
  logic [2:0] dec_valid_q;  // {local copy, reception, injection}
  logic [2:0][CntW-1:0] dec_id_q;
  logic [2:0][12:0] dec_bytes_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) dec_valid_q <= '0;
    else dec_valid_q <= {loc_cnt_valid, rcnt_valid, inj_cnt_valid};
  end
  always_ff @(posedge clk_i) begin
    dec_id_q <= {loc_cnt_id, rcnt_id, inj_cnt_id};
    dec_bytes_q <= {loc_cnt_bytes, rcnt_bytes, inj_cnt_bytes};
  end

  // A CNT_LOAD write loads its counter in the write's own cycle, so a register read
  // right after it sees the value.
  logic [CntW-1:0] cnt_load_idx;
  always_comb begin
    cnt_load_idx = '0;
    for (int i = 0; i < NumCnt; i++) cnt_load_idx |= cnt_load_written[i] ? CntW'(i) : '0;
  end
  ni_dma_cnt #(.NumCnt(NumCnt)) u_dma_cnt (
    .clk_i, .rst_ni, .load_i(|cnt_load_written), .load_idx_i(cnt_load_idx), .load_value_i(cnt_load_value),
    .inj_valid_i(dec_valid_q[0]), .inj_id_i(dec_id_q[0]), .inj_bytes_i(dec_bytes_q[0]),
    .rcv_valid_i(dec_valid_q[1]), .rcv_id_i(dec_id_q[1]), .rcv_bytes_i(dec_bytes_q[1]),
    .loc_valid_i(dec_valid_q[2]), .loc_id_i(dec_id_q[2]), .loc_bytes_i(dec_bytes_q[2]),
    .rd_idx_i(cnt_rd_idx[CntW-1:0]), .rd_value_o(cnt_rd_value),
    .zero_o(cnt_zero), .ev_zero_o(ev_cnt_zero), .ev_zero_idx_o(ev_cnt_idx)
  );

  // Atomic permissions wait for the atomics in the tunnel; unmapped CSR reads return 0
  // (so does a CNT_VALUE past NumCnt: the register block reads none, cnt_rd_idx unused).
  logic unused;
  assign unused = ^{csr_hit, wc_flush_value, retx_used, ev_retx_conf, hrx_art_win, cnt_rd_idx, ev_widened, ev_narrowed, wid_tuser};

  // Writes this NI confirmed (receiving-NI point): kept until memory confirms them,
  // issued to memory again on MEM_TIMEOUT.
  logic [DataW-1:0] keep_tdata, kept_tdata;
  logic [KeepW-1:0] keep_tkeep, kept_tkeep;
  logic keep_tlast, keep_tuser, keep_tvalid, keep_tready;
  logic kept_tlast, kept_tuser, kept_tvalid, kept_tready;
  ni_mem_keep #(.DataW(DataW), .NumSlots(MemKeepSlots), .SlotBeats(MaxTlpBeats)) u_mem_keep (
    .clk_i, .rst_ni, .timeout_i(mem_timeout), .limit_i(mem_limit),
    .s_axis_tdata(dec_tdata), .s_axis_tkeep(dec_tkeep), .s_axis_tlast(dec_tlast), .s_axis_tuser(dec_tuser),
    .s_axis_tcni(dec_tcni), .s_axis_tvalid(dec_tvalid), .s_axis_tready(dec_tready),
    .m_axis_tdata(keep_tdata), .m_axis_tkeep(keep_tkeep), .m_axis_tlast(keep_tlast),
    .m_axis_tuser(keep_tuser), .m_axis_tvalid(keep_tvalid), .m_axis_tready(keep_tready),
    .conf_valid_i(mem_conf_valid), .conf_tag_i(mem_conf_tag), .conf_ok_i(mem_conf_ok),
    .drop_valid_o(trk_drop), .drop_tag_o(trk_drop_tag),
    .ev_reissue_o(ev_mem_reissue), .ev_fail_o(ev_mem_fail)
  );
  // The decapsulated TLPs and the kept writes' copies reach
  // ni_host_tx through a queue of two without fall-through: ni_mem_keep's choice
  // between them and ni_host_tx's choice of source would otherwise share a cycle, with
  // the host port's ready between them (written from its count: that valid comes late).
  ni_fifo #(.Width(DataW + KeepW + 2), .Depth(2), .FreeWrite(1)) u_kept_q (
    .clk_i, .rst_ni, .wdata_i({keep_tdata, keep_tkeep, keep_tlast, keep_tuser}),
    .wvalid_i(keep_tvalid), .wready_o(keep_tready),
    .rdata_o({kept_tdata, kept_tkeep, kept_tlast, kept_tuser}),
    .rvalid_o(kept_tvalid), .rready_i(kept_tready));

  // ------------------------------------------------------------ host transmit
  logic [64:0] rdc;
  ni_fifo #(.Width(65), .Depth(RdcDepth)) u_rdc_q (
    .clk_i, .rst_ni, .wdata_i({csr_rdata, csr_rd_meta3_q}),
    .wvalid_i(csr_rd_valid), .wready_o(rdc_ready),
    .rdata_o(rdc), .rvalid_o(rdc_valid), .rready_i(rdc_rd_ready));
  // TLPs the NI makes itself, in this order when several wait: from host_rx (UR for
  // refused requests, sending-NI confirmations), from ni_retx (error completions,
  // receiving-NI confirmations), the interrupt.
  // Interrupts, one pending per host port: a STATUS event that the port's INTR_MASK
  // selects makes it pending if the event concerns the port; events while it waits
  // share it. An event concerns the port whose request caused it: a refused host
  // request (the bus of its Requester ID), a failed write (the requester of the
  // write), an injection FIFO stopped in error or a counter at zero (the port that
  // last wrote the FIFO's doorbell or control, or loaded the counter). Events of the
  // fabric and of memory, and a requester that names no port, concern every port.
  // Pending interrupts leave round robin.
  logic [13:0] status_events;
  assign ev_dma_err = |ev_inj_err;
  assign status_events = {ev_cnt_zero, ev_dma_err, ev_mem_fail, ev_retx_fail, ev_cpl_unexp, ev_bad_pkt, ev_nak_rx, ev_bounds_err,
                          ev_memid_err, ev_crc_err, ev_unsup, ev_malformed, ev_perm, ev_win_miss};
  localparam int unsigned PortW = (HostPorts > 1) ? $clog2(HostPorts) : 1;
  logic [NumInj-1:0][PortW-1:0] inj_owner_q;
  logic [NumCnt-1:0][PortW-1:0] cnt_owner_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      inj_owner_q <= '0;
      cnt_owner_q <= '0;
    end else if (32'(csr_bank) < HostPorts) begin
      for (int i = 0; i < NumInj; i++)
        if (inj_tail_written[i] || inj_ctrl_written[i]) inj_owner_q[i] <= PortW'(csr_bank);
      for (int i = 0; i < NumCnt; i++)
        if (cnt_load_written[i]) cnt_owner_q[i] <= PortW'(csr_bank);
    end
  end
  logic [7:0] fail_bus;
  // The NI's own requests (DMA) name no CPU.
  assign fail_bus = (fail_word.reqid == NiReqId) ? 8'hFF : fail_word.reqid[15:8];
  logic [HostPorts-1:0][13:0] port_events;
  always_comb begin
    for (int p = 0; p < HostPorts; p++) begin
      port_events[p] = status_events;
      if (32'(rx_bus) < HostPorts && 32'(rx_bus) != p) port_events[p][3:0] = '0;
      if (32'(fail_bus) < HostPorts && 32'(fail_bus) != p) port_events[p][10] = 1'b0;
      port_events[p][12] = 1'b0;
      port_events[p][13] = 1'b0;
      for (int i = 0; i < NumInj; i++)
        if (ev_inj_err[i] && 32'(inj_owner_q[i]) == p) port_events[p][12] = 1'b1;
      if (ev_cnt_zero && 32'(cnt_owner_q[ev_cnt_idx]) == p) port_events[p][13] = 1'b1;
    end
  end
  logic [HostPorts-1:0] irq_pend_q, irq_pend_d;
  logic [PortW-1:0] irq_rr_q, irq_port;
  logic irq_any, irq_push;
  always_comb begin
    irq_any = 1'b0;
    irq_port = irq_rr_q;
    for (int k = HostPorts - 1; k >= 0; k--) begin
      if (irq_pend_q[(32'(irq_rr_q) + k) % HostPorts]) begin
        irq_any = 1'b1;
        irq_port = PortW'((32'(irq_rr_q) + k) % HostPorts);
      end
    end
  end
  ni_pkg::own_cpl_t irq_word, own_word;
  always_comb begin
    irq_word = '0;
    irq_word.kind = ni_pkg::OWN_IRQ;
    irq_word.reqid = {8'(irq_port), 8'h00};  // the port it goes to (ni_host_tx tdest)
    irq_word.addr = {intr_addr_hi[irq_port], intr_addr_lo[irq_port], 2'b00};
    irq_word.data = intr_data[irq_port];
  end
  // ni_host_rx's own TLPs (a UR, a sending-NI confirmation) pass a
  // queue of two without fall-through first: ni_host_rx decides them at the end of its
  // header's path through the ART, and the choice among the NI's own TLPs below would
  // otherwise follow in the same cycle. They leave a cycle later.
  ni_fifo #(.Width(ni_pkg::OwnCplW), .Depth(2)) u_hrx_ur_q (
    .clk_i, .rst_ni, .wdata_i(hrx_ur), .wvalid_i(hrx_ur_valid), .wready_o(hrx_ur_ready),
    .rdata_o(ur), .rvalid_o(ur_valid), .rready_i(ur_ready));
  ni_pkg::own_cpl_t ur_q;
  logic ur_q_valid, ur_q_ready, ur_in_ready;
  assign own_word = ur_valid ? ur : fail_valid ? fail_word : irq_word;
  ni_fifo #(.Width(ni_pkg::OwnCplW), .Depth(2)) u_ur_q (
    .clk_i, .rst_ni, .wdata_i(own_word),
    .wvalid_i(ur_valid || fail_valid || irq_any), .wready_o(ur_in_ready),
    .rdata_o(ur_q), .rvalid_o(ur_q_valid), .rready_i(ur_q_ready));
  assign ur_ready = ur_in_ready;
  assign fail_ready = ur_in_ready && !ur_valid;
  assign irq_push = irq_any && ur_in_ready && !ur_valid && !fail_valid;
  assign ev_irq = irq_push;
  assign ev_conf = ur_in_ready && (ur_valid || fail_valid) && own_word.kind == ni_pkg::OWN_CONF;
  always_comb begin
    for (int p = 0; p < HostPorts; p++)
      irq_pend_d[p] = (irq_pend_q[p] && !(irq_push && 32'(irq_port) == p)) || |(port_events[p] & intr_mask[p]);
  end
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      irq_pend_q <= '0;
      irq_rr_q <= '0;
    end else begin
      irq_pend_q <= irq_pend_d;
      if (irq_push) irq_rr_q <= PortW'((32'(irq_port) + 1) % HostPorts);
    end
  end

  ni_host_tx #(.DataW(DataW), .NiReqId(NiReqId)) u_host_tx (
    .clk_i, .rst_ni,
    .s_axis_tdata(kept_tdata), .s_axis_tkeep(kept_tkeep), .s_axis_tlast(kept_tlast),
    .s_axis_tuser(kept_tuser), .s_axis_tvalid(kept_tvalid), .s_axis_tready(kept_tready),
    .ur_i(ur_q), .ur_valid_i(ur_q_valid), .ur_ready_o(ur_q_ready),
    .rd_i(rdc), .rd_valid_i(rdc_valid), .rd_ready_o(rdc_rd_ready),
    .dma_rd_addr_i(dma_rd_addr), .dma_rd_bytes_i(dma_rd_bytes), .dma_rd_tag_i(dma_rd_tag),
    .dma_rd_valid_i(dma_rd_valid), .dma_rd_ready_o(dma_rd_ready),
    .copy_beat_i(copy_beat), .copy_valid_i(copy_valid), .copy_ready_o(copy_ready),
    .m_axis_tdata(ntx_tdata), .m_axis_tkeep(ntx_tkeep),
    .m_axis_tlast(ntx_tlast), .m_axis_tuser(ntx_tuser),
    .m_axis_tvalid(ntx_tvalid), .m_axis_tready(ntx_tready), .m_axis_tdest(ntx_tdest)
  );
  ni_host_narrow #(.DataW(DataW), .DestW(8)) u_host_narrow (
    .clk_i, .rst_ni,
    .s_axis_tdata(ntx_tdata), .s_axis_tkeep(ntx_tkeep), .s_axis_tlast(ntx_tlast), .s_axis_tuser(ntx_tuser),
    .s_axis_tdest(ntx_tdest), .s_axis_tvalid(ntx_tvalid), .s_axis_tready(ntx_tready),
    .m_axis_tdata(hout_tdata), .m_axis_tkeep(hout_tkeep), .m_axis_tlast(hout_tlast), .m_axis_tuser(hout_tuser),
    .m_axis_tdest(hout_tdest), .m_axis_tvalid(hout_tvalid), .m_axis_tready(hout_tready),
    .ev_narrowed_o(ev_narrowed)
  );

  // ------------------------------------------------------------ host ports
  // One port: the link itself. Several: TLPs in round robin (ni_host_mux), and out
  // to the port a completion's Requester ID names (ni_host_demux).
  if (HostPorts == 1) begin : gen_one_port
    assign {hin_tdata, hin_tkeep, hin_tlast, hin_tvalid} =
        {s_host_axis_tdata, s_host_axis_tkeep, s_host_axis_tlast, s_host_axis_tvalid};
    assign s_host_axis_tready = hin_tready;
    assign {m_host_axis_tdata, m_host_axis_tkeep, m_host_axis_tlast, m_host_axis_tuser, m_host_axis_tvalid} =
        {hout_tdata, hout_tkeep, hout_tlast, hout_tuser, hout_tvalid};
    assign hout_tready = m_host_axis_tready;
    assign host_down = '0;
    assign ev_host_bad_port = 1'b0;
    assign ev_host_drop = 1'b0;
    logic unused_port;
    assign unused_port = ^{host_stall, host_up_written, host_up_ports, hout_tdest};
  end else begin : gen_ports
    // HOST_PORT_UP acts the cycle after its write, when the register holds the value.
    logic [HostPorts-1:0] up;
    logic up_we_q;
    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) up_we_q <= 1'b0;
      else up_we_q <= host_up_written;
    end
    assign up = up_we_q ? host_up_ports[HostPorts-1:0] : '0;
    ni_host_mux #(.DataW(DataW), .HostPorts(HostPorts)) u_host_mux (
      .clk_i, .rst_ni,
      .s_axis_tdata(s_host_axis_tdata), .s_axis_tkeep(s_host_axis_tkeep),
      .s_axis_tlast(s_host_axis_tlast), .s_axis_tvalid(s_host_axis_tvalid),
      .s_axis_tready(s_host_axis_tready),
      .m_axis_tdata(hin_tdata), .m_axis_tkeep(hin_tkeep), .m_axis_tlast(hin_tlast),
      .m_axis_tvalid(hin_tvalid), .m_axis_tready(hin_tready)
    );
    ni_host_demux #(.DataW(DataW), .HostPorts(HostPorts)) u_host_demux (
      .clk_i, .rst_ni,
      .s_axis_tdata(hout_tdata), .s_axis_tkeep(hout_tkeep), .s_axis_tlast(hout_tlast),
      .s_axis_tuser(hout_tuser), .s_axis_tvalid(hout_tvalid), .s_axis_tready(hout_tready),
      .s_axis_tdest(hout_tdest), .m_axis_tdata(m_host_axis_tdata), .m_axis_tkeep(m_host_axis_tkeep),
      .m_axis_tlast(m_host_axis_tlast), .m_axis_tuser(m_host_axis_tuser),
      .m_axis_tvalid(m_host_axis_tvalid), .m_axis_tready(m_host_axis_tready),
      .stall_cycles_i(host_stall), .up_i(up), .down_o(host_down),
      .ev_bad_port_o(ev_host_bad_port), .ev_drop_o(ev_host_drop)
    );
    logic unused_port;
    assign unused_port = ^host_up_ports;
  end
endmodule

`default_nettype wire

// SPDX-License-Identifier: Apache-2.0
// DMA injection engine: descriptor-slot rings (injection FIFOs) in host memory.
// Reads descriptors and the message data written inline in the slots after them
// in the same reads, and turns each message into tunneled MWr packets (memory-FIFO
// sends and direct puts) for the request path, into one raw packet (LRH + RWH + an
// Ethernet frame or IP datagram) straight for the framer, or, for a local copy, into
// MWr TLPs for this node's own memory through the host port. A remote get (RGET) sends
// descriptors, a slot per packet, for another NI to inject into one of its remote-fed
// FIFOs; this NI's remote-fed FIFOs are filled the same way by others (push_i), never
// by a doorbell. Design: docs/architecture.md#dma-engine, formats: docs/formats.md#dma-descriptors.
//
// A pipeline of four parts, each deciding from registers:
// - the fetcher reads a FIFO's slots (a turn) into slot regions;
// - the walker goes through the slot regions in order, a descriptor beat a cycle, and
//   skips the slots of each message's inline data a slot a cycle; it hands each
//   descriptor's beats to the checker, and tokens for the turn's end and for regions
//   it has passed;
// - the checker assembles a descriptor and checks it in two stages into a command
//   (a message with its translated addresses, or an error), queued in a LUT RAM
//   (the command queue) with the walker's tokens in order;
// - the reader issues the data reads of the queued messages from memory, a message
//   after another, up to eight regions ahead of the packetizer;
// - the packetizer takes the commands in order: it sends a message's packets (data
//   from the data regions, or inline from the slot regions through a RAM copy of its
//   own), moves the FIFO's head when a message is sent, stops a FIFO on an error, and
//   frees the slot regions behind it.
`default_nettype none
`include "ni_assert.svh"

module ni_dma_inj #(
  parameter int unsigned DataW = 64,
  parameter int unsigned MaxPayload = 256,  // largest read and TLP payload, bytes
  parameter int unsigned NumFifos = 8,
  parameter int unsigned SlotBytes = 64,    // power of two, 64 .. MaxPayload
  parameter int unsigned BatchSlots = 32,   // slots served from one FIFO before the next gets a turn
  parameter int unsigned NumMemId = 16,
  parameter int unsigned NumCnt = 32,       // DMA byte counters (a power of two): ids past them are refused
  parameter logic [15:0] NiReqId = 16'h0100,
  localparam int unsigned Bpb = DataW / 8,
  localparam int unsigned KeepW = Bpb,
  localparam int unsigned BeatW = DataW + KeepW + 2,  // {bad, last, keep, data}
  localparam int unsigned FifoW = $clog2(NumFifos),
  localparam int unsigned MiW = $clog2(NumMemId),
  localparam int unsigned CntW = $clog2(NumCnt)
) (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic [15:0] node_id_i,
  // Ring registers (INJ_*). tail_we_i[i]: a doorbell of FIFO i, with its slot tail_i
  // (one doorbell at a time: a register write); reset_i: discard what is queued.
  // base_i is SlotBytes-aligned (nic_top clears the low bits). size_i is taken while
  // the FIFO is disabled or empty and holds no turn; size_o is the size in use.
  input  logic [NumFifos-1:0][63:0] base_i,
  input  logic [NumFifos-1:0][15:0] size_i,   // slots
  output logic [NumFifos-1:0][15:0] size_o,
  input  logic [NumFifos-1:0] enable_i,
  input  logic [15:0] tail_i,
  input  logic [NumFifos-1:0] tail_we_i,
  input  logic [NumFifos-1:0] reset_i,
  // Remote-fed FIFOs (INJ_CTRL.remote): filled by other NIs' remote gets. push_i: the
  // receiver wrote one more descriptor at the tail slot (tail += 1).
  input  logic [NumFifos-1:0] remote_i,
  input  logic [NumFifos-1:0] push_i,
  output logic [NumFifos-1:0][15:0] tail_o,
  output logic [NumFifos-1:0][15:0] head_o,
  output logic [NumFifos-1:0] err_o,
  output logic [NumFifos-1:0][3:0] err_code_o,
  output logic [NumFifos-1:0] busy_o,         // the FIFO has a turn in the engine (read or served)
  // Protocol selection (RNDV_THRESHOLD): a send from memory named by memory ID that is
  // longer than rndv_thresh_i bytes goes out as an RTS instead of its data; the
  // destination fetches the data by remote gets.
  input  logic [31:0] rndv_thresh_i,
  output logic ev_rts_o,                      // an RTS left in place of a message
  // Reads of host memory (ni_host_tx makes the MRd; tag 0x80 | region).
  output logic rd_valid_o,
  input  logic rd_ready_i,
  output logic [63:0] rd_addr_o,
  output logic [12:0] rd_bytes_o,
  output logic [7:0] rd_tag_o,
  // Their completions (whole TLPs, byte 0 in lane 0).
  input  logic [DataW-1:0] s_cpl_tdata,
  input  logic [KeepW-1:0] s_cpl_tkeep,  // not needed: the Length field says where data ends
  input  logic s_cpl_tlast,
  input  logic s_cpl_tuser,  // with tlast: the completion was malformed (ni_host_rx)
  input  logic s_cpl_tvalid,
  output logic s_cpl_tready,
  // Packets toward the request path (ni_retx): header record, then the TLP's beats.
  output ni_pkg::tx_desc_t out_hdr_o,
  output logic out_hdr_valid_o,
  input  logic out_hdr_ready_i,
  output logic [BeatW-1:0] out_beat_o,
  output logic out_beat_valid_o,
  input  logic out_beat_ready_i,
  // Raw packets toward the framer (unsequenced): header record (out_hdr_o), then the
  // whole packet's beats (out_beat_o) with their own handshakes.
  output logic raw_hdr_valid_o,
  input  logic raw_hdr_ready_i,
  output logic raw_beat_valid_o,
  input  logic raw_beat_ready_i,
  // This node's memory IDs (MEMID_*): a local copy lands in one, as a put to this node would.
  // A source named by memory ID (flag src_mid) is read from one with read permission.
  input  logic [NumMemId-1:0] mem_valid_i,
  input  logic [NumMemId-1:0] mem_perm_r_i,
  input  logic [NumMemId-1:0] mem_perm_w_i,
  // A memory ID's region as MEMID_CTRL's write makes it active (mem_we_i): kept here in
  // a RAM read at one index per reader.
  input  logic mem_we_i,
  input  logic [MiW-1:0] mem_widx_i,
  input  logic [51:0] mem_wbase_i,   // page
  input  logic [19:0] mem_wpages_i,
  // A local copy's MWr TLPs toward the host port (beats as out_beat_o).
  output logic [BeatW-1:0] loc_beat_o,
  output logic loc_beat_valid_o,
  input  logic loc_beat_ready_i,
  // Injection counter: decrement by the data bytes of a packet that left.
  output logic inj_cnt_valid_o,
  output logic [CntW-1:0] inj_cnt_id_o,
  output logic [12:0] inj_cnt_bytes_o,
  // Reception counter of a local copy: decrement by the data bytes of a TLP the host
  // port took whole.
  output logic loc_cnt_valid_o,
  output logic [CntW-1:0] loc_cnt_id_o,
  output logic [12:0] loc_cnt_bytes_o,
  output logic [NumFifos-1:0] ev_err_o,  // bit i: FIFO i stopped in error
  output logic ev_cpl_unexp_o  // a completion no read of the engine waits for: dropped
);
  // ------------------------------------------------------------ sizes
  // Regions for ring slots: reads in flight. At 512 bits the host port brings a 4-slot
  // region every 5 cycles, and a region lives a memory round trip plus the walk, the
  // check and the send of its messages (about 45 cycles): 16 keep 8-byte puts at the
  // port's rate (8 held 91 %).
  localparam int unsigned NumSReg = (DataW >= 512) ? 16 : 8;
  localparam int unsigned NumDReg = 8;           // regions for data read from memory: reads in flight
                                                 // enough to cover memory's latency at 512 bits
  localparam int unsigned NumReg = NumSReg + NumDReg;  // at most 32: tags 0x80-0x9F
  localparam int unsigned RegW = $clog2(NumReg);
  localparam int unsigned DW = $clog2(NumDReg);
  localparam int unsigned SW = $clog2(NumSReg);
  localparam int unsigned SqW = SW + 1;          // slot region sequence numbers (modulo 2 NumSReg)
  localparam int unsigned RegBeats = MaxPayload / Bpb;
  localparam int unsigned RegSlots = MaxPayload / SlotBytes;
  localparam int unsigned SlotBeats = SlotBytes / Bpb;
  localparam int unsigned DescBeats = 64 / Bpb;
  localparam int unsigned RamW = $clog2(NumReg * RegBeats);
  localparam int unsigned RbW = $clog2(RegBeats + 1);
  localparam int unsigned SbW = $clog2(SlotBeats + 1);
  localparam int unsigned RsW = $clog2(RegSlots + 1);
  localparam int unsigned CplSkip = 12 % Bpb;    // completion data starts at TLP byte 12
  localparam int unsigned CplHdrBeats = 12 / Bpb;
  localparam int unsigned TagBeat = 10 / Bpb;    // beat holding the completion's tag
  localparam int unsigned CqDepth = 16;          // command queue: one LUT RAM deep
  localparam int unsigned CqW = $clog2(CqDepth);
  // Descriptor bytes the checker keeps (0..35: every field but the software's words).
  localparam int unsigned AsmBytes = 36;
  localparam int unsigned AsmBeats = (AsmBytes + Bpb - 1) / Bpb;

  localparam logic [7:0] OpSend = 8'd1;   // memory-FIFO send
  localparam logic [7:0] OpPut = 8'd2;    // direct put
  localparam logic [7:0] OpCopy = 8'd3;   // local copy
  localparam logic [7:0] OpRaw = 8'd4;    // raw datagram (EtherType in qid)
  localparam logic [7:0] OpRget = 8'd5;   // remote get: descriptors for a remote-fed FIFO of dest
  // A raw datagram is one packet that fits a reception FIFO slot with its entry header.
  localparam int unsigned RawMaxBytes = MaxPayload - 16 - ni_pkg::RawHdrBytes;
  localparam logic [3:0] ErrOp = 4'd1, ErrCount = 4'd2, ErrLen = 4'd3, ErrAlign = 4'd4,
                         ErrMem = 4'd5, ErrTail = 4'd6, ErrRange = 4'd7, ErrRemote = 4'd8, ErrCnt = 4'd9;
  localparam int unsigned SlotShift = $clog2(SlotBytes);
  // An RTS is one memory-FIFO packet whose data is the send descriptor itself (its bytes
  // 36..63 the software's rendezvous words) and whose entry header has the offset RtsMark.
  localparam int unsigned RtsBytes = 64;
  localparam logic [31:0] RtsMark = 32'hFFFF_FFFF;

  // (a - b) mod size for a, b < size.
  function automatic logic [15:0] ring_dist(input logic [15:0] a, input logic [15:0] b,
                                            input logic [15:0] size);
    ring_dist = (a >= b) ? a - b : a + size - b;
  endfunction
  function automatic logic [15:0] ring_add(input logic [15:0] a, input logic [15:0] n,
                                           input logic [15:0] size);
    logic [16:0] s;
    s = {1'b0, a} + {1'b0, n};
    ring_add = (s >= {1'b0, size}) ? 16'(s - {1'b0, size}) : s[15:0];
  endfunction
  // Bytes of the packet (or read) at message offset off: up to MaxPayload, never
  // across a 4 KiB page of the destination or of the source read; a memory-FIFO
  // packet carries 64 bytes less than MaxPayload (its 16-byte entry header rides in
  // the payload, and every packet's data starts on a 64-byte boundary of the message);
  // a remote get sends one descriptor slot per packet (the receiver fills a slot each).
  function automatic logic [12:0] chunk_at(input logic [31:0] off, input logic at_dst,
                                           input logic one_slot,
                                           input logic inl, input logic [11:0] src,
                                           input logic [11:0] dst, input logic [31:0] len);
    logic [12:0] lim, pg;
    logic [31:0] rest;
    logic [11:0] a;
    lim = one_slot ? 13'(SlotBytes) : at_dst ? 13'(MaxPayload) : 13'(MaxPayload - 64);
    if (at_dst) begin
      a = dst + off[11:0];
      pg = 13'd4096 - {1'b0, a};
      if (pg < lim) lim = pg;
    end
    if (!inl) begin
      a = src + off[11:0];
      pg = 13'd4096 - {1'b0, a};
      if (pg < lim) lim = pg;
    end
    rest = len - off;
    chunk_at = (rest < 32'(lim)) ? rest[12:0] : lim;
  endfunction
  // chunk_at in two steps, for the reader's registers: the bytes from a page offset
  // plus off to the page's end; then the least of the limits (a raw datagram: its
  // length).
  function automatic logic [12:0] to_page_end(input logic [11:0] pg, input logic [11:0] off);
    logic [11:0] a;
    a = pg + off;
    to_page_end = 13'd4096 - {1'b0, a};
  endfunction
  function automatic logic [12:0] chunk_min(input logic raw, input logic at_dst, input logic [12:0] lim,
                                            input logic [12:0] pg_dst, input logic [12:0] pg_src,
                                            input logic [31:0] rest, input logic [12:0] len);
    logic [12:0] m;
    m = lim;
    if (at_dst && pg_dst < m) m = pg_dst;
    if (pg_src < m) m = pg_src;
    chunk_min = raw ? len : (rest < 32'(m)) ? rest[12:0] : m;
  endfunction

  // ------------------------------------------------------------ commands
  // What the checker queues for the packetizer: a message, an error that stops a FIFO,
  // the end of a turn, or slot regions the walker has passed.
  localparam logic [1:0] KMsg = 2'd0, KErr = 2'd1, KTend = 2'd2, KRel = 2'd3;
  typedef struct packed {
    logic [1:0] kind;
    logic [FifoW-1:0] fifo;
    logic [7:0] aux;          // KErr: the code; KTend: slots the FIFO's next turn reads at least
    logic [SqW-1:0] seq;      // KMsg: the descriptor's slot region; KTend, KRel: free the regions before it
    logic [RsW-1:0] slot;     // KMsg: the descriptor's slot in its region
    logic put, send, copy, raw, rget;
    logic inl, rts, from_mem;
    logic icnt_en, rcnt_teh, loc_rcnt;
    logic [CntW-1:0] icnt;
    logic [7:0] rcnt;
    logic [15:0] dest, qid, key;
    logic [31:0] len, tag;
    logic [63:0] dst;         // put: the destination offset; local copy: its host address
    logic [63:0] src;         // a message from memory: the source's host address
    logic [7:0] slots;
    logic [12:0] chunk0;      // inline or RTS: the first packet's data bytes
  } cmd_t;

  // ------------------------------------------------------------ ring state
  logic [NumFifos-1:0][15:0] head_q, head_d, tail_q, tail_d;
  logic [NumFifos-1:0] err_q, err_d, rst_pend_q, rst_pend_d;
  logic [NumFifos-1:0][3:0] code_q, code_d;
  logic [NumFifos-1:0] stopped;   // in error, disabled or being reset: no new message
  logic [NumFifos-1:0] has_work;
  // The ring's size in use: INJ_SIZE as it was when the FIFO was last disabled or empty,
  // with no turn in the engine, so a size written while it runs never moves a ring
  // under its pointers. Enabled with its head or tail outside that ring (made smaller
  // without a reset), the FIFO stops (ErrTail) instead of reading beyond it.
  logic [NumFifos-1:0][15:0] size_q, size_d;
  logic [NumFifos-1:0] ring_bad, tail_out;
  logic [NumFifos-1:0] turn_q, turn_d;            // the FIFO has a turn in the engine

  // ------------------------------------------------------------ region buffer
  // Each read lands in a region of MaxPayload bytes, data from lane 0 of its first
  // beat. Slot regions are used (and freed) in the order they were read, data
  // regions likewise; a beat may be read in the cycle after it is written
  // (cut-through). The slot regions are kept twice, for the walker's reads and the
  // packetizer's, the data regions once; each RAM has a registered read port. The
  // walker's reads its position of the cycle (from registers): the word comes a cycle
  // later, and the walker only takes a beat written before (no pass-through). The
  // packetizer's read the address of the next cycle (from their reader's next state)
  // and pass a word written in the same cycle through. A write address is {data RAM,
  // region, beat} (NumSReg a power of two, NumDReg at most NumSReg).
  localparam int unsigned HalfW = RamW - 1;
  localparam int unsigned DhW = $clog2(NumDReg * RegBeats);  // a data RAM address
  logic [DataW-1:0] sram_w_q [NumSReg * RegBeats];
  logic [DataW-1:0] sram_p_q [NumSReg * RegBeats];
  logic [DataW-1:0] dram_q [NumDReg * RegBeats];
  logic ram_we;
  logic [RamW-1:0] ram_waddr;
  logic [HalfW-1:0] w_raddr, p_raddr_d, d_raddr_d;
  logic [DataW-1:0] ram_wdata, w_rdata, p_rdata, d_rdata;
  always_ff @(posedge clk_i) begin
    if (ram_we && !ram_waddr[RamW-1]) begin
      sram_w_q[ram_waddr[HalfW-1:0]] <= ram_wdata;
      sram_p_q[ram_waddr[HalfW-1:0]] <= ram_wdata;
    end
    if (ram_we && ram_waddr[RamW-1]) dram_q[DhW'(ram_waddr[HalfW-1:0])] <= ram_wdata;
    w_rdata <= sram_w_q[w_raddr];
    p_rdata <= (ram_we && ram_waddr == {1'b0, p_raddr_d}) ? ram_wdata : sram_p_q[p_raddr_d];
    d_rdata <= (ram_we && ram_waddr == {1'b1, d_raddr_d}) ? ram_wdata : dram_q[DhW'(d_raddr_d)];
  end

  logic [NumReg-1:0][12:0] rq_bytes_q, rq_bytes_d;   // bytes asked for
  logic [NumReg-1:0][RbW-1:0] wbeats_q, wbeats_d;    // beats written
  logic [NumReg-1:0] rerr_q, rerr_d;                 // a completion with an error status
  logic [NumSReg-1:0][RsW-1:0] nslots_q, nslots_d;   // slots a slot region holds
  logic [NumSReg-1:0][FifoW-1:0] rfifo_q, rfifo_d;   // the FIFO a slot region was read for
  logic [NumSReg-1:0] rfirst_q, rfirst_d;            // the region opens a turn not begun yet
  // Kept in registers, so that no reader compares: the bytes still missing, and
  // whether the region's reads are over (all arrived, or one failed).
  logic [NumReg-1:0][12:0] rem_q, rem_d;
  logic [NumReg-1:0] done_q, done_d, rdone;
  assign rdone = done_q;
  // Data region i is buffer region NumSReg + i.
  function automatic logic [RegW-1:0] d_reg_of(input logic [DW-1:0] i);
    d_reg_of = RegW'(NumSReg) + RegW'(i);
  endfunction
  logic [SqW-1:0] s_alloc_q, s_alloc_d, s_head_q, s_head_d;
  logic [SqW-1:0] s_cnt;
  logic [DW-1:0] d_alloc_q, d_alloc_d, d_head_q, d_head_d;
  logic [DW:0] d_cnt_q, d_cnt_d, d_cnt_inc, d_cnt_dec;
  assign d_cnt_inc = d_cnt_q + (DW+1)'(1);
  assign d_cnt_dec = d_cnt_q - (DW+1)'(1);
  assign s_cnt = s_alloc_q - s_head_q;

  // ------------------------------------------------------------ completion intake
  // Beat of the completion coming in: wide enough for the longest (4 KiB and its header
  // at 64 bits, 514 beats; an 8-bit count wrapped and read a data beat as the header).
  localparam int unsigned CbW = 10;
  logic [CbW-1:0] c_beat_q, c_beat_d;
  logic [RegW-1:0] c_reg_q, c_reg_d;
  logic [2:0] c_status_q, c_status_d;
  logic [12:0] c_len_q, c_len_d, c_len;       // data bytes of this completion
  logic [DataW-1:0] c_prev_q, c_prev_d;
  logic c_flush_q, c_flush_d;
  logic [RbW-1:0] c_wb_q, c_wb_d;             // beat of the region the next write goes to
  logic [7:0] c_tag;
  logic [2:0] c_status;
  logic c_take;
  // A completion is the engine's when its tag names a region with a read outstanding
  // and its data fits what is still missing there; any other (a host's stray or hostile
  // completion) is consumed without a write and counted. The tag beat comes no later
  // than the first data beat, so nothing of it reaches the buffer.
  // The verdict is formed at the tag beat and registered (c_acc_q): the beats that
  // carry data come after it. A completion that ends with its tag beat has its region
  // brought up to date in the cycle after (c_end_q, one cycle without a beat taken),
  // so that the next completion's tag beat sees it.
  logic c_acc_q, c_acc_d;    // this completion is taken (its data written)
  logic c_end_q, c_end_d, c_bad_q, c_bad_d, c_unexp_q;
  logic c_known, c_fits, c_at_tag, c_fin;
  logic [RegW-1:0] c_tag_reg;

  assign c_tag = (c_beat_q == CbW'(TagBeat)) ? s_cpl_tdata[(10 % Bpb) * 8 +: 8] : 8'h80 | 8'(c_reg_q);
  // A poisoned completion (EP, byte 2 bit 6) fails its read as an error status does.
  assign c_status = (c_beat_q != '0) ? c_status_q :
                    s_cpl_tdata[2 * 8 + 6] ? ni_pkg::CPL_CA : s_cpl_tdata[6 * 8 + 5 +: 3];
  // Length 0 with data is 1024 DW.
  assign c_len = (c_beat_q != '0) ? c_len_q :
                 {s_cpl_tdata[2 * 8 +: 2] == 2'b00 && s_cpl_tdata[3 * 8 +: 8] == 8'h00 &&
                  s_cpl_tdata[0 +: 8] == ni_pkg::TLP_CPLD,
                  s_cpl_tdata[2 * 8 +: 2], s_cpl_tdata[3 * 8 +: 8], 2'b00};
  assign s_cpl_tready = !c_flush_q && !c_end_q;
  assign c_take = s_cpl_tvalid && s_cpl_tready;
  assign c_at_tag = c_beat_q == CbW'(TagBeat);
  assign c_known = c_tag >= 8'h80 && 32'(c_tag) < 32'h80 + NumReg;
  assign c_tag_reg = c_known ? RegW'(c_tag) : '0;
  assign c_fits = !rdone[c_tag_reg] && c_len <= rem_q[c_tag_reg];
  assign ev_cpl_unexp_o = c_unexp_q;
  // A taken completion's end: its bytes arrived (or its read failed).
  assign c_fin = c_acc_q && ((c_take && s_cpl_tlast && !c_at_tag) || c_end_q);

  // ------------------------------------------------------------ memory IDs
  // The active memory IDs' regions: {base page, pages}. The flags stay flip-flops.
  logic [71:0] mem_tab_q [NumMemId];
  always_ff @(posedge clk_i) begin
    if (mem_we_i) mem_tab_q[mem_widx_i] <= {mem_wbase_i, mem_wpages_i};
  end

  // ------------------------------------------------------------ signals between the parts
  // Walker -> checker: a descriptor beat (tk_desc); the descriptor read is a message
  // (tk_go: its slots are read or will be in its turn); or a token (tk_tok).
  logic tk_desc, tk_dlast, tk_go, tk_tok;
  logic [3:0] tk_dbeat;
  logic [1:0] tk_kind;
  logic [7:0] tk_aux;
  logic [SqW-1:0] tk_seq;
  logic credit;                          // the command queue has room for what is on the way
  // Walker -> fetcher.
  logic w_turn_end, hold_q, hold_d;
  logic [FifoW-1:0] w_act_q;
  logic w_clr_first;                     // the walker begins the turn its region opens
  // Packetizer -> ring state, fetcher, regions, walker, reader.
  logic p_head_we, p_err_we, p_turn_clr;
  logic [FifoW-1:0] p_fifo;
  logic [15:0] p_head_val;
  logic [3:0] p_err_code;
  logic [7:0] p_need;
  logic p_flush_q;                       // the packetizer drops the turn of p_flush_fifo_q
  logic [FifoW-1:0] p_flush_fifo_q;
  logic d_pop;                           // the data region at the head is freed
  logic [SqW-1:0] rel_q, rel_d;          // slot regions before this one may be freed
  logic [NumFifos-1:0] ev_err;
  // Reader -> fetcher, regions.
  logic d_want, d_issue, s_issue, s_want;
  logic [12:0] rq_chunk_q;

  // ------------------------------------------------------------ fetch (reads)
  // Turns: the fetcher reads one FIFO's slots at a time: BatchSlots of them (more when
  // no other FIFO waits or a message needs them), then it moves on to the next FIFO
  // with work while the walker still goes through what it read, so the next turn's slots
  // arrive behind the last turn's without a memory round trip between them. A FIFO
  // has at most one turn in the engine (turn_q), from its start in the fetcher until
  // the packetizer ends it; only the packetizer moves a head, so a turn's reads start
  // at the head. Each slot region is tagged with its FIFO and whether it opens a turn.
  logic [NumFifos-1:0][15:0] fp_q, fp_d;          // next slot to read in its turn
  logic [NumFifos-1:0][7:0] need_q, need_d;       // slots its next turn reads at least
  logic f_on_q, f_on_d;                 // the fetcher is in a turn ...
  logic [FifoW-1:0] f_fifo_q, f_fifo_d; // ... of this FIFO
  logic f_first_q, f_first_d;           // no read of the turn issued yet
  logic [15:0] f_cnt_q, f_cnt_d;        // slots read in the turn (saturating)
  logic [15:0] f_lim_q, f_lim_d;        // slots the turn reads while others wait
  logic [FifoW-1:0] rr_q, rr_d;         // round robin: the next pick starts here
  logic [15:0] f_head;
  logic f_stop, fon_act;
  logic [RsW-1:0] s_nslots;
  assign f_head = head_q[f_fifo_q];
  assign f_stop = stopped[f_fifo_q];
  assign fon_act = f_on_q && f_fifo_q == w_act_q;

  // Round robin: the first FIFO in w at or after `from`; bit FifoW says one was found.
  function automatic logic [FifoW:0] rr_pick(input logic [NumFifos-1:0] w, input logic [FifoW-1:0] from);
    rr_pick = '0;
    for (int k = NumFifos - 1; k >= 0; k--) begin
      if (w[FifoW'(32'(from) + k)]) rr_pick = {1'b1, FifoW'(32'(from) + k)};
    end
  endfunction
  // The next turn: a FIFO with work and no turn in the engine, not being reset (a
  // reset applies between its turns).
  // Registered (for the clock): a pick is a cycle old. A FIFO that stopped, emptied or
  // began a reset in that cycle gets a turn that ends before it reads anything.
  logic [FifoW:0] pick;
  logic [FifoW-1:0] next;
  assign next = pick[FifoW-1:0];
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) pick <= '0;
    else pick <= rr_pick(has_work & ~turn_q & ~(rst_pend_q | reset_i), rr_q);
  end

  // The turn's read position in registers of its own: its slot (t_ptr_q, copied to
  // fp_q for the walker), the ring's base and size as the turn started (software
  // changes them only while the FIFO is disabled), loaded in the cycle after the turn
  // starts (f_load_q). From them and the tail (a cycle old: it only grows in a turn),
  // the next read's address and size are formed over two registered steps: the slot's
  // address and its distances to the tail and the ring's end, then the size (up to the
  // tail, the ring's end, a region, a 4 KiB page). A read waits until they are those of
  // the current position (f_age_q: cycles since it last moved).
  logic [15:0] t_ptr_q, t_size_q, t_tail_q, to_tail_q, to_end_q, t_ptr_nx;
  logic [63:0] t_base_q, t_addr_q;
  logic [1:0] f_age_q;
  logic f_load_q, f_ready;
  logic [RsW-1:0] s_nslots_q;
  logic s_nz_q;     // s_nslots_q != 0
  // Whether the turn may read more (f_cnt_q < f_lim_q), whether a slot region and a
  // data region are free: formed in the cycle before from that cycle's counts and
  // decisions (each of a choice between compares formed beside the decisions), so that
  // the read requests are ANDs of registers.
  logic flim_ok_q, s_room_q, d_room_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      flim_ok_q <= 1'b1;
      s_room_q <= 1'b1;
      d_room_q <= 1'b1;
    end else begin
      if (!f_on_q && pick[FifoW]) flim_ok_q <= 1'b1;  // a turn starts: nothing read, a limit of 1 or more
      else if (s_issue) flim_ok_q <= {1'b0, f_cnt_q} + 17'(s_nslots_q) < 17'(f_lim_q);
      else flim_ok_q <= f_cnt_q < f_lim_q;
      if (s_issue && !s_free) s_room_q <= s_cnt < SqW'(NumSReg - 1);
      else if (s_free && !s_issue) s_room_q <= 1'b1;
      else s_room_q <= s_cnt < SqW'(NumSReg);
      if (d_issue && !d_pop) d_room_q <= d_cnt_q < (DW+1)'(NumDReg - 1);
      else if (d_pop && !d_issue) d_room_q <= 1'b1;
      else d_room_q <= d_cnt_q < (DW+1)'(NumDReg);
    end
  end
  assign f_ready = f_on_q && !f_load_q && f_age_q == 2'd2;
  assign t_ptr_nx = ring_add(t_ptr_q, 16'(s_nslots_q), t_size_q);
  always_ff @(posedge clk_i) begin
    logic [15:0] n;
    t_tail_q <= tail_q[f_fifo_q];
    t_addr_q <= t_base_q + 64'(t_ptr_q) * 64'(SlotBytes);
    to_tail_q <= ring_dist(t_tail_q, t_ptr_q, t_size_q);
    to_end_q <= t_size_q - t_ptr_q;
    n = to_tail_q;
    if (to_end_q < n) n = to_end_q;
    if (16'(RegSlots) < n) n = 16'(RegSlots);
    if ((16'd4096 - 16'(t_addr_q[11:0])) / 16'(SlotBytes) < n) n = (16'd4096 - 16'(t_addr_q[11:0])) / 16'(SlotBytes);
    s_nslots_q <= RsW'(n);
    s_nz_q <= n != '0;
    if (f_load_q) begin
      t_ptr_q <= head_q[f_fifo_q];
      t_size_q <= size_q[f_fifo_q];
      t_base_q <= base_i[f_fifo_q];
    end else if (s_issue) begin
      t_ptr_q <= t_ptr_nx;
    end
  end
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      f_age_q <= '0;
      f_load_q <= 1'b0;
    end else begin
      f_load_q <= !f_on_q && f_on_d;
      if (f_load_q || s_issue) f_age_q <= '0;
      else if (f_age_q != 2'd2) f_age_q <= f_age_q + 2'd1;
    end
  end
  assign s_nslots = s_nslots_q;
  // A stopped FIFO's reads stop, unless the message being walked needs them. (The
  // registered read has no slots when none were up to the tail.)
  assign s_want = f_ready && s_nz_q && s_room_q && (!f_stop || hold_q) && (flim_ok_q || hold_q || !pick[FifoW]);
  // A read takes its region when it enters the request register; it leaves from there
  // unchanged however long the host port makes it wait.
  logic rd_valid_q, rd_load;
  logic [63:0] rd_addr_q, rq_src;
  logic [12:0] rd_bytes_q;
  logic [7:0] rd_tag_q;
  logic [31:0] rq_dfo_q;
  assign rd_load = !rd_valid_q || rd_ready_i;
  assign d_issue = d_want && rd_load;
  assign s_issue = s_want && !d_want && rd_load;
  logic [RegW-1:0] rd_reg;  // the region a read is for: its tag is 0x80 + region
  logic [RegW-1:0] s_reg;      // the slot region a slot read takes
  logic [RegW-1:0] d_reg_take; // the data region a data read takes
  assign s_reg = RegW'(s_alloc_q[SW-1:0]);
  assign d_reg_take = d_reg_of(d_alloc_q);
  assign rd_reg = d_want ? d_reg_take : s_reg;
  assign rd_valid_o = rd_valid_q;
  assign rd_addr_o = rd_addr_q;
  assign rd_bytes_o = rd_bytes_q;
  assign rd_tag_o = rd_tag_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rd_valid_q <= 1'b0;
      rd_addr_q <= '0;
      rd_bytes_q <= '0;
      rd_tag_q <= '0;
    end else if (rd_load) begin
      rd_valid_q <= d_issue || s_issue;
      rd_addr_q <= d_want ? rq_src + 64'(rq_dfo_q) : t_addr_q;
      rd_bytes_q <= d_want ? rq_chunk_q : 13'(s_nslots) * 13'(SlotBytes);
      rd_tag_q <= 8'h80 | 8'(rd_reg);
    end
  end

  always_comb begin
    logic [16:0] cnt;
    turn_d = turn_q;
    fp_d = fp_q;
    need_d = need_q;
    f_on_d = f_on_q;
    f_fifo_d = f_fifo_q;
    f_first_d = f_first_q;
    f_cnt_d = f_cnt_q;
    f_lim_d = f_lim_q;
    rr_d = rr_q;
    cnt = '0;
    if (s_issue) begin
      fp_d[f_fifo_q] = t_ptr_nx;
      f_first_d = 1'b0;
      cnt = {1'b0, f_cnt_q} + 17'(s_nslots);
      f_cnt_d = cnt[16] ? 16'hFFFF : cnt[15:0];
    end
    // The packetizer ends a turn (its end token).
    if (p_turn_clr) begin
      turn_d[p_fifo] = 1'b0;
      need_d[p_fifo] = p_need;
    end
    // Fetcher: a turn ends when the walker ended it, when its FIFO stopped, when
    // another FIFO waits and the turn has read its slots or reached the tail, or when
    // the FIFO is empty and all of it is read; then the next FIFO's turn starts.
    // Apart from the walker's end, this is seen from the registers, in the cycle after
    // the read that made it so.
    if (f_on_q) begin
      if ((w_turn_end && fon_act) ||
          (!hold_d && (f_stop || (pick[FifoW] && (f_cnt_q >= f_lim_q || (f_ready && to_tail_q == 16'd0))) ||
                       (f_ready && to_tail_q == 16'd0 && t_ptr_q == f_head)))) begin
        f_on_d = 1'b0;
        // A turn that read nothing never reaches the walker.
        if (f_first_d) turn_d[f_fifo_q] = 1'b0;
      end
    end else if (pick[FifoW]) begin
      f_on_d = 1'b1;
      f_fifo_d = next;
      rr_d = next + FifoW'(1);
      turn_d[next] = 1'b1;
      fp_d[next] = head_q[next];
      f_first_d = 1'b1;
      f_cnt_d = '0;
      f_lim_d = (16'(need_q[next]) > 16'(BatchSlots)) ? 16'(need_q[next]) : 16'(BatchSlots);
      need_d[next] = 8'd0;
    end
  end

  // ------------------------------------------------------------ walker
  // Goes through the slot regions in order. In a turn it reads each descriptor, a beat
  // a cycle, handing the beats to the checker, then passes the message's other slots a
  // slot a cycle (their inline data is read by the packetizer); it moves into a region
  // only once its read is issued and leaves it once its reads have all arrived. A
  // turn ends, with a token, at a message boundary: when the FIFO stopped, when the
  // next region opens another turn, or when every slot read for the turn is passed;
  // and at once when the packetizer drops the turn. A message that reaches past the
  // slots its turn read holds the fetcher's turn on until they are read; if the
  // fetcher's turn is over, the turn ends before the message and the FIFO's next turn
  // reads at least its slots (the token carries the count). Between turns the walker
  // passes what is left of the last turn's regions (a token for each, so that the
  // packetizer frees them in order) until a region opens the next turn.
  typedef enum logic [1:0] {WIdle, WDesc, WSkip, WEnd} wstate_e;
  wstate_e w_st_q, w_st_d;
  logic [FifoW-1:0] w_act_d;
  logic [SqW-1:0] w_seq_q, w_seq_d;     // the walker's slot region
  logic [RsW-1:0] w_slot_q, w_slot_d;   // its slot in it
  logic [SbW-1:0] w_beat_q, w_beat_d;   // its beat in the slot
  logic [15:0] w_pos_q, w_pos_d;        // the ring slot of the message's descriptor
  logic [15:0] w_npos_q, w_npos_d;      // the ring slot at the walker's position
  logic [3:0] w_dbeat_q, w_dbeat_d;     // descriptor beats taken
  logic [7:0] w_dslots_q, w_dslots_d;   // slots of the message passed
  logic [7:0] w_slots_q;                // the descriptor's slot count (from its first beat)
  logic [7:0] w_slots;                  // ... also in the cycle its first beat's word comes
  logic tkd_desc_q;                     // the walker took a descriptor beat in the cycle
  logic [3:0] tkd_dbeat_q;              // before, this one (its word comes now)
  logic w_go_q, w_go_d;                 // WSkip: the message went to the checker
  logic [SqW-1:0] w_dseq_q;             // the descriptor's region and slot
  logic [RsW-1:0] w_dslot_q;
  logic [15:0] w_room_q, w_filled_q;    // slots read for the turn / up to the tail, from w_pos_q
  logic [RegW-1:0] w_reg;
  logic [RbW-1:0] w_rbeat;
  logic w_have, w_avail, w_bad, w_slot_ok, w_next_turn, kill_w;
  logic w_adv_beat, w_adv_slot;
  assign w_reg = RegW'(w_seq_q[SW-1:0]);
  // A one-beat descriptor's walk goes on with its slot count in the next cycle, as the
  // word arrives; a longer one's is in w_slots_q by its last beat.
  if (DescBeats == 1) begin : gen_slots_now
    assign w_slots = (tkd_desc_q && tkd_dbeat_q == '0) ? w_rdata[16 +: 8] : w_slots_q;
  end else begin : gen_slots_reg
    assign w_slots = w_slots_q;
  end
  assign w_have = w_seq_q != s_alloc_q;
  assign w_rbeat = RbW'(w_slot_q) * RbW'(SlotBeats) + RbW'(w_beat_q);
  assign w_raddr = HalfW'(w_seq_q[SW-1:0]) * HalfW'(RegBeats) + HalfW'(w_rbeat);
  assign w_avail = w_have && w_rbeat < wbeats_q[w_reg];
  assign w_bad = w_have && rerr_q[w_reg];
  assign w_slot_ok = w_have && (w_slot_q + RsW'(1) != nslots_q[w_reg[SW-1:0]] || rdone[w_reg]);
  // The walker stands at the start of a region that opens a turn not begun.
  assign w_next_turn = w_have && rfirst_q[w_reg[SW-1:0]] && w_slot_q == '0 && w_beat_q == '0;
  assign kill_w = p_flush_q && p_flush_fifo_q == w_act_q;
  always_comb begin
    logic fits, cnt_ok, skip;
    w_st_d = w_st_q;
    w_act_d = w_act_q;
    w_seq_d = w_seq_q;
    w_slot_d = w_slot_q;
    w_beat_d = w_beat_q;
    w_pos_d = w_pos_q;
    w_npos_d = w_npos_q;
    w_dbeat_d = w_dbeat_q;
    w_dslots_d = w_dslots_q;
    w_go_d = w_go_q;
    hold_d = hold_q;
    w_turn_end = 1'b0;
    w_clr_first = 1'b0;
    w_adv_beat = 1'b0;
    w_adv_slot = 1'b0;
    tk_desc = 1'b0;
    tk_dlast = 1'b0;
    tk_go = 1'b0;
    tk_dbeat = w_dbeat_q;
    tk_tok = 1'b0;
    tk_kind = KTend;
    tk_aux = '0;
    tk_seq = w_seq_q;
    // The message fits the slots read for its turn; its slot count is not refused.
    fits = 16'(w_slots) <= w_room_q;
    cnt_ok = w_slots != 8'd0 && 16'(w_slots) <= w_filled_q;
    skip = 1'b0;
    unique case (w_st_q)
      WIdle: begin
        if (w_have && rfirst_q[w_reg[SW-1:0]]) begin
          w_act_d = rfifo_q[w_reg[SW-1:0]];
          w_clr_first = 1'b1;
          w_pos_d = head_q[rfifo_q[w_reg[SW-1:0]]];
          w_npos_d = head_q[rfifo_q[w_reg[SW-1:0]]];
          w_dbeat_d = '0;
          w_st_d = WDesc;
        end else if (w_have && rdone[w_reg] && credit) begin
          tk_tok = 1'b1;
          tk_kind = KRel;
          tk_seq = w_seq_q + SqW'(1);
          w_seq_d = w_seq_q + SqW'(1);
          w_slot_d = '0;
          w_beat_d = '0;
        end
      end
      WDesc: begin
        if (kill_w || (w_dbeat_q == '0 && (stopped[w_act_q] || w_next_turn ||
                                          (!fon_act && fp_q[w_act_q] == w_pos_q)))) begin
          if (credit) begin
            tk_tok = 1'b1;
            tk_kind = KTend;
            w_turn_end = 1'b1;
            w_st_d = WIdle;
          end
        end else if (w_bad) begin
          if (credit) begin
            tk_tok = 1'b1;
            tk_kind = KErr;
            tk_aux = 8'(ErrMem);
            w_st_d = WEnd;
          end
        end else if (w_avail) begin
          tk_desc = 1'b1;
          tk_dlast = 32'(w_dbeat_q) == DescBeats - 1;
          w_dbeat_d = w_dbeat_q + 4'd1;
          w_adv_beat = 1'b1;
          if (tk_dlast) begin
            w_dslots_d = '0;
            w_go_d = 1'b0;
            w_st_d = WSkip;
          end
        end
      end
      WSkip: begin
        // First, from the slot count (registered with the first beat): the message goes
        // to the checker, or, when the turn's reads are over without all of its slots,
        // the turn ends before it. Then the rest of the descriptor's slot and the
        // message's other slots are passed.
        skip = 1'b0;
        if (kill_w) begin
          if (credit) begin
            tk_tok = 1'b1;
            tk_kind = KTend;
            w_turn_end = 1'b1;
            w_st_d = WIdle;
          end
        end else if (!w_go_q) begin
          if (cnt_ok && !fits && !fon_act) begin
            if (credit) begin
              tk_tok = 1'b1;
              tk_kind = KTend;
              tk_aux = w_slots;
              w_turn_end = 1'b1;
              w_st_d = WIdle;
            end
          end else if (credit) begin
            tk_go = 1'b1;
            w_go_d = 1'b1;
            if (cnt_ok && !fits) hold_d = 1'b1;
            skip = 1'b1;
          end
        end else begin
          skip = 1'b1;
        end
        if (skip) begin
          if (w_beat_q == '0 && w_dslots_q >= w_slots) begin
            hold_d = 1'b0;
            w_pos_d = w_npos_q;
            w_dbeat_d = '0;
            w_st_d = WDesc;
          end else if (!w_next_turn && w_slot_ok) begin
            w_adv_slot = 1'b1;
            w_dslots_d = w_dslots_q + 8'd1;
            if (w_dslots_q + 8'd1 >= w_slots) begin
              hold_d = 1'b0;
              w_pos_d = ring_add(w_npos_q, 16'd1, size_q[w_act_q]);
              w_dbeat_d = '0;
              w_st_d = WDesc;
            end
          end
        end
      end
      WEnd: begin
        // After an error: the turn ends.
        if (credit) begin
          tk_tok = 1'b1;
          tk_kind = KTend;
          w_turn_end = 1'b1;
          w_st_d = WIdle;
        end
      end
      default: w_st_d = WIdle;
    endcase
    if (w_turn_end) hold_d = 1'b0;
    // Position: the next beat, or the start of the next slot.
    if (w_adv_beat || w_adv_slot) begin
      if (w_adv_slot || 32'(w_beat_q) == SlotBeats - 1) begin
        w_beat_d = '0;
        w_npos_d = ring_add(w_npos_q, 16'd1, size_q[w_act_q]);
        if (w_slot_q + RsW'(1) == nslots_q[w_reg[SW-1:0]]) begin
          w_slot_d = '0;
          w_seq_d = w_seq_q + SqW'(1);
        end else begin
          w_slot_d = w_slot_q + RsW'(1);
        end
        if (w_adv_beat) w_dslots_d = w_dslots_d + 8'd1;
      end else begin
        w_beat_d = w_beat_q + SbW'(1);
      end
    end
  end

  // ------------------------------------------------------------ checker
  // Assembles a descriptor's bytes 0..35 from its beats (each a cycle after the walker
  // took it, when the walker's RAM port has it: asm_n holds the beats up to it); stage 1
  // decodes and checks what needs no table, reads the memory-ID table and forms the
  // sums; stage 2 compares against the table and the ring and forms the addresses: a
  // command. Tokens of the walker go through both stages in order with the descriptors.
  logic [AsmBytes*8-1:0] asm_q, asm_n;
  always_comb begin
    asm_n = asm_q;
    for (int j = 0; j < AsmBeats; j++) begin
      if (tkd_desc_q && 32'(tkd_dbeat_q) == j) begin
        for (int b = 0; b < Bpb; b++) begin
          if (j * Bpb + b < AsmBytes) asm_n[(j * Bpb + b) * 8 +: 8] = w_rdata[b * 8 +: 8];
        end
      end
    end
  end
  // Stage 1.
  logic c1_v;
  logic [1:0] c1_kind;
  logic [FifoW-1:0] c1_fifo;
  logic [7:0] c1_aux;
  logic [SqW-1:0] c1_seq;
  logic [RsW-1:0] c1_slot;
  logic [15:0] c1_pos;
  logic [AsmBytes*8-1:0] c1_d;
  logic [7:0] d_op, d_flags, d_slots, d_icnt, d_rcnt, d_smid;
  logic [15:0] d_dest, d_qid, d_key;
  logic [31:0] d_len, d_tag;
  logic [63:0] d_src, d_dst;
  logic d_inline, d_use_icnt, d_use_rcnt, d_src_mid;
  assign d_op = c1_d[0 +: 8];
  assign d_flags = c1_d[8 +: 8];
  assign d_slots = c1_d[16 +: 8];
  assign d_icnt = c1_d[24 +: 8];
  assign d_dest = c1_d[32 +: 16];
  assign d_qid = c1_d[48 +: 16];
  assign d_len = c1_d[64 +: 32];
  assign d_rcnt = c1_d[96 +: 8];
  assign d_smid = c1_d[104 +: 8];
  assign d_key = c1_d[112 +: 16];  // protection key of the target's memory ID or reception FIFO
  assign d_src = c1_d[128 +: 64];
  assign d_dst = c1_d[192 +: 64];
  assign d_tag = c1_d[256 +: 32];
  assign d_inline = d_flags[0];
  assign d_use_icnt = d_flags[1];
  assign d_use_rcnt = d_flags[2];
  assign d_src_mid = d_flags[3];  // src is an offset into memory ID d_smid of this node
  logic is_put, is_send, is_copy, is_raw, is_rget, at_dst, rts1;
  assign is_put = d_op == OpPut;
  assign is_send = d_op == OpSend;
  assign is_copy = d_op == OpCopy;
  assign is_raw = d_op == OpRaw;
  assign is_rget = d_op == OpRget;
  assign at_dst = is_put || is_copy;  // data lands at dst + offset
  // A send that goes by rendezvous: its RTS is the message (one packet, the descriptor
  // as data); the data itself stays in memory until the destination fetches it.
  assign rts1 = is_send && !d_inline && d_src_mid && d_len > rndv_thresh_i;
  // Stage 1's checks, in the order of their priority with stage 2's.
  logic e_op, e_remote, e_len, e_align, e_cnt;
  assign e_op = !is_put && !is_send && !is_copy && !is_raw && !is_rget;
  assign e_remote = remote_i[c1_fifo] && (d_slots != 8'd1 || d_inline || !d_src_mid);
  assign e_len = d_len == 32'd0 || d_len[1:0] != 2'b00 || (is_raw && d_len > 32'(RawMaxBytes)) ||
                 (is_rget && d_len[SlotShift-1:0] != '0) ||
                 (d_inline ? d_len > (32'(d_slots) - 32'd1) * SlotBytes : d_slots != 8'd1);
  assign e_align = (!d_inline && d_src[5:0] != 6'd0) || (at_dst && d_dst[5:0] != 6'd0) ||
                   (is_rget && !d_inline && d_src[SlotShift-1:0] != '0) ||
                   (is_raw && !d_inline && 13'(d_src[11:0]) + 13'(d_len) > 13'd4096);
  assign e_cnt = (d_use_icnt && d_icnt >= 8'(NumCnt)) || (is_copy && d_use_rcnt && d_rcnt >= 8'(NumCnt));
  // The last bytes of a copy's destination and of a source: their pages are checked.
  logic [64:0] cp_last, src_last;
  assign cp_last = {1'b0, d_dst} + 65'(d_len) - 65'd1;
  assign src_last = {1'b0, d_src} + 65'(d_len) - 65'd1;
  // Stage 2.
  logic c2_v, c2_stale;
  logic [1:0] c2_kind;
  logic [FifoW-1:0] c2_fifo;
  logic [7:0] c2_aux;
  logic [SqW-1:0] c2_seq;
  logic [RsW-1:0] c2_slot;
  logic c2_e_op, c2_e_remote, c2_e_len, c2_e_align, c2_e_cnt;  // stage 1's checks
  logic c2_put, c2_send, c2_copy, c2_raw, c2_rget, c2_inl, c2_rts, c2_src_mid;
  logic c2_icnt_en, c2_rcnt_en;
  logic [CntW-1:0] c2_icnt;
  logic [7:0] c2_rcnt, c2_slots;
  logic [15:0] c2_dest, c2_qid, c2_key, c2_filled;
  logic [31:0] c2_len, c2_tag;
  logic [63:0] c2_src, c2_dst;
  logic [52:0] c2_cp_last_pg, c2_src_last_pg;
  logic [51:0] c2_mi_base, c2_smi_base;
  logic [19:0] c2_mi_pages, c2_smi_pages;
  logic c2_mi_ok, c2_smi_ok;          // valid, with the permission, inside the table
  logic [12:0] c2_chunk0;
  logic [3:0] c2_code;
  cmd_t c2_cmd;
  always_comb begin
    logic [63:0] src_addr;
    c2_code = 4'd0;
    if (c2_e_op) c2_code = ErrOp;
    else if (c2_e_remote) c2_code = ErrRemote;
    else if (c2_slots == 8'd0 || 16'(c2_slots) > c2_filled) c2_code = ErrCount;
    else if (c2_e_len) c2_code = ErrLen;
    else if (c2_e_align) c2_code = ErrAlign;
    else if (c2_copy && !(c2_mi_ok && c2_cp_last_pg < 53'(c2_mi_pages))) c2_code = ErrRange;
    else if (!c2_inl && c2_src_mid && !(c2_smi_ok && c2_src_last_pg < 53'(c2_smi_pages))) c2_code = ErrRange;
    else if (c2_e_cnt) c2_code = ErrCnt;
    src_addr = c2_src_mid ? {c2_smi_base + c2_src[63:12], c2_src[11:0]} : c2_src;
    c2_cmd = '0;
    c2_cmd.kind = c2_kind;
    c2_cmd.fifo = c2_fifo;
    c2_cmd.aux = c2_aux;
    c2_cmd.seq = c2_seq;
    c2_cmd.slot = c2_slot;
    if (c2_kind == KMsg && c2_code != 4'd0) begin
      c2_cmd.kind = KErr;
      c2_cmd.aux = 8'(c2_code);
    end
    c2_cmd.put = c2_put;
    c2_cmd.send = c2_send;
    c2_cmd.copy = c2_copy;
    c2_cmd.raw = c2_raw;
    c2_cmd.rget = c2_rget;
    c2_cmd.inl = c2_inl;
    c2_cmd.rts = c2_rts;
    c2_cmd.from_mem = !c2_inl && !c2_rts;
    c2_cmd.icnt_en = c2_icnt_en && !c2_rts;  // an RTS counts nothing: the data is counted as it leaves
    c2_cmd.rcnt_teh = c2_rcnt_en && !c2_rget && !c2_rts;
    c2_cmd.loc_rcnt = c2_copy && c2_rcnt_en;
    c2_cmd.icnt = c2_icnt;
    c2_cmd.rcnt = c2_rcnt;
    c2_cmd.dest = c2_dest;
    c2_cmd.qid = c2_qid;
    c2_cmd.key = c2_key;
    c2_cmd.len = c2_len;
    c2_cmd.tag = c2_tag;
    // A local copy's address: its memory ID's base plus the offset (inside the region: checked).
    c2_cmd.dst = c2_copy ? {c2_mi_base + c2_dst[63:12], c2_dst[11:0]} : c2_dst;
    c2_cmd.src = src_addr;
    c2_cmd.slots = c2_slots;
    c2_cmd.chunk0 = c2_chunk0;
  end

  always_ff @(posedge clk_i) begin
    logic [MiW-1:0] mi, smi;
    // Assembly: the beats of the descriptor being read.
    asm_q <= asm_n;
    tkd_dbeat_q <= tk_dbeat;
    // Stage 1: a message, or a token (a message a cycle after its last beat at the
    // earliest: asm_n has it).
    c1_d <= asm_n;
    c1_kind <= tk_go ? KMsg : tk_kind;
    c1_fifo <= w_act_q;
    c1_aux <= tk_aux;
    c1_seq <= tk_go ? w_dseq_q : tk_seq;
    c1_slot <= w_dslot_q;
    c1_pos <= w_pos_q;
    // Stage 2.
    mi = d_qid[MiW-1:0];
    smi = d_smid[MiW-1:0];
    c2_kind <= c1_kind;
    c2_fifo <= c1_fifo;
    c2_aux <= c1_aux;
    c2_seq <= c1_seq;
    c2_slot <= c1_slot;
    c2_e_op <= e_op;
    c2_e_remote <= e_remote;
    c2_e_len <= e_len;
    c2_e_align <= e_align;
    c2_e_cnt <= e_cnt;
    c2_put <= is_put;
    c2_send <= is_send;
    c2_copy <= is_copy;
    c2_raw <= is_raw;
    c2_rget <= is_rget;
    c2_inl <= d_inline;
    c2_rts <= rts1;
    c2_src_mid <= d_src_mid;
    c2_icnt_en <= d_use_icnt;
    c2_rcnt_en <= d_use_rcnt;
    c2_icnt <= d_icnt[CntW-1:0];
    c2_rcnt <= d_rcnt;
    c2_slots <= d_slots;
    c2_dest <= d_dest;
    c2_qid <= d_qid;
    c2_key <= d_key;
    c2_len <= d_len;
    c2_tag <= d_tag;
    c2_src <= d_src;
    c2_dst <= d_dst;
    c2_filled <= ring_dist(tail_q[c1_fifo], c1_pos, size_q[c1_fifo]);
    c2_cp_last_pg <= cp_last[64:12];
    c2_src_last_pg <= src_last[64:12];
    {c2_mi_base, c2_mi_pages} <= mem_tab_q[mi];
    {c2_smi_base, c2_smi_pages} <= mem_tab_q[smi];
    c2_mi_ok <= d_qid < 16'(NumMemId) && mem_valid_i[mi] && mem_perm_w_i[mi];
    c2_smi_ok <= d_smid < 8'(NumMemId) && mem_valid_i[smi] && mem_perm_r_i[smi];
    // Inline data and an RTS are sent in packets of their own size (data from memory:
    // of its reads').
    c2_chunk0 <= rts1 ? 13'(RtsBytes) : is_raw ? d_len[12:0] :
                 chunk_at(32'd0, at_dst, is_rget, 1'b1, 12'd0, d_dst[11:0], d_len);
  end
  logic stale_ev;       // a memory ID or the threshold changed: decisions made before are stale
  logic [31:0] thresh_q;
  assign stale_ev = mem_we_i || thresh_q != rndv_thresh_i;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      c1_v <= 1'b0;
      c2_v <= 1'b0;
      tkd_desc_q <= 1'b0;
      c2_stale <= 1'b0;
      thresh_q <= '0;
    end else begin
      c1_v <= tk_go || tk_tok;
      tkd_desc_q <= tk_desc;
      c2_v <= c1_v;
      c2_stale <= stale_ev;  // stage 1 read the table and the threshold of this cycle
      thresh_q <= rndv_thresh_i;
    end
  end

  // ------------------------------------------------------------ command queue
  // LUT RAM, written by stage 2, read by the packetizer at cq_rp and by the reader (its
  // fields in a RAM of their own) at rq_ptr. An entry is free once both have passed it.
  cmd_t cq_mem [CqDepth];
  logic [63:0] rqm_src [CqDepth];
  logic [31:0] rqm_len [CqDepth];
  logic [17:0] rqm_info [CqDepth];   // {kind, a message from memory, put or copy, rget, raw, dst[11:0]}
  logic [CqW:0] cq_wp_q, cq_rp_q, cq_rp_d, rq_ptr_q;
  logic [CqDepth-1:0] cq_stale_q;
  logic [CqW:0] cq_cnt, rq_lag;
  cmd_t cq_head;
  // A command's kind, FIFO and slot count are kept apart from the rest (the proof of
  // the ring pointers states that every queued message's count is inside its ring).
  logic [1:0] cq_kind_m [CqDepth];
  logic [FifoW-1:0] cq_fifo_m [CqDepth];
  logic [7:0] cq_slots_m [CqDepth];
  always_comb begin
    cq_head = cq_mem[cq_rp_q[CqW-1:0]];
    cq_head.kind = cq_kind_m[cq_rp_q[CqW-1:0]];
    cq_head.fifo = cq_fifo_m[cq_rp_q[CqW-1:0]];
    cq_head.slots = cq_slots_m[cq_rp_q[CqW-1:0]];
  end
  // The reader may stand on the entry the packetizer took last (its reads going on).
  assign rq_lag = cq_rp_q - rq_ptr_q;
  assign cq_cnt = cq_wp_q - ((rq_lag != '0 && !rq_lag[CqW]) ? rq_ptr_q : cq_rp_q);
  // Room for the two tokens on their way through the checker and one more, seen a cycle
  // late (a register: the walker's decisions start at flip-flops).
  logic credit_q;
  assign credit = credit_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) credit_q <= 1'b0;
    else credit_q <= cq_cnt <= (CqW+1)'(CqDepth - 4);
  end
  always_ff @(posedge clk_i) begin
    if (c2_v) begin
      cq_mem[cq_wp_q[CqW-1:0]] <= c2_cmd;
      cq_kind_m[cq_wp_q[CqW-1:0]] <= c2_cmd.kind;
      cq_fifo_m[cq_wp_q[CqW-1:0]] <= c2_cmd.fifo;
      cq_slots_m[cq_wp_q[CqW-1:0]] <= c2_cmd.slots;
      rqm_src[cq_wp_q[CqW-1:0]] <= c2_cmd.src;
      rqm_len[cq_wp_q[CqW-1:0]] <= c2_cmd.len;
      rqm_info[cq_wp_q[CqW-1:0]] <= {c2_cmd.kind, c2_cmd.kind == KMsg && c2_cmd.from_mem,
                                     c2_cmd.put || c2_cmd.copy, c2_cmd.rget, c2_cmd.raw, c2_dst[11:0]};
    end
  end
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      cq_wp_q <= '0;
      cq_stale_q <= '0;
    end else begin
      if (c2_v) cq_wp_q <= cq_wp_q + (CqW+1)'(1);
      for (int i = 0; i < CqDepth; i++) begin
        if (stale_ev) cq_stale_q[i] <= 1'b1;
        else if (c2_v && cq_wp_q[CqW-1:0] == CqW'(i)) cq_stale_q[i] <= c2_stale;
      end
    end
  end

  // ------------------------------------------------------------ reader
  // Issues the data reads of the queued messages from memory in order, a read per
  // region, sized as the packets will be (a packet's data is one read). It passes a
  // message that needs no read, and stops at an error or a turn's end until the
  // packetizer has taken it (a turn's reads are all its own, so a dropped turn's
  // regions are all drained), and at a stale message (the packetizer drops its turn).
  // The next read's size is formed over two registered steps before it: the distances
  // to the pages' ends and to the message's end, then the least of them.
  logic [1:0] rq_kind;
  logic rq_mem, rq_at_dst, rq_rget, rq_raw, rq_in, rq_ck_q, rq_ck1_q, rq_pass, rq_behind;
  logic rq_more_q;  // the entry is a message from memory with reads still to issue
  logic rq_stale_q; // its stale mark unless the packetizer has taken it, a cycle late (a
                    // read issued for it then is drained)
  logic rq_raw1_q, rq_at_dst1_q;
  logic [12:0] rq_lim1_q, rq_pgd1_q, rq_pgs1_q, rq_len1_q;
  logic [31:0] rq_rest1_q;
  logic [11:0] rq_dst_pg;
  logic [31:0] rq_len;
  assign {rq_kind, rq_mem, rq_at_dst, rq_rget, rq_raw, rq_dst_pg} = rqm_info[rq_ptr_q[CqW-1:0]];
  assign rq_len = rqm_len[rq_ptr_q[CqW-1:0]];
  assign rq_src = rqm_src[rq_ptr_q[CqW-1:0]];
  assign rq_in = rq_ptr_q != cq_wp_q;
  assign rq_behind = rq_lag != '0 && !rq_lag[CqW];  // the packetizer has taken this entry
  // From registers: rq_more_q and rq_stale_q were formed in the cycle before from an
  // entry that has not changed since (rq_ck_q).
  assign d_want = rq_ck_q && rq_more_q && !p_flush_q &&
                  !rq_stale_q && d_room_q;
  // Passed: a message whose reads are all issued, regions passed, and (once taken) the rest.
  assign rq_pass = rq_in && ((rq_kind == KMsg && !cq_stale_q[rq_ptr_q[CqW-1:0]] &&
                              (!rq_mem || rq_dfo_q == rq_len)) ||
                             rq_kind == KRel || rq_behind);
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rq_ptr_q <= '0;
      rq_dfo_q <= '0;
      rq_ck1_q <= 1'b0;
      rq_ck_q <= 1'b0;
      rq_chunk_q <= '0;
    end else begin
      // The entry was there when the step was formed, from what the step before had.
      rq_ck1_q <= rq_in;
      rq_ck_q <= rq_ck1_q;
      rq_chunk_q <= chunk_min(rq_raw1_q, rq_at_dst1_q, rq_lim1_q, rq_pgd1_q, rq_pgs1_q, rq_rest1_q, rq_len1_q);
      if (d_issue) begin
        rq_dfo_q <= rq_dfo_q + 32'(rq_chunk_q);
        rq_ck1_q <= 1'b0;
        rq_ck_q <= 1'b0;
      end
      if (p_flush_q) begin
        // Back to the packetizer's entry: the one it takes as the flush ends is read for.
        rq_ptr_q <= cq_rp_q;
        rq_dfo_q <= '0;
        rq_ck1_q <= 1'b0;
        rq_ck_q <= 1'b0;
      end else if (rq_pass && !(rq_behind && rq_kind == KMsg && rq_mem && rq_dfo_q != rq_len) &&
                   !d_issue) begin
        rq_ptr_q <= rq_ptr_q + (CqW+1)'(1);
        rq_dfo_q <= '0;
        rq_ck1_q <= 1'b0;
        rq_ck_q <= 1'b0;
      end
    end
  end

  always_ff @(posedge clk_i) begin
    rq_more_q <= rq_in && rq_kind == KMsg && rq_mem && rq_dfo_q != rq_len;
    rq_stale_q <= cq_stale_q[rq_ptr_q[CqW-1:0]] && !rq_behind;
    rq_raw1_q <= rq_raw;
    rq_at_dst1_q <= rq_at_dst;
    rq_lim1_q <= rq_rget ? 13'(SlotBytes) : rq_at_dst ? 13'(MaxPayload) : 13'(MaxPayload - 64);
    rq_pgd1_q <= to_page_end(rq_dst_pg, rq_dfo_q[11:0]);
    rq_pgs1_q <= to_page_end(rq_src[11:0], rq_dfo_q[11:0]);
    rq_rest1_q <= rq_len - rq_dfo_q;
    rq_len1_q <= rq_len[12:0];
  end

  // ------------------------------------------------------------ packetizer
  typedef enum logic [2:0] {PIdle, PStart, PHdr, PBeats, PErr} pstate_e;
  pstate_e ps_q, ps_d;
  cmd_t pc_q, pc_d;                       // the command being served
  logic pc_stale_q, pc_stale_d;
  logic p_flush_d;
  logic [FifoW-1:0] p_flush_fifo_d;
  logic [31:0] po_q, po_d;                // offset of the packet being sent
  logic [12:0] chunk_q, chunk_d, chunk_nx, nx_pgd_q;
  // Inline data and an RTS: the next packet's size is formed from registers in two
  // steps, the second at the packet's end: the message's bytes from this packet on
  // (pk_rest_q) and the destination's page offset of this packet (pk_dpg_q) are kept,
  // the distances for the next packet registered in each cycle of a packet (a packet
  // that has a next one has two beats at least).
  logic [31:0] pk_rest_q, pk_rest_d, nx_rest_q;
  logic [11:0] pk_dpg_q, pk_dpg_d;
  logic [RbW-1:0] db_q, db_d;             // beat in the head data region
  logic [9:0] ob_q, ob_d;                 // beat of the packet being sent
  logic [DataW-1:0] prev_q, prev_d;       // data beat before the current one
  logic [3:0] perr_q, perr_d;             // error code going to PErr
  logic stomp_q, stomp_d;                 // a read failed under a packet under way: end it stomped
  logic hdr_pend_q, hdr_pend_d;           // the packet's header is offered (with its first beats)
  logic offered_q;
  // Its position in the slot regions (inline data, an RTS's descriptor).
  logic [SqW-1:0] pp_seq_q, pp_seq_d;
  logic [RsW-1:0] pp_slot_q, pp_slot_d;
  logic [SbW-1:0] pp_beat_q, pp_beat_d;
  logic [RegW-1:0] p_reg, d_reg, next_reg;
  logic [RbW-1:0] p_rbeat, p_rbeat_d;
  logic p_have, p_avail, p_bad, d_avail, d_bad, p_src_inl;
  assign p_reg = RegW'(pp_seq_q[SW-1:0]);
  assign p_have = pp_seq_q != s_alloc_q;
  assign p_rbeat = RbW'(pp_slot_q) * RbW'(SlotBeats) + RbW'(pp_beat_q);
  assign p_avail = p_have && p_rbeat < wbeats_q[p_reg];
  assign p_bad = p_have && rerr_q[p_reg];
  assign d_reg = d_reg_of(d_head_q);
  assign next_reg = d_reg_of(d_head_q + DW'(1));
  assign d_avail = d_cnt_q != '0 && db_q < wbeats_q[d_reg];
  assign d_bad = d_cnt_q != '0 && rerr_q[d_reg];
  assign p_src_inl = pc_q.inl || pc_q.rts;

  // The packet: its bytes are hdr_bytes of header (TLP header, entry header) then data.
  // A packet of data from memory carries its read's bytes. Its size (chunk_q) is loaded
  // as it is started (inline data: formed ahead; from memory: its region's read), and
  // its shape with it, in registers: its bytes, its last beat, the end of its data
  // beats, the lanes of its last beat, and whether it ends the message.
  logic [31:0] m_len;   // bytes of what is sent: the message, or the RTS
  logic [13:0] pkt_bytes_q;
  logic [9:0] pkt_last_q, src_end_q;
  logic [KeepW-1:0] keep_last_q;
  localparam int unsigned BpbLg = $clog2(Bpb);
  logic [13:0] pkt_bytes_d;      // the bytes of the packet loaded
  logic [BpbLg-1:0] last_lanes;  // ... in its last beat, mod Bpb
  assign pkt_bytes_d = 14'(hdr_bytes) + 14'(chunk_d);
  assign last_lanes = pkt_bytes_d[BpbLg-1:0];
  logic [5:0] hdr_m1;
  assign hdr_m1 = hdr_bytes - 6'd1;
  logic msg_last_q, msg_last_d;
  // Whether the packet loaded ends the message (its bytes are all that is left), formed
  // for each place a size is loaded beside the decision that loads it: a message's
  // first packet, a packet from memory whose data has come, the packet after this one.
  logic last_at_start, last_at_hdr, last_at_next;
  assign last_at_start = m_len == 32'(pc_q.chunk0);
  assign last_at_hdr = pk_rest_q == 32'(rq_bytes_q[d_reg]);
  logic [12:0] chunk_next;  // the size of the packet after this one
  assign chunk_next = pc_q.from_mem ? rq_bytes_q[next_reg] : chunk_nx;
  assign last_at_next = nx_rest_q == 32'(chunk_next);
  assign m_len = pc_q.rts ? 32'(RtsBytes) : pc_q.len;
  assign chunk_nx = chunk_min(pc_q.raw, pc_q.put || pc_q.copy,
                              pc_q.rget ? 13'(SlotBytes) : (pc_q.put || pc_q.copy) ? 13'(MaxPayload) : 13'(MaxPayload - 64),
                              nx_pgd_q, 13'd4096, nx_rest_q, pc_q.len[12:0]);
  logic [255:0] hb;
  logic [5:0] hdr_bytes;
  logic [9:0] q_beats;
  logic [9:0] len_dw;
  logic [63:0] tlp_addr;
  logic [10:0] raw_words;  // a raw packet's PktLen: LRH, RWH and data, no ICRC
  assign raw_words = 11'(pkt_bytes_q >> 2);
  assign hdr_bytes = pc_q.raw ? 6'(ni_pkg::RawHdrBytes) : pc_q.send ? 6'd32 : 6'd16;
  assign q_beats = 10'(32'(hdr_bytes) / Bpb);  // header-only beats
  assign len_dw = 10'((14'(chunk_q) + (pc_q.send ? 14'd16 : 14'd0)) >> 2);
  assign tlp_addr = (pc_q.put || pc_q.copy) ? pc_q.dst + 64'(po_q) : 64'h0;
  always_comb begin
    hb = '0;
    hb[0 +: 128] = ni_pkg::mem_req_header(ni_pkg::TLP_MWR64, len_dw, NiReqId, 8'h00, tlp_addr);
    // Entry header of a memory-FIFO packet (lands in the reception FIFO as is).
    hb[16 * 8 +: 128] = ni_pkg::entry_header(node_id_i, 16'(chunk_q), pc_q.len, pc_q.rts ? RtsMark : po_q,
                                             pc_q.tag);
    // A raw packet: LRH (next header raw, VL/SL 0, PktLen up to the VCRC) and RWH.
    if (pc_q.raw) begin
      hb = '0;
      hb[0 +: 64] = ni_pkg::lrh(1'b0, ni_pkg::LnhRaw, pc_q.dest, raw_words, node_id_i);
      hb[10 * 8 +: 8] = pc_q.qid[15:8];
      hb[11 * 8 +: 8] = pc_q.qid[7:0];
    end
  end

  always_comb begin
    logic [7:0] flags;
    logic [10:0] words;
    flags = ni_pkg::TEH_DMA | (pc_q.put ? ni_pkg::TEH_RX_XLATE : pc_q.rget ? ni_pkg::TEH_RGET : ni_pkg::TEH_RFIFO) |
            (pc_q.rcnt_teh ? ni_pkg::TEH_RCNT : 8'h00);
    words = 11'((14'(ni_pkg::FabHdrBytes) + pkt_bytes_q + 14'd4) >> 2);
    out_hdr_o = '0;
    out_hdr_o.kind = ni_pkg::TX_REQ;
    out_hdr_o.dlid = pc_q.dest;
    out_hdr_o.pkt_words = words;
    out_hdr_o.stamp_psn = 1'b1;
    out_hdr_o.flags = flags;
    out_hdr_o.aux8 = pc_q.rcnt_teh ? pc_q.rcnt : 8'h00;
    out_hdr_o.memid = pc_q.qid;
    if (pc_q.put || pc_q.send) out_hdr_o.key = pc_q.key;  // TEH bytes 24-25: the key the target checks
    if (pc_q.raw) begin  // LRH and RWH travel in the beats (hb); the framer sends them as they are
      out_hdr_o.kind = ni_pkg::TX_RAW;
      out_hdr_o.stamp_psn = 1'b0;
      out_hdr_o.pkt_words = raw_words;
    end
  end
  assign out_hdr_valid_o = ps_q == PBeats && hdr_pend_q && !pc_q.copy && !pc_q.raw;
  assign raw_hdr_valid_o = ps_q == PBeats && hdr_pend_q && pc_q.raw;

  // Output beat ob_q: header bytes, then data shifted up by hdr_bytes % Bpb lanes.
  logic need_src, src_avail, src_bad, last_beat;
  // Data of the packet after this one at hand: inline (in the slot stream), or its
  // data region written from its first beat without an error.
  logic next_ready;
  assign next_ready = !pc_q.from_mem || (d_cnt_q > (DW+1)'(1) && wbeats_q[next_reg] != '0 && !rerr_q[next_reg]);
  logic [DataW-1:0] src_beat, hdr_beat, obeat;
  logic [KeepW-1:0] okeep;
  // The header takes at most 32 bytes, HdrBeats beats; the data moves up by one of three
  // fixed amounts (the TLP header, a send's two headers, a raw packet's LRH and RWH):
  // multiplexers of fixed selections, not shifters.
  localparam int unsigned HdrBeats = (32 + Bpb - 1) / Bpb;
  localparam int unsigned ShTlp = 16 % Bpb, ShSend = 32 % Bpb, ShRaw = ni_pkg::RawHdrBytes % Bpb;
  logic [DataW-1:0] src_up, prev_down;
  always_comb begin
    src_up = pc_q.raw ? src_beat << (8 * ShRaw) : pc_q.send ? src_beat << (8 * ShSend) : src_beat << (8 * ShTlp);
    prev_down = '0;
    if (pc_q.raw && ShRaw != 0) prev_down = prev_q >> (8 * (Bpb - ShRaw));
    if (!pc_q.raw && pc_q.send && ShSend != 0) prev_down = prev_q >> (8 * (Bpb - ShSend));
    if (!pc_q.raw && !pc_q.send && ShTlp != 0) prev_down = prev_q >> (8 * (Bpb - ShTlp));
  end
  assign need_src = ob_q + 10'd1 > q_beats && ob_q < src_end_q;  // ob_q >= q_beats
  // An RTS's data is its descriptor, read again from the slot region (its beats were
  // all there when the walker read them).
  assign src_avail = p_src_inl ? p_avail : d_avail;
  assign src_bad = pc_q.inl ? p_bad : !pc_q.rts && d_bad;
  assign src_beat = p_src_inl ? p_rdata : d_rdata;
  assign last_beat = ob_q == pkt_last_q;
  always_comb begin
    hdr_beat = '0;
    for (int j = 0; j < HdrBeats; j++) begin
      if (ob_q == 10'(j)) begin
        for (int l = 0; l < Bpb; l++) begin
          if (j * Bpb + l < 32 && 32'(j * Bpb + l) < 32'(hdr_bytes)) hdr_beat[l * 8 +: 8] = hb[(j * Bpb + l) * 8 +: 8];
        end
      end
    end
    obeat = hdr_beat;
    if (ob_q + 10'd1 > q_beats) begin
      if (need_src) obeat = obeat | src_up;
      if (ob_q > q_beats) obeat = obeat | prev_down;
    end
    okeep = '1;
    if (last_beat) okeep = keep_last_q;
  end
  // A local copy's beats go to the host port, a raw packet's to the framer, the others
  // toward the request path.
  logic beat_valid, beat_take, src_done, src_stop;
  // The source's read failed (its region is done with an error): the packet goes on as
  // filler (stomp). Its data may be there (a completion marked bad still writes its
  // beats), so a beat offered before the failure was known is still taken as it was
  // offered (offered_q: AXI4-Stream), and the stomp starts at the next; the last beat of
  // a packet of data from memory waits until its read is done, so that no such packet
  // ends unstomped on data of a read that failed (its region holds that packet's data
  // only; inline data shares a slot read with the slots after it).
  assign src_done = p_src_inl ? rdone[p_reg] : rdone[d_reg];
  assign src_stop = need_src && src_bad && src_done && !offered_q;
  assign beat_valid = ps_q == PBeats &&
                      (stomp_q || !need_src ||
                       (src_avail && !src_stop && (!last_beat || p_src_inl || src_done || offered_q)));
  assign beat_take = beat_valid && (pc_q.copy ? loc_beat_ready_i : pc_q.raw ? raw_beat_ready_i : out_beat_ready_i);
  assign out_beat_o = {stomp_q && last_beat, last_beat, okeep, obeat};
  assign out_beat_valid_o = beat_valid && !pc_q.copy && !pc_q.raw;
  assign raw_beat_valid_o = beat_valid && pc_q.raw;
  assign loc_beat_o = out_beat_o;
  assign loc_beat_valid_o = beat_valid && pc_q.copy;

  always_comb begin
    logic p_adv;           // the slot-region position moves a beat
    logic start_next;      // take the next command in this cycle
    ps_d = ps_q;
    pc_d = pc_q;
    pc_stale_d = pc_stale_q || stale_ev;
    p_flush_d = p_flush_q;
    p_flush_fifo_d = p_flush_fifo_q;
    po_d = po_q;
    chunk_d = chunk_q;
    pk_rest_d = pk_rest_q;
    msg_last_d = msg_last_q;
    pk_dpg_d = pk_dpg_q;
    db_d = db_q;
    ob_d = ob_q;
    prev_d = prev_q;
    perr_d = perr_q;
    stomp_d = stomp_q;
    hdr_pend_d = hdr_pend_q;
    pp_seq_d = pp_seq_q;
    pp_slot_d = pp_slot_q;
    pp_beat_d = pp_beat_q;
    rel_d = rel_q;
    cq_rp_d = cq_rp_q;
    d_pop = 1'b0;
    p_head_we = 1'b0;
    p_err_we = 1'b0;
    p_turn_clr = 1'b0;
    p_fifo = pc_q.fifo;
    // The message began at the head: the head passes its slots.
    p_head_val = ring_add(head_q[pc_q.fifo], 16'(pc_q.slots), size_q[pc_q.fifo]);
    p_err_code = perr_q;
    p_need = pc_q.aux;
    ev_err = '0;
    inj_cnt_valid_o = 1'b0;
    inj_cnt_id_o = pc_q.icnt;
    inj_cnt_bytes_o = chunk_q;
    loc_cnt_valid_o = 1'b0;
    loc_cnt_id_o = pc_q.rcnt[CntW-1:0];
    loc_cnt_bytes_o = chunk_q;
    ev_rts_o = 1'b0;
    p_adv = 1'b0;
    start_next = 1'b0;

    unique case (ps_q)
      PIdle: start_next = 1'b1;
      PStart: begin
        start_next = 1'b1;
        unique case (pc_q.kind)
          KRel: rel_d = pc_q.seq;
          KTend: begin
            // The end of a turn: once a dropped turn's data regions are drained.
            if (p_flush_q && d_cnt_q != '0) begin
              start_next = 1'b0;
            end else begin
              p_flush_d = 1'b0;
              p_turn_clr = 1'b1;
              rel_d = pc_q.seq;
            end
          end
          KErr: begin
            if (!p_flush_q) begin
              p_err_we = 1'b1;
              p_err_code = pc_q.aux[3:0];
              ev_err[pc_q.fifo] = 1'b1;
              p_flush_d = 1'b1;
              p_flush_fifo_d = pc_q.fifo;
            end
          end
          default: begin  // KMsg
            if (p_flush_q) begin
              // Dropped with its turn.
            end else if (stopped[pc_q.fifo] || pc_stale_q) begin
              // The FIFO stopped, or a memory ID or the threshold changed since the
              // message was checked: the turn ends before it, and the FIFO's next
              // turn reads it again.
              p_flush_d = 1'b1;
              p_flush_fifo_d = pc_q.fifo;
            end else begin
              start_next = 1'b0;
              rel_d = pc_q.seq;
              po_d = '0;
              chunk_d = pc_q.chunk0;
              pk_rest_d = m_len;
              msg_last_d = last_at_start;
              pk_dpg_d = pc_q.dst[11:0];
              db_d = '0;
              ob_d = '0;
              hdr_pend_d = !pc_q.copy;
              // Inline data starts at the slot after the descriptor's; an RTS's data is
              // the descriptor.
              pp_seq_d = pc_q.seq;
              pp_slot_d = pc_q.slot;
              pp_beat_d = '0;
              if (pc_q.inl) begin
                if (pc_q.slot + RsW'(1) == nslots_q[pc_q.seq[SW-1:0]]) begin
                  pp_seq_d = pc_q.seq + SqW'(1);
                  pp_slot_d = '0;
                end else begin
                  pp_slot_d = pc_q.slot + RsW'(1);
                end
              end
              ps_d = pc_q.from_mem ? PHdr : PBeats;
            end
          end
        endcase
      end
      PHdr: begin
        // Data from memory: the header waits for the packet's first data beat, so a
        // refused read (a completion without data) stops the FIFO before the packet starts.
        chunk_d = rq_bytes_q[d_reg];
        msg_last_d = last_at_hdr;
        if (d_bad && rdone[d_reg]) begin
          perr_d = ErrMem;
          ps_d = PErr;
        end else if (d_avail && !d_bad) begin
          ob_d = '0;
          hdr_pend_d = !pc_q.copy;
          ps_d = PBeats;
        end
      end
      PBeats: begin
        // The header and the first beats are offered together (ni_retx takes a packet's
        // header with its first beat); a beat never passes before its header.
        if ((out_hdr_valid_o && out_hdr_ready_i) || (raw_hdr_valid_o && raw_hdr_ready_i)) hdr_pend_d = 1'b0;
        if (!stomp_q && src_stop) begin
          stomp_d = 1'b1;  // the rest of the packet goes out as filler, its ICRC stomped
        end else if (beat_take) begin
          ob_d = ob_q + 10'd1;
          if (stomp_q) begin
            if (last_beat) begin
              stomp_d = 1'b0;
              perr_d = ErrMem;
              ps_d = PErr;
            end
          end else if (need_src) begin
            prev_d = src_beat;
            if (p_src_inl) p_adv = 1'b1;
            else db_d = db_q + RbW'(1);
          end
          if (last_beat && !stomp_q) begin
            inj_cnt_valid_o = pc_q.icnt_en;
            loc_cnt_valid_o = pc_q.loc_rcnt;
            ev_rts_o = pc_q.rts;
            po_d = po_q + 32'(chunk_q);
            chunk_d = chunk_next;
            pk_rest_d = nx_rest_q;
            msg_last_d = last_at_next;
            pk_dpg_d = pk_dpg_q + chunk_q[11:0];
            if (pc_q.from_mem) begin
              // The packet's data region is used up.
              d_pop = 1'b1;
              db_d = '0;
            end
            if (msg_last_q) begin
              // The message is sent: the head passes it.
              p_head_we = 1'b1;
              start_next = 1'b1;
              ps_d = PIdle;
            end else if (next_ready) begin
              ob_d = '0;
              hdr_pend_d = !pc_q.copy;
            end else begin
              ps_d = PHdr;
            end
          end
        end
      end
      PErr: begin
        p_err_we = 1'b1;
        p_err_code = perr_q;
        ev_err[pc_q.fifo] = 1'b1;
        p_flush_d = 1'b1;
        p_flush_fifo_d = pc_q.fifo;
        start_next = 1'b1;
        ps_d = PIdle;
      end
      default: ps_d = PIdle;
    endcase

    // A dropped turn's data regions are freed once their reads have arrived.
    if (p_flush_q && ps_q != PHdr && ps_q != PBeats && d_cnt_q != '0 && rdone[d_reg]) d_pop = 1'b1;

    // The next command: taken as the last one is done.
    if (start_next) begin
      if (cq_rp_q != cq_wp_q) begin
        pc_d = cq_head;
        pc_stale_d = cq_stale_q[cq_rp_q[CqW-1:0]] || stale_ev;
        cq_rp_d = cq_rp_q + (CqW+1)'(1);
        ps_d = PStart;
      end else begin
        ps_d = PIdle;
      end
    end

    // Slot-region position: the next beat, or the start of the next slot; a region left
    // behind may be freed.
    if (p_adv) begin
      if (32'(pp_beat_q) == SlotBeats - 1) begin
        pp_beat_d = '0;
        if (pp_slot_q + RsW'(1) == nslots_q[p_reg[SW-1:0]]) begin
          pp_slot_d = '0;
          pp_seq_d = pp_seq_q + SqW'(1);
          rel_d = pp_seq_q + SqW'(1);
        end else begin
          pp_slot_d = pp_slot_q + RsW'(1);
        end
      end else begin
        pp_beat_d = pp_beat_q + SbW'(1);
      end
    end
  end
  assign p_rbeat_d = RbW'(pp_slot_d) * RbW'(SlotBeats) + RbW'(pp_beat_d);
  assign p_raddr_d = HalfW'(pp_seq_d[SW-1:0]) * HalfW'(RegBeats) + HalfW'(p_rbeat_d);
  assign d_raddr_d = HalfW'(d_head_d) * HalfW'(RegBeats) + HalfW'(db_d);

  // ------------------------------------------------------------ ring state
  always_comb begin
    logic bad_bell;  // a doorbell outside the ring, or of a remote-fed FIFO
    bad_bell = 1'b0;
    head_d = head_q;
    tail_d = tail_q;
    err_d = err_q;
    code_d = code_q;
    rst_pend_d = rst_pend_q | reset_i;
    ev_err_o = ev_err;
    if (p_head_we) head_d[p_fifo] = p_head_val;
    if (p_err_we) begin
      err_d[p_fifo] = 1'b1;
      code_d[p_fifo] = p_err_code;
    end
    // Doorbells: a tail outside the ring, or any doorbell of a remote-fed FIFO, stops
    // the FIFO and is not taken. A remote-fed FIFO's tail moves by the receiver's pushes.
    // A FIFO enabled with its head or tail outside its ring stops the same way.
    // All against the size in use (a register: a size written reaches it the cycle
    // after INJ_SIZE's register, before a doorbell written after it acts).
    // A reset applies once the engine is not serving that FIFO, in the cycle after it
    // arrived at the earliest. It empties the ring at the tail, or at slot 0 if the tail
    // lies outside the ring (its size was made smaller): a head outside the ring would
    // read beyond it.
    for (int i = 0; i < NumFifos; i++) begin
      bad_bell = tail_we_i[i] && (tail_i >= size_q[i] || remote_i[i]);
      if (push_i[i]) tail_d[i] = ring_add(tail_q[i], 16'd1, size_q[i]);
      if (tail_we_i[i] && !bad_bell) tail_d[i] = tail_i;
      if (bad_bell || ring_bad[i]) begin
        err_d[i] = 1'b1;
        code_d[i] = ErrTail;
        ev_err_o[i] = 1'b1;
      end
      if (rst_pend_q[i] && !turn_q[i]) begin
        rst_pend_d[i] = 1'b0;  // a reset arriving now is the same one
        if (tail_out[i] && !(tail_we_i[i] && !bad_bell)) tail_d[i] = '0;
        head_d[i] = tail_d[i];
        err_d[i] = 1'b0;
        code_d[i] = 4'd0;
      end
    end
  end
  for (genvar i = 0; i < NumFifos; i++) begin : gen_work
    assign stopped[i] = err_q[i] || !enable_i[i] || rst_pend_q[i];
    // A ring of size 0 holds nothing (every doorbell is outside it). A reset arriving
    // puts the pointers back in the ring.
    assign tail_out[i] = tail_q[i] >= size_q[i];
    assign ring_bad[i] = !stopped[i] && !reset_i[i] && (size_q[i] == '0 ? head_q[i] != tail_q[i]
                                                         : head_q[i] >= size_q[i] || tail_out[i]);
    assign has_work[i] = !stopped[i] && !ring_bad[i] && head_q[i] != tail_q[i];
    // A FIFO picked in the cycle before keeps its size too: its turn may start now.
    assign size_d[i] = (!turn_q[i] && !(pick[FifoW] && next == FifoW'(i)) &&
                        (!enable_i[i] || head_q[i] == tail_q[i])) ? size_i[i] : size_q[i];
  end

  // ------------------------------------------------------------ regions
  // Reads issued take a region; completions fill it; the packetizer frees data regions
  // and, up to rel_q, slot regions that the walker has passed and whose reads have all
  // arrived (one a cycle).
  logic s_free;
  assign s_free = s_head_q != rel_q && s_head_q != w_seq_q && s_cnt != '0 &&
                  rdone[RegW'(s_head_q[SW-1:0])];
  // What the packetizer frees the walker has passed (the walker's check above never
  // holds a region back).
  `NI_ASSERT(DmaFreeBehindWalker_A, !(s_head_q != rel_q && s_head_q == w_seq_q && s_cnt != '0))
  always_comb begin
    rq_bytes_d = rq_bytes_q;
    rem_d = rem_q;
    done_d = done_q;
    wbeats_d = wbeats_q;
    rerr_d = rerr_q;
    nslots_d = nslots_q;
    rfifo_d = rfifo_q;
    rfirst_d = rfirst_q;
    s_alloc_d = s_alloc_q;
    s_head_d = s_head_q;
    d_alloc_d = d_alloc_q;
    d_head_d = d_head_q;
    d_cnt_d = d_cnt_q;
    if (w_clr_first) rfirst_d[w_reg[SW-1:0]] = 1'b0;
    if (s_issue) begin
      rq_bytes_d[s_reg] = 13'(s_nslots) * 13'(SlotBytes);
      rem_d[s_reg] = 13'(s_nslots) * 13'(SlotBytes);
      done_d[s_reg] = 1'b0;
      wbeats_d[s_reg] = '0;
      rerr_d[s_reg] = 1'b0;
      nslots_d[s_alloc_q[SW-1:0]] = s_nslots;
      rfifo_d[s_alloc_q[SW-1:0]] = f_fifo_q;
      rfirst_d[s_alloc_q[SW-1:0]] = f_first_q;
      s_alloc_d = s_alloc_q + SqW'(1);
    end
    if (d_issue) begin
      rq_bytes_d[d_reg_take] = rq_chunk_q;
      rem_d[d_reg_take] = rq_chunk_q;
      done_d[d_reg_take] = 1'b0;
      wbeats_d[d_reg_take] = '0;
      rerr_d[d_reg_take] = 1'b0;
      d_alloc_d = d_alloc_q + DW'(1);
    end
    if (d_pop) d_head_d = d_head_q + DW'(1);
    // The count's next values are formed beside the decisions, which only choose one.
    if (d_issue && !d_pop) d_cnt_d = d_cnt_inc;
    if (d_pop && !d_issue) d_cnt_d = d_cnt_dec;
    if (s_free) s_head_d = s_head_q + SqW'(1);
    // Completions: the data of beat j (after the 12 header bytes) goes to region beat
    // j - CplHdrBeats - 1, made of this beat's low lanes and the previous beat's high
    // lanes; what is left in the last beat is written in one more cycle. (A region
    // being written is in use: never the one a read issued in this cycle takes.)
    if ((c_flush_q && c_acc_q) || (c_take && c_acc_q && 32'(c_beat_q) > CplHdrBeats)) begin
      wbeats_d[c_reg_q] = wbeats_q[c_reg_q] + RbW'(1);
    end
    if (c_fin) begin
      rem_d[c_reg_q] = rem_q[c_reg_q] - c_len_q;
      if (rem_q[c_reg_q] == c_len_q) done_d[c_reg_q] = 1'b1;
      // A malformed completion (marked bad) fails its read as an error status does.
      if (c_status_q != ni_pkg::CPL_SC || (c_end_q ? c_bad_q : s_cpl_tuser)) begin
        rerr_d[c_reg_q] = 1'b1;
        done_d[c_reg_q] = 1'b1;
      end
    end
  end

  // Completion intake registers.
  // Region beats written by a completion up to and including this beat.
  logic [31:0] c_written;
  assign c_written = (32'(c_beat_q) > CplHdrBeats) ? 32'(c_beat_q) - CplHdrBeats : 32'd0;
  always_comb begin
    c_beat_d = c_beat_q;
    c_reg_d = c_reg_q;
    c_status_d = c_status;
    c_len_d = c_len;
    c_prev_d = c_prev_q;
    c_flush_d = 1'b0;
    c_end_d = 1'b0;
    c_bad_d = c_bad_q;
    c_acc_d = c_acc_q;
    c_wb_d = c_wb_q;
    ram_we = 1'b0;
    ram_waddr = RamW'(c_reg_q) * RamW'(RegBeats) + RamW'(c_wb_q);
    ram_wdata = (c_prev_q >> (8 * CplSkip)) | (s_cpl_tdata << (8 * (Bpb - CplSkip)));
    if (c_flush_q) begin
      ram_we = c_acc_q;
      ram_wdata = c_prev_q >> (8 * CplSkip);
    end else if (c_take) begin
      if (c_at_tag) begin
        c_acc_d = c_known && c_fits;
        c_reg_d = c_tag_reg;
        // Where its data goes: after the bytes arrived (asked for less those missing).
        c_wb_d = RbW'((rq_bytes_q[c_tag_reg] - rem_q[c_tag_reg]) / 13'(Bpb));
      end
      if (32'(c_beat_q) > CplHdrBeats) begin
        ram_we = c_acc_q;
        c_wb_d = c_wb_q + RbW'(1);
      end
      c_prev_d = s_cpl_tdata;
      c_beat_d = c_beat_q + CbW'(1);
      if (s_cpl_tlast) begin
        c_beat_d = '0;
        // Data bytes still in this beat's upper lanes: one more write.
        c_flush_d = 32'(c_len) > c_written * Bpb;
        c_end_d = c_at_tag;
        c_bad_d = s_cpl_tuser;
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      head_q <= '0;
      tail_q <= '0;
      size_q <= '0;
      err_q <= '0;
      code_q <= '0;
      rst_pend_q <= '0;
      turn_q <= '0;
      fp_q <= '0;
      need_q <= '0;
      f_on_q <= 1'b0;
      f_fifo_q <= '0;
      f_first_q <= 1'b0;
      f_cnt_q <= '0;
      f_lim_q <= '0;
      rr_q <= '0;
      hold_q <= 1'b0;
      w_st_q <= WIdle;
      w_act_q <= '0;
      w_seq_q <= '0;
      w_slot_q <= '0;
      w_beat_q <= '0;
      w_pos_q <= '0;
      w_npos_q <= '0;
      w_dbeat_q <= '0;
      w_dslots_q <= '0;
      w_go_q <= 1'b0;
      ps_q <= PIdle;
      pc_q <= '0;
      pc_stale_q <= 1'b0;
      p_flush_q <= 1'b0;
      p_flush_fifo_q <= '0;
      cq_rp_q <= '0;
      po_q <= '0;
      chunk_q <= '0;
      pk_rest_q <= '0;
      pk_dpg_q <= '0;
      db_q <= '0;
      ob_q <= '0;
      perr_q <= '0;
      stomp_q <= 1'b0;
      offered_q <= 1'b0;
      hdr_pend_q <= 1'b0;
      pp_seq_q <= '0;
      pp_slot_q <= '0;
      pp_beat_q <= '0;
      rel_q <= '0;
      rq_bytes_q <= '0;
      rem_q <= '0;
      done_q <= '1;  // no read outstanding: a completion naming it is a stray
      wbeats_q <= '0;
      rerr_q <= '0;
      nslots_q <= '0;
      rfifo_q <= '0;
      rfirst_q <= '0;
      s_alloc_q <= '0;
      s_head_q <= '0;
      d_alloc_q <= '0;
      d_head_q <= '0;
      d_cnt_q <= '0;
      c_beat_q <= '0;
      c_reg_q <= '0;
      c_status_q <= '0;
      c_len_q <= '0;
      c_flush_q <= 1'b0;
      c_end_q <= 1'b0;
      c_bad_q <= 1'b0;
      c_acc_q <= 1'b0;
      c_unexp_q <= 1'b0;
      c_wb_q <= '0;
    end else begin
      head_q <= head_d;
      tail_q <= tail_d;
      size_q <= size_d;
      err_q <= err_d;
      code_q <= code_d;
      rst_pend_q <= rst_pend_d;
      turn_q <= turn_d;
      fp_q <= fp_d;
      need_q <= need_d;
      f_on_q <= f_on_d;
      f_fifo_q <= f_fifo_d;
      f_first_q <= f_first_d;
      f_cnt_q <= f_cnt_d;
      f_lim_q <= f_lim_d;
      rr_q <= rr_d;
      hold_q <= hold_d;
      w_st_q <= w_st_d;
      w_act_q <= w_act_d;
      w_seq_q <= w_seq_d;
      w_slot_q <= w_slot_d;
      w_beat_q <= w_beat_d;
      w_pos_q <= w_pos_d;
      w_npos_q <= w_npos_d;
      w_dbeat_q <= w_dbeat_d;
      w_dslots_q <= w_dslots_d;
      w_go_q <= w_go_d;
      ps_q <= ps_d;
      pc_q <= pc_d;
      pc_stale_q <= pc_stale_d;
      p_flush_q <= p_flush_d;
      p_flush_fifo_q <= p_flush_fifo_d;
      cq_rp_q <= cq_rp_d;
      po_q <= po_d;
      chunk_q <= chunk_d;
      pk_rest_q <= pk_rest_d;
      pk_dpg_q <= pk_dpg_d;
      db_q <= db_d;
      ob_q <= ob_d;
      perr_q <= perr_d;
      stomp_q <= stomp_d;
      offered_q <= beat_valid && !beat_take;
      hdr_pend_q <= hdr_pend_d;
      pp_seq_q <= pp_seq_d;
      pp_slot_q <= pp_slot_d;
      pp_beat_q <= pp_beat_d;
      rel_q <= rel_d;
      rq_bytes_q <= rq_bytes_d;
      rem_q <= rem_d;
      done_q <= done_d;
      wbeats_q <= wbeats_d;
      rerr_q <= rerr_d;
      nslots_q <= nslots_d;
      rfifo_q <= rfifo_d;
      rfirst_q <= rfirst_d;
      s_alloc_q <= s_alloc_d;
      s_head_q <= s_head_d;
      d_alloc_q <= d_alloc_d;
      d_head_q <= d_head_d;
      d_cnt_q <= d_cnt_d;
      c_beat_q <= c_beat_d;
      c_reg_q <= c_reg_d;
      c_status_q <= c_status_d;
      c_len_q <= c_len_d;
      c_flush_q <= c_flush_d;
      c_end_q <= c_end_d;
      c_bad_q <= c_bad_d;
      c_acc_q <= c_acc_d;
      c_unexp_q <= c_take && c_at_tag && !(c_known && c_fits);
      c_wb_q <= c_wb_d;
    end
  end
  // Datapath registers: no reset.
  always_ff @(posedge clk_i) begin
    prev_q <= prev_d;
    c_prev_q <= c_prev_d;
    nx_rest_q <= pk_rest_q - 32'(chunk_q);
    // The shape of the packet whose size is loaded (of the command in pc_q): each one
    // sum of the size and a constant of the command's kind (Bpb is a power of two).
    pkt_bytes_q <= pkt_bytes_d;
    pkt_last_q <= 10'((14'(chunk_d) + 14'(hdr_m1)) >> BpbLg);
    src_end_q <= 10'((14'(chunk_d) + 14'(q_beats * 10'(Bpb)) + 14'(Bpb - 1)) >> BpbLg);
    for (int l = 0; l < Bpb; l++)
      keep_last_q[l] <= last_lanes == '0 || BpbLg'(l) < last_lanes;
    msg_last_q <= msg_last_d;
    nx_pgd_q <= to_page_end(pk_dpg_q, chunk_q[11:0]);
    // The walker's decisions read these a cycle later than they are formed.
    w_room_q <= ring_dist(fp_q[w_act_q], w_pos_q, size_q[w_act_q]);
    w_filled_q <= ring_dist(tail_q[w_act_q], w_pos_q, size_q[w_act_q]);
    if (tkd_desc_q && tkd_dbeat_q == '0) w_slots_q <= w_rdata[16 +: 8];
    // A descriptor never crosses a slot: at its last beat the walker is in its slot.
    if (tk_dlast) begin
      w_dseq_q <= w_seq_q;
      w_dslot_q <= w_slot_q;
    end
  end

  assign head_o = head_q;
  assign tail_o = tail_q;
  assign size_o = size_q;
  assign err_o = err_q;
  assign err_code_o = code_q;
  assign busy_o = turn_q;
  logic unused;
  assign unused = ^{s_cpl_tkeep, d_flags[7:4], pc_q.slots, cp_last[11:0], src_last[11:0]};

  `NI_ASSERT_AXIS_STABLE(DmaHdrStable_A, out_hdr_valid_o, out_hdr_ready_i, out_hdr_o)
  `NI_ASSERT_AXIS_STABLE(DmaBeatStable_A, out_beat_valid_o, out_beat_ready_i, out_beat_o)
  `NI_ASSERT_AXIS_STABLE(DmaLocStable_A, loc_beat_valid_o, loc_beat_ready_i, loc_beat_o)
  `NI_ASSERT_AXIS_STABLE(DmaRawHdrStable_A, raw_hdr_valid_o, raw_hdr_ready_i, out_hdr_o)
  `NI_ASSERT_AXIS_STABLE(DmaRawBeatStable_A, raw_beat_valid_o, raw_beat_ready_i, out_beat_o)
  `NI_ASSERT(DmaRawBeatAfterHdr_A, !(raw_beat_valid_o && raw_beat_ready_i) ||
                                    !hdr_pend_q || (raw_hdr_valid_o && raw_hdr_ready_i))
  `NI_ASSERT(DmaBeatAfterHdr_A, !(out_beat_valid_o && out_beat_ready_i) ||
                                 !hdr_pend_q || (out_hdr_valid_o && out_hdr_ready_i))
  // A turn the fetcher is in is held in turn_q (the walker's: DmaTurnFifo_A).

  `NI_ASSERT(DmaFetchTurnHeld_A, !f_on_q || turn_q[f_fifo_q])
  // The registered views of the counts the read requests use are exact.
  `NI_ASSERT(DmaRoomViews_A, s_nz_q == (s_nslots_q != '0) && s_room_q == (s_cnt < SqW'(NumSReg)) &&
                             d_room_q == (d_cnt_q < (DW+1)'(NumDReg)) &&
                             (!f_on_q || f_load_q || flim_ok_q == (f_cnt_q < f_lim_q)))
  // A turn's head and next slot read lie inside the ring in use.
  `NI_ASSERT(DmaFetchInRing_A, !f_ready || (t_ptr_q < t_size_q && f_head < t_size_q))
  // The registered packet size of inline data is the one for the packet's offset.
  `NI_ASSERT(DmaChunkAhead_A, !(ps_q == PBeats && ob_q != '0 && !pc_q.from_mem) || po_q + 32'(chunk_q) == m_len ||
                              chunk_nx == chunk_at(po_q + 32'(chunk_q), pc_q.put || pc_q.copy, pc_q.rget, 1'b1,
                                                     12'd0, pc_q.dst[11:0], m_len))
  // A completion writes a region in use, never the one a read takes in the same cycle.
  logic c_wr;
  logic [RegW-1:0] c_wr_reg;
  assign c_wr = c_acc_q && (c_flush_q || (c_take && 32'(c_beat_q) > CplHdrBeats));
  assign c_wr_reg = c_reg_q;
  `NI_ASSERT(DmaCplRegionInUse_A, !(c_wr && ((s_issue && c_wr_reg == s_reg) ||
                                             (d_issue && c_wr_reg == d_reg_take))))
  // Between turns no data region is held; a turn ends with none.
  `NI_ASSERT(DmaTendRegions_A, !(ps_q == PStart && pc_q.kind == KTend && !p_flush_q) || d_cnt_q == '0)
  // A message being served takes fewer slots than its ring has (it was checked against
  // the slots filled), so the head it moves to stays in the ring.
  `NI_ASSERT(DmaMsgInRing_A, !((ps_q == PStart && pc_q.kind == KMsg) || ps_q == PHdr || ps_q == PBeats) ||
                             (pc_q.slots != 8'd0 && 16'(pc_q.slots) < size_q[pc_q.fifo]))
  // The walker's turn is held while it walks (checked in simulation).
  `NI_ASSERT(DmaTurnFifo_A, w_st_q == WIdle || turn_q[w_act_q])
  // The chain that carries the ring pointers' proof by induction through the pipeline
  // (make formal, dma_rings; it closes at length 2): a turn is picked and taken only by
  // a FIFO whose ring has a size, and so is a region that opens a turn; the walker's
  // positions (the first is the head) lie inside the ring; so do the descriptor position
  // at checker stage 1 and the slots filled from it at stage 2, which bound a message's
  // slot count; and every queued message's count is inside its ring.
  `NI_ASSERT(DmaFetchSized_A, !f_on_q || size_q[f_fifo_q] != '0)
  `NI_ASSERT(DmaPickSized_A, !pick[FifoW] || size_q[next] != '0)
  logic regions_sized;
  always_comb begin
    regions_sized = 1'b1;
    for (int r = 0; r < NumSReg; r++) begin
      if (rfirst_q[r] && size_q[rfifo_q[r]] == '0) regions_sized = 1'b0;
    end
  end
  `NI_ASSERT(DmaRegionSized_A, regions_sized)
  `NI_ASSERT(DmaWalkInRing_A, w_st_q == WIdle || (w_pos_q < size_q[w_act_q] && w_npos_q < size_q[w_act_q]))
  `NI_ASSERT(DmaCheck1InRing_A, !(c1_v && c1_kind == KMsg) || c1_pos < size_q[c1_fifo])
  `NI_ASSERT(DmaCheck2InRing_A, !(c2_v && c2_kind == KMsg) || c2_filled < size_q[c2_fifo])
  logic [CqW:0] cq_queued;
  logic cq_in_ring;
  assign cq_queued = cq_wp_q - cq_rp_q;
  always_comb begin
    cq_in_ring = 1'b1;
    for (int i = 0; i < CqDepth; i++) begin
      if ({1'b0, CqW'(i) - cq_rp_q[CqW-1:0]} < cq_queued && cq_kind_m[i] == KMsg &&
          !(cq_slots_m[i] != 8'd0 && 16'(cq_slots_m[i]) < size_q[cq_fifo_m[i]])) cq_in_ring = 1'b0;
    end
  end
  `NI_ASSERT(DmaQueuedInRing_A, cq_in_ring)
  `NI_ASSERT_AXIS_STABLE(DmaRdStable_A, rd_valid_o, rd_ready_i, {rd_addr_o, rd_bytes_o, rd_tag_o})
  // A completion taken in is one a region waits for, and never more than it asked for.
  `NI_ASSERT(DmaCplFits_A, !c_fin || c_len_q <= rem_q[c_reg_q])
  // The command queue never overflows.
  `NI_ASSERT(DmaCmdRoom_A, !c2_v || cq_cnt < (CqW+1)'(CqDepth))
endmodule

`default_nettype wire

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
  localparam int unsigned NumSReg = 8;           // regions for ring slots: reads in flight
                                                 // enough for a 2-slot message per 2 cycles
  localparam int unsigned NumDReg = 8;           // regions for data read from memory: reads in flight
                                                 // enough to cover memory's latency at 512 bits
  localparam int unsigned NumReg = NumSReg + NumDReg;  // at most 16: tags 0x80-0x8F
  localparam int unsigned DW = $clog2(NumDReg);
  localparam int unsigned SW = $clog2(NumSReg);
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
  localparam int unsigned RtsBeats = RtsBytes / Bpb;
  localparam logic [31:0] RtsMark = 32'hFFFF_FFFF;

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
  logic [NumFifos-1:0] ring_bad;

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

  // ------------------------------------------------------------ region buffer
  // Each read lands in a region of MaxPayload bytes, data from lane 0 of its first
  // beat. Slot regions are used (and freed) in the order they were read, data
  // regions likewise; a beat may be read in the cycle after it is written
  // (cut-through). Slot regions and data regions are two RAMs (block RAM), each with
  // a registered read port that reads the address of the next cycle (from the
  // parser's next state) and passes a word written in the same cycle through: the
  // look-ahead reads the next descriptor from the slot RAM while the parser streams
  // a message's data from the data RAM. A write address is {data RAM, region, beat}
  // (NumSReg = NumDReg, a power of two).
  localparam int unsigned HalfW = RamW - 1;
  logic [DataW-1:0] sram_q [NumSReg * RegBeats];
  logic [DataW-1:0] dram_q [NumDReg * RegBeats];
  logic ram_we;
  logic [RamW-1:0] ram_waddr;
  logic [HalfW-1:0] s_raddr_d, d_raddr_d;
  logic [DataW-1:0] ram_wdata, ram_rdata, s_rdata, d_rdata;
  always_ff @(posedge clk_i) begin
    if (ram_we && !ram_waddr[RamW-1]) sram_q[ram_waddr[HalfW-1:0]] <= ram_wdata;
    if (ram_we && ram_waddr[RamW-1]) dram_q[ram_waddr[HalfW-1:0]] <= ram_wdata;
    s_rdata <= (ram_we && ram_waddr == {1'b0, s_raddr_d}) ? ram_wdata : sram_q[s_raddr_d];
    d_rdata <= (ram_we && ram_waddr == {1'b1, d_raddr_d}) ? ram_wdata : dram_q[d_raddr_d];
  end

  logic [NumReg-1:0][12:0] rq_bytes_q, rq_bytes_d;   // bytes asked for
  logic [NumReg-1:0][12:0] got_bytes_q, got_bytes_d; // bytes arrived (whole completions)
  logic [NumReg-1:0][RbW-1:0] wbeats_q, wbeats_d;    // beats written
  logic [NumReg-1:0] rerr_q, rerr_d;                 // a completion with an error status
  logic [NumSReg-1:0][RsW-1:0] nslots_q, nslots_d;   // slots a slot region holds
  logic [NumReg-1:0] rdone;
  for (genvar r = 0; r < NumReg; r++) begin : gen_done
    assign rdone[r] = rerr_q[r] || got_bytes_q[r] == rq_bytes_q[r];
  end

  // Data region i is buffer region NumSReg + i.
  function automatic logic [3:0] d_reg_of(input logic [DW-1:0] i);
    d_reg_of = 4'(NumSReg) + 4'(i);
  endfunction
  logic [SW-1:0] s_alloc_q, s_alloc_d, s_head_q, s_head_d;
  logic [SW:0] s_cnt_q, s_cnt_d;
  logic [DW-1:0] d_alloc_q, d_alloc_d, d_head_q, d_head_d;
  logic [DW:0] d_cnt_q, d_cnt_d;

  // ------------------------------------------------------------ completion intake
  // Beat of the completion coming in: wide enough for the longest (4 KiB and its header
  // at 64 bits, 514 beats; an 8-bit count wrapped and read a data beat as the header).
  localparam int unsigned CbW = 10;
  logic [CbW-1:0] c_beat_q, c_beat_d;
  logic [3:0] c_reg_q, c_reg_d, c_reg;
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
  logic c_drop_q, c_drop_d;  // the rest of this completion is dropped
  logic c_known, c_fits, c_unexp, c_skip;
  logic [3:0] c_tag_reg;

  assign c_tag = (c_beat_q == CbW'(TagBeat)) ? s_cpl_tdata[(10 % Bpb) * 8 +: 8] : {4'h8, c_reg_q};
  assign c_reg = (c_beat_q == CbW'(TagBeat)) ? c_tag[3:0] : c_reg_q;
  // A poisoned completion (EP, byte 2 bit 6) fails its read as an error status does.
  assign c_status = (c_beat_q != '0) ? c_status_q :
                    s_cpl_tdata[2 * 8 + 6] ? ni_pkg::CPL_CA : s_cpl_tdata[6 * 8 + 5 +: 3];
  // Length 0 with data is 1024 DW.
  assign c_len = (c_beat_q != '0) ? c_len_q :
                 {s_cpl_tdata[2 * 8 +: 2] == 2'b00 && s_cpl_tdata[3 * 8 +: 8] == 8'h00 &&
                  s_cpl_tdata[0 +: 8] == ni_pkg::TLP_CPLD,
                  s_cpl_tdata[2 * 8 +: 2], s_cpl_tdata[3 * 8 +: 8], 2'b00};
  assign s_cpl_tready = !c_flush_q;
  assign c_take = s_cpl_tvalid && s_cpl_tready;
  assign c_known = c_tag[7:4] == 4'h8 && 32'(c_tag[3:0]) < NumReg;
  assign c_tag_reg = c_known ? c_tag[3:0] : 4'd0;
  assign c_fits = !rdone[c_tag_reg] && 14'(got_bytes_q[c_tag_reg]) + 14'(c_len) <= 14'(rq_bytes_q[c_tag_reg]);
  assign c_unexp = c_take && c_beat_q == CbW'(TagBeat) && !(c_known && c_fits);
  assign c_skip = c_unexp || c_drop_q;
  assign ev_cpl_unexp_o = c_unexp;

  // ------------------------------------------------------------ parser state
  typedef enum logic [3:0] {
    PIdle, PDesc, PCheck, PHdr, PBeats, PEnd, PErr, PDrain
  } pstate_e;
  pstate_e ps_q, ps_d;
  logic [FifoW-1:0] act_q, act_d;       // the FIFO whose turn the parser serves
  logic [RsW-1:0] ps_slot_q, ps_slot_d; // parse position in the head slot region
  logic [SbW-1:0] ps_beat_q, ps_beat_d;
  logic [511:0] desc_q, desc_d;
  logic [3:0] dbeat_q, dbeat_d;
  logic [7:0] dslots_q, dslots_d;       // slots of this descriptor passed
  logic [31:0] po_q, po_d;              // offset of the packet being sent
  logic [31:0] dfo_q, dfo_d;            // offset of the next data read
  logic [RbW-1:0] db_q, db_d;           // beat in the head data region
  logic [9:0] ob_q, ob_d;               // beat of the packet being sent
  logic [DataW-1:0] prev_q, prev_d;     // data beat before the current one
  logic [3:0] perr_q, perr_d;           // error code going to PErr
  logic stomp_q, stomp_d;               // a read failed under a packet under way: end it stomped
  logic hdr_pend_q, hdr_pend_d;         // the packet's header is offered (with its first beats)

  // Descriptor fields (docs/formats.md#dma-descriptors), little-endian. A descriptor is
  // checked as its last beat arrives. Every field the checks and the message's first
  // packet use lies in its bytes 0..35, so when it spans several beats they are read
  // from desc_q (bytes 36..63 are the software's words; a 256-bit descriptor's tag,
  // bytes 32..35, is used only once the message is under way): no RAM read port leads
  // into the checks. A one-beat descriptor (512 bits) is checked from the beat itself.
  logic [511:0] desc_n;
  logic [287:0] desc_f;  // bytes 0..35
  // At 64 and 128 bits what the last beat of a descriptor decides from its fields (the
  // checks, rendezvous or not, whether the look-ahead read this message; whether it
  // fits its turn, below) is computed a cycle ahead and registered: desc_q holds bytes
  // 0..31 from two beats before the last on. The ring, memory-ID and threshold
  // registers the decisions read are then a cycle older, as if the descriptor had been
  // checked a cycle earlier. So the decisions start at flip-flops; they lead on into
  // the RAM read address of the next cycle.
  localparam bit DecEarly = DescBeats >= 4;
  logic [3:0] chk_q;
  logic rts_pre_q, rts_q, la_same_q;
  logic [7:0] d_op, d_flags, d_slots, d_icnt, d_rcnt, d_smid;
  logic [15:0] d_dest, d_qid, d_key;
  logic [31:0] d_len, d_tag;
  logic [63:0] d_src, d_dst;
  logic d_inline, d_use_icnt, d_use_rcnt, d_src_mid;
  assign d_op = desc_f[0 +: 8];
  assign d_flags = desc_f[8 +: 8];
  assign d_slots = desc_f[16 +: 8];
  assign d_icnt = desc_f[24 +: 8];
  assign d_dest = desc_f[32 +: 16];
  assign d_qid = desc_f[48 +: 16];
  assign d_len = desc_f[64 +: 32];
  assign d_rcnt = desc_f[96 +: 8];
  assign d_smid = desc_f[104 +: 8];
  assign d_key = desc_f[112 +: 16];  // protection key of the target's memory ID or reception FIFO
  assign d_src = desc_f[128 +: 64];
  assign d_dst = desc_f[192 +: 64];
  assign d_tag = desc_f[256 +: 32];
  assign d_inline = d_flags[0];
  assign d_use_icnt = d_flags[1];
  assign d_use_rcnt = d_flags[2];
  assign d_src_mid = d_flags[3];  // src is an offset into memory ID d_smid of this node
  always_comb begin
    desc_n = desc_q;
    if (ps_q == PDesc) desc_n[32'(dbeat_q) * DataW +: DataW] = ram_rdata;
  end
  assign desc_f = (DescBeats == 1) ? desc_n[287:0] : desc_q[287:0];

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

  logic is_put, is_send, is_copy, is_raw, is_rget, at_dst;
  logic [12:0] chunk, dchunk;
  assign is_put = d_op == OpPut;
  assign is_send = d_op == OpSend;
  assign is_copy = d_op == OpCopy;
  assign is_raw = d_op == OpRaw;
  assign is_rget = d_op == OpRget;
  assign at_dst = is_put || is_copy;  // data lands at dst + offset
  // A send that goes by rendezvous: its RTS is the message (one packet, the descriptor
  // as data); the data itself stays in memory until the destination fetches it.
  // Whether it does is decided as the descriptor is checked and held for its message
  // (a new threshold applies from the next message on).
  logic is_rts, rts_c, from_mem;
  logic [31:0] m_len;   // bytes of what is sent: the message, or the RTS
  assign rts_c = is_send && !d_inline && d_src_mid && d_len > rndv_thresh_i;
  assign is_rts = (ps_q == PDesc || ps_q == PCheck) ? (DecEarly ? rts_pre_q : rts_c) : rts_q;
  assign from_mem = !d_inline && !is_rts;
  assign m_len = is_rts ? 32'(RtsBytes) : d_len;
  // A raw datagram is never split (its length and source page are checked).
  // At 64 and 128 bits the packet's size is a register as well (chunk_q): the first at
  // the message's start, each next one computed in the cycle after the one before it
  // began (a packet there has two beats at least; DmaChunkAhead_A checks it).
  logic [12:0] chunk_c, chunk0, chunk_nx, chunk_q, chunk_d, chunk_nx_q;
  assign chunk_c = is_raw ? d_len[12:0] : chunk_at(po_q, at_dst, is_rget, !from_mem, d_src[11:0], d_dst[11:0], m_len);
  assign chunk0 = is_raw ? d_len[12:0] : chunk_at(32'd0, at_dst, is_rget, !from_mem, d_src[11:0], d_dst[11:0], m_len);
  assign chunk_nx = is_raw ? d_len[12:0] : chunk_at(po_q + 32'(chunk_q), at_dst, is_rget, !from_mem, d_src[11:0],
                                                    d_dst[11:0], m_len);
  assign chunk = DecEarly ? chunk_q : chunk_c;
  assign dchunk = is_raw ? d_len[12:0] : chunk_at(dfo_q, at_dst, is_rget, !from_mem, d_src[11:0], d_dst[11:0], m_len);

  // Why a descriptor is refused (docs/formats.md#dma-descriptors); 0: it is good. A
  // local copy must fall inside a valid, writable memory ID of this node, a source
  // named by memory ID inside a valid, readable one. A remote-fed FIFO takes only
  // one-slot descriptors whose source is named by memory ID: what another node injects
  // reaches this node's memory only where it was exported.
  // The active memory IDs' regions: {base page, pages}. The flags stay flip-flops.
  logic [71:0] mem_tab_q [NumMemId];
  always_ff @(posedge clk_i) begin
    if (mem_we_i) mem_tab_q[mem_widx_i] <= {mem_wbase_i, mem_wpages_i};
  end
  // A source named by memory ID lies inside a valid, readable one of this node (pages:
  // its size).
  function automatic logic src_readable(input logic [7:0] smid, input logic [63:0] src,
                                        input logic [31:0] len, input logic [NumMemId-1:0] valid,
                                        input logic [NumMemId-1:0] perm_r, input logic [19:0] pages);
    logic [52:0] last_page;
    logic [MiW-1:0] m;
    last_page = 53'(({1'b0, src} + 65'(len) - 65'd1) >> 12);
    m = smid[MiW-1:0];
    src_readable = smid < 8'(NumMemId) && valid[m] && perm_r[m] && last_page < 53'(pages);
  endfunction
  // The host address of offset `off` in a memory ID whose region starts at page `base`.
  function automatic logic [63:0] mid_addr(input logic [51:0] base, input logic [63:0] off);
    mid_addr = {base + off[63:12], off[11:0]};
  endfunction
  logic [3:0] chk, chk_c;
  logic [MiW-1:0] mi, smi;
  logic [64:0] cp_last;           // last byte of a copy, as an offset
  logic [63:0] src_addr;          // the source's address in host memory
  assign mi = d_qid[MiW-1:0];
  assign smi = d_smid[MiW-1:0];
  assign cp_last = {1'b0, d_dst} + 65'(d_len) - 65'd1;
  // The table entries of the copy's, the source's and the look-ahead's memory IDs.
  logic [51:0] mi_base, smi_base, la_base;
  logic [19:0] mi_pages, smi_pages, la_pages;
  assign {mi_base, mi_pages} = mem_tab_q[mi];
  assign {smi_base, smi_pages} = mem_tab_q[smi];
  assign src_addr = d_src_mid ? mid_addr(smi_base, d_src) : d_src;
  always_comb begin
    chk_c = 4'd0;
    if (!is_put && !is_send && !is_copy && !is_raw && !is_rget) begin
      chk_c = ErrOp;
    end else if (remote_i[act_q] && (d_slots != 8'd1 || d_inline || !d_src_mid)) begin
      chk_c = ErrRemote;
    end else if (d_slots == 8'd0 || 16'(d_slots) > filled) begin
      chk_c = ErrCount;
    end else if (d_len == 32'd0 || d_len[1:0] != 2'b00 || (is_raw && d_len > 32'(RawMaxBytes)) ||
                 (is_rget && d_len[SlotShift-1:0] != '0) ||
                 (d_inline ? d_len > (32'(d_slots) - 32'd1) * SlotBytes : d_slots != 8'd1)) begin
      chk_c = ErrLen;
    end else if ((!d_inline && d_src[5:0] != 6'd0) || (at_dst && d_dst[5:0] != 6'd0) ||
                 (is_rget && !d_inline && d_src[SlotShift-1:0] != '0) ||
                 (is_raw && !d_inline && 13'(d_src[11:0]) + 13'(d_len) > 13'd4096)) begin
      chk_c = ErrAlign;
    end else if (is_copy && (d_qid >= 16'(NumMemId) || !mem_valid_i[mi] || !mem_perm_w_i[mi] ||
                             cp_last[64:12] >= 53'(mi_pages))) begin
      chk_c = ErrRange;
    end else if (!d_inline && d_src_mid &&
                 !src_readable(d_smid, d_src, d_len, mem_valid_i, mem_perm_r_i, smi_pages)) begin
      chk_c = ErrRange;
    end else if ((d_use_icnt && d_icnt >= 8'(NumCnt)) || (is_copy && d_use_rcnt && d_rcnt >= 8'(NumCnt))) begin
      chk_c = ErrCnt;  // a counter this NI does not have (a put's or send's rcv_cnt is the target's)
    end
  end
  assign chk = DecEarly ? chk_q : chk_c;

  // ------------------------------------------------------------ look-ahead
  // While the parser streams a message whose data reads are all issued, the look-ahead
  // reads the next descriptor of the turn (the slot at the parse position) from the
  // slot RAM; when it is a put, a copy or an eager send whose source may be read, it
  // issues that message's first data reads, so the data arrives while this message's
  // last packets leave rather than a memory round trip after them. The parser takes
  // the reads over when it starts that message; when it finds another message there
  // (a register changed in between) or ends the turn, it drains them (PDrain).
  typedef enum logic [1:0] {LaRead, LaIssue, LaOff} lastate_e;
  lastate_e la_q, la_d;
  logic [3:0] la_beat_q, la_beat_d;   // descriptor beats captured
  logic la_rd_q, la_rd;               // a descriptor beat is read (captured in the next cycle)
  logic [511:0] la_desc_q, la_desc_d;
  logic [31:0] la_dfo_q, la_dfo_d;    // offset of its next data read
  logic [63:0] la_addr_q, la_addr_d;  // its source address in host memory
  logic [RbW-1:0] la_rbeat;
  logic [12:0] la_dchunk;
  logic la_go, la_want, la_ok, la_held, la_same, la_reset, la_rd_req;

  // ------------------------------------------------------------ fetch (reads)
  // Turns: the fetcher reads one FIFO's slots at a time: BatchSlots of them (more when
  // no other FIFO waits or a message needs them), then it moves on to the next FIFO
  // with work while the parser still serves what it read, so the next turn's slots
  // arrive behind the last turn's without a memory round trip between them. A FIFO
  // has at most one turn in the engine (turn_q), from its start in the fetcher until
  // the parser ends it; only the parser moves a head, so a turn's reads start at the
  // head. Each slot region is tagged with its FIFO and whether it opens a turn.
  logic [NumFifos-1:0] turn_q, turn_d;            // the FIFO has a turn in the engine
  logic [NumFifos-1:0][15:0] fp_q, fp_d;          // next slot to read in its turn
  logic [NumFifos-1:0][7:0] need_q, need_d;       // slots its next turn reads at least
  logic [NumSReg-1:0][FifoW-1:0] rfifo_q, rfifo_d;
  logic [NumSReg-1:0] rfirst_q, rfirst_d;
  logic f_on_q, f_on_d;                 // the fetcher is in a turn ...
  logic [FifoW-1:0] f_fifo_q, f_fifo_d; // ... of this FIFO
  logic f_first_q, f_first_d;           // no read of the turn issued yet
  logic [15:0] f_cnt_q, f_cnt_d;        // slots read in the turn (saturating)
  logic [15:0] f_lim_q, f_lim_d;        // slots the turn reads while others wait
  logic [FifoW-1:0] rr_q, rr_d;         // round robin: the next pick starts here
  logic hold_q, hold_d;                 // the parser's message needs slots not read yet
  logic [15:0] a_size, a_tail, a_head, filled, f_size, f_ptr, f_head, to_tail, to_end;
  logic [63:0] f_base;
  logic f_stop, s_want, d_want, s_issue, d_issue;
  logic [RsW-1:0] s_nslots;
  assign a_size = size_q[act_q];
  assign a_tail = tail_q[act_q];
  assign a_head = head_q[act_q];
  assign filled = ring_dist(a_tail, a_head, a_size);
  assign f_size = size_q[f_fifo_q];
  assign f_ptr = fp_q[f_fifo_q];
  assign f_head = head_q[f_fifo_q];
  assign f_base = base_i[f_fifo_q];
  assign to_tail = ring_dist(tail_q[f_fifo_q], f_ptr, f_size);
  assign to_end = f_size - f_ptr;
  assign f_stop = stopped[f_fifo_q];

  // Round robin: the first FIFO in w at or after `from`; bit FifoW says one was found.
  function automatic logic [FifoW:0] rr_pick(input logic [NumFifos-1:0] w, input logic [FifoW-1:0] from);
    rr_pick = '0;
    for (int k = NumFifos - 1; k >= 0; k--) begin
      if (w[FifoW'(32'(from) + k)]) rr_pick = {1'b1, FifoW'(32'(from) + k)};
    end
  endfunction
  // The next turn: a FIFO with work and no turn in the engine, not being reset (a
  // reset applies between its turns).
  logic [FifoW:0] pick;
  logic [FifoW-1:0] next;
  assign next = pick[FifoW-1:0];
  assign pick = rr_pick(has_work & ~turn_q & ~(rst_pend_q | reset_i), rr_q);

  // Slots of the next read: up to the tail, the ring's end, a region, a 4 KiB page.
  // At 64 and 128 bits the read (address, slots) is registered, computed from the
  // registers of the cycle before: a slot read waits a cycle after the read or turn
  // start before it (s_fresh_q), so the pointer it starts at is the current one.
  logic [63:0] s_addr, s_addr_c, s_addr_q;
  logic [12:0] to_page;
  logic [RsW-1:0] s_nslots_c, s_nslots_q;
  logic s_fresh_q;
  assign s_addr_c = f_base + 64'(f_ptr) * 64'(SlotBytes);
  assign to_page = 13'd4096 - {1'b0, s_addr_c[11:0]};
  always_comb begin
    logic [15:0] n;
    n = to_tail;
    if (to_end < n) n = to_end;
    if (16'(RegSlots) < n) n = 16'(RegSlots);
    if (16'(to_page) / 16'(SlotBytes) < n) n = 16'(to_page) / 16'(SlotBytes);
    s_nslots_c = RsW'(n);
  end
  assign s_addr = DecEarly ? s_addr_q : s_addr_c;
  assign s_nslots = DecEarly ? s_nslots_q : s_nslots_c;
  // A stopped FIFO's reads stop, unless the message being sent needs them. (The
  // registered read has no slots when none were up to the tail.)
  assign s_want = f_on_q && (DecEarly ? s_fresh_q && s_nslots_q != '0 : to_tail != 16'd0) &&
                  s_cnt_q < (SW+1)'(NumSReg) &&
                  (!f_stop || hold_q) && (f_cnt_q < f_lim_q || hold_q || !pick[FifoW]);
  logic dmsg_q, dmsg_d;                 // the message's data is read from memory
  assign d_want = dmsg_q && dfo_q != d_len && d_cnt_q < (DW+1)'(NumDReg);
  // A read takes its region when it enters the request register; it leaves from there
  // unchanged however long the host port makes it wait.
  logic rd_valid_q, rd_load;
  logic [63:0] rd_addr_q, rd_addr_d;
  logic [12:0] rd_bytes_q, rd_bytes_d;
  logic [7:0] rd_tag_q, rd_tag_d;
  assign rd_load = !rd_valid_q || rd_ready_i;
  assign d_issue = (d_want || la_want) && rd_load;
  assign s_issue = s_want && !d_want && !la_want && rd_load;
  assign rd_addr_d = d_want ? src_addr + 64'(dfo_q) : la_want ? la_addr_q + 64'(la_dfo_q) : s_addr;
  assign rd_bytes_d = d_want ? dchunk : la_want ? la_dchunk : 13'(s_nslots) * 13'(SlotBytes);
  assign rd_tag_d = (d_want || la_want) ? {4'h8, d_reg_of(d_alloc_q)} : {4'h8, 4'(s_alloc_q)};
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
      rd_addr_q <= rd_addr_d;
      rd_bytes_q <= rd_bytes_d;
      rd_tag_q <= rd_tag_d;
    end
  end

  // ------------------------------------------------------------ parser reads
  logic [3:0] s_reg, d_reg;
  logic [RbW-1:0] s_rbeat;
  logic s_avail, s_bad, d_avail, d_bad, s_slot_ok;
  assign s_reg = 4'(s_head_q);
  assign d_reg = d_reg_of(d_head_q);
  assign s_rbeat = RbW'(ps_slot_q) * RbW'(SlotBeats) + RbW'(ps_beat_q);
  assign s_avail = s_cnt_q != '0 && s_rbeat < wbeats_q[s_reg];
  assign s_bad = s_cnt_q != '0 && rerr_q[s_reg];
  // The parse position may move to the next slot: a region is left only once its
  // reads have all arrived (its slots may be skipped before they are written).
  assign s_slot_ok = s_cnt_q != '0 && (ps_slot_q + RsW'(1) != nslots_q[s_head_q] || rdone[s_reg]);
  assign d_avail = d_cnt_q != '0 && db_q < wbeats_q[d_reg];
  assign d_bad = d_cnt_q != '0 && rerr_q[d_reg];

  // Look-ahead (see its declarations). It works while the parser is in a message from
  // memory whose reads are all issued and its FIFO is not stopped; the next descriptor
  // is at the parse position (beat 0 of the slot after this message's one), in a
  // region of this turn (a region that opens a turn is the next turn's).
  logic [7:0] la_op, la_slots, la_smid;
  logic [31:0] la_len;
  logic [63:0] la_src;
  logic [11:0] la_dst_pg;  // the destination's offset in its page (where packets split)
  logic la_put, la_copy, la_send, la_inline, la_src_mid;
  logic [3:0] la_nb;    // the beat to read now
  assign la_op = la_desc_q[0 +: 8];
  assign la_inline = la_desc_q[8];
  assign la_src_mid = la_desc_q[11];
  assign la_slots = la_desc_q[16 +: 8];
  assign la_len = la_desc_q[64 +: 32];
  assign la_smid = la_desc_q[104 +: 8];
  assign {la_base, la_pages} = mem_tab_q[la_smid[MiW-1:0]];
  assign la_src = la_desc_q[128 +: 64];
  assign la_dst_pg = la_desc_q[192 +: 12];
  assign la_put = la_op == OpPut;
  assign la_copy = la_op == OpCopy;
  assign la_send = la_op == OpSend;
  assign la_go = (ps_q == PHdr || ps_q == PBeats) && dmsg_q && dfo_q == d_len && !stopped[act_q];
  assign la_nb = la_beat_q + 4'(la_rd_q);
  assign la_rbeat = RbW'(ps_slot_q) * RbW'(SlotBeats) + RbW'(la_nb);
  // What the parser would read of it without a refusal: one slot, its data in memory
  // (not an RTS), aligned, and a source it may read (a remote-fed FIFO's by memory ID).
  assign la_ok = (la_put || la_copy || (la_send && !(la_src_mid && la_len > rndv_thresh_i))) &&
                 !la_inline && la_slots == 8'd1 && la_len != 32'd0 && la_len[1:0] == 2'b00 &&
                 la_src[5:0] == 6'd0 &&
                 (la_src_mid ? src_readable(la_smid, la_src, la_len, mem_valid_i, mem_perm_r_i, la_pages)
                             : !remote_i[act_q]);
  assign la_dchunk = chunk_at(la_dfo_q, la_put || la_copy, 1'b0, 1'b0, la_src[11:0], la_dst_pg, la_len);
  assign la_want = la_q == LaIssue && la_go && la_dfo_q != la_len && d_cnt_q < (DW+1)'(NumDReg);
  // Its reads are held for the message the parser starts next, which must be the same.
  assign la_held = la_q == LaIssue && la_dfo_q != 32'd0;
  logic la_same_c;
  assign la_same_c = !d_inline && !rts_c && desc_f[0 +: 256] == la_desc_q[0 +: 256] && src_addr == la_addr_q;
  assign la_same = DecEarly ? la_same_q : la_same_c;
  always_comb begin
    la_d = la_q;
    la_beat_d = la_beat_q;
    la_desc_d = la_desc_q;
    la_addr_d = la_addr_q;
    la_rd_req = 1'b0;
    if (la_rd_q) begin
      la_desc_d[32'(la_beat_q) * DataW +: DataW] = s_rdata;
      la_beat_d = la_beat_q + 4'd1;
    end
    if (la_q == LaRead && la_go) begin
      if (la_beat_q == 4'(DescBeats)) begin
        la_d = la_ok ? LaIssue : LaOff;
        la_addr_d = la_src_mid ? mid_addr(la_base, la_src) : la_src;
      end else begin
        la_rd_req = 32'(la_nb) < DescBeats && ps_beat_q == '0 && s_cnt_q != '0 && !rfirst_q[s_head_q] &&
                la_rbeat < wbeats_q[s_reg] && !rerr_q[s_reg];
      end
    end
  end

  // The packet: its bytes are hdr_bytes of header (TLP header, entry header) then data.
  logic [255:0] hb;
  logic [5:0] hdr_bytes;
  logic [13:0] pkt_bytes;
  logic [9:0] pkt_beats, src_beats, q_beats;
  logic [9:0] len_dw;
  logic [63:0] tlp_addr;
  logic [10:0] raw_words;  // a raw packet's PktLen: LRH, RWH and data, no ICRC
  assign raw_words = 11'(pkt_bytes >> 2);
  assign hdr_bytes = is_raw ? 6'(ni_pkg::RawHdrBytes) : is_send ? 6'd32 : 6'd16;
  assign pkt_bytes = 14'(hdr_bytes) + 14'(chunk);
  assign pkt_beats = 10'((pkt_bytes + 14'(Bpb - 1)) / 14'(Bpb));
  assign src_beats = 10'((14'(chunk) + 14'(Bpb - 1)) / 14'(Bpb));
  assign q_beats = 10'(32'(hdr_bytes) / Bpb);  // header-only beats
  assign len_dw = 10'((14'(chunk) + (is_send ? 14'd16 : 14'd0)) >> 2);
  // A copy's address: its memory ID's base plus the offset (inside the region: checked).
  logic [63:0] wr_off;
  assign wr_off = d_dst + 64'(po_q);
  assign tlp_addr = is_put ? wr_off : is_copy ? mid_addr(mi_base, wr_off) : 64'h0;
  always_comb begin
    hb = '0;
    hb[0 +: 128] = ni_pkg::mem_req_header(ni_pkg::TLP_MWR64, len_dw, NiReqId, 8'h00, tlp_addr);
    // Entry header of a memory-FIFO packet (lands in the reception FIFO as is).
    hb[16 * 8 +: 128] = ni_pkg::entry_header(node_id_i, 16'(chunk), d_len, is_rts ? RtsMark : po_q, d_tag);
    // A raw packet: LRH (next header raw, VL/SL 0, PktLen up to the VCRC) and RWH.
    if (is_raw) begin
      hb = '0;
      hb[0 +: 64] = ni_pkg::lrh(1'b0, ni_pkg::LnhRaw, d_dest, raw_words, node_id_i);
      hb[10 * 8 +: 8] = d_qid[15:8];
      hb[11 * 8 +: 8] = d_qid[7:0];
    end
  end

  always_comb begin
    logic [7:0] flags;
    logic [10:0] words;
    flags = ni_pkg::TEH_DMA | (is_put ? ni_pkg::TEH_RX_XLATE : is_rget ? ni_pkg::TEH_RGET : ni_pkg::TEH_RFIFO) |
            (d_use_rcnt && !is_rget && !is_rts ? ni_pkg::TEH_RCNT : 8'h00);
    words = 11'((14'(ni_pkg::FabHdrBytes) + pkt_bytes + 14'd4) >> 2);
    out_hdr_o = '0;
    out_hdr_o.kind = ni_pkg::TX_REQ;
    out_hdr_o.dlid = d_dest;
    out_hdr_o.pkt_words = words;
    out_hdr_o.stamp_psn = 1'b1;
    out_hdr_o.flags = flags;
    out_hdr_o.aux8 = d_use_rcnt && !is_rget && !is_rts ? d_rcnt : 8'h00;
    out_hdr_o.memid = d_qid;
    if (is_put || is_send) out_hdr_o.key = d_key;  // TEH bytes 24-25: the key the target checks
    if (is_raw) begin  // LRH and RWH travel in the beats (hb); the framer sends them as they are
      out_hdr_o.kind = ni_pkg::TX_RAW;
      out_hdr_o.stamp_psn = 1'b0;
      out_hdr_o.pkt_words = raw_words;
    end
  end
  assign out_hdr_valid_o = ps_q == PBeats && hdr_pend_q && !is_copy && !is_raw;
  assign raw_hdr_valid_o = ps_q == PBeats && hdr_pend_q && is_raw;

  // Output beat ob_q: header bytes, then data shifted up by hdr_bytes % Bpb lanes.
  logic need_src, src_avail, src_bad, last_beat;
  // Data of the packet after this one at hand: inline (in the slot stream), or its
  // data region written from its first beat without an error.
  logic next_ready;
  logic [3:0] next_reg;
  assign next_reg = d_reg_of(d_head_q + DW'(1));
  assign next_ready = !from_mem || (d_cnt_q > (DW+1)'(1) && wbeats_q[next_reg] != '0 && !rerr_q[next_reg]);
  logic [DataW-1:0] src_beat, hdr_beat, obeat;
  logic [KeepW-1:0] okeep;
  logic [9:0] sidx;
  logic [7:0] shift;  // lanes the data moves up
  assign shift = 8'(32'(hdr_bytes) % Bpb);
  assign sidx = ob_q - q_beats;
  assign need_src = ob_q + 10'd1 > q_beats && sidx < src_beats;  // ob_q >= q_beats
  assign src_avail = is_rts || (d_inline ? s_avail : d_avail);
  assign src_bad = !is_rts && (d_inline ? s_bad : d_bad);
  // An RTS's data: the descriptor.
  assign src_beat = is_rts ? desc_q[(32'(sidx) % RtsBeats) * DataW +: DataW] : ram_rdata;
  assign last_beat = ob_q == pkt_beats - 10'd1;
  always_comb begin
    hdr_beat = '0;
    for (int l = 0; l < Bpb; l++) begin
      if (32'(ob_q) * Bpb + l < 32'(hdr_bytes)) hdr_beat[l * 8 +: 8] = hb[(32'(ob_q) * Bpb + l) * 8 +: 8];
    end
    obeat = hdr_beat;
    if (ob_q + 10'd1 > q_beats) begin
      if (need_src) obeat = obeat | (src_beat << (8 * shift));
      if (ob_q > q_beats && shift != 0) obeat = obeat | (prev_q >> (8 * (32'(Bpb) - 32'(shift))));
    end
    okeep = '1;
    if (last_beat && pkt_bytes % 14'(Bpb) != 14'd0) begin
      for (int l = 0; l < Bpb; l++) okeep[l] = 14'(l) < pkt_bytes % 14'(Bpb);
    end
  end
  // A local copy's beats go to the host port, a raw packet's to the framer, the others
  // toward the request path.
  logic beat_valid, beat_take, src_done, src_stop, offered_q;
  // The source's read failed (its region is done with an error): the packet goes on as
  // filler (stomp). Its data may be there (a completion marked bad still writes its
  // beats), so a beat offered before the failure was known is still taken as it was
  // offered (offered_q: AXI4-Stream), and the stomp starts at the next; the last beat of
  // a packet of data from memory waits until its read is done, so that no such packet
  // ends unstomped on data of a read that failed (its region holds that packet's data
  // only; inline data shares a slot read with the slots after it).
  assign src_done = d_inline ? rdone[s_reg] : rdone[d_reg];
  assign src_stop = need_src && src_bad && src_done && !offered_q;
  assign beat_valid = ps_q == PBeats &&
                      (stomp_q || !need_src ||
                       (src_avail && !src_stop && (!last_beat || d_inline || src_done || offered_q)));
  assign beat_take = beat_valid && (is_copy ? loc_beat_ready_i : is_raw ? raw_beat_ready_i : out_beat_ready_i);
  assign out_beat_o = {stomp_q && last_beat, last_beat, okeep, obeat};
  assign out_beat_valid_o = beat_valid && !is_copy && !is_raw;
  assign raw_beat_valid_o = beat_valid && is_raw;
  assign loc_beat_o = out_beat_o;
  assign loc_beat_valid_o = beat_valid && is_copy;

  // The parser reads the head slot region at its parse position, or in PBeats of a
  // message from memory the head data region (desc_q's inline flag); the addresses are
  // formed from the next state, for the registered read ports. The look-ahead reads
  // the slot RAM while the parser streams from the data RAM.
  logic [RbW-1:0] s_rbeat_d;
  assign s_rbeat_d = RbW'(ps_slot_d) * RbW'(SlotBeats) + RbW'(ps_beat_d);
  always_comb begin
    s_raddr_d = HalfW'(s_head_d) * HalfW'(RegBeats) + HalfW'(s_rbeat_d);
    if (la_rd) s_raddr_d = HalfW'(s_head_q) * HalfW'(RegBeats) + HalfW'(la_rbeat);
    d_raddr_d = HalfW'(d_head_d) * HalfW'(RegBeats) + HalfW'(db_d);
  end
  assign ram_rdata = (ps_q == PBeats && !desc_q[8]) ? d_rdata : s_rdata;
  // The look-ahead reads only while the parser stays in the message (not reading slots).
  assign la_rd = la_rd_req && (ps_d == PHdr || ps_d == PBeats);

  // ------------------------------------------------------------ next state
  logic s_adv_slot, s_adv_beat;   // parse position: next slot / next beat
  logic msg_start, msg_done;      // a checked descriptor's message starts; a message ends
  logic turn_end;                 // the parser ends its turn
  logic [NumFifos-1:0] ev_err;
  logic [15:0] desc_end;
  logic fits;     // the message's slots are all read, or will be in this turn
  logic fon_act;  // the fetcher is still in the parser's turn
  assign desc_end = ring_add(a_head, 16'(d_slots), a_size);
  // At 64 and 128 bits fits is one of the decisions computed a cycle ahead. Only the
  // fetcher moves fp_q, and only in its turn: outside it (fon_act low, the case that
  // ends the turn before the message) the value is current, as the fetcher leaves a
  // turn a cycle after its last read; in it, a stale "no" only holds the turn's reads
  // on for the message, as a true one would.
  logic fits_c, fits_q;
  assign fits_c = ring_dist(desc_end, a_head, a_size) <= ring_dist(fp_q[act_q], a_head, a_size);
  assign fits = DecEarly ? fits_q : fits_c;
  assign fon_act = f_on_q && f_fifo_q == act_q;

  always_comb begin
    logic [16:0] cnt;
    logic bad_bell;  // a doorbell outside the ring, or of a remote-fed FIFO
    cnt = '0;
    bad_bell = 1'b0;
    head_d = head_q;
    tail_d = tail_q;
    err_d = err_q;
    code_d = code_q;
    rst_pend_d = rst_pend_q | reset_i;
    ps_d = ps_q;
    act_d = act_q;
    rr_d = rr_q;
    turn_d = turn_q;
    fp_d = fp_q;
    need_d = need_q;
    rfifo_d = rfifo_q;
    rfirst_d = rfirst_q;
    f_on_d = f_on_q;
    f_fifo_d = f_fifo_q;
    f_first_d = f_first_q;
    f_cnt_d = f_cnt_q;
    f_lim_d = f_lim_q;
    hold_d = hold_q;
    turn_end = 1'b0;
    ps_slot_d = ps_slot_q;
    ps_beat_d = ps_beat_q;
    desc_d = desc_q;
    dbeat_d = dbeat_q;
    dslots_d = dslots_q;
    po_d = po_q;
    chunk_d = chunk_q;
    dfo_d = dfo_q;
    db_d = db_q;
    ob_d = ob_q;
    prev_d = prev_q;
    perr_d = perr_q;
    stomp_d = stomp_q;
    hdr_pend_d = hdr_pend_q;
    dmsg_d = dmsg_q;
    la_dfo_d = la_dfo_q;
    rq_bytes_d = rq_bytes_q;
    got_bytes_d = got_bytes_q;
    wbeats_d = wbeats_q;
    rerr_d = rerr_q;
    nslots_d = nslots_q;
    s_alloc_d = s_alloc_q;
    s_head_d = s_head_q;
    s_cnt_d = s_cnt_q;
    d_alloc_d = d_alloc_q;
    d_head_d = d_head_q;
    d_cnt_d = d_cnt_q;
    s_adv_slot = 1'b0;
    s_adv_beat = 1'b0;
    msg_start = 1'b0;
    msg_done = 1'b0;
    ev_err = '0;
    inj_cnt_valid_o = 1'b0;
    inj_cnt_id_o = d_icnt[CntW-1:0];
    inj_cnt_bytes_o = chunk;
    loc_cnt_valid_o = 1'b0;
    loc_cnt_id_o = d_rcnt[CntW-1:0];
    loc_cnt_bytes_o = chunk;
    ev_rts_o = 1'b0;

    // Doorbells: a tail outside the ring, or any doorbell of a remote-fed FIFO, stops
    // the FIFO and is not taken. A remote-fed FIFO's tail moves by the receiver's pushes.
    // A FIFO enabled with its head or tail outside its ring stops the same way.
    for (int i = 0; i < NumFifos; i++) begin
      bad_bell = tail_we_i[i] && (tail_i >= size_d[i] || remote_i[i]);
      if (push_i[i]) tail_d[i] = ring_add(tail_q[i], 16'd1, size_d[i]);
      if (tail_we_i[i] && !bad_bell) tail_d[i] = tail_i;
      if (bad_bell || ring_bad[i]) begin
        err_d[i] = 1'b1;
        code_d[i] = ErrTail;
        ev_err[i] = 1'b1;
      end
    end
    // A reset applies once the engine is not serving that FIFO. It empties the ring at
    // the tail, or at slot 0 if the tail lies outside the ring (its size was made
    // smaller): a head outside the ring would read beyond it.
    for (int i = 0; i < NumFifos; i++) begin
      if (rst_pend_d[i] && !busy_o[i]) begin
        rst_pend_d[i] = 1'b0;
        if (tail_d[i] >= size_d[i]) tail_d[i] = '0;
        head_d[i] = tail_d[i];
        err_d[i] = 1'b0;
        code_d[i] = 4'd0;
      end
    end

    // Reads issued.
    if (s_issue) begin
      rq_bytes_d[4'(s_alloc_q)] = rd_bytes_d;
      got_bytes_d[4'(s_alloc_q)] = '0;
      wbeats_d[4'(s_alloc_q)] = '0;
      rerr_d[4'(s_alloc_q)] = 1'b0;
      nslots_d[s_alloc_q] = s_nslots;
      rfifo_d[s_alloc_q] = f_fifo_q;
      rfirst_d[s_alloc_q] = f_first_q;
      s_alloc_d = s_alloc_q + SW'(1);
      fp_d[f_fifo_q] = ring_add(f_ptr, 16'(s_nslots), f_size);
      f_first_d = 1'b0;
      cnt = {1'b0, f_cnt_q} + 17'(s_nslots);
      f_cnt_d = cnt[16] ? 16'hFFFF : cnt[15:0];
    end
    if (d_issue) begin
      rq_bytes_d[d_reg_of(d_alloc_q)] = rd_bytes_d;
      got_bytes_d[d_reg_of(d_alloc_q)] = '0;
      wbeats_d[d_reg_of(d_alloc_q)] = '0;
      rerr_d[d_reg_of(d_alloc_q)] = 1'b0;
      d_alloc_d = d_alloc_q + DW'(1);
      if (d_want) dfo_d = dfo_q + 32'(dchunk);
      else la_dfo_d = la_dfo_q + 32'(la_dchunk);
    end

    // Completions: the data of beat j (after the 12 header bytes) goes to region beat
    // j - CplHdrBeats - 1, made of this beat's low lanes and the previous beat's high
    // lanes; what is left in the last beat is written in one more cycle. (A region
    // being written is in use: never the one a read issued in this cycle takes.)
    if (c_flush_q) begin
      wbeats_d[c_reg_q] = wbeats_q[c_reg_q] + RbW'(1);
    end
    if (c_take && !c_skip) begin
      if (32'(c_beat_q) > CplHdrBeats) wbeats_d[c_reg] = wbeats_q[c_reg] + RbW'(1);
      if (s_cpl_tlast) begin
        got_bytes_d[c_reg] = got_bytes_q[c_reg] + c_len;
        // A malformed completion (marked bad) fails its read as an error status does.
        if (c_status != ni_pkg::CPL_SC || s_cpl_tuser) rerr_d[c_reg] = 1'b1;
      end
    end

    // Parser.
    unique case (ps_q)
      PIdle: begin
        // Between turns: drop what is left of the last turn's slot regions once they
        // have arrived; the next turn starts at the region that opens it.
        if (s_cnt_q != '0 && rfirst_q[s_head_q]) begin
          act_d = rfifo_q[s_head_q];
          rfirst_d[s_head_q] = 1'b0;
          dbeat_d = '0;
          ps_d = PDesc;
        end else if (s_cnt_q != '0 && rdone[s_reg]) begin
          s_head_d = s_head_q + SW'(1);
          s_cnt_d = s_cnt_d - (SW+1)'(1);
        end
      end
      PDesc: begin
        // Between messages the turn ends when its FIFO stopped, or when every slot read
        // for it is served: the next turn's first region is next, or nothing more comes.
        if (dbeat_q == '0 && (stopped[act_q] || (s_cnt_q != '0 && rfirst_q[s_head_q]) ||
                              (!fon_act && fp_q[act_q] == a_head))) begin
          turn_end = 1'b1;
        end else if (s_bad && rdone[s_reg]) begin
          perr_d = ErrMem;
          ps_d = PErr;
        end else if (s_avail) begin
          desc_d = desc_n;
          dbeat_d = dbeat_q + 4'd1;
          s_adv_beat = 1'b1;
          // The last beat: checked at once; the message starts in this cycle when the
          // descriptor fills its slot (the advance below counts the slot).
          if (32'(dbeat_q) == DescBeats - 1) begin
            if (chk != 4'd0) begin
              perr_d = chk;
              ps_d = PErr;
            end else if (SlotBeats == DescBeats) begin
              dslots_d = 8'd0;
              msg_start = 1'b1;
            end else begin
              ps_d = PCheck;
            end
          end
        end
      end
      PCheck: begin
        // Slots larger than a descriptor: pass the rest of its slot first.
        dslots_d = 8'd1;
        if (chk != 4'd0) begin
          perr_d = chk;
          ps_d = PErr;
        end else if (ps_beat_q == '0 || s_slot_ok) begin
          s_adv_slot = ps_beat_q != '0;
          msg_start = 1'b1;
        end
      end
      PHdr: begin
        // Data from memory: the header waits for the packet's first data beat, so a
        // refused read (a completion without data) stops the FIFO before the packet starts.
        if (from_mem && d_bad && rdone[d_reg]) begin
          perr_d = ErrMem;
          ps_d = PErr;
        end else if (!from_mem || (d_avail && !d_bad)) begin
          ob_d = '0;
          hdr_pend_d = !is_copy;
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
            if (d_inline) s_adv_beat = 1'b1;
            else if (from_mem) db_d = db_q + RbW'(1);
          end
          if (last_beat && !stomp_q) begin
            // An RTS counts nothing: the data it announces is counted as it leaves.
            inj_cnt_valid_o = d_use_icnt && !is_rts;
            loc_cnt_valid_o = is_copy && d_use_rcnt;
            ev_rts_o = is_rts;
            po_d = po_q + 32'(chunk);
            chunk_d = chunk_nx_q;
            if (from_mem) begin
              // The packet's data region is used up.
              d_head_d = d_head_q + DW'(1);
              d_cnt_d = d_cnt_d - (DW+1)'(1);
              db_d = '0;
            end
            // The next packet starts at once when its data is at hand (no bubble
            // between packets of a message); PHdr waits for it otherwise.
            if (po_q + 32'(chunk) == m_len) begin
              // The message ends here when its last slot is passed with this beat
              // (the rest of a slot skipped at once); PEnd skips what is left.
              if (d_inline && dslots_q == d_slots) begin
                msg_done = 1'b1;
              end else if (d_inline && dslots_q + 8'd1 == d_slots && s_slot_ok) begin
                s_adv_beat = 1'b0;
                s_adv_slot = 1'b1;
                msg_done = 1'b1;
              end else if (!d_inline && ps_beat_q == '0) begin
                msg_done = 1'b1;
              end else begin
                ps_d = PEnd;
              end
            end else if (next_ready) begin
              ob_d = '0;
              hdr_pend_d = !is_copy;
            end else begin
              ps_d = PHdr;
            end
          end
        end
      end
      PEnd: begin
        // Skip to the slot after the descriptor's last one, a slot per cycle.
        if (ps_beat_q != '0 || dslots_q != d_slots) begin
          if (s_slot_ok) begin
            s_adv_slot = 1'b1;
            dslots_d = dslots_q + 8'd1;
            msg_done = dslots_q + 8'd1 == d_slots;
          end
        end else begin
          msg_done = 1'b1;
        end
      end
      PErr: begin
        err_d[act_q] = 1'b1;
        code_d[act_q] = perr_q;
        ev_err[act_q] = 1'b1;
        dmsg_d = 1'b0;
        hold_d = 1'b0;
        ps_d = PDrain;
      end
      PDrain: begin
        // Free the data regions once their reads have arrived; then the turn ends (its
        // slot regions are dropped between turns).
        if (d_cnt_q != '0 && rdone[d_reg]) begin
          d_head_d = d_head_q + DW'(1);
          d_cnt_d = d_cnt_d - (DW+1)'(1);
        end
        if (d_cnt_q == '0) turn_end = 1'b1;
      end
      default: ps_d = PIdle;
    endcase

    if (msg_start && !fits && !fon_act) begin
      // The message reaches past the slots read for this turn and the turn's reads are
      // over: the turn ends before it, and the FIFO's next turn reads it whole.
      need_d[act_q] = d_slots;
      turn_end = 1'b1;
    end else if (msg_start && la_held && !la_same) begin
      // The look-ahead read for a message that is not this one: drop its data; the
      // FIFO's next turn starts at this descriptor again.
      dmsg_d = 1'b0;
      hold_d = 1'b0;
      ps_d = PDrain;
    end else if (msg_start) begin
      hold_d = !fits;
      po_d = '0;
      chunk_d = chunk0;
      dfo_d = la_held ? la_dfo_q : '0;  // reads the look-ahead issued are this message's
      db_d = '0;
      ob_d = '0;
      dmsg_d = from_mem;
      hdr_pend_d = !is_copy;
      ps_d = d_inline ? PBeats : PHdr;
    end
    // A message done: the head passes it, and in the same cycle the next descriptor
    // of the turn is begun (PDesc ends the turn if there is none).
    if (msg_done) begin
      head_d[act_q] = desc_end;
      dmsg_d = 1'b0;
      hold_d = 1'b0;
      dbeat_d = '0;
      ps_d = PDesc;
    end

    // Parse position: the next beat, or the start of the next slot; leaving a
    // region frees it.
    if (s_adv_beat || s_adv_slot) begin
      if (s_adv_slot || 32'(ps_beat_q) == SlotBeats - 1) begin
        ps_beat_d = '0;
        if (ps_slot_q + RsW'(1) == nslots_q[s_head_q]) begin
          ps_slot_d = '0;
          s_head_d = s_head_q + SW'(1);
          s_cnt_d = s_cnt_d - (SW+1)'(1);
        end else begin
          ps_slot_d = ps_slot_q + RsW'(1);
        end
        if (s_adv_beat) dslots_d = dslots_d + 8'd1;
      end else begin
        ps_beat_d = ps_beat_q + SbW'(1);
      end
    end
    if (s_issue) s_cnt_d = s_cnt_d + (SW+1)'(1);
    if (d_issue) d_cnt_d = d_cnt_d + (DW+1)'(1);
    // A turn never ends with data regions held (the look-ahead's): they drain first.
    if (turn_end && d_cnt_d != '0) begin
      turn_end = 1'b0;
      dmsg_d = 1'b0;
      hold_d = 1'b0;
      ps_d = PDrain;
    end
    la_reset = msg_start || turn_end || ps_d == PDrain;
    // The parser's turn ends: what is left of its regions is dropped between turns.
    if (turn_end) begin
      turn_d[act_q] = 1'b0;
      hold_d = 1'b0;
      ps_slot_d = '0;
      ps_beat_d = '0;
      ps_d = PIdle;
    end

    // Fetcher: a turn ends when the parser ended it, when its FIFO stopped, when
    // another FIFO waits and the turn has read its slots or reached the tail, or when
    // the FIFO is empty and all of it is served; then the next FIFO's turn starts.
    // Apart from the parser's end, this is seen from the registers, in the cycle after
    // the read that made it so: no read's size and pointer sums lead into the turns.
    if (f_on_q) begin
      if ((turn_end && fon_act) ||
          (!hold_d && (f_stop || (pick[FifoW] && (f_cnt_q >= f_lim_q || to_tail == 16'd0)) ||
                       (to_tail == 16'd0 && f_ptr == f_head)))) begin
        f_on_d = 1'b0;
        // A turn that read nothing never reaches the parser.
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

  for (genvar i = 0; i < NumFifos; i++) begin : gen_work
    assign stopped[i] = err_q[i] || !enable_i[i] || rst_pend_q[i];
    // A ring of size 0 holds nothing (every doorbell is outside it). A reset arriving
    // puts the pointers back in the ring.
    assign ring_bad[i] = !stopped[i] && !reset_i[i] && (size_q[i] == '0 ? head_q[i] != tail_q[i]
                                                         : head_q[i] >= size_q[i] || tail_q[i] >= size_q[i]);
    assign has_work[i] = !stopped[i] && !ring_bad[i] && head_q[i] != tail_q[i];
    assign size_d[i] = (!turn_q[i] && (!enable_i[i] || head_q[i] == tail_q[i])) ? size_i[i] : size_q[i];
  end

  // Completion intake registers.
  // Region beats written by a completion up to and including this beat.
  logic [31:0] c_written;
  assign c_written = (32'(c_beat_q) > CplHdrBeats) ? 32'(c_beat_q) - CplHdrBeats : 32'd0;
  always_comb begin
    c_beat_d = c_beat_q;
    c_reg_d = c_skip ? c_reg_q : c_reg;
    c_status_d = c_status;
    c_len_d = c_len;
    c_prev_d = c_prev_q;
    c_flush_d = 1'b0;
    c_drop_d = c_drop_q;
    c_wb_d = c_wb_q;
    ram_we = 1'b0;
    ram_waddr = RamW'(c_reg) * RamW'(RegBeats) + RamW'(c_wb_q);
    ram_wdata = (c_prev_q >> (8 * CplSkip)) | (s_cpl_tdata << (8 * (Bpb - CplSkip)));
    if (c_flush_q) begin
      ram_we = 1'b1;
      ram_waddr = RamW'(c_reg_q) * RamW'(RegBeats) + RamW'(c_wb_q);
      ram_wdata = c_prev_q >> (8 * CplSkip);
    end else if (c_take && c_skip) begin
      c_beat_d = s_cpl_tlast ? '0 : c_beat_q + CbW'(1);
      c_drop_d = !s_cpl_tlast;
    end else if (c_take) begin
      if (c_beat_q == CbW'(TagBeat)) c_wb_d = RbW'(got_bytes_q[c_reg] / 13'(Bpb));
      if (32'(c_beat_q) > CplHdrBeats) begin
        ram_we = 1'b1;
        c_wb_d = c_wb_q + RbW'(1);
      end
      c_prev_d = s_cpl_tdata;
      c_beat_d = c_beat_q + CbW'(1);
      if (s_cpl_tlast) begin
        c_beat_d = '0;
        // Data bytes still in this beat's upper lanes: one more write.
        c_flush_d = 32'(c_len) > c_written * Bpb;
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
      ps_q <= PIdle;
      rts_q <= 1'b0;
      act_q <= '0;
      rr_q <= '0;
      turn_q <= '0;
      fp_q <= '0;
      need_q <= '0;
      rfifo_q <= '0;
      rfirst_q <= '0;
      f_on_q <= 1'b0;
      s_fresh_q <= 1'b0;
      f_fifo_q <= '0;
      f_first_q <= 1'b0;
      f_cnt_q <= '0;
      f_lim_q <= '0;
      hold_q <= 1'b0;
      ps_slot_q <= '0;
      ps_beat_q <= '0;
      dbeat_q <= '0;
      dslots_q <= '0;
      po_q <= '0;
      dfo_q <= '0;
      db_q <= '0;
      ob_q <= '0;
      perr_q <= '0;
      stomp_q <= 1'b0;
      offered_q <= 1'b0;
      hdr_pend_q <= 1'b0;
      dmsg_q <= 1'b0;
      la_q <= LaRead;
      la_beat_q <= '0;
      la_rd_q <= 1'b0;
      la_dfo_q <= '0;
      rq_bytes_q <= '0;
      got_bytes_q <= '0;
      wbeats_q <= '0;
      rerr_q <= '0;
      nslots_q <= '0;
      s_alloc_q <= '0;
      s_head_q <= '0;
      s_cnt_q <= '0;
      d_alloc_q <= '0;
      d_head_q <= '0;
      d_cnt_q <= '0;
      c_beat_q <= '0;
      c_reg_q <= '0;
      c_status_q <= '0;
      c_len_q <= '0;
      c_flush_q <= 1'b0;
      c_drop_q <= 1'b0;
      c_wb_q <= '0;
    end else begin
      head_q <= head_d;
      tail_q <= tail_d;
      size_q <= size_d;
      err_q <= err_d;
      code_q <= code_d;
      rst_pend_q <= rst_pend_d;
      ps_q <= ps_d;
      rts_q <= is_rts;
      act_q <= act_d;
      rr_q <= rr_d;
      turn_q <= turn_d;
      fp_q <= fp_d;
      need_q <= need_d;
      rfifo_q <= rfifo_d;
      rfirst_q <= rfirst_d;
      f_on_q <= f_on_d;
      s_fresh_q <= f_on_q && !s_issue;
      f_fifo_q <= f_fifo_d;
      f_first_q <= f_first_d;
      f_cnt_q <= f_cnt_d;
      f_lim_q <= f_lim_d;
      hold_q <= hold_d;
      ps_slot_q <= ps_slot_d;
      ps_beat_q <= ps_beat_d;
      dbeat_q <= dbeat_d;
      dslots_q <= dslots_d;
      po_q <= po_d;
      dfo_q <= dfo_d;
      db_q <= db_d;
      ob_q <= ob_d;
      perr_q <= perr_d;
      stomp_q <= stomp_d;
      offered_q <= beat_valid && !beat_take;
      hdr_pend_q <= hdr_pend_d;
      dmsg_q <= dmsg_d;
      la_q <= la_reset ? LaRead : la_d;
      la_beat_q <= la_reset ? '0 : la_beat_d;
      la_rd_q <= la_rd;
      la_dfo_q <= la_reset ? '0 : la_dfo_d;
      rq_bytes_q <= rq_bytes_d;
      got_bytes_q <= got_bytes_d;
      wbeats_q <= wbeats_d;
      rerr_q <= rerr_d;
      nslots_q <= nslots_d;
      s_alloc_q <= s_alloc_d;
      s_head_q <= s_head_d;
      s_cnt_q <= s_cnt_d;
      d_alloc_q <= d_alloc_d;
      d_head_q <= d_head_d;
      d_cnt_q <= d_cnt_d;
      c_beat_q <= c_beat_d;
      c_reg_q <= c_reg_d;
      c_status_q <= c_status_d;
      c_len_q <= c_len_d;
      c_flush_q <= c_flush_d;
      c_drop_q <= c_drop_d;
      c_wb_q <= c_wb_d;
    end
  end
  // Wide datapath registers: no reset.
  always_ff @(posedge clk_i) begin
    desc_q <= desc_d;
    chunk_q <= chunk_d;
    fits_q <= fits_c;
    s_addr_q <= s_addr_c;
    s_nslots_q <= s_nslots_c;
    chunk_nx_q <= chunk_nx;
    chk_q <= chk_c;
    rts_pre_q <= rts_c;
    la_same_q <= la_same_c;
    la_desc_q <= la_desc_d;
    la_addr_q <= la_addr_d;
    prev_q <= prev_d;
    c_prev_q <= c_prev_d;
  end

  assign head_o = head_q;
  assign tail_o = tail_q;
  assign size_o = size_q;
  assign err_o = err_q;
  assign err_code_o = code_q;
  assign busy_o = turn_q;
  assign ev_err_o = ev_err;
  logic unused;
  assign unused = ^{s_cpl_tkeep, d_flags[7:4], cp_last[11:0]};

  `NI_ASSERT_AXIS_STABLE(DmaHdrStable_A, out_hdr_valid_o, out_hdr_ready_i, out_hdr_o)
  `NI_ASSERT_AXIS_STABLE(DmaBeatStable_A, out_beat_valid_o, out_beat_ready_i, out_beat_o)
  `NI_ASSERT_AXIS_STABLE(DmaLocStable_A, loc_beat_valid_o, loc_beat_ready_i, loc_beat_o)
  `NI_ASSERT_AXIS_STABLE(DmaRawHdrStable_A, raw_hdr_valid_o, raw_hdr_ready_i, out_hdr_o)
  `NI_ASSERT_AXIS_STABLE(DmaRawBeatStable_A, raw_beat_valid_o, raw_beat_ready_i, out_beat_o)
  `NI_ASSERT(DmaRawBeatAfterHdr_A, !(raw_beat_valid_o && raw_beat_ready_i) ||
                                    !hdr_pend_q || (raw_hdr_valid_o && raw_hdr_ready_i))
  `NI_ASSERT(DmaBeatAfterHdr_A, !(out_beat_valid_o && out_beat_ready_i) ||
                                 !hdr_pend_q || (out_hdr_valid_o && out_hdr_ready_i))
  // A turn the parser or the fetcher is in is held in turn_q.
  `NI_ASSERT(DmaParserTurnHeld_A, ps_q == PIdle || turn_q[act_q])
  `NI_ASSERT(DmaFetchTurnHeld_A, !f_on_q || turn_q[f_fifo_q])
  // A turn's head and next slot read lie inside the ring in use.
  `NI_ASSERT(DmaFetchInRing_A, !f_on_q || (f_ptr < f_size && f_head < f_size))
  // The registered packet size is the one computed from the packet's offset.
  `NI_ASSERT(DmaChunkAhead_A, !(DecEarly && (ps_q == PHdr || ps_q == PBeats)) || chunk_q == chunk_c)
  // The registered fits is current where it can end a turn.
  `NI_ASSERT(DmaFitsCurrent_A, !(DecEarly && msg_start && !fon_act) || fits_q == fits_c)
  // A completion writes a region in use, never the one a read takes in the same cycle.
  logic c_wr;
  logic [3:0] c_wr_reg;
  assign c_wr = c_flush_q || (c_take && !c_skip && 32'(c_beat_q) > CplHdrBeats);
  assign c_wr_reg = c_flush_q ? c_reg_q : c_reg;
  `NI_ASSERT(DmaCplRegionInUse_A, !(c_wr && ((s_issue && c_wr_reg == 4'(s_alloc_q)) ||
                                             (d_issue && c_wr_reg == d_reg_of(d_alloc_q)))))
  // Between messages only the look-ahead holds data regions; between turns none.
  `NI_ASSERT(DmaLaRegions_A, !((ps_q == PDesc || ps_q == PCheck) && d_cnt_q != '0) || la_held)
  `NI_ASSERT(DmaIdleRegions_A, ps_q != PIdle || d_cnt_q == '0)
  // A message being served takes fewer slots than its ring has (it was checked against
  // the slots filled), so the head it moves to stays in the ring (make formal, dma_rings).
  `NI_ASSERT(DmaMsgInRing_A, !(ps_q == PHdr || ps_q == PBeats || ps_q == PEnd) ||
                             (d_slots != 8'd0 && 16'(d_slots) < a_size))
  `NI_ASSERT_AXIS_STABLE(DmaRdStable_A, rd_valid_o, rd_ready_i, {rd_addr_o, rd_bytes_o, rd_tag_o})
  // A completion taken in is one a region waits for, and never more than it asked for.
  `NI_ASSERT(DmaCplFits_A, !(c_take && !c_skip && s_cpl_tlast) ||
                           (32'(c_reg) < NumReg && got_bytes_q[c_reg] + c_len <= rq_bytes_q[c_reg]))
endmodule

`default_nettype wire

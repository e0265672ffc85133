// SPDX-License-Identifier: Apache-2.0
// NI package: TLP and fabric packet constants, header builders, CRC byte steps.
`default_nettype none

package ni_pkg;

  // ---------------------------------------------------------------- TLP (host port)
  // Fmt/Type byte (TLP byte 0) of the kinds the NI knows. See docs/formats.md.
  localparam logic [7:0] TLP_MRD64   = 8'h20;  // Fmt 001 Type 00000, 4DW header
  localparam logic [7:0] TLP_MWR64   = 8'h60;  // Fmt 011 Type 00000, 4DW header
  localparam logic [7:0] TLP_MRD32   = 8'h00;  // 3DW memory requests (ni_host_widen makes them 4DW)
  localparam logic [7:0] TLP_MWR32   = 8'h40;
  localparam logic [7:0] TLP_CPL     = 8'h0A;  // Fmt 000 Type 01010
  localparam logic [7:0] TLP_CPLD    = 8'h4A;  // Fmt 010 Type 01010
  localparam logic [7:0] TLP_FADD64  = 8'h6C;  // Fmt 011 Type 01100
  localparam logic [7:0] TLP_SWAP64  = 8'h6D;  // Fmt 011 Type 01101
  localparam logic [7:0] TLP_CAS64   = 8'h6E;  // Fmt 011 Type 01110
  localparam logic [7:0] TLP_DMWR64  = 8'h7B;  // Fmt 011 Type 11011: write that asks for confirmation

  localparam logic [2:0] CPL_SC = 3'b000;  // successful completion
  localparam logic [2:0] CPL_UR = 3'b001;  // unsupported request
  localparam logic [2:0] CPL_CA = 3'b100;  // completer abort: the NI gave the request up

  localparam int unsigned TlpHdrBytes = 16;  // 4DW request header
  localparam int unsigned CplHdrBytes = 12;  // 3DW completion header
  // Beats ni_host_rx holds besides its input queue: the skid register behind the queue
  // (2), a beat held for a digest (1), its output queue (2). nic_top's request room counts them.
  localparam int unsigned HostRxHeldBeats = 5;
  localparam int unsigned AmoCplBytes = 28;  // completion of an atomic: 12 + a result of up to 16 (CAS 128)

  // TLP type byte of an AtomicOp (FetchAdd, Swap, CAS).
  function automatic logic is_atomic(input logic [7:0] ft);
    is_atomic = ft == TLP_FADD64 || ft == TLP_SWAP64 || ft == TLP_CAS64;
  endfunction

  // A 4 DW memory request header (MRd, MWr), network byte order, byte p at [8p +: 8]:
  // Length len_dw (0 = 1024 DW), tag, all bytes enabled (Last BE 0 for one DW) and a
  // DW-aligned address. The NI's own requests and the MWr of a continuation use it.
  function automatic logic [TlpHdrBytes*8-1:0] mem_req_header(
      input logic [7:0] ft, input logic [9:0] len_dw, input logic [15:0] reqid,
      input logic [7:0] tag, input logic [63:0] addr);
    logic [TlpHdrBytes*8-1:0] h;
    h = '0;
    h[0*8 +: 8] = ft;
    h[2*8 +: 8] = {6'h0, len_dw[9:8]};
    h[3*8 +: 8] = len_dw[7:0];
    h[4*8 +: 8] = reqid[15:8];
    h[5*8 +: 8] = reqid[7:0];
    h[6*8 +: 8] = tag;
    h[7*8 +: 8] = (len_dw == 10'd1) ? 8'h0F : 8'hFF;  // Last BE, First BE
    for (int k = 0; k < 8; k++) h[(8 + k)*8 +: 8] = addr[(7 - k)*8 +: 8];
    mem_req_header = h;
  endfunction

  // A 3 DW completion header (Cpl, CplD), network byte order, byte p at [8p +: 8]:
  // Length len_dw, completer ID, status, Byte Count (12 bits), requester ID, tag, lower
  // address. The NI's own completions and a UR answer tunneled to a peer use it. The
  // tag has 10 bits: the requester's 10-bit tag keeps its bits 9 and 8 in byte 1 (T9 at
  // bit 7, T8 at bit 3, PCIe 4.0 and later).
  function automatic logic [CplHdrBytes*8-1:0] cpl_header(
      input logic [7:0] ft, input logic [7:0] len_dw, input logic [15:0] cpl_id, input logic [2:0] status,
      input logic [11:0] byte_count, input logic [15:0] reqid, input logic [9:0] tag, input logic [6:0] laddr);
    logic [CplHdrBytes*8-1:0] h;
    h = '0;
    h[0*8 +: 8] = ft;
    h[1*8 + 7] = tag[9];
    h[1*8 + 3] = tag[8];
    h[3*8 +: 8] = len_dw;
    h[4*8 +: 8] = cpl_id[15:8];
    h[5*8 +: 8] = cpl_id[7:0];
    h[6*8 +: 8] = {status, 1'b0, byte_count[11:8]};
    h[7*8 +: 8] = byte_count[7:0];
    h[8*8 +: 8] = reqid[15:8];
    h[9*8 +: 8] = reqid[7:0];
    h[10*8 +: 8] = tag[7:0];
    h[11*8 +: 8] = {1'b0, laddr};
    cpl_header = h;
  endfunction

  // TLP type byte of a completion, with or without data.
  function automatic logic is_cpl(input logic [7:0] ft);
    is_cpl = ft == TLP_CPL || ft == TLP_CPLD;
  endfunction

  // A deferrable memory write: the write that asks for confirmation.
  function automatic logic is_dmwr(input logic [7:0] ft);
    is_dmwr = ft == TLP_DMWR64;
  endfunction

  // TLP type byte of a 4 DW memory request the NI serves and makes (MRd, MWr, an
  // AtomicOp, DMWr); its 3 DW form is the same byte with Fmt bit 0 (bit 5) clear.
  function automatic logic is_mem_req(input logic [7:0] ft);
    is_mem_req = ft == TLP_MRD64 || ft == TLP_MWR64 || is_atomic(ft) || is_dmwr(ft);
  endfunction

  // ---------------------------------------------------------------- fabric packets
  localparam int unsigned NumVc = 2;           // VC0 requests, VC1 responses
  localparam int unsigned FabHdrBytes = 32;    // LRH 8 + BTH 12 + TEH 12
  localparam int unsigned NakHdrBytes = 24;    // LRH 8 + BTH 12 + AETH 4
  localparam int unsigned TrailerBytes = 6;    // ICRC 4 + VCRC 2
  localparam int unsigned TxHdrBytes = 48;     // room for the longest header tx_header builds (44)

  localparam logic [7:0] OP_TUNNEL_REQ = 8'hC0;  // manufacturer-specific: tunneled request TLP
  localparam logic [7:0] OP_TUNNEL_RSP = 8'hC1;  // manufacturer-specific: tunneled completion TLP
  localparam logic [7:0] OP_RC_ACK     = 8'h11;  // IB RC Acknowledge (AETH carries ACK/NAK)
  // Manufacturer-specific: continuation of the previous write from the same source
  // (LRH + 8-byte CTH + data, no TEH or TLP header; docs/formats.md).
  localparam logic [7:0] OP_TUNNEL_CONT = 8'hC2;
  localparam int unsigned ContHdrBytes = 16;   // LRH 8 + CTH 8: takes the TLP header's place

  localparam logic [7:0] AETH_ACK           = 8'h00;  // ACK: this PSN and all before it arrived
  localparam logic [7:0] AETH_NAK_PSN_SEQ   = 8'h60;  // NAK: this PSN is the one expected next
  localparam logic [7:0] AETH_NAK_INV_REQ   = 8'h61;  // NAK: invalid request (stomped by its sender)
  localparam logic [7:0] AETH_NAK_REM_ACCESS = 8'h62; // NAK: remote access error (memory ID, bounds)
  // RNR NAK (IB: receiver not ready, syndrome 001xxxxx): this PSN found its reception
  // FIFO full; it and what follows are resent after the sender's RNR_DELAY.
  localparam logic [7:0] AETH_RNR = 8'h20;

  // Answers the fabric receive side reports to the sender side (ni_retx).
  localparam logic [2:0] REL_ACK = 3'd0;      // ACK: this PSN and all before it arrived
  localparam logic [2:0] REL_NAK_SEQ = 3'd1;  // this PSN is expected next: resend it now
  localparam logic [2:0] REL_RSP = 3'd2;      // the response to the read or atomic with this PSN
  localparam logic [2:0] REL_REFUSED = 3'd3;  // this PSN arrived and was refused (NAK 0x61, 0x62)
  localparam logic [2:0] REL_RNR = 3'd4;      // this PSN's receiver was not ready: resend it and the rest later

  localparam logic [7:0] TEH_RX_XLATE = 8'h01;  // TEH flags: the receiver translates
  localparam logic [7:0] TEH_SYNC = 8'h02;      // TEH flags: the sequence restarts at this PSN
  localparam logic [7:0] TEH_CONF_NI = 8'h04;   // TEH flags: a DMWr the receiving NI confirms (ACK)
  localparam logic [7:0] TEH_CONF_MEM = 8'h08;  // TEH flags: a DMWr the receiving memory confirms
  localparam logic [7:0] TEH_DMA = 8'h10;       // TEH flags: a packet of the DMA engine (no continuation context)
  localparam logic [7:0] TEH_RFIFO = 8'h20;     // TEH flags: lands in the reception FIFO named by the memory ID field
  localparam logic [7:0] TEH_RCNT = 8'h40;      // TEH flags: decrement reception counter TEH byte 21 by the data bytes
  localparam logic [7:0] TEH_RGET = 8'h80;      // TEH flags: a remote get: one descriptor for the remote-fed injection FIFO named by the memory ID field

  // What a tag of ni_rd_tracker stands for: the request forwarded to local memory.
  localparam logic [1:0] TRK_READ = 2'd0;
  localparam logic [1:0] TRK_ATOMIC = 2'd1;    // its result is kept for a resend (ni_amo_cache)
  localparam logic [1:0] TRK_CONF_MEM = 2'd2;  // a memory-confirmed DMWr: kept like an atomic's
  localparam logic [1:0] TRK_CONF_NI = 2'd3;   // a DMWr this NI confirmed: memory's answer ends here

  // Confirmation point of a window's confirmed writes (ART_CTRL.conf_at).
  localparam logic [1:0] CONF_AT_SENDER = 2'd0;  // the sending NI, at once (it guarantees delivery)
  localparam logic [1:0] CONF_AT_RX_NI = 2'd1;   // the receiving NI, once it has the packet
  localparam logic [1:0] CONF_AT_MEM = 2'd2;     // the receiving memory system (3 acts as 2)
  localparam int unsigned ConfCplBytes = 20;     // write confirmation: CplD with the 8-byte address

  localparam logic [15:0] DefaultPKey = 16'hFFFF;
  localparam logic [23:0] TunnelQp = 24'h000010;
  localparam logic [1:0] LnhIbaLocal = 2'b10;  // LRH next header: BTH follows
  localparam logic [1:0] LnhRaw = 2'b00;       // LRH next header: raw header (RWH) and a datagram
  localparam int unsigned RawHdrBytes = 12;    // LRH 8 + RWH 4 (reserved 16 bits, EtherType)
  localparam int unsigned RawTrailerBytes = 2; // VCRC only: a raw packet has no ICRC

  // The header descriptor a source hands toward the fabric transmit framer: the fields
  // it decides on; the framer builds the header bytes from it (tx_header) after its
  // pick, so that the sources, ni_wc, ni_req_merge and ni_retx carry no header bytes.
  // Kinds: a tunneled request (LRH, BTH, TEH, then the TLP), its continuation (LRH,
  // CTH, then data), a tunneled response (LRH, BTH, TEH, then the completion), a UR
  // answer made by the receiver (LRH, BTH, TEH and the completion's 12 bytes, no
  // payload), an ACK or NAK (LRH, BTH, AETH), a raw packet (LRH and RWH are in its
  // beats).
  localparam logic [2:0] TX_REQ = 3'd0;
  localparam logic [2:0] TX_CONT = 3'd1;
  localparam logic [2:0] TX_RSP = 3'd2;
  localparam logic [2:0] TX_UR = 3'd3;
  localparam logic [2:0] TX_ACK = 3'd4;
  localparam logic [2:0] TX_RAW = 3'd5;
  typedef struct packed {
    logic [2:0] kind;
    // Not sent: original page minus page as tunneled (ni_retx translates a write
    // confirmation's address back to the requester's address space with it).
    logic [51:0] back_page;
    logic vc;
    logic [15:0] dlid;
    logic [10:0] pkt_words;  // LRH PktLen
    logic [23:0] psn;        // unless stamp_psn
    logic stamp_psn;
    // TX_REQ, TX_RSP: TEH flags; TX_ACK: the AETH syndrome; TX_UR: the lower address (6:0).
    logic [7:0] flags;
    logic [7:0] aux8;        // TX_REQ, TX_RSP: TEH byte 21 (reception counter); TX_UR: the tag
    logic [15:0] memid;      // TX_REQ, TX_RSP: TEH bytes 22-23; TX_RAW: EtherType; TX_UR: the requester ID
    logic [15:0] key;        // TX_REQ, TX_RSP: TEH bytes 24-25; TX_UR: the byte count (11:0), tag bits 9:8 (13:12)
  } tx_desc_t;
  localparam int unsigned TxDescW = 3 + 52 + 1 + 16 + 11 + 24 + 1 + 8 + 8 + 16 + 16;

  // How many header bytes the framer sends for a descriptor of this kind before its
  // beats (the framer does not use it for a continuation or a raw packet: their
  // headers replace or are the first bytes of their beats).
  function automatic logic [5:0] tx_header_len(input logic [2:0] kind);
    tx_header_len = (kind == TX_ACK) ? 6'(NakHdrBytes) : (kind == TX_UR) ? 6'(FabHdrBytes + 12) :
                    (kind == TX_RAW) ? 6'(RawHdrBytes) : 6'(FabHdrBytes);
  endfunction

  // The header bytes of a descriptor (byte p at [8p +: 8]), SLID and P_Key stamped,
  // the framer's PSN if the descriptor asks for it (stamp_psn), a UR answer's completer
  // ID the NI's.
  function automatic logic [TxHdrBytes*8-1:0] tx_header(input tx_desc_t d, input logic [15:0] slid,
                                                         input logic [15:0] pkey, input logic [23:0] own_psn,
                                                         input logic [15:0] cpl_id);
    logic [TxHdrBytes*8-1:0] h;
    logic [23:0] psn;
    logic unused;
    unused = ^d.back_page;  // ni_retx's, not sent
    psn = d.stamp_psn ? own_psn : d.psn;
    h = '0;
    h[0 +: 64] = lrh(d.vc, d.kind == TX_RAW ? LnhRaw : LnhIbaLocal, d.dlid, d.pkt_words, slid);
    if (d.kind == TX_RAW) begin
      h[10*8 +: 8] = d.memid[15:8];  // RWH: EtherType
      h[11*8 +: 8] = d.memid[7:0];
    end else begin
      h[8*8 +: 8] = (d.kind == TX_ACK) ? OP_RC_ACK : (d.kind == TX_CONT) ? OP_TUNNEL_CONT :
                    (d.kind == TX_REQ) ? OP_TUNNEL_REQ : OP_TUNNEL_RSP;
      h[10*8 +: 8] = pkey[15:8];
      h[11*8 +: 8] = pkey[7:0];
      if (d.kind == TX_CONT) begin
        // CTH: P_Key, the PSN in the DestQP bytes (docs/formats.md)
        h[13*8 +: 8] = psn[23:16];
        h[14*8 +: 8] = psn[15:8];
        h[15*8 +: 8] = psn[7:0];
      end else begin
        h[13*8 +: 8] = TunnelQp[23:16];
        h[14*8 +: 8] = TunnelQp[15:8];
        h[15*8 +: 8] = TunnelQp[7:0];
        h[17*8 +: 8] = psn[23:16];
        h[18*8 +: 8] = psn[15:8];
        h[19*8 +: 8] = psn[7:0];
      end
      if (d.kind == TX_ACK) h[20*8 +: 8] = d.flags;  // AETH syndrome, MSN 0
      if (d.kind == TX_REQ || d.kind == TX_RSP) begin  // TEH
        h[20*8 +: 8] = d.flags;
        h[21*8 +: 8] = d.aux8;
        h[22*8 +: 8] = d.memid[15:8];
        h[23*8 +: 8] = d.memid[7:0];
        h[24*8 +: 8] = d.key[15:8];
        h[25*8 +: 8] = d.key[7:0];
      end
      if (d.kind == TX_UR) begin  // the UR completion after the TEH
        h[32*8 +: CplHdrBytes*8] = cpl_header(TLP_CPL, 8'd0, cpl_id, CPL_UR, d.key[11:0], d.memid,
                                              {d.key[13:12], d.aux8}, d.flags[6:0]);
      end
    end
    tx_header = h;
  endfunction

  // A completion the NI makes itself toward the host (ni_host_tx): Cpl with a status
  // (UR, CA), a write confirmation (CplD whose data is the written address), or an
  // interrupt (MWr of `data` to `addr`).
  localparam logic [1:0] OWN_CPL = 2'd0;
  localparam logic [1:0] OWN_CONF = 2'd1;
  localparam logic [1:0] OWN_IRQ = 2'd2;
  typedef struct packed {
    logic [1:0] kind;
    logic [2:0] status;  // OWN_CPL: CPL_UR or CPL_CA; OWN_CONF: CPL_SC
    logic [15:0] reqid;
    logic [9:0] tag;     // the requester's tag, 10 bits (PCIe 10-bit tags)
    logic [63:0] addr;   // OWN_CPL: bits 6:0 are the lower address
    logic [31:0] data;   // OWN_IRQ only
  } own_cpl_t;

  // What the write combiner needs to know of a tunneled request (docs/architecture.md).
  typedef struct packed {
    logic wc;            // a posted write through a combining window, all bytes enabled
    logic [7:0] win;     // window index
    logic [63:0] addr;   // address as tunneled (after translation)
    logic [12:0] bytes;  // payload bytes
  } wc_meta_t;

  // The structs' widths, for FIFOs that carry them (Yosys takes no $bits of a type;
  // nic_top checks these against $bits under Verilator).
  localparam int unsigned OwnCplW = 2 + 3 + 16 + 10 + 64 + 32;
  localparam int unsigned WcMetaW = 1 + 8 + 64 + 13;

  // PSN a comes before b in the 24-bit circle (less than half the circle behind it).
  function automatic logic psn_before(input logic [23:0] a, input logic [23:0] b);
    logic [23:0] d;
    d = b - a;
    psn_before = d != 24'd0 && !d[23];
  endfunction

  // LRH (IBA local route header), network byte order; VL and SL both vc.
  function automatic logic [63:0] lrh(input logic vc, input logic [1:0] lnh, input logic [15:0] dlid,
                                      input logic [10:0] pkt_words, input logic [15:0] slid);
    logic [63:0] h;
    h[0*8 +: 8] = {3'b000, vc, 4'h0};             // VL, LVer
    h[1*8 +: 8] = {3'b000, vc, 2'b00, lnh};       // SL, rsvd, LNH
    h[2*8 +: 8] = dlid[15:8];
    h[3*8 +: 8] = dlid[7:0];
    h[4*8 +: 8] = {5'b0, pkt_words[10:8]};
    h[5*8 +: 8] = pkt_words[7:0];
    h[6*8 +: 8] = slid[15:8];
    h[7*8 +: 8] = slid[7:0];
    lrh = h;
  endfunction

  // The slot after tail in a ring of size slots (slot 0 after the last).
  function automatic logic [15:0] ring_step(input logic [15:0] tail, input logic [15:0] size);
    ring_step = (tail + 16'd1 >= size) ? 16'd0 : tail + 16'd1;
  endfunction
  // Whether a source or destination LID has a PSN sequence: LIDs 1..num_peers (a power of
  // two), held at index lid mod num_peers (LID 0 is never a node's, so LID num_peers
  // takes index 0).
  function automatic logic lid_has_peer(input logic [15:0] lid, input logic [15:0] num_peers);
    lid_has_peer = lid != 16'd0 && lid <= num_peers;
  endfunction

  // Reception-FIFO entry header (docs/formats.md#dma-descriptors), little-endian.
  function automatic logic [127:0] entry_header(input logic [15:0] src_lid, input logic [15:0] bytes,
                                                input logic [31:0] msg_len, input logic [31:0] offset,
                                                input logic [31:0] tag);
    entry_header = {tag, offset, msg_len, bytes, src_lid};
  endfunction

  // Lanes a beat's keep marks, for beats of up to 64 lanes (the caller zero-extends
  // its keep and takes the count at its own width).
  function automatic logic [6:0] keep_count(input logic [63:0] keep);
    keep_count = '0;
    for (int j = 0; j < 64; j++) keep_count = keep_count + 7'(keep[j]);
  endfunction

  // ---------------------------------------------------------------- CRCs
  // ICRC: CRC-32 (IEEE 802.3 polynomial, reflected, init all ones, final invert),
  // sent least significant byte first. VCRC: CRC-16 polynomial 0x100B, same conventions.
  // Reflected polynomials: the ICRC's (CRC-32) and the VCRC's (CRC-16), for
  // ni_crc_step and ni_crc_back.
  localparam logic [31:0] Crc32Poly = 32'hEDB88320;
  localparam logic [15:0] Crc16Poly = 16'hD008;

  // Byte of the packet as the ICRC sees it: variant fields (LRH VL, BTH resv8a) read as ones.
  function automatic logic [7:0] icrc_mask(input int unsigned pos, input logic [7:0] b);
    icrc_mask = (pos == 0) ? (b | 8'hF0) : ((pos == 12) ? 8'hFF : b);
  endfunction

endpackage

`default_nettype wire

// SPDX-License-Identifier: Apache-2.0
// Sender side of reliable delivery. Every unicast tunneled request gets the next
// PSN of its destination and leaves a copy (header record and TLP beats) in a
// slot until the destination answers it: a cumulative ACK for a write, the
// response for a read, atomic or memory-confirmed write. A slot whose timer runs
// out is resent from its copy; one that has been resent RETX_LIMIT times fails
// together with every other slot to that destination (an error completion for each
// read, atomic and confirmed write), and the next packet to it carries the resync
// flag. A write the receiving NI confirms (its ACK) gets its confirmation to the
// CPU from here. Packets to multicast LIDs pass through unretained; a unicast one to
// a LID without a PSN sequence is not sent and fails at once. An RNR NAK
// (the receiver's FIFO was full) makes the slot it names and every later one to
// that destination wait rnr_delay_i cycles, then resends them in order; those
// resends do not count against the limit and start the count anew. An answer takes
// effect in the cycle after ni_fab_rx reports it (ev_*_i are registered here):
// ni_fab_rx decides on a response from q_hit_o, so without the register one path ran
// receiver -> match -> receiver -> slot state. Rules and bounds:
// docs/architecture.md#reliable-delivery, #confirmed-writes and #reception-fifos.
`default_nettype none
`include "ni_assert.svh"

module ni_retx #(
  parameter int unsigned DataW = 64,
  parameter int unsigned NumSlots = 32,   // requests awaiting an answer
  parameter int unsigned SlotBeats = 34,  // beats of the largest request TLP
  parameter int unsigned NumPeers = 64,   // LIDs 1..NumPeers have a PSN sequence (ni_pkg::lid_has_peer)
  // 1: q_held_o, q_conf_o, q_back_o and q_cpl_o answer the query of the last cycle
  // (its match registered), for a receiver that holds its query a cycle before it
  // reads them (ni_fab_rx at 64 bits); 0: they answer this cycle's, as q_hit_o does.
  parameter int unsigned QueryReg = 0,
  localparam int unsigned Bpb = DataW / 8,
  localparam int unsigned KeepW = Bpb,
  localparam int unsigned BeatW = DataW + KeepW + 2,  // {bad, last, keep, data}
  localparam int unsigned SlotW = $clog2(NumSlots),
  localparam int unsigned PeerW = $clog2(NumPeers),
  localparam int unsigned BiW = $clog2(SlotBeats),
  // A beat's address in the copy memory is {slot, beat}: no multiplier in the
  // address path. 2048 x 74 bits at the defaults fills 9 ECP5 block RAMs, 1088 x 74
  // took 7.
  localparam int unsigned AddrW = SlotW + BiW
) (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic [31:0] timeout_i,  // cycles from a send to its resend; 0: never resend
  input  logic [7:0] limit_i,     // resends before a slot fails
  input  logic [31:0] rnr_delay_i, // cycles from an RNR NAK to the resend
  // Requests from the queue (ni_wc).
  input  ni_pkg::tx_desc_t in_hdr_i,
  input  logic in_hdr_valid_i,
  output logic in_hdr_ready_o,
  input  logic [BeatW-1:0] in_beat_i,
  input  logic in_beat_valid_i,
  output logic in_beat_ready_o,
  // To the framer.
  output ni_pkg::tx_desc_t out_hdr_o,
  output logic out_hdr_valid_o,
  input  logic out_hdr_ready_i,
  output logic [BeatW-1:0] out_beat_o,
  output logic out_beat_valid_o,
  input  logic out_beat_ready_i,
  // What the fabric receive side learned (ni_pkg::REL_*), at most one per cycle. A
  // response (REL_RSP) names the query of its cycle (q_lid_i, q_psn_i) and comes only
  // if q_held_o.
  input  logic ev_valid_i,
  input  logic [2:0] ev_kind_i,
  input  logic [15:0] ev_lid_i,
  input  logic [23:0] ev_psn_i,
  // Is a response from this LID with this PSN awaited? q_hit_o: now, from this cycle's
  // query; q_held_o: still, with QueryReg from the match of the last cycle's query
  // (what the response's outcome reads: no compare on its path).
  input  logic [15:0] q_lid_i,
  input  logic [23:0] q_psn_i,
  output logic q_hit_o,
  output logic q_held_o,
  // The awaited response answers a memory-confirmed write; its address goes back by
  // q_back_o pages (the window's translation when the write left).
  output logic q_conf_o,
  output logic [51:0] q_back_o,
  // ... and it must name the requester ID and tag of the request it answers.
  output logic [25:0] q_cpl_o,  // {requester ID, 10-bit tag}
  // To the CPU: error completion of a read, atomic or confirmed write that failed or
  // was refused; confirmation of a write the receiving NI confirmed.
  output ni_pkg::own_cpl_t fail_o,
  output logic fail_valid_o,
  input  logic fail_ready_i,
  output logic [SlotW:0] used_o,  // slots in use
  output logic pending_o,         // a slot is in use (an OR, where used_o is a count)
  output logic ev_retx_o,         // a resend started
  output logic ev_fail_o,         // a slot failed
  output logic ev_conf_o,         // a confirmation went to the CPU
  output logic ev_unsent_o        // an ACK or NAK named a PSN not sent to its source: ignored
);
  typedef enum logic [2:0] {StIdle, StNew, StResend, StPass, StRefuse} state_e;
  state_e state_q, state_d;
  logic [SlotW-1:0] cur_q, cur_d;
  logic [BiW-1:0] bi_q, bi_d;
  logic [31:0] now_q;

  // done: answered or failed, the report to the CPU (st) waits to go out.
  logic [NumSlots-1:0] valid_q, valid_d, np_q, np_d, due_q, due_d, done_q, done_d, amo_q, amo_d;
  logic [NumSlots-1:0] cni_q, cni_d, cmem_q, cmem_d;
  logic [NumSlots-1:0][2:0] st_q, st_d;
  // Each slot's destination as its PSN sequence's index (LID mod NumPeers; only LIDs
  // 1..NumPeers are taken): 6-bit keys where 16-bit LIDs were compared with every slot.
  logic [NumSlots-1:0][PeerW-1:0] peer_q;
  logic [NumSlots-1:0][23:0] psn_q;
  // When each slot was last sent and how often it was resent: memories (LUT RAM),
  // written at the slot sent and read at the slot the scan checks (below).
  logic [31:0] sent_mem_q [NumSlots];
  logic [7:0] tries_mem_q [NumSlots];
  logic [NumSlots-1:0] spent_q, spent_d;  // tries >= limit_i: its next run-out fails it
  // Waiting out an RNR NAK of its destination (resent then without counting a try).
  // When each destination's last RNR NAK came: a RAM (LUT RAM) written at the NAK's
  // source and read at the destination of the slot the scan checks. A slot waits
  // from its destination's last RNR NAK, also one sent while its destination waits.
  logic [NumSlots-1:0] rnr_q, rnr_d;
  logic [31:0] rnr_at_mem_q [NumPeers];
  // A copy of peer_q, read at the slot the scan checks and at the slot that fails (a
  // multiplexer of 32 slots' LIDs was 1.2k LUT4s).
  logic [PeerW-1:0] peer_mem_q [NumSlots];
  // The PSN each destination gets next: a RAM (LUT RAM on an FPGA) read and written at
  // the new request's destination only; a bit per destination makes one not sent to
  // since reset start at PSN 0. As flip-flops, 64 destinations' PSNs and their
  // multiplexer were about 1.5k flip-flops and as many LUT4s.
  logic [23:0] next_mem_q [NumPeers];
  logic [NumPeers-1:0] next_vld_q, next_vld_d;
  logic [23:0] next_cur;  // of the new request's destination
  logic [NumPeers-1:0] resync_q, resync_d;
  // The answer of the last cycle, acted on now; answered_q: the slots its response
  // (REL_RSP) answers, matched in that cycle (their report leaves with the response).
  logic ev_valid_q;
  logic [2:0] ev_kind_q;
  logic [PeerW-1:0] ev_peer_q;  // the answer's source (only sources with a PSN sequence count)
  logic [23:0] ev_psn_q;
  // The answer names a PSN sent to its source (before the one it gets next). One that
  // does not (a stale or forged ACK or NAK, ahead of the sequence) is ignored: as a
  // cumulative ACK it would release writes that never arrived.
  logic ev_sent, ev_act, ev_unsent_q;  // ev_act: an answer acted on (valid, for a PSN sent)
  logic [NumSlots-1:0] answered_q, live, q_match;
  // Kept as plain vectors: Yosys infers a memory from an array of vectors only. The
  // headers are read with a register: block RAM, which Yosys would not choose itself
  // for 32 entries (as LUT RAM they were 1.3k logic cells of the ECP5 NI).
  (* ram_style = "block" *) logic [ni_pkg::TxDescW-1:0] hdr_mem_q [NumSlots];
  logic [BeatW-1:0] beat_mem_q [NumSlots << BiW];
  // What a slot's report and its response need, read at one slot at a time (the slot
  // draining, the slot a query matched): memories with asynchronous reads, LUT RAM on
  // ECP5. As flip-flops, with a multiplexer per read, these 140 bits per slot were
  // 11k of ni_retx's 24k LUT4s at 32 slots.
  logic [51:0] back_mem_q [NumSlots];  // pages back to the requester's address
  logic [63:0] addr_mem_q [NumSlots];  // the request's address as tunneled
  logic [25:0] cpl_mem_q [NumSlots];   // {reqid, tag}: the tag has 10 bits (T9, T8, byte 6)

  // ------------------------------------------------------------ slot scan
  // A resend picks the slot allocated first among the candidates: within one
  // destination that is PSN order (PSNs are handed out as slots are allocated), so a
  // destination gets its PSNs in order again; across destinations the order does not
  // matter. The allocation order is kept as a matrix of one bit per pair of slots
  // (alloc_first_q), so the choice is a few gate levels wide instead of a chain of
  // 32-bit age comparisons through every slot (7.5 MHz on ECP5 before).
  // Timers are compared a cycle ahead (tmo_q, rnr_up_q), so the comparators sit off
  // the choice's path. They are checked for one slot per cycle (scan_q): a slot runs
  // out within NumSlots cycles after its time has come (RETX_TIMEOUT is thousands of
  // cycles). Two comparisons and the times in LUT RAM took the place of two 32-bit
  // subtractions per slot (about 2.5k logic cells at 32 slots).
  localparam int unsigned NumPairs = NumSlots * (NumSlots - 1) / 2;
  // Bit of the pair (i, j), i < j: 1 when slot i was allocated before slot j.
  function automatic int pair_bit(input int i, input int j);
    pair_bit = i * NumSlots - i * (i + 1) / 2 + (j - i - 1);
  endfunction
  logic [NumPairs-1:0] alloc_first_q, alloc_first_d;
  logic [NumSlots-1:0] tmo_q, tmo_d, rnr_up_q, rnr_up_d;
  logic [NumSlots-1:0] expired, failing, cand, cand_first;
  logic free_avail, cand_avail, ftrig_avail;
  logic [SlotW-1:0] free_slot, cand_slot, ftrig_slot, drain_slot;
  logic drain_avail;
  always_comb begin
    for (int i = 0; i < NumSlots; i++) begin
      // Awaiting its answer: not done, and not answered by the last cycle's response.
      live[i] = valid_q[i] && !done_q[i] && !answered_q[i];
      expired[i] = live[i] && (rnr_q[i] ? rnr_up_q[i] : tmo_q[i]);
      failing[i] = expired[i] && spent_q[i] && !rnr_q[i];  // its destination fails
      cand[i] = live[i] && (expired[i] || due_q[i]) && (!spent_q[i] || rnr_q[i]);
    end
    // cand_first: the one candidate no other candidate was allocated before.
    for (int i = 0; i < NumSlots; i++) begin
      cand_first[i] = cand[i];
      for (int j = 0; j < i; j++) begin
        if (cand[j] && alloc_first_q[pair_bit(j, i)]) cand_first[i] = 1'b0;
      end
      for (int j = i + 1; j < NumSlots; j++) begin
        if (cand[j] && !alloc_first_q[pair_bit(i, j)]) cand_first[i] = 1'b0;
      end
    end
    cand_avail = |cand;
    cand_slot = '0;
    for (int i = 0; i < NumSlots; i++) begin
      if (cand_first[i]) cand_slot = cand_slot | SlotW'(i);
    end
    free_avail = 1'b0;
    free_slot = '0;
    ftrig_avail = 1'b0;
    ftrig_slot = '0;
    drain_avail = 1'b0;
    drain_slot = '0;
    for (int i = NumSlots - 1; i >= 0; i--) begin
      if (!valid_q[i]) begin
        free_avail = 1'b1;
        free_slot = SlotW'(i);
      end
      if (failing[i]) begin
        ftrig_avail = 1'b1;
        ftrig_slot = SlotW'(i);
      end
      // A refused request's slot reports once its beats have passed.
      if (done_q[i] && !answered_q[i] && !(act_sink && cur_q == SlotW'(i))) begin
        drain_avail = 1'b1;
        drain_slot = SlotW'(i);
      end
    end
  end
  // The failing slot and its destination, registered: a failure acts a cycle after its
  // slot was found, if that slot is still failing, so the choice of the first failing
  // slot and the index read are off the compare with every slot.
  logic ftrig_q, fail_still;
  logic [SlotW-1:0] fslot_q;
  logic [PeerW-1:0] fail_peer_q;
  always_ff @(posedge clk_i) begin
    fslot_q <= ftrig_slot;
    fail_peer_q <= peer_mem_q[ftrig_slot];
  end
  assign fail_still = ftrig_q && failing[fslot_q];
  // A failure found is work found (fail_now leaves work_q out).
  `NI_ASSERT(FailIsWork_A, !ftrig_q || work_q)
  // The allocation order is a strict total order, so exactly one candidate is first.
  `NI_ASSERT(OneFirstCandidate_A, cand_first == '0 ? !cand_avail : (cand_first & (cand_first - 1'b1)) == '0)
`ifdef FORMAL
  // What makes the order total: no three slots in a cycle. The proofs need it as an
  // invariant (an arbitrary start state could hold a cycle); simulation checks the
  // consequence above, not the 5k triples of 32 slots every cycle.
  logic order_cyclic;
  always_comb begin
    order_cyclic = 1'b0;
    for (int i = 0; i < NumSlots; i++) begin
      for (int j = i + 1; j < NumSlots; j++) begin
        for (int k = j + 1; k < NumSlots; k++) begin
          if (alloc_first_q[pair_bit(i, j)] == alloc_first_q[pair_bit(j, k)] &&
              alloc_first_q[pair_bit(i, j)] != alloc_first_q[pair_bit(i, k)]) order_cyclic = 1'b1;
        end
      end
    end
  end
  `NI_ASSERT(AllocOrderAcyclic_A, !order_cyclic)
`endif

  always_comb begin
    used_o = '0;
    for (int i = 0; i < NumSlots; i++) used_o = used_o + (SlotW + 1)'(valid_q[i]);
  end
  assign pending_o = |valid_q;

  // ------------------------------------------------------------ new packets
  logic [15:0] in_dlid;
  logic [PeerW-1:0] in_peer;
  logic in_reliable, in_has_peer, take_new, take_resend, take_pass, take_refuse, fail_now;
  ni_pkg::tx_desc_t new_hdr;
  assign in_dlid = in_hdr_i.dlid;
  assign in_peer = in_dlid[PeerW-1:0];
  assign in_reliable = in_dlid[15:14] != 2'b11;  // multicast LIDs travel unsequenced
  // A unicast LID without a PSN sequence (0, above NumPeers) is refused: it takes a slot
  // as its beats pass (for its error completion), is not sent, and fails at once.
  assign in_has_peer = ni_pkg::lid_has_peer(in_dlid, 16'(NumPeers));
  // One atomic per destination in flight: the destination keeps only the last result
  // of each source for a resent duplicate (ni_amo_cache). Byte 0 (the TLP type) is
  // in the first beat at every width.
  logic in_amo, amo_busy, in_cni, in_cmem;
  assign in_cni = ni_pkg::is_dmwr(in_beat_i[7:0]) && (in_hdr_i.flags & ni_pkg::TEH_CONF_NI) != 8'h0;
  assign in_cmem = ni_pkg::is_dmwr(in_beat_i[7:0]) && !in_cni;
  // A memory-confirmed write counts as an atomic here: its answer is kept the same way.
  assign in_amo = ni_pkg::is_atomic(in_beat_i[7:0]) || in_cmem;
  // A destination waiting out an RNR NAK drops what it gets meanwhile: a new packet
  // to it waits with the others (it is sent now and resent after them).
  logic in_rnr;
  always_comb begin
    amo_busy = 1'b0;
    in_rnr = 1'b0;
    for (int i = 0; i < NumSlots; i++) begin
      amo_busy = amo_busy || (valid_q[i] && amo_q[i] && peer_q[i] == in_peer);
      in_rnr = in_rnr || (valid_q[i] && !done_q[i] && rnr_q[i] && peer_q[i] == in_peer);
    end
  end
  always_comb begin
    new_hdr = in_hdr_i;
    new_hdr.stamp_psn = 1'b0;
    new_hdr.psn = next_cur;
    new_hdr.flags[1] = resync_q[in_peer];  // TEH_SYNC
    // A continuation (kind TX_CONT) travels as LRH + CTH: the packet is 32 bytes (TEH,
    // TLP header) shorter. After a failure the destination restarts its sequence: the
    // packet goes out whole (a request), with the resync flag.
    if (in_hdr_i.kind == ni_pkg::TX_CONT) begin
      if (resync_q[in_peer]) begin
        new_hdr.kind = ni_pkg::TX_REQ;
      end else begin
        new_hdr.pkt_words = in_hdr_i.pkt_words - 11'((ni_pkg::FabHdrBytes + ni_pkg::TlpHdrBytes -
                                                      ni_pkg::ContHdrBytes) / 4);
      end
    end
  end

  // In Idle, in this order: fail the slots of a destination that stopped
  // answering, resend a slot, start a new packet. An offer the framer has not
  // taken yet stands (hold_q) until it is taken. A resend is picked one cycle
  // before it is offered (pick), so that its copy is read through the registered
  // read ports of the copy memories (block RAM). A pick not offered yet is dropped
  // if an answer or an RNR NAK in the cycle it was picked ended its candidacy.
  // Whether there is a failure or resend to start (work_q) is registered: what Idle
  // offers depends on registers and on the queue's valids only, not on the slot scan
  // (a resend or failure may start a cycle later, a new packet may wait a cycle for a
  // pick that came to nothing).
  logic hold_q, hold_d, hold_rs_q, hold_rs_d, picked_q, held, offer_rs, pick;
  logic work_q, still_q, still_d;
  logic [SlotW-1:0] hold_slot_q, hold_slot_d, offer_slot;
  logic new_ok, refuse_ok;
  assign held = hold_q && (!picked_q || still_q);
  assign offer_rs = held && hold_rs_q;
  assign offer_slot = hold_slot_q;
  assign new_ok = in_hdr_valid_i && (!in_reliable || (in_has_peer && free_avail && in_beat_valid_i &&
                                                      !(in_amo && amo_busy)));
  assign refuse_ok = in_hdr_valid_i && in_reliable && !in_has_peer && free_avail && in_beat_valid_i;
  assign fail_now = state_q == StIdle && !held && fail_still;  // ftrig_q implies work_q
  assign pick = state_q == StIdle && !held && work_q && !ftrig_avail && cand_avail;
  // A pick cycle takes and fails nothing: only an answer can end the candidate.
  assign still_d = valid_d[cand_slot] && !done_d[cand_slot] && !rnr_set[cand_slot];
  // The offer does not depend on ready (valid never waits for ready).
  logic offering;
  assign offering = state_q == StIdle && (held || !work_q) && (offer_rs || new_ok);
  ni_pkg::tx_desc_t stored_hdr;
  always_comb begin
    out_hdr_o = new_hdr;
    if (offer_rs) out_hdr_o = stored_hdr;
    else if (!in_reliable) out_hdr_o = in_hdr_i;
  end
  assign out_hdr_valid_o = offering;
  assign take_resend = offering && offer_rs && out_hdr_ready_i;
  assign in_hdr_ready_o = (offering && !offer_rs && out_hdr_ready_i) || take_refuse;
  assign take_new = in_hdr_ready_o && in_reliable && !take_refuse;
  assign take_pass = in_hdr_ready_o && !in_reliable;
  // A refused request is taken without an offer, when a new one could be offered.
  assign take_refuse = state_q == StIdle && !held && !work_q && refuse_ok;
  assign hold_d = (offering && !out_hdr_ready_i) || pick;
  assign hold_rs_d = pick || offer_rs;
  assign hold_slot_d = pick ? cand_slot : offer_slot;

  // ------------------------------------------------------------ beats
  logic [BeatW-1:0] stored_beat;
  logic [AddrW-1:0] beat_addr;
  logic beat_go, beat_last;
  // The packet whose beats are offered: the one being sent, or in Idle the one whose
  // header is offered, so that the framer can take its first beat with the header
  // (at 512 bits both share the first fabric beat).
  logic [SlotW-1:0] act_slot;
  logic [BiW-1:0] act_bi;
  logic act_in, act_rs, act_store, act_sink;
  always_comb begin
    act_slot = cur_q;
    act_bi = bi_q;
    act_in = state_q == StNew || state_q == StPass;  // beats come from the queue
    act_rs = state_q == StResend;                   // beats come from the copy
    act_sink = state_q == StRefuse;                 // beats are taken, not sent
    act_store = state_q == StNew || act_sink;       // beats are copied
    if (state_q == StIdle) begin
      act_slot = offer_rs ? offer_slot : free_slot;
      act_bi = '0;
      act_in = offering && !offer_rs;
      act_rs = offering && offer_rs;
      act_store = offering && !offer_rs && in_reliable;
    end
  end
  assign beat_addr = {act_slot, act_bi};
  always_comb begin
    out_beat_o = in_beat_i;
    out_beat_valid_o = 1'b0;
    in_beat_ready_o = 1'b0;
    if (act_in) begin
      out_beat_valid_o = in_beat_valid_i;
      in_beat_ready_o = out_beat_ready_i;
    end else if (act_sink) begin
      in_beat_ready_o = 1'b1;
    end else if (act_rs) begin
      out_beat_o = stored_beat;
      out_beat_valid_o = 1'b1;
    end
  end
  assign beat_go = act_sink ? in_beat_valid_i : out_beat_valid_o && out_beat_ready_i;
  assign beat_last = out_beat_o[DataW + KeepW];

  // TLP fields of a new request, kept for its error completion or confirmation. They
  // are gathered in cpl_cap_q/addr_cap_q as the copy's beats pass (the TLP header's 16
  // bytes are whole after its first beats) and written to the slot with each beat.
  logic [25:0] cpl_cap, cpl_cap_q;
  logic [63:0] addr_cap, addr_cap_q;
  logic np_cap, cni_cap;
  always_comb begin
    cpl_cap = cpl_cap_q;
    addr_cap = addr_cap_q;
    cni_cap = (state_q == StIdle) ? in_cni : cni_q[act_slot];
    np_cap = (state_q == StIdle) ? 1'b0 : np_q[act_slot];
    for (int j = 0; j < Bpb; j++) begin
      // Non-posted: answered by its own response (reads, atomics, memory-confirmed writes).
      if (32'(act_bi) * Bpb + j == 0) np_cap = in_beat_i[j*8 +: 8] != ni_pkg::TLP_MWR64 && !cni_cap;
      if (32'(act_bi) * Bpb + j == 1) cpl_cap[9:8] = {in_beat_i[j*8 + 7], in_beat_i[j*8 + 3]};
      if (32'(act_bi) * Bpb + j == 4) cpl_cap[25:18] = in_beat_i[j*8 +: 8];
      if (32'(act_bi) * Bpb + j == 5) cpl_cap[17:10] = in_beat_i[j*8 +: 8];
      if (32'(act_bi) * Bpb + j == 6) cpl_cap[7:0] = in_beat_i[j*8 +: 8];
      for (int k = 0; k < 8; k++) begin
        if (32'(act_bi) * Bpb + j == 8 + k) addr_cap[(7 - k)*8 +: 8] = in_beat_i[j*8 +: 8];
      end
    end
  end

  // ------------------------------------------------------------ answers and failures
  // A done slot leaves with its report: an error completion (UR, CA) for a read,
  // atomic or confirmed write, a confirmation (SC) for a write the receiving NI
  // confirmed; a plain write that failed leaves silently.
  logic drain_go, drain_rep;
  logic [63:0] drain_addr;
  assign drain_rep = np_q[drain_slot] || cni_q[drain_slot];
  assign drain_addr = addr_mem_q[drain_slot] + {back_mem_q[drain_slot], 12'h0};  // the requester's address
  always_comb begin
    fail_o = '0;
    fail_o.kind = (st_q[drain_slot] == ni_pkg::CPL_SC) ? ni_pkg::OWN_CONF : ni_pkg::OWN_CPL;
    fail_o.status = st_q[drain_slot];
    {fail_o.reqid, fail_o.tag} = cpl_mem_q[drain_slot];
    fail_o.addr = drain_addr;
  end
  assign fail_valid_o = drain_avail && drain_rep;
  assign drain_go = drain_avail && (!drain_rep || fail_ready_i);

  // At most one slot matches (PSNs are unique per destination among live slots); the
  // highest-numbered one if not. q_key: the slots awaiting a response with the query's
  // source and PSN (answered or not); q_match: those still awaited, and q_slot the one
  // the held answer names.
  logic [NumSlots-1:0] q_key, q_key_q, q_held_key;
  logic [SlotW-1:0] q_slot, q_slot_now, q_slot_q;
  logic q_has_peer;  // an answer from a LID without a PSN sequence answers nothing
  assign q_has_peer = ni_pkg::lid_has_peer(q_lid_i, 16'(NumPeers));
  always_comb begin
    q_slot_now = '0;
    for (int i = 0; i < NumSlots; i++) begin
      q_key[i] = q_has_peer && valid_q[i] && !done_q[i] && np_q[i] && peer_q[i] == q_lid_i[PeerW-1:0] &&
                 psn_q[i] == q_psn_i;
      if (q_key[i]) q_slot_now = SlotW'(i);
    end
  end
  assign q_hit_o = |(q_key & live);
  // Registered, a slot that fails, is answered or drains after the query leaves the
  // match by live; one taken anew was not valid when its key was registered.
  assign q_held_key = QueryReg != 0 ? q_key_q : q_key;
  assign q_slot = QueryReg != 0 ? q_slot_q : q_slot_now;
  assign q_match = q_held_key & live;
  assign q_held_o = |q_match;
  assign q_conf_o = q_held_o && cmem_q[q_slot];
  assign q_back_o = q_held_o ? back_mem_q[q_slot] : '0;
  assign q_cpl_o = q_held_o ? cpl_mem_q[q_slot] : '0;

  // A second read port of the PSNs' RAM, at the answer's source.
  assign ev_sent = next_vld_q[ev_peer_q] && ni_pkg::psn_before(ev_psn_q, next_mem_q[ev_peer_q]);
  assign ev_act = ev_valid_q && ev_sent;
  assign ev_unsent_o = ev_unsent_q;

  // Slots an RNR NAK stops now: its PSN and later ones to its source.
  logic [NumSlots-1:0] rnr_set;
  always_comb begin
    for (int i = 0; i < NumSlots; i++) begin
      rnr_set[i] = ev_act && ev_kind_q == ni_pkg::REL_RNR && live[i] &&
                   peer_q[i] == ev_peer_q && !ni_pkg::psn_before(psn_q[i], ev_psn_q);
    end
  end

  // Writes by a computed index are written as a loop over the elements: Yosys makes
  // `x[i] <= v` on a packed array a shifter (about a LUT per bit of x), a loop a
  // clock enable per element.
  logic [23:0] next_inc;
  logic [7:0] tries_inc;
  assign next_cur = next_vld_q[in_peer] ? next_mem_q[in_peer] : 24'd0;
  assign next_inc = next_cur + 24'd1;
  assign tries_inc = tries_mem_q[offer_slot] + 8'd1;

  always_comb begin
    state_d = state_q;
    cur_d = cur_q;
    bi_d = bi_q;
    valid_d = valid_q;
    np_d = np_q;
    due_d = due_q;
    done_d = done_q;
    st_d = st_q;
    cni_d = cni_q;
    cmem_d = cmem_q;
    amo_d = amo_q;
    rnr_d = rnr_q;
    next_vld_d = next_vld_q;
    resync_d = resync_q;
    if (take_new || take_refuse) begin
      state_d = take_refuse ? StRefuse : StNew;
      cur_d = free_slot;
      bi_d = '0;
      valid_d[free_slot] = 1'b1;
      // Known from the first beat, which is offered with the header: an answer that
      // comes before the copy is complete already finds the slot's kind.
      np_d[free_slot] = in_beat_i[7:0] != ni_pkg::TLP_MWR64 && !in_cni;
      due_d[free_slot] = 1'b0;
      // A refused request has failed: not live, it reports once its beats have passed.
      done_d[free_slot] = take_refuse;
      st_d[free_slot] = ni_pkg::CPL_CA;
      amo_d[free_slot] = in_amo && take_new;
      cni_d[free_slot] = in_cni;
      cmem_d[free_slot] = in_cmem;
      rnr_d[free_slot] = in_rnr;
    end
    if (take_new) begin
      next_vld_d[in_peer] = 1'b1;
      resync_d[in_peer] = 1'b0;
    end
    if (take_resend) begin
      state_d = StResend;
      cur_d = offer_slot;
      bi_d = '0;
      due_d[offer_slot] = 1'b0;
      rnr_d[offer_slot] = 1'b0;
    end
    if (take_pass) state_d = StPass;
    if (act_store && beat_go) np_d[act_slot] = np_cap;
    if (beat_go) begin
      bi_d = act_bi + BiW'(1);
      if (beat_last) state_d = StIdle;
    end
    if (fail_now) begin
      for (int i = 0; i < NumSlots; i++) begin
        if (valid_q[i] && !done_q[i] && peer_q[i] == fail_peer_q) begin
          done_d[i] = 1'b1;
          st_d[i] = ni_pkg::CPL_CA;
        end
      end
      resync_d[fail_peer_q] = 1'b1;
    end
    if (drain_go) begin
      valid_d[drain_slot] = 1'b0;
      done_d[drain_slot] = 1'b0;
    end
    // An answer: everything before its PSN arrived; an ACK (or refusal) covers its
    // own PSN too, a response only the request it answers. A slot already done waits
    // for its report to leave.
    if (ev_act) begin
      for (int i = 0; i < NumSlots; i++) begin
        if (live[i] && peer_q[i] == ev_peer_q) begin
          // A write the receiving NI confirms counts only an answer of its own PSN: a
          // later PSN's ACK says it arrived, not whether it was refused (its timer resends
          // it, and the receiver answers a duplicate of it with its own PSN).
          if (!np_q[i] && ((ni_pkg::psn_before(psn_q[i], ev_psn_q) && !cni_q[i]) ||
                           (psn_q[i] == ev_psn_q && (ev_kind_q == ni_pkg::REL_ACK ||
                                                     ev_kind_q == ni_pkg::REL_REFUSED)))) begin
            // A write the receiving NI confirms: report SC, or UR if it was refused.
            valid_d[i] = cni_q[i];
            done_d[i] = cni_q[i];
            st_d[i] = (psn_q[i] == ev_psn_q && ev_kind_q == ni_pkg::REL_REFUSED) ? ni_pkg::CPL_UR
                                                                                : ni_pkg::CPL_SC;
          end
          // Go back N: the receiver drops what follows a gap, so resend from the PSN it expects.
          if (!ni_pkg::psn_before(psn_q[i], ev_psn_q) && ev_kind_q == ni_pkg::REL_NAK_SEQ) due_d[i] = 1'b1;
          // Receiver not ready: this PSN and the rest wait, then go again in order.
          if (rnr_set[i]) begin
            rnr_d[i] = 1'b1;
            due_d[i] = 1'b0;
          end
        end
      end
    end
    // Answered by a response: also when its destination failed in the cycle the response
    // was matched or fails now (the response goes to the CPU; an error completion after
    // it would be a second one).
    for (int i = 0; i < NumSlots; i++) begin
      if (answered_q[i]) begin
        valid_d[i] = 1'b0;
        done_d[i] = 1'b0;
      end
    end
  end
  assign ev_retx_o = take_resend;

  // The slot a new packet takes now, the slot resent now (one-hot).
  logic [NumSlots-1:0] new_at, resend_at;
  always_comb begin
    for (int i = 0; i < NumSlots; i++) begin
      new_at[i] = take_new && free_slot == SlotW'(i);
      resend_at[i] = take_resend && offer_slot == SlotW'(i);
    end
  end

  // Timers, compared for the next cycle; a timer restarted now has not run out.
  // A new slot is allocated after every other: it comes last in the order.
  // now - start >= delay is start <= now - delay: the time a timer must have started
  // by to run out now is shared (tmo_by, rnr_by), and a check takes one subtraction
  // whose sign is the answer. The sign is right for delays and ages below 2^31
  // cycles: a larger delay acts as 2^31 - 1, and a slot runs out before it is that old.
  logic [31:0] tmo_by, rnr_by;
  assign tmo_by = now_q - (timeout_i[31] ? 32'h7FFF_FFFF : timeout_i);
  assign rnr_by = now_q - (rnr_delay_i[31] ? 32'h7FFF_FFFF : rnr_delay_i);
  function automatic logic started_by(input logic [31:0] start, input logic [31:0] by);
    started_by = ((by - start) & 32'h8000_0000) == 32'd0;
  endfunction
  // The scan: the slot checked now. A timer that ran out stays run out until its
  // slot is sent again, or another RNR NAK stops it (or RETX_TIMEOUT is 0). spent_q
  // is set where a try is counted and follows a change of RETX_LIMIT as the scan passes.
  // An RNR wait ends for every slot of the destination in the same cycle, when the
  // scan passes any slot of it: ended one by one as the scan passes, a later PSN could
  // be resent before the one the RNR NAK named, and the receiver dropped it.
  logic [SlotW-1:0] scan_q;
  logic [PeerW-1:0] scan_peer;
  logic scan_tmo, scan_rnr_up, scan_spent;
  assign scan_tmo = started_by(sent_mem_q[scan_q], tmo_by);
  assign scan_peer = peer_mem_q[scan_q];
  assign scan_rnr_up = started_by(rnr_at_mem_q[scan_peer], rnr_by);
  assign scan_spent = tries_mem_q[scan_q] >= limit_i;
  always_comb begin
    for (int i = 0; i < NumSlots; i++) begin
      tmo_d[i] = timeout_i != 32'd0 && (tmo_q[i] || (scan_q == SlotW'(i) && scan_tmo)) &&
                 !new_at[i] && !resend_at[i];
      rnr_up_d[i] = (rnr_up_q[i] || (scan_rnr_up && peer_q[i] == scan_peer)) &&
                    !new_at[i] && !rnr_set[i];
      spent_d[i] = spent_q[i];
      if (scan_q == SlotW'(i)) spent_d[i] = scan_spent;
      if (new_at[i]) spent_d[i] = limit_i == 8'd0;
      if (resend_at[i]) spent_d[i] = rnr_q[i] ? limit_i == 8'd0 : tries_inc >= limit_i;
    end
    alloc_first_d = alloc_first_q;
    for (int i = 0; i < NumSlots; i++) begin
      for (int j = i + 1; j < NumSlots; j++) begin
        if (new_at[i]) alloc_first_d[pair_bit(i, j)] = 1'b0;
        if (new_at[j]) alloc_first_d[pair_bit(i, j)] = 1'b1;
      end
    end
  end

  // Read addresses of the next cycle's resend: its header, and the beat it sends
  // (the first one while the resend is offered in Idle).
  logic [AddrW-1:0] rd_addr_d;
  logic [SlotW-1:0] rd_slot_d;
  assign rd_slot_d = (state_d == StResend) ? cur_d : hold_slot_d;
  assign rd_addr_d = {rd_slot_d, (state_d == StResend) ? bi_d : BiW'(0)};
  assign ev_fail_o = drain_go && st_q[drain_slot] == ni_pkg::CPL_CA;
  assign ev_conf_o = drain_go && drain_rep && st_q[drain_slot] == ni_pkg::CPL_SC;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q <= StIdle;
      cur_q <= '0;
      bi_q <= '0;
      now_q <= '0;
      valid_q <= '0;
      np_q <= '0;
      due_q <= '0;
      done_q <= '0;
      cni_q <= '0;
      cmem_q <= '0;
      amo_q <= '0;
      rnr_q <= '0;
      next_vld_q <= '0;
      resync_q <= '0;
      hold_q <= 1'b0;
      hold_rs_q <= 1'b0;
      hold_slot_q <= '0;
      picked_q <= 1'b0;
      work_q <= 1'b0;
      ftrig_q <= 1'b0;
      still_q <= 1'b0;
      alloc_first_q <= '0;
      tmo_q <= '0;
      rnr_up_q <= '0;
      spent_q <= '0;
      scan_q <= '0;
      ev_valid_q <= 1'b0;
      ev_unsent_q <= 1'b0;
      ev_kind_q <= '0;
      ev_peer_q <= '0;
      ev_psn_q <= '0;
      answered_q <= '0;
    end else begin
      state_q <= state_d;
      cur_q <= cur_d;
      bi_q <= bi_d;
      now_q <= now_q + 32'd1;
      valid_q <= valid_d;
      np_q <= np_d;
      due_q <= due_d;
      done_q <= done_d;
      cni_q <= cni_d;
      cmem_q <= cmem_d;
      amo_q <= amo_d;
      rnr_q <= rnr_d;
      next_vld_q <= next_vld_d;
      resync_q <= resync_d;
      hold_q <= hold_d;
      hold_rs_q <= hold_rs_d;
      hold_slot_q <= hold_slot_d;
      picked_q <= pick;
      work_q <= ftrig_avail || cand_avail;
      ftrig_q <= ftrig_avail;
      still_q <= still_d;
      alloc_first_q <= alloc_first_d;
      tmo_q <= tmo_d;
      rnr_up_q <= rnr_up_d;
      spent_q <= spent_d;
      scan_q <= (32'(scan_q) == NumSlots - 1) ? '0 : scan_q + SlotW'(1);
      ev_valid_q <= ev_valid_i && ni_pkg::lid_has_peer(ev_lid_i, 16'(NumPeers));
      ev_unsent_q <= ev_valid_q && !ev_sent;
      ev_kind_q <= ev_kind_i;
      ev_peer_q <= ev_lid_i[PeerW-1:0];
      ev_psn_q <= ev_psn_i;
      answered_q <= (ev_valid_i && ev_kind_i == ni_pkg::REL_RSP) ? q_match : '0;
    end
  end
  // The registered query match (QueryReg; datapath, not reset: read only with live).
  always_ff @(posedge clk_i) begin
    q_key_q <= q_key;
    q_slot_q <= q_slot_now;
  end

  // The copies and the slot fields they go with: datapath, not reset.
  always_ff @(posedge clk_i) begin
    st_q <= st_d;
    for (int i = 0; i < NumSlots; i++) begin
      if (new_at[i]) begin
        peer_q[i] <= in_peer;
        psn_q[i] <= next_cur;
      end
    end
    if (ev_act && ev_kind_q == ni_pkg::REL_RNR) rnr_at_mem_q[ev_peer_q] <= now_q;
    // take_new and take_resend exclude each other: one write port each.
    if (take_resend) begin
      sent_mem_q[offer_slot] <= now_q;
      tries_mem_q[offer_slot] <= rnr_q[offer_slot] ? 8'd0 : tries_inc;
    end
    if (take_new) begin
      sent_mem_q[free_slot] <= now_q;
      tries_mem_q[free_slot] <= 8'd0;
      peer_mem_q[free_slot] <= in_peer;
      next_mem_q[in_peer] <= next_inc;
    end
    if (take_new || take_refuse) back_mem_q[free_slot] <= in_hdr_i.back_page;
    if (act_store && beat_go) begin
      cpl_cap_q <= cpl_cap;
      addr_cap_q <= addr_cap;
      cpl_mem_q[act_slot] <= cpl_cap;
      addr_mem_q[act_slot] <= addr_cap;
    end
  end

  // The copy memories: one write port, one registered read port each. A slot is
  // never read in the cycle after it is written (a slot being copied is not resent
  // before its copy is complete and it has been picked), so no bypass is needed.
  logic beat_we, hdr_we;
  assign beat_we = act_store && beat_go;
  assign hdr_we = take_new;
  always_ff @(posedge clk_i) begin
    if (beat_we) beat_mem_q[beat_addr] <= in_beat_i;
    stored_beat <= beat_mem_q[rd_addr_d];
  end
  always_ff @(posedge clk_i) begin
    if (hdr_we) hdr_mem_q[free_slot] <= new_hdr;
    stored_hdr <= hdr_mem_q[rd_slot_d];
  end
  logic beat_wr_rd_q, hdr_wr_rd_q;  // what the read port shows was written in the same cycle
  always_ff @(posedge clk_i) begin
    beat_wr_rd_q <= beat_we && beat_addr == rd_addr_d;
    hdr_wr_rd_q <= hdr_we && free_slot == rd_slot_d;
  end
  `NI_ASSERT(BeatReadNotStale_A, !act_rs || !beat_wr_rd_q)
  `NI_ASSERT(HdrReadNotStale_A, !offer_rs || !hdr_wr_rd_q)

  // A slot waiting to report is in use (valid_q counts it: a done slot is not reused).
  `NI_ASSERT(DoneIsValid_A, (done_q & ~valid_q) == '0)
  // No request is larger than a slot (ni_wc and ni_dma_inj cut them to MaxPayload).
  `NI_ASSUME(CopyFits_A, !(act_store && beat_go) || (32'(act_bi) < SlotBeats))
  // In Idle the framer takes a beat only together with its header.
  `NI_ASSUME(BeatWithHeader_A, !(state_q == StIdle && beat_go) || (out_hdr_valid_o && out_hdr_ready_i))
  `NI_ASSERT_AXIS_STABLE(OutHdrStable_A, out_hdr_valid_o, out_hdr_ready_i, out_hdr_o)
  `NI_ASSERT_AXIS_STABLE(OutBeatStable_A, out_beat_valid_o, out_beat_ready_i, out_beat_o)
  // A response names the query it was matched by, and only an awaited one comes;
  // with QueryReg that query has stood since the last cycle at least.
  logic [39:0] q_last_q;
  always_ff @(posedge clk_i) q_last_q <= {q_lid_i, q_psn_i};
  `NI_ASSUME(RspIsQuery_A, !(ev_valid_i && ev_kind_i == ni_pkg::REL_RSP) ||
                           (ev_lid_i == q_lid_i && ev_psn_i == q_psn_i && q_held_o &&
                            (QueryReg == 0 || q_last_q == {q_lid_i, q_psn_i})))
  // ni_wc marks continuations only toward unicast LIDs.
  `NI_ASSUME(ContUnicast_A, !(in_hdr_valid_i && in_hdr_i.kind == ni_pkg::TX_CONT) || in_reliable)
endmodule

`default_nettype wire

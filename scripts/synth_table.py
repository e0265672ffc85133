#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Resource tables from the synthesis runs of scripts/synth.py.

    scripts/synth_table.py [--runs build/synth] [--record docs/figures/synth-runs]
                           [--out docs/figures/synth.md]

First copies what each run in RUNS left (CONFIG-FAMILY/stat.json, pnr.json,
rtl_rev.txt) into RECORD, replacing that run's earlier record: a run takes 10 to 60
minutes, so the measurements are kept in the repository and a table holds every run
ever made, each with the RTL revision it measured. Then reads every
RECORD/CONFIG-FAMILY/stat.json (Yosys `stat -json`, hierarchy kept) and writes
Markdown: one table of totals per configuration and family, and one table per
run with each block of nic_top (its submodules, such as its FIFOs, included). Cells
are grouped into LUTs, flip-flops, LUT RAM, block RAM, DSPs and carry cells by the
family's primitive names (mux: the slice multiplexers that join LUTs into wider
functions); other cells are counted as "other". Where scripts/pnr.py placed and
routed a run (RECORD/CONFIG-FAMILY/pnr.json, nextpnr's report), a timing table gives
the achieved Fmax against the target and the device's utilization.
"""
import argparse
import json
import pathlib
import re
import shutil

ROOT = pathlib.Path(__file__).resolve().parent.parent
COLUMNS = ["LUT", "mux", "FF", "LUTRAM", "BRAM", "DSP", "carry", "other"]
# What a run leaves that the tables read, kept in RECORD.
RECORDED = ["stat.json", "pnr.json", "rtl_rev.txt"]
# Primitive name patterns per family.
CLASSES = {
    "ecp5": [("LUT", r"^LUT4$"), ("mux", r"^(PFUMX|L6MUX21)$"), ("FF", r"^TRELLIS_FF$"), ("LUTRAM", r"^TRELLIS_DPR16X4$"),
             ("BRAM", r"^(DP16KD|PDPW16KD)$"), ("DSP", r"^(MULT18X18D|ALU54B)$"), ("carry", r"^CCU2C$")],
    "ice40": [("LUT", r"^SB_LUT4$"), ("mux", r"^$"), ("FF", r"^SB_DFF"), ("LUTRAM", r"^$"), ("BRAM", r"^SB_RAM40_4K"),
              ("DSP", r"^SB_MAC16$"), ("carry", r"^SB_CARRY$")],
    "xc7": [("LUT", r"^LUT[1-6]$"), ("mux", r"^MUXF[78]$"), ("FF", r"^FD[RSCP]E$"), ("LUTRAM", r"^RAM(32|64|128|256)"),
            ("BRAM", r"^RAMB(18|36)E1$"), ("DSP", r"^DSP48E1$"), ("carry", r"^CARRY4$")],
}
CONFIG_ORDER = ["small", "default", "wide"]


def block_name(module):
    """`$paramod$hash\\ni_retx` or `$paramod\\ni_art\\NumEntries=...` -> ni_retx / ni_art."""
    parts = [p for p in module.lstrip("\\").split("\\") if p.startswith("ni")]
    return parts[0] if parts else module


def submodule(modules, cell):
    """The module a cell instantiates, or None for a primitive. Yosys names a module
    `\\name` in the module list but, for a module without parameters, `name` in the
    cell counts of its parent."""
    for name in (cell, "\\" + cell):
        if name in modules:
            return name
    return None


def classify(family, cell):
    for cls, pat in CLASSES[family]:
        if re.search(pat, cell):
            return cls
    return "other"


def totals(modules, family):
    """Per module: its cells by class, submodules included (instances times their totals)."""
    memo = {}

    def total(name):
        if name in memo:
            return memo[name]
        t = dict.fromkeys(COLUMNS, 0)
        for cell, n in modules[name].get("num_cells_by_type", {}).items():
            sub = submodule(modules, cell)
            if sub:
                for c, v in total(sub).items():
                    t[c] += n * v
            elif not cell.startswith("$scopeinfo"):
                t[classify(family, cell)] += n
        memo[name] = t
        return t

    return {m: total(m) for m in modules}


def pnr_rows(runs):
    """Fmax and utilization of every run that was placed and routed."""
    out = []
    for _, config, family, stat in runs:
        rep = stat.parent / "pnr.json"
        if not rep.exists():
            continue
        r = json.loads(rep.read_text())
        util = r.get("utilization", {})
        if r.get("fits") is False:
            over = ", ".join(f"{k} {v['used']}/{v['available']} ({100 * v['used'] // v['available']}%)"
                             for k, v in sorted(util.items()) if v["used"] > v["available"])
            out.append(f"| {config}, {family} | | | | **does not fit** | {over} |")
            continue
        used = ", ".join(f"{k} {v['used']}/{v['available']}" for k, v in sorted(util.items())
                         if v.get("used") and not k.startswith(("TRELLIS_IO", "DCC")))
        for clk, f in sorted(r.get("fmax", {}).items()):
            met = "met" if f["achieved"] >= f["constraint"] else "**missed**"
            out.append(f"| {config}, {family} | {clk.replace('$glbnet$', '')} | {f['achieved']:.1f} | "
                       f"{f['constraint']:.1f} | {met} | {used} |")
    if not out:
        return []
    return ["", "Place and route (nextpnr; Fmax in MHz):", "",
            "| configuration, family | clock | Fmax | target | | utilization (used/available) |",
            "|---|---|---|---|---|---|"] + out


def reg_of(cell):
    """The register a netlist cell belongs to, as nextpnr names it after its net
    (credits_o_TRELLIS_FF_Q_15 -> credits_o)."""
    return re.split(r"_(?:TRELLIS|LUT4|CCU2C|PFUMX|L6MUX21|DP16KD|MULT18X18D)", cell, maxsplit=1)[0]


BLOCK_TARGET_MHZ = 150  # every block alone (docs/architecture.md, designing for the clock)


def block_rows(record):
    """Blocks placed and routed alone (make synth-blocks: scripts/synth_blocks.py; records
    in RECORD/BLOCK/CONFIG-FAMILY/): Fmax against the block target, the cells by class
    (from the run's stat.json, where recorded), the critical path's first and last
    register."""
    out = []
    for run_dir in sorted(p for p in (ROOT / record).glob("*/*-*") if p.is_dir()):
        block, run = run_dir.parent.name, run_dir.name
        rep, stat = run_dir / "pnr.json", run_dir / "stat.json"
        rev = run_dir / "rtl_rev.txt"
        params = run_dir / "params.txt"
        if params.exists():
            block += f" ({params.read_text().strip()})"
        cls = dict.fromkeys(COLUMNS, "?")
        if stat.exists():
            modules = json.loads(stat.read_text())["modules"]
            t = totals(modules, run.split("-", 1)[1])
            used = {submodule(modules, c) for m in modules.values() for c in m.get("num_cells_by_type", {})}
            cls = t[next(m for m in modules if m not in used)]
        r = json.loads(rep.read_text()) if rep.exists() else {}
        cells = r.get("utilization", {}).get("TRELLIS_COMB", {}).get("used", "")
        path = next((cp["path"] for cp in r.get("critical_paths", []) if cp.get("path")), [])
        ends = f"{reg_of(path[0]['from']['cell'])} -> {reg_of(path[-1]['to']['cell'])}" if path else ""
        logic = sum(e["delay"] for e in path if e.get("type") == "logic")
        total = sum(e["delay"] for e in path)
        fmax = r.get("fmax", {}).get("clk_i", {}).get("achieved")
        if fmax is None:
            speed, met = ("no clock (combinational)", "") if rep.exists() else ("not placed", "")
        else:
            speed, met = f"{fmax:.1f}", "met" if fmax >= BLOCK_TARGET_MHZ else "**missed**"
        out.append(f"| {block} | {run.replace('-', ', ')} | {speed} | {met} | {cells} | {cls['LUT']} | {cls['FF']} | "
                   f"{cls['carry']} | {cls['LUTRAM']} | {cls['BRAM']} | {ends} | "
                   f"{f'{total:.1f} ({logic:.1f} logic)' if path else ''} | "
                   f"{rev.read_text().strip() if rev.exists() else '?'} |")
    if not out:
        return []
    return ["", f"Blocks placed and routed alone (make synth-blocks: out of context, LFE5U-85F speed grade 8, "
            f"nextpnr's router1, each at its own default parameters but those named; target {BLOCK_TARGET_MHZ} MHz; Fmax in MHz, "
            "critical path in ns, from the register where it starts to the one where it ends; LUT4, FF, carry "
            "(CCU2C), LUT RAM (DPR16X4) and block RAM (DP16KD) cells from Yosys, logic cells from nextpnr):", "",
            "| block | configuration, family | Fmax | 150 MHz | logic cells | LUT4 | FF | carry | LUT RAM | BRAM | "
            "critical path | ns | RTL |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|"] + out


def keep(run, kept, names):
    """Replace the record in kept of a run by what the run left of names."""
    kept.mkdir(parents=True, exist_ok=True)
    for f in names:
        (kept / f).unlink(missing_ok=True)
        if (run / f).exists():
            shutil.copyfile(run / f, kept / f)


def row(label, t):
    return "| " + label + " | " + " | ".join(str(t[c]) for c in COLUMNS) + " |"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", default="build/synth")
    ap.add_argument("--record", default="docs/figures/synth-runs")
    ap.add_argument("--out", default="docs/figures/synth.md")
    ap.add_argument("--block-runs", default="build/synth-blocks")
    ap.add_argument("--block-record", default="docs/figures/synth-blocks")
    a = ap.parse_args()
    # Blocks alone: BLOCK/CONFIG-FAMILY/ runs, recorded the same way.
    for rep in sorted((ROOT / a.block_runs).glob("*/*-*/pnr.json")):
        keep(rep.parent, ROOT / a.block_record / rep.parent.parent.name / rep.parent.name,
             ["stat.json", "pnr.json", "rtl_rev.txt", "params.txt"])
    for stat in sorted((ROOT / a.runs).glob("*-*/stat.json")):
        if stat.parent.name.split("-", 1)[1] not in CLASSES:
            continue  # the generic netlist of make postsynth has no table
        keep(stat.parent, ROOT / a.record / stat.parent.name, RECORDED)
    runs = []
    for stat in sorted((ROOT / a.record).glob("*-*/stat.json")):
        config, family = stat.parent.name.split("-", 1)
        if family in CLASSES:
            runs.append((CONFIG_ORDER.index(config) if config in CONFIG_ORDER else 99, config, family, stat))
    if not runs:
        raise SystemExit(f"synth_table: no runs in {a.runs} or {a.record} (make synth first)")
    runs.sort()
    head = "| " + " | ".join(COLUMNS) + " |"
    rule = "|---" * (len(COLUMNS) + 1) + "|"
    out = ["| configuration, family " + head + " RTL |", rule + "---|"]
    per_run = []
    for _, config, family, stat in runs:
        modules = json.loads(stat.read_text())["modules"]
        t = totals(modules, family)
        # The top: the module no other one instantiates.
        used = {submodule(modules, c) for m in modules.values() for c in m.get("num_cells_by_type", {})}
        top = next(m for m in modules if m not in used)
        rev = stat.parent / "rtl_rev.txt"
        out.append(row(f"{config}, {family}", t[top]) + f" {rev.read_text().strip() if rev.exists() else '?'} |")
        top_name = block_name(top) if top.startswith("$") else top.lstrip("\\")
        per_run += ["", f"{config}, {family}: blocks of {top_name} (submodules included)", "",
                    "| block " + head, rule]
        blocks = {}
        for cell, n in modules[top].get("num_cells_by_type", {}).items():
            sub = submodule(modules, cell)
            if sub:
                name = block_name(sub)
                b = blocks.setdefault(name, dict.fromkeys(COLUMNS, 0))
                for c, v in t[sub].items():
                    b[c] += n * v
        for name in sorted(blocks):
            per_run.append(row(name, blocks[name]))
        glue = dict(t[top])
        for b in blocks.values():
            for c in COLUMNS:
                glue[c] -= b[c]
        per_run.append(row(f"{top_name}'s own logic", glue))
    (ROOT / a.out).parent.mkdir(parents=True, exist_ok=True)
    (ROOT / a.out).write_text("\n".join(out + pnr_rows(runs) + block_rows(a.block_record) + per_run) + "\n")
    print(f"synth_table: {len(runs)} runs -> {a.out}")


if __name__ == "__main__":
    main()

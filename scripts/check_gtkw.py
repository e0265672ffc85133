#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that every signal a GTKWave save file names is in a waveform, with the same
bit range (GTKWave shows nothing for a name or range that is not there; the RTL's
widths change under the save file).

  usage: check_gtkw.py WAVE.fst SAVE.gtkw     (needs fst2vcd, from gtkwave)
         check_gtkw.py --rtl SAVE.gtkw TOP VERILATOR_ARGS...
                                              (the RTL itself, through Verilator's
                                               XML: no traced build needed; make test)

With --rtl the names are looked up in TOP's hierarchy as Verilator elaborates it (the
scopes above TOP in the save file, the simulator's, are dropped); a basic vector's
range must match, a struct's or array's name must exist. Ranges are compared as
GTKWave names them: a one-bit vector [0:0] is [0].
"""
import pathlib
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET


def gtkwave_range(rng):
    """A range as GTKWave names it: a one-bit vector [N:N] is [N] (a save file that says
    [0:0] shows nothing)."""
    hi, colon, lo = rng.strip("[]").partition(":")
    return f"[{hi}]" if colon and hi == lo else rng


def signals_in(fst):
    vcd = subprocess.run(["fst2vcd", fst], capture_output=True, text=True, check=True).stdout
    scope, names = [], set()
    for line in vcd.split("$enddefinitions")[0].splitlines():
        t = line.split()
        if not t:
            continue
        if t[0] == "$scope":
            scope.append(t[2])
        elif t[0] == "$upscope":
            scope.pop()
        elif t[0] == "$var":
            rng = gtkwave_range(t[5] if t[5] != "$end" else "")
            names.add(".".join(scope + [t[4]]) + rng)
    return names


def signals_in_rtl(top, vl_args):
    """{name: range or None} for every variable of TOP's hierarchy (None: not a basic
    vector, any range accepted), names rooted at TOP as in a trace."""
    with tempfile.TemporaryDirectory() as d:
        # -O0: otherwise the XML leaves out wires that constant folding inlined, which a
        # trace still shows (decide_now, take_resend).
        subprocess.run(["verilator", "--xml-only", "-O0", "-Wno-fatal", "-Wno-lint", "-Wno-style",
                        "--top-module", top, "--Mdir", d] + vl_args, check=True)
        root = ET.parse(pathlib.Path(d) / f"V{top}.xml").getroot()
    ranges = {}
    for t in root.iter("basicdtype"):
        left = t.get("left")
        ranges[t.get("id")] = gtkwave_range(f"[{left}:{t.get('right')}]") if left is not None else ""
    modules = {m.get("name"): m for m in root.iter("module")}
    names = {}

    def walk_scope(elem, path):
        for child in elem:
            if child.tag == "var":
                names[f"{path}.{child.get('name')}"] = ranges.get(child.get("dtype_id"))
            elif child.tag == "begin":  # a generate block is a scope of the trace
                walk_scope(child, f"{path}.{child.get('name')}")

    def walk_cell(cell, path):
        walk_scope(modules[cell.get("submodname")], path)
        for sub in cell.findall("cell"):
            walk_cell(sub, f"{path}.{sub.get('name')}")

    walk_cell(root.find(".//cells/cell"), top)
    return names


def rtl_has(names, top, wanted):
    """Whether a save file's name (SCOPES.TOP.path[range]) is a variable of the RTL."""
    parts = wanted.split(".")
    path = ".".join(parts[parts.index(top):]) if top in parts else wanted
    base, _, rng = path.partition("[")
    if base not in names:
        return False
    return names[base] is None or names[base] == ("[" + rng if rng else "")


def main():
    args = sys.argv[1:]
    if len(args) >= 3 and args[0] == "--rtl":
        save, top = args[1], args[2]
        names = signals_in_rtl(top, args[3:])
        where = f"{top} (RTL)"
        found = lambda w: rtl_has(names, top, w)  # noqa: E731
    elif len(args) == 2:
        have = signals_in(args[0])
        save, where = args[1], args[0]
        found = have.__contains__
    else:
        sys.exit(__doc__)
    wanted = [l.strip() for l in open(save) if l[:1].isalnum() and "." in l]
    missing = [w for w in wanted if not found(w)]
    for m in missing:
        print(f"{save}: {m} is not in {where}")
    print(f"{len(wanted) - len(missing)} of {len(wanted)} signals of {save} found")
    sys.exit(1 if missing else 0)


if __name__ == "__main__":
    main()

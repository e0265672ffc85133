#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks what scripts/plot_results.py drew against the ni_sim rows it was given
(the test plots_from_ni_sim_results): each figure is a PNG of 700 x 450 pixels, and
every row that passed is a point of its figure's line for its transport, at its
message size, with the value worked out here from the row's own columns:

  latency.png    pingpong rows: latency_ns / 1000 (microseconds)
  bandwidth.png  bw and bibw rows: gb_per_s * 1000 (MB/s)
  rate.png       rate rows: messages / (cycles * clock_ns) * 1000 (millions a second)

and no figure has a point that no row gave.

  usage: check_plots.py OUT_DIR FILE.csv [FILE.csv ...]
"""
import csv
import json
import math
import os
import struct
import sys

FIGURES = {
    "latency.png": ({"pingpong"}, lambda r: float(r["latency_ns"]) / 1000),
    "bandwidth.png": ({"bw", "bibw"}, lambda r: float(r["gb_per_s"]) * 1000),
    "rate.png": ({"rate"}, lambda r: int(r["messages"]) / (int(r["cycles"]) * float(r["clock_ns"])) * 1000),
}


def png_size(path):
    """Width and height from the PNG's IHDR chunk."""
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        raise ValueError(f"{path} is not a PNG")
    return struct.unpack(">II", head[16:24])


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out = sys.argv[1]
    rows = []
    for p in sys.argv[2:]:
        with open(p, newline="") as f:
            rows += list(csv.DictReader(f))
    with open(os.path.join(out, "plotted.json")) as f:
        plotted = json.load(f)
    errors = []
    for fig, (workloads, value) in FIGURES.items():
        mine = [r for r in rows if r["workload"] in workloads]
        if not mine:
            continue
        if png_size(os.path.join(out, fig)) != (700, 450):
            errors.append(f"{fig}: not 700 x 450 pixels")
        lines = plotted.get(fig, {})
        want = {}
        for r in mine:
            name = f"{r['transport']} ({r['workload']})" if len(workloads) > 1 else r["transport"]
            want.setdefault(name, []).append((int(r["bytes"]), value(r)))
        if set(lines) != set(want):
            errors.append(f"{fig}: lines {sorted(lines)}, rows give {sorted(want)}")
            continue
        for name, pts in want.items():
            got = sorted((int(b), float(v)) for b, v in lines[name])
            pts.sort()
            if len(got) != len(pts) or any(b1 != b2 or not math.isclose(v1, v2, rel_tol=1e-9)
                                           for (b1, v1), (b2, v2) in zip(got, pts)):
                errors.append(f"{fig}, {name}: plotted {got}, rows give {pts}")
    for e in errors:
        print(e)
    if errors:
        sys.exit(1)
    print(f"plots match {len(rows)} rows")


if __name__ == "__main__":
    main()

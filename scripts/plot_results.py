#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Plots ni_sim results (--csv files) in the manner of the OSU micro-benchmarks:
latency (ping-pong half round trip) and bandwidth versus message size, one line per
transport, log scales.

  usage: plot_results.py OUT_DIR FILE.csv [FILE.csv ...]

Writes OUT_DIR/latency.png from the pingpong rows, OUT_DIR/bandwidth.png from the
bw and bibw rows and OUT_DIR/rate.png (millions of messages per second, the whole
system) from the rate rows (each is skipped when no file has such rows). Needs matplotlib
(scripts/setup.sh installs it into .venv).
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402


def read_rows(paths):
    rows = []
    for p in paths:
        with open(p, newline="") as f:
            for r in csv.DictReader(f):
                if r["ok"] != "true":
                    sys.exit(f"{p}: a failed row ({r['bytes']} B): plot only runs that passed")
                rows.append(r)
    return rows


def size_label(b):
    return f"{b // (1 << 20)}M" if b >= 1 << 20 else f"{b // 1024}K" if b >= 1024 else str(b)


def msg_rate(r):
    """Millions of messages per second at the run's clock."""
    return int(r["messages"]) / (int(r["cycles"]) * float(r["clock_ns"])) * 1e3


def plot(rows, workloads, y, ylabel, title, path):
    """y: a column name, or a function of a row."""
    value = y if callable(y) else (lambda r: float(r[y]))
    series, used = {}, []
    for r in rows:
        if r["workload"] in workloads:
            key = f"{r['transport']} ({r['workload']})" if len(workloads) > 1 else r["transport"]
            series.setdefault(key, []).append((int(r["bytes"]), value(r)))
            used.append(r)
    if not series:
        return False
    fig, ax = plt.subplots(figsize=(7, 4.5))
    sizes = set()
    for name, pts in sorted(series.items()):
        pts.sort()
        sizes.update(b for b, _ in pts)
        ax.plot([b for b, _ in pts], [v for _, v in pts], marker="o", label=name)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ticks = sorted(sizes)
    ax.set_xticks(ticks)
    ax.set_xticklabels([size_label(b) for b in ticks], rotation=45)
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel(ylabel)
    first = used[0]
    ax.set_title(f"{title}: {first['nodes']} nodes, {first['width']}-bit NI, "
                 f"{1000 / float(first['clock_ns']):.0f} MHz")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rows = read_rows(sys.argv[2:])
    made = []
    if plot(rows, {"pingpong"}, "latency_ns", "half round trip (ns)", "Ping-pong latency",
            os.path.join(out, "latency.png")):
        made.append("latency.png")
    if plot(rows, {"bw", "bibw"}, "gb_per_s", "bandwidth (GB/s)", "Bandwidth",
            os.path.join(out, "bandwidth.png")):
        made.append("bandwidth.png")
    if plot(rows, {"rate"}, msg_rate, "messages per second (millions)", "Message rate",
            os.path.join(out, "rate.png")):
        made.append("rate.png")
    if not made:
        sys.exit("no pingpong, bw, bibw or rate rows to plot")
    print("wrote " + ", ".join(os.path.join(out, m) for m in made))


if __name__ == "__main__":
    main()

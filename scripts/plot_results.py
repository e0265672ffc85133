#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Plots ni_sim results (--csv files) in the manner of the OSU micro-benchmarks:
latency (ping-pong half round trip, microseconds, log scale) and bandwidth (MB/s,
linear scale, with the link's peak as a line) versus message size (log2 axis), one
line per transport; the caption names the configuration (NI width, clock, nodes,
topology) and the commit the figures come from.

  usage: plot_results.py OUT_DIR FILE.csv [FILE.csv ...]

Also writes OUT_DIR/plotted.json: every plotted point, per figure and line (the test
plots_from_ni_sim_results checks them against the rows).

Writes OUT_DIR/latency.png from the pingpong rows, OUT_DIR/bandwidth.png from the
bw and bibw rows and OUT_DIR/rate.png (millions of messages per second, the whole
system) from the rate rows (each is skipped when no file has such rows). Needs matplotlib
(scripts/setup.sh installs it into .venv).
"""
import csv
import json
import os
import subprocess
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


def commit():
    """The short commit of the repository this script is in (and '+' if it has changes)."""
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        head = subprocess.run(["git", "-C", here, "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", here, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return head + ("+" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown commit"


def link_peak_mb_s(r):
    """One NI beat per cycle: the link's peak in MB/s (10^6 bytes per second)."""
    return int(r["width"]) / 8 / float(r["clock_ns"]) * 1e3


def plot(rows, workloads, y, ylabel, title, path, log_y=True, peak=None, plotted=None):
    """y: a column name, or a function of a row; peak: a function of a row giving a
    horizontal line (the link's peak). plotted[file name] gets the lines' points."""
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
    if plotted is not None:
        plotted[os.path.basename(path)] = {name: sorted(pts) for name, pts in series.items()}
    for name, pts in sorted(series.items()):
        pts.sort()
        sizes.update(b for b, _ in pts)
        ax.plot([b for b, _ in pts], [v for _, v in pts], marker="o", label=name)
    first = used[0]
    if peak:
        ax.axhline(peak(first), color="black", linestyle="--", linewidth=1, label="link peak, one direction")
    ax.set_xscale("log", base=2)
    if log_y:
        ax.set_yscale("log")
    else:
        ax.set_ylim(bottom=0)
    ticks = sorted(sizes)
    ax.set_xticks(ticks)
    ax.set_xticklabels([size_label(b) for b in ticks], rotation=45)
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    topology = first.get("topology", "crossbar")
    fig.text(0.01, 0.01, f"{first['width']}-bit NI at {1000 / float(first['clock_ns']):.0f} MHz, "
             f"{first['nodes']} nodes, {topology}; ni_sim, commit {commit()}", fontsize=8, alpha=0.8)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rows = read_rows(sys.argv[2:])
    made, plotted = [], {}
    if plot(rows, {"pingpong"}, lambda r: float(r["latency_ns"]) / 1e3, "half round trip (µs)",
            "Ping-pong latency", os.path.join(out, "latency.png"), plotted=plotted):
        made.append("latency.png")
    if plot(rows, {"bw", "bibw"}, lambda r: float(r["gb_per_s"]) * 1e3, "bandwidth (MB/s)", "Bandwidth",
            os.path.join(out, "bandwidth.png"), log_y=False, peak=link_peak_mb_s, plotted=plotted):
        made.append("bandwidth.png")
    if plot(rows, {"rate"}, msg_rate, "messages per second (millions)", "Message rate",
            os.path.join(out, "rate.png"), plotted=plotted):
        made.append("rate.png")
    if not made:
        sys.exit("no pingpong, bw, bibw or rate rows to plot")
    with open(os.path.join(out, "plotted.json"), "w") as f:
        json.dump(plotted, f, indent=1)
    print("wrote " + ", ".join(os.path.join(out, m) for m in made))


if __name__ == "__main__":
    main()

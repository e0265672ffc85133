#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that every signal a GTKWave save file names is in a waveform, with the same
bit range (GTKWave shows nothing for a name or range that is not there; the RTL's
widths change under the save file).

  usage: check_gtkw.py WAVE.fst SAVE.gtkw     (needs fst2vcd, from gtkwave)
"""
import subprocess
import sys


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
            rng = t[5] if t[5] != "$end" else ""
            names.add(".".join(scope + [t[4]]) + rng)
    return names


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    have = signals_in(sys.argv[1])
    wanted = [l.strip() for l in open(sys.argv[2]) if l[:1].isalnum() and "." in l]
    missing = [w for w in wanted if w not in have]
    for m in missing:
        print(f"{sys.argv[2]}: {m} is not in {sys.argv[1]}")
    print(f"{len(wanted) - len(missing)} of {len(wanted)} signals of {sys.argv[2]} found")
    sys.exit(1 if missing else 0)


if __name__ == "__main__":
    main()

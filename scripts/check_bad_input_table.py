#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks the bad-input table of docs/architecture.md against the tests.

Every row of the table under "## Bad input" must name, in its last column, at least
one test as `Suite.Name`, and each must be defined in tb/*.cpp (TEST, TEST_F or
TEST_P). Exit status 1 lists the rows that fail. Usage: check_bad_input_table.py [repo]
"""
import pathlib
import re
import sys


def table_rows(doc: str):
    section = doc.split("\n## Bad input\n", 1)[1].split("\n## ", 1)[0]
    rows = [l for l in section.splitlines() if l.startswith("|")]
    return [r for r in rows[2:]]  # past the header and its rule


def defined_tests(tb: pathlib.Path):
    names = set()
    for f in sorted(tb.glob("*.cpp")):
        for m in re.finditer(r"^TEST(?:_F|_P)?\((\w+),\s*(\w+)\)", f.read_text(), re.M):
            names.add(f"{m.group(1)}.{m.group(2)}")
    return names


def main() -> int:
    repo = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    rows = table_rows((repo / "docs/architecture.md").read_text())
    tests = defined_tests(repo / "tb")
    bad = 0
    for row in rows:
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        case = cells[0]
        named = re.findall(r"`(\w+\.\w+)`", cells[-1]) if len(cells) >= 3 else []
        if not named:
            print(f"no test named for: {case}")
            bad += 1
        for t in named:
            if t not in tests:
                print(f"{case}: no test {t} in tb/")
                bad += 1
    print(f"bad-input table: {len(rows)} rows, {bad} problems")
    return 1 if bad or not rows else 0


if __name__ == "__main__":
    sys.exit(main())

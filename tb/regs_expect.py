#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A second reading of the register map's SystemRDL source, for test_csr_regs.

    tb/regs_expect.py rtl/regs/ni_regs.rdl OUT.inc

Independent of scripts/regs_gen.py (which builds the register block and the C++
header): systemrdl-compiler elaborates the source with every array unrolled, and each
register element becomes one C++ initializer {address, reset value, software-writable
bits, kind}, its address and bits as the compiler works them out. The test checks the
verilated register block against these, so a generator that misplaces a register, a
field or a reset value fails it.
"""
import sys

from systemrdl import RDLCompiler
from systemrdl.node import RegNode
from systemrdl.rdltypes import OnWriteType


def kind(field):
    if field.get_property("counter"):
        return "kCounter"
    if field.get_property("onwrite") == OnWriteType.woclr:
        return "kWriteOneClears"
    if not field.is_sw_writable:
        return "kHardware" if field.is_hw_writable else "kConstant"
    return "kReadWrite"


def main():
    src, out = sys.argv[1], sys.argv[2]
    rdlc = RDLCompiler()
    rdlc.compile_file(src)
    top = rdlc.elaborate().top
    lines = [f"// From {src} by tb/regs_expect.py (systemrdl-compiler); do not edit."]
    for node in top.descendants(unroll=True):
        if not isinstance(node, RegNode):
            continue
        reset = writable = 0
        kinds = set()
        for f in node.fields():
            mask = ((1 << f.width) - 1) << f.lsb
            reset |= ((f.get_property("reset") or 0) << f.lsb) & mask
            if f.is_sw_writable and not f.get_property("counter") and f.get_property("onwrite") is None:
                writable |= mask
            kinds.add(kind(f))
        if len(kinds) != 1:
            sys.exit(f"regs_expect: {node.get_path()}: fields of different kinds")
        lines.append(f'{{0x{node.absolute_address:03X}u, 0x{reset:08X}u, 0x{writable:08X}u, '
                     f'RdlKind::{kinds.pop()}, "{node.get_path()}"}},')
    with open(out, "w") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

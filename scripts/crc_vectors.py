#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Known-answer vectors for the fabric CRCs, computed without any of our code.

ICRC: Python's zlib.crc32 (CRC-32/ISO-HDLC) over the packet with the variant
fields masked (LRH VL nibble and BTH resv8a set to ones).
VCRC: crcmod (PyPI) with polynomial 0x100B, reflected, init 0xFFFF, xorout 0xFFFF.
The numbers printed here are pasted into tb/test_codec.cpp; rerun to check them:
    .venv/bin/python scripts/crc_vectors.py    (scripts/setup.sh installs crcmod there)
"""
import zlib

import crcmod

vcrc = crcmod.mkCrcFun(0x1100B, initCrc=0x0000, rev=True, xorOut=0xFFFF)  # initCrc = init ^ xorout


def packet():
    # LRH: VL0 LVer0 | SL0 LNH=2 | DLID 0x0002 | PktLen 15 words | SLID 0x0001
    lrh = bytes([0x00, 0x02, 0x00, 0x02, 0x00, 0x0F, 0x00, 0x01])
    # BTH: opcode C0, flags 0, P_Key FFFF, resv8a 0, QP 0x000010, A/resv 0, PSN 0x000005
    bth = bytes([0xC0, 0x00, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x05])
    # TEH: flags rx_xlate, memid 3
    teh = bytes([0x01, 0x00, 0x00, 0x03] + [0] * 8)
    # TLP: MWr 4DW, 2 DW, requester 0, tag 0, BE ff, address 0x1000, data 11..18
    tlp = bytes([0x60, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0xFF] + [0] * 6 + [0x10, 0x00] +
                list(range(0x11, 0x19)))
    return lrh + bth + teh + tlp


def main():
    print("crc32('123456789') = 0x%08X" % zlib.crc32(b"123456789"))
    print("vcrc('123456789')  = 0x%04X" % vcrc(b"123456789"))
    p = bytearray(packet())
    masked = bytearray(p)
    masked[0] |= 0xF0
    masked[12] = 0xFF
    icrc = zlib.crc32(bytes(masked))
    p += icrc.to_bytes(4, "little")
    v = vcrc(bytes(p))
    p += v.to_bytes(2, "little")
    print("packet icrc = 0x%08X vcrc = 0x%04X" % (icrc, v))
    print("packet bytes:", ", ".join("0x%02X" % b for b in p))


if __name__ == "__main__":
    main()

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Test: a capture written by ni_sim opens in tshark, which decodes LRH and BTH of
# every packet: node LIDs, opcodes and PSNs match what the simulation sent, and each
# packet's interface names the node and capture point it was taken at (any node count).
#   check_capture.sh <ni_sim> <workdir>
set -euo pipefail
sim=$1
dir=$2
mkdir -p "$dir"
"$sim" --nodes 2 --ops 10 --size 64 --scenario mixed --pcap "$dir/check.pcapng" > "$dir/check.log"
fields=$(tshark -r "$dir/check.pcapng" -T fields -e infiniband.lrh.slid -e infiniband.lrh.dlid \
         -e infiniband.bth.opcode -e infiniband.bth.psn -e frame.interface_name 2>/dev/null)
count=$(echo "$fields" | grep -c .)
expect=$(grep -E "^fabric packets" "$dir/check.log" | awk '{print $3}')
if [[ "$count" != "$expect" ]]; then
  echo "tshark decoded $count packets, the simulator sent $expect"; exit 1
fi
# Every packet goes between LIDs 1 and 2 and carries a tunnel opcode (0xC0/0xC1 = 192/193)
# or is an RC Acknowledge (0x11 = 17) of reliable delivery; it was captured at its
# sender's transmit (LID k is node k-1).
bad=$(echo "$fields" | awk -F'\t' '!(($1==1 && $2==2) || ($1==2 && $2==1)) || ($3!=192 && $3!=193 && $3!=17) ||
                                   $5 != "node" ($1 - 1) " tx"' | head -3)
if [[ -n "$bad" ]]; then
  echo "unexpected decoded fields: $bad"; exit 1
fi
# PSNs of node 1's requests (VC0 opcode 192) to its one peer count up from 0 without a gap.
psns=$(echo "$fields" | awk '$1==1 && $3==192 {print $4}' | tr '\n' ' ')
want=$(seq -s ' ' 0 $(( $(echo "$psns" | wc -w) - 1 )))
if [[ "${psns% }" != "$want" ]]; then
  echo "PSNs of node 1 requests: $psns"; exit 1
fi
# Six nodes, captured at each NI's receive under duplication: every packet's interface
# is the node its DLID names (the ERF record's own 2-bit interface would wrap), and the
# capture holds what the fabric delivered, duplicates included.
"$sim" --nodes 6 --ops 10 --size 64 --dup 0.05 --seed 3 --capture-at rx --pcap "$dir/rx.pcapng" > "$dir/rx.log"
rx=$(tshark -r "$dir/rx.pcapng" -T fields -e infiniband.lrh.dlid -e frame.interface_name 2>/dev/null)
wrong=$(echo "$rx" | awk -F'\t' '$2 != "node" ($1 - 1) " rx"' | head -3)
if [[ -n "$wrong" ]]; then
  echo "packets captured at the wrong interface: $wrong"; exit 1
fi
sent=$(grep -E "^fabric packets" "$dir/rx.log" | awk '{print $3}')
dups=$(grep -E "^fabric faults injected" "$dir/rx.log" | sed -E 's/.*duplicated ([0-9]+).*/\1/')
got=$(echo "$rx" | grep -c .)
nodes=$(echo "$rx" | cut -f2 | sort -u | wc -l)
if [[ "$got" != "$((sent + dups))" || "$nodes" != 6 ]]; then
  echo "rx capture: $got packets at $nodes interfaces; sent $sent, duplicated $dups"; exit 1
fi
# The NI's dissector on a whole run: every packet of a fault-free capture has both CRCs
# right, every tunnel packet its TLP type; captured at the receivers under corruption,
# the packets it finds damaged are the ones the codec found (the report's CRC errors).
lua="$(dirname "$0")/wireshark/ni_tunnel.lua"
ok=$(tshark -X lua_script:"$lua" -r "$dir/check.pcapng" -T fields -e nitunnel.icrc_ok -e nitunnel.vcrc_ok \
       -e nitunnel.opcode -e nitunnel.tlp.fmt_type 2>/dev/null |
     awk -F'\t' '$1!=1 || $2!=1 || ($3=="0xc0" && $4=="") {bad++} END {print bad+0}')
if [[ "$ok" != 0 ]]; then
  echo "dissector: $ok packets of a fault-free run with a wrong CRC or no TLP"; exit 1
fi
"$sim" --nodes 4 --ops 20 --size 64 --corrupt 0.05 --seed 5 --capture-at rx --pcap "$dir/corrupt.pcapng" > "$dir/corrupt.log"
damaged=$(tshark -X lua_script:"$lua" -r "$dir/corrupt.pcapng" -T fields -e nitunnel.icrc_ok -e nitunnel.vcrc_ok \
            2>/dev/null | awk -F'\t' '$1==0 || $2==0 || $1=="" {n++} END {print n+0}')
codec=$(grep -E "^fabric CRC errors seen" "$dir/corrupt.log" | awk '{print $5}')
if [[ "$damaged" != "$codec" || "$codec" == 0 ]]; then
  echo "dissector found $damaged damaged packets, the codec $codec"; exit 1
fi
echo "tshark decoded $count packets: LIDs, opcodes, PSNs and interfaces as sent; rx capture of 6 nodes: $got packets;" \
     "the dissector finds the $codec damaged packets the codec found"

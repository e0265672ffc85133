#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Test: a capture written by ni_sim opens in tshark, which decodes LRH and BTH of
# every packet: node LIDs, opcodes and PSNs match what the simulation sent.
#   check_capture.sh <ni_sim> <workdir>
set -euo pipefail
sim=$1
dir=$2
mkdir -p "$dir"
"$sim" --nodes 2 --ops 10 --size 64 --scenario mixed --pcap "$dir/check.erf" > "$dir/check.log"
fields=$(tshark -r "$dir/check.erf" -T fields -e infiniband.lrh.slid -e infiniband.lrh.dlid \
         -e infiniband.bth.opcode -e infiniband.bth.psn 2>/dev/null)
count=$(echo "$fields" | grep -c .)
expect=$(grep -E "^fabric packets" "$dir/check.log" | awk '{print $3}')
if [[ "$count" != "$expect" ]]; then
  echo "tshark decoded $count packets, the simulator sent $expect"; exit 1
fi
# Every packet goes between LIDs 1 and 2 and carries a tunnel opcode (0xC0/0xC1 = 192/193)
# or is an RC Acknowledge (0x11 = 17) of reliable delivery.
bad=$(echo "$fields" | awk '!(($1==1 && $2==2) || ($1==2 && $2==1)) || ($3!=192 && $3!=193 && $3!=17)' | head -3)
if [[ -n "$bad" ]]; then
  echo "unexpected decoded fields: $bad"; exit 1
fi
# PSNs of node 1's requests (VC0 opcode 192) to its one peer count up from 0 without a gap.
psns=$(echo "$fields" | awk '$1==1 && $3==192 {print $4}' | tr '\n' ' ')
want=$(seq -s ' ' 0 $(( $(echo "$psns" | wc -w) - 1 )))
if [[ "${psns% }" != "$want" ]]; then
  echo "PSNs of node 1 requests: $psns"; exit 1
fi
echo "tshark decoded $count packets: LIDs, opcodes and PSNs as sent"

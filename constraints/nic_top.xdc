# SPDX-License-Identifier: Apache-2.0
# Vivado form of constraints/nic_top.sdc: nic_top at 125 MHz, the reset asynchronous.
# (make synth has no Xilinx place and route; this is for a Vivado out-of-context run.)
create_clock -name clk_i -period 8.000 [get_ports clk_i]
set_false_path -from [get_ports rst_ni]

# SPDX-License-Identifier: Apache-2.0
# Timing target of nic_top (default configuration): 125 MHz on ECP5-85F speed
# grade 8 (issue 8 measures it). One clock; the reset is asynchronous.
create_clock -name clk_i -period 8.000 [get_ports clk_i]
set_false_path -from [get_ports rst_ni]

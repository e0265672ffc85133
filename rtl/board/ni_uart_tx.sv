// SPDX-License-Identifier: Apache-2.0
// UART transmitter, 8 data bits, no parity, one stop bit; the line idles high.
`default_nettype none

module ni_uart_tx #(
  parameter int unsigned ClkPerBit = 54  // clock cycles per bit: clock / baud rate
) (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic [7:0] data_i,
  input  logic valid_i,
  output logic ready_o,
  output logic tx_o
);
  localparam int unsigned CntW = $clog2(ClkPerBit + 1);
  logic [9:0] shift_q, shift_d;  // stop bit, data (LSB first), start bit
  logic [3:0] bits_q, bits_d;    // bits still to send
  logic [CntW-1:0] cnt_q, cnt_d;

  assign ready_o = bits_q == '0;
  assign tx_o = shift_q[0];

  always_comb begin
    shift_d = shift_q;
    bits_d = bits_q;
    cnt_d = cnt_q;
    if (bits_q == '0) begin
      if (valid_i) begin
        shift_d = {1'b1, data_i, 1'b0};
        bits_d = 4'd10;
        cnt_d = CntW'(ClkPerBit - 1);
      end
    end else if (cnt_q != '0) begin
      cnt_d = cnt_q - CntW'(1);
    end else begin
      shift_d = {1'b1, shift_q[9:1]};
      bits_d = bits_q - 4'd1;
      cnt_d = CntW'(ClkPerBit - 1);
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      shift_q <= '1;
      bits_q <= '0;
      cnt_q <= '0;
    end else begin
      shift_q <= shift_d;
      bits_q <= bits_d;
      cnt_q <= cnt_d;
    end
  end
endmodule

`default_nettype wire

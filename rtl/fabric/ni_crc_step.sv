// SPDX-License-Identifier: Apache-2.0
// A reflected CRC stepped over Bytes bytes at once (lane 0 first), as one XOR tree per
// result bit: the step is linear in {data, state}, so bit r of the result is the parity
// of that input ANDed with row r of a matrix computed at elaboration. Stepping byte by
// byte would chain the XORs of every byte (Bytes deep).
`default_nettype none

module ni_crc_step #(
  parameter int unsigned Width = 32,
  parameter logic [Width-1:0] Poly = 32'hEDB88320,  // reflected polynomial
  parameter int unsigned Bytes = 8,
  localparam int unsigned RowW = Width + Bytes * 8  // a row covers {data, state}
) (
  input  logic [Width-1:0] state_i,
  input  logic [Bytes*8-1:0] data_i,
  output logic [Width-1:0] state_o
);
  function automatic logic [Width*RowW-1:0] step_rows();
    logic [Width-1:0] c;
    logic [Bytes*8-1:0] d;
    for (int i = 0; i < RowW; i++) begin  // the image of input bit i
      c = (i < Width) ? Width'(1) << i : '0;
      d = (i < Width) ? '0 : (Bytes*8)'(1) << (i - Width);
      for (int j = 0; j < Bytes; j++) begin
        c = c ^ Width'(d[j*8 +: 8]);
        for (int k = 0; k < 8; k++) c = c[0] ? ((c >> 1) ^ Poly) : (c >> 1);
      end
      for (int r = 0; r < Width; r++) step_rows[r*RowW + i] = c[r];
    end
  endfunction
  localparam logic [Width*RowW-1:0] Rows = step_rows();

  always_comb begin
    for (int r = 0; r < Width; r++) state_o[r] = ^({data_i, state_i} & Rows[r*RowW +: RowW]);
  end
endmodule

`default_nettype wire

// SPDX-License-Identifier: Apache-2.0
// A reflected CRC stepped back over n units of Unit zero bytes, n = 0 to MaxBytes/Unit:
// the inverse of stepping it over them. A beat's CRC can so be taken over all its lanes,
// the unused ones as zeros, and then undone over those. A bit step is
// r' = (r >> 1) ^ (r[0] ? P : 0) and P's top bit is set, so r[0] = r'[Width-1]. One
// matrix per n, chosen by n_i: a coarser Unit (4 when whole DWs are undone) means fewer.
`default_nettype none

module ni_crc_back #(
  parameter int unsigned Width = 32,
  parameter logic [Width-1:0] Poly = 32'hEDB88320,  // reflected polynomial, top bit set
  parameter int unsigned MaxBytes = 8,
  parameter int unsigned Unit = 1,
  localparam int unsigned MaxN = MaxBytes / Unit,
  localparam int unsigned NW = $clog2(MaxN + 1)
) (
  input  logic [Width-1:0] state_i,
  input  logic [NW-1:0] n_i,
  output logic [Width-1:0] state_o
);
  function automatic logic [(MaxN+1)*Width*Width-1:0] back_rows();
    logic [Width-1:0] col;  // the image of state bit i
    for (int i = 0; i < Width; i++) begin
      col = Width'(1) << i;
      for (int n = 0; n <= MaxN; n++) begin
        for (int r = 0; r < Width; r++) back_rows[(n*Width + r)*Width + i] = col[r];
        for (int k = 0; k < 8 * Unit; k++) col = {col[Width-2:0] ^ (col[Width-1] ? Poly[Width-2:0] : '0), col[Width-1]};
      end
    end
  endfunction
  localparam logic [(MaxN+1)*Width*Width-1:0] Rows = back_rows();

  logic [MaxN:0][Width-1:0] back;
  always_comb begin
    for (int n = 0; n <= MaxN; n++) begin
      for (int r = 0; r < Width; r++) back[n][r] = ^(state_i & Rows[(n*Width + r)*Width +: Width]);
    end
    state_o = back[n_i];
  end
endmodule

`default_nettype wire

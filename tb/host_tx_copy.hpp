// SPDX-License-Identifier: Apache-2.0
// Drives ni_host_tx's local-copy input (copy_beat_i: {user, last, keep, data}) for the
// unit tests at every width.
#pragma once
#include <cstddef>

#include "tlp.hpp"
#include "verilated_ports.hpp"

namespace ni::tb {

// Offers the beat of `tlp` that starts at byte `off` (full lanes; bytes past its end
// zero) when `valid`, else nothing; returns whether it is the TLP's last beat.
template <class Model>
bool offerCopyBeat(Model& m, const Bytes& tlp, size_t off, bool valid, unsigned bpb) {
  const bool last = valid && off + bpb >= tlp.size();
  m.copy_valid_i = valid;
  for (unsigned j = 0; j < bpb; ++j) setField(m.copy_beat_i, 8 * j, 8, valid && off + j < tlp.size() ? tlp[off + j] : 0);
  setField(m.copy_beat_i, 8 * bpb, bpb, valid ? (1ull << bpb) - 1 : 0);
  setField(m.copy_beat_i, 9 * bpb, 1, last);
  setField(m.copy_beat_i, 9 * bpb + 1, 1, 0);
  return last;
}

}  // namespace ni::tb

// SPDX-License-Identifier: Apache-2.0
#include "soak.hpp"

#include <map>
#include <random>
#include <vector>

#include "address_map.hpp"

namespace ni {

namespace {

// Node s reaches node d through window d; node d's memory ID 0 lands at kLanding.
// Source s owns, at every target, kSlots slots of kSlotBytes and one counter, so the
// model of what each slot holds is known from s's own completed operations.
constexpr uint64_t kWindow = 1ull << 20;
constexpr uint64_t kLanding = 0x2'0000'0000ull;
constexpr unsigned kSlots = 32, kSlotBytes = 64;
constexpr uint64_t kPerSource = 4096;  // a source's area at a target: slots, then its counter
uint64_t srcArea(unsigned s) { return uint64_t(s) * kPerSource; }
uint64_t counterOff(unsigned s) { return srcArea(s) + kSlots * kSlotBytes; }

struct Pair {
  std::vector<Bytes> model = std::vector<Bytes>(kSlots, Bytes(kSlotBytes, 0));
  std::vector<bool> busy = std::vector<bool>(kSlots, false);
  bool atomicBusy = false;
  uint64_t adds = 0;  // fetch-adds completed: the counter's value
};

struct WriteRec {
  unsigned dst;
  uint64_t addr;  // landing address
  Bytes data;
  unsigned applied = 0, confirmed = 0;
};

}  // namespace

SoakResult runSoak(System& sys, const SoakConfig& cfg, const std::function<void(uint64_t)>& progress) {
  const unsigned n = sys.size();
  SoakResult res;
  for (unsigned d = 0; d < n; ++d) sys.setMemId(d, 0, MemRegion{true, kLanding, kWindow, true, true, true});
  for (unsigned s = 0; s < n; ++s)
    for (unsigned d = 0; d < n; ++d) {
      if (s == d) continue;
      Window w;
      w.base = kApertureBase + d * kWindow;
      w.size = kWindow;
      w.dstNode = d;
      w.atomic = true;
      w.confAt = static_cast<ConfAt>((s + d) % 3);
      sys.setWindow(s, d, w);
    }
  if (!sys.drain()) return res;

  std::mt19937_64 rng(cfg.seed);
  std::vector<std::vector<Pair>> pairs(n, std::vector<Pair>(n));
  std::vector<WriteRec> writes;
  // Memory applications, by (target, address, data): each write must be applied once.
  std::map<std::pair<unsigned, uint64_t>, std::vector<size_t>> byAddr;  // writes to that address
  for (unsigned d = 0; d < n; ++d)
    sys.node(d).onMemoryWrite([&, d](const Tlp& t, unsigned) {
      for (size_t id : byAddr[{d, t.addr}])
        if (writes[id].data == t.data) ++writes[id].applied;
    });
  std::vector<unsigned> outstanding(n, 0);
  uint64_t issued = 0, done = 0;
  const uint64_t t0 = sys.cycle();

  auto issue = [&](unsigned s) {
    unsigned d = static_cast<unsigned>(rng() % (n - 1));
    if (d >= s) ++d;
    const unsigned cpus = sys.node(s).cpus();  // several CPUs: each operation from one of them
    const unsigned cpu = cpus > 1 ? static_cast<unsigned>(rng() % cpus) : 0;
    Pair& p = pairs[s][d];
    const uint64_t win = kApertureBase + d * kWindow;
    const unsigned r = static_cast<unsigned>(rng() % 100);
    if (r >= 80 && !p.atomicBusy) {  // fetch-add 1 on s's counter at d: returns how many came before
      p.atomicBusy = true;
      sys.node(s).atomic(TlpKind::FetchAdd, win + counterOff(s), Bytes{1, 0, 0, 0, 0, 0, 0, 0},
                         [&, s, d](const LoadResult& lr) {
                           Pair& q = pairs[s][d];
                           if (!lr.ok) ++res.failed;
                           else if (getLe(lr.data.data(), 8) != q.adds) ++res.corrupted;
                           ++q.adds;  // applied once even if its answer failed
                           q.atomicBusy = false;
                           ++res.atomics;
                           --outstanding[s];
                           ++done;
                         }, cpu);
      return true;
    }
    const unsigned k = static_cast<unsigned>(rng() % kSlots);
    if (p.busy[k]) return false;
    p.busy[k] = true;
    const uint64_t off = srcArea(s) + k * kSlotBytes;
    if (r < 50) {  // confirmed write of 8 to 64 bytes at the slot's start
      Bytes data(4 * (2 + rng() % 15));
      for (auto& x : data) x = static_cast<uint8_t>(rng());
      const size_t id = writes.size();
      writes.push_back(WriteRec{d, kLanding + off, data});
      byAddr[{d, kLanding + off}].push_back(id);
      sys.node(s).confirmedStore(win + off, data, [&, s, d, k, id, win, off](const LoadResult& lr) {
        WriteRec& w = writes[id];
        if (++w.confirmed > 1) {
          ++res.confirmedTwice;
          return;
        }
        Pair& q = pairs[s][d];
        if (!lr.ok) ++res.failed;
        else if (getLe(lr.data.data(), 8) != win + off) ++res.wrongAddress;
        std::copy(w.data.begin(), w.data.end(), q.model[k].begin());
        q.busy[k] = false;
        res.payloadBytes += w.data.size();
        ++res.writes;
        --outstanding[s];
        ++done;
      }, cpu);
    } else {  // read the whole slot
      sys.node(s).load(win + off, kSlotBytes, [&, s, d, k](const LoadResult& lr) {
        Pair& q = pairs[s][d];
        if (!lr.ok) ++res.failed;
        else if (lr.data != q.model[k]) ++res.corrupted;
        q.busy[k] = false;
        res.payloadBytes += kSlotBytes;
        ++res.reads;
        --outstanding[s];
        ++done;
      }, cpu);
    }
    return true;
  };

  const uint64_t limit = 2000 * cfg.ops + 1'000'000;  // cycles: far beyond any healthy run
  while ((issued < cfg.ops || done < issued) && sys.cycle() - t0 < limit && !sys.rtlError()) {
    for (unsigned s = 0; s < n && issued < cfg.ops; ++s)
      if (outstanding[s] < cfg.inFlight && issue(s)) {
        ++outstanding[s];
        ++issued;
      }
    sys.tick();
    if (progress) progress(sys.cycle() - t0);
  }
  res.cycles = sys.cycle() - t0;
  res.drained = done == issued && sys.drain();

  // Every write applied once and confirmed once; memory holds the model.
  for (const WriteRec& w : writes) {
    res.lost += w.applied == 0;
    res.appliedTwice += w.applied > 1;
    res.unconfirmed += w.confirmed == 0;
  }
  for (unsigned s = 0; s < n; ++s)
    for (unsigned d = 0; d < n; ++d) {
      if (s == d) continue;
      const Pair& p = pairs[s][d];
      for (unsigned k = 0; k < kSlots; ++k)
        res.corrupted += sys.node(d).memory().read(kLanding + srcArea(s) + k * kSlotBytes, kSlotBytes) != p.model[k];
      res.corrupted += getLe(sys.node(d).memory().read(kLanding + counterOff(s), 8).data(), 8) != p.adds;
    }
  for (unsigned d = 0; d < n; ++d) sys.node(d).onMemoryWrite({});
  return res;
}

}  // namespace ni

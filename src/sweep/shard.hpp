// A sweep split over hosts: `sweep --shard i/N` measures the i-th of N slices of its table
// cells, the same slices on every host for the same config, providers and filter, balanced by
// each cell's estimated time (plan.hpp: cell_seconds). The runs of the N shards are joined into
// one afterwards (sweep/join_shards.hpp). Torch-free.
#pragma once
#include <string>
#include <vector>

#include "config/config.hpp"
#include "record/run_options.hpp"
#include "sweep/plan.hpp"

namespace opbench {

struct Shard {
  int index = 0;  // 1..count
  int count = 0;  // 0: the whole sweep
  bool on() const { return count > 0; }
  std::string text() const;  // "i/N"
};

// "i/N" with 1 <= i <= N; InputError naming `option` (and the text) otherwise.
Shard parse_shard(const std::string& text, const std::string& option = "--shard");
// The shard a run's options name (RunOptions::shard; off when it names none).
Shard shard_of(const RunOptions& options);

// Which of `n` slices each cell goes to (0-based), by a deterministic greedy: the cells sorted
// by estimated seconds, longest first (ties in sweep order), each to the slice with the least
// estimated time so far (ties to the lowest slice).
std::vector<int> slice_of_cells(const std::vector<double>& seconds, int n);

// The cells of one shard (all of `sw`'s cells, stored or not, sliced with slice_of_cells), in
// sweep order; every cell when the shard is off.
std::vector<Cell> shard_cells(const Sweep& sw, const Timing& timing, const Shard& shard);

// The sweep with only the points of those cells (its tables all kept): what a shard measures,
// for the work done once per table and for a dry run's listing.
Sweep only_cells(const Sweep& sw, const std::vector<Cell>& cells);

// The estimated seconds of each of `n` slices of the cells (the load slice_of_cells gives them).
std::vector<double> slice_seconds(const Sweep& sw, const std::vector<Cell>& cells, const Timing& timing, int n);

}  // namespace opbench

// What a sweep has left to measure, as table cells: the seam where a sweep is split (across
// devices, across shards) before any point is measured. Torch-free.
#pragma once
#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "points/points.hpp"

namespace opbench {

// One table cell (a title and an x value): the points of its providers not stored yet. Its
// speed points are measured together, in rounds (Timing::rounds).
struct Cell {
  std::vector<size_t> points;  // indices into Sweep::points, in column order
};

// The cells holding a point whose key is not in `done`, in sweep order.
std::vector<Cell> plan_cells(const Sweep& sw, const std::set<std::string>& done);

// The cells with the points whose key is in `done` taken out (cells left empty dropped).
std::vector<Cell> drop_done(const Sweep& sw, const std::vector<Cell>& cells, const std::set<std::string>& done);

// The timing budget of measuring `cells`: warmup_ms + rep_ms for every speed point (its rounds
// share them), in seconds. What a call costs beyond its budget (the first call, do_bench's
// estimate, flushes, a memory point's single call) is not counted.
double timing_budget_seconds(const Sweep& sw, const std::vector<Cell>& cells, const Timing& timing);

// What a point costs beyond its timing budget, as the estimates count it: its inputs, the check
// against the reference, do_bench's estimate, a memory point's one call.
constexpr double kPointSetupSeconds = 0.05;

// The estimated time of one cell: its timing budget plus kPointSetupSeconds a point.
double cell_seconds(const Sweep& sw, const Cell& cell, const Timing& timing);

}  // namespace opbench

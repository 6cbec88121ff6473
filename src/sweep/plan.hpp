// What a sweep has left to measure, as table cells: the seam where a sweep is split (across
// devices, across shards) before any point is measured. Torch-free.
#pragma once
#include <cstddef>
#include <functional>
#include <map>
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

// The expected ms of one call of a point, 0 or less when unknown.
using CallMs = std::function<double(const Point& p)>;

// The expected seconds of a cell whose calls take call_ms each (unknown: free), as the protocol
// spends them at most: per speed point the first call and do_bench's five-call estimate, then
// in each of its rounds warm-up and repeat counts of max(1, budget / call) calls (the round's
// share of warmup_ms and rep_ms, with the flush); a memory point one call. kPointSetupSeconds a
// point on top. With every call free it is cell_seconds. (A point that stops on precision
// takes fewer rounds: the hand-out order only needs the cells' relative lengths.)
double expected_cell_seconds(const std::vector<const Point*>& points, const Timing& timing, const CallMs& call_ms);

// A point's call time from what is known: `measured` (title, x and provider -> the newest
// median stored for the same GPU model, ms) when it holds the point, else the op's minimal
// bytes at `peak_gbps` (the floor; 0 when either is unknown).
double expected_call_ms(const Point& p, const std::map<std::string, double>& measured, double peak_gbps);

}  // namespace opbench

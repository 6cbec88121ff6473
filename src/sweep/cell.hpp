// Measuring table cells on an Executor: a cell's speed points in rounds (Timing::rounds), the
// providers in turn within each round, its memory points once; each point within its
// wall-time budget (Timing::max_point_s). After each round a speed point's stop rule
// (measure/stop_rule.hpp) says whether it takes another: under stop: budget every round, under
// stop: noise until its median is precise enough or its ceiling. A point's first round makes
// its estimate, which its later rounds reuse (Timing::estimate_ms). A block of cells
// (Timing::interleave) has its rounds interleaved: round 1 of every cell in turn, then round
// 2, ... Knows nothing of the store: the seam where cells are handed to a device's worker.
// Torch-free.
#pragma once
#include <functional>
#include <vector>

#include "config/config.hpp"
#include "measure/executor.hpp"

namespace opbench {

// Runs one measure of `point`, which may take `seconds` before it counts as hung; returns
// false when it did not return in time (the guard then dealt with the point: stored it as
// failed). Empty: measures run unguarded.
using MeasureGuard =
    std::function<bool(const Point& point, double seconds, const std::function<void()>& measure)>;

struct CellResult {
  std::vector<Result> results;  // one per point, its rounds pooled
  std::vector<bool> abandoned;  // a measure did not return in time (see MeasureGuard)
  DeviceState state;            // the device right after the cell's last measure
  double seconds = 0;           // the wall time of the cell's measures, every round
  size_t side = 0;              // whose results they are: 0, or a side of a paired cell (paired_cell.hpp)
  // False when a stop came before its last round (nothing to store): its results are pooled
  // only once every round is measured.
  bool finished() const { return !results.empty(); }
};

using CellPoints = std::vector<const Point*>;  // a cell's points, in column order

// One cell, its rounds one after another.
CellResult measure_cell(Executor& ex, const CellPoints& points, const Timing& timing, const MeasureGuard& guard = {});

// A block of cells with their rounds interleaved: round r of each cell in turn (the cells in
// order, a cell's providers starting with provider r mod k), before round r + 1 of any; a
// cell takes part in rounds until none of its points wants another (memory cells: one; a
// point that stopped sits out the cell's later rounds). Before every cell's round
// but the very first the executor places its memory anew (Executor::new_round). One result per
// cell, in order. `interrupted` (when set) is asked before each cell's round in a block of several:
// once it is true the block ends, and the cells whose rounds were not all measured come back
// unfinished. A block of one cell is always finished, as a cell measured alone always was.
std::vector<CellResult> measure_cells(Executor& ex, const std::vector<CellPoints>& cells, const Timing& timing,
                                      const MeasureGuard& guard = {}, const std::function<bool()>& interrupted = {});

// The cells cut into consecutive blocks of at most `interleave` cells (at least one each).
std::vector<std::vector<CellPoints>> interleave_blocks(const std::vector<CellPoints>& cells, int interleave);

// One point's result from its rounds (Timing::rounds): the first error if any, else every
// round's samples pooled (in round order, with each round's count when there are several),
// their statistics, each round's control (when every round has one), the check of the round
// that failed it or has the largest error.
Result pool_rounds(const std::vector<Result>& rounds);

// The result of a point that failed for `why`, in its metric's unit.
Result failed_result(const Point& point, const std::string& why);

// The statistic a table shows for a result: the stat for speed, the peak for memory, -1 on error.
double shown_value(const Result& r, const std::string& stat);

// The error of a point whose wall-time budget ran out before its round `round` (1-based).
std::string budget_spent_error(const Timing& timing, int round, int rounds);
// The error of a point whose measure did not return within the budget and `grace_s`.
std::string hung_error(const Timing& timing, double grace_s);

}  // namespace opbench

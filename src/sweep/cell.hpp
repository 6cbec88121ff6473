// Measuring one table cell on an Executor: its speed points in rounds (Timing::rounds), the
// providers in turn within each round, its memory points once; each point within its
// wall-time budget (Timing::max_point_s). Knows nothing of the store: the seam where a cell
// is handed to a device's worker. Torch-free.
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
  DeviceState state;            // the device right after the cell's measures
};

CellResult measure_cell(Executor& ex, const std::vector<const Point*>& points, const Timing& timing,
                        const MeasureGuard& guard = {});

// One point's result from its rounds (Timing::rounds): the first error if any, else every
// round's samples pooled (in round order, with each round's count when there are several),
// their statistics, the largest check error.
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

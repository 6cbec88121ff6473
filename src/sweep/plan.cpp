#include "sweep/plan.hpp"

namespace opbench {

static bool same_cell(const Point& a, const Point& b) { return a.title == b.title && a.x_value == b.x_value; }

std::vector<Cell> plan_cells(const Sweep& sw, const std::set<std::string>& done) {
  std::vector<Cell> cells;
  for (size_t i = 0; i < sw.points.size();) {
    size_t j = i;
    Cell cell;
    for (; j < sw.points.size() && same_cell(sw.points[j], sw.points[i]); ++j)
      if (!done.count(sw.points[j].key())) cell.points.push_back(j);
    cell.last = j - 1;
    if (!cell.points.empty()) cells.push_back(std::move(cell));
    i = j;
  }
  return cells;
}

double timing_budget_seconds(const Sweep& sw, const std::vector<Cell>& cells, const Timing& timing) {
  size_t speed = 0;
  for (const auto& c : cells)
    for (size_t i : c.points) speed += sw.points[i].metric() == "speed";
  return double(speed) * (timing.warmup_ms + timing.rep_ms) / 1000.0;
}

}  // namespace opbench

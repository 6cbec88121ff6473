#include "sweep/plan.hpp"

namespace opbench {

static bool same_cell(const Point& a, const Point& b) { return a.title == b.title && a.x_value == b.x_value; }

std::vector<Cell> plan_cells(const Sweep& sw, const std::set<std::string>& done) {
  std::vector<Cell> cells;
  for (size_t i = 0; i < sw.points.size(); ++i) {
    if (cells.empty() || !same_cell(sw.points[cells.back().points.front()], sw.points[i])) cells.emplace_back();
    cells.back().points.push_back(i);
  }
  return done.empty() ? cells : drop_done(sw, cells, done);
}

std::vector<Cell> drop_done(const Sweep& sw, const std::vector<Cell>& cells, const std::set<std::string>& done) {
  std::vector<Cell> out;
  for (const auto& c : cells) {
    Cell left;
    for (size_t i : c.points)
      if (!done.count(sw.points[i].key())) left.points.push_back(i);
    if (!left.points.empty()) out.push_back(std::move(left));
  }
  return out;
}

static double budget_seconds(const Sweep& sw, const Cell& cell, const Timing& timing) {
  size_t speed = 0;
  for (size_t i : cell.points) speed += sw.points[i].metric() == "speed";
  return double(speed) * (timing.warmup_ms + timing.rep_ms) / 1000.0;
}

double timing_budget_seconds(const Sweep& sw, const std::vector<Cell>& cells, const Timing& timing) {
  double s = 0;
  for (const auto& c : cells) s += budget_seconds(sw, c, timing);
  return s;
}

double cell_seconds(const Sweep& sw, const Cell& cell, const Timing& timing) {
  return budget_seconds(sw, cell, timing) + double(cell.points.size()) * kPointSetupSeconds;
}

}  // namespace opbench

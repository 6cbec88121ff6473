#include "sweep/plan.hpp"

#include <algorithm>

#include "ops/op.hpp"

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

namespace {

// One round of one speed point: the warm-up and the repeats, each at least one call.
double round_ms(double call_ms, double warmup_ms, double rep_ms) {
  if (!(call_ms > 0)) return warmup_ms + rep_ms;
  return std::max(call_ms, warmup_ms) + std::max(call_ms, rep_ms);
}

}  // namespace

double expected_cell_seconds(const std::vector<const Point*>& points, const Timing& timing, const CallMs& call_ms) {
  const int rounds = std::max(1, timing.rounds);
  double ms = 0;
  for (const Point* p : points) {
    const double call = call_ms ? call_ms(*p) : 0;
    if (p->metric() == "speed")  // the first call and do_bench's five-call estimate once, then every round
      ms += 6 * std::max(call, 0.0) + rounds * round_ms(call, timing.warmup_ms / rounds, timing.rep_ms / rounds);
    else ms += std::max(call, 0.0);
  }
  return ms / 1000.0 + double(points.size()) * kPointSetupSeconds;
}

double expected_call_ms(const Point& p, const std::map<std::string, double>& measured, double peak_gbps) {
  auto it = measured.find(p.key());
  if (it != measured.end() && it->second > 0) return it->second;
  const OpSpec* op = find_op(p.op);
  if (!op || !op->min_bytes || !(peak_gbps > 0)) return 0;
  try {
    return op->min_bytes(op->with_defaults(p.params)) / (peak_gbps * 1e9) * 1e3;
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace opbench

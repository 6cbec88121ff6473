#include "sweep/cell.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "record/check_rule.hpp"
#include "measure/stop_rule.hpp"

namespace opbench {

namespace {

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", s);
  return buf;
}

// Each round takes its share of the warm-up and repetition budgets.
Timing round_timing(const Timing& timing, int rounds) {
  Timing t = timing;
  t.warmup_ms = timing.warmup_ms / rounds;
  t.rep_ms = timing.rep_ms / rounds;
  return t;
}

// One round of one point, within what is left of its budget (`spent` so far, updated).
Result measure_one_round(Executor& ex, const Point& p, Timing t, double& spent, const MeasureGuard& guard,
                     bool& abandoned) {
  t.max_point_s -= spent;
  Result r;
  auto measure = [&] { r = ex.measure(p, t); };
  const auto t0 = std::chrono::steady_clock::now();
  if (guard) abandoned = !guard(p, t.max_point_s, measure);
  else measure();
  spent += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (abandoned) {  // a late result: the guard stored the point as failed already
    r = Result();
    r.error = "did not return in time";
  }
  return r;
}

}  // namespace

std::string budget_spent_error(const Timing& timing, int round, int rounds) {
  return "over its wall-time budget (timing.max_point_s = " + seconds_text(timing.max_point_s) + ") before round " +
         std::to_string(round) + " of " + std::to_string(rounds);
}

std::string hung_error(const Timing& timing, double grace_s) {
  return "a call did not return within the wall-time budget (timing.max_point_s = " +
         seconds_text(timing.max_point_s) + ") and " + seconds_text(grace_s) + " more; the point was abandoned";
}

namespace {

std::vector<std::vector<double>> samples_by_round(const std::vector<Result>& rounds) {
  std::vector<std::vector<double>> out;
  for (const auto& r : rounds) out.push_back(r.samples);
  return out;
}

// A cell under way in a block: its points' rounds so far, what is left of their budgets, and
// whether each wants another round (measure/stop_rule.hpp).
struct CellRounds {
  const CellPoints* points = nullptr;
  bool speed = true;
  int rounds = 1;  // the most rounds a point takes
  Timing per_round;
  std::vector<std::vector<Result>> got;
  std::vector<double> spent;
  std::vector<double> estimate;        // each point's, from its first round (0: not yet)
  std::vector<StopDecision> decision;  // each point's after its last round
  CellResult out;

  CellRounds(const CellPoints& p, const Timing& timing) : points(&p) {
    const size_t k = p.size();
    speed = p.front()->metric() != "memory";
    rounds = speed ? std::max(1, timing.rounds) : 1;
    per_round = round_timing(timing, rounds);
    got.resize(k);
    spent.assign(k, 0);
    estimate.assign(k, 0);
    decision.resize(k);
    out.abandoned.assign(k, false);
  }

  bool done() const { return out.finished(); }

  // Whether point c takes part in the next round: not stopped, failed or abandoned.
  bool wants_round(size_t c) const {
    if (out.abandoned[c] || (!got[c].empty() && !got[c].back().ok())) return false;
    if (!speed) return got[c].empty();
    return decision[c].reason == StopReason::go_on;
  }

  // Round r: the providers in turn, starting with provider r mod k (every provider takes every
  // place in the order equally often: the first measure after new inputs runs differently,
  // docs/measurement.md, rounds). A point that failed (or was abandoned) or stopped sits out
  // the rounds after; the cell is pooled once none wants another.
  void measure_round(Executor& ex, int r, const Timing& timing, const MeasureGuard& guard) {
    const size_t k = points->size();
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t q = 0; q < k; ++q) {
      const size_t c = (q + size_t(r)) % k;
      if (wants_round(c)) measure_point(ex, c, r, timing, guard);
    }
    out.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    bool more = false;
    for (size_t c = 0; c < k; ++c) more = more || wants_round(c);
    if (!more) finish(ex);
  }

  void measure_point(Executor& ex, size_t c, int r, const Timing& timing, const MeasureGuard& guard) {
    const Point& p = *(*points)[c];
    if (spent[c] >= timing.max_point_s) {
      got[c].push_back(failed_result(p, budget_spent_error(timing, r + 1, rounds)));
      return;
    }
    bool abandoned = false;
    Timing t = per_round;
    t.estimate_ms = estimate[c];
    t.check = r == 0;
    got[c].push_back(measure_one_round(ex, p, t, spent[c], guard, abandoned));
    out.abandoned[c] = abandoned;
    const Result& last = got[c].back();
    if (!last.ok() || !speed) return;
    if (!(estimate[c] > 0)) estimate[c] = last.estimate_ms;
    // At least a round per provider: each has then come first after new inputs once.
    Timing rule = timing;
    rule.min_rounds = std::max(rule.min_rounds, int(points->size()));
    decision[c] = stop_after(rule, samples_by_round(got[c]), estimate[c]);
  }

  void finish(Executor& ex) {
    for (size_t c = 0; c < got.size(); ++c) {
      Result pooled = pool_rounds(got[c]);
      if (speed && pooled.ok() && !got[c].empty()) {
        pooled.stop_reason = stop_reason_name(decision[c].reason);
        pooled.precision = decision[c].precision;
      }
      out.results.push_back(std::move(pooled));
    }
    out.state = ex.device_state();  // the device right after the cell's last measures
  }
};

}  // namespace

CellResult measure_cell(Executor& ex, const CellPoints& points, const Timing& timing, const MeasureGuard& guard) {
  return measure_cells(ex, {points}, timing, guard).front();
}

std::vector<CellResult> measure_cells(Executor& ex, const std::vector<CellPoints>& cells, const Timing& timing,
                                      const MeasureGuard& guard, const std::function<bool()>& interrupted) {
  std::vector<CellRounds> block;
  int passes = 0;
  for (const auto& c : cells) {
    block.emplace_back(c, timing);
    passes = std::max(passes, block.back().rounds);
  }
  bool first = true, stopped = false;
  for (int r = 0; r < passes && !stopped; ++r)
    for (auto& cell : block) {
      if (r >= cell.rounds || cell.done()) continue;
      if (!first && block.size() > 1 && interrupted && interrupted()) {  // one cell alone is finished
        stopped = true;
        break;
      }
      ex.set_round(r);
      if (!first) ex.new_round();
      first = false;
      cell.measure_round(ex, r, timing, guard);
    }
  std::vector<CellResult> out;
  for (auto& cell : block) out.push_back(std::move(cell.out));
  return out;
}

std::vector<std::vector<CellPoints>> interleave_blocks(const std::vector<CellPoints>& cells, int interleave) {
  const size_t size = size_t(std::max(1, interleave));
  std::vector<std::vector<CellPoints>> out;
  for (size_t i = 0; i < cells.size(); i += size)
    out.emplace_back(cells.begin() + long(i), cells.begin() + long(std::min(cells.size(), i + size)));
  return out;
}

// Whether round result `r`'s check is the one to keep over `kept`'s: a failure over a pass, then
// the larger error (an unchecked round has none).
static bool worse_check(const Result& r, const Result& kept) {
  if (r.check_failed != kept.check_failed) return r.check_failed;
  return r.rel_err > kept.rel_err;
}

// The median of the rounds' host shares (NaN when none has one).
static double median_share(const std::vector<Result>& rounds) {
  std::vector<double> v;
  for (const auto& r : rounds)
    if (std::isfinite(r.host_share)) v.push_back(r.host_share);
  return v.empty() ? std::nan("") : summarize(v).median;
}

Result pool_rounds(const std::vector<Result>& rounds) {
  if (rounds.empty()) return Result();
  for (const auto& r : rounds)
    if (!r.ok()) return r;
  Result out = rounds.front();
  out.samples.clear();
  out.rounds.clear();
  out.control.clear();
  for (const auto& r : rounds) {
    out.samples.insert(out.samples.end(), r.samples.begin(), r.samples.end());
    if (rounds.size() > 1) out.rounds.push_back(int64_t(r.samples.size()));
    out.control.insert(out.control.end(), r.control.begin(), r.control.end());
    if (worse_check(r, out)) set_check(out, check_figures(r), r.check_failed);
  }
  if (out.control.size() != rounds.size()) out.control.clear();  // a round without: none
  out.host_share = median_share(rounds);
  out.stats = summarize(out.samples);
  // GB/s and % of peak go as 1 / median: rescaled from the first round's.
  const double m0 = rounds.front().stats.median, m = out.stats.median;
  if (m0 > 0 && m > 0) {
    out.gbps = rounds.front().gbps * m0 / m;
    out.pct_peak = rounds.front().pct_peak * m0 / m;
  }
  return out;
}

Result failed_result(const Point& point, const std::string& why) {
  Result r;
  r.unit = point.metric() == "memory" ? "MiB" : "ms";
  r.error = why;
  return r;
}

double shown_value(const Result& r, const std::string& stat) {
  if (!r.ok()) return -1;
  return r.stats.get(stat);
}

}  // namespace opbench

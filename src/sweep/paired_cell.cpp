#include "sweep/paired_cell.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

#include "measure/stop_rule.hpp"

namespace opbench {

namespace {

// One side's rounds of the cell so far: each point's results, what is left of its budget, its
// estimate (from its first round) and its stop rule's decision after its last round.
struct SideRounds {
  std::vector<std::vector<Result>> got;
  std::vector<double> spent, estimate;
  std::vector<StopDecision> decision;
  double seconds = 0;

  explicit SideRounds(size_t k) : got(k), spent(k, 0), estimate(k, 0), decision(k) {}
  bool failed(size_t c) const { return !got[c].empty() && !got[c].back().ok(); }
};

std::vector<std::vector<double>> samples_by_round(const std::vector<Result>& rounds) {
  std::vector<std::vector<double>> out;
  for (const auto& r : rounds) out.push_back(r.samples);
  return out;
}

class PairedRounds {
 public:
  PairedRounds(const std::array<Executor*, 2>& sides, const CellPoints& points, const Timing& timing,
               double same_within)
      : ex_(sides), points_(points), timing_(timing), same_within_(same_within),
        side_{SideRounds(points.size()), SideRounds(points.size())}, pair_stop_(points.size(), StopReason::go_on) {
    speed_ = points.front()->metric() != "memory";
    processes_ = std::max(1, timing.processes);
    rounds_ = speed_ ? std::max({1, timing.rounds, processes_}) : 1;
    per_round_ = timing;
    per_round_.warmup_ms = timing.warmup_ms / rounds_;
    per_round_.rep_ms = timing.rep_ms / rounds_;
    rule_ = timing;
    // each provider first once, each pair of processes once
    rule_.min_rounds = std::max({rule_.min_rounds, int(points.size()), processes_});
  }

  std::array<CellResult, 2> run() {
    for (int r = 0; r < rounds_ && any_wants(); ++r) {
      for (Executor* ex : ex_) {
        ex->set_round(r);  // the process of round r places its memory anew
        if (r > 0) ex->new_round();
      }
      measure_round(r);
    }
    return {pooled(kBase), pooled(kHead)};
  }

 private:
  // Whether side s's rule asks point c for another round (a failed side asks for none).
  bool side_wants(size_t s, size_t c) const {
    const SideRounds& side = side_[s];
    if (side.failed(c)) return false;
    if (!speed_) return side.got[c].empty();
    const StopReason why = side.decision[c].reason;
    // precise enough, but the pairs of processes do not yet hold as many rounds each
    if (why == StopReason::noise && side.got[c].size() % size_t(processes_) != 0) return true;
    return why == StopReason::go_on;
  }
  // The pair takes another round while either side wants one (both sides measure it), unless
  // its paired interval is precise enough already or has decided that the sides are the same.
  bool pair_wants(size_t c) const {
    return pair_stop_[c] == StopReason::go_on && (side_wants(kBase, c) || side_wants(kHead, c));
  }

  // Under stop: noise, after min_rounds and whole turns through the processes, the pair's
  // interval over the pairs of processes (as diff's paired rule takes it); nothing before.
  std::optional<PairedInterval> pair_interval(size_t c) const {
    const auto& b = side_[kBase].got[c];
    const auto& h = side_[kHead].got[c];
    if (rule_.stop_rule != StopRule::noise || b.size() != h.size() || int(b.size()) < std::min(rule_.min_rounds, rounds_) ||
        b.size() % size_t(processes_) != 0)  // every pair of processes as many rounds
      return std::nullopt;
    std::vector<double> mb, mh;
    for (size_t r = 0; r < b.size(); ++r) {
      if (!b[r].ok() || !h[r].ok() || b[r].samples.empty() || h[r].samples.empty()) return std::nullopt;
      mb.push_back(summarize(b[r].samples).median);
      mh.push_back(summarize(h[r].samples).median);
    }
    PairedInterval e = paired_interval(mb, mh, processes_);
    if (e.ratios.empty()) return std::nullopt;
    return e;
  }
  // Whether the pair's interval is now narrower than the noise target.
  static bool precise(const PairedInterval& e, double noise_pct) { return e.width() * 100 <= noise_pct; }
  // Whether the pair has decided SAME: its interval wholly within the threshold on both sides,
  // and the ratio of the pooled medians (what diff compares) within half of it.
  bool same(size_t c, const PairedInterval& e) const {
    if (!(same_within_ > 0) || e.lo < 1 - same_within_ || e.hi > 1 + same_within_) return false;
    const Result b = pool_rounds(side_[kBase].got[c]), h = pool_rounds(side_[kHead].got[c]);
    if (!(b.stats.median > 0) || !(h.stats.median > 0)) return false;
    return std::fabs(h.stats.median / b.stats.median - 1) <= same_within_ / 2;
  }
  bool any_wants() const {
    for (size_t c = 0; c < points_.size(); ++c)
      if (pair_wants(c)) return true;
    return false;
  }

  void measure_round(int r) {
    const size_t k = points_.size();
    for (size_t q = 0; q < k; ++q) {
      const size_t c = (q + size_t(r)) % k;
      if (!pair_wants(c)) continue;
      const size_t first = first_side(r, processes_);
      for (size_t s : {first, 1 - first})
        if (!side_[s].failed(c)) measure_point(s, c, r);
      if (!speed_) continue;
      if (const auto e = pair_interval(c))
        pair_stop_[c] = precise(*e, rule_.noise_pct) ? StopReason::noise
                        : same(c, *e)                ? StopReason::decided
                                                     : StopReason::go_on;
    }
  }

  void measure_point(size_t s, size_t c, int r) {
    SideRounds& side = side_[s];
    const Point& p = *points_[c];
    if (side.spent[c] >= timing_.max_point_s) {
      side.got[c].push_back(failed_result(p, budget_spent_error(timing_, r + 1, rounds_)));
      return;
    }
    Timing t = per_round_;
    t.max_point_s -= side.spent[c];
    t.estimate_ms = side.estimate[c];
    t.check = r == 0;
    const auto t0 = std::chrono::steady_clock::now();
    side.got[c].push_back(ex_[s]->measure(p, t));
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    side.spent[c] += took;
    side.seconds += took;
    const Result& last = side.got[c].back();
    if (!last.ok() || !speed_) return;
    if (!(side.estimate[c] > 0)) side.estimate[c] = last.estimate_ms;
    side.decision[c] = stop_after(rule_, samples_by_round(side.got[c]), side.estimate[c]);
  }

  CellResult pooled(size_t s) {
    CellResult out;
    const SideRounds& side = side_[s];
    for (size_t c = 0; c < points_.size(); ++c) {
      Result r = pool_rounds(side.got[c]);
      if (speed_ && r.ok() && !side.got[c].empty()) {
        StopReason why = side.decision[c].reason;
        if (pair_stop_[c] != StopReason::go_on) why = pair_stop_[c];  // the pair's interval stopped it
        else if (why == StopReason::go_on) why = StopReason::ceiling;  // the other side's ceiling
        r.stop_reason = stop_reason_name(why);
        r.precision = side.decision[c].precision;
      }
      out.results.push_back(std::move(r));
    }
    out.abandoned.assign(points_.size(), false);
    out.state = ex_[s]->device_state();
    out.seconds = side.seconds;
    out.side = s;
    return out;
  }

  std::array<Executor*, 2> ex_;
  const CellPoints& points_;
  const Timing& timing_;
  double same_within_;  // the diff's threshold (a fraction); 0: no decision stops a pair
  std::array<SideRounds, 2> side_;
  // What stopped each pair's interval: noise (narrower than the noise target), decided (within
  // the threshold: SAME), or nothing yet (go_on).
  std::vector<StopReason> pair_stop_;
  bool speed_ = true;
  int rounds_ = 1, processes_ = 1;
  Timing per_round_, rule_;
};

}  // namespace

std::array<CellResult, 2> measure_paired_cell(const std::array<Executor*, 2>& sides, const CellPoints& points,
                                              const Timing& timing, double same_within) {
  return PairedRounds(sides, points, timing, same_within).run();
}

}  // namespace opbench

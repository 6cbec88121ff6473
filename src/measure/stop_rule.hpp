// When a speed point has been measured enough (Timing::stop): after each of its rounds, the
// sweep asks whether to measure another.
//
//   budget: every one of Timing::rounds rounds (do_bench's fixed budget, split into rounds).
//   noise:  the point stops once the 95% interval of its median is narrower than
//           Timing::noise_pct percent of the median, after at least min_rounds rounds and
//           min_samples samples; it stops anyway at the ceiling: `rounds` rounds, or rep_ms of
//           repetitions spent (each sample counts as the round's estimate, do_bench's unit).
//
// The interval (docs/measurement.md, "Stopping on precision"): samples within a round share one
// placement of the memory and are not independent, so the rounds are the independent
// observations. With R rounds whose medians have standard deviation s, the between-round half
// width is t(0.975, R - 1) s / sqrt(R) (a Student t interval for the rounds' location: their
// spread holds the within-round noise of each round's median as well as the placements'). It
// is never taken narrower than the distribution-free interval of the pooled samples' median
// (order statistics), which is what the samples alone could show if they were independent.
// Torch-free.
#pragma once
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "config/config.hpp"

namespace opbench {

// The 97.5% quantile of Student's t with `df` degrees of freedom (df >= 1).
double student_t_975(int df);

// The two-sided p-value of Student's t statistic `t` with `df` degrees of freedom.
double student_t_p(double t, int df);

// Two sides' rounds of one point in pairs, round r of one beside round r of the other (a paired
// comparison, sweep/paired_cell.hpp): the ratios of their round medians, head over base, the
// 95% interval of their geometric mean (Student's t over the log ratios) and the paired t
// test's two-sided p. With fewer than two pairs (or a median not above 0) no ratios, and NaN.
//
// `processes` P: each side's round r was measured in its worker process r mod P. What lasts as
// long as a process (where its allocations landed, its launch path) moves every round of that
// process alike, so the rounds of one pair of processes are not independent evidence: with
// P >= 2 and at least P pairs, the log ratios are averaged within each pair of processes and
// the interval and p are Student's t over those P means (P - 1 degrees of freedom). A change
// that only some processes show then widens the interval instead of deciding it.
struct PairedInterval {
  std::vector<double> ratios;
  double lo = 0, hi = 0, p = 0;
  size_t units = 0;  // the independent units the interval is over: the pairs, or the pairs of processes
  // hi / lo - 1: how narrowly the pairs fix the change (NaN without an interval).
  double width() const { return hi / lo - 1; }
  // The pairs' geometric mean: the interval's centre (it is symmetric in the logs).
  double mean() const { return std::sqrt(lo * hi); }
};
PairedInterval paired_interval(const std::vector<double>& base_medians, const std::vector<double>& head_medians,
                               int processes = 1);

// How precisely the rounds so far fix a point's median.
struct Precision {
  double median = 0;     // of every sample, pooled
  double lo = 0, hi = 0; // the 95% interval around it
  // (hi - lo) / median: the interval's width relative to the median (0 when the median is 0).
  double width() const { return median > 0 ? (hi - lo) / median : 0; }
};
// Each round's samples, in order (rounds without samples are skipped). All empty: median 0.
Precision median_precision(const std::vector<std::vector<double>>& rounds);

// decided: a side of `opbench ab` whose pair's interval decided SAME (sweep/paired_cell.hpp).
enum class StopReason { go_on, noise, ceiling, budget, decided };
// "" (go on), "noise", "ceiling", "budget", "decided": as points store it.
const char* stop_reason_name(StopReason r);

struct StopDecision {
  StopReason reason = StopReason::go_on;
  double precision = 0;  // the interval's relative width after these rounds
};
// After the rounds so far of a speed point (each round's samples; `estimate_ms` the point's
// estimate, what one sample costs of rep_ms): stop, and why, or measure another round.
StopDecision stop_after(const Timing& t, const std::vector<std::vector<double>>& rounds, double estimate_ms);

}  // namespace opbench

// The stop rule of a speed point (stop_rule.hpp). Torch-free.
#include "measure/stop_rule.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "measure/executor.hpp"
#include "record/median_interval.hpp"

namespace opbench {

double student_t_975(int df) {
  // The published quantiles for 1 to 30 degrees of freedom; beyond, the Cornish-Fisher
  // expansion around the normal quantile (within 1e-4 there).
  static constexpr std::array<double, 30> kTable{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262,
                                                 2.228,  2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101,
                                                 2.093,  2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052,
                                                 2.048,  2.045, 2.042};
  df = std::max(df, 1);
  if (df <= int(kTable.size())) return kTable[size_t(df - 1)];
  const double z = 1.959964, n = double(df);
  const double z3 = z * z * z, z5 = z3 * z * z, z7 = z5 * z * z;
  return z + (z3 + z) / (4 * n) + (5 * z5 + 16 * z3 + 3 * z) / (96 * n * n) +
         (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * n * n * n);
}

namespace {

// The continued fraction of the incomplete beta function (modified Lentz's method).
double beta_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300, kEps = 1e-13;
  auto guard = [](double v) { return std::fabs(v) < kTiny ? kTiny : v; };
  double c = 1, d = 1 / guard(1 - (a + b) * x / (a + 1)), h = d;
  for (int m = 1; m <= 300; ++m) {
    const double even = m * (b - m) * x / ((a - 1 + 2 * m) * (a + 2 * m));
    d = 1 / guard(1 + even * d);
    c = guard(1 + even / c);
    h *= d * c;
    const double odd = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 1 + 2 * m));
    d = 1 / guard(1 + odd * d);
    c = guard(1 + odd / c);
    h *= d * c;
    if (std::fabs(d * c - 1) < kEps) break;
  }
  return h;
}

// The regularized incomplete beta function I_x(a, b).
double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) +
                                b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_fraction(a, b, x) / a;
  return 1 - front * beta_fraction(b, a, 1 - x) / b;
}


double sample_stdev(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  double mean = 0;
  for (double x : v) mean += x;
  mean /= double(v.size());
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return std::sqrt(ss / double(v.size() - 1));
}

}  // namespace

double student_t_p(double t, int df) {
  if (df < 1 || std::isnan(t)) return std::nan("");
  if (std::isinf(t)) return 0;
  return std::min(1.0, incomplete_beta(df / 2.0, 0.5, df / (df + t * t)));
}

PairedInterval paired_interval(const std::vector<double>& base_medians, const std::vector<double>& head_medians,
                               int processes) {
  const double nan = std::nan("");
  PairedInterval e{{}, nan, nan, nan, 0};
  if (base_medians.size() < 2 || base_medians.size() != head_medians.size()) return e;
  for (size_t i = 0; i < base_medians.size(); ++i) {
    if (!(base_medians[i] > 0) || !(head_medians[i] > 0)) return PairedInterval{{}, nan, nan, nan, 0};
    e.ratios.push_back(head_medians[i] / base_medians[i]);
  }
  // The units: each pair of rounds, or each pair of processes (the mean of its rounds' logs).
  const size_t P = processes >= 2 && e.ratios.size() >= size_t(processes) ? size_t(processes) : e.ratios.size();
  std::vector<double> sums(P, 0.0), counts(P, 0.0);
  for (size_t i = 0; i < e.ratios.size(); ++i) {
    sums[i % P] += std::log(e.ratios[i]);
    counts[i % P] += 1;
  }
  std::vector<double> logs;
  for (size_t u = 0; u < P; ++u) logs.push_back(sums[u] / counts[u]);
  const double n = double(logs.size());
  double mean = 0;
  for (double v : logs) mean += v / n;
  const double se = sample_stdev(logs) / std::sqrt(n);
  const double half = student_t_975(int(n) - 1) * se;
  e.units = logs.size();
  e.lo = std::exp(mean - half);
  e.hi = std::exp(mean + half);
  e.p = se > 0 ? student_t_p(mean / se, int(n) - 1) : (mean == 0 ? 1.0 : 0.0);
  return e;
}

Precision median_precision(const std::vector<std::vector<double>>& rounds) {
  Precision p;
  std::vector<double> pooled, medians;
  for (const auto& r : rounds) {
    if (r.empty()) continue;
    pooled.insert(pooled.end(), r.begin(), r.end());
    medians.push_back(summarize(r).median);
  }
  if (pooled.empty()) return p;
  p.median = summarize(pooled).median;
  const auto [lo, hi] = median_interval(pooled, 0.95);
  double half = std::max(p.median - lo, hi - p.median);
  const int R = int(medians.size());
  // One round: nothing shows how the placements move it; the samples' interval is all there is
  // (a point of one round can only stop at its ceiling: min_rounds >= 1 rounds are required).
  if (R >= 2) half = std::max(half, student_t_975(R - 1) * sample_stdev(medians) / std::sqrt(double(R)));
  p.lo = p.median - half;
  p.hi = p.median + half;
  return p;
}

const char* stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::go_on: return "";
    case StopReason::noise: return "noise";
    case StopReason::ceiling: return "ceiling";
    case StopReason::budget: return "budget";
    case StopReason::decided: return "decided";
  }
  return "";
}

StopDecision stop_after(const Timing& t, const std::vector<std::vector<double>>& rounds, double estimate_ms) {
  StopDecision d;
  const int done = int(rounds.size());
  size_t samples = 0;
  for (const auto& r : rounds) samples += r.size();
  d.precision = median_precision(rounds).width();
  if (t.stop_rule == StopRule::budget) {
    d.reason = done >= t.rounds ? StopReason::budget : StopReason::go_on;
    return d;
  }
  const bool enough = done >= std::min(t.min_rounds, t.rounds) && samples >= size_t(std::max<int64_t>(t.min_samples, 1));
  const double spent_ms = double(samples) * estimate_ms;
  if (enough && d.precision * 100 <= t.noise_pct) d.reason = StopReason::noise;
  else if (done >= t.rounds || (enough && spent_ms >= t.rep_ms)) d.reason = StopReason::ceiling;
  return d;
}

}  // namespace opbench

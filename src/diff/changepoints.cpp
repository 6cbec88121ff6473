#include "diff/changepoints.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <queue>

namespace opbench {

namespace {

constexpr size_t kMinInterior = 2;  // values in every segment but the last
constexpr double kSigmaFloor = 1e-3;  // 0.1%: identical values (an imported document twice)
constexpr double kPenaltyScale = 2;
constexpr double kStepSigmas = 3;
constexpr size_t kMinDifferences = 3;  // successive differences that estimate the series' noise

double median_sorted_copy(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The L1 cost of a growing segment: sum |y - median|, values added one at a time.
class L1Cost {
 public:
  void add(double y) {
    if (low_.empty() || y <= low_.top()) {
      low_.push(y);
      low_sum_ += y;
    } else {
      high_.push(y);
      high_sum_ += y;
    }
    if (low_.size() > high_.size() + 1) move(low_, high_, low_sum_, high_sum_);
    else if (high_.size() > low_.size()) move(high_, low_, high_sum_, low_sum_);
  }
  double cost() const {
    const double m = low_.top();  // a median: any value between the middle two costs the same
    return (m * double(low_.size()) - low_sum_) + (high_sum_ - m * double(high_.size()));
  }

 private:
  template <class A, class B>
  static void move(A& from, B& to, double& from_sum, double& to_sum) {
    const double v = from.top();
    from.pop();
    from_sum -= v;
    to.push(v);
    to_sum += v;
  }
  std::priority_queue<double> low_;                                            // lower half, max on top
  std::priority_queue<double, std::vector<double>, std::greater<double>> high_;  // upper half
  double low_sum_ = 0, high_sum_ = 0;
};

// The exact minimiser of sum(L1 cost) + gamma * segments: segment ends in [1, n].
std::vector<size_t> best_ends(const std::vector<double>& y, double gamma) {
  const size_t n = y.size();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> best(n + 1, inf);  // best[s]: the cost of y[0, s) ending a segment at s
  std::vector<size_t> from(n + 1, 0);
  best[0] = 0;
  for (size_t t = 0; t < n; ++t) {  // best[t] is final here: every segment ending at t starts before
    if (best[t] == inf) continue;
    L1Cost seg;
    for (size_t s = t + 1; s <= n; ++s) {
      seg.add(y[s - 1]);
      // (two values: the first alone may be a level too, as the latest alone may)
      if (s - t < kMinInterior && s != n && n != 2) continue;
      const double c = best[t] + seg.cost() + gamma;
      if (c < best[s]) {
        best[s] = c;
        from[s] = t;
      }
    }
  }
  std::vector<size_t> ends;
  for (size_t s = n; s > 0; s = from[s]) ends.push_back(s);
  std::reverse(ends.begin(), ends.end());
  return ends;
}

double level_of(const std::vector<double>& y, size_t begin, size_t end) {
  return median_sorted_copy(std::vector<double>(y.begin() + long(begin), y.begin() + long(end)));
}

// Merges the closest adjacent pair whose step is below the threshold or inside the noise,
// until none is left.
void merge_small_steps(const std::vector<double>& y, std::vector<Segment>& segs, double threshold, double sigma) {
  while (segs.size() > 1) {
    size_t pick = segs.size();
    double pick_step = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i + 1 < segs.size(); ++i) {
      const double d = std::fabs(segs[i + 1].level - segs[i].level);
      const double se = sigma * std::sqrt(1.0 / double(segs[i].size()) + 1.0 / double(segs[i + 1].size()));
      const bool small = std::expm1(d) < threshold || d < kStepSigmas * se;
      if (small && d < pick_step) {
        pick = i;
        pick_step = d;
      }
    }
    if (pick == segs.size()) return;
    segs[pick].end = segs[pick + 1].end;
    segs[pick].level = level_of(y, segs[pick].begin, segs[pick].end);
    segs.erase(segs.begin() + long(pick) + 1);
  }
}

}  // namespace

double series_sigma(const std::vector<double>& logs) {
  if (logs.size() < 2) return 0;
  std::vector<double> d;
  for (size_t i = 1; i < logs.size(); ++i) d.push_back(std::fabs(logs[i] - logs[i - 1]));
  // median |difference| of two normal values is 0.6745 * sqrt(2) sigma
  return median_sorted_copy(d) / (0.6745 * std::sqrt(2.0));
}

std::vector<Segment> fit_levels(const std::vector<double>& values, const LevelFitOptions& opt) {
  std::vector<double> y;
  for (double v : values) y.push_back(std::log(v));
  const size_t n = y.size();
  if (n == 0) return {};
  std::vector<Segment> segs;
  if (n < 2) {
    segs.push_back({0, n, 0});
  } else {
    // a few differences tell a step from noise no better than the step itself: below
    // kMinDifferences, the points' own noise (or the floor) alone
    const double from_series = n - 1 >= kMinDifferences ? series_sigma(y) : 0;
    const double sigma = std::max({from_series, opt.point_noise, kSigmaFloor});
    const double gamma = kPenaltyScale * sigma * std::sqrt(std::log(std::max<double>(double(n), 3)));
    size_t begin = 0;
    for (size_t end : best_ends(y, gamma)) {
      segs.push_back({begin, end, 0});
      begin = end;
    }
    for (auto& s : segs) s.level = level_of(y, s.begin, s.end);
    merge_small_steps(y, segs, opt.threshold, sigma);
  }
  for (auto& s : segs) s.level = std::exp(level_of(y, s.begin, s.end));
  return segs;
}

}  // namespace opbench

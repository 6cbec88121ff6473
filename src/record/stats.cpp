// Summary statistics of a point's samples.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "record/stats.hpp"

namespace opbench {

double Stats::get(const std::string& stat) const {
  if (stat == "median") return median;
  if (stat == "mean") return mean;
  if (stat == "min") return min;
  if (stat == "max") return max;
  if (stat == "p20") return p20;
  if (stat == "p80") return p80;
  throw std::invalid_argument("unknown stat '" + stat + "'");
}

// Quantiles by linear interpolation between order statistics (numpy's and torch.quantile's
// default, which triton.testing.do_bench uses).
static double quantile(const std::vector<double>& sorted, double q) {
  double pos = q * double(sorted.size() - 1);
  size_t lo = size_t(std::floor(pos));
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - double(lo)) * (sorted[hi] - sorted[lo]);
}

Stats summarize(std::vector<double> v) {
  Stats s;
  s.count = int64_t(v.size());
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / double(v.size());
  double ss = 0;
  for (double x : v) ss += (x - s.mean) * (x - s.mean);
  s.stdev = v.size() > 1 ? std::sqrt(ss / double(v.size() - 1)) : 0;
  s.min = v.front();
  s.max = v.back();
  s.median = quantile(v, 0.5);
  s.p20 = quantile(v, 0.2);
  s.p80 = quantile(v, 0.8);
  return s;
}

}  // namespace opbench

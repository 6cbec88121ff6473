#include "record/median_interval.hpp"

#include <algorithm>
#include <cmath>

namespace opbench {

std::pair<double, double> median_interval(std::vector<double> v, double conf) {
  if (v.empty()) return {std::nan(""), std::nan("")};
  std::sort(v.begin(), v.end());
  const double n = double(v.size());
  // z for a two-sided interval at `conf`: invert erfc by bisection (no table needed).
  double lo = 0, hi = 10;
  for (int i = 0; i < 100; ++i) {
    double mid = (lo + hi) / 2;
    if (std::erfc(mid / std::sqrt(2.0)) > 1 - conf) lo = mid;
    else hi = mid;
  }
  const double z = (lo + hi) / 2;
  // The median lies between order statistics j and k (1-based) with probability ~conf.
  const double half = z * std::sqrt(n) / 2;
  long j = long(std::floor(n / 2 - half)), k = long(std::ceil(n / 2 + half)) + 1;
  j = std::max(1L, j);
  k = std::min(long(v.size()), k);
  return {v[size_t(j - 1)], v[size_t(k - 1)]};
}

}  // namespace opbench

// How precisely a set of samples fixes its median: a distribution-free interval, what the stop
// rule (measure/stop_rule.hpp) and diff's verdicts (diff/verdict.hpp) read of a point's samples.
// Torch-free.
#pragma once
#include <utility>
#include <vector>

namespace opbench {

// Distribution-free interval [lo, hi] of the median of `v` at confidence `conf`, from order
// statistics (normal approximation to the binomial); the whole range for small samples.
std::pair<double, double> median_interval(std::vector<double> v, double conf);

}  // namespace opbench

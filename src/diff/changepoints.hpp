// Level shifts in a series of measurements (one point across commits): a penalised
// piecewise-constant fit, in the manner of asv's step detection. Torch-free.
//
// The model: the series is constant between change points, plus noise. On the logarithms of
// the values (so that a level and its shifts are relative), find the segmentation that
// minimises
//
//     sum over segments of  sum_i |y_i - median(segment)|   +   gamma * (number of segments)
//
// exactly, by dynamic programming over the end of the last segment (O(n^2 log n): each
// segment's L1 cost grown one value at a time with two heaps). Then:
//   - every segment but the last holds at least two values, so one outlier can never be a
//     level of its own (a two-value segment holding the outlier and a normal value saves
//     nothing under L1); the last segment may hold the latest value alone: a new level that
//     the next run confirms or refutes (and of two values each may be a level: the second
//     against the first, as opbench diff would judge them without samples);
//   - gamma = 2 * sigma * sqrt(ln n), sigma the noise of the series: the larger of a robust
//     estimate from successive differences (median |y_i - y_(i-1)| / 0.954, a normal's sigma;
//     a few real steps do not move a median; used from four values on, as fewer differences
//     cannot tell a step from noise), the noise the points show themselves (`point_noise`,
//     e.g. half their p20-p80 width over their median) and 0.1%;
//   - adjacent segments whose levels differ by less than the threshold (a fraction), or by
//     less than three standard errors of the difference (sigma * sqrt(1/len_a + 1/len_b)), are
//     merged, the closest pair first, until every remaining step passes both.
// Seeded simulations in tests/unit/history_test.cpp hold the constants to account: noise-only
// series of 4 to 100 values at 2% noise under a 5% threshold show a step in at most 3 of 100,
// and a shift of three sigmas in the middle of 20 values is found at least 8 times in 10.
#pragma once
#include <cstddef>
#include <vector>

#include "diff/threshold.hpp"

namespace opbench {

struct Segment {
  size_t begin = 0, end = 0;  // [begin, end) into the fitted values
  double level = 0;           // the median of its values
  size_t size() const { return end - begin; }
};

struct LevelFitOptions {
  double threshold = kDefaultThreshold;  // the smallest relative step that counts
  double point_noise = 0;   // relative noise the points show themselves (a floor for sigma)
};

// `values` must be positive (times, memory); returns one segment for fewer than two values
// and an empty list for none. Consecutive segments cover the values in order.
std::vector<Segment> fit_levels(const std::vector<double>& values, const LevelFitOptions& opt = {});

// The noise of a series of logarithms, estimated from successive differences (0 for fewer
// than two values). Exposed for tests.
double series_sigma(const std::vector<double>& logs);

}  // namespace opbench

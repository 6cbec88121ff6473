// The report's noise note (nvbench's noise column, per table): points whose samples spread
// by more than 10% of their median between p20 and p80, a sign that the table's numbers for
// them are not to be trusted to that precision. Torch-free.
#pragma once
#include <string>
#include <vector>

#include "report/table.hpp"
#include "store/store.hpp"

namespace opbench {

constexpr double kNoisySpread = 0.10;   // (p80 - p20) / median above this is noisy
constexpr long kNoiseMinSamples = 5;    // fewer samples show no spread worth judging

// (p80 - p20) / median of a point measured with at least kNoiseMinSamples samples; NaN
// otherwise (a failed point, an imported one without samples).
double relative_spread(const StoredPoint& p);

// For each of `tables` holding a noisy point of `points`, a list item naming the table, how
// many of its points are noisy and the worst few ("" when none is); preceded by a heading line.
std::string noise_notes(const std::vector<StoredPoint>& points, const std::vector<Table>& tables);

}  // namespace opbench

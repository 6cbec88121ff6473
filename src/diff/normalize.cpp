// --normalize peak: which pairs are judged on their use of the peak, and the head scaled to the
// base's peak (normalize.hpp). Torch-free.
#include "diff/normalize.hpp"

#include <cmath>

#include "diff/device_verdict.hpp"
#include "diff/verdict.hpp"

namespace opbench {

bool judged_on_peak(const StoredPoint& base, const StoredPoint& head, double pct_base, double pct_head) {
  const bool bound = pct_base >= kBandwidthBound || pct_head >= kBandwidthBound;  // NaN compares false
  const bool paced = base.result.host_share >= kHostBound || head.result.host_share >= kHostBound;
  return bound && !paced;
}

StoredPoint at_base_peak(StoredPoint head, const PeakScale& scale) {
  const double f = scale.factor();
  if (!(f > 0) || !std::isfinite(f) || !head.result.ok()) return head;
  for (double& v : head.result.samples) v *= f;
  if (head.value > 0) head.value *= f;
  return head;
}

}  // namespace opbench

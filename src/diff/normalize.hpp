// `--normalize peak` (diff, versus): a comparison across GPU models judged on how well each point
// uses its device instead of on its time. Torch-free.
//
// Between an H100 and an H200 every memory-bound point is faster on the H200, which says nothing
// a kernel team did not know; what it wants to know is which kernels fail to use the new chip.
// A speed point's fraction of its run's measured peak bandwidth (the op's minimal bytes over its
// time, over the peak the run's own probe measured) is the same on both GPUs when the kernel
// uses both equally well. So, with both runs' peaks known:
//   - bandwidth-bound pairs (kBandwidthBound% of the peak or more on either side, and neither
//     side host-paced: host share below kHostBound) are judged by the rules of verdict.hpp with
//     the head's samples and value scaled to the base's peak (times head peak / base peak): the
//     head's time had it used a device of the base's bandwidth as well as it used its own.
//     SAME: the point uses both GPUs alike; SLOWER: it uses the head's worse (its ratio is the
//     base's fraction of peak over the head's); the interval comes from both runs' samples.
//     Rule 8 (the devices' calibrations) is not applied to them: the peaks already stand for
//     the two devices' bandwidth.
//   - the others, latency-bound or host-paced, are judged on their time as a plain diff judges
//     them (rule 8 included: the devices' launch and dependent-load figures explain what they
//     may), and reported apart.
#pragma once
#include "record/run.hpp"

namespace opbench {

// The two runs' measured peak bandwidths, GB/s.
struct PeakScale {
  double base_gbps = 0, head_gbps = 0;
  double factor() const { return head_gbps / base_gbps; }  // what a head time is multiplied by
};

// Whether the pair is judged on its use of the peak (pct_*: % of each run's peak, NaN unknown).
bool judged_on_peak(const StoredPoint& base, const StoredPoint& head, double pct_base, double pct_head);

// `head` as if measured on a device of the base's peak: every sample and the value times the
// scale's factor (an error or a missing value stays as it is).
StoredPoint at_base_peak(StoredPoint head, const PeakScale& scale);

}  // namespace opbench

// A provider judged as a whole, where its points carry a control workload (a CPU's speed
// points). Torch-free.
//
// On a shared CPU one point's change must stand beyond the machine's drift (verdict.hpp, rule
// 5), which a point alone often cannot show for a change of a few tens of percent: its rounds
// scatter too much. A change of the provider's code moves all its points the same way, noise
// does not. So, over a provider's speed points that carry a control on both sides (at least
// kWholeMinPoints of them), each point's change against the control (Judgement::against:
// head's median over base's, every sample divided by its round's control median):
//   - SLOWER when their geometric mean exceeds 1 + band and at least kWholeAgree of the points
//     moved up; FASTER the mirror image (below 1 / (1 + band), that share moved down);
//   - SAME when the geometric mean lies within [1 / (1 + band), 1 + band]; UNSURE otherwise.
// band = max(the diff's threshold, kWholeBand). A provider SLOWER as a whole is a regression.
// The band comes from the CPU machine's repeatability
// (docs/findings/2026-11-26-cpu-control-workload.md): identical code, measured twice, moved a provider as a whole by up to 17%.
// Not judged in a paired comparison whose sides spread their rounds over worker processes
// (diff.hpp's DiffResult::processes): there all points of a side ran in the same processes, so
// an offset of one process moves them all alike, and the pairs of processes judge (rule 7).
#pragma once
#include <cstddef>
#include <string>

#include "diff/verdict.hpp"

namespace opbench {

constexpr double kWholeBand = 0.20;
constexpr double kWholeAgree = 0.8;
constexpr size_t kWholeMinPoints = 5;

struct WholeVerdict {
  bool judged = false;  // enough points with a control on both sides
  size_t points = 0, up = 0, down = 0;
  double geomean = 0;  // of the points' changes against the control (NaN when not judged)
  double band = 0;
  Verdict verdict = Verdict::Unsure;
};

// Accumulates one provider's points; `verdict` applies the rule above.
class WholeJudge {
 public:
  void add(const Judgement& j);
  WholeVerdict verdict(double threshold) const;

 private:
  double log_sum_ = 0;
  size_t points_ = 0, up_ = 0, down_ = 0;
};

// "torch as a whole: SLOWER, +31.0% against the control over 18 points (18 up, 0 down)".
std::string whole_sentence(const std::string& provider, const WholeVerdict& w);

}  // namespace opbench

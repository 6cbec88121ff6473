// A provider judged as a whole (rule: provider_verdict.hpp). Torch-free.
#include "diff/provider_verdict.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace opbench {

void WholeJudge::add(const Judgement& j) {
  if (!(j.against > 0) || !std::isfinite(j.against)) return;
  log_sum_ += std::log(j.against);
  points_++;
  if (j.against > 1) up_++;
  if (j.against < 1) down_++;
}

WholeVerdict WholeJudge::verdict(double threshold) const {
  WholeVerdict w;
  w.points = points_;
  w.up = up_;
  w.down = down_;
  w.band = std::max(threshold, kWholeBand);
  w.geomean = points_ ? std::exp(log_sum_ / double(points_)) : std::nan("");
  w.judged = points_ >= kWholeMinPoints;
  if (!w.judged) return w;
  const double agree = kWholeAgree * double(points_);
  if (w.geomean > 1 + w.band) w.verdict = double(up_) >= agree ? Verdict::Slower : Verdict::Unsure;
  else if (w.geomean < 1 / (1 + w.band)) w.verdict = double(down_) >= agree ? Verdict::Faster : Verdict::Unsure;
  else w.verdict = Verdict::Same;
  return w;
}

std::string whole_sentence(const std::string& provider, const WholeVerdict& w) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s as a whole: %s, %+.1f%% against the control over %zu points (%zu up, %zu down; band %.0f%%)",
                provider.c_str(), verdict_name(w.verdict), (w.geomean - 1) * 100, w.points, w.up, w.down, w.band * 100);
  return buf;
}

}  // namespace opbench

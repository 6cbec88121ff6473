// The noise-aware verdict on a point measured twice (rule: verdict.hpp). Torch-free.
#include "diff/verdict.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "record/median_interval.hpp"

namespace opbench {

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Slower: return "SLOWER";
    case Verdict::Error: return "ERROR";
    case Verdict::Unsure: return "UNSURE";
    case Verdict::Device: return "DEVICE";
    case Verdict::Faster: return "FASTER";
    case Verdict::Same: return "SAME";
    case Verdict::Fixed: return "FIXED";
  }
  return "?";
}

double median_of(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  return summarize(std::move(v)).median;
}

namespace {

// One side's smallest step between distinct values, when its values repeat as a clock's do
// (timer_tick); 0 otherwise.
double side_tick(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  double tick = 0;
  size_t distinct = v.empty() ? 0 : 1;
  for (size_t i = 1; i < v.size(); ++i) {
    const double step = v[i] - v[i - 1];
    if (!(step > std::fabs(v[i]) * 1e-6)) continue;  // the same value, up to its storage
    ++distinct;
    if (tick == 0 || step < tick) tick = step;
  }
  return v.size() >= kTickSamples && distinct * 2 <= v.size() ? tick : 0;
}

}  // namespace

double timer_tick(const std::vector<double>& a, const std::vector<double>& b) {
  const double ta = side_tick(a), tb = side_tick(b);
  if (ta > 0 && tb > 0) return std::min(ta, tb);
  return ta > 0 ? ta : tb;
}

double half_spread(std::vector<double> v) {
  if (v.size() < 2) return 0;
  Stats s = summarize(std::move(v));
  return (s.p80 - s.p20) / 2;
}

double mann_whitney_p(const std::vector<double>& a, const std::vector<double>& b) {
  const size_t n1 = a.size(), n2 = b.size(), n = n1 + n2;
  if (n1 == 0 || n2 == 0) return 1;
  std::vector<std::pair<double, int>> all;
  all.reserve(n);
  for (double v : a) all.emplace_back(v, 0);
  for (double v : b) all.emplace_back(v, 1);
  std::sort(all.begin(), all.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  double rank_sum_a = 0, tie_term = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && all[j].first == all[i].first) ++j;
    const double t = double(j - i);
    const double avg_rank = (double(i + 1) + double(j)) / 2;  // ranks i+1 .. j
    for (size_t k = i; k < j; ++k)
      if (all[k].second == 0) rank_sum_a += avg_rank;
    tie_term += t * t * t - t;
    i = j;
  }
  const double u = rank_sum_a - double(n1) * double(n1 + 1) / 2;
  const double mu = double(n1) * double(n2) / 2;
  const double var = double(n1) * double(n2) / 12 *
                     (double(n + 1) - tie_term / (double(n) * double(n - 1)));
  if (!(var > 0)) return 1;
  const double z = std::max(0.0, std::fabs(u - mu) - 0.5) / std::sqrt(var);
  return std::min(1.0, std::erfc(z / std::sqrt(2.0)));
}

std::vector<double> round_medians(const Result& r) {
  int64_t total = 0;
  bool valid = r.rounds.size() >= 2;
  for (int64_t c : r.rounds) {
    valid = valid && c > 0;
    total += c;
  }
  if (!valid || total != int64_t(r.samples.size())) return {median_of(r.samples)};
  std::vector<double> out;
  auto it = r.samples.begin();
  for (int64_t c : r.rounds) {
    out.push_back(median_of(std::vector<double>(it, it + c)));
    it += c;
  }
  return out;
}

PairedInterval paired_evidence(const Result& base, const Result& head, int processes) {
  const std::vector<double> rb = round_medians(base), rh = round_medians(head);
  if (rb.size() < 2 || rb.size() != rh.size() || base.rounds.size() != rb.size() || head.rounds.size() != rh.size())
    return paired_interval({}, {});
  return paired_interval(rb, rh, processes);
}

bool separation_decides(size_t n1, size_t n2) {
  if (n1 == 0 || n2 == 0) return false;
  std::vector<double> lo(n1), hi(n2);
  for (size_t i = 0; i < n1; ++i) lo[i] = double(i);
  for (size_t i = 0; i < n2; ++i) hi[i] = double(n1 + i);
  return mann_whitney_p(lo, hi) < kAlpha;
}

// Every value of a lies above every value of b (both non-empty).
static bool all_above(const std::vector<double>& a, const std::vector<double>& b) {
  return !a.empty() && !b.empty() && *std::min_element(a.begin(), a.end()) > *std::max_element(b.begin(), b.end());
}

RoundEvidence round_evidence(const std::vector<double>& base, const std::vector<double>& head) {
  RoundEvidence e;
  if (base.empty() || head.empty()) return e;
  e.up = all_above(head, base);  // complete separation, each way
  e.down = all_above(base, head);
  e.single = base.size() == 1 && head.size() == 1;
  if (e.single) return e;
  e.p = mann_whitney_p(base, head);
  // Where these counts can reach alpha the test decides, otherwise only complete separation
  // can show the change.
  if (separation_decides(base.size(), head.size())) {
    const double mb = median_of(base), mh = median_of(head);
    e.up = e.p < kAlpha && mh > mb;
    e.down = e.p < kAlpha && mh < mb;
  }
  return e;
}

std::string point_metric(const StoredPoint& p) {
  std::string m = p.point.params.s_or("metric", "");
  if (!m.empty()) return m;
  if (p.result.unit == "ms") return "speed";
  if (p.result.unit == "MiB") return "memory";
  return "";
}

// The noise a side's samples show: half the p20-p80 width with >= kMinSamples samples, half
// the range with 2 .. kMinSamples - 1; NaN for a single sample (or none).
static double side_noise(const std::vector<double>& v) {
  if (v.size() >= kMinSamples) return half_spread(v);
  if (v.size() >= 2) {
    auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    return (*hi - *lo) / 2;
  }
  return std::nan("");
}

namespace {

// What the samples of a speed point show each way (rule 3 of verdict.hpp).
struct Evidence {
  bool up = false, down = false;
};

// Both sides kept samples: clear changes (a), changes near the threshold (b), the rounds' veto.
Evidence both_measured(const StoredPoint& base, const StoredPoint& head, double threshold, Judgement& j) {
  const auto& sb = base.result.samples;
  const auto& sh = head.result.samples;
  const double margin = std::max(threshold, kClearChange), ratio = head.value / base.value;
  const bool separable = separation_decides(sb.size(), sh.size());
  Evidence clear{separable && ratio > 1 + margin && all_above(sh, sb),
                 separable && ratio < 1 - margin && all_above(sb, sh)};
  Evidence near;
  if (sb.size() >= kMinSamples && sh.size() >= kMinSamples) {
    j.tested = true;
    const double mb = median_of(sb), mh = median_of(sh);
    j.noise = std::max(half_spread(sb), half_spread(sh));
    j.p_value = mann_whitney_p(sb, sh);
    // Each median's interval at 97.5%: both hold together with probability >= 95%.
    auto ib = median_interval(sb, 0.975), ih = median_interval(sh, 0.975);
    j.ci_lo = ib.second > 0 ? ih.first / ib.second : std::nan("");
    j.ci_hi = ib.first > 0 ? ih.second / ib.first : std::nan("");
    clear.up = clear.up || j.ci_lo > 1 + margin;
    clear.down = clear.down || j.ci_hi < 1 - margin;
    const bool real = j.p_value < kAlpha && std::fabs(mh - mb) > j.noise;
    near.up = real && mh > mb && j.ci_lo > 1;
    near.down = real && mh < mb && j.ci_hi < 1;
  } else {
    const double nb = side_noise(sb), nh = side_noise(sh);
    if (!std::isnan(nb) || !std::isnan(nh)) {
      j.noise = std::isnan(nb) ? nh : std::isnan(nh) ? nb : std::max(nb, nh);
      near.up = near.down = std::fabs(head.value - base.value) > j.noise;
    }
  }
  const std::vector<double> rb = round_medians(base.result), rh = round_medians(head.result);
  j.rounds_base = rb.size();
  j.rounds_head = rh.size();
  const RoundEvidence rounds = round_evidence(rb, rh);
  j.round_p = rounds.p;
  return {(clear.up || near.up) && (rounds.single || rounds.up),
          (clear.down || near.down) && (rounds.single || rounds.down)};
}

// Rule 7: the two sides of a paired comparison, round against round: the pairs' geometric mean
// beyond the threshold and their interval beyond half of it.
Evidence paired_measured(const PairedInterval& e, double threshold, Judgement& j) {
  j.tested = true;
  j.pairs = e.ratios.size();
  j.pair_units = e.units;
  j.rounds_base = j.rounds_head = e.ratios.size();
  j.ci_lo = e.lo;
  j.ci_hi = e.hi;
  j.round_p = e.p;
  return {e.lo > 1 + threshold / 2 && e.mean() > 1 + threshold, e.hi < 1 - threshold / 2 && e.mean() < 1 - threshold};
}

// One side kept samples, the other is a single value (an imported document's).
Evidence one_measured(const StoredPoint& base, const StoredPoint& head, double threshold, Judgement& j) {
  const bool base_measured = !base.result.samples.empty();
  const auto& s = base_measured ? base.result.samples : head.result.samples;
  const double value = base_measured ? head.value : base.value;
  j.noise = side_noise(s);
  if (std::isnan(j.noise)) return {};  // measured once: no noise to hold the shift against
  const bool beyond = std::fabs(head.value - base.value) > j.noise;
  // Every sample beyond the threshold (and kClearChange) from the value: clear whatever the spread.
  const double margin = std::max(threshold, kClearChange);
  const auto [lo, hi] = std::minmax_element(s.begin(), s.end());
  const bool many = s.size() >= kMinSamples;
  const bool above = many && *lo > value * (1 + margin), below = many && *hi < value * (1 - margin);
  // above: the measured side is slower; that is head slower when head is the measured side.
  const bool clear_up = base_measured ? below : above, clear_down = base_measured ? above : below;
  return {beyond || clear_up, beyond || clear_down};
}

}  // namespace

namespace {

// Rules 1 to 4 of verdict.hpp (all but the control's).
Judgement judge_samples(const StoredPoint& base, const StoredPoint& head, double threshold, int paired_processes) {
  Judgement j;
  const double nan = std::nan("");
  j.ratio = j.p_value = j.ci_lo = j.ci_hi = j.noise = j.round_p = j.control_ratio = j.control_drift = j.against = nan;
  const bool base_ok = base.result.ok(), head_ok = head.result.ok();
  if (!head_ok) {
    j.verdict = Verdict::Error;
    j.regression = base_ok;
    return j;
  }
  if (!base_ok) {
    j.verdict = Verdict::Fixed;
    return j;
  }
  const double b = base.value, h = head.value;
  if (std::isnan(b) || std::isnan(h) || b < 0 || h < 0) {
    j.verdict = Verdict::Unsure;
    return j;
  }
  if (b == 0) {
    j.ratio = h == 0 ? 1 : nan;
    j.verdict = h == 0 ? Verdict::Same : Verdict::Unsure;
    return j;
  }
  j.ratio = h / b;
  const bool has_b = !base.result.samples.empty(), has_h = !head.result.samples.empty();
  const double tick = has_b && has_h ? timer_tick(base.result.samples, head.result.samples) : 0;
  const bool resolved = !(tick > 0) || std::fabs(h - b) > (kResolvableTicks + 0.5) * tick;  // half a tick: rounding
  const bool up = resolved && j.ratio > 1 + threshold, down = resolved && j.ratio < 1 - threshold;

  const bool deterministic = point_metric(base) == "memory" || point_metric(head) == "memory";
  Evidence confirmed{true, true};  // peak memory, or nothing measured: the threshold alone
  const PairedInterval pairs =
      paired_processes > 0 && !deterministic ? paired_evidence(base.result, head.result, paired_processes)
                                             : paired_interval({}, {});
  if (!pairs.ratios.empty()) confirmed = paired_measured(pairs, threshold, j);
  else if (!deterministic && has_b && has_h) confirmed = both_measured(base, head, threshold, j);
  else if (!deterministic && (has_b || has_h)) confirmed = one_measured(base, head, threshold, j);

  if (up && confirmed.up) j.verdict = Verdict::Slower;
  else if (down && confirmed.down) j.verdict = Verdict::Faster;
  else if (!up && !down) j.verdict = Verdict::Same;
  else j.verdict = Verdict::Unsure;
  j.regression = j.verdict == Verdict::Slower;
  return j;
}

// Each round's control median, one per round of the point's samples (none when the counts do
// not match: a point without a control, or an import).
std::vector<double> controls_of(const Result& r) {
  const size_t rounds = std::max<size_t>(1, r.rounds.size());
  if (r.control.size() != rounds || r.samples.empty()) return {};
  for (double c : r.control)
    if (!(c > 0)) return {};
  return r.control;
}

// `p` measured against its control: each sample divided by its round's control median, the
// shown value by the median of the controls. False when `p` has no usable control.
bool against_control(const StoredPoint& p, StoredPoint& out) {
  const std::vector<double> c = controls_of(p.result);
  if (c.empty()) return false;
  std::vector<int64_t> counts = p.result.rounds;
  if (counts.empty()) counts = {int64_t(p.result.samples.size())};
  int64_t total = 0;
  for (int64_t n : counts) total += n;
  if (total != int64_t(p.result.samples.size())) return false;
  out = p;
  out.result.control.clear();
  size_t i = 0;
  for (size_t r = 0; r < counts.size(); ++r)
    for (int64_t k = 0; k < counts[r]; ++k, ++i) out.result.samples[i] /= c[r];
  out.value = p.value / median_of(c);
  return true;
}

std::string signed_pct(double ratio) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", (ratio - 1) * 100);
  return buf;
}

// How far apart the control's rounds of one point lie: log(max / min).
double log_spread(const std::vector<double>& c) {
  const auto [lo, hi] = std::minmax_element(c.begin(), c.end());
  return std::log(*hi / *lo);
}

std::string share_text(double share) {
  if (!std::isfinite(share)) return "unknown";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", share * 100);
  return buf;
}

// Rule 6: a change of a call that the host may pace is UNSURE.
void hold_host_bound(const StoredPoint& base, const StoredPoint& head, Judgement& j) {
  if (j.verdict != Verdict::Slower && j.verdict != Verdict::Faster) return;
  const double b = base.result.host_share, h = head.result.host_share;
  if (!(b >= kHostBound) && !(h >= kHostBound)) return;
  j.reason = "the host took " + share_text(b) + " (base) and " + share_text(h) +
             " (head) of the GPU's time per sample to queue one call: its time moves with the host process";
  j.verdict = Verdict::Unsure;
  j.regression = false;
}

}  // namespace

Judgement judge(const StoredPoint& base, const StoredPoint& head, double threshold, int paired_processes) {
  Judgement j = judge_samples(base, head, threshold, paired_processes);
  hold_host_bound(base, head, j);
  StoredPoint nb, nh;
  if (!against_control(base, nb) || !against_control(head, nh)) return j;
  const std::vector<double> cb = controls_of(base.result), ch = controls_of(head.result);
  j.control_ratio = median_of(ch) / median_of(cb);
  if (j.ratio > 0 && std::isfinite(j.ratio)) j.against = median_of(nh.result.samples) / median_of(nb.result.samples);
  // What the machine did over these rounds: the control's move between the runs, or between
  // the rounds of either run, whichever is larger.
  // Paired rounds (rule 7) cancel what the machine did from round to round: only the
  // control's move between the two sides is left to hold a change against.
  const double moved = std::fabs(std::log(j.control_ratio));
  const double drift = j.pairs > 0 ? moved : std::max({moved, log_spread(cb), log_spread(ch)});
  j.control_drift = std::exp(drift) - 1;
  if (j.verdict != Verdict::Slower && j.verdict != Verdict::Faster) return j;
  const double against = j.ratio / j.control_ratio;
  const bool beyond = std::fabs(std::log(against)) > std::log1p(threshold) + drift;
  if (beyond && judge_samples(nb, nh, threshold, paired_processes).verdict == j.verdict) return j;
  char spread[32];
  std::snprintf(spread, sizeof spread, "%.1f%%", (std::exp(std::max(log_spread(cb), log_spread(ch))) - 1) * 100);
  j.reason = "the control workload moved " + signed_pct(j.control_ratio) + " between the runs and up to " + spread +
             " between the rounds of one; the point " + signed_pct(j.ratio) + ", " + signed_pct(against) +
             " against the control";
  j.verdict = Verdict::Unsure;
  j.regression = false;
  return j;
}

}  // namespace opbench

// opbench diff: matching, verdicts, summary, rendering. Torch-free.
#include "diff/diff.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "core/suggest.hpp"
#include "core/text.hpp"
#include "diff/normalize.hpp"
#include "record/run_fields.hpp"
#include "report/provenance.hpp"

namespace opbench {

namespace {

using json = nlohmann::ordered_json;

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// A value as a table shows it: 6 significant digits; "-" when missing.
std::string num(double v) {
  if (std::isnan(v)) return "-";
  return fmt("%.6g", v);
}

std::string pct_change(double ratio) {
  if (!std::isfinite(ratio)) return "-";
  return fmt("%+.1f%%", (ratio - 1) * 100);
}

json num_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

double pct_of(const StoredPoint& p, const RunInfo& r) {
  if (r.env.peak_gbps <= 0 || !p.result.ok() || point_metric(p) == "memory") return std::nan("");
  if (p.result.pct_peak > 0) return p.result.pct_peak;
  if (p.result.gbps > 0) return 100 * p.result.gbps / r.env.peak_gbps;
  return std::nan("");
}

int severity(const DiffRow& r) {
  if (r.j.verdict == Verdict::Slower) return 0;
  if (r.j.verdict == Verdict::Error) return r.j.regression ? 1 : 2;
  if (r.j.verdict == Verdict::Unsure) return 3;
  if (r.j.verdict == Verdict::Device) return 4;
  if (r.j.verdict == Verdict::Faster) return 5;
  if (r.j.verdict == Verdict::Same) return 6;
  return 7;
}
constexpr int kFasterSeverity = 5;

}  // namespace

std::vector<std::pair<std::string, std::string>> parse_label_map(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    item = std::string(trim(item));
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    const std::string_view whole(item);
    const std::string a(eq == std::string::npos ? std::string_view() : trim(whole.substr(0, eq)));
    const std::string b(eq == std::string::npos ? std::string_view() : trim(whole.substr(eq + 1)));
    if (a.empty() || b.empty() || b.find('=') != std::string::npos)
      throw InputError("--map", item, "expected BASE_LABEL=HEAD_LABEL (e.g. tr=cuda), comma-separated");
    for (const auto& [x, y] : out)
      if (x == a) throw InputError("--map", item, "'" + a + "' is mapped twice");
    out.emplace_back(a, b);
  }
  if (out.empty()) throw InputError("--map", text, "expected BASE_LABEL=HEAD_LABEL (e.g. tr=cuda), comma-separated");
  return out;
}

std::string DiffRow::provider() const {
  return base_provider == head_provider ? head_provider : base_provider + " -> " + head_provider;
}

std::vector<const DiffRow*> DiffResult::by_severity() const {
  std::vector<const DiffRow*> v;
  for (const auto& r : rows) v.push_back(&r);
  std::stable_sort(v.begin(), v.end(), [](const DiffRow* a, const DiffRow* b) {
    int sa = severity(*a), sb = severity(*b);
    if (sa != sb) return sa < sb;
    double ra = std::isnan(a->j.ratio) ? 0 : a->j.ratio, rb = std::isnan(b->j.ratio) ? 0 : b->j.ratio;
    if (sa == kFasterSeverity) return ra < rb;  // the biggest speedups first
    if (sa < kFasterSeverity) return ra > rb;    // the worst first
    return false;
  });
  return v;
}

size_t DiffResult::count(Verdict v) const {
  return size_t(std::count_if(rows.begin(), rows.end(), [v](const DiffRow& r) { return r.j.verdict == v; }));
}

std::vector<std::pair<std::string, std::vector<const DiffRow*>>> DiffResult::scaling_worst(size_t n) const {
  std::vector<std::pair<std::string, std::vector<const DiffRow*>>> out;
  if (!opt.normalize_peak) return out;
  for (const auto& s : summary) {
    std::vector<const DiffRow*> rs;
    for (const auto& r : rows)
      if (r.provider() == s.provider && r.metric == "speed" && !r.apart && r.j.ratio > 0 && std::isfinite(r.j.ratio))
        rs.push_back(&r);
    std::stable_sort(rs.begin(), rs.end(), [](const DiffRow* a, const DiffRow* b) { return a->j.ratio > b->j.ratio; });
    if (rs.size() > n) rs.resize(n);
    if (!rs.empty()) out.emplace_back(s.provider, std::move(rs));
  }
  return out;
}

std::string run_brief(const RunInfo& r) {
  std::ostringstream o;
  o << "run " << r.id;
  if (!r.label.empty()) o << " (" << r.label << ")";
  o << ", " << (r.env.gpu.empty() ? "unknown device" : r.env.gpu);
  if (r.source == "import") o << ", imported from " << r.config_path;
  if (!r.git_commit.empty()) o << ", commit " << r.git_commit.substr(0, 12);
  if (!r.started_at.empty()) o << ", " << r.started_at.substr(0, 10);
  return one_line(o.str());
}

namespace {

// "base: X, head: Y" when both runs recorded a value and the values differ, else "".
std::string differ(const std::string& base, const std::string& head) {
  if (base.empty() || head.empty() || base == head) return "";
  return "base: " + base + ", head: " + head;
}

// Why the two runs' numbers may not compare: each way they were timed differently, from the
// run fields that warn (record/run_fields.hpp), in their places (nothing for what a run did
// not record, as an imported run).
std::vector<std::string> comparability_warnings(const RunInfo& base, const RunInfo& head) {
  std::vector<std::string> w;
  for (const RunField* f : warning_fields()) {
    const std::string both = differ(f->comparable(base), f->comparable(head));
    if (!both.empty()) w.push_back(std::string(f->differs) + " (" + both + ")" + f->why);
  }
  return w;
}

// The matched points either side measured while the GPU throttled for power or heat.
std::string throttle_warning(const std::vector<DiffRow>& rows) {
  size_t b = 0, h = 0, any = 0;
  for (const auto& r : rows) {
    b += r.base_throttled ? 1 : 0;
    h += r.head_throttled ? 1 : 0;
    any += r.base_throttled || r.head_throttled ? 1 : 0;
  }
  if (!any) return "";
  return std::to_string(any) + (any == 1 ? " point was" : " points were") +
         " measured while the GPU throttled for power or heat (base: " + std::to_string(b) + ", head: " +
         std::to_string(h) + "): their ratios include the lower clock";
}

// The points of one side that diff compares (those of --metric), and every metric the side holds.
struct SidePoints {
  std::vector<const StoredPoint*> points;
  std::set<std::string> metrics;
};

SidePoints points_of_metric(const RunRecord& run, const std::string& metric) {
  SidePoints s;
  for (const auto& p : run.points) {
    s.metrics.insert(point_metric(p));
    if (metric.empty() || point_metric(p) == metric) s.points.push_back(&p);
  }
  return s;
}

// Both runs hold points, and points of --metric.
void require_points(const RunRecord& base, const SidePoints& bp, const RunRecord& head, const SidePoints& hp,
                    const std::string& metric) {
  const std::string base_where = "run " + std::to_string(base.run.id);
  const std::string head_where = "run " + std::to_string(head.run.id);
  if (base.points.empty()) throw InputError(base_where, "", "the base run holds no points");
  if (head.points.empty()) throw InputError(head_where, "", "the head run holds no points");
  if (bp.points.empty()) throw InputError(base_where, "--metric", "the base run holds no " + metric + " points");
  if (hp.points.empty()) throw InputError(head_where, "--metric", "the head run holds no " + metric + " points");
}

// "run B vs run H": where an error of the pair is.
std::string pair_where(const RunRecord& base, const RunRecord& head) {
  return "run " + std::to_string(base.run.id) + " vs run " + std::to_string(head.run.id);
}

Unmatched unmatched_point(const StoredPoint& p) {
  return {p.point.title, p.point.x_value, p.point.provider, p.point.label};
}

// The head points, found by (title, x); each one matches at most one base point.
class HeadMatcher {
 public:
  HeadMatcher(const std::vector<const StoredPoint*>& points, const DiffOptions& opt)
      : points_(points), opt_(opt), used_(points.size(), false) {
    for (size_t i = 0; i < points.size(); ++i) at_[{points[i]->point.title, points[i]->point.x_value}].push_back(i);
  }

  // The first unused head point at the base point's title and x whose provider is the base
  // point's, or the one --map names for its label or provider; nullptr when none.
  const StoredPoint* take(const Point& b) {
    const std::string* target = mapped_target(b);
    auto it = at_.find({b.title, b.x_value});
    if (it == at_.end()) return nullptr;
    for (size_t i : it->second) {
      if (used_[i]) continue;
      const Point& h = points_[i]->point;
      if (target ? (h.provider == *target || h.label == *target) : h.provider == b.provider) {
        used_[i] = true;
        return points_[i];
      }
    }
    return nullptr;
  }

  // The head points no base point matched, in head order.
  std::vector<Unmatched> unused() const {
    std::vector<Unmatched> out;
    for (size_t i = 0; i < points_.size(); ++i)
      if (!used_[i]) out.push_back(unmatched_point(*points_[i]));
    return out;
  }

 private:
  // The head provider or label --map gives the base point's label or provider (the last
  // mapping that names it), or nullptr.
  const std::string* mapped_target(const Point& b) const {
    const std::string* target = nullptr;
    for (const auto& [from, to] : opt_.map)
      if (from == b.label || from == b.provider) target = &to;
    return target;
  }

  const std::vector<const StoredPoint*>& points_;
  const DiffOptions& opt_;
  std::map<std::pair<std::string, int64_t>, std::vector<size_t>> at_;
  std::vector<bool> used_;
};

// Throws when the two matched points measured different metrics or units.
void require_same_metric(const StoredPoint& b, const StoredPoint& h, const DiffRow& r, const std::string& where) {
  const std::string mb = point_metric(b), mh = point_metric(h);
  if ((!mb.empty() && !mh.empty() && mb != mh) ||
      (!b.result.unit.empty() && !h.result.unit.empty() && b.result.unit != h.result.unit))
    throw InputError(where, r.title,
                     "mismatched metrics at " + r.x_name + "=" + std::to_string(r.x) + " " + r.provider() +
                         ": base is " + (mb.empty() ? "?" : mb) + " (" + b.result.unit + "), head is " +
                         (mh.empty() ? "?" : mh) + " (" + h.result.unit + ")");
}

// The shifts between the devices the two runs' points were measured on, found as the rows
// need them (device_verdict.hpp); d.shifts lists those between different physical GPUs.
class DeviceShifts {
 public:
  DeviceShifts(const RunRecord& base, const RunRecord& head, DiffResult& d) : base_(base), head_(head), d_(d) {}
  const DeviceShift& of(const StoredPoint& b, const StoredPoint& h) {
    const auto key = std::make_pair(b.device, h.device);
    auto it = known_.find(key);
    if (it != known_.end()) return it->second;
    DeviceShift s = device_shift(with_pooled(run_device_of(base_.run, b.device)),
                                 with_pooled(run_device_of(head_.run, h.device)));
    if (s.different) d_.shifts.push_back(s);
    return known_.emplace(key, std::move(s)).first->second;
  }

 private:
  // The device with the passes of its GPU near the run, when the caller pooled them.
  RunDevice with_pooled(RunDevice d) const {
    auto it = d_.opt.calibrations.find(d.identity.uuid);
    if (it != d_.opt.calibrations.end()) d.calibration = it->second;
    return d;
  }

  const RunRecord& base_;
  const RunRecord& head_;
  DiffResult& d_;
  std::map<std::pair<std::string, std::string>, DeviceShift> known_;
};

// The row of a matched pair: what each side measured, and the verdict.
DiffRow matched_row(const StoredPoint& b, const StoredPoint& h, const RunRecord& base, const RunRecord& head,
                    const DiffResult& d, DeviceShifts& shifts) {
  DiffRow r;
  r.title = b.point.title;
  r.section = h.section;
  r.x_name = b.point.x_name;
  r.x = b.point.x_value;
  r.base_provider = b.point.provider;
  r.base_label = b.point.label;
  r.head_provider = h.point.provider;
  r.head_label = h.point.label;
  require_same_metric(b, h, r, pair_where(base, head));
  const std::string mb = point_metric(b);
  r.metric = mb.empty() ? point_metric(h) : mb;
  r.unit = b.result.unit.empty() ? h.result.unit : b.result.unit;
  r.base = b.value;
  r.head = h.value;
  r.base_error = b.result.error;
  r.head_error = h.result.error;
  r.base_throttled = b.state.known && b.state.throttled;
  r.head_throttled = h.state.known && h.state.throttled;
  r.pct_base = pct_of(b, base.run);
  r.pct_head = pct_of(h, head.run);
  r.pct_ratio = r.pct_base > 0 && r.pct_head > 0 ? r.pct_head / r.pct_base : std::nan("");
  const bool speed = r.metric == "speed" && b.result.ok() && h.result.ok();
  if (d.opt.normalize_peak && speed && judged_on_peak(b, h, r.pct_base, r.pct_head)) {
    // the head at the base's peak; the peaks stand for the devices' bandwidth (no rule 8)
    r.j = judge(b, at_base_peak(h, {base.run.env.peak_gbps, head.run.env.peak_gbps}), d.opt.threshold,
                d.paired_processes());
    return r;
  }
  r.apart = d.opt.normalize_peak && speed;
  r.j = judge(b, h, d.opt.threshold, d.paired_processes());
  apply_device_rule(b, h, d.opt.threshold, d.paired_processes(), shifts.of(b, h), r.pct_base, r.pct_head, r.j);
  if (!d.peaks) r.pct_base = r.pct_head = r.pct_ratio = std::nan("");
  return r;
}

// "a, b, unknown": the names of a set, "unknown" for "".
std::string names_list(const std::set<std::string>& s) {
  std::string o;
  for (const auto& m : s) o += (o.empty() ? "" : ", ") + (m.empty() ? std::string("unknown") : m);
  return o;
}

// "the runs share no table title": with the pair of titles, one of each run, nearest to each
// other (each compared by its first 200 characters), and how many titles each run has.
std::string no_shared_title(const std::set<std::string>& base_titles, const SidePoints& hp) {
  std::set<std::string> head_titles;
  for (auto* p : hp.points) head_titles.insert(p->point.title);
  constexpr size_t kCompared = 200, kPairs = 100000;
  std::string best_b, best_h;
  size_t best = SIZE_MAX, pairs = 0;
  for (const auto& h : head_titles)
    for (const auto& b : base_titles) {
      if (++pairs > kPairs) break;
      const size_t d = edit_distance(b.substr(0, kCompared), h.substr(0, kCompared));
      if (d < best) best = d, best_b = b, best_h = h;
    }
  return "the runs share no table title (base: " + std::to_string(base_titles.size()) + ", head: " +
         std::to_string(head_titles.size()) + " titles); the nearest are the base's '" + best_b + "' and the head's '" +
         best_h + "'";
}

// Why no point matched: the metrics differ, the titles agree but no provider does, or no title does.
std::string why_nothing_matched(const SidePoints& bp, const SidePoints& hp, const DiffOptions& opt) {
  std::set<std::string> base_titles, base_prov, head_prov;
  for (auto* p : bp.points) base_titles.insert(p->point.title), base_prov.insert(p->point.provider);
  size_t shared_titles = 0;
  for (auto* p : hp.points) {
    head_prov.insert(p->point.provider);
    shared_titles += base_titles.count(p->point.title) ? 1 : 0;
  }
  const bool metrics_differ = names_list(bp.metrics) != names_list(hp.metrics) && opt.metric.empty();
  const std::string metrics = "mismatched metrics: the base run holds " + names_list(bp.metrics) +
                              " points, the head run " + names_list(hp.metrics);
  if (!shared_titles && !bp.points.empty() && !hp.points.empty())
    return no_shared_title(base_titles, hp) + (metrics_differ ? "; " + metrics : "");
  if (metrics_differ) return metrics;
  if (shared_titles)
    return "the runs share titles but no provider (base: " + names_list(base_prov) + "; head: " +
           names_list(head_prov) + "); map labels with --map BASE=HEAD";
  return "the runs share no table title";
}

// A running sum of logarithms, for a geometric mean.
struct LogSum {
  double sum = 0;
  size_t n = 0;
  void add(double ratio) {
    sum += std::log(ratio);
    n++;
  }
  double geomean() const { return n ? std::exp(sum / double(n)) : std::nan(""); }
};

// One ProviderSummary per provider pair, in the order of their first rows, worst first after
// summary_worst_first; counts the regressions of the whole diff on the way.
void summarize_providers(DiffResult& d) {
  std::map<std::string, size_t> idx;
  std::map<std::string, LogSum> logs, logs_pct;
  std::map<std::string, WholeJudge> wholes;
  for (const auto& r : d.rows) {
    auto [it, fresh] = idx.emplace(r.provider(), d.summary.size());
    if (fresh) {
      ProviderSummary s;
      s.provider = r.provider();
      s.worst = std::nan("");
      d.summary.push_back(s);
    }
    ProviderSummary& s = d.summary[it->second];
    s.points++;
    // Rounds rotated over processes: every point shares the same processes, so its points are no
    // independent evidence of the provider (provider_verdict.hpp); its pairs of processes are.
    if (r.metric == "speed" && d.processes < 2) wholes[s.provider].add(r.j);
    s.counts[r.j.verdict]++;
    if (r.j.regression) {
      s.regressions++;
      d.regressions++;
      if (r.j.verdict == Verdict::Slower && !(s.worst >= r.j.ratio)) s.worst = r.j.ratio;
    }
    // (normalised: the geomean of the points judged on the peak alone)
    if (r.j.verdict != Verdict::Error && r.j.verdict != Verdict::Fixed && r.j.ratio > 0 && std::isfinite(r.j.ratio) &&
        !r.apart)
      logs[s.provider].add(r.j.ratio);
    if (r.pct_ratio > 0 && std::isfinite(r.pct_ratio)) logs_pct[s.provider].add(r.pct_ratio);
  }
  for (auto& s : d.summary) {
    s.geomean = logs[s.provider].geomean();
    s.geomean_pct = logs_pct[s.provider].geomean();
    s.whole = wholes[s.provider].verdict(d.opt.threshold);
    if (s.whole.judged && s.whole.verdict == Verdict::Slower && d.opt.versus.empty()) d.regressions++;
  }
}

// The provider pairs with the most regressions first, then the largest geomean.
void summary_worst_first(DiffResult& d) {
  std::stable_sort(d.summary.begin(), d.summary.end(), [](const ProviderSummary& a, const ProviderSummary& b) {
    if (a.regressions != b.regressions) return a.regressions > b.regressions;
    double ga = std::isnan(a.geomean) ? 0 : a.geomean, gb = std::isnan(b.geomean) ? 0 : b.geomean;
    return ga > gb;
  });
}

}  // namespace

DiffResult diff_runs(const RunRecord& base, const RunRecord& head, const DiffOptions& opt) {
  DiffResult d;
  d.base = base.run;
  d.head = head.run;
  d.opt = opt;
  d.warnings = comparability_warnings(base.run, head.run);
  d.peaks = base.run.env.peak_gbps > 0 && head.run.env.peak_gbps > 0;
  d.paired = !base.run.pair.empty() && base.run.pair == head.run.uuid && head.run.pair == base.run.uuid;
  if (opt.normalize_peak)
    for (const RunInfo* r : {&base.run, &head.run})
      if (!(r->env.peak_gbps > 0))
        throw InputError("--normalize", "peak",
                         "run " + std::to_string(r->id) + " holds no measured peak bandwidth (a GPU sweep measures one)");
  if (d.paired && base.run.processes == head.run.processes && base.run.processes > 1)
    d.processes = int(base.run.processes);
  const SidePoints bp = points_of_metric(base, opt.metric), hp = points_of_metric(head, opt.metric);
  require_points(base, bp, head, hp, opt.metric);

  HeadMatcher heads(hp.points, opt);
  DeviceShifts shifts(base, head, d);
  for (const StoredPoint* b : bp.points) {
    if (const StoredPoint* h = heads.take(b->point)) d.rows.push_back(matched_row(*b, *h, base, head, d, shifts));
    else d.only_base.push_back(unmatched_point(*b));
  }
  d.only_head = heads.unused();

  if (const std::string t = throttle_warning(d.rows); !t.empty()) d.warnings.push_back(t);
  if (d.rows.empty()) throw InputError(pair_where(base, head), "", "nothing matched: " + why_nothing_matched(bp, hp, opt));
  summarize_providers(d);
  summary_worst_first(d);
  return d;
}

namespace {

// The words of the document: a diff of two runs, or versus (one run's provider against the
// best of others), the same document in other words, flagging SLOWER points only (a failing
// provider is an ERROR row).
struct Wording {
  explicit Wording(const DiffResult& d)
      : vs(!d.opt.versus.empty()),
        cmd(vs ? "versus" : "diff"),
        sides(vs ? "sides" : "runs"),
        ratio(vs ? "provider/against" : "head/base"),
        flagged(vs ? d.count(Verdict::Slower) : d.regressions),
        flagged_what(vs ? "slower point" : "regression") {}
  bool flags(const DiffRow& r) const { return vs ? r.j.verdict == Verdict::Slower : r.j.regression; }

  bool vs;
  std::string cmd, sides, ratio;
  size_t flagged;
  std::string flagged_what;
};

// The providers judged as a whole against the control (provider_verdict.hpp), a line each.
void write_whole_verdicts(std::ostream& o, const DiffResult& d) {
  bool any = false;
  for (const auto& s : d.summary)
    if (s.whole.judged) {
      o << "- " << md_cell(whole_sentence(s.provider, s.whole)) << "\n";
      any = true;
    }
  if (any)
    o << "\nA provider whose points carry a control workload is also judged as a whole: SLOWER when the geometric "
         "mean of its points' changes against the control exceeds the band and at least 80% of them moved up.\n\n";
}

// The title and the list of what was compared: the runs, the metric, the threshold, the counts.
void write_heading(std::ostream& o, const DiffResult& d, const Wording& w) {
  o << "# opbench " << w.cmd << "\n\n";
  if (w.vs) {
    o << "- run: " << run_brief(d.head) << "\n";
    o << "- " << d.opt.versus << "\n";
  } else {
    o << "- base: " << run_brief(d.base) << "\n";
    o << "- head: " << run_brief(d.head) << "\n";
  }
  o << "- metric: " << (d.opt.metric.empty() ? "speed and memory" : d.opt.metric) << "; threshold "
    << num(d.opt.threshold * 100) << "%";
  if (!d.opt.map.empty() && !w.vs) {
    o << "; mapped:";
    for (const auto& [a, b] : d.opt.map) o << " " << a << "=" << b;
  }
  if (d.paired)
    o << "\n- paired: the two runs are the sides of one comparison (opbench ab), measured together on the same "
         "device, their rounds interleaved: each speed point is judged round against round";
  if (d.paired && d.processes > 1)
    o << ", each side's rounds spread over " << d.processes << " worker processes and judged by pair of processes";
  if (d.opt.normalize_peak)
    o << "\n- normalized to the peak: base " << num(d.base.env.peak_gbps) << " GB/s, head " << num(d.head.env.peak_gbps)
      << " GB/s (each run's own probe), head/base " << fmt("%.3f", d.head.env.peak_gbps / d.base.env.peak_gbps)
      << "; a speed point from " << num(kBandwidthBound)
      << "% of its run's peak on either side (and not host-paced) is judged on its use of the peak: its head "
         "scaled to the base's peak, so that head/base is the base's fraction of peak over the head's; the others "
         "are judged on their time and listed apart (Latency-bound points)";
  if (w.vs)
    o << "\n- compared " << d.rows.size() << " points; unmatched: " << d.only_head.size()
      << " without an against point, " << d.only_base.size() << " without a provider point\n\n";
  else
    o << "\n- matched " << d.rows.size() << " points; unmatched: " << d.only_base.size() << " in base, "
      << d.only_head.size() << " in head\n\n";
}

// The calibration shift between each pair of different physical GPUs the points were measured
// on (device_verdict.hpp): a table of the figures, base against head.
void write_devices(std::ostream& o, const DiffResult& d) {
  for (const DeviceShift& s : d.shifts) {
    o << "## Devices: " << md_cell(s.base_device) << " -> " << md_cell(s.head_device) << "\n\n"
      << "Base and head ran on different physical GPUs: base " << md_cell(identity_text(s.base_identity))
      << "; head " << md_cell(identity_text(s.head_identity)) << ".\n\n";
    if (!s.calibrated) {
      o << "One of them carries no device calibration: no change is put down to the device.\n\n";
      continue;
    }
    o << "| calibration (" << s.base_passes << " and " << s.head_passes << " passes) | base | head | "
      << "a call's time, head/base | p | counts |\n|---|---:|---:|---:|---:|---|\n";
    for (const FigureShift& f : s.figures)
      o << "| " << f.figure->name << " (" << f.figure->unit << ") | " << num(f.base) << " | " << num(f.head) << " | "
        << fmt("%.4f", f.time_ratio) << " | " << fmt("%.2g", f.p) << " | " << (f.real ? "yes" : "no") << " |\n";
    o << "\nA SLOWER or FASTER point within what these figures explain for its kind (latency-bound: "
      << explaining_figures(false) << "; bandwidth-bound, from " << num(kBandwidthBound)
      << "% of peak: the " << explaining_figures(true) << ") is DEVICE: band " << fmt("%.4f", s.latency_lo) << "-"
      << fmt("%.4f", s.latency_hi) << " for latency-bound points (a launch-paced one's up to "
      << fmt("%.4f", s.launch) << "), " << fmt("%.4f", s.bandwidth_lo) << "-" << fmt("%.4f", s.bandwidth_hi)
      << " for bandwidth-bound ones.\n\n";
  }
}

// The warnings, how many points are flagged (and providers as a whole), and the rule that
// judges a point.
void write_verdict_rule(std::ostream& o, const DiffResult& d, const Wording& w) {
  for (const auto& warning : d.warnings) o << "> **Warning:** " << warning << ".\n\n";
  if (w.flagged)
    o << "**" << w.flagged << " " << w.flagged_what << (w.flagged == 1 ? "" : "s") << "** (SLOWER"
      << (w.vs ? " than the best against" : "") << " by more than " << num(d.opt.threshold * 100)
      << (w.vs ? "%, beyond the noise).\n\n" : "%, or newly failing, or a provider SLOWER as a whole).\n\n");
  else
    o << "No " << w.flagged_what << "s.\n\n";
  if (const size_t device = d.count(Verdict::Device))
    o << "**" << device << " DEVICE** (changes the two devices' calibrations explain: not regressions).\n\n";
  write_whole_verdicts(o, d);
  o << "A point is SLOWER / FASTER when " << w.ratio << " moves past the threshold and, where both " << w.sides
    << " kept samples, the change is clear (the 95% interval of the ratio of medians wholly beyond the "
       "threshold, or every sample of one side beyond every sample of the other) or, near the threshold, a "
       "Mann-Whitney U test (p < 0.05), that interval and a shift beyond the p20-p80 noise of both "
    << w.sides
    << " agree; and the medians of their timing rounds (each round on newly placed memory) do not disagree "
       "(rounds p, or every round beyond the other side's when too few to test; one round a side neither "
       "confirms nor vetoes); and, where both sides timed a control workload in each round (a CPU), the change "
       "holds against it too. UNSURE when it moved past the threshold without that; SAME within the threshold.\n\n";
  if (d.paired)
    o << "Paired: a speed point's change is confirmed by its rounds in pairs, round r of head against round r of "
         "base on the same device: the 95% interval of the geometric mean of their ratios must lie wholly beyond 1 "
         "(`rounds p`: the paired t test)"
      << (d.processes > 1 ? ", the interval over the " + std::to_string(d.processes) +
                                " pairs of worker processes (each the mean of its rounds' ratios), so that what one "
                                "process carries through its rounds decides nothing"
                          : std::string())
      << ".\n\n";
}

// A row per provider pair: its points, geomeans and verdict counts, its worst regression.
void write_summary(std::ostream& o, const DiffResult& d, const Wording& w) {
  o << "## Summary\n\n| " << (w.vs ? "against -> provider" : "provider") << " | points | geomean " << w.ratio << " |";
  if (d.peaks) o << " geomean % of peak " << w.ratio << " |";
  const bool device = d.count(Verdict::Device) > 0;  // a column only where a point is DEVICE
  o << " SLOWER | ERROR | UNSURE |" << (device ? " DEVICE |" : "") << " FASTER | SAME | FIXED | worst |\n|---|---:|---:|";
  if (d.peaks) o << "---:|";
  o << (device ? "---:|" : "") << "---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& s : d.summary) {
    auto c = [&](Verdict v) {
      auto it = s.counts.find(v);
      return it == s.counts.end() ? size_t(0) : it->second;
    };
    o << "| " << md_cell(s.provider) << " | " << s.points << " | " << num(s.geomean) << " |";
    if (d.peaks) o << " " << num(s.geomean_pct) << " |";
    o << " " << c(Verdict::Slower) << " | " << c(Verdict::Error) << " | " << c(Verdict::Unsure) << " | ";
    if (device) o << c(Verdict::Device) << " | ";
    o << c(Verdict::Faster) << " | " << c(Verdict::Same) << " | " << c(Verdict::Fixed) << " | "
      << (std::isnan(s.worst) ? std::string("-") : pct_change(s.worst)) << " |\n";
  }
}

// A table of points: both sides' values, the ratio, the verdict and its tests' p values.
void write_point_table(std::ostream& o, const DiffResult& d, const Wording& w, const std::vector<const DiffRow*>& rows) {
  if (w.vs) o << "| title | x | against -> provider | against | provider | " << w.ratio << " | change | verdict | p | rounds p |";
  else o << "| title | x | provider | base | head | head/base | change | verdict | p | rounds p |";
  if (d.peaks) o << (w.vs ? " % of peak against -> provider |" : " % of peak base -> head |");
  o << "\n|---|---:|---|---:|---:|---:|---:|---|---:|---:|";
  if (d.peaks) o << "---:|";
  o << "\n";
  for (const DiffRow* r : rows) {
    o << "| " << md_cell(r->title) << " | " << r->x_name << "=" << r->x << " | " << md_cell(r->provider()) << " | "
      << (r->base_error.empty() ? num(r->base) : "error") << " | "
      << (r->head_error.empty() ? num(r->head) : "error") << " | "
      << (std::isfinite(r->j.ratio) ? fmt("%.3f", r->j.ratio) : "-") << " | " << pct_change(r->j.ratio)
      << " | " << verdict_name(r->j.verdict) << " | "
      << (std::isnan(r->j.p_value) ? std::string("-") : fmt("%.2g", r->j.p_value)) << " | "
      << (std::isnan(r->j.round_p) ? std::string("-") : fmt("%.2g", r->j.round_p)) << " |";
    if (d.peaks)
      o << " " << (std::isnan(r->pct_base) ? std::string("-") : fmt("%.1f", r->pct_base)) << " -> "
        << (std::isnan(r->pct_head) ? std::string("-") : fmt("%.1f", r->pct_head)) << " |";
    o << "\n";
  }
}

// The flagged points (regressions, or versus's slower points), worst first.
void write_flagged(std::ostream& o, const DiffResult& d, const Wording& w, const std::vector<const DiffRow*>& sorted) {
  std::vector<const DiffRow*> flagged;
  for (auto* r : sorted)
    if (w.flags(*r)) flagged.push_back(r);
  if (flagged.empty()) return;
  o << (w.vs ? "\n## Slower\n\n" : "\n## Regressions\n\n");
  write_point_table(o, d, w, flagged);
}

// Every change (all but SAME), worst first; the SAME points are only counted, which keeps the
// document small enough to post (the JSON output lists every point). Returns the changes.
std::vector<const DiffRow*> write_changes(std::ostream& o, const DiffResult& d, const Wording& w,
                                          const std::vector<const DiffRow*>& sorted) {
  std::vector<const DiffRow*> changed;
  size_t listed = 0;  // the points of this table (those apart have their own)
  for (auto* r : sorted) {
    if (r->apart) continue;
    ++listed;
    if (r->j.verdict != Verdict::Same) changed.push_back(r);
  }
  o << "\n## Changes\n\n";
  if (changed.empty()) o << "None: every matched point is SAME.\n";
  else write_point_table(o, d, w, changed);
  if (changed.size() < listed)
    o << "\n" << listed - changed.size() << " of " << listed
      << " points are SAME (not listed; `opbench " << w.cmd << " --format json` lists every point).\n";
  return changed;
}

// The changes a rule held back, each with its reason: UNSURE (the control workload moved with
// them, or the host may pace them), and DEVICE (the devices' calibrations explain them).
void write_drifted(std::ostream& o, const std::vector<const DiffRow*>& changed) {
  const std::pair<Verdict, const char*> kinds[] = {
      {Verdict::Unsure, "UNSURE against the control workload (timed in the same rounds, it moved as much as the "
                        "point: the machine drifted)"},
      {Verdict::Device, "DEVICE (the two physical GPUs' calibrations explain the change)"}};
  for (const auto& [verdict, heading] : kinds) {
    std::vector<const DiffRow*> held;
    for (auto* r : changed)
      if (!r->j.reason.empty() && r->j.verdict == verdict) held.push_back(r);
    if (held.empty()) continue;
    o << "\n" << heading << ":\n\n";
    for (const DiffRow* r : held)
      o << "- " << one_line(r->title) << " " << r->x_name << "=" << r->x << " " << one_line(r->provider()) << ": "
        << r->j.reason << "\n";
  }
}

// --normalize peak: per provider, the points whose use of the head's peak fell most.
constexpr size_t kScalingWorst = 3;
void write_scaling(std::ostream& o, const DiffResult& d) {
  const auto worst = d.scaling_worst(kScalingWorst);
  if (worst.empty()) return;
  o << "\n## Scaling worst\n\nPer provider, the " << kScalingWorst
    << " points judged on the peak whose use of the head's peak fell most.\n\n"
    << "| provider | title | x | % of peak base -> head | head/base at equal peaks | verdict |\n"
    << "|---|---|---:|---:|---:|---|\n";
  for (const auto& [provider, rows] : worst)
    for (const DiffRow* r : rows)
      o << "| " << md_cell(provider) << " | " << md_cell(r->title) << " | " << r->x_name << "=" << r->x << " | "
        << fmt("%.1f", r->pct_base) << " -> " << fmt("%.1f", r->pct_head) << " | " << fmt("%.3f", r->j.ratio) << " | "
        << verdict_name(r->j.verdict) << " |\n";
}

// --normalize peak: the points judged on their time, with the devices' launch and latency figures;
// the changes among them.
std::vector<const DiffRow*> write_apart(std::ostream& o, const DiffResult& d, const Wording& w,
                                        const std::vector<const DiffRow*>& sorted) {
  std::vector<const DiffRow*> apart, changed;
  for (auto* r : sorted)
    if (r->apart) {
      apart.push_back(r);
      if (r->j.verdict != Verdict::Same) changed.push_back(r);
    }
  if (apart.empty()) return changed;
  o << "\n## Latency-bound points\n\n" << apart.size() << " speed points below " << num(kBandwidthBound)
    << "% of their run's peak on both sides, or host-paced, judged on their time (not on the peak).";
  bool figures = false;
  for (const DeviceShift& s : d.shifts)
    for (const FigureShift& f : s.figures)
      if (f.figure->key == std::string("launch_us") || f.figure->key == std::string("chase_ns")) {
        if (!figures) o << " The devices' figures, base -> head:";
        o << (figures ? ";" : "") << " " << f.figure->name << " " << num(f.base) << " -> " << num(f.head) << " "
          << f.figure->unit;
        figures = true;
      }
  if (!figures) o << " The runs carry no calibration of two devices: no launch or latency figures.";
  o << "\n\n";
  if (changed.empty()) o << "Every one is SAME.\n";
  else write_point_table(o, d, w, changed);
  if (changed.size() < apart.size() && !changed.empty())
    o << "\n" << apart.size() - changed.size() << " of " << apart.size() << " are SAME (not listed).\n";
  return changed;
}

// A list of unmatched points under its heading, the first 50 of them.
void write_unmatched_list(std::ostream& o, const char* heading, const std::vector<Unmatched>& v) {
  if (v.empty()) return;
  o << heading << " (" << v.size() << "):\n\n";
  const size_t shown = std::min<size_t>(v.size(), 50);
  for (size_t i = 0; i < shown; ++i)
    o << "- " << v[i].title << " x=" << v[i].x << " " << v[i].provider
      << (v[i].label.empty() || v[i].label == v[i].provider ? "" : " (" + v[i].label + ")") << "\n";
  if (shown < v.size()) o << "- ... and " << v.size() - shown << " more\n";
  o << "\n";
}

// The points of either side that matched none of the other's.
void write_unmatched(std::ostream& o, const DiffResult& d, const Wording& w) {
  if (d.only_base.empty() && d.only_head.empty()) return;
  o << "\n## Unmatched\n\n";
  if (w.vs) {
    write_unmatched_list(o, "Without an against point", d.only_head);
    write_unmatched_list(o, "Without a provider point", d.only_base);
  } else {
    write_unmatched_list(o, "Only in base", d.only_base);
    write_unmatched_list(o, "Only in head", d.only_head);
  }
}

}  // namespace

std::string diff_markdown(const DiffResult& d) {
  std::ostringstream o;
  const Wording w(d);
  write_heading(o, d, w);
  write_devices(o, d);
  write_verdict_rule(o, d, w);
  write_summary(o, d, w);
  const std::vector<const DiffRow*> sorted = d.by_severity();
  write_flagged(o, d, w, sorted);
  const std::vector<const DiffRow*> changed = write_changes(o, d, w, sorted);
  write_drifted(o, changed);
  write_scaling(o, d);
  write_drifted(o, write_apart(o, d, w, sorted));
  write_unmatched(o, d, w);
  return o.str();
}

namespace {

json run_json(const RunInfo& r) {
  return json{{"id", r.id},           {"label", r.label},  {"gpu", r.env.gpu},
              {"source", r.source},   {"commit", r.git_commit}, {"started_at", r.started_at},
              {"peak_gbps", r.env.peak_gbps}, {"uuid", r.uuid}};
}

// --normalize peak: the two peaks and the points that scale worst, per provider.
json normalize_json(const DiffResult& d) {
  json worst = json::array();
  for (const auto& [provider, rows] : d.scaling_worst(kScalingWorst)) {
    json pts = json::array();
    for (const DiffRow* r : rows)
      pts.push_back({{"title", r->title}, {"x", r->x}, {"ratio", num_or_null(r->j.ratio)},
                     {"pct_peak_base", num_or_null(r->pct_base)}, {"pct_peak_head", num_or_null(r->pct_head)},
                     {"verdict", verdict_name(r->j.verdict)}});
    worst.push_back({{"provider", provider}, {"points", pts}});
  }
  return json{{"by", "peak"},
              {"peak_gbps_base", d.base.env.peak_gbps},
              {"peak_gbps_head", d.head.env.peak_gbps},
              {"peak_ratio", d.head.env.peak_gbps / d.base.env.peak_gbps},
              {"bandwidth_bound_pct", kBandwidthBound},
              {"scaling_worst", worst}};
}

json point_json(const DiffRow& r, bool peaks) {
  json p{{"title", r.title},
         {"x", r.x},
         {"x_name", r.x_name},
         {"provider", r.head_provider},
         {"label", r.head_label},
         {"base_provider", r.base_provider},
         {"base_label", r.base_label},
         {"metric", r.metric},
         {"unit", r.unit},
         {"base", num_or_null(r.base)},
         {"head", num_or_null(r.head)},
         {"ratio", num_or_null(r.j.ratio)},
         {"verdict", verdict_name(r.j.verdict)},
         {"regression", r.j.regression},
         {"tested", r.j.tested},
         {"p_value", num_or_null(r.j.p_value)},
         {"ratio_ci", json::array({num_or_null(r.j.ci_lo), num_or_null(r.j.ci_hi)})},
         {"noise", num_or_null(r.j.noise)},
         {"rounds", json::array({r.j.rounds_base, r.j.rounds_head})},
         {"rounds_p", num_or_null(r.j.round_p)},
         {"pairs", r.j.pairs},
         {"pair_units", r.j.pair_units},
         {"control_ratio", num_or_null(r.j.control_ratio)},
         {"control_drift", num_or_null(r.j.control_drift)},
         {"throttled", json::array({r.base_throttled, r.head_throttled})}};
  if (!r.j.reason.empty()) p["reason"] = r.j.reason;
  if (!r.base_error.empty()) p["base_error"] = r.base_error;
  if (!r.head_error.empty()) p["head_error"] = r.head_error;
  if (peaks) {
    p["pct_peak_base"] = num_or_null(r.pct_base);
    p["pct_peak_head"] = num_or_null(r.pct_head);
    p["pct_peak_ratio"] = num_or_null(r.pct_ratio);
  }
  return p;
}

// A provider pair's summary; versus counts its SLOWER points, diff its regressions.
json summary_json(const ProviderSummary& s, bool vs, bool peaks) {
  json counts = json::object();
  for (Verdict v : {Verdict::Slower, Verdict::Error, Verdict::Unsure, Verdict::Device, Verdict::Faster, Verdict::Same,
                    Verdict::Fixed}) {
    auto it = s.counts.find(v);
    counts[verdict_name(v)] = it == s.counts.end() ? 0 : it->second;
  }
  json e{{"provider", s.provider}, {"points", s.points}, {"geomean_ratio", num_or_null(s.geomean)},
         {"counts", counts}};
  if (vs) e["slower"] = counts["SLOWER"];
  else e["regressions"] = s.regressions;
  e["worst_ratio"] = num_or_null(s.worst);
  if (peaks) e["geomean_pct_peak_ratio"] = num_or_null(s.geomean_pct);
  if (s.whole.judged)
    e["whole"] = {{"verdict", verdict_name(s.whole.verdict)}, {"geomean_against_control", num_or_null(s.whole.geomean)},
                  {"points", s.whole.points}, {"up", s.whole.up}, {"down", s.whole.down}, {"band_pct", s.whole.band * 100}};
  return e;
}

json shifts_json(const std::vector<DeviceShift>& shifts) {
  json out = json::array();
  for (const DeviceShift& s : shifts) {
    json figures = json::array();
    for (const FigureShift& f : s.figures)
      figures.push_back({{"figure", f.figure->key}, {"base", num_or_null(f.base)}, {"head", num_or_null(f.head)},
                         {"time_ratio", num_or_null(f.time_ratio)}, {"p", num_or_null(f.p)}, {"real", f.real}});
    out.push_back({{"base", {{"device", s.base_device}, {"identity", identity_json(s.base_identity)}, {"passes", s.base_passes}}},
                   {"head", {{"device", s.head_device}, {"identity", identity_json(s.head_identity)}, {"passes", s.head_passes}}},
                   {"calibrated", s.calibrated}, {"figures", figures},
                   {"latency_band", json::array({s.latency_lo, s.latency_hi})},
                   {"launch_ratio", s.launch},
                   {"bandwidth_band", json::array({s.bandwidth_lo, s.bandwidth_hi})}});
  }
  return out;
}

json unmatched_json(const std::vector<Unmatched>& v) {
  json a = json::array();
  for (const auto& u : v) a.push_back({{"title", u.title}, {"x", u.x}, {"provider", u.provider}, {"label", u.label}});
  return a;
}

}  // namespace

std::string diff_json(const DiffResult& d) {
  // versus (one run's provider against the best of others): the run once, SLOWER points counted
  const bool vs = !d.opt.versus.empty();
  json j;
  if (vs) {
    j["run"] = run_json(d.head);
    j["versus"] = d.opt.versus;
  } else {
    j["base"] = run_json(d.base);
    j["head"] = run_json(d.head);
  }
  j["metric"] = d.opt.metric.empty() ? "all" : d.opt.metric;
  j["warnings"] = d.warnings;
  j["threshold_pct"] = d.opt.threshold * 100;
  if (vs) j["slower"] = d.count(Verdict::Slower);
  else j["regressions"] = d.regressions;
  j["paired"] = d.paired;
  if (d.paired) j["processes"] = d.processes;
  j["device_verdicts"] = d.count(Verdict::Device);
  j["devices"] = shifts_json(d.shifts);
  if (d.opt.normalize_peak) j["normalize"] = normalize_json(d);
  json pts = json::array();
  for (const auto& r : d.rows) {
    pts.push_back(point_json(r, d.peaks));
    if (d.opt.normalize_peak) pts.back()["apart"] = r.apart;
  }
  j["points"] = pts;
  json sum = json::array();
  for (const auto& s : d.summary) sum.push_back(summary_json(s, vs, d.peaks));
  j["summary"] = sum;
  if (vs) j["unmatched"] = {{"without_against", unmatched_json(d.only_head)}, {"without_provider", unmatched_json(d.only_base)}};
  else j["unmatched"] = {{"base", unmatched_json(d.only_base)}, {"head", unmatched_json(d.only_head)}};
  return j.dump(2) + "\n";
}

}  // namespace opbench

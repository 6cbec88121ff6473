// opbench versus: one run's provider against the best of other providers of the same run,
// judged through diff_runs (diff.cpp) on two views of the run. Torch-free.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/error.hpp"
#include "core/text.hpp"
#include "diff/diff.hpp"

namespace opbench {

namespace {

bool names(const StoredPoint& p, const std::string& name) {
  return p.point.provider == name || p.point.label == name;
}

bool failed(const StoredPoint& p) { return !p.result.error.empty() || !(p.value >= 0); }

std::string joined(const std::vector<std::string>& v) {
  std::string o;
  for (const auto& s : v) o += (o.empty() ? "" : ", ") + s;
  return o;
}

// "torch (to), torch_naive (tn)": the providers of `points`, in order, for error messages.
std::string held(const std::vector<const StoredPoint*>& points) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const StoredPoint* p : points)
    if (seen.insert(p->point.provider).second)
      out.push_back(p->point.provider +
                    (p->point.label.empty() || p->point.label == p->point.provider ? "" : " (" + p->point.label + ")"));
  return joined(out);
}

// The --against providers, trimmed, without empties or repeats; refuses an empty --provider or
// --against, and --provider among the against.
std::vector<std::string> against_names(const VersusOptions& opt, const std::string& where) {
  std::vector<std::string> against;
  for (const std::string& given : opt.against) {
    const std::string a(trim(given));
    if (!a.empty() && std::find(against.begin(), against.end(), a) == against.end()) against.push_back(a);
  }
  if (opt.provider.empty()) throw InputError(where, "--provider", "name the provider to compare");
  if (against.empty())
    throw InputError(where, "--against", "name the providers to compare against, comma-separated");
  for (const auto& a : against)
    if (a == opt.provider) throw InputError(where, "--against", "'" + a + "' is the --provider itself");
  return against;
}

// The run's points split in two: the head side holds the provider's points; the base side's
// candidates are the against providers' points by (title, x), in run order.
struct Split {
  RunRecord head;
  std::map<std::pair<std::string, int64_t>, size_t> slot;  // (title, x) -> its candidates
  std::vector<std::vector<const StoredPoint*>> candidates;
  std::vector<bool> present;  // per against provider: it has a point
};

Split split_points(const RunRecord& run, const std::vector<const StoredPoint*>& pts, const std::string& provider,
                   const std::vector<std::string>& against, const std::string& where) {
  Split s{{run.run, {}}, {}, {}, std::vector<bool>(against.size(), false)};
  for (const StoredPoint* p : pts) {
    size_t which = 0;
    while (which < against.size() && !names(*p, against[which])) ++which;
    const bool is_head = names(*p, provider);
    if (is_head && which < against.size())
      throw InputError(where, "--against", "'" + against[which] + "' names the points of --provider " + provider);
    if (is_head) s.head.points.push_back(*p);
    if (is_head || which == against.size()) continue;
    s.present[which] = true;
    auto [it, fresh] = s.slot.emplace(std::make_pair(p->point.title, p->point.x_value), s.candidates.size());
    if (fresh) s.candidates.emplace_back();
    s.candidates[it->second].push_back(p);
  }
  return s;
}

// The against providers with no point in the run; refuses a run with none of them.
std::vector<std::string> missing_against(const Split& s, const std::vector<std::string>& against,
                                         const std::vector<const StoredPoint*>& pts, const std::string& what,
                                         const std::string& where) {
  std::vector<std::string> missing;
  for (size_t i = 0; i < against.size(); ++i)
    if (!s.present[i]) missing.push_back(against[i]);
  if (missing.size() == against.size())
    throw InputError(where, "--against", "the run holds no " + what + " of " + joined(against) + " (it holds " + held(pts) + ")");
  return missing;
}

// The base side: per (title, x) the against point with the lowest shown value; a failed point
// only when every candidate failed.
RunRecord best_against(const RunRecord& run, const Split& s) {
  RunRecord base{run.run, {}};
  for (const auto& c : s.candidates) {
    const StoredPoint* best = c.front();
    for (const StoredPoint* p : c)
      if (!failed(*p) && (failed(*best) || p->value < best->value)) best = p;
    base.points.push_back(*best);
  }
  return base;
}

// How diff_runs judges the two sides: each against provider mapped to the provider, and the
// versus line naming both (and the against providers the run holds no points of).
DiffOptions versus_diff_options(const VersusOptions& opt, const std::vector<std::string>& against,
                                const std::vector<std::string>& missing, const std::string& what) {
  DiffOptions d;
  d.metric = opt.metric;
  d.threshold = opt.threshold;
  d.normalize_peak = opt.normalize_peak;
  for (const auto& a : against) d.map.emplace_back(a, opt.provider);
  d.versus = opt.provider + " against " +
             (against.size() == 1 ? against[0]
                                  : std::string(opt.metric == "speed" ? "the faster" : "the best") + " of " + joined(against));
  if (!missing.empty()) d.versus += " (the run holds no " + what + " of " + joined(missing) + ")";
  return d;
}

}  // namespace

DiffResult versus_run(const RunRecord& run, const VersusOptions& opt) {
  const std::string where = "run " + std::to_string(run.run.id);
  const std::vector<std::string> against = against_names(opt, where);
  const std::string what = opt.metric.empty() ? "points" : opt.metric + " points";
  std::vector<const StoredPoint*> pts;
  for (const auto& p : run.points)
    if (opt.metric.empty() || point_metric(p) == opt.metric) pts.push_back(&p);
  if (pts.empty()) throw InputError(where, "--metric", "the run holds no " + what);

  const Split s = split_points(run, pts, opt.provider, against, where);
  if (s.head.points.empty())
    throw InputError(where, "--provider", "the run holds no " + what + " of " + opt.provider + " (it holds " + held(pts) + ")");
  const std::vector<std::string> missing = missing_against(s, against, pts, what, where);
  const RunRecord base = best_against(run, s);
  bool any_pair = false;
  for (const auto& p : s.head.points) any_pair = any_pair || s.slot.count({p.point.title, p.point.x_value});
  if (!any_pair)
    throw InputError(where, "--against", "no table and x of the run has points of both " + opt.provider + " and " +
                                             joined(against));
  return diff_runs(base, s.head, versus_diff_options(opt, against, missing, what));
}

}  // namespace opbench

// opbench versus: one run's provider against the best of other providers of the same run,
// judged through diff_runs (diff.cpp) on two views of the run. Torch-free.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/error.hpp"
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

}  // namespace

DiffResult versus_run(const ReportRun& run, const VersusOptions& opt) {
  const std::string where = "run " + std::to_string(run.run.id);
  std::vector<std::string> against;  // trimmed, without empties or repeats
  for (std::string a : opt.against) {
    a.erase(0, a.find_first_not_of(" \t"));
    a.erase(a.find_last_not_of(" \t") + 1);
    if (!a.empty() && std::find(against.begin(), against.end(), a) == against.end()) against.push_back(a);
  }
  if (opt.provider.empty()) throw InputError(where, "--provider", "name the provider to compare");
  if (against.empty())
    throw InputError(where, "--against", "name the providers to compare against, comma-separated");
  for (const auto& a : against)
    if (a == opt.provider) throw InputError(where, "--against", "'" + a + "' is the --provider itself");

  const std::string what = opt.metric.empty() ? "points" : opt.metric + " points";
  std::vector<const StoredPoint*> pts;
  for (const auto& p : run.points)
    if (opt.metric.empty() || point_metric(p) == opt.metric) pts.push_back(&p);
  if (pts.empty()) throw InputError(where, "--metric", "the run holds no " + what);

  // The head side: the provider's points. The candidates of the base side: the against
  // providers' points by (title, x), in run order.
  ReportRun base{run.run, {}}, head{run.run, {}};
  std::map<std::pair<std::string, int64_t>, size_t> slot;
  std::vector<std::vector<const StoredPoint*>> candidates;
  std::vector<bool> present(against.size(), false);
  for (const StoredPoint* p : pts) {
    size_t which = 0;
    while (which < against.size() && !names(*p, against[which])) ++which;
    const bool is_head = names(*p, opt.provider);
    if (is_head && which < against.size())
      throw InputError(where, "--against", "'" + against[which] + "' names the points of --provider " + opt.provider);
    if (is_head) head.points.push_back(*p);
    if (is_head || which == against.size()) continue;
    present[which] = true;
    auto [it, fresh] = slot.emplace(std::make_pair(p->point.title, p->point.x_value), candidates.size());
    if (fresh) candidates.emplace_back();
    candidates[it->second].push_back(p);
  }
  if (head.points.empty())
    throw InputError(where, "--provider", "the run holds no " + what + " of " + opt.provider + " (it holds " + held(pts) + ")");
  std::vector<std::string> missing;
  for (size_t i = 0; i < against.size(); ++i)
    if (!present[i]) missing.push_back(against[i]);
  if (missing.size() == against.size())
    throw InputError(where, "--against", "the run holds no " + what + " of " + joined(against) + " (it holds " + held(pts) + ")");

  // Per (title, x) the against point with the lowest shown value; a failed point only when
  // every candidate failed.
  for (const auto& c : candidates) {
    const StoredPoint* best = c.front();
    for (const StoredPoint* p : c)
      if (!failed(*p) && (failed(*best) || p->value < best->value)) best = p;
    base.points.push_back(*best);
  }
  bool any_pair = false;
  for (const auto& p : head.points) any_pair = any_pair || slot.count({p.point.title, p.point.x_value});
  if (!any_pair)
    throw InputError(where, "--against", "no table and x of the run has points of both " + opt.provider + " and " +
                                             joined(against));

  DiffOptions d;
  d.metric = opt.metric;
  d.threshold = opt.threshold;
  for (const auto& a : against) d.map.emplace_back(a, opt.provider);
  d.versus = opt.provider + " against " +
             (against.size() == 1 ? against[0]
                                  : std::string(opt.metric == "speed" ? "the faster" : "the best") + " of " + joined(against));
  if (!missing.empty()) d.versus += " (the run holds no " + what + " of " + joined(missing) + ")";
  return diff_runs(base, head, d);
}

}  // namespace opbench

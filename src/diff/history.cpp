// opbench history: a point across runs, its levels and steps. Torch-free.
#include "diff/history.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "core/suggest.hpp"
#include "core/text.hpp"

namespace opbench {

namespace {

bool failed(const StoredPoint& p) { return !p.result.ok() || !(p.value > 0) || !std::isfinite(p.value); }

// The relative noise the points show themselves: the median over points measured with
// samples of half their p20-p80 width over their median (0 when none has samples).
double point_noise(const std::vector<HistoryEntry>& entries) {
  std::vector<double> rel;
  for (const auto& e : entries) {
    const Stats& s = e.point.result.stats;
    if (failed(e.point) || s.count < 5 || !(s.median > 0)) continue;
    rel.push_back((s.p80 - s.p20) / 2 / s.median);
  }
  if (rel.empty()) return 0;
  std::sort(rel.begin(), rel.end());
  return rel[rel.size() / 2];
}

// Fits the levels of one series and marks its steps.
void find_steps(HistorySeries& s, double threshold) {
  std::vector<size_t> ok;  // entry index of each fitted value
  std::vector<double> values;
  for (size_t i = 0; i < s.entries.size(); ++i)
    if (!failed(s.entries[i].point)) {
      ok.push_back(i);
      values.push_back(s.entries[i].point.value);
    }
  s.segments = fit_levels(values, {threshold, point_noise(s.entries)});
  for (auto& e : s.entries) {
    e.level = std::nan("");
    e.change = std::nan("");
  }
  for (size_t k = 0; k < s.segments.size(); ++k) {
    const Segment& g = s.segments[k];
    for (size_t i = g.begin; i < g.end; ++i) s.entries[ok[i]].level = g.level;
    if (k == 0) continue;
    HistoryEntry& first = s.entries[ok[g.begin]];
    first.change = g.level / s.segments[k - 1].level - 1;
    first.step = first.change > 0 ? "up" : "down";
  }
  for (size_t i = 1; i < s.entries.size(); ++i) {
    HistoryEntry& e = s.entries[i];
    const bool was_failing = failed(s.entries[i - 1].point), fails = failed(e.point);
    if (fails && !was_failing) e.step = "error";
    else if (!fails && was_failing && e.step.empty()) e.step = "fixed";
  }
}

std::vector<std::string> all_titles(const Store& store) {
  std::set<std::string> seen;
  std::vector<std::string> out;
  for (const auto& r : store.runs())
    for (const auto& p : store.points(r.id))
      if (seen.insert(p.point.title).second) out.push_back(p.point.title);
  return out;
}

[[noreturn]] void no_title(const Store& store, const std::string& title) {
  auto titles = all_titles(store);
  std::string near = closest_name(title, titles);
  std::string hint = near.empty() ? "" : "did you mean '" + near + "'? ";
  throw InputError(store.path(), title,
                   "no point has this title (" + hint + std::to_string(titles.size()) +
                       " titles in the database; `opbench report` shows them)");
}

// What the title holds, for a query that matched none of it.
[[noreturn]] void no_match(const Store& store, const HistoryQuery& q, const std::vector<StoredPoint>& pts,
                           const std::map<int64_t, RunInfo>& runs) {
  std::set<int64_t> xs;
  std::set<std::string> provs, gpus;
  for (const auto& p : pts) {
    xs.insert(p.point.x_value);
    provs.insert(p.point.label.empty() || p.point.label == p.point.provider ? p.point.provider
                                                                             : p.point.provider + " (" + p.point.label + ")");
    auto r = runs.find(p.run_id);
    if (r != runs.end()) gpus.insert(r->second.env.gpu.empty() ? "unknown" : r->second.env.gpu);
  }
  std::string what = q.title, held;
  if (q.x) what += " x=" + std::to_string(*q.x);
  if (!q.provider.empty()) what += " provider " + q.provider;
  if (!q.gpu.empty()) what += " gpu " + q.gpu;
  std::vector<std::string> xv;
  for (auto x : xs) xv.push_back(std::to_string(x));
  held = "x: " + join_names(xv) + "; providers: " + join_names({provs.begin(), provs.end()}) +
         "; gpus: " + join_names({gpus.begin(), gpus.end()}, " | ");
  throw InputError(store.path(), what, "no point matches (the title holds " + held + ")");
}

}  // namespace

size_t HistorySeries::steps() const {
  size_t n = 0;
  for (const auto& e : entries) n += e.step.empty() ? 0 : 1;
  return n;
}

bool HistorySeries::latest_regression() const {
  if (entries.empty()) return false;
  if (failed(entries.back().point)) {
    for (const auto& e : entries)
      if (!failed(e.point)) return true;
    return false;
  }
  return segments.size() >= 2 && segments.back().level > segments[segments.size() - 2].level;
}

std::vector<HistorySeries> build_history(std::vector<StoredPoint> pts, const std::map<int64_t, RunInfo>& runs,
                                         const HistoryQuery& q) {
  std::vector<HistorySeries> out;
  std::map<std::tuple<int64_t, std::string, std::string>, size_t> index;  // (x, provider, gpu) -> series
  for (auto& p : pts) {
    auto r = runs.find(p.run_id);
    if (p.point.title != q.title || r == runs.end()) continue;
    const RunInfo& run = r->second;
    if (q.x && p.point.x_value != *q.x) continue;
    if (!q.provider.empty() && p.point.provider != q.provider && p.point.label != q.provider) continue;
    if (!q.gpu.empty() && to_lower(run.env.gpu).find(to_lower(q.gpu)) == std::string::npos) continue;
    auto key = std::make_tuple(p.point.x_value, p.point.provider, run.env.gpu);
    auto [it, fresh] = index.emplace(key, out.size());
    if (fresh) {
      HistorySeries s;
      s.title = q.title;
      s.x_name = p.point.x_name;
      s.x = p.point.x_value;
      s.provider = p.point.provider;
      s.label = p.point.label;
      s.gpu = run.env.gpu;
      out.push_back(s);
    }
    HistoryEntry e;
    e.run = run;
    e.point = std::move(p);
    out[it->second].entries.push_back(std::move(e));
  }
  std::sort(out.begin(), out.end(), [](const HistorySeries& a, const HistorySeries& b) {
    return std::tie(a.x, a.provider, a.gpu) < std::tie(b.x, b.provider, b.gpu);
  });
  for (auto& s : out) {
    std::stable_sort(s.entries.begin(), s.entries.end(), [](const HistoryEntry& a, const HistoryEntry& b) {
      if (a.run.started_at != b.run.started_at) return a.run.started_at < b.run.started_at;
      return a.run.id < b.run.id;
    });
    find_steps(s, q.threshold);
  }
  return out;
}

std::vector<HistorySeries> point_history(const Store& store, const HistoryQuery& q) {
  std::vector<StoredPoint> pts = store.points_titled(q.title);
  if (pts.empty()) no_title(store, q.title);
  std::map<int64_t, RunInfo> runs;
  for (const auto& r : store.runs()) runs[r.id] = r;
  std::vector<HistorySeries> out = build_history(pts, runs, q);  // a copy: no_match lists what pts hold
  if (out.empty()) no_match(store, q, pts, runs);
  return out;
}

namespace {

std::string num(double v, const char* f = "%.6g") {
  if (!std::isfinite(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string pct(double change) { return num(change * 100, "%+.1f%%"); }

std::string commit_of(const RunInfo& r) {
  std::string c = r.git_commit.substr(0, 12);
  if (c.empty()) return r.source == "import" ? "import" : "-";
  return c;
}

std::string series_name(const HistorySeries& s) {
  std::string out = s.x_name + "=" + std::to_string(s.x) + " " + s.provider;
  if (!s.label.empty() && s.label != s.provider) out += " (" + s.label + ")";
  return out;
}

std::string step_cell(const HistoryEntry& e) {
  if (e.step == "up") return "**step up " + pct(e.change) + "**";
  if (e.step == "down") return "step down " + pct(e.change);
  if (e.step == "error") return "**now failing**";
  if (e.step == "fixed") return "fixed";
  return "";
}

}  // namespace

std::string history_markdown(const std::vector<HistorySeries>& series, double threshold) {
  std::ostringstream o;
  o << "# History of " << one_line(series.front().title) << "\n\n";
  o << "One series per x, provider and GPU, runs in time order. Levels come from a penalised "
       "piecewise-constant fit over the whole series: a step is a lasting change of level by more than "
    << num(threshold * 100) << "% and beyond the series' noise; one outlier is no step. A step up is more "
       "time (or memory).\n\n";
  size_t steps = 0;
  std::vector<std::string> regressed;
  for (const auto& s : series) {
    steps += s.steps();
    if (s.latest_regression()) regressed.push_back(one_line(series_name(s) + " on " + (s.gpu.empty() ? "unknown" : s.gpu)));
  }
  o << series.size() << " series, " << steps << " step" << (steps == 1 ? "" : "s") << "; ";
  if (regressed.empty()) o << "no latest level is a regression.\n";
  else o << "**the latest level is a regression** in " << join_names(regressed, "; ") << ".\n";
  for (const auto& s : series) {
    o << "\n## " << one_line(series_name(s)) << ", " << (s.gpu.empty() ? "unknown GPU" : one_line(s.gpu)) << "\n\n";
    if (!s.segments.empty()) {
      o << s.segments.size() << " level" << (s.segments.size() == 1 ? "" : "s") << ":";
      for (size_t k = 0; k < s.segments.size(); ++k)
        o << (k ? "," : "") << " " << num(s.segments[k].level) << " (" << s.segments[k].size() << " run"
          << (s.segments[k].size() == 1 ? "" : "s") << ")";
      o << (s.latest_regression() ? "; **the latest level is a regression**" : "") << ".\n\n";
    }
    o << "| run | started | commit | label | value | level | step |\n|---:|---|---|---|---:|---:|---|\n";
    for (const auto& e : s.entries)
      o << "| " << e.run.id << " | " << md_cell(e.run.started_at.substr(0, 19)) << " | " << md_cell(commit_of(e.run))
        << " | " << (e.run.label.empty() ? "-" : md_cell(e.run.label)) << " | " << (failed(e.point) ? "error" : num(e.point.value))
        << " | " << num(e.level) << " | " << step_cell(e) << " |\n";
  }
  return o.str();
}

namespace {

using json = nlohmann::ordered_json;

json finite_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json series_head(const HistorySeries& s) {
  return {{"title", s.title}, {"x_name", s.x_name}, {"x", s.x}, {"provider", s.provider},
          {"label", s.label}, {"gpu", s.gpu}};
}

}  // namespace

std::string history_json(const std::vector<HistorySeries>& series, double threshold) {
  json a = json::array();
  for (const auto& s : series) {
    json entries = json::array(), segments = json::array();
    for (const auto& e : s.entries)
      entries.push_back({{"run", e.run.id}, {"started_at", e.run.started_at}, {"commit", e.run.git_commit},
                         {"gpu", e.run.env.gpu}, {"label", e.run.label},
                         {"value", failed(e.point) ? json(nullptr) : json(e.point.value)},
                         {"error", e.point.result.error}, {"level", finite_or_null(e.level)}, {"step", e.step},
                         {"change", finite_or_null(e.change)}});
    for (const auto& g : s.segments) segments.push_back({{"runs", g.size()}, {"level", g.level}});
    json j = series_head(s);
    j["threshold_pct"] = threshold * 100;
    j["segments"] = segments;
    j["latest_regression"] = s.latest_regression();
    j["entries"] = entries;
    a.push_back(j);
  }
  // replace: a text an older opbench stored unchecked cannot stop the output
  return a.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string history_plot_json(const std::vector<HistorySeries>& series, double threshold) {
  // One x position per run, shared by every series: the runs in time order.
  std::map<std::pair<std::string, int64_t>, const RunInfo*> order;
  for (const auto& s : series)
    for (const auto& e : s.entries) order[{e.run.started_at, e.run.id}] = &e.run;
  std::map<int64_t, size_t> pos;
  json runs = json::array();
  for (const auto& [key, r] : order) {
    pos[r->id] = runs.size();
    std::string c = commit_of(*r);
    runs.push_back({{"run", r->id}, {"tick", c == "-" || c == "import" ? "run " + std::to_string(r->id) : c.substr(0, 8)}});
  }
  json lines = json::array();
  for (const auto& s : series) {
    json pts = json::array(), steps = json::array();
    for (const auto& e : s.entries) {
      pts.push_back({{"pos", pos[e.run.id]}, {"value", failed(e.point) ? json(nullptr) : json(e.point.value)},
                     {"level", finite_or_null(e.level)}});
      if (!e.step.empty())
        steps.push_back({{"pos", pos[e.run.id]}, {"step", e.step}, {"change", finite_or_null(e.change)}});
    }
    json j = series_head(s);
    j["name"] = series_name(s) + (s.gpu.empty() ? "" : ", " + s.gpu);
    j["points"] = pts;
    j["steps"] = steps;
    lines.push_back(j);
  }
  const std::string unit = series.front().entries.front().point.result.unit;
  return json{{"kind", "history"}, {"title", series.front().title}, {"unit", unit},
              {"threshold_pct", threshold * 100}, {"runs", runs}, {"series", lines}}
             .dump();
}

}  // namespace opbench

// opbench history: a point across runs, with steps marked by the diff verdict. Torch-free.
#include "diff/history.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.hpp"
#include "core/text.hpp"

namespace opbench {

std::string HistoryEntry::step() const {
  if (!has_prev) return "";
  switch (vs_prev.verdict) {
    case Verdict::Slower: return "up";
    case Verdict::Faster: return "down";
    case Verdict::Error: return vs_prev.regression ? "error" : "";
    case Verdict::Fixed: return "fixed";
    default: return "";
  }
}

size_t HistorySeries::steps() const {
  size_t n = 0;
  for (const auto& e : entries) n += e.step().empty() ? 0 : 1;
  return n;
}

std::vector<HistorySeries> point_history(const Store& store, const std::string& title,
                                         std::optional<int64_t> x, const std::string& provider,
                                         double threshold) {
  std::vector<StoredPoint> pts = store.points_titled(title);
  if (pts.empty()) throw InputError(store.path(), title, "no point has this title");
  std::map<int64_t, RunInfo> runs;
  for (const auto& r : store.runs()) runs[r.id] = r;

  std::vector<HistorySeries> out;
  std::map<std::pair<int64_t, std::string>, size_t> index;  // (x, provider) -> series
  for (auto& p : pts) {
    if (x && p.point.x_value != *x) continue;
    if (!provider.empty() && p.point.provider != provider && p.point.label != provider) continue;
    auto key = std::make_pair(p.point.x_value, p.point.provider);
    auto [it, fresh] = index.emplace(key, out.size());
    if (fresh) {
      HistorySeries s;
      s.title = title;
      s.x_name = p.point.x_name;
      s.x = p.point.x_value;
      s.provider = p.point.provider;
      s.label = p.point.label;
      out.push_back(s);
    }
    HistoryEntry e;
    e.run = runs[p.run_id];
    e.point = std::move(p);
    out[it->second].entries.push_back(std::move(e));
  }
  if (out.empty()) {
    std::string what = title;
    if (x) what += " x=" + std::to_string(*x);
    if (!provider.empty()) what += " provider " + provider;
    throw InputError(store.path(), what, "no point matches (the title exists; check --x and --provider)");
  }
  std::sort(out.begin(), out.end(), [](const HistorySeries& a, const HistorySeries& b) {
    return a.x != b.x ? a.x < b.x : a.provider < b.provider;
  });
  for (auto& s : out) {
    std::stable_sort(s.entries.begin(), s.entries.end(), [](const HistoryEntry& a, const HistoryEntry& b) {
      if (a.run.started_at != b.run.started_at) return a.run.started_at < b.run.started_at;
      return a.run.id < b.run.id;
    });
    for (size_t i = 1; i < s.entries.size(); ++i) {
      s.entries[i].has_prev = true;
      s.entries[i].vs_prev = judge(s.entries[i - 1].point, s.entries[i].point, threshold);
    }
  }
  return out;
}

namespace {

std::string num(double v, const char* f = "%.6g") {
  if (std::isnan(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

std::string history_markdown(const std::vector<HistorySeries>& series, double threshold) {
  std::ostringstream o;
  o << "# History of " << one_line(series.front().title) << "\n\n";
  o << "Each value against the previous run that has the point (threshold " << num(threshold * 100)
    << "%, noise-aware as in opbench diff): a step up is SLOWER (more time or memory), a step down "
       "FASTER.\n";
  for (const auto& s : series) {
    o << "\n## " << one_line(s.x_name) << "=" << s.x << " " << one_line(s.provider);
    if (!s.label.empty() && s.label != s.provider) o << " (" << one_line(s.label) << ")";
    o << "\n\n| run | started | commit | gpu | label | value | vs previous | verdict | step |\n"
      << "|---:|---|---|---|---|---:|---:|---|---|\n";
    for (const auto& e : s.entries) {
      std::string commit = e.run.git_commit.substr(0, 12);
      if (e.run.source == "import") commit = commit.empty() ? "import" : commit;
      o << "| " << e.run.id << " | " << md_cell(e.run.started_at.substr(0, 19)) << " | "
        << (commit.empty() ? "-" : md_cell(commit)) << " | " << (e.run.env.gpu.empty() ? "-" : md_cell(e.run.env.gpu))
        << " | " << (e.run.label.empty() ? "-" : md_cell(e.run.label))
        << " | " << (e.point.result.ok() ? num(e.point.value) : "error") << " | ";
      if (e.has_prev && std::isfinite(e.vs_prev.ratio)) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%+.1f%%", (e.vs_prev.ratio - 1) * 100);
        o << buf;
      } else {
        o << "-";
      }
      o << " | " << (e.has_prev ? verdict_name(e.vs_prev.verdict) : "-") << " | ";
      std::string st = e.step();
      o << (st == "up" ? "**step up**" : st == "down" ? "**step down**" : st == "error" ? "**now failing**"
                                                       : st == "fixed" ? "fixed" : "")
        << " |\n";
    }
  }
  return o.str();
}

std::string history_json(const std::vector<HistorySeries>& series, double threshold) {
  using json = nlohmann::ordered_json;
  auto nn = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
  json a = json::array();
  for (const auto& s : series) {
    json entries = json::array();
    for (const auto& e : s.entries) {
      json j{{"run", e.run.id},         {"started_at", e.run.started_at}, {"commit", e.run.git_commit},
             {"gpu", e.run.env.gpu},    {"label", e.run.label},           {"value", nn(e.point.value)},
             {"error", e.point.result.error}};
      if (e.has_prev) {
        j["ratio"] = nn(e.vs_prev.ratio);
        j["verdict"] = verdict_name(e.vs_prev.verdict);
      }
      j["step"] = e.step();
      entries.push_back(j);
    }
    a.push_back({{"title", s.title}, {"x_name", s.x_name}, {"x", s.x}, {"provider", s.provider},
                 {"label", s.label}, {"threshold_pct", threshold * 100}, {"entries", entries}});
  }
  return a.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace opbench

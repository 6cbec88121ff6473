#include "report/plot_data.hpp"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/hash.hpp"
#include "core/text.hpp"

namespace opbench {

namespace {

bool is_speed(const StoredPoint& p) {
  if (p.point.params.has("metric")) return p.point.params.s_or("metric", "speed") == "speed";
  return p.result.unit != "MiB";
}

std::string run_tag(const RunInfo& r) {
  std::string t = "run " + std::to_string(r.id);
  if (!r.label.empty()) t += " " + r.label;
  if (!r.env.gpu.empty()) t += ", " + r.env.gpu;
  return t;
}

std::string y_label(const RunInfo& r, bool speed, Show show) {
  if (!speed) return "peak memory (MiB)";
  if (show == Show::GBps) return "GB/s of the minimal bytes";
  if (show == Show::PctPeak) return "% of the measured peak bandwidth";
  return "time (ms, " + (r.stat.empty() ? std::string("median") : r.stat) + ")";
}

// The floor of one run's points of one table: x -> floor value.
PlotLine floor_line(const RunInfo& r, const std::vector<const StoredPoint*>& pts, Show show, bool several) {
  PlotLine f;
  f.floor = true;
  f.run = run_tag(r);
  f.label = "bandwidth floor" + (several ? " (" + run_tag(r) + ")" : std::string());
  std::map<int64_t, double> bytes;
  for (const auto* p : pts)
    if (p->result.bytes > 0) bytes.emplace(p->point.x_value, p->result.bytes);
  for (const auto& [x, b] : bytes) {
    f.x.push_back(double(x));
    f.y.push_back(floor_value(b, r.env.peak_gbps, show));
  }
  return f;
}

}  // namespace

double floor_value(double bytes, double peak_gbps, Show show) {
  if (show == Show::GBps) return peak_gbps;
  if (show == Show::PctPeak) return 100;
  return bytes / (peak_gbps * 1e9) * 1e3;
}

std::string title_file_stem(const std::string& title) {
  std::string out;
  for (char c : title) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') ? c : '_';
  if (out.empty() || out[0] == '.') out = "_" + out;
  return out;
}

std::string plot_file_name(const std::string& title) { return title_file_stem(title) + ".png"; }

std::string FileNames::take(const std::string& name) {
  std::string stem = title_file_stem(name);
  if (stem.size() > 100) stem = stem.substr(0, 80) + "-" + content_hash(name);
  std::string out = stem;
  for (int i = 2; !used_.insert(to_lower(out)).second; ++i) out = stem + "-" + std::to_string(i);
  return out;
}

std::vector<PlotTable> plot_tables(const std::vector<RunRecord>& runs, Show show) {
  std::vector<PlotTable> out;
  std::map<std::string, size_t> index;
  FileNames names;
  const bool several = runs.size() > 1;
  for (const auto& rr : runs) {
    // this run's points by title, then by label, in stored order
    std::map<std::string, std::vector<const StoredPoint*>> by_title;
    std::vector<std::string> titles;
    for (const auto& p : rr.points) {
      if (show != Show::Value && !is_speed(p)) continue;
      auto& v = by_title[p.point.title];
      if (v.empty()) titles.push_back(p.point.title);
      v.push_back(&p);
    }
    for (const auto& title : titles) {
      const auto& pts = by_title[title];
      auto [it, fresh] = index.emplace(title, out.size());
      if (fresh) {
        PlotTable t;
        t.title = title;
        t.file = names.take(title) + ".png";
        t.x_name = pts.front()->point.x_name;
        t.speed = is_speed(*pts.front());
        t.y_label = y_label(rr.run, t.speed, show);
        out.push_back(t);
      }
      PlotTable& t = out[it->second];
      std::vector<std::string> labels;
      std::map<std::string, PlotLine> lines;
      for (const auto* p : pts) {
        auto [l, first] = lines.emplace(p->point.label, PlotLine{});
        if (first) {
          labels.push_back(p->point.label);
          l->second.run = run_tag(rr.run);
          l->second.label = p->point.label + (several ? " (" + run_tag(rr.run) + ")" : std::string());
        }
        const double v = shown_value(*p, show);
        if (!p->result.ok() || !std::isfinite(v) || v < 0) continue;
        l->second.x.push_back(double(p->point.x_value));
        l->second.y.push_back(v);
      }
      for (const auto& label : labels) t.lines.push_back(lines[label]);
      bool has_floor = false;  // in the pct view every run's floor is the same 100%: drawn once
      for (const auto& l : t.lines) has_floor = has_floor || l.floor;
      if (t.speed && rr.run.env.peak_gbps > 0 && !(show == Show::PctPeak && has_floor)) {
        PlotLine f = floor_line(rr.run, pts, show, several && show != Show::PctPeak);
        // runs on one GPU share one floor: drawn once, not once per run
        bool drawn = false;
        for (const auto& l : t.lines) drawn = drawn || (l.floor && l.x == f.x && l.y == f.y);
        if (!f.x.empty() && !drawn) t.lines.push_back(f);
      }
    }
  }
  return out;
}

std::string plot_tables_json(const std::vector<PlotTable>& tables, Show show) {
  using json = nlohmann::ordered_json;
  json ts = json::array();
  for (const auto& t : tables) {
    json lines = json::array();
    for (const auto& l : t.lines) lines.push_back({{"label", l.label}, {"run", l.run}, {"x", l.x}, {"y", l.y}, {"floor", l.floor}});
    ts.push_back({{"title", t.title}, {"file", t.file}, {"x_name", t.x_name}, {"y_label", t.y_label},
                  {"speed", t.speed}, {"lines", lines}});
  }
  const char* name = show == Show::GBps ? "gbps" : show == Show::PctPeak ? "pct" : "value";
  return json{{"kind", "tables"}, {"show", name}, {"tables", ts}}.dump();
}

}  // namespace opbench

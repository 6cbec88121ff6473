#include "report/report.hpp"

#include "report/provenance.hpp"

#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "core/text.hpp"
#include "record/check_note.hpp"
#include "report/noise.hpp"

namespace opbench {

double shown_value(const StoredPoint& p, Show show) {
  if (!p.result.ok()) return -1;
  switch (show) {
    case Show::GBps: return p.result.gbps;
    case Show::PctPeak: return p.result.pct_peak;
    default: return p.value;
  }
}

namespace {

// What build_sections gathers of a table's points: its x values in the order the points give
// them, each label's value at each x, and its labels in the order the points first name them.
struct TableCells {
  std::vector<double> xs;
  std::map<std::string, std::map<double, double>> cells;  // label -> x -> value
  std::set<std::string> labels;
  std::vector<std::string> label_order;
};

// An empty table for the point's title, at the end of its section (made at the end of `out`
// when new).
void add_table(const StoredPoint& p, std::vector<Section>& out, std::map<std::string, size_t>& section_index) {
  auto s = section_index.find(p.section);
  if (s == section_index.end()) {
    s = section_index.emplace(p.section, out.size()).first;
    out.push_back({p.section, {}});
  }
  Table t;
  t.title = one_line(p.point.title);
  t.index_name = one_line(p.point.x_name);
  out[s->second].tables.push_back(t);
}

// The point's shown value into its table's cells; a label the run-wide column order does not
// hold yet joins its end.
void add_cell(const StoredPoint& p, Show show, TableCells& a, std::vector<std::string>& order) {
  double x = double(p.point.x_value);
  bool seen = false;
  for (double v : a.xs) seen = seen || v == x;
  if (!seen) a.xs.push_back(x);
  const std::string label = one_line(p.point.label);
  a.cells[label][x] = shown_value(p, show);
  if (!a.labels.count(label)) {
    a.labels.insert(label);
    a.label_order.push_back(label);
    bool known = false;
    for (const auto& l : order) known = known || l == label;
    if (!known) order.push_back(label);
  }
}

// The table's columns and rows from its cells (NaN where a label has no value at an x). An
// imported run keeps each table's own column order (its points are stored row by row, as the
// document printed them), which one run-wide order cannot always give.
void fill_table(Table& t, TableCells& a, const std::vector<std::string>& order, bool imported) {
  t.index = a.xs;
  if (imported) t.columns = a.label_order;
  else
    for (const auto& l : order)
      if (a.labels.count(l)) t.columns.push_back(l);
  for (double x : a.xs) {
    std::vector<double> row;
    for (const auto& l : t.columns) {
      auto c = a.cells[l].find(x);
      row.push_back(c == a.cells[l].end() ? std::nan("") : c->second);
    }
    t.cells.push_back(row);
  }
}

}  // namespace

std::vector<Section> build_sections(const RunRecord& r, Show show) {
  std::vector<Section> out;
  std::map<std::string, size_t> section_index;
  std::set<std::string> titles;
  // Column order: the run's Notation order (labels), then any label it does not list.
  std::vector<std::string> order;
  for (const auto& [label, prov] : r.run.notation) order.push_back(one_line(label));
  std::map<std::string, TableCells> cells;  // by title
  for (const auto& p : r.points) {
    if (show != Show::Value && p.point.params.s_or("metric", "speed") != "speed") continue;
    if (titles.insert(p.point.title).second) add_table(p, out, section_index);
    add_cell(p, show, cells[p.point.title], order);
  }
  for (auto& s : out)
    for (auto& t : s.tables) fill_table(t, cells[t.title], order, r.run.source == "import");
  return out;
}

// "Plots:" and a link to each table's image, where one was made.
static std::string plot_links(const std::vector<Table>& tables, const std::map<std::string, std::string>& plots) {
  std::ostringstream o;
  for (const auto& t : tables) {
    auto it = plots.find(t.title);
    if (it == plots.end()) continue;
    if (o.tellp() == 0) o << "\nPlots:\n\n";
    o << "- [" << t.title << "](" << it->second << ")\n";
  }
  return o.str();
}

static std::string describe_run(const RunInfo& r) {
  std::ostringstream o;
  o << "run " << r.id;
  if (!r.label.empty()) {  // its ')' and backslashes escaped: import finds where it ends
    o << " (";
    for (char c : r.label) o << (c == ')' || c == '\\' ? "\\" : "") << c;
    o << ")";
  }
  if (r.source == "import") {
    o << ", imported from " << r.config_path;
  } else {
    o << ", " << r.started_at.substr(0, 10) << ", " << r.env.device;
    if (!r.shard.empty()) o << ", shard " << r.shard;
    if (!r.shards.empty()) o << ", joined from " << r.shards << " shards";
    if (!r.git_commit.empty()) {
      bool dirty = r.git_commit.size() > 6 && r.git_commit.compare(r.git_commit.size() - 6, 6, "-dirty") == 0;
      o << ", commit " << r.git_commit.substr(0, 12) << (dirty ? "-dirty" : "");
    }
    if (!r.env.torch_version.empty()) o << ", torch " << r.env.torch_version;
    if (r.env.peak_gbps > 0) {
      char buf[64];
      std::snprintf(buf, sizeof buf, ", measured peak bandwidth %.0f GB/s", r.env.peak_gbps);
      o << buf;
    }
    o << ", " << (r.stat.empty() ? "median" : r.stat) << " of each point's samples";
    if (r.status != "done") o << " (" << r.status << ")";
  }
  return one_line(o.str());
}

std::string render_report(const std::vector<RunRecord>& runs, Show show) { return render_report(runs, show, {}); }

std::string render_report(const std::vector<RunRecord>& runs, Show show,
                          const std::map<std::string, std::string>& plots) {
  std::ostringstream o;
  std::string op = runs.empty() ? "" : runs.front().run.op;
  o << "# " << (op.empty() ? "opbench" : op) << " benchmark\n\n";
  if (show == Show::GBps) o << "Cells: GB/s of the minimal bytes (speed tables only).\n\n";
  if (show == Show::PctPeak) o << "Cells: % of the measured peak bandwidth (speed tables only).\n\n";
  o << "## Notation\n\n";
  std::set<std::string> listed;  // lower case: the list's labels are read ignoring case
  for (const auto& r : runs)
    for (const auto& [label, prov] : r.run.notation)
      if (listed.insert(to_lower(label)).second) o << "- " << one_line(label) << ": " << one_line(prov) << "\n";
  for (const auto& r : runs) {
    o << "\n## " << (r.run.env.gpu.empty() ? "unknown device" : one_line(r.run.env.gpu)) << "\n\n";
    o << describe_run(r.run) << "\n";
    if (r.run.source != "import")
      for (const std::string& line :
           {devices_line(r.run, r.points), identity_lines(r.run), timing_line(r.run), tuning_text(r.run),
            gpu_line(r.run, r.points)})
        if (!line.empty()) o << "\n" << line << "\n";
    std::vector<const StoredPoint*> flagged;
    for (const auto& p : r.points)
      if (p.result.check_failed || !p.result.ok()) flagged.push_back(&p);
    for (const auto& s : build_sections(r, show)) {
      o << "\n### " << one_line(s.name) << "\n\n```\n";
      for (size_t i = 0; i < s.tables.size(); ++i) {
        if (i) o << "\n";
        o << format_block(s.tables[i]);
      }
      o << "```\n";
      o << noise_notes(r.points, s.tables);
      o << plot_links(s.tables, plots);
    }
    if (!flagged.empty()) {
      o << "\nPoints shown as -1 failed; points marked here failed the check against the reference:\n\n";
      for (const auto* p : flagged) {
        o << "- " << one_line(p->point.title) << " " << one_line(p->point.x_name) << "=" << p->point.x_value << " "
          << one_line(p->point.provider) << ": ";
        if (!p->result.ok()) o << "error: " << one_line(p->result.error) << "\n";
        else o << "check failed: " << check_note(p->result, p->point.params.s_or("dtype", "")) << "\n";
      }
    }
    const auto throttled = throttled_points(r.points);
    if (!throttled.empty()) {
      o << "\nPoints measured while the GPU throttled for power or heat (a power or thermal reason active, "
           "the SM clock below "
        << int(kThrottleThreshold * 100) << "% of its default):\n\n";
      for (const auto* p : throttled)
        o << "- " << p->point.title << " " << p->point.x_name << "=" << p->point.x_value << " " << p->point.provider
          << ": " << state_text(p->state) << "\n";
    }
    if (r.run.source != "import")
      for (const std::string& line : {stops_line(r.points), time_line(r.run)})
        if (!line.empty()) o << "\n" << line << "\n";
  }
  return o.str();
}

}  // namespace opbench

// The pages of a site as data (pages.hpp). Torch-free.
#include "site/pages.hpp"

#include <algorithm>
#include <cmath>
#include <future>
#include <map>
#include <set>

#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/hash.hpp"
#include "diff/diff.hpp"
#include "diff/history.hpp"
#include "report/plot_data.hpp"
#include "report/report.hpp"

namespace opbench {

using json = nlohmann::ordered_json;

namespace {

const std::string kUnknownGpu = "unknown GPU";

std::string gpu_of(const RunInfo& r) { return r.env.gpu.empty() ? kUnknownGpu : r.env.gpu; }

json num(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

bool failed(const StoredPoint& p) { return !p.result.ok() || !(p.value >= 0) || !std::isfinite(p.value); }

json run_json(const RunInfo& r) {
  return {{"id", r.id}, {"label", r.label}, {"gpu", gpu_of(r)}, {"commit", r.git_commit},
          {"started_at", r.started_at}, {"source", r.source}};
}

// One table title: where its points are, in run order.
struct TitleGroup {
  std::string op, title, stem;
  std::vector<const SiteRun*> runs;  // the runs holding it, in time order
  std::vector<std::vector<const StoredPoint*>> points;  // per run above
};

// The tables of the input by op, each op's titles in order of first appearance.
struct Catalog {
  std::vector<TitleGroup> titles;
  std::vector<std::pair<std::string, std::vector<size_t>>> ops;  // op -> title indices
  std::vector<std::string> providers;  // the most measured first (one colour each, on every page)
};

Catalog catalog_of(const SiteInput& in, FileNames& names) {
  Catalog c;
  std::map<std::string, size_t> title_index, op_index, providers;
  for (const auto& r : in.runs) {
    size_t t = 0;  // a run's points come table by table: the title looked up when it changes
    const std::string* last = nullptr;
    for (const auto& p : r.points) {
      if (!last || *last != p.point.title) {
        auto [it, fresh] = title_index.emplace(p.point.title, c.titles.size());
        t = it->second;
        last = &p.point.title;
        if (fresh) {
          c.titles.push_back({p.point.op, p.point.title, names.take(p.point.title), {}, {}});
          auto [o, new_op] = op_index.emplace(p.point.op, c.ops.size());
          if (new_op) c.ops.push_back({p.point.op, {}});
          c.ops[o->second].second.push_back(t);
        }
      }
      TitleGroup& g = c.titles[t];
      if (g.runs.empty() || g.runs.back() != &r) {
        g.runs.push_back(&r);
        g.points.emplace_back();
      }
      g.points.back().push_back(&p);
      if (providers[p.point.provider]++ == 0) c.providers.push_back(p.point.provider);
    }
  }
  std::stable_sort(c.providers.begin(), c.providers.end(),
                   [&](const std::string& a, const std::string& b) { return providers[a] > providers[b]; });
  return c;
}

// The latest run on each GPU holding the title: indices into g.runs, GPUs in order of first run.
std::vector<size_t> latest_per_gpu(const TitleGroup& g) {
  std::vector<std::string> gpus;
  std::map<std::string, size_t> latest;
  for (size_t i = 0; i < g.runs.size(); ++i) {
    const std::string gpu = gpu_of(g.runs[i]->run);
    if (!latest.count(gpu)) gpus.push_back(gpu);
    latest[gpu] = i;
  }
  std::vector<size_t> out;
  for (const auto& gpu : gpus) out.push_back(latest[gpu]);
  return out;
}

// [x, value, GB/s, % of peak, p20, p80, samples, error] of a point (values null when it failed).
json point_row(const StoredPoint& p) {
  const bool bad = failed(p);
  const Stats& s = p.result.stats;
  return json::array({p.point.x_value, bad ? json(nullptr) : num(p.value),
                      bad ? json(nullptr) : num(shown_value(p, Show::GBps)),
                      bad ? json(nullptr) : num(shown_value(p, Show::PctPeak)), num(s.p20), num(s.p80), s.count,
                      p.result.error});
}

// The lines of the latest runs: one per (provider, GPU), and each GPU's floor where it has a peak.
void latest_lines(const TitleGroup& g, const std::vector<size_t>& latest, json& data) {
  json gpus = json::array(), lines = json::array();
  for (size_t k = 0; k < latest.size(); ++k) {
    const RunInfo& run = g.runs[latest[k]]->run;
    std::map<int64_t, double> bytes;
    std::vector<std::string> order;
    std::map<std::string, json> by_provider;
    for (const StoredPoint* p : g.points[latest[k]]) {
      if (p->result.bytes > 0) bytes.emplace(p->point.x_value, p->result.bytes);
      auto [it, fresh] = by_provider.emplace(p->point.provider, json{{"provider", p->point.provider},
                                                                      {"label", p->point.label},
                                                                      {"gpu", k},
                                                                      {"points", json::array()}});
      if (fresh) order.push_back(p->point.provider);
      it->second["points"].push_back(point_row(*p));
    }
    for (const auto& prov : order) lines.push_back(by_provider[prov]);
    json floor = nullptr;
    if (run.env.peak_gbps > 0 && !bytes.empty()) {
      floor = json::array();
      for (const auto& [x, b] : bytes)
        floor.push_back({x, num(floor_value(b, run.env.peak_gbps, Show::Value)),
                         num(floor_value(b, run.env.peak_gbps, Show::GBps)),
                         num(floor_value(b, run.env.peak_gbps, Show::PctPeak))});
    }
    gpus.push_back({{"name", gpu_of(run)}, {"run", run_json(run)}, {"peak_gbps", num(run.env.peak_gbps)},
                    {"floor", floor}});
  }
  data["gpus"] = gpus;
  data["latest"] = lines;
}

// The history of each (x, provider, GPU) across the runs holding the title, with its steps.
void history_lines(const TitleGroup& g, const std::vector<HistorySeries>& series, const json& gpus, json& data) {
  json runs = json::array();
  std::map<int64_t, size_t> column;
  for (const SiteRun* r : g.runs) {
    column[r->run.id] = runs.size();
    runs.push_back({r->run.id, r->run.label, r->run.git_commit, r->run.started_at, gpu_of(r->run)});
  }
  std::map<std::string, size_t> gpu_index;
  for (size_t k = 0; k < gpus.size(); ++k) gpu_index[gpus[k]["name"].get<std::string>()] = k;
  json out = json::array();
  for (const auto& s : series) {
    json entries = json::array();
    for (const auto& e : s.entries) {
      const StoredPoint& p = e.point;
      const bool bad = failed(p);
      entries.push_back({column[e.run.id], bad ? json(nullptr) : num(p.value),
                         bad ? json(nullptr) : num(shown_value(p, Show::GBps)),
                         bad ? json(nullptr) : num(shown_value(p, Show::PctPeak)), num(e.level), e.step,
                         num(e.change), num(p.result.stats.p20), num(p.result.stats.p80), p.result.stats.count});
    }
    out.push_back({{"x", s.x}, {"provider", s.provider}, {"label", s.label},
                   {"gpu", gpu_index[s.gpu.empty() ? kUnknownGpu : s.gpu]}, {"regression", s.latest_regression()},
                   {"entries", entries}});
  }
  data["runs"] = runs;
  data["series"] = out;
}

// Which views the table's points allow: value always; GB/s where they have bytes; % where a
// run measured its peak.
json views_of(const TitleGroup& g) {
  bool gbps = false, pct = false;
  for (const auto& pts : g.points)
    for (const StoredPoint* p : pts) {
      gbps = gbps || p->result.gbps > 0;
      pct = pct || p->result.pct_peak > 0;
    }
  json v = json::array({"value"});
  if (gbps) v.push_back("gbps");
  if (pct) v.push_back("pct");
  return v;
}

// The markdown report of the latest runs on each GPU, this table alone.
std::string table_markdown(const TitleGroup& g, const std::vector<size_t>& latest) {
  std::vector<RunRecord> runs;
  for (size_t i : latest) {
    RunRecord rr{g.runs[i]->run, {}};
    for (const StoredPoint* p : g.points[i]) rr.points.push_back(*p);
    runs.push_back(std::move(rr));
  }
  return render_report(runs, Show::Value);
}

// The page of one table, its markdown file, and its line on the index.
struct TablePage {
  SitePage page;
  SiteFile markdown;
  json index_row;
};

TablePage table_page(const TitleGroup& g, const std::map<int64_t, RunInfo>& runs, const Catalog& c,
                     const SiteOptions& opt) {
  const std::vector<size_t> latest = latest_per_gpu(g);
  const StoredPoint& first = *g.points[latest.back()].front();
  const RunInfo& run = g.runs[latest.back()]->run;
  json data{{"kind", "table"}, {"title", g.title}, {"op", g.op}, {"section", first.section},
            {"x_name", first.point.x_name}, {"metric", point_metric(first)}, {"unit", first.result.unit},
            {"stat", run.stat.empty() ? "median" : run.stat}, {"threshold_pct", opt.threshold * 100},
            {"markdown", g.stem + ".md"}, {"providers", c.providers}, {"views", views_of(g)}};
  latest_lines(g, latest, data);
  std::vector<StoredPoint> pts;
  for (const auto& v : g.points)
    for (const StoredPoint* p : v) pts.push_back(*p);
  HistoryQuery q;
  q.title = g.title;
  q.threshold = opt.threshold;
  const std::vector<HistorySeries> series = build_history(std::move(pts), runs, q);
  history_lines(g, series, data["gpus"], data);
  size_t steps = 0, regressed = 0;
  for (const auto& s : series) {
    steps += s.steps();
    regressed += s.latest_regression() ? 1 : 0;
  }
  json gpus = json::array();
  for (const auto& gpu : data["gpus"]) gpus.push_back(gpu["name"]);
  json row{{"title", g.title}, {"page", "tables/" + g.stem + ".html"}, {"section", first.section},
           {"metric", data["metric"]}, {"x_name", first.point.x_name}, {"gpus", gpus}, {"runs", g.runs.size()},
           {"steps", steps}, {"regressed", regressed}};
  return {{"tables/" + g.stem + ".html", g.title, std::move(data)}, {"tables/" + g.stem + ".md", table_markdown(g, latest)},
          std::move(row)};
}

// Every table's page, made on two threads (the tables are independent), in the catalog's order.
std::vector<TablePage> table_pages(const Catalog& c, const std::map<int64_t, RunInfo>& runs, const SiteOptions& opt) {
  std::vector<TablePage> pages(c.titles.size());
  auto make = [&](size_t first) {
    for (size_t t = first; t < c.titles.size(); t += 2) pages[t] = table_page(c.titles[t], runs, c, opt);
  };
  std::future<void> odd = std::async(std::launch::async, make, 1);
  make(0);
  odd.get();  // rethrows what the other thread threw
  return pages;
}

// Title -> page, for the diff pages' links.
json table_links(const Catalog& c) {
  json links = json::object();
  for (const auto& g : c.titles) links[g.title] = "tables/" + g.stem + ".html";
  return links;
}

// The worst rows of a diff for the index: regressions, then the other changes, at most five.
json top_rows(const json& diff, const json& links) {
  json top = json::array();
  for (const char* want : {"SLOWER", "ERROR", "FASTER", "FIXED", "DEVICE"})
    for (const auto& p : diff["points"])
      if (p["verdict"] == want && top.size() < 5)
        top.push_back({{"title", p["title"]}, {"page", links.value(p["title"].get<std::string>(), "")},
                       {"x_name", p["x_name"]}, {"x", p["x"]}, {"provider", p["provider"]}, {"ratio", p["ratio"]},
                       {"verdict", p["verdict"]}});
  return top;
}

// Verdict counts over the summary's providers.
json verdict_counts(const json& diff) {
  json counts = json::object();
  for (const char* v : {"SLOWER", "ERROR", "DEVICE", "UNSURE", "FASTER", "SAME", "FIXED"}) counts[v] = 0;
  for (const auto& s : diff["summary"])
    if (s.contains("counts"))
      for (auto& [k, n] : s["counts"].items())
        if (n.is_number_integer()) counts[k] = counts.value(k, 0) + n.get<int64_t>();
  return counts;
}

// The runs of each (op, GPU) in time order, holding that op's points.
std::vector<std::pair<std::pair<std::string, std::string>, std::vector<const SiteRun*>>> runs_by_op_gpu(
    const SiteInput& in) {
  std::vector<std::pair<std::pair<std::string, std::string>, std::vector<const SiteRun*>>> out;
  std::map<std::pair<std::string, std::string>, size_t> index;
  for (const auto& r : in.runs) {
    std::set<std::string> ops;
    for (const auto& p : r.points) ops.insert(p.point.op);
    for (const auto& op : ops) {
      auto [it, fresh] = index.emplace(std::make_pair(op, gpu_of(r.run)), out.size());
      if (fresh) out.push_back({it->first, {}});
      out[it->second].second.push_back(&r);
    }
  }
  return out;
}

// The runs' points with their samples, each run read once for all its ops' verdicts.
class SampledRuns {
 public:
  RunRecord op_points(const SiteRun& r, const std::string& op) {
    auto it = read_.find(r.run.id);
    if (it == read_.end()) it = read_.emplace(r.run.id, points_with_samples(r)).first;
    RunRecord rr{r.run, {}};
    for (const auto& p : it->second)
      if (p.point.op == op) rr.points.push_back(p);
    return rr;
  }

 private:
  std::map<int64_t, std::vector<StoredPoint>> read_;
};

// Where and how a diff page of the site compares two runs of an op.
struct VerdictPage {
  std::string op, name, title, origin;  // name: the page's file name before its suffix
  DiffOptions diff;
};

// Two runs of an op judged as `opbench diff` judges them: a diff page and its index line.
json verdict_page(const VerdictPage& v, const SiteRun& base, const SiteRun& head, const json& links,
                  FileNames& names, SampledRuns& sampled, SiteContent& out) {
  json line{{"op", v.op}, {"gpu", gpu_of(head.run)}, {"base", run_json(base.run)}, {"head", run_json(head.run)}};
  try {
    json diff = json::parse(diff_json(diff_runs(sampled.op_points(base, v.op), sampled.op_points(head, v.op), v.diff)));
    const std::string page = "diffs/" + names.take(v.name) + ".html";
    line["page"] = page;
    line["counts"] = verdict_counts(diff);
    line["regressions"] = diff["regressions"];
    line["top"] = top_rows(diff, links);
    diff["kind"] = "diff";
    diff["origin"] = v.origin;
    diff["op"] = v.op;
    diff["links"] = links;
    out.pages.push_back({page, v.title, diff});
  } catch (const InputError& e) {
    line["error"] = e.what();
  }
  return line;
}

// Per op and GPU, the latest run against the one before it.
json latest_verdicts(const SiteInput& in, const json& links, const SiteOptions& opt, FileNames& names,
                     SampledRuns& sampled, SiteContent& out) {
  json lines = json::array();
  for (const auto& [key, runs] : runs_by_op_gpu(in)) {
    if (runs.size() < 2) continue;
    const std::string op = key.first.empty() ? "tables" : key.first, gpu = gpu_of(runs.back()->run);
    VerdictPage v{key.first, op + "-" + gpu, "opbench diff: " + op + " on " + gpu, "latest", {}};
    v.diff.threshold = opt.threshold;
    lines.push_back(verdict_page(v, *runs[runs.size() - 2], *runs.back(), links, names, sampled, out));
  }
  return lines;
}

// Per op on several GPU models, the latest run on its first GPU against the latest on each
// other, normalised to each run's measured peak (diff/normalize.hpp): which points use the
// other GPU worse.
json gpu_verdicts(const SiteInput& in, const json& links, const SiteOptions& opt, FileNames& names,
                  SampledRuns& sampled, SiteContent& out) {
  json lines = json::array();
  std::map<std::string, std::vector<const SiteRun*>> latest;  // op -> the latest run per GPU, GPUs in order met
  std::vector<std::string> ops;
  for (const auto& [key, runs] : runs_by_op_gpu(in)) {
    if (!latest.count(key.first)) ops.push_back(key.first);
    latest[key.first].push_back(runs.back());
  }
  for (const auto& op_key : ops) {
    const std::vector<const SiteRun*>& per_gpu = latest[op_key];
    const std::string op = op_key.empty() ? "tables" : op_key;
    for (size_t g = 1; g < per_gpu.size(); ++g) {
      const std::string from = gpu_of(per_gpu[0]->run), to = gpu_of(per_gpu[g]->run);
      VerdictPage v{op_key, op + "-" + from + "-to-" + to, "opbench diff: " + op + ", " + from + " -> " + to +
                    " at equal peaks", "gpus", {}};
      v.diff.threshold = opt.threshold;
      v.diff.normalize_peak = true;
      json line = verdict_page(v, *per_gpu[0], *per_gpu[g], links, names, sampled, out);
      line["base_gpu"] = from;
      lines.push_back(std::move(line));
    }
  }
  return lines;
}

// The pages of the diff and versus documents given, and their lines on the index.
json document_pages(const SiteInput& in, const json& links, FileNames& names, SiteContent& out) {
  json lines = json::array();
  for (const auto& doc : in.documents) {
    std::string name = fs::base_name(doc.path);
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0) name.resize(name.size() - 5);
    const std::string page = "diffs/" + names.take(name) + ".html";
    json data = doc.json;
    data["kind"] = "diff";
    data["origin"] = doc.kind;
    data["source"] = doc.path;
    data["links"] = links;
    json line{{"kind", doc.kind}, {"name", name}, {"page", page}, {"counts", verdict_counts(doc.json)},
              {"top", top_rows(doc.json, links)}};
    for (const char* f : {"run", "base", "head", "versus", "regressions", "slower"})
      if (doc.json.contains(f)) line[f] = doc.json[f];
    lines.push_back(line);
    out.pages.push_back({page, "opbench " + doc.kind + ": " + name, std::move(data)});
  }
  return lines;
}

// Per run: what the index lists of it, and its report (runs/ID.md, as `opbench report` writes it).
json runs_list(const SiteInput& in, SiteContent& out) {
  json runs = json::array();
  for (auto it = in.runs.rbegin(); it != in.runs.rend(); ++it) {
    const RunInfo& r = it->run;
    std::set<std::string> ops;
    for (const auto& p : it->points) ops.insert(p.point.op);
    const std::string report = "runs/" + std::to_string(r.id) + ".md";
    out.files.push_back({report, render_report({RunRecord{r, it->points}}, Show::Value)});
    json j = run_json(r);
    j["report"] = report;
    j["points"] = it->points.size();
    j["ops"] = ops;
    j["status"] = r.status;
    j["peak_gbps"] = num(r.env.peak_gbps);
    runs.push_back(j);
  }
  return runs;
}

json index_page(const SiteInput& in, const Catalog& c, json ops, json verdicts, json documents,
                const SiteOptions& opt, SiteContent& out) {
  std::set<std::string> gpus;
  size_t points = 0;
  for (const auto& r : in.runs) {
    gpus.insert(gpu_of(r.run));
    points += r.points.size();
  }
  return {{"kind", "index"}, {"generated_at", now_iso()}, {"threshold_pct", opt.threshold * 100},
          {"sources", in.sources},
          {"counts", {{"runs", in.runs.size()}, {"points", points}, {"gpus", gpus.size()}, {"ops", c.ops.size()},
                      {"tables", c.titles.size()}, {"documents", in.documents.size()}}},
          {"gpus", gpus}, {"providers", c.providers}, {"verdicts", std::move(verdicts)},
          {"documents", std::move(documents)}, {"ops", std::move(ops)}, {"runs", runs_list(in, out)}};
}

}  // namespace

SiteContent build_site_content(const SiteInput& in, const SiteOptions& opt) {
  if (in.runs.empty() && in.documents.empty())
    throw InputError("opbench site", "", "no run and no diff or versus document to show (the sources are empty)");
  SiteContent out;
  out.pages.push_back({"index.html", "opbench results", nullptr});
  FileNames table_names, diff_names;
  const Catalog c = catalog_of(in, table_names);
  std::map<int64_t, RunInfo> runs;  // what a history entry needs of its run (copied into every entry)
  for (const auto& r : in.runs) {
    RunInfo slim;
    slim.id = r.run.id;
    slim.label = r.run.label;
    slim.source = r.run.source;
    slim.git_commit = r.run.git_commit;
    slim.started_at = r.run.started_at;
    slim.env.gpu = r.run.env.gpu;
    runs.emplace(r.run.id, std::move(slim));
  }
  std::vector<TablePage> pages = table_pages(c, runs, opt);
  json ops = json::array();
  for (const auto& [op, titles] : c.ops) {
    json tables = json::array();
    for (size_t t : titles) tables.push_back(std::move(pages[t].index_row));
    ops.push_back({{"op", op}, {"tables", tables}});
  }
  for (auto& p : pages) {
    out.pages.push_back(std::move(p.page));
    out.files.push_back(std::move(p.markdown));
  }
  const json links = table_links(c);
  SampledRuns sampled;
  json verdicts = latest_verdicts(in, links, opt, diff_names, sampled, out);
  json across = gpu_verdicts(in, links, opt, diff_names, sampled, out);
  json documents = document_pages(in, links, diff_names, out);
  out.pages.front().data = index_page(in, c, std::move(ops), std::move(verdicts), std::move(documents), opt, out);
  out.pages.front().data["across"] = std::move(across);
  return out;
}

}  // namespace opbench

// opbench diff: matching, verdicts, summary, rendering. Torch-free.
#include "diff/diff.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "core/text.hpp"
#include "record/run_fields.hpp"
#include "report/provenance.hpp"

namespace opbench {

namespace {

using json = nlohmann::ordered_json;

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

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
  if (r.j.verdict == Verdict::Faster) return 4;
  if (r.j.verdict == Verdict::Same) return 5;
  return 6;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> parse_label_map(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    item = trim(item);
    if (item.empty()) continue;
    size_t eq = item.find('=');
    std::string a = eq == std::string::npos ? "" : trim(item.substr(0, eq));
    std::string b = eq == std::string::npos ? "" : trim(item.substr(eq + 1));
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
    if (sa == 4) return ra < rb;  // the biggest speedups first
    if (sa <= 3) return ra > rb;  // the worst first
    return false;
  });
  return v;
}

size_t DiffResult::count(Verdict v) const {
  return size_t(std::count_if(rows.begin(), rows.end(), [v](const DiffRow& r) { return r.j.verdict == v; }));
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

}  // namespace

DiffResult diff_runs(const ReportRun& base, const ReportRun& head, const DiffOptions& opt) {
  DiffResult d;
  d.base = base.run;
  d.head = head.run;
  d.opt = opt;
  d.warnings = comparability_warnings(base.run, head.run);
  d.peaks = base.run.env.peak_gbps > 0 && head.run.env.peak_gbps > 0;
  const std::string base_where = "run " + std::to_string(base.run.id);
  const std::string head_where = "run " + std::to_string(head.run.id);

  auto keep = [&](const StoredPoint& p) { return opt.metric.empty() || point_metric(p) == opt.metric; };
  std::vector<const StoredPoint*> bp, hp;
  std::set<std::string> base_metrics, head_metrics;
  for (const auto& p : base.points) {
    base_metrics.insert(point_metric(p));
    if (keep(p)) bp.push_back(&p);
  }
  for (const auto& p : head.points) {
    head_metrics.insert(point_metric(p));
    if (keep(p)) hp.push_back(&p);
  }
  if (base.points.empty()) throw InputError(base_where, "", "the base run holds no points");
  if (head.points.empty()) throw InputError(head_where, "", "the head run holds no points");
  if (bp.empty()) throw InputError(base_where, "--metric", "the base run holds no " + opt.metric + " points");
  if (hp.empty()) throw InputError(head_where, "--metric", "the head run holds no " + opt.metric + " points");

  // head points by (title, x)
  std::map<std::pair<std::string, int64_t>, std::vector<size_t>> at;
  for (size_t i = 0; i < hp.size(); ++i) at[{hp[i]->point.title, hp[i]->point.x_value}].push_back(i);
  std::vector<bool> used(hp.size(), false);

  for (const StoredPoint* b : bp) {
    const std::string* target = nullptr;
    for (const auto& [from, to] : opt.map)
      if (from == b->point.label || from == b->point.provider) target = &to;
    const StoredPoint* h = nullptr;
    auto it = at.find({b->point.title, b->point.x_value});
    if (it != at.end())
      for (size_t i : it->second) {
        if (used[i]) continue;
        const Point& hpnt = hp[i]->point;
        bool match = target ? (hpnt.provider == *target || hpnt.label == *target)
                            : hpnt.provider == b->point.provider;
        if (match) {
          used[i] = true;
          h = hp[i];
          break;
        }
      }
    if (!h) {
      d.only_base.push_back({b->point.title, b->point.x_value, b->point.provider, b->point.label});
      continue;
    }
    DiffRow r;
    r.title = b->point.title;
    r.section = h->section;
    r.x_name = b->point.x_name;
    r.x = b->point.x_value;
    r.base_provider = b->point.provider;
    r.base_label = b->point.label;
    r.head_provider = h->point.provider;
    r.head_label = h->point.label;
    const std::string mb = point_metric(*b), mh = point_metric(*h);
    if ((!mb.empty() && !mh.empty() && mb != mh) ||
        (!b->result.unit.empty() && !h->result.unit.empty() && b->result.unit != h->result.unit))
      throw InputError(base_where + " vs " + head_where, r.title,
                       "mismatched metrics at " + r.x_name + "=" + std::to_string(r.x) + " " +
                           r.provider() + ": base is " + (mb.empty() ? "?" : mb) + " (" + b->result.unit +
                           "), head is " + (mh.empty() ? "?" : mh) + " (" + h->result.unit + ")");
    r.metric = mb.empty() ? mh : mb;
    r.unit = b->result.unit.empty() ? h->result.unit : b->result.unit;
    r.base = b->value;
    r.head = h->value;
    r.base_error = b->result.error;
    r.head_error = h->result.error;
    r.j = judge(*b, *h, opt.threshold);
    r.base_throttled = b->state.known && b->state.throttled;
    r.head_throttled = h->state.known && h->state.throttled;
    r.pct_base = r.pct_head = r.pct_ratio = std::nan("");
    if (d.peaks) {
      r.pct_base = pct_of(*b, base.run);
      r.pct_head = pct_of(*h, head.run);
      if (r.pct_base > 0 && r.pct_head > 0) r.pct_ratio = r.pct_head / r.pct_base;
    }
    d.rows.push_back(std::move(r));
  }
  for (size_t i = 0; i < hp.size(); ++i)
    if (!used[i]) d.only_head.push_back({hp[i]->point.title, hp[i]->point.x_value, hp[i]->point.provider, hp[i]->point.label});

  if (const std::string t = throttle_warning(d.rows); !t.empty()) d.warnings.push_back(t);
  if (d.rows.empty()) {
    auto list = [](const std::set<std::string>& s) {
      std::string o;
      for (const auto& m : s) o += (o.empty() ? "" : ", ") + (m.empty() ? std::string("unknown") : m);
      return o;
    };
    std::set<std::string> base_titles, base_prov, head_prov;
    for (auto* p : bp) base_titles.insert(p->point.title), base_prov.insert(p->point.provider);
    size_t shared_titles = 0;
    for (auto* p : hp) {
      head_prov.insert(p->point.provider);
      shared_titles += base_titles.count(p->point.title) ? 1 : 0;
    }
    std::string why;
    if (list(base_metrics) != list(head_metrics) && opt.metric.empty())
      why = "mismatched metrics: the base run holds " + list(base_metrics) + " points, the head run " +
            list(head_metrics);
    else if (shared_titles)
      why = "the runs share titles but no provider (base: " + list(base_prov) + "; head: " +
            list(head_prov) + "); map labels with --map BASE=HEAD";
    else
      why = "the runs share no table title";
    throw InputError(base_where + " vs " + head_where, "", "nothing matched: " + why);
  }

  // Summary per provider pair.
  std::map<std::string, size_t> idx;
  std::map<std::string, std::pair<double, size_t>> logs, logs_pct;
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
    s.counts[r.j.verdict]++;
    if (r.j.regression) {
      s.regressions++;
      d.regressions++;
      if (r.j.verdict == Verdict::Slower && !(s.worst >= r.j.ratio)) s.worst = r.j.ratio;
    }
    if (r.j.verdict != Verdict::Error && r.j.verdict != Verdict::Fixed && r.j.ratio > 0 &&
        std::isfinite(r.j.ratio)) {
      logs[s.provider].first += std::log(r.j.ratio);
      logs[s.provider].second++;
    }
    if (r.pct_ratio > 0 && std::isfinite(r.pct_ratio)) {
      logs_pct[s.provider].first += std::log(r.pct_ratio);
      logs_pct[s.provider].second++;
    }
  }
  for (auto& s : d.summary) {
    auto l = logs[s.provider], lp = logs_pct[s.provider];
    s.geomean = l.second ? std::exp(l.first / double(l.second)) : std::nan("");
    s.geomean_pct = lp.second ? std::exp(lp.first / double(lp.second)) : std::nan("");
  }
  std::stable_sort(d.summary.begin(), d.summary.end(), [](const ProviderSummary& a, const ProviderSummary& b) {
    if (a.regressions != b.regressions) return a.regressions > b.regressions;
    double ga = std::isnan(a.geomean) ? 0 : a.geomean, gb = std::isnan(b.geomean) ? 0 : b.geomean;
    return ga > gb;
  });
  return d;
}

std::string diff_markdown(const DiffResult& d) {
  std::ostringstream o;
  const double tpct = d.opt.threshold * 100;
  // A diff of two runs, or (versus) one run's provider against the best of others: the same
  // document in other words, flagging SLOWER points only (a failing provider is an ERROR row).
  const bool vs = !d.opt.versus.empty();
  const std::string cmd = vs ? "versus" : "diff", sides = vs ? "sides" : "runs";
  const std::string ratio_w = vs ? "provider/against" : "head/base";
  const size_t flagged = vs ? d.count(Verdict::Slower) : d.regressions;
  const std::string flagged_w = vs ? "slower point" : "regression";
  auto flags = [&](const DiffRow& r) { return vs ? r.j.verdict == Verdict::Slower : r.j.regression; };
  o << "# opbench " << cmd << "\n\n";
  if (vs) {
    o << "- run: " << run_brief(d.head) << "\n";
    o << "- " << d.opt.versus << "\n";
  } else {
    o << "- base: " << run_brief(d.base) << "\n";
    o << "- head: " << run_brief(d.head) << "\n";
  }
  o << "- metric: " << (d.opt.metric.empty() ? "speed and memory" : d.opt.metric) << "; threshold "
    << num(tpct) << "%";
  if (!d.opt.map.empty() && !vs) {
    o << "; mapped:";
    for (const auto& [a, b] : d.opt.map) o << " " << a << "=" << b;
  }
  if (vs)
    o << "\n- compared " << d.rows.size() << " points; unmatched: " << d.only_head.size()
      << " without an against point, " << d.only_base.size() << " without a provider point\n\n";
  else
    o << "\n- matched " << d.rows.size() << " points; unmatched: " << d.only_base.size() << " in base, "
      << d.only_head.size() << " in head\n\n";
  for (const auto& w : d.warnings) o << "> **Warning:** " << w << ".\n\n";
  if (flagged)
    o << "**" << flagged << " " << flagged_w << (flagged == 1 ? "" : "s") << "** (SLOWER"
      << (vs ? " than the best against" : "") << " by more than " << num(tpct)
      << (vs ? "%, beyond the noise).\n\n" : "%, or newly failing).\n\n");
  else
    o << "No " << flagged_w << "s.\n\n";
  o << "A point is SLOWER / FASTER when " << ratio_w << " moves past the threshold and, where both " << sides
    << " kept samples, the change is clear (the 95% interval of the ratio of medians wholly beyond the "
       "threshold, or every sample of one side beyond every sample of the other) or, near the threshold, a "
       "Mann-Whitney U test (p < 0.05), that interval and a shift beyond the p20-p80 noise of both "
    << sides
    << " agree; and the medians of their timing rounds (each round on newly placed memory) do not disagree "
       "(rounds p, or every round beyond the other side's when too few to test; one round a side neither "
       "confirms nor vetoes); and, where both sides timed a control workload in each round (a CPU), the change "
       "holds against it too. UNSURE when it moved past the threshold without that; SAME within the threshold.\n\n";

  o << "## Summary\n\n| " << (vs ? "against -> provider" : "provider") << " | points | geomean " << ratio_w << " |";
  if (d.peaks) o << " geomean % of peak " << ratio_w << " |";
  o << " SLOWER | ERROR | UNSURE | FASTER | SAME | FIXED | worst |\n|---|---:|---:|";
  if (d.peaks) o << "---:|";
  o << "---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& s : d.summary) {
    auto c = [&](Verdict v) {
      auto it = s.counts.find(v);
      return it == s.counts.end() ? size_t(0) : it->second;
    };
    o << "| " << md_cell(s.provider) << " | " << s.points << " | " << num(s.geomean) << " |";
    if (d.peaks) o << " " << num(s.geomean_pct) << " |";
    o << " " << c(Verdict::Slower) << " | " << c(Verdict::Error) << " | " << c(Verdict::Unsure) << " | "
      << c(Verdict::Faster) << " | " << c(Verdict::Same) << " | " << c(Verdict::Fixed) << " | "
      << (std::isnan(s.worst) ? std::string("-") : pct_change(s.worst)) << " |\n";
  }

  auto table = [&](const std::vector<const DiffRow*>& rows) {
    if (vs) o << "| title | x | against -> provider | against | provider | " << ratio_w << " | change | verdict | p | rounds p |";
    else o << "| title | x | provider | base | head | head/base | change | verdict | p | rounds p |";
    if (d.peaks) o << (vs ? " % of peak against -> provider |" : " % of peak base -> head |");
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
  };
  auto sorted = d.by_severity();
  std::vector<const DiffRow*> regs;
  for (auto* r : sorted)
    if (flags(*r)) regs.push_back(r);
  if (!regs.empty()) {
    o << (vs ? "\n## Slower\n\n" : "\n## Regressions\n\n");
    table(regs);
  }
  // Every change (all but SAME), worst first; the SAME points are only counted, which keeps
  // the document small enough to post (the JSON output lists every point).
  std::vector<const DiffRow*> changed;
  for (auto* r : sorted)
    if (r->j.verdict != Verdict::Same) changed.push_back(r);
  o << "\n## Changes\n\n";
  if (changed.empty()) o << "None: every matched point is SAME.\n";
  else table(changed);
  if (changed.size() < sorted.size())
    o << "\n" << sorted.size() - changed.size() << " of " << sorted.size()
      << " points are SAME (not listed; `opbench " << cmd << " --format json` lists every point).\n";
  std::vector<const DiffRow*> drifted;
  for (auto* r : changed)
    if (!r->j.reason.empty()) drifted.push_back(r);
  if (!drifted.empty()) {
    o << "\nUNSURE against the control workload (timed in the same rounds, it moved as much as the point: "
         "the machine drifted):\n\n";
    for (const DiffRow* r : drifted)
      o << "- " << one_line(r->title) << " " << r->x_name << "=" << r->x << " " << one_line(r->provider()) << ": "
        << r->j.reason << "\n";
  }
  if (!d.only_base.empty() || !d.only_head.empty()) {
    o << "\n## Unmatched\n\n";
    auto list = [&](const char* heading, const std::vector<Unmatched>& v) {
      if (v.empty()) return;
      o << heading << " (" << v.size() << "):\n\n";
      const size_t shown = std::min<size_t>(v.size(), 50);
      for (size_t i = 0; i < shown; ++i)
        o << "- " << v[i].title << " x=" << v[i].x << " " << v[i].provider
          << (v[i].label.empty() || v[i].label == v[i].provider ? "" : " (" + v[i].label + ")") << "\n";
      if (shown < v.size()) o << "- ... and " << v.size() - shown << " more\n";
      o << "\n";
    };
    if (vs) {
      list("Without an against point", d.only_head);
      list("Without a provider point", d.only_base);
    } else {
      list("Only in base", d.only_base);
      list("Only in head", d.only_head);
    }
  }
  return o.str();
}

std::string diff_json(const DiffResult& d) {
  auto run = [](const RunInfo& r) {
    return json{{"id", r.id},           {"label", r.label},  {"gpu", r.env.gpu},
                {"source", r.source},   {"commit", r.git_commit}, {"started_at", r.started_at},
                {"peak_gbps", r.env.peak_gbps}, {"uuid", r.uuid}};
  };
  // versus (one run's provider against the best of others): the run once, SLOWER points counted
  const bool vs = !d.opt.versus.empty();
  json j;
  if (vs) {
    j["run"] = run(d.head);
    j["versus"] = d.opt.versus;
  } else {
    j["base"] = run(d.base);
    j["head"] = run(d.head);
  }
  j["metric"] = d.opt.metric.empty() ? "all" : d.opt.metric;
  j["warnings"] = d.warnings;
  j["threshold_pct"] = d.opt.threshold * 100;
  if (vs) j["slower"] = d.count(Verdict::Slower);
  else j["regressions"] = d.regressions;
  json pts = json::array();
  for (const auto& r : d.rows) {
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
           {"control_ratio", num_or_null(r.j.control_ratio)},
           {"control_drift", num_or_null(r.j.control_drift)},
           {"throttled", json::array({r.base_throttled, r.head_throttled})}};
    if (!r.j.reason.empty()) p["reason"] = r.j.reason;
    if (!r.base_error.empty()) p["base_error"] = r.base_error;
    if (!r.head_error.empty()) p["head_error"] = r.head_error;
    if (d.peaks) {
      p["pct_peak_base"] = num_or_null(r.pct_base);
      p["pct_peak_head"] = num_or_null(r.pct_head);
      p["pct_peak_ratio"] = num_or_null(r.pct_ratio);
    }
    pts.push_back(p);
  }
  j["points"] = pts;
  json sum = json::array();
  for (const auto& s : d.summary) {
    json counts = json::object();
    for (Verdict v : {Verdict::Slower, Verdict::Error, Verdict::Unsure, Verdict::Faster, Verdict::Same, Verdict::Fixed}) {
      auto it = s.counts.find(v);
      counts[verdict_name(v)] = it == s.counts.end() ? 0 : it->second;
    }
    json e{{"provider", s.provider}, {"points", s.points}, {"geomean_ratio", num_or_null(s.geomean)},
           {"counts", counts}};
    if (vs) e["slower"] = counts["SLOWER"];
    else e["regressions"] = s.regressions;
    e["worst_ratio"] = num_or_null(s.worst);
    if (d.peaks) e["geomean_pct_peak_ratio"] = num_or_null(s.geomean_pct);
    sum.push_back(e);
  }
  j["summary"] = sum;
  auto un = [](const std::vector<Unmatched>& v) {
    json a = json::array();
    for (const auto& u : v) a.push_back({{"title", u.title}, {"x", u.x}, {"provider", u.provider}, {"label", u.label}});
    return a;
  };
  if (vs) j["unmatched"] = {{"without_against", un(d.only_head)}, {"without_provider", un(d.only_base)}};
  else j["unmatched"] = {{"base", un(d.only_base)}, {"head", un(d.only_head)}};
  return j.dump(2) + "\n";
}

}  // namespace opbench

#include "sweep/runner.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <ostream>
#include <set>

#include "core/error.hpp"
#include "core/suggest.hpp"

namespace opbench {

void filter_providers(Sweep& sw, const Config& cfg, const std::vector<std::string>& names) {
  if (names.empty()) return;
  std::set<std::string> want;
  std::vector<std::string> listed_names;
  for (const auto& p : cfg.providers) listed_names.push_back(p.first);
  for (const auto& n : names) {
    bool listed = false;
    for (const auto& p : cfg.providers) listed = listed || p.first == n;
    if (!listed) throw InputError("--providers", n, "not a provider of " + cfg.path + suggest_names(n, listed_names));
    want.insert(n);
  }
  std::vector<Point> kept;
  for (auto& p : sw.points)
    if (want.count(p.provider)) kept.push_back(p);
  sw.points = std::move(kept);
}

void drop_unavailable(Sweep& sw, Executor& ex, std::ostream& log) {
  std::map<std::string, std::string> why;
  for (const auto& p : sw.points)
    if (!why.count(p.provider)) why[p.provider] = ex.unavailable(p.op, p.provider);
  std::vector<Point> kept;
  for (auto& p : sw.points)
    if (why[p.provider].empty()) kept.push_back(p);
  for (const auto& [prov, reason] : why)
    if (!reason.empty()) log << "skipping provider " << prov << ": " << reason << "\n";
  sw.points = std::move(kept);
}

Result pool_rounds(const std::vector<Result>& rounds) {
  if (rounds.empty()) return Result();
  for (const auto& r : rounds)
    if (!r.ok()) return r;
  Result out = rounds.front();
  out.samples.clear();
  out.rounds.clear();
  for (const auto& r : rounds) {
    out.samples.insert(out.samples.end(), r.samples.begin(), r.samples.end());
    if (rounds.size() > 1) out.rounds.push_back(int64_t(r.samples.size()));
    out.rel_err = std::max(out.rel_err, r.rel_err);
    out.check_failed = out.check_failed || r.check_failed;
  }
  out.stats = summarize(out.samples);
  // GB/s and % of peak go as 1 / median: rescaled from the first round's.
  const double m0 = rounds.front().stats.median, m = out.stats.median;
  if (m0 > 0 && m > 0) {
    out.gbps = rounds.front().gbps * m0 / m;
    out.pct_peak = rounds.front().pct_peak * m0 / m;
  }
  return out;
}

double shown_value(const Result& r, const std::string& stat) {
  if (!r.ok()) return -1;
  return r.stats.get(stat);
}

static std::string fmt_duration(double s) {
  char buf[32];
  if (s < 60) std::snprintf(buf, sizeof buf, "%.0fs", s);
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%dm%02ds", int(s) / 60, int(s) % 60);
  else std::snprintf(buf, sizeof buf, "%dh%02dm", int(s) / 3600, (int(s) % 3600) / 60);
  return buf;
}

SweepOutcome run_sweep(const Config& cfg, Sweep sw, Executor& ex, Store& store,
                       const SweepOptions& opt, std::ostream& log) {
  SweepOutcome out;
  std::map<std::string, std::string> section_of;
  for (const auto& t : sw.tables) section_of[t.title] = t.section;
  std::map<std::string, int64_t> seq_of;
  for (size_t i = 0; i < sw.points.size(); ++i) seq_of[sw.points[i].key()] = int64_t(i);

  RunInfo run;
  std::set<std::string> done;
  if (opt.resume) {
    auto r = store.run(opt.resume);
    if (!r) throw InputError("--resume", std::to_string(opt.resume), "no run with that id in " + store.path());
    if (r->config_hash != cfg.hash)
      throw InputError("--resume", std::to_string(opt.resume), "that run used another config (hash differs)");
    run = *r;
    for (const auto& k : store.done_keys(run.id)) done.insert(k);
    run.status = "running";
    store.update_run(run);
  } else {
    run.label = opt.label;
    run.host = opt.host;
    run.git_commit = opt.git_commit;
    run.config_path = cfg.path;
    run.config_text = cfg.text;
    run.config_hash = cfg.hash;
    run.op = cfg.op;
    run.stat = cfg.timing.stat;
    std::set<std::string> used;
    for (const auto& p : sw.points) used.insert(p.provider);
    for (const auto& [prov, label] : cfg.providers)
      if (used.count(prov)) run.notation.emplace_back(label, prov);
    run.env = ex.environment();
    store.begin_run(run);
  }
  if (opt.resume) {
    Environment env = ex.environment();
    if (env.gpu != run.env.gpu)
      log << "warning: resuming run " << run.id << " measured on '" << run.env.gpu << "' on '" << env.gpu << "'\n";
  }
  out.run_id = run.id;
  if (opt.before_measure) opt.before_measure(run.id);

  size_t total = sw.points.size();
  size_t todo = 0;
  for (const auto& p : sw.points) todo += done.count(p.key()) ? 0 : 1;
  auto t0 = std::chrono::steady_clock::now();
  size_t measured_now = 0;
  // One table cell at a time (its points are consecutive: one per provider). Speed points are
  // measured in rounds, the cell's providers in turn within each, so they share every round's
  // memory placement; each point is stored once all its rounds are in.
  for (size_t i = 0; i < sw.points.size();) {
    size_t j = i;
    while (j < sw.points.size() && sw.points[j].title == sw.points[i].title &&
           sw.points[j].x_value == sw.points[i].x_value)
      ++j;
    std::vector<size_t> cell;
    for (size_t k = i; k < j; ++k) {
      if (done.count(sw.points[k].key())) ++out.skipped;
      else cell.push_back(k);
    }
    i = j;
    if (cell.empty()) continue;
    if (opt.stop && opt.stop->load()) {
      out.interrupted = true;
      break;
    }
    const Point& head = sw.points[cell.front()];
    if (opt.progress) {
      double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::string eta = measured_now ? fmt_duration(el / double(measured_now) * double(todo - measured_now)) : "?";
      log << "\r\033[K[" << cell.back() + 1 << "/" << total << "] " << head.title << " " << head.x_name << "="
          << head.x_value << " (" << cell.size() << (cell.size() == 1 ? " provider" : " providers") << ")  ETA "
          << eta << std::flush;
    }
    const int rounds = head.metric() == "memory" ? 1 : std::max(1, cfg.timing.rounds);
    Timing per_round = cfg.timing;
    per_round.warmup_ms = cfg.timing.warmup_ms / rounds;
    per_round.rep_ms = cfg.timing.rep_ms / rounds;
    std::vector<std::vector<Result>> got(cell.size());
    // Round r starts with provider r mod k: every provider takes every place in the order
    // equally often (the first measure after new inputs was seen to run differently).
    for (int r = 0; r < rounds; ++r) {
      if (r > 0) ex.new_round();
      for (size_t q = 0; q < cell.size(); ++q) {
        const size_t c = (q + size_t(r)) % cell.size();
        got[c].push_back(ex.measure(sw.points[cell[c]], per_round));
      }
    }
    for (size_t c = 0; c < cell.size(); ++c) {
      const Point& p = sw.points[cell[c]];
      StoredPoint sp;
      sp.run_id = run.id;
      sp.seq = seq_of[p.key()];
      sp.section = section_of[p.title];
      sp.point = p;
      sp.stat = p.metric() == "memory" ? "max" : cfg.timing.stat;
      sp.result = pool_rounds(got[c]);
      sp.value = shown_value(sp.result, sp.stat);
      store.add_point(sp);
      ++out.measured;
      ++measured_now;
      if (!sp.result.ok()) {
        ++out.failed;
        if (opt.progress) log << "\n";
        log << "point failed: " << p.title << " " << p.x_name << "=" << p.x_value << " " << p.provider
            << ": " << sp.result.error << "\n";
      } else if (sp.result.check_failed) {
        ++out.check_failed;
        if (opt.progress) log << "\n";
        log << "check failed: " << p.title << " " << p.x_name << "=" << p.x_value << " " << p.provider
            << ": relative error " << sp.result.rel_err << " against torch\n";
      }
    }
  }
  if (opt.progress) log << "\r\033[K" << std::flush;
  store.finish_run(run.id, out.interrupted ? "interrupted" : "done");
  return out;
}

}  // namespace opbench

#include "torch/sweep/measure_configs.hpp"

#include <unistd.h>

#include <chrono>
#include <iostream>

#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/output.hpp"
#include "core/process_identity.hpp"
#include "report/report.hpp"
#include "sweep/outcome_lines.hpp"
#include "sweep/resume.hpp"
#include "sweep/runner.hpp"
#include "sweep/stop_signals.hpp"
#include "torch/sweep/prepare_tables.hpp"

namespace opbench {

namespace {

// What every run of the command shares: its request, its stops, the tree's commit, how it
// shows progress, and the reports of the runs finished so far.
struct Runs {
  const SweepRequest& request;
  SweepStops& stops;
  std::string commit;
  ProgressMode progress;
  std::string reports;
};

// The run loop's options for config `p`'s run.
SweepOptions loop_options(const Runs& c, const Prepared& p, const ConfigTables& tables, bool watch_hangs) {
  SweepOptions opt;
  opt.shape = p.options;
  opt.resume = p.resume;
  opt.allow_mixed = c.request.allow_mixed;
  opt.progress = c.progress;
  opt.host = host_name();
  opt.git_commit = c.commit;
  opt.interrupt = &interrupt_requested();
  opt.started = [&stops = c.stops](const RunInfo& run) { stops.began(run.id); };
  if (watch_hangs) opt.on_hung = [&stops = c.stops](int64_t run_id) { stops.hung(run_id); };
  for (size_t i = 0; i < tables.jobs.size(); ++i)
    opt.compiles.push_back({0, tables.jobs[i].task.title, tables.jobs[i].task.provider, tables.outcomes[i].key,
                            tables.outcomes[i].seconds, tables.outcomes[i].cached, tables.outcomes[i].error});
  return opt;
}

// A finished run's report: printed (unless --no-report), and with every report before it
// written to --out.
void report_run(Runs& c, const Store& store, int64_t run_id) {
  const SweepRequest::Reports& to = c.request.reports;
  if (!to.print && to.out.empty()) return;
  const std::string text = render_report({{*store.run(run_id), store.points(run_id)}});
  if (to.print) write_output(text, "");
  c.reports += (c.reports.empty() ? "" : "\n") + text;
  if (!to.out.empty()) write_output(c.reports, to.out);  // every finished run's report so far
}

// Measures one config's run on `measurer` and stores it; prints its outcome and report. The
// run's outcome.
SweepOutcome measure_config(Runs& c, Prepared& p, CellMeasurer& measurer, const ConfigTables& tables,
                            bool watch_hangs) {
  const std::string& db = c.request.db;
  fs::make_parent_dirs(db);
  Store store(db);
  const SweepOptions opt = loop_options(c, p, tables, watch_hangs);
  SweepOutcome r;
  try {
    r = run_sweep(p.cfg, p.sw, measurer, store, opt, std::cerr);
    c.stops.ended();
  } catch (const RuntimeFailure& e) {
    if (const int64_t id = c.stops.ended())
      std::cerr << "run " << id << " stopped: " << e.what() << "\ncontinue with `" << c.stops.continuation(store, id)
                << "`\n";
    throw;
  }
  if (!r.run_id) return r;
  print_outcome(r, db, std::cerr);
  if (r.interrupted) std::cerr << "interrupted: continue with `" << c.stops.continuation(store, r.run_id) << "`\n";
  else if (r.lost)  // the run is left interrupted: a resume measures the lost points again
    std::cerr << "run " << r.run_id << " is incomplete: continue with `" << c.stops.continuation(store, r.run_id)
              << "`\n";
  else report_run(c, store, r.run_id);
  return r;
}

// A stop after a run of the suite ended and before the next began: the command that sweeps the
// configs left; 130.
int stopped_between_runs(const SweepRequest& request, const std::vector<Prepared>& ps, size_t next) {
  std::vector<std::string> left;
  for (size_t i = next; i < ps.size(); ++i) left.push_back(ps[i].cfg.path);
  std::cerr << "interrupted before " << ps[next].cfg.path << ": continue with `"
            << sweep_command(left, request.shape, request.db) << "`\n";
  return 130;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int stopped_before_runs() {
  std::cerr << "interrupted before the run started: nothing stored\n";
  return 130;
}

int measure_configs(const SweepRequest& request, std::vector<Prepared>& ps, Where& where, SweepStops& stops,
                    const std::string& commit) {
  const auto t0 = std::chrono::steady_clock::now();
  Runs c{request, stops, commit, parse_progress(request.progress, isatty(STDERR_FILENO)), ""};
  const std::vector<ConfigTables> tables = prepare_tables(ps, where.table_devices(), c.progress);
  if (interrupt_requested().load()) return stopped_before_runs();
  std::vector<SweepOutcome> runs;
  for (size_t i = 0; i < ps.size(); ++i) {
    if (ps[i].sw.points.empty()) continue;
    if (interrupt_requested().load() && !stops.any_began()) return stopped_before_runs();
    if (interrupt_requested().load()) return stopped_between_runs(request, ps, i);
    const SweepOutcome r = measure_config(c, ps[i], where.measurer(i, ps[i].cfg), tables[i], where.watch_hangs());
    if (!r.run_id) return stopped_before_runs();
    runs.push_back(r);
    if (r.interrupted) return 130;
    if (r.lost) return kExitRuntime;  // a point's process ended twice: the run left for --resume
  }
  const std::vector<RunDevice> shares = where.shares();
  if (runs.size() > 1 || shares.size() > 1) print_summary(runs, shares, seconds_since(t0), std::cerr);
  return kExitOk;
}

}  // namespace opbench

// opbench sweep CONFIG: run every point of a config and store it; print the run's report.
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <set>
#include <unordered_map>

#include "cli/cli.hpp"
#include "cli/reexec.hpp"
#include "cli/stop_signals.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "measure/threads.hpp"
#include "measure/torch_executor.hpp"
#include "providers/table_jobs.hpp"
#include "report/report.hpp"
#include "sweep/plan.hpp"
#include "sweep/resume.hpp"
#include "sweep/runner.hpp"

namespace opbench {

namespace {

struct SweepArgs {
  std::string config, label, device, providers, out, filter, progress = "auto";
  bool dry_run = false, no_report = false;
  int64_t resume = 0;
  size_t max_points = kDefaultMaxPoints;
};

// The run being measured, for the signal thread (0 until it exists and after it ended).
std::atomic<int64_t> g_run{0};

std::string shell_line(const std::string& cmd) {
  std::string out;
  if (FILE* f = popen(cmd.c_str(), "r")) {
    char buf[256];
    while (fgets(buf, sizeof buf, f)) out += buf;
    pclose(f);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

// The commit of the source tree being measured (OPBENCH_GIT_COMMIT overrides, for a copy of
// the tree without .git), with "-dirty" when it has uncommitted changes.
std::string git_commit() {
  if (const char* c = std::getenv("OPBENCH_GIT_COMMIT")) return c;
  std::string dir = OPBENCH_SOURCE_DIR;
  std::string head = shell_line("git -C '" + dir + "' rev-parse HEAD 2>/dev/null");
  if (head.empty()) return "";
  std::string dirty = shell_line("git -C '" + dir + "' status --porcelain --untracked-files=no 2>/dev/null");
  return dirty.empty() ? head : head + "-dirty";
}

// A --resume: the run's stored shape (options given again must agree) and its stored points.
RunShape resumed_shape(const SweepArgs& a, const std::string& db, const RunShape& given, std::set<std::string>& done) {
  const std::string id = std::to_string(a.resume);
  if (!fs::is_regular_file(db)) throw InputError(db, "--db", "no such database (--resume " + id + " continues a run in it)");
  auto store = Store::open_read_only(db);
  auto run = store->run(a.resume);
  if (!run) throw InputError("--resume", id, "no run with that id in " + db);
  for (const auto& k : store->done_keys(run->id)) done.insert(k);
  return resume_shape(stored_shape(*store, *run), given, run->id);
}

// The mean export time of the packages this database's runs built, 0 when none did.
double typical_export_seconds(const std::string& db) {
  if (!fs::is_regular_file(db)) return 0;
  double sum = 0;
  size_t n = 0;
  try {
    auto store = Store::open_read_only(db);
    for (const auto& r : store->runs())
      for (const auto& c : store->compiles(r.id))
        if (!c.cached && c.error.empty() && c.seconds > 0) sum += c.seconds, ++n;
  } catch (const std::exception&) {
    return 0;
  }
  return n ? sum / double(n) : 0;
}

// The time a sweep should take: its points' timing budgets, and the providers' once-per-table
// work not done yet (compiled packages not in the cache: their mean export time in this
// database, else a minute each).
std::string estimate_line(const Config& cfg, const Sweep& sw, const std::vector<Cell>& cells,
                          const std::string& device, const std::string& db) {
  const double budget = timing_budget_seconds(sw, cells, cfg.timing);
  std::string text = "estimated time: ";
  size_t to_export = 0;
  std::string what;
  const auto jobs = table_jobs(sw, device);
  if (table_jobs_unavailable(jobs, device).empty())
    for (const auto& job : jobs) {
      try {
        if (!job.work->ready(job.task)) ++to_export, what = job.work->what();
      } catch (const std::exception&) {
        ++to_export;
      }
    }
  double each = typical_export_seconds(db);
  const bool measured = each > 0;
  if (!measured) each = 60;
  const int parallel = default_table_jobs();
  const double compile_s = std::ceil(double(to_export) / double(parallel)) * each;
  text += format_duration(budget + compile_s) + " (timing budgets " + format_duration(budget);
  if (to_export)
    text += "; " + std::to_string(to_export) + " " + (what.empty() ? "tables to prepare" : what) + " to make, " + format_duration(each) + " each " +
            (measured ? "as before in this database" : "assumed") + ", " + std::to_string(parallel) + " at a time";
  return text + "; calls slower than their budgets take longer)";
}

void print_dry_run(const Config& cfg, const Sweep& sw, const std::string& device, const std::set<std::string>& done,
                   const std::string& db) {
  const auto cells = plan_cells(sw, done);
  std::cout << cfg.path << ": " << cfg.op << " on " << device << ", " << sw.tables.size() << " tables, "
            << sw.points.size() << " points";
  if (!done.empty()) std::cout << " (" << done.size() << " already stored)";
  std::cout << "\n";
  std::unordered_map<std::string, size_t> per_table;
  for (const auto& p : sw.points) ++per_table[p.title];
  for (const auto& t : sw.tables)
    std::cout << "  [" << t.section << "] " << t.title << ": " << per_table[t.title] << " points\n";
  std::cout << estimate_line(cfg, sw, cells, device, db) << "\n";
}

// A second signal: the run is marked interrupted (by a connection of this thread's own), and
// the process exits (130, by install_stop_signals).
void stop_now(const std::string& db) {
  const int64_t id = g_run.load();
  if (!id) {
    std::cerr << "\nstopped\n" << std::flush;
    return;
  }
  try {
    Store store(db);
    if (!store.end_run(id, "interrupted", this_process())) {  // it had just ended
      std::cerr << "\nstopped\n" << std::flush;
      return;
    }
    const std::string cmd = resume_command(stored_shape(store, *store.run(id)), db, id);
    std::cerr << "\nstopped: run " << id << " interrupted; continue with `" << cmd << "`\n" << std::flush;
  } catch (const std::exception& e) {
    std::cerr << "\nstopped: run " << id << " not marked interrupted (" << e.what() << ")\n" << std::flush;
  }
}

// A call that never returned: its point is stored as failed; the run goes on in a new process
// (or, after a first signal, ends interrupted).
void on_hung(const std::string& db, int64_t run_id) {
  if (!stop_requested().load()) reexec_resuming(run_id);
  stop_now(db);
  _exit(130);
}

void print_outcome(const SweepOutcome& r, const std::string& db) {
  std::cerr << "run " << r.run_id << ": " << r.measured << " points measured";
  if (r.skipped) std::cerr << ", " << r.skipped << " already stored";
  if (r.failed) std::cerr << ", " << r.failed << " failed";
  if (r.check_failed) std::cerr << ", " << r.check_failed << " over the check's tolerance";
  std::cerr << " (" << db << ")\n";
}

void run_command(const SweepArgs& a, Cli& cli) {
  // From the start: a signal while the device opens and the bandwidth is measured stops the
  // sweep before it measures anything.
  check_out_path(a.out, cli.db);
  if (!a.dry_run) install_stop_signals([db = cli.db] { stop_now(db); });
  Config cfg = load_config(a.config);
  Sweep sw = expand(cfg, a.max_points);
  const ProgressMode progress = parse_progress(a.progress, isatty(STDERR_FILENO));
  const RunShape given{a.config, a.device, split_list(a.providers), a.label, a.filter};
  std::set<std::string> done;
  RunShape shape = a.resume ? resumed_shape(a, cli.db, given, done) : given;
  filter_providers(sw, cfg, shape.providers);
  filter_tables(sw, TitleFilter(shape.filter), cfg.path);
  const std::string device = shape.device.empty() ? default_device() : shape.device;
  cfg.timing.threads = pin_threads(cfg.timing.threads, device);  // before any LibTorch work
  TorchExecutor ex(device);
  const std::string no_flush = ex.device().flush_unsupported(cfg.timing.flush_l2);
  if (!no_flush.empty()) throw InputError(cfg.path, "timing.flush_l2", no_flush);
  const auto dropped = drop_unavailable(sw, ex, std::cerr);
  if (a.resume && !dropped.empty())
    throw InputError("--resume", std::to_string(a.resume),
                     "the run measures " + dropped.front() + ", which cannot run here (see above)");
  shape.device = canonical_device(device);
  shape.providers = sweep_providers(cfg, sw);

  if (a.dry_run) {
    print_dry_run(cfg, sw, device, done, cli.db);
    cli.status = kExitOk;
    return;
  }
  if (sw.points.empty()) throw InputError(cfg.path, "providers", "no provider can run here (see the lines above)");

  ensure_parent_dir(cli.db);
  Store store(cli.db);
  SweepOptions opt;
  opt.label = shape.label;
  opt.device = shape.device;
  opt.filter = shape.filter;
  opt.resume = a.resume;
  opt.progress = progress;
  opt.host = host_name();
  opt.git_commit = git_commit();
  opt.stop = &stop_requested();
  opt.started = [](const RunInfo& run) { g_run = run.id; };
  opt.on_hung = [db = cli.db](int64_t run_id) { on_hung(db, run_id); };
  // The providers' once-per-table work (compiled packages): done (or found cached) before any
  // point is timed, its times recorded with the run.
  auto jobs = table_jobs(sw, device);
  if (!jobs.empty()) {
    opt.before_measure = [&](int64_t run_id) {
      auto outcomes = run_table_jobs(jobs, default_table_jobs(), opt.progress, std::cerr);
      for (size_t i = 0; i < outcomes.size(); ++i)
        store.add_compile({run_id, jobs[i].task.title, jobs[i].task.provider, outcomes[i].key,
                           outcomes[i].seconds, outcomes[i].cached, outcomes[i].error});
    };
  }
  SweepOutcome r;
  try {
    r = run_sweep(cfg, sw, ex, store, opt, std::cerr);
    g_run = 0;
  } catch (const RuntimeFailure& e) {
    if (const int64_t id = g_run.exchange(0))
      std::cerr << "run " << id << " stopped: " << e.what() << "\ncontinue with `" << resume_command(shape, cli.db, id)
                << "`\n";
    throw;
  }
  if (!r.run_id) {
    std::cerr << "interrupted before the run started: nothing stored\n";
    cli.status = 130;
    return;
  }
  print_outcome(r, cli.db);
  if (r.interrupted) {
    std::cerr << "interrupted: continue with `" << resume_command(shape, cli.db, r.run_id) << "`\n";
    cli.status = 130;
    return;
  }
  if (!a.no_report || !a.out.empty()) {
    ReportRun rr{*store.run(r.run_id), store.points(r.run_id)};
    std::string text = render_report({rr});
    if (!a.no_report) write_output(text, "");
    if (!a.out.empty()) write_output(text, a.out);
  }
  cli.status = kExitOk;
}

}  // namespace

void add_sweep_command(CLI::App& app, Cli& cli) {
  auto a = std::make_shared<SweepArgs>();
  auto* cmd = app.add_subcommand("sweep", "run a sweep config, store every point, print its report");
  cmd->add_option("config", a->config, "the sweep config (.yaml, .yml or .json)")->required();
  cmd->add_option("--db", cli.db, "the SQLite database")->capture_default_str()->check(file_arg());
  cmd->add_option("--label", a->label, "a label for the run (select it later with label:TEXT)")->check(name_arg());
  cmd->add_option("--device", a->device, "cpu, cuda or cuda:N (default: cuda when present)");
  cmd->add_option("--providers", a->providers, "only these providers (comma-separated)");
  cmd->add_option("--filter", a->filter, "only tables whose title matches this regular expression");
  cmd->add_flag("--dry-run", a->dry_run, "list the tables and points and estimate the time; run and store nothing");
  cmd->add_option("--resume", a->resume,
                  "continue run RUN with its stored options (device, providers, label): skip its stored points")
      ->check(run_id_arg());
  cmd->add_option("--out", a->out, "also write the report to this file")->check(file_arg());
  cmd->add_option("--max-points", a->max_points, "refuse a config of more points than this")
      ->check(positive_count())
      ->capture_default_str();
  cmd->add_flag("--no-report", a->no_report, "do not print the report at the end");
  cmd->add_option("--progress", a->progress,
                  "auto (a bar on a terminal, else a line per table cell), bar, lines or none")
      ->check(CLI::IsMember({"auto", "bar", "lines", "none"}))
      ->capture_default_str();
  cmd->callback([a, &cli] { run_command(*a, cli); });
}

}  // namespace opbench

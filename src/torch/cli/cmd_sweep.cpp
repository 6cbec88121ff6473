// opbench sweep CONFIG...: run every point of each config and store it, one run per config, and
// print each run's report. Several configs (or a suite file listing them) are one suite,
// measured by this one process with one start-up, one bandwidth copy and one set of workers
// (sweep_where.hpp): on a GPU a worker process per device measures the cells (sweep_worker.cpp)
// and this process stores them; --shard measures one slice of each config's cells.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <set>
#include <unordered_map>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/placement.hpp"
#include "core/suggest.hpp"
#include "measure/stages.hpp"
#include "report/report.hpp"
#include "sweep/devices.hpp"
#include "sweep/plan.hpp"
#include "sweep/resume.hpp"
#include "sweep/runner.hpp"
#include "sweep/shard.hpp"
#include "torch/cli/reexec.hpp"
#include "torch/cli/stop_signals.hpp"
#include "torch/cli/sweep_configs.hpp"
#include "torch/cli/sweep_where.hpp"
#include "torch/cli/sweep_worker.hpp"
#include "torch/measure/device.hpp"
#include "torch/providers/table_jobs.hpp"

namespace opbench {

namespace {

struct SweepArgs {
  std::vector<std::string> configs;  // configs and suite files, as given
  std::string label, device, devices, providers, out, filter, shard, progress = "auto";
  bool dry_run = false, no_report = false, allow_mixed = false, worker = false;
  bool devices_given = false, shard_given = false;  // (an empty value is refused, not ignored)
  int64_t resume = 0;
  size_t max_points = kDefaultMaxPoints;
};

// The run being measured, for the signal thread (0 until it exists and after it ended).
std::atomic<int64_t> g_run{0};
// Whether a run of this command has started: a stop from then on ends a run interrupted, one
// before it ends the command with nothing stored.
std::atomic<bool> g_began{false};
// A suite: the command that sweeps it again (its configs and options as given); with
// --resume ID it continues from run ID on. Empty for one config.
std::mutex g_suite_mu;
std::string g_suite_command;

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

// A --resume: the run, its stored options and its stored points.
struct Resumed {
  RunInfo run;
  RunOptions stored;
  std::set<std::string> done;
};

Resumed resumed_run(const SweepArgs& a, const std::string& db) {
  const std::string id = std::to_string(a.resume);
  if (!fs::is_regular_file(db)) throw InputError(db, "--db", "no such database (--resume " + id + " continues a run in it)");
  auto store = Store::open_read_only(db);
  auto run = store->run(a.resume);
  if (!run) throw InputError("--resume", id, "no run with that id in " + db);
  Resumed r{*run, stored_options(*store, *run), {}};
  for (const auto& k : store->done_keys(run->id)) r.done.insert(k);
  return r;
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
// database, else a minute each); on several devices, the busiest one's share of the cells.
std::string estimate_line(const Config& cfg, const Sweep& sw, const std::vector<Cell>& cells,
                          const std::string& device, const std::string& db, size_t devices) {
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
  if (devices > 1) {
    const auto loads = slice_seconds(sw, cells, cfg.timing, int(devices));
    text += ", on " + std::to_string(devices) + " devices about " +
            format_duration(*std::max_element(loads.begin(), loads.end())) + " for the busiest (with " +
            format_duration(kPointSetupSeconds) + " a point added)";
  }
  if (to_export)
    text += "; " + std::to_string(to_export) + " " + (what.empty() ? "tables to prepare" : what) + " to make, " + format_duration(each) + " each " +
            (measured ? "as before in this database" : "assumed") + ", " + std::to_string(parallel) + " at a time";
  return text + "; calls slower than their budgets take longer)";
}

Shard shard_of(const RunOptions& options) { return options.shard.empty() ? Shard{} : parse_shard(options.shard); }

// Lists what the sweep (this shard of it) measures and estimates its time; writes nothing.
void print_dry_run(const Config& cfg, const Sweep& sw, const RunOptions& options, const std::string& device,
                   const std::set<std::string>& done, const std::string& db, size_t devices) {
  const Shard shard = shard_of(options);
  const Sweep part = only_cells(sw, shard_cells(sw, cfg.timing, shard));
  std::unordered_map<std::string, size_t> per_table;
  size_t stored = 0;
  for (const auto& p : part.points) ++per_table[p.title], stored += done.count(p.key());
  const std::string where = options.devices.empty() ? device : join_list(options.devices);
  std::cout << cfg.path << ": " << cfg.op << " on " << where << ", ";
  if (shard.on())
    std::cout << "shard " << shard.text() << ": " << per_table.size() << " of " << sw.tables.size() << " tables, "
              << part.points.size() << " of " << sw.points.size() << " points";
  else
    std::cout << sw.tables.size() << " tables, " << sw.points.size() << " points";
  if (stored) std::cout << " (" << stored << " already stored)";
  std::cout << "\n";
  for (const auto& t : sw.tables)
    if (!shard.on() || per_table.count(t.title))
      std::cout << "  [" << t.section << "] " << t.title << ": " << per_table[t.title] << " points\n";
  std::cout << estimate_line(cfg, part, plan_cells(part, done), device, db, devices) << "\n";
}

// A suite: the command that continues it from run `id` (its configs as given, from the one
// that run measures on). One config: "" (the run's own resume command says it).
std::string continue_command(int64_t id) {
  std::lock_guard<std::mutex> lock(g_suite_mu);
  return g_suite_command.empty() ? "" : g_suite_command + " --resume " + std::to_string(id);
}

// How to continue run `id` of this command.
std::string continuation(const Store& store, int64_t id, const std::string& db) {
  const std::string suite = continue_command(id);
  return suite.empty() ? resume_command(stored_options(store, *store.run(id)), db, id) : suite;
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
    std::cerr << "\nstopped: run " << id << " interrupted; continue with `" << continuation(store, id, db) << "`\n"
              << std::flush;
  } catch (const std::exception& e) {
    std::cerr << "\nstopped: run " << id << " not marked interrupted (" << e.what() << ")\n" << std::flush;
  }
}

// A call that never returned: its point is stored as failed; the run goes on in a new process
// (or, after a first signal, ends interrupted).
void on_hung(const std::string& db, int64_t run_id) {
  if (!interrupt_requested().load()) reexec_resuming(run_id);
  stop_now(db);
  _exit(130);
}

void print_outcome(const SweepOutcome& r, const std::string& db) {
  std::cerr << "run " << r.run_id << ": " << r.measured << " points measured";
  if (r.skipped) std::cerr << ", " << r.skipped << " already stored";
  if (r.failed) std::cerr << ", " << r.failed << " failed";
  if (r.lost) std::cerr << ", " << r.lost << " lost (their process ended while measuring them)";
  if (r.check_failed) std::cerr << ", " << r.check_failed << " over the check's tolerance";
  std::cerr << " (" << db << ")\n";
}

// The options as given: --devices parsed against the CUDA devices here (and refused beside
// --device), --shard parsed; no config.
RunOptions given_options(const SweepArgs& a) {
  RunOptions s{"", a.device, split_list(a.providers), a.label, a.filter, {}, ""};
  if (a.devices_given) {
    if (!a.device.empty())
      throw InputError("--devices", a.devices,
                       "cannot be given with --device (--devices D measures on D through a worker process)");
    for (const auto& slot : parse_devices(a.devices, cuda_device_count())) s.devices.push_back(slot.device);
  }
  if (a.shard_given) s.shard = parse_shard(a.shard).text();
  return s;
}

// A resumed run never loses a provider: one that cannot run here now is refused.
void refuse_dropped(int64_t resume, const std::vector<std::string>& dropped) {
  if (resume && !dropped.empty())
    throw InputError("--resume", std::to_string(resume),
                     "the run measures " + dropped.front() + ", which cannot run here (see above)");
}

// --- the configs of the command

// Which of `paths` a resumed run measured: the one of its path, else of its config's hash.
size_t resumed_index(const std::vector<std::string>& paths, const RunInfo& run, int64_t id) {
  if (paths.size() == 1) return 0;  // its config as given (the run checks the hash)
  for (size_t i = 0; i < paths.size(); ++i)
    if (paths[i] == run.config_path) return i;
  for (size_t i = 0; i < paths.size(); ++i)
    if (load_config(paths[i]).hash == run.config_hash) return i;
  throw InputError("--resume", std::to_string(id), "run " + std::to_string(id) + " measured " + run.config_path +
                                                       ", which this command does not name");
}

// Each config named (from the resumed run's on, with its stored options), loaded and expanded.
std::vector<Prepared> load_configs(const SweepArgs& a, const std::string& db) {
  std::vector<std::string> paths = command_configs(a.configs);
  const bool suite = paths.size() > 1;
  const RunOptions given = given_options(a);
  Resumed resumed;
  if (a.resume) {
    resumed = resumed_run(a, db);
    paths.erase(paths.begin(), paths.begin() + long(resumed_index(paths, resumed.run, a.resume)));
    RunOptions g = given;
    g.config = suite ? "" : paths.front();
    resumed.stored = resume_options(resumed.stored, g, a.resume, suite);
  }
  std::vector<Prepared> ps;
  for (size_t i = 0; i < paths.size(); ++i) {
    Prepared p;
    p.cfg = load_config(paths[i]);
    p.sw = expand(p.cfg, a.max_points);
    p.options = given;
    p.options.config = paths[i];
    if (i == 0 && a.resume) p.options = resumed.stored, p.done = resumed.done, p.resume = a.resume;
    ps.push_back(std::move(p));
  }
  return ps;
}

// --- the providers' once-per-table work, for every config before the first run

// One config's table jobs and their outcomes.
struct ConfigTables {
  std::vector<TableJob> jobs;
  std::vector<TableOutcome> outcomes;
};

// The compiled packages every config needs (its shard's tables, on each device of a model),
// built together: in parallel, outside every timed region, before any run starts.
std::vector<ConfigTables> prepare_tables(const std::vector<Prepared>& ps, const std::vector<std::string>& devices,
                                      ProgressMode progress) {
  std::vector<ConfigTables> out(ps.size());
  std::vector<TableJob> all;
  for (size_t i = 0; i < ps.size(); ++i) {
    const Prepared& p = ps[i];
    const Sweep part = only_cells(p.sw, shard_cells(p.sw, p.cfg.timing, shard_of(p.options)));
    for (const auto& device : devices)
      for (auto& job : table_jobs(part, device)) out[i].jobs.push_back(job);
    all.insert(all.end(), out[i].jobs.begin(), out[i].jobs.end());
  }
  if (all.empty()) return out;
  StageScope loading(Stage::packages);  // charged to the first run's accounts
  const std::vector<TableOutcome> got = run_table_jobs(all, default_table_jobs(), progress, std::cerr);
  size_t k = 0;
  for (auto& w : out)
    for (size_t j = 0; j < w.jobs.size(); ++j) w.outcomes.push_back(got[k++]);
  return out;
}

// --- one run per config

// Measures one config's run on `measurer` and stores it; prints its outcome and report (and
// appends the report to `reports`). The run's outcome.
SweepOutcome measure_config(const SweepArgs& a, Cli& cli, Prepared& p, CellMeasurer& measurer, const ConfigTables& tables,
                            bool watch_hangs, ProgressMode progress, const std::string& commit, std::string& reports) {
  ensure_parent_dir(cli.db);
  Store store(cli.db);
  SweepOptions opt;
  opt.label = p.options.label;
  opt.device = p.options.device;
  opt.devices = p.options.devices;
  opt.filter = p.options.filter;
  opt.shard = shard_of(p.options);
  opt.resume = p.resume;
  opt.allow_mixed = a.allow_mixed;
  opt.progress = progress;
  opt.host = host_name();
  opt.git_commit = commit;
  opt.interrupt = &interrupt_requested();
  opt.started = [](const RunInfo& run) { g_run = run.id, g_began = true; };
  if (watch_hangs) opt.on_hung = [db = cli.db](int64_t run_id) { on_hung(db, run_id); };
  opt.before_measure = [&](int64_t run_id) {
    for (size_t i = 0; i < tables.jobs.size(); ++i)
      store.add_compile({run_id, tables.jobs[i].task.title, tables.jobs[i].task.provider, tables.outcomes[i].key,
                         tables.outcomes[i].seconds, tables.outcomes[i].cached, tables.outcomes[i].error});
  };
  SweepOutcome r;
  try {
    r = run_sweep(p.cfg, p.sw, measurer, store, opt, std::cerr);
    g_run = 0;
  } catch (const RuntimeFailure& e) {
    if (const int64_t id = g_run.exchange(0))
      std::cerr << "run " << id << " stopped: " << e.what() << "\ncontinue with `" << continuation(store, id, cli.db)
                << "`\n";
    throw;
  }
  if (!r.run_id) return r;
  print_outcome(r, cli.db);
  if (r.interrupted) {
    std::cerr << "interrupted: continue with `" << continuation(store, r.run_id, cli.db) << "`\n";
    return r;
  }
  if (r.lost) {  // the run is left interrupted: a resume measures the lost points again
    std::cerr << "run " << r.run_id << " is incomplete: continue with `" << continuation(store, r.run_id, cli.db)
              << "`\n";
    return r;
  }
  if (!a.no_report || !a.out.empty()) {
    const std::string text = render_report({{*store.run(r.run_id), store.points(r.run_id)}});
    if (!a.no_report) write_output(text, "");
    reports += (reports.empty() ? "" : "\n") + text;
    if (!a.out.empty()) write_output(reports, a.out);  // every finished run's report so far
  }
  return r;
}

// Each device's share over the command and the runs it made (a suite, or several devices).
void print_summary(const std::vector<SweepOutcome>& runs, const std::vector<RunDevice>& shares, double seconds) {
  size_t measured = 0, failed = 0;
  std::string ids;
  for (const auto& r : runs) measured += r.measured, failed += r.failed, ids += (ids.empty() ? "" : ", ") + std::to_string(r.run_id);
  std::cerr << runs.size() << (runs.size() == 1 ? " run (" : " runs (") << ids << "): " << measured
            << " points measured" << (failed ? ", " + std::to_string(failed) + " failed" : "") << " in "
            << format_duration(seconds) << "\n";
  for (const auto& d : shares) {
    char busy[32];
    std::snprintf(busy, sizeof busy, "%.1f s", d.busy_s);
    const std::string where = placement_text(d.cpus, d.memory, int(d.threads), d.pinned);
    std::cerr << "  " << d.device << ": " << d.cells << " cells, " << d.points << " points, " << busy << " busy"
              << (where.empty() ? "" : "; " + where) << "\n";
  }
}

// "interrupted before the run started": a stop that came before anything was stored.
void stopped_before_runs(Cli& cli) {
  std::cerr << "interrupted before the run started: nothing stored\n";
  cli.status = 130;
}

// A stop after a run of the suite ended and before the next began: the command that sweeps the
// configs left.
void stopped_between_runs(Cli& cli, const SweepArgs& a, const std::vector<Prepared>& ps, size_t next) {
  std::vector<std::string> left;
  for (size_t i = next; i < ps.size(); ++i) left.push_back(ps[i].cfg.path);
  std::cerr << "interrupted before " << ps[next].cfg.path << ": continue with `"
            << sweep_command(left, given_options(a), cli.db) << "`\n";
  cli.status = 130;
}

// Lists what each config measures and its estimated time; writes nothing.
void dry_run(const std::vector<Prepared>& ps, const std::string& db, const std::string& device, size_t devices) {
  for (const auto& p : ps) print_dry_run(p.cfg, p.sw, p.options, device, p.done, db, devices);
}

// Drops what cannot run here from every config; a config of a suite left with nothing is
// skipped (a line; its index stays, as the workers know it), one alone is an input error.
void drop_unavailable_everywhere(std::vector<Prepared>& ps, Where& m, bool suite) {
  for (size_t i = 0; i < ps.size(); ++i) {
    Prepared& p = ps[i];
    refuse_dropped(p.resume, m.drop_unavailable(i, p.sw, std::cerr));
    if (p.options.devices.empty())
      p.options.device = canonical_device(p.options.device.empty() ? default_device() : p.options.device);
    p.options.providers = sweep_providers(p.cfg, p.sw);
    if (!p.sw.points.empty()) continue;
    if (!suite) throw InputError(p.cfg.path, "providers", "no provider can run here (see the lines above)");
    std::cerr << "skipping " << p.cfg.path << ": no provider of it can run here\n";
  }
}

// Measures each config's run in turn (one process, one measurer; `commit` the tree's, for every
// run); stops at the first run interrupted (exit 130) or failed (the failure goes on up).
void measure_configs(const SweepArgs& a, Cli& cli, std::vector<Prepared>& ps, Where& m, ProgressMode progress,
                     const std::string& commit) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<ConfigTables> tables = prepare_tables(ps, m.table_devices(), progress);
  if (interrupt_requested().load()) return stopped_before_runs(cli);
  std::vector<SweepOutcome> runs;
  std::string reports;
  for (size_t i = 0; i < ps.size(); ++i) {
    if (ps[i].sw.points.empty()) continue;
    if (interrupt_requested().load() && !g_began.load()) return stopped_before_runs(cli);
    if (interrupt_requested().load()) return stopped_between_runs(cli, a, ps, i);
    const SweepOutcome r =
        measure_config(a, cli, ps[i], m.measurer(i, ps[i].cfg), tables[i], m.watch_hangs(), progress, commit, reports);
    if (!r.run_id) return stopped_before_runs(cli);
    runs.push_back(r);
    if (r.interrupted) {
      cli.status = 130;
      return;
    }
    if (r.lost) {  // a point's process ended twice: exit 3, the run left for --resume
      cli.status = kExitRuntime;
      return;
    }
  }
  const std::vector<RunDevice> shares = m.shares();
  if (runs.size() > 1 || shares.size() > 1)
    print_summary(runs, shares, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  cli.status = kExitOk;
}

void sweep_command_line(const SweepArgs& a, Cli& cli) {
  const bool suite = command_configs(a.configs).size() > 1;
  std::vector<Prepared> ps = load_configs(a, cli.db);
  if (suite) filter_suite(ps, a.resume ? 1 : 0, std::cerr);
  else filter_config(ps.front());
  if (suite) {
    std::lock_guard<std::mutex> lock(g_suite_mu);
    g_suite_command = sweep_command(a.configs, given_options(a), cli.db);
  }
  const RunOptions& options = ps.front().options;
  // The tree's commit, read once (git runs as a child process) and before any worker starts.
  const std::string commit = a.dry_run ? "" : git_commit();
  WhereArgs where{options.devices, options.device, a.max_points, a.allow_mixed, a.dry_run};
  const std::unique_ptr<Where> m = open_where(ps, where);
  if (!m->start(ps)) return stopped_before_runs(cli);
  drop_unavailable_everywhere(ps, *m, suite);
  if (a.dry_run) {
    const std::string device = options.devices.empty() ? options.device : options.devices.front();
    dry_run(ps, cli.db, device.empty() ? default_device() : device, std::max<size_t>(1, options.devices.size()));
    cli.status = kExitOk;
    return;
  }
  measure_configs(a, cli, ps, *m, parse_progress(a.progress, isatty(STDERR_FILENO)), commit);
}

void run_command(const SweepArgs& a, Cli& cli) {
  if (a.worker) {
    cli.status = run_sweep_worker({a.configs, a.device, a.max_points, split_list(a.providers)});
    return;
  }
  // From the start: a signal while the device opens and the bandwidth is measured stops the
  // sweep before it measures anything (exit 130, whatever that signal broke on its way).
  check_db_path(cli.db, !a.dry_run);
  check_out_path(a.out, cli.db);
  if (!a.dry_run) install_stop_signals([db = cli.db] { stop_now(db); });
  try {
    sweep_command_line(a, cli);
  } catch (const std::exception&) {
    if (!interrupt_requested().load() || g_began.load()) throw;
    stopped_before_runs(cli);
  }
}
}  // namespace

void add_sweep_command(CLI::App& app, Cli& cli) {
  auto a = std::make_shared<SweepArgs>();
  auto* cmd = app.add_subcommand("sweep", kSweepHelp);
  cmd->add_option("config", a->configs,
                  "sweep configs (.yaml, .yml or .json), or suite files listing them: one run per config, all "
                  "measured by this command")
      ->required();
  cmd->add_option("--db", cli.db, "the SQLite database")->capture_default_str()->check(db_arg());
  cmd->add_option("--label", a->label, "a label for the run (select it later with label:TEXT)")->check(name_arg());
  cmd->add_option("--device", a->device, "cpu, cuda or cuda:N (default: cuda when present)");
  auto* devices = cmd->add_option("--devices", a->devices,
                                  "measure on these devices, a worker process each (cuda:0,cuda:1,...; all: every "
                                  "CUDA device here)");
  cmd->add_flag("--allow-mixed", a->allow_mixed,
                "with --devices: measure on GPUs of different models in one run; with --resume: continue a run "
                "measured on another GPU model or host");
  auto* shard = cmd->add_option("--shard", a->shard,
                                "measure only the i-th of N slices of the table cells (i/N), the same on every host; "
                                "join the shards' runs with `opbench merge --join-shards`");
  cmd->add_flag("--worker", a->worker, "(internal) measure the cells a parent sweep sends")->group("");
  cmd->add_option("--providers", a->providers, "only these providers (comma-separated)");
  cmd->add_option("--filter", a->filter, "only tables whose title matches this regular expression");
  cmd->add_flag("--dry-run", a->dry_run, "list the tables and points and estimate the time; run and store nothing");
  cmd->add_option("--resume", a->resume,
                  "continue run RUN with its stored options (device, providers, label): skip its stored points; "
                  "with several configs, the suite from RUN's config on")
      ->check(run_id_arg());
  cmd->add_option("--out", a->out, "also write the report (every run's, one after another) to this file")
      ->check(file_arg());
  cmd->add_option("--max-points", a->max_points, "refuse a config of more points than this")
      ->check(positive_count())
      ->capture_default_str();
  cmd->add_flag("--no-report", a->no_report, "do not print the report at the end");
  add_cache_option(cmd);
  cmd->add_option("--progress", a->progress,
                  "auto (a bar on a terminal, else a line per table cell), bar, lines or none")
      ->check(CLI::IsMember({"auto", "bar", "lines", "none"}))
      ->capture_default_str();
  cmd->callback([a, devices, shard, &cli] {
    a->devices_given = devices->count() > 0;
    a->shard_given = shard->count() > 0;
    run_command(*a, cli);
  });
}

}  // namespace opbench

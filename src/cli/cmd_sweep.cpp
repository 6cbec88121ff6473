// opbench sweep CONFIG: run every point of a config and store it; print the run's report. On
// several devices (--devices) a worker process per device measures the cells
// (sweep_worker.cpp) and this process stores them; --shard measures one slice of the cells.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <set>
#include <unordered_map>

#include "cli/cli.hpp"
#include "cli/reexec.hpp"
#include "cli/stop_signals.hpp"
#include "cli/sweep_worker.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "measure/device.hpp"
#include "measure/threads.hpp"
#include "measure/torch_executor.hpp"
#include "providers/table_jobs.hpp"
#include "report/report.hpp"
#include "sweep/plan.hpp"
#include "sweep/resume.hpp"
#include "sweep/round_processes.hpp"
#include "sweep/devices.hpp"
#include "sweep/runner.hpp"
#include "sweep/shard.hpp"
#include "sweep/workers.hpp"

namespace opbench {

namespace {

struct SweepArgs {
  std::string config, label, device, devices, providers, out, filter, shard, progress = "auto";
  bool dry_run = false, no_report = false, allow_mixed = false, worker = false;
  bool devices_given = false, shard_given = false;  // (an empty value is refused, not ignored)
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

Shard shard_of(const RunShape& shape) { return shape.shard.empty() ? Shard{} : parse_shard(shape.shard); }

// Lists what the sweep (this shard of it) measures and estimates its time; writes nothing.
void print_dry_run(const Config& cfg, const Sweep& sw, const RunShape& shape, const std::string& device,
                   const std::set<std::string>& done, const std::string& db, size_t devices) {
  const Shard shard = shard_of(shape);
  const Sweep part = only_cells(sw, shard_cells(sw, cfg.timing, shard));
  std::unordered_map<std::string, size_t> per_table;
  size_t stored = 0;
  for (const auto& p : part.points) ++per_table[p.title], stored += done.count(p.key());
  const std::string where = shape.devices.empty() ? device : join_list(shape.devices);
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
  if (r.lost) std::cerr << ", " << r.lost << " lost (their process ended while measuring them)";
  if (r.check_failed) std::cerr << ", " << r.check_failed << " over the check's tolerance";
  std::cerr << " (" << db << ")\n";
}

// The options as given: --devices parsed against the CUDA devices here (and refused beside
// --device), --shard parsed.
RunShape given_shape(const SweepArgs& a) {
  RunShape s{a.config, a.device, split_list(a.providers), a.label, a.filter, {}, ""};
  if (a.devices_given) {
    if (!a.device.empty())
      throw InputError("--devices", a.devices,
                       "cannot be given with --device (--devices D measures on D through a worker process)");
    for (const auto& slot : parse_devices(a.devices, cuda_device_count())) s.devices.push_back(slot.device);
  }
  if (a.shard_given) s.shard = parse_shard(a.shard).text();
  return s;
}

// A sweep as far as the command shapes it: config, points, options (stored ones on --resume).
struct Prepared {
  Config cfg;
  Sweep sw;
  RunShape shape;
  std::set<std::string> done;  // the keys of the points a resumed run stores already
  ProgressMode progress = ProgressMode::none;
};

// A resumed run never loses a provider: one that cannot run here now is refused.
void refuse_dropped(const SweepArgs& a, const std::vector<std::string>& dropped) {
  if (a.resume && !dropped.empty())
    throw InputError("--resume", std::to_string(a.resume),
                     "the run measures " + dropped.front() + ", which cannot run here (see above)");
}

// Stores and reports a sweep whose cells `measurer` measures; `table_devices`: the devices the
// providers' once-per-table work is done for (one per GPU model).
void measure_and_report(const SweepArgs& a, Cli& cli, Prepared& p, CellMeasurer& measurer,
                        const std::vector<std::string>& table_devices, bool watch_hangs) {
  const Config& cfg = p.cfg;
  const Sweep& sw = p.sw;
  if (sw.points.empty()) throw InputError(cfg.path, "providers", "no provider can run here (see the lines above)");
  ensure_parent_dir(cli.db);
  Store store(cli.db);
  SweepOptions opt;
  opt.label = p.shape.label;
  opt.device = p.shape.device;
  opt.devices = p.shape.devices;
  opt.filter = p.shape.filter;
  opt.shard = shard_of(p.shape);
  opt.resume = a.resume;
  opt.allow_mixed = a.allow_mixed;
  opt.progress = p.progress;
  opt.host = host_name();
  opt.git_commit = git_commit();
  opt.stop = &stop_requested();
  opt.started = [](const RunInfo& run) { g_run = run.id; };
  if (watch_hangs) opt.on_hung = [db = cli.db](int64_t run_id) { on_hung(db, run_id); };
  // The providers' once-per-table work (compiled packages) for this shard's tables: done (or
  // found cached) before any point is timed, its times recorded with the run.
  const Sweep part = only_cells(sw, shard_cells(sw, cfg.timing, opt.shard));
  std::vector<TableJob> jobs;
  for (const auto& device : table_devices)
    for (auto& job : table_jobs(part, device)) jobs.push_back(job);
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
    r = run_sweep(cfg, sw, measurer, store, opt, std::cerr);
    g_run = 0;
  } catch (const RuntimeFailure& e) {
    if (const int64_t id = g_run.exchange(0))
      std::cerr << "run " << id << " stopped: " << e.what() << "\ncontinue with `"
                << resume_command(p.shape, cli.db, id) << "`\n";
    throw;
  }
  if (!r.run_id) {
    std::cerr << "interrupted before the run started: nothing stored\n";
    cli.status = 130;
    return;
  }
  print_outcome(r, cli.db);
  if (r.interrupted) {
    std::cerr << "interrupted: continue with `" << resume_command(p.shape, cli.db, r.run_id) << "`\n";
    cli.status = 130;
    return;
  }
  if (r.lost) {  // the run is left interrupted: a resume measures the lost points again
    std::cerr << "run " << r.run_id << " is incomplete: continue with `" << resume_command(p.shape, cli.db, r.run_id)
              << "`\n";
    cli.status = kExitRuntime;
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

// The command line of a worker: this opbench, `sweep CONFIG --worker --device D`.
std::vector<std::string> worker_command(const std::string& config, const std::string& device, size_t max_points) {
  return {"/proc/self/exe", "sweep", config, "--worker", "--device", device, "--max-points", std::to_string(max_points)};
}

// One device, measured in this process (its rounds spread over timing.processes processes).
void sweep_on_one_device(const SweepArgs& a, Cli& cli, Prepared& p) {
  const std::string device = p.shape.device.empty() ? default_device() : p.shape.device;
  const std::unique_ptr<TorchExecutor> ex = open_executor(p.cfg, device);
  refuse_dropped(a, drop_unavailable(p.sw, *ex, std::cerr));
  p.shape.device = canonical_device(device);
  p.shape.providers = sweep_providers(p.cfg, p.sw);
  if (a.dry_run) {
    print_dry_run(p.cfg, p.sw, p.shape, device, p.done, cli.db, 1);
    cli.status = kExitOk;
    return;
  }
  std::unique_ptr<RoundProcesses> spread;
  if (p.cfg.timing.processes > 1) {
    RoundProcessOptions o;
    o.processes = p.cfg.timing.processes;
    o.command = worker_command(p.cfg.path, p.shape.device, a.max_points);
    o.env = {worker_parent_env()};
    o.config_hash = p.cfg.hash;
    o.op = p.cfg.op;
    spread = std::make_unique<RoundProcesses>(*ex, o);
  }
  LocalMeasurer local(spread ? static_cast<Executor&>(*spread) : *ex, p.shape.device, p.cfg.timing);
  measure_and_report(a, cli, p, local, {device}, true);
}

PoolOptions pool_options(const SweepArgs& a, const Prepared& p, const std::vector<WorkerSlot>& slots) {
  PoolOptions o;
  o.slots = slots;
  const std::string config = p.cfg.path;
  const size_t max_points = a.max_points;
  o.command = [config, max_points](const WorkerSlot& slot) { return worker_command(config, slot.device, max_points); };
  o.env = {worker_parent_env()};
  o.config_hash = p.cfg.hash;
  o.allow_mixed = a.allow_mixed;
  o.point_timeout_s = p.cfg.timing.max_point_s + 2 * SweepOptions().hang_grace_s;
  return o;
}

// The first device of each GPU model among the workers: where the once-per-table work is done.
std::vector<std::string> one_device_per_model(WorkerPool& pool, const std::vector<WorkerSlot>& slots) {
  std::set<std::string> models;
  std::vector<std::string> out;
  for (const auto& d : pool.devices())
    for (const auto& slot : slots)
      if (slot.name == d.device && models.insert(d.gpu).second) out.push_back(slot.device);
  return out;
}

// Several devices: a worker process each, cells from one queue, stored here.
void sweep_on_devices(const SweepArgs& a, Cli& cli, Prepared& p) {
  const std::vector<WorkerSlot> slots = parse_devices(join_list(p.shape.devices), cuda_device_count());
  const std::string first = slots.front().device;
  if (a.dry_run) {
    const std::unique_ptr<TorchExecutor> ex = open_executor(p.cfg, first);
    drop_unavailable(p.sw, *ex, std::cerr);
    print_dry_run(p.cfg, p.sw, p.shape, first, p.done, cli.db, slots.size());
    cli.status = kExitOk;
    return;
  }
  if (p.cfg.timing.interleave > 1 || p.cfg.timing.processes > 1)
    std::cerr << "note: with --devices each device's worker measures a table cell whole in its one process: "
                 "timing.interleave and timing.processes are taken as 1\n";
  resolve_device_defaults(p.cfg.timing, first);  // as each worker does (open_executor)
  p.cfg.timing.interleave = p.cfg.timing.processes = 1;
  p.cfg.timing.threads = pin_threads(p.cfg.timing.threads);  // the count recorded, and the packages'
  WorkerPool pool(pool_options(a, p, slots));
  if (!pool.start([] { return stop_requested().load(); })) {
    std::cerr << "interrupted before the run started: nothing stored\n";
    cli.status = 130;
    return;
  }
  refuse_dropped(a, drop_providers(p.sw, pool.unavailable(), std::cerr));
  p.shape.providers = sweep_providers(p.cfg, p.sw);
  measure_and_report(a, cli, p, pool, one_device_per_model(pool, slots), false);
}

void run_command(const SweepArgs& a, Cli& cli) {
  if (a.worker) {
    cli.status = run_sweep_worker(a.config, a.device, a.max_points);
    return;
  }
  // From the start: a signal while the device opens and the bandwidth is measured stops the
  // sweep before it measures anything.
  check_db_path(cli.db, !a.dry_run);
  check_out_path(a.out, cli.db);
  if (!a.dry_run) install_stop_signals([db = cli.db] { stop_now(db); });
  Prepared p;
  p.cfg = load_config(a.config);
  p.sw = expand(p.cfg, a.max_points);
  p.progress = parse_progress(a.progress, isatty(STDERR_FILENO));
  const RunShape given = given_shape(a);
  p.shape = a.resume ? resumed_shape(a, cli.db, given, p.done) : given;
  filter_providers(p.sw, p.cfg, p.shape.providers);
  filter_tables(p.sw, TitleFilter(p.shape.filter), p.cfg.path);
  if (p.shape.devices.empty()) sweep_on_one_device(a, cli, p);
  else sweep_on_devices(a, cli, p);
}

}  // namespace

void add_sweep_command(CLI::App& app, Cli& cli) {
  auto a = std::make_shared<SweepArgs>();
  auto* cmd = app.add_subcommand("sweep", "run a sweep config, store every point, print its report");
  cmd->add_option("config", a->config, "the sweep config (.yaml, .yml or .json)")->required();
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
  cmd->callback([a, devices, shard, &cli] {
    a->devices_given = devices->count() > 0;
    a->shard_given = shard->count() > 0;
    run_command(*a, cli);
  });
}

}  // namespace opbench

// opbench ab BASE HEAD CONFIG...: two revisions of the tree measured on the same chip, their
// rounds interleaved (sweep/paired_cell.hpp), a run per side and config, paired for diff's
// verdicts (diff/verdict.hpp, rule 7). A side's measure binary is this build when its revision is
// the tree's HEAD, else the commit's own, built into a cache of builds (sweep/builds.hpp); on
// every device a worker of each side measures the cells handed to that device
// (sweep/ab_measurer.hpp); the compiled baselines' packages are built by each side's own
// `compile` first (shared where their keys match). Prints the paired diff of each config.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <iostream>
#include <mutex>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/process.hpp"
#include "diff/diff.hpp"
#include "sweep/ab_measurer.hpp"
#include "sweep/builds.hpp"
#include "sweep/config_filter.hpp"
#include "sweep/devices.hpp"
#include "sweep/resume.hpp"
#include "sweep/runner.hpp"
#include "sweep/stop_signals.hpp"
#include "torch/measure/default_device.hpp"
#include "torch/measure/device.hpp"
#include "torch/measure/threads.hpp"
#include "torch/providers/table_jobs.hpp"
#include "torch/sweep/where.hpp"
#include "torch/sweep/worker_process.hpp"

namespace opbench {

namespace {

struct AbArgs {
  std::string base, head;
  std::vector<std::string> configs;
  std::string label = "ab", device, devices, providers, filter, builds, base_bin, head_bin, tree, out, format = "markdown";
  std::string progress = "auto";
  std::vector<std::string> base_env, head_env;
  double threshold_pct = kAbThresholdPct;
  int processes = kAbProcesses;
  bool fail = false, allow_mixed = false, devices_given = false;
  size_t max_points = kDefaultMaxPoints;
};

// The runs being measured (for the signal thread), each side's.
std::mutex g_runs_mu;
std::vector<int64_t> g_runs;

// A second signal: every run under way is marked interrupted, and the process exits (130).
void stop_now(const std::string& db) {
  std::lock_guard<std::mutex> lock(g_runs_mu);
  try {
    Store store(db);
    for (int64_t id : g_runs) store.end_run(id, "interrupted", this_process());
    std::cerr << "\nstopped: " << g_runs.size() << " runs interrupted\n" << std::flush;
  } catch (const std::exception& e) {
    std::cerr << "\nstopped: the runs not marked interrupted (" << e.what() << ")\n" << std::flush;
  }
}

// This opbench-measure, as a path another process can start.
std::string running_binary() {
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) throw RuntimeFailure("cannot find this opbench's own binary (/proc/self/exe)");
  return std::string(self, size_t(n));
}

// A side's binary: the one given (--base-bin), else its revision's (sweep/builds.hpp).
SideBinary side_of(const std::string& rev, const std::string& given_bin, const std::string& option,
                   const BuildCacheOptions& cache) {
  if (!given_bin.empty()) {
    if (!fs::is_regular_file(given_bin) || ::access(given_bin.c_str(), X_OK) != 0)
      throw InputError("--" + option + "-bin", given_bin, "not an executable file");
    std::string commit = rev;
    try {
      commit = resolve_revision(cache.source_dir, rev, option).commit;
    } catch (const InputError&) {  // a binary given: its revision is only what its run records
    }
    return {fs::resolved(given_bin), commit, SideBinary::given, 0};
  }
  if (rev == "HEAD")  // this build, whatever the tree's git holds (a copy of it without .git too)
    return {cache.running, cache.running_commit, SideBinary::running, 0};
  return side_binary(resolve_revision(cache.source_dir, rev, option), option, cache, std::cerr);
}

// The worker protocol a side's workers are spoken to in: this build's own, else the one its
// binary says it speaks (asked before they start; another build may speak an older one), the
// older of the two.
int side_protocol(const std::array<SideBinary, 2>& bins, size_t side) {
  const SideBinary& b = bins[side];
  if (b.how == SideBinary::running) return kWorkerProtocol;
  if (side == kHead && b.binary == bins[kBase].binary) return bins[kBase].protocol;  // asked once
  return std::min(kWorkerProtocol, worker_protocol_of(b.binary));
}

std::array<SideBinary, 2> side_binaries(const AbArgs& a) {
  BuildCacheOptions cache;
  cache.source_dir = a.tree.empty() ? std::string(OPBENCH_SOURCE_DIR) : a.tree;
  cache.running = running_binary();
  cache.running_commit = tree_commit(OPBENCH_SOURCE_DIR);
  cache.cache_dir = a.builds.empty() ? default_build_cache(cache.source_dir) : a.builds;
  const bool any_built = (a.base_bin.empty() && a.base != "HEAD") || (a.head_bin.empty() && a.head != "HEAD");
  if (any_built) cache.settings = build_settings(fs::dir_name(cache.running));
  std::array<SideBinary, 2> out = {side_of(a.base, a.base_bin, "base", cache),
                                   side_of(a.head, a.head_bin, "head", cache)};
  for (size_t s : {kBase, kHead}) {
    out[s].protocol = side_protocol(out, s);
    std::cerr << (s == kBase ? "base " : "head ") << (s == kBase ? a.base : a.head) << ": commit "
              << out[s].commit.substr(0, 12) << ", " << side_binary_text(out[s]) << " (" << out[s].binary << ")"
              << (out[s].protocol < kWorkerProtocol
                      ? ", its workers reading the configs (worker protocol " + std::to_string(out[s].protocol) + ")"
                      : "")
              << "\n";
  }
  return out;
}

// The configs as given, loaded, expanded and narrowed by --providers and --filter.
std::vector<Prepared> load_configs(const AbArgs& a) {
  const std::vector<std::string> paths = command_configs(a.configs);
  std::vector<Prepared> ps;
  for (const auto& path : paths) {
    Prepared p;
    p.cfg = load_config(path);
    p.sw = expand(p.cfg, a.max_points);
    p.options = RunOptions{path, a.device, split_list(a.providers), a.label, a.filter, {}, ""};
    ps.push_back(std::move(p));
  }
  if (ps.size() > 1) filter_suite(ps, 0, std::cerr);
  else filter_config(ps.front());
  return ps;
}

// The devices measured on: --devices, else --device (default: cuda when present).
std::vector<WorkerSlot> ab_slots(const AbArgs& a) {
  if (a.devices_given) {
    if (!a.device.empty()) throw InputError("--devices", a.devices, "cannot be given with --device");
    return parse_devices(a.devices, cuda_device_count());
  }
  const std::string device = canonical_device(a.device.empty() ? default_device() : a.device);
  return parse_devices(device, cuda_device_count(), "--device");
}

// What each config leaves to the device decided for it; each cell whole on a device (no
// interleaving), its rounds spread over each side's `processes` workers there (--processes, in
// place of the config's timing.processes), LibTorch's threads as the workers pin them.
void resolve_timings(std::vector<Prepared>& ps, const std::string& device, int processes) {
  for (auto& p : ps) {
    resolve_device_defaults(p.cfg.timing, device);
    p.cfg.timing.interleave = 1;
    p.cfg.timing.processes = processes;
  }
  const int threads = pin_threads(ps.front().cfg.timing.threads);
  for (auto& p : ps) p.cfg.timing.threads = threads;
}

// The compiled baselines' packages every config needs, built by each side's own `compile`.
void compile_tables(const std::vector<Prepared>& ps, const std::array<SideBinary, 2>& bins, const std::string& device) {
  bool any = false;
  for (const auto& p : ps) any = any || !table_jobs(p.sw, device).empty();
  if (!any) return;
  for (size_t s : {kBase, kHead}) {
    if (s == kHead && bins[kHead].binary == bins[kBase].binary) break;  // one build: its packages are made
    std::vector<std::string> argv = {bins[s].binary, "compile"};
    for (const auto& p : ps) argv.push_back(p.cfg.path);
    argv.insert(argv.end(), {"--device", device, "--progress", "lines"});
    std::string output;
    const std::string why = process::run_capture(argv, output);
    std::cerr << output;
    if (!why.empty()) throw RuntimeFailure(std::string(s == kBase ? "the base's" : "the head's") + " compile " + why);
  }
}


// The measurer: on every device --processes workers of each side's binary, started side by side.
std::unique_ptr<AbMeasurer> start_measurer(const AbArgs& a, std::vector<Prepared>& ps,
                                           const std::array<SideBinary, 2>& bins, const std::vector<WorkerSlot>& slots) {
  AbOptions o;
  o.slots = slots;
  o.command = [&ps, bins, max_points = a.max_points](size_t side, const WorkerSlot& slot) {
    return worker_command(ps, slot.device, max_points, bins[side].binary, bins[side].protocol);
  };
  o.env = {a.base_env, a.head_env};
  o.processes = a.processes;
  o.same_within = a.threshold_pct / 100;
  for (auto& env : o.env) env.push_back(worker_parent_env());
  o.cpus = [](const WorkerSlot& slot) { return local_cpus(slot.device); };
  for (size_t side : {kBase, kHead}) o.setup[side] = worker_setup(ps, bins[side].protocol);
  for (const auto& p : ps) o.timings.push_back(p.cfg.timing);
  o.allow_mixed = a.allow_mixed;
  auto m = std::make_unique<AbMeasurer>(o);
  if (!m->start([] { return interrupt_requested().load(); })) return nullptr;
  return m;
}

// One config's two runs, measured together; the outcome.
SweepOutcome measure_config(const AbArgs& a, Cli& cli, Prepared& p, AbMeasurer& m, size_t index,
                            const std::array<SideBinary, 2>& bins, const std::vector<WorkerSlot>& slots) {
  m.use_config(index);
  drop_providers(p.sw, m.unavailable(index), std::cerr);
  if (p.sw.points.empty()) throw InputError(p.cfg.path, "providers", "no provider can run on both sides (see above)");
  Store store(cli.db);
  SweepOptions opt;
  opt.sides = {{a.label + "/base", bins[kBase].commit}, {a.label + "/head", bins[kHead].commit}};
  opt.shape.label = a.label;
  if (slots.size() > 1)
    for (const auto& s : slots) opt.shape.devices.push_back(s.name);
  else opt.shape.device = slots.front().name;
  opt.shape.filter = a.filter;
  opt.progress = parse_progress(a.progress, isatty(STDERR_FILENO));
  opt.host = host_name();
  opt.interrupt = &interrupt_requested();
  opt.started = [](const RunInfo& run) {
    std::lock_guard<std::mutex> lock(g_runs_mu);
    g_runs.push_back(run.id);
  };
  const SweepOutcome r = run_sweep(p.cfg, p.sw, m, store, opt, std::cerr);
  std::cerr << "runs " << join_list({std::to_string(r.run_ids.front()), std::to_string(r.run_ids.back())}) << " ("
            << p.cfg.path << ", base and head): " << r.measured << " points measured"
            << (r.failed ? ", " + std::to_string(r.failed) + " failed" : "") << " (" << cli.db << ")\n";
  return r;
}

// The paired diff of each config's two runs, one document; the regressions counted.
size_t report_diffs(const AbArgs& a, const Cli& cli, const std::vector<SweepOutcome>& outcomes) {
  Store store(cli.db);
  std::string text;
  size_t regressions = 0, device = 0;
  for (const auto& r : outcomes) {
    const RunInfo b = *store.run(r.run_ids.front()), h = *store.run(r.run_ids.back());
    DiffOptions opt;
    opt.threshold = a.threshold_pct / 100;
    opt.calibrations = calibrations_near(store.runs(), b, h);
    const DiffResult d = diff_runs({b, store.points(b.id)}, {h, store.points(h.id)}, opt);
    regressions += d.regressions;
    device += d.count(Verdict::Device);
    text += (text.empty() ? "" : "\n") + (a.format == "json" ? diff_json(d) : diff_markdown(d));
  }
  write_output(text, a.out);
  std::cerr << "ab: " << outcomes.size() << (outcomes.size() == 1 ? " config, " : " configs, ") << regressions
            << (regressions == 1 ? " regression" : " regressions") << " (threshold " << a.threshold_pct << "%)\n";
  return regressions;
}

// --base-env and --head-env: each NAME=VALUE, NAME a variable's name.
void check_env(const std::vector<std::string>& entries, const std::string& option) {
  for (const auto& e : entries) {
    const size_t eq = e.find('=');
    const std::string name = e.substr(0, eq);
    if (eq == std::string::npos || name.empty() || name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos)
      throw InputError(option, e, "expected NAME=VALUE (a variable's name, then its value)");
  }
}

void run_ab(const AbArgs& a, Cli& cli) {
  check_env(a.base_env, "--base-env");
  check_env(a.head_env, "--head-env");
  check_db_path(cli.db, true);
  check_out_path(a.out, cli.db);
  install_stop_signals([db = cli.db] { stop_now(db); });
  const std::array<SideBinary, 2> bins = side_binaries(a);
  std::vector<Prepared> ps = load_configs(a);
  const std::vector<WorkerSlot> slots = ab_slots(a);
  resolve_timings(ps, slots.front().device, a.processes);
  compile_tables(ps, bins, slots.front().device);
  ensure_parent_dir(cli.db);
  const std::unique_ptr<AbMeasurer> m = start_measurer(a, ps, bins, slots);
  std::vector<SweepOutcome> outcomes;
  for (size_t i = 0; m && i < ps.size() && !interrupt_requested().load(); ++i) {
    const SweepOutcome r = measure_config(a, cli, ps[i], *m, i, bins, slots);
    if (r.interrupted || r.lost || r.run_ids.size() != 2) {
      std::cerr << "ab: interrupted: the runs are left interrupted (a paired comparison is measured again whole)\n";
      cli.status = r.lost ? kExitRuntime : 130;
      return;
    }
    outcomes.push_back(r);
  }
  if (outcomes.size() < ps.size()) {
    std::cerr << "ab: interrupted before every config was measured\n";
    cli.status = 130;
    return;
  }
  const size_t regressions = report_diffs(a, cli, outcomes);
  cli.status = a.fail && regressions ? kExitRegression : kExitOk;
}

}  // namespace

void add_ab_command(CLI::App& app, Cli& cli) {
  auto a = std::make_shared<AbArgs>();
  auto* cmd = app.add_subcommand("ab", kAbHelp);
  cmd->add_option("base", a->base, "the base revision (a commit, branch or tag of this tree)")->required();
  cmd->add_option("head", a->head, "the head revision (HEAD: this build, with the tree's uncommitted changes)")
      ->required();
  cmd->add_option("config", a->configs, "sweep configs, or suite files listing them: two runs each")->required();
  cmd->add_option("--db", cli.db, "the SQLite database")->capture_default_str()->check(db_arg());
  cmd->add_option("--label", a->label, "the runs' labels are LABEL/base and LABEL/head")->capture_default_str()
      ->check(name_arg());
  cmd->add_option("--device", a->device, "cpu, cuda or cuda:N (default: cuda when present)");
  auto* devices = cmd->add_option("--devices", a->devices,
                                  "measure on these devices (cuda:0,cuda:1,... or all), each cell's two sides on one");
  cmd->add_flag("--allow-mixed", a->allow_mixed, "with --devices: GPUs of different models");
  cmd->add_option("--providers", a->providers, "only these providers (comma-separated)");
  cmd->add_option("--filter", a->filter, "only tables whose title matches this regular expression");
  cmd->add_option("--threshold", a->threshold_pct, threshold_help("the smallest change the paired diff counts", kAbThresholdPct))
      ->check(finite_range(0, 1000));
  cmd->add_option("--processes", a->processes,
                  "worker processes a side on every device, the rounds spread over them (1 to 16)")
      ->check(CLI::Range(1, 16))->capture_default_str();
  cmd->add_option("--format", a->format, "the diff's format: markdown or json")->check(CLI::IsMember({"markdown", "json"}));
  cmd->add_option("--out", a->out, "write the diff to this file instead of stdout")->check(file_arg());
  cmd->add_flag("--fail-on-regression", a->fail, "exit 1 when a point is SLOWER (or newly fails) on the head side");
  cmd->add_option("--builds", a->builds, "the folder of cached builds (default: $OPBENCH_BUILDS, else build-ab/ in the tree)");
  cmd->add_option("--tree", a->tree, "the git tree whose revisions are built (default: the tree this opbench was built from)");
  cmd->add_option("--base-bin", a->base_bin, "measure the base side with this opbench-measure instead of building it");
  cmd->add_option("--head-bin", a->head_bin, "measure the head side with this opbench-measure instead of building it");
  cmd->add_option("--base-env", a->base_env, "NAME=VALUE set for the base side's workers (repeatable)")->expected(1);
  cmd->add_option("--head-env", a->head_env, "NAME=VALUE set for the head side's workers (repeatable)")->expected(1);
  add_cache_option(cmd);
  cmd->add_option("--max-points", a->max_points, "refuse a config of more points than this")
      ->check(positive_count())->capture_default_str();
  cmd->add_option("--progress", a->progress, "auto, bar, lines or none")
      ->check(CLI::IsMember({"auto", "bar", "lines", "none"}))->capture_default_str();
  cmd->callback([a, devices, &cli] {
    a->devices_given = devices->count() > 0;
    run_ab(*a, cli);
  });
}

}  // namespace opbench

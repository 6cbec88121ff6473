// opbench compile CONFIG...: the work configs' providers do once per table before timing
// (building AOTInductor packages), all of them in parallel, with a progress line and the wall
// time a cold cache costs. `sweep` runs the same step before measuring. With --check it builds
// nothing: it lists what the cache holds and what it lacks (exit 1 when something is missing).
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "points/points.hpp"
#include "torch/measure/default_device.hpp"
#include "torch/measure/threads.hpp"
#include "torch/providers/table_jobs.hpp"

namespace opbench {

namespace {

// The table jobs of every config (a suite's), on `device`, each config's threads pinned as a
// sweep pins them (a CPU package keeps the thread count it was exported with).
std::vector<TableJob> suite_jobs(const std::vector<std::string>& paths, const std::string& device, size_t max_points) {
  std::vector<TableJob> jobs;
  bool pinned = false;
  for (const auto& path : command_configs(paths)) {
    Config cfg = load_config(path);
    const Sweep sw = expand(cfg, max_points);
    resolve_device_defaults(cfg.timing, device);
    if (!pinned) cfg.timing.threads = pin_threads(cfg.timing.threads), pinned = true;  // before any LibTorch work
    const std::vector<TableJob> own = table_jobs(sw, device);
    if (own.empty()) std::cout << cfg.path << ": no provider of this config prepares anything before timing\n";
    jobs.insert(jobs.end(), own.begin(), own.end());
  }
  return jobs;
}

// --check: a line per table job, "cached" or "missing", and a count; true when all are cached.
bool check_jobs(const std::vector<TableJob>& jobs) {
  size_t missing = 0;
  for (const auto& job : jobs) {
    const bool ready = job.work->ready(job.task);
    missing += ready ? 0 : 1;
    std::cout << (ready ? "cached  " : "missing ") << job.task.provider << " " << job.task.title << "\n";
  }
  const char* cache = std::getenv(kCacheVariable);
  std::cout << jobs.size() - missing << " of " << jobs.size() << " tables ready"
            << (cache ? std::string(" in ") + cache : std::string()) << "; " << missing << " missing\n";
  return missing == 0;
}

}  // namespace

void add_compile_command(CLI::App& app, Cli& cli) {
  struct Opts {
    std::vector<std::string> configs;
    std::string device, progress = "auto";
    int jobs = 0;
    size_t max_points = kDefaultMaxPoints;
    bool check = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("compile", kCompileHelp);
  cmd->add_option("config", o->configs, "sweep configs, or suite files listing them: their packages built together")
      ->required();
  cmd->add_option("--device", o->device, "cpu, cuda or cuda:N (default: cuda when present)");
  cmd->add_option("--jobs", o->jobs, "tables prepared at a time (default: the cores, as many as memory allows)");
  cmd->add_option("--max-points", o->max_points, "refuse a config of more points than this")
      ->check(positive_count())
      ->capture_default_str();
  cmd->add_option("--progress", o->progress, "auto (a bar on a terminal, else a line per table), bar, lines or none")
      ->check(CLI::IsMember({"auto", "bar", "lines", "none"}))
      ->capture_default_str();
  add_cache_option(cmd);
  cmd->add_flag("--check", o->check, "build nothing: list each table as cached or missing (exit 1 when one is missing)");
  cmd->callback([o, &cli] {
    const std::string device = o->device.empty() ? default_device() : o->device;
    const std::vector<TableJob> jobs = suite_jobs(o->configs, device, o->max_points);
    cli.status = kExitOk;
    if (jobs.empty()) return;
    const std::string why = table_jobs_unavailable(jobs, device);
    if (!why.empty()) throw RuntimeFailure(why);
    if (o->check) {
      cli.status = check_jobs(jobs) ? kExitOk : kExitRegression;
      return;
    }
    auto outcomes = run_table_jobs(jobs, o->jobs > 0 ? o->jobs : default_table_jobs(),
                                   parse_progress(o->progress, isatty(2)), std::cerr);
    for (size_t i = 0; i < outcomes.size(); ++i) {
      std::cout << (outcomes[i].error.empty() ? (outcomes[i].cached ? "cached " : "built  ") : "FAILED ")
                << jobs[i].task.provider << " " << jobs[i].task.title << " (" << int(outcomes[i].seconds) << " s) "
                << outcomes[i].path << "\n";
      if (!outcomes[i].stages.empty()) std::cout << "        " << outcomes[i].stages << "\n";
      if (!outcomes[i].error.empty()) cli.status = kExitRuntime;
    }
  });
}

}  // namespace opbench

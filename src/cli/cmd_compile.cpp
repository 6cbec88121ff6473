// opbench compile CONFIG: the work the config's providers do once per table before timing
// (building AOTInductor packages), in parallel, with a progress line. `sweep` runs the same
// step before measuring.
#include <unistd.h>

#include <iostream>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "points/points.hpp"
#include "providers/table_jobs.hpp"
#include "measure/threads.hpp"

namespace opbench {

void add_compile_command(CLI::App& app, Cli& cli) {
  struct Opts {
    std::string config, device, progress = "auto";
    int jobs = 0;
    size_t max_points = kDefaultMaxPoints;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand(
      "compile", "do the work a config's providers need once per table before timing (AOTInductor packages)");
  cmd->add_option("config", o->config, "the sweep config")->required();
  cmd->add_option("--device", o->device, "cpu, cuda or cuda:N (default: cuda when present)");
  cmd->add_option("--jobs", o->jobs, "tables prepared at a time (default: half the cores)");
  cmd->add_option("--max-points", o->max_points, "refuse a config of more points than this")
      ->check(positive_count())
      ->capture_default_str();
  cmd->add_option("--progress", o->progress, "auto (a bar on a terminal, else a line per table), bar, lines or none")
      ->check(CLI::IsMember({"auto", "bar", "lines", "none"}))
      ->capture_default_str();
  cmd->callback([o, &cli] {
    Config cfg = load_config(o->config);
    Sweep sw = expand(cfg, o->max_points);
    std::string device = o->device.empty() ? default_device() : o->device;
    resolve_device_defaults(cfg.timing, device);
    cfg.timing.threads = pin_threads(cfg.timing.threads);  // before any LibTorch work
    auto jobs = table_jobs(sw, device);
    if (jobs.empty()) {
      std::cout << cfg.path << ": no provider of this config prepares anything before timing\n";
      cli.status = kExitOk;
      return;
    }
    const std::string why = table_jobs_unavailable(jobs, device);
    if (!why.empty()) throw RuntimeFailure(why);
    auto outcomes = run_table_jobs(jobs, o->jobs > 0 ? o->jobs : default_table_jobs(), parse_progress(o->progress, isatty(2)), std::cerr);
    bool failed = false;
    for (size_t i = 0; i < outcomes.size(); ++i) {
      std::cout << (outcomes[i].error.empty() ? (outcomes[i].cached ? "cached " : "built  ") : "FAILED ")
                << jobs[i].task.provider << " " << jobs[i].task.title << " (" << int(outcomes[i].seconds) << " s) "
                << outcomes[i].path << "\n";
      failed = failed || !outcomes[i].error.empty();
    }
    cli.status = failed ? kExitRuntime : kExitOk;
  });
}

}  // namespace opbench

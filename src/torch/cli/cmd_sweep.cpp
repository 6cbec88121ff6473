// opbench sweep CONFIG...: run every point of each config and store it, one run per config, and
// print each run's report. Several configs (or a suite file listing them) are one suite,
// measured by this one process with one start-up, one bandwidth copy and one set of workers.
// The command reads its options into one SweepRequest and hands it to the sweep
// (torch/sweep/sweep.hpp), or with --worker to a worker of a parent sweep
// (torch/sweep/worker_process.hpp).
#include <iostream>

#include "cli/cli.hpp"
#include "sweep/resume.hpp"
#include "sweep/sweep_request.hpp"
#include "sweep/worker_protocol.hpp"
#include "torch/sweep/sweep.hpp"
#include "torch/sweep/worker_process.hpp"

namespace opbench {

namespace {

// The options that choose what is measured and how each run is shaped.
void add_shape_options(CLI::App* cmd, SweepRequest& a, std::string& providers) {
  cmd->add_option("--label", a.shape.label, "a label for the run (select it later with label:TEXT)")->check(name_arg());
  cmd->add_option("--device", a.shape.device, "cpu, cuda or cuda:N (default: cuda when present)");
  cmd->add_option("--devices", a.spelled.devices,
                  "measure on these devices, a worker process each (cuda:0,cuda:1,...; all: every "
                  "CUDA device here)");
  cmd->add_flag("--allow-mixed", a.allow_mixed,
                "with --devices: measure on GPUs of different models in one run; with --resume: continue a run "
                "measured on another GPU model or host");
  cmd->add_option("--shard", a.spelled.shard,
                  "measure only the i-th of N slices of the table cells (i/N), the same on every host; "
                  "join the shards' runs with `opbench merge --join-shards`");
  cmd->add_flag("--worker", a.worker, "(internal) measure the cells a parent sweep sends")->group("");
  cmd->add_flag("--print-worker-protocol", a.worker_protocol, "(internal) print the worker protocol this build speaks")
      ->group("");
  cmd->add_option("--providers", providers, "only these providers (comma-separated)");
  cmd->add_option("--filter", a.shape.filter, "only tables whose title matches this regular expression");
}

// The options of the command's own course: what it writes and prints, and how.
void add_course_options(CLI::App* cmd, SweepRequest& a) {
  cmd->add_flag("--dry-run", a.dry_run, "list the tables and points and estimate the time; run and store nothing");
  cmd->add_option("--resume", a.resume,
                  "continue run RUN with its stored options (device, providers, label): skip its stored points; "
                  "with several configs, the suite from RUN's config on")
      ->check(run_id_arg());
  cmd->add_option("--out", a.reports.out, "also write the report (every run's, one after another) to this file")
      ->check(file_arg());
  cmd->add_option("--max-points", a.max_points, "refuse a config of more points than this")
      ->check(positive_count())
      ->capture_default_str();
  cmd->add_flag_callback("--no-report", [&a] { a.reports.print = false; }, "do not print the report at the end");
  add_cache_option(cmd);
  cmd->add_option("--progress", a.progress,
                  "auto (a bar on a terminal, else a line per table cell), bar, lines or none")
      ->check(CLI::IsMember({"auto", "bar", "lines", "none"}))
      ->capture_default_str();
}

// A worker of a parent sweep (--worker), else the sweep, its database and --out checked first;
// the exit status.
int run_command(SweepRequest& a, const std::string& providers) {
  a.shape.providers = split_list(providers);
  if (a.worker_protocol) {
    std::cout << kWorkerProtocol << "\n";
    return 0;
  }
  if (a.worker) return run_sweep_worker(a);
  check_db_path(a.db, !a.dry_run);
  check_out_path(a.reports.out, a.db);
  return sweep(a, OPBENCH_SOURCE_DIR);
}

}  // namespace

void add_sweep_command(CLI::App& app, Cli& cli) {
  auto a = std::make_shared<SweepRequest>();
  auto providers = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("sweep", kSweepHelp);
  cmd->add_option("config", a->configs,
                  "sweep configs (.yaml, .yml or .json), or suite files listing them: one run per config, all "
                  "measured by this command")
      ->required();
  cmd->add_option("--db", cli.db, "the SQLite database")->capture_default_str()->check(db_arg());
  add_shape_options(cmd, *a, *providers);
  add_course_options(cmd, *a);
  cmd->callback([a, providers, cmd, &cli] {
    a->spelled.devices_given = cmd->get_option("--devices")->count() > 0;
    a->spelled.shard_given = cmd->get_option("--shard")->count() > 0;
    a->db = cli.db;
    cli.status = run_command(*a, *providers);
  });
}

}  // namespace opbench

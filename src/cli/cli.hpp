// The opbench command: each subcommand in its own file (cmd_*.cpp) registers itself on the
// CLI11 app through one add_*_command function listed in main.cpp. A command's callback
// stores the exit status in `Cli::status`; errors propagate as InputError (exit 2) or
// RuntimeFailure (exit 3).
#pragma once
#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <string>

#include "baselines/compiled/compiled.h"
#include "store/store.hpp"
#include "sweep/points.hpp"
#include "sweep/progress.hpp"

namespace opbench {

struct Cli {
  int status = 0;
  std::string db = "results/opbench.db";  // --db, shared by the commands that read or write runs
};

void add_sweep_command(CLI::App& app, Cli& cli);
void add_report_command(CLI::App& app, Cli& cli);
void add_runs_command(CLI::App& app, Cli& cli);
void add_list_command(CLI::App& app, Cli& cli);
void add_import_command(CLI::App& app, Cli& cli);
void add_diff_command(CLI::App& app, Cli& cli);
void add_versus_command(CLI::App& app, Cli& cli);
void add_merge_command(CLI::App& app, Cli& cli);
void add_history_command(CLI::App& app, Cli& cli);

void add_compile_command(CLI::App& app, Cli& cli);

// The compiled baselines' packages a sweep needs: one per table and compiled provider.
struct CompileJob {
  std::string title;
  CompileRequest request;
};
std::vector<CompileJob> compile_jobs(const Sweep& sw, const std::string& device);
std::vector<CompileOutcome> run_compile_jobs(const std::vector<CompileJob>& jobs, int parallel, ProgressMode progress,
                                             std::ostream& log);
int default_compile_jobs();

// Helpers shared by the commands.
void write_output(const std::string& text, const std::string& out_path);  // stdout when empty
void ensure_parent_dir(const std::string& path);
std::string default_device();
// The options of the commands that judge points (diff, versus); add_judge_options registers
// --db, --metric speed|memory (described by `metric_help`), --threshold (percent), --format
// markdown|json and --out; each command its flag for `fail`.
struct JudgeOptions {
  std::string metric, format = "markdown", out;
  double threshold = 5;  // percent
  bool fail = false;
};
void add_judge_options(CLI::App* cmd, Cli& cli, JudgeOptions& o, const std::string& metric_help);
// Opens a database that must exist (InputError naming --db otherwise) for reading only: never
// creates, migrates or writes it (Store::open_read_only).
std::unique_ptr<Store> open_existing_store(const std::string& path);

}  // namespace opbench

// The opbench command: each subcommand in its own file (cmd_*.cpp) registers itself on the
// CLI11 app through one add_*_command function listed in main.cpp. A command's callback
// stores the exit status in `Cli::status`; errors propagate as InputError (exit 2) or
// RuntimeFailure (exit 3).
#pragma once
#include <CLI/CLI.hpp>

#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <string>

#include "diff/threshold.hpp"
#include "store/whole_run.hpp"
#include "points/points.hpp"
#include "core/output.hpp"
#include "core/progress.hpp"
#include "core/title_filter.hpp"
#include "report/plot_data.hpp"
#include "store/store.hpp"

namespace opbench {

struct Cli {
  int status = 0;
  std::string db = "results/opbench.db";  // --db, shared by the commands that read or write runs
};

// The one-line help of the commands that load LibTorch: `opbench` lists them, opbench-measure
// runs them (main.cpp).
constexpr const char* kSweepHelp = "run sweep configs (one run each), store every point, print the reports";
constexpr const char* kListHelp = "list ops, axes and providers, and which providers run here";
constexpr const char* kCompileHelp =
    "do the work configs' providers need once per table before timing (AOTInductor packages)";
constexpr const char* kAbHelp =
    "measure two revisions on the same chip, their rounds interleaved, and diff them round against round";

void add_sweep_command(CLI::App& app, Cli& cli);
void add_report_command(CLI::App& app, Cli& cli);
void add_runs_command(CLI::App& app, Cli& cli);
void add_list_command(CLI::App& app, Cli& cli);
void add_import_command(CLI::App& app, Cli& cli);
void add_diff_command(CLI::App& app, Cli& cli);
void add_versus_command(CLI::App& app, Cli& cli);
void add_merge_command(CLI::App& app, Cli& cli);
void add_history_command(CLI::App& app, Cli& cli);
void add_export_command(CLI::App& app, Cli& cli);
void add_plot_command(CLI::App& app, Cli& cli);
void add_site_command(CLI::App& app, Cli& cli);

void add_compile_command(CLI::App& app, Cli& cli);
void add_ab_command(CLI::App& app, Cli& cli);

// Helpers shared by the commands.
void ensure_parent_dir(const std::string& path);
// The options of the commands that judge points (diff, versus); add_judge_options registers
// --db, --metric speed|memory (described by `metric_help`), --threshold (percent), --format
// markdown|json and --out; each command its flag for `fail`.
// diff and history count a change from 5%; versus from 0 (any confirmed slowdown), which
// its --help says.
constexpr double kDefaultThresholdPct = kDefaultThreshold * 100;
// ab's paired diff counts a change from 2%: the pairs cancel what moves the chip
// (docs/measurement.md, paired rounds).
constexpr double kAbThresholdPct = 2;
// ab's worker processes a side on every device, its rounds spread over them (diff's rule 7
// judges by pair of processes: an offset one process carries decides nothing).
constexpr int kAbProcesses = 4;
// "WHAT, in percent (default ...)", stating how the default compares with the other commands'.
std::string threshold_help(const std::string& what, double default_pct);
struct JudgeOptions {
  std::string metric, format = "markdown", out;
  std::string normalize;  // "" or "peak" (diff/normalize.hpp)
  double threshold_pct = kDefaultThresholdPct;
  bool fail = false;
};
void add_judge_options(CLI::App* cmd, Cli& cli, JudgeOptions& o, const std::string& metric_help);
// The runs `selectors` name (and every run with `all`), each with its points and compiles.
std::vector<RunRecord> selected_runs(const Store& store, const std::vector<std::string>& selectors, bool all);
// Checks of option values (CLI11 validators: a failure is a usage error, exit 2, one line).
// A file argument to write (--out): not empty, not a directory, nothing but a regular file, a
// FIFO or a character device where it leads (fs::output_problem).
CLI::Validator file_arg();
// A database argument (--db): not empty; when something is there, a regular file (through any
// links; a link to nothing is refused too).
CLI::Validator db_arg();
// fs::database_problem as an InputError naming `option`: every command checks its databases with
// it before it starts anything (a writer with `write`).
void check_db_path(const std::string& path, bool write, const std::string& option = "--db");
// A finite number from lo to hi (--threshold: "nan" and "inf" are refused).
CLI::Validator finite_range(double lo, double hi);
// A run id (--resume): 1 to 2^63-1.
CLI::Validator run_id_arg();
// A name stored and printed back (--label): UTF-8, no control character, no code fence.
CLI::Validator name_arg();
// --cache DIR: the compiled packages' cache for this command and the workers it starts (it sets
// kCacheVariable, which the cache reads: baselines/compiled/compiled.h), a folder or none yet.
constexpr const char* kCacheVariable = "OPBENCH_CACHE_DIR";
void add_cache_option(CLI::App* cmd);
// A count of at least 1 (--max-points).
CLI::Validator positive_count();
// An option that writes a file (--out, --plot, ...) must not name any database the command
// has open, nor its -wal, -shm or -journal file (compared as resolved paths, so another
// spelling or a link to it counts, and by inode, so a hard link does): InputError naming
// `option` otherwise. No-op when `path` is empty.
void check_out_path(const std::string& path, const std::string& option, const std::vector<std::string>& databases);
// check_out_path for --out beside one database.
void check_out_path(const std::string& out, const std::string& db);
// An option naming a folder the command writes `files` into (--plots, plot --out, site --out):
// neither the folder nor any of the files may be one of `databases` (check_out_path).
void check_out_dir(const std::string& dir, const std::string& option, const std::vector<std::string>& files,
                   const std::vector<std::string>& databases);

// The runs of selectors (default: latest), each holding only the points whose table title the
// filter matches; throws InputError when the filter leaves no point in any run.
std::vector<RunRecord> load_runs(const Store& store, const std::vector<std::string>& selectors, const TitleFilter& filter);
// --show value|gbps|pct
Show parse_show(const std::string& show);
// Runs scripts/plot.py on plot data (report/plot_data.hpp, history_plot_json) writing to
// `out` (a folder or a file, by the data's kind); returns what the script printed. Throws
// RuntimeFailure with the script's one-line reason (python or matplotlib missing: exit 3).
std::string run_plot_script(const std::string& data_json, const std::string& out);
// One PNG per table of the runs into `dir`; returns title -> image path (dir/file). `option`
// and `databases`: none of the files may be a database the command has open (check_out_dir).
std::map<std::string, std::string> make_plots(const std::vector<RunRecord>& runs, Show show, const std::string& dir,
                                              std::ostream& log, const std::string& option,
                                              const std::vector<std::string>& databases);
// The run with its status as it stands now: "abandoned" when its process died.
RunInfo as_it_stands(const Store& store, RunInfo run);
// For a run that did not finish: how to continue it (empty for the others).
std::string resume_hint(const Store& store, const RunInfo& run, const std::string& db);
// Opens a database that must exist (InputError naming --db otherwise, also for a path that is
// not a regular file) for reading only: never creates, migrates or writes it
// (Store::open_read_only).
std::unique_ptr<Store> open_existing_store(const std::string& path);

}  // namespace opbench

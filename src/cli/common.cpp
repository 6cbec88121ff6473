#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <algorithm>
#include <iostream>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/text.hpp"
#include "store/selector.hpp"
#include "sweep/resume.hpp"

namespace opbench {

void ensure_parent_dir(const std::string& path) { fs::make_parent_dirs(path); }

RunInfo as_it_stands(const Store& store, RunInfo run) {
  run.status = effective_status(store, run);
  return run;
}

std::string resume_hint(const Store& store, const RunInfo& run, const std::string& db) {
  if (run.status != "interrupted" && run.status != "abandoned") return "";
  return resume_command(stored_options(store, run), db, run.id);
}

std::unique_ptr<Store> open_existing_store(const std::string& path) {
  check_db_path(path, false);
  if (!fs::exists(path)) throw InputError(path, "--db", "no such database");
  return Store::open_read_only(path);
}

void check_db_path(const std::string& path, bool write, const std::string& option) {
  const std::string why = fs::database_problem(path, write);
  if (!why.empty()) throw InputError(option, path, why);
}

CLI::Validator file_arg() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        if (s.empty()) return "must name a file, got an empty string";
        if (fs::is_directory(s)) return "'" + s + "' is a directory, not a file";
        const std::string why = fs::output_problem(s);
        return why.empty() ? "" : "'" + s + "' " + why;
      },
      "FILE");
}

CLI::Validator db_arg() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        const std::string why = fs::database_problem(s, false);
        return why.empty() ? "" : (s.empty() ? why : "'" + s + "' " + why);
      },
      "FILE");
}

static std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

CLI::Validator finite_range(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        // Decimal only: strtod would also read hexadecimal ("0x10" as 16), "inf" and "nan".
        const bool decimal = !s.empty() && s.find_first_not_of("0123456789.eE+-") == std::string::npos;
        char* end = nullptr;
        errno = 0;
        const double v = decimal ? std::strtod(s.c_str(), &end) : 0;
        if (!decimal || *end != '\0' || errno == ERANGE || !std::isfinite(v) || v < lo || v > hi)
          return "must be a number from " + num(lo) + " to " + num(hi) + ", got '" + s + "'";
        return "";
      },
      "NUMBER in [" + num(lo) + ", " + num(hi) + "]");
}

CLI::Validator run_id_arg() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        RunSelector sel;
        const std::string why = selector_problem(s, &sel);
        if (!why.empty()) return why + ", got '" + s + "'";
        return sel.kind == RunSelector::Id ? "" : "must be a run id, got '" + s + "'";
      },
      "RUN");
}

CLI::Validator name_arg() {
  return CLI::Validator([](std::string& s) { return run_label_problem(s); }, "TEXT");
}

void add_cache_option(CLI::App* cmd) {
  cmd->add_option_function<std::string>(
         "--cache",
         [](const std::string& dir) { ::setenv(kCacheVariable, fs::resolved(dir).c_str(), 1); },
         "the compiled baselines' package cache, a folder (default: $OPBENCH_CACHE_DIR, else "
         "~/.cache/opbench/aoti); may be shared by hosts and writers")
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            if (s.empty()) return "must name a folder, got an empty string";
            if (fs::exists(s) && !fs::is_directory(s)) return "'" + s + "' is not a folder";
            return "";
          },
          "DIR"));
}

CLI::Validator positive_count() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != std::string::npos ||
            std::stoll(s) < 1)
          return "must be a whole number of at least 1, got '" + s + "'";
        return "";
      },
      "N");
}

void check_out_path(const std::string& path, const std::string& option, const std::vector<std::string>& databases) {
  if (path.empty()) return;
  const std::string o = fs::resolved(path);
  for (const auto& db : databases) {
    if (db.empty()) continue;
    const std::string d = fs::resolved(db);
    for (const char* suffix : {"", "-wal", "-shm", "-journal"})
      if (o == d + suffix || fs::same_file(path, db + suffix))
        throw InputError(option, path, std::string("is the database ") + db + suffix + ": write elsewhere");
  }
}

void check_out_path(const std::string& out, const std::string& db) { check_out_path(out, "--out", {db}); }

void check_out_dir(const std::string& dir, const std::string& option, const std::vector<std::string>& files,
                   const std::vector<std::string>& databases) {
  check_out_path(dir, option, databases);
  for (const auto& f : files) check_out_path(dir + "/" + f, option, databases);
}

std::string threshold_help(const std::string& what, double default_pct) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", default_pct);
  if (default_pct == kDefaultThresholdPct)
    return what + ", in percent (default " + buf + ", as for diff and history; versus defaults to 0)";
  char base[32];
  std::snprintf(base, sizeof base, "%g", kDefaultThresholdPct);
  return what + ", in percent (default " + buf + " here, unlike diff and history's " + base +
         (default_pct == 0 ? ": any confirmed change counts)" : ")");
}

void add_judge_options(CLI::App* cmd, Cli& cli, JudgeOptions& o, const std::string& metric_help) {
  cmd->add_option("--db", cli.db, "the SQLite database")->capture_default_str()->check(db_arg());
  cmd->add_option("--metric", o.metric, metric_help)->check(CLI::IsMember({"speed", "memory"}))->capture_default_str();
  cmd->add_option("--threshold", o.threshold_pct, threshold_help("the smallest change that counts", o.threshold_pct))
      ->check(finite_range(0, 1000));
  cmd->add_option("--format", o.format, "markdown or json")->check(CLI::IsMember({"markdown", "json"}))->capture_default_str();
  cmd->add_option("--out", o.out, "write to this file instead of stdout")->check(file_arg());
  cmd->add_option("--normalize", o.normalize,
                  "peak: judge bandwidth-bound points on their use of each run's measured peak (across GPU models)")
      ->check(CLI::IsMember({"peak"}));
}

std::vector<RunRecord> load_runs(const Store& store, const std::vector<std::string>& selectors, const TitleFilter& filter) {
  std::vector<RunRecord> runs;
  std::vector<std::string> titles;
  size_t kept = 0;
  for (const auto& s : selectors.empty() ? std::vector<std::string>{"latest"} : selectors) {
    RunInfo r = store.select(s);
    RunRecord rr{r, {}};
    for (auto& p : store.points(r.id)) {
      if (titles.empty() || titles.back() != p.point.title) titles.push_back(p.point.title);
      if (filter(p.point.title)) rr.points.push_back(std::move(p));
    }
    kept += rr.points.size();
    runs.push_back(std::move(rr));
  }
  if (!kept && !filter.empty()) {
    std::vector<std::string> unique;
    for (const auto& t : titles)
      if (std::find(unique.begin(), unique.end(), t) == unique.end()) unique.push_back(t);
    filter.none_matched("the selected runs", unique);
  }
  return runs;
}

Show parse_show(const std::string& show) {
  return show == "gbps" ? Show::GBps : show == "pct" ? Show::PctPeak : Show::Value;
}

}  // namespace opbench

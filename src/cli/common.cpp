#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <iostream>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/text.hpp"
#include "store/selector.hpp"

namespace opbench {

void ensure_parent_dir(const std::string& path) { fs::make_parent_dirs(path); }

std::unique_ptr<Store> open_existing_store(const std::string& path) {
  if (!fs::is_regular_file(path)) throw InputError(path, "--db", "no such database");
  return Store::open_read_only(path);
}

CLI::Validator file_arg() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        if (s.empty()) return "must name a file, got an empty string";
        return fs::is_directory(s) ? "'" + s + "' is a directory, not a file" : "";
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
        char* end = nullptr;
        errno = 0;
        const double v = std::strtod(s.c_str(), &end);
        if (s.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(v) || v < lo || v > hi)
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
  return CLI::Validator([](std::string& s) { return name_problem(s); }, "TEXT");
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

void check_out_path(const std::string& out, const std::string& db) {
  if (out.empty()) return;
  const std::string o = fs::resolved(out), d = fs::resolved(db);
  for (const char* suffix : {"", "-wal", "-shm", "-journal"})
    if (o == d + suffix || fs::same_file(out, db + suffix))
      throw InputError("--out", out, std::string("is the database ") + db + suffix + ": write the report elsewhere");
}

std::string threshold_help(const std::string& what, double default_pct) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", default_pct);
  if (default_pct == kDefaultThresholdPct)
    return what + ", in percent (default " + buf + ", as for diff and history; versus defaults to 0)";
  char base[32];
  std::snprintf(base, sizeof base, "%g", kDefaultThresholdPct);
  return what + ", in percent (default " + buf + " here, unlike diff and history's " + base +
         ": any confirmed change counts)";
}

void add_judge_options(CLI::App* cmd, Cli& cli, JudgeOptions& o, const std::string& metric_help) {
  cmd->add_option("--db", cli.db, "the SQLite database")->capture_default_str()->check(file_arg());
  cmd->add_option("--metric", o.metric, metric_help)->check(CLI::IsMember({"speed", "memory"}))->capture_default_str();
  cmd->add_option("--threshold", o.threshold, threshold_help("the smallest change that counts", o.threshold))
      ->check(finite_range(0, 1000));
  cmd->add_option("--format", o.format, "markdown or json")->check(CLI::IsMember({"markdown", "json"}))->capture_default_str();
  cmd->add_option("--out", o.out, "write to this file instead of stdout")->check(file_arg());
}

std::vector<ReportRun> load_runs(const Store& store, const std::vector<std::string>& selectors, const TitleFilter& filter) {
  std::vector<ReportRun> runs;
  std::vector<std::string> titles;
  size_t kept = 0;
  for (const auto& s : selectors.empty() ? std::vector<std::string>{"latest"} : selectors) {
    RunInfo r = store.select(s);
    ReportRun rr{r, {}};
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

void write_output(const std::string& text, const std::string& out_path) {
  if (out_path.empty()) {
    std::cout << text << std::flush;
    return;
  }
  fs::write_atomic(out_path, text);
}


}  // namespace opbench

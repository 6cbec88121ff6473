#include <algorithm>
#include <iostream>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "measure/device.hpp"

namespace opbench {

void ensure_parent_dir(const std::string& path) { fs::make_parent_dirs(path); }

std::unique_ptr<Store> open_existing_store(const std::string& path) {
  if (!fs::is_regular_file(path)) throw InputError(path, "--db", "no such database");
  return std::make_unique<Store>(path, /*create=*/false);
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
  cmd->add_option("--db", cli.db, "the SQLite database")->capture_default_str();
  cmd->add_option("--metric", o.metric, metric_help)->check(CLI::IsMember({"speed", "memory"}))->capture_default_str();
  cmd->add_option("--threshold", o.threshold, threshold_help("the smallest change that counts", o.threshold))
      ->check(CLI::Range(0.0, 1000.0));
  cmd->add_option("--format", o.format, "markdown or json")->check(CLI::IsMember({"markdown", "json"}))->capture_default_str();
  cmd->add_option("--out", o.out, "write to this file instead of stdout");
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

std::string default_device() { return cuda_present() ? "cuda" : "cpu"; }

}  // namespace opbench

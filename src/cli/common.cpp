#include <iostream>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "measure/device.hpp"

namespace opbench {

void ensure_parent_dir(const std::string& path) { fs::make_parent_dirs(path); }

std::unique_ptr<Store> open_existing_store(const std::string& path) {
  if (!fs::is_regular_file(path)) throw InputError(path, "--db", "no such database");
  return Store::open_read_only(path);
}

void add_judge_options(CLI::App* cmd, Cli& cli, JudgeOptions& o, const std::string& metric_help) {
  cmd->add_option("--db", cli.db, "the SQLite database")->capture_default_str();
  cmd->add_option("--metric", o.metric, metric_help)->check(CLI::IsMember({"speed", "memory"}))->capture_default_str();
  cmd->add_option("--threshold", o.threshold, "the smallest change that counts, in percent")
      ->check(CLI::Range(0.0, 1000.0))
      ->capture_default_str();
  cmd->add_option("--format", o.format, "markdown or json")->check(CLI::IsMember({"markdown", "json"}))->capture_default_str();
  cmd->add_option("--out", o.out, "write to this file instead of stdout");
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

// The opbench command: each subcommand in its own file (cmd_*.cpp) registers itself on the
// CLI11 app through one add_*_command function listed in main.cpp. A command's callback
// stores the exit status in `Cli::status`; errors propagate as InputError (exit 2) or
// RuntimeFailure (exit 3).
#pragma once
#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace opbench {

struct Cli {
  int status = 0;
  std::string db = "results/opbench.db";  // --db, shared by the commands that read or write runs
};

void add_sweep_command(CLI::App& app, Cli& cli);
void add_report_command(CLI::App& app, Cli& cli);
void add_runs_command(CLI::App& app, Cli& cli);
void add_list_command(CLI::App& app, Cli& cli);

// Helpers shared by the commands.
void write_output(const std::string& text, const std::string& out_path);  // stdout when empty
void ensure_parent_dir(const std::string& path);
std::string default_device();

}  // namespace opbench

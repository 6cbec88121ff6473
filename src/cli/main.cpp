// opbench: benchmark GPU operator kernels against LibTorch baselines, store every sample in
// SQLite, report markdown tables, and track regressions.
#include <iostream>

#include "cli/cli.hpp"
#include "core/error.hpp"

int main(int argc, char** argv) {
  using namespace opbench;
  CLI::App app{"opbench: a benchmarking harness and regression tracker for GPU operator kernels"};
  app.set_version_flag("--version", std::string("opbench ") + OPBENCH_VERSION);
  app.require_subcommand(1);
  Cli cli;
  add_sweep_command(app, cli);
  add_report_command(app, cli);
  add_runs_command(app, cli);
  add_list_command(app, cli);
  add_compile_command(app, cli);
  add_import_command(app, cli);
  add_diff_command(app, cli);
  add_versus_command(app, cli);
  add_merge_command(app, cli);
  add_history_command(app, cli);
  add_export_command(app, cli);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "opbench: " << e.what() << " (see opbench --help)\n";
    return kExitUsage;
  } catch (const InputError& e) {
    std::cerr << "opbench: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "opbench: " << e.what() << "\n";
    return kExitRuntime;
  }
  return cli.status;
}

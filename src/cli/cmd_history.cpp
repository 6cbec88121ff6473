// opbench history TITLE: one point across runs in time order, one series per x, provider and
// GPU, with its level shifts (a penalised piecewise-constant fit, src/diff/changepoints.hpp).
#include <iostream>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "diff/history.hpp"

namespace opbench {

void add_history_command(CLI::App& app, Cli& cli) {
  struct Opts {
    std::string format = "markdown", plot, out;
    int64_t x = 0;
    double threshold_pct = kDefaultThresholdPct;
    bool fail = false;
    HistoryQuery q;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("history", "a point across runs in time order, with its level shifts (change points)");
  cmd->add_option("title", o->q.title, "the table title")->required();
  auto* xopt = cmd->add_option("--x", o->x, "only this x value (default: every x of the table)");
  cmd->add_option("--provider", o->q.provider, "only this provider (name or column label)");
  cmd->add_option("--gpu", o->q.gpu, "only runs on a GPU whose name contains TEXT (case-insensitive); each GPU is its own series anyway");
  cmd->add_option("--db", cli.db, "the SQLite database")->capture_default_str()->check(db_arg());
  cmd->add_option("--threshold", o->threshold_pct, threshold_help("the smallest step that counts", kDefaultThresholdPct))
      ->check(finite_range(0, 1000));
  cmd->add_option("--format", o->format, "markdown or json")->check(CLI::IsMember({"markdown", "json"}))->capture_default_str();
  cmd->add_option("--out", o->out, "write to this file instead of stdout")->check(file_arg());
  cmd->add_option("--plot", o->plot, "also draw the series into this PNG file, steps marked")->check(file_arg());
  cmd->add_flag("--fail-on-step", o->fail, "exit 1 when a series' latest level is a step up (a regression) or newly fails");
  cmd->callback([o, xopt, &cli] {
    check_out_path(o->out, cli.db);
    check_out_path(o->plot, "--plot", {cli.db});
    auto db = open_existing_store(cli.db);
    HistoryQuery q = o->q;
    if (xopt->count()) q.x = o->x;
    q.threshold = o->threshold_pct / 100;
    auto series = point_history(*db, q);
    write_output(o->format == "json" ? history_json(series, q.threshold) : history_markdown(series, q.threshold), o->out);
    if (!o->plot.empty()) std::cerr << run_plot_script(history_plot_json(series, q.threshold), o->plot);
    size_t steps = 0, regressed = 0;
    for (const auto& s : series) {
      steps += s.steps();
      regressed += s.latest_regression();
    }
    std::cerr << "history " << q.title << ": " << series.size() << " series, " << steps << " step"
              << (steps == 1 ? "" : "s") << ", " << regressed << " with a regression as the latest level\n";
    cli.status = o->fail && regressed ? kExitRegression : kExitOk;
  });
}

}  // namespace opbench

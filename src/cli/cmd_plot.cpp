// opbench plot: one PNG per table of one or more runs (scripts/plot.py draws them).
#include <iostream>

#include "cli/cli.hpp"
#include "core/error.hpp"

namespace opbench {

void add_plot_command(CLI::App& app, Cli& cli) {
  struct Opts {
    std::vector<std::string> runs;
    std::string out, show = "value", filter;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("plot", "draw one PNG per table: x axis log2, a line per provider (and run), the bandwidth floor dashed");
  cmd->add_option("--db", cli.db, "the SQLite database")->capture_default_str()->check(db_arg());
  cmd->add_option("--run", o->runs, "run selector: ID, latest, label:TEXT, gpu:TEXT (repeatable: each run's providers as their own lines; default latest)");
  cmd->add_option("--show", o->show, "y axis: value (the stored statistic), gbps, pct (of peak bandwidth; speed tables only)")
      ->check(CLI::IsMember({"value", "gbps", "pct"}))
      ->capture_default_str();
  cmd->add_option("--filter", o->filter, "only tables whose title matches this regular expression");
  cmd->add_option("--out", o->out, "the folder the PNGs (and plots.json, their index) go to")->required();
  cmd->callback([o, &cli] {
    check_out_dir(o->out, "--out", {}, {cli.db});
    TitleFilter filter(o->filter);
    auto store = open_existing_store(cli.db);
    auto runs = load_runs(*store, o->runs, filter);
    const Show show = parse_show(o->show);
    if (plot_tables(runs, show).empty())
      throw InputError("--show", o->show, "the runs hold no speed points to draw (gbps and pct show speed tables only)");
    auto plots = make_plots(runs, show, o->out, std::cerr, "--out", {cli.db});
    std::cerr << "plot: " << plots.size() << " plot" << (plots.size() == 1 ? "" : "s") << " in " << o->out << "\n";
    cli.status = kExitOk;
  });
}

}  // namespace opbench

// opbench history TITLE: one point across runs in time order, steps beyond noise marked.
#include <iostream>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "diff/history.hpp"

namespace opbench {

void add_history_command(CLI::App& app, Cli& cli) {
  struct Opts {
    std::string title, provider, format = "markdown", out;
    int64_t x = 0;
    double threshold = 5;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("history", "a point across runs in time order, with steps up or down beyond noise");
  cmd->add_option("title", o->title, "the table title")->required();
  auto* xopt = cmd->add_option("--x", o->x, "only this x value (default: every x of the table)");
  cmd->add_option("--provider", o->provider, "only this provider (name or column label)");
  cmd->add_option("--db", cli.db, "the SQLite database")->capture_default_str()->check(file_arg());
  cmd->add_option("--threshold", o->threshold, "the smallest step that counts, in percent")
      ->check(finite_range(0, 1000))
      ->capture_default_str();
  cmd->add_option("--format", o->format, "markdown or json")->check(CLI::IsMember({"markdown", "json"}))->capture_default_str();
  cmd->add_option("--out", o->out, "write to this file instead of stdout");
  cmd->callback([o, xopt, &cli] {
    auto db = open_existing_store(cli.db);
    Store& store = *db;
    std::optional<int64_t> x;
    if (xopt->count()) x = o->x;
    auto series = point_history(store, o->title, x, o->provider, o->threshold / 100);
    write_output(o->format == "json" ? history_json(series, o->threshold / 100)
                                     : history_markdown(series, o->threshold / 100),
                 o->out);
    cli.status = kExitOk;
  });
}

}  // namespace opbench

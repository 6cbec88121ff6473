// opbench export SEL...: runs as JSON text, every field and point (samples and rounds included),
// which `opbench import` reads back into any database.
#include <iostream>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "exchange/import.hpp"
#include "exchange/runs_json.hpp"

namespace opbench {

std::vector<RunRecord> selected_runs(const Store& store, const std::vector<std::string>& selectors, bool all) {
  std::vector<RunRecord> out;
  if (all)
    for (const auto& r : store.runs()) out.push_back(load_run(store, r));
  for (const auto& s : selectors) out.push_back(load_run(store, store.select(s)));
  return out;
}

void add_export_command(CLI::App& app, Cli& cli) {
  struct Opts {
    std::vector<std::string> runs;
    std::string format = "json", out;
    bool all = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("export", "write runs as JSON (every field and point, samples and rounds included)");
  cmd->add_option("runs", o->runs, "run selectors: ID, latest, label:TEXT, gpu:TEXT");
  cmd->add_flag("--all", o->all, "every run in the database");
  cmd->add_option("--db", cli.db, "the SQLite database")->capture_default_str()->check(db_arg());
  cmd->add_option("--format", o->format, "json (the one format: `opbench import` reads it back)")
      ->check(CLI::IsMember({"json"}))
      ->capture_default_str();
  cmd->add_option("--out", o->out, "write to this file instead of stdout")->check(file_arg());
  cmd->callback([o, &cli] {
    if (o->runs.empty() && !o->all) throw InputError("export", "runs", "name the runs to export (SEL...) or pass --all");
    check_out_path(o->out, cli.db);
    auto store = open_existing_store(cli.db);
    write_output(export_document(selected_runs(*store, o->runs, o->all), kMaxDocumentBytes), o->out);
    cli.status = kExitOk;
  });
}

}  // namespace opbench

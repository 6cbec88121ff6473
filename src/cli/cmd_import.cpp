// opbench import FILE: a markdown benchmark document becomes runs (one per GPU); a JSON file
// written by `opbench export` (or `report --format json`) brings its runs back as they were.
// A run the database already holds (same uuid; for a document, same content) is not added
// twice: its id is reported instead.
#include <iostream>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "exchange/import.hpp"
#include "exchange/runs_json.hpp"

namespace opbench {

namespace {

bool looks_like_json(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string::npos && text[first] == '{';
}

// Prints each run's id on stdout and what became of it on stderr.
void report_runs(const std::vector<RunRecord>& runs, const std::vector<bool>& added, const std::string& file,
                 const std::string& db) {
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunInfo& r = runs[i].run;
    const std::string gpu = r.env.gpu.empty() ? "unknown device" : r.env.gpu;
    if (added[i])
      std::cerr << "run " << r.id << ": " << gpu << ", " << runs[i].points.size() << " points imported from " << file
                << " (" << db << ")\n";
    else
      std::cerr << "run " << r.id << ": " << gpu << ", already in " << db << " (same " << (r.source == "import" ? "document" : "run")
                << ", uuid " << r.uuid << "): not imported again\n";
    std::cout << r.id << "\n";
  }
}

}  // namespace

void add_import_command(CLI::App& app, Cli& cli) {
  struct Opts {
    std::string file, label;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand(
      "import", "store a markdown benchmark document (one run per GPU) or an opbench JSON export; prints the run ids");
  cmd->add_option("file", o->file, "a markdown document (a published benchmark document, an opbench report) or an export (.json)")
      ->required();
  cmd->add_option("--db", cli.db, "the SQLite database (created when missing)")->capture_default_str()->check(file_arg());
  cmd->add_option("--label", o->label, "a label for the runs of a markdown document (select them later with label:TEXT)")->check(name_arg());
  cmd->callback([o, &cli] {
    // Parse first: an unreadable file leaves no database and no run behind.
    const std::string text = read_document(o->file);
    std::vector<RunRecord> runs;
    std::vector<std::string> warnings;
    if (looks_like_json(text)) {
      if (!o->label.empty())
        throw InputError(o->file, "--label", "a JSON export keeps its runs' labels; --label is for markdown documents");
      runs = runs_from_json(text, o->file);
    } else {
      ImportResult res = import_document(text, o->file, o->label);
      warnings = res.warnings;
      runs = import_records(res);
    }
    ensure_parent_dir(cli.db);
    Store store(cli.db);
    const std::vector<bool> added = insert_new_runs(store, runs);
    for (const auto& w : warnings) std::cerr << "warning: " << w << "\n";
    report_runs(runs, added, o->file, cli.db);
    cli.status = kExitOk;
  });
}

}  // namespace opbench

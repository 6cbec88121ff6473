// opbench import FILE: a markdown benchmark document becomes runs (one per GPU); a JSON file
// written by `opbench export` (or `report --format json`) brings its runs back as they were.
// A run the database already holds (same uuid; for a document, same content) is not added
// twice: its id is reported instead. The whole file is checked before the database is opened:
// bad input leaves no database and no run behind.
#include <iostream>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "exchange/import.hpp"
#include "exchange/runs_json.hpp"

namespace opbench {

namespace {

// A JSON document (an object, or by mistake an array) rather than markdown.
bool looks_like_json(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string::npos && (text[first] == '{' || text[first] == '[');
}

// One run of the file: what became of it in the database.
struct Imported {
  RunInfo run;
  bool added = false;
};

// Prints each run's id on stdout and what became of it on stderr: the points counted are
// those the database holds for it.
void report_runs(const std::vector<Imported>& runs, const Store& store, const std::string& file, const std::string& db) {
  for (const auto& [r, added] : runs) {
    const std::string gpu = r.env.gpu.empty() ? "unknown device" : r.env.gpu;
    if (added)
      std::cerr << "run " << r.id << ": " << gpu << ", " << store.run(r.id)->points << " points imported from " << file
                << " (" << db << ")\n";
    else
      std::cerr << "run " << r.id << ": " << gpu << ", already in " << db << " (same "
                << (r.source == "import" ? "document" : "run") << ", uuid " << r.uuid << "): not imported again\n";
    std::cout << r.id << "\n";
  }
}

// An export: its runs, each checked (record/run_check.hpp), stored in one transaction.
std::vector<Imported> import_json(const std::string& text, const std::string& file, const std::string& db) {
  std::vector<RunRecord> runs = runs_from_json(text, file);
  if (runs.empty()) throw InputError(file, "runs", "holds no runs: nothing to import");
  ensure_parent_dir(db);
  Store store(db);
  const std::vector<bool> added = insert_new_runs(store, runs);
  std::vector<Imported> out;
  for (size_t i = 0; i < runs.size(); ++i) out.push_back({runs[i].run, added[i]});
  return out;
}

// A document: read once to check it whole and count its points, then stored as it is read again.
std::vector<Imported> import_markdown(const std::string& text, const std::string& file, const std::string& label,
                                      size_t max_points, const std::string& db, std::vector<std::string>* warnings) {
  ImportResult plan = import_document(text, file, label, PointSink());
  check_point_limit(plan, file, max_points);
  ensure_parent_dir(db);
  Store store(db);
  store_document(store, text, file, label, plan);
  *warnings = plan.warnings;
  std::vector<Imported> out;
  for (const auto& ir : plan.runs) out.push_back({ir.run, ir.added});
  return out;
}

}  // namespace

void add_import_command(CLI::App& app, Cli& cli) {
  struct Opts {
    std::string file, label;
    size_t max_points = kDefaultMaxImportPoints;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand(
      "import", "store a markdown benchmark document (one run per GPU) or an opbench JSON export; prints the run ids");
  cmd->add_option("file", o->file, "a markdown document (a published benchmark document, an opbench report) or an export (.json)")
      ->required();
  cmd->add_option("--db", cli.db, "the SQLite database (created when missing)")->capture_default_str()->check(db_arg());
  cmd->add_option("--label", o->label, "a label for the runs of a markdown document (select them later with label:TEXT)")->check(name_arg());
  cmd->add_option("--max-points", o->max_points, "refuse a markdown document of more points than this")
      ->check(positive_count())
      ->capture_default_str();
  cmd->callback([o, &cli] {
    check_db_path(cli.db, true);
    const std::string text = read_document(o->file);
    std::vector<Imported> runs;
    std::vector<std::string> warnings;
    if (looks_like_json(text)) {
      if (!o->label.empty())
        throw InputError(o->file, "--label", "a JSON export keeps its runs' labels; --label is for markdown documents");
      runs = import_json(text, o->file, cli.db);
    } else {
      runs = import_markdown(text, o->file, o->label, o->max_points, cli.db, &warnings);
    }
    for (const auto& w : warnings) std::cerr << "warning: " << w << "\n";
    const auto store = Store::open_read_only(cli.db);
    report_runs(runs, *store, o->file, cli.db);
    cli.status = kExitOk;
  });
}

}  // namespace opbench

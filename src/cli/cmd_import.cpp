// opbench import FILE.md: a reference-format markdown document becomes runs (one per GPU).
#include <iostream>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "diff/import.hpp"

namespace opbench {

void add_import_command(CLI::App& app, Cli& cli) {
  struct Opts {
    std::string file, label;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand(
      "import", "store the tables of a markdown benchmark report (one run per GPU); prints the new run ids");
  cmd->add_option("file", o->file, "the markdown document (shared/reference/*.md, or an opbench report)")->required();
  cmd->add_option("--db", cli.db, "the SQLite database (created when missing)")->capture_default_str()->check(file_arg());
  cmd->add_option("--label", o->label, "a label for the runs (select them later with label:TEXT)")->check(name_arg());
  cmd->callback([o, &cli] {
    // Parse first: an unreadable document leaves no database and no run behind.
    ImportResult res = import_document(read_document(o->file), o->file, o->label);
    ensure_parent_dir(cli.db);
    Store store(cli.db);
    store_import(store, res);
    for (const auto& w : res.warnings) std::cerr << "warning: " << w << "\n";
    for (const auto& ir : res.runs) {
      std::cerr << "run " << ir.run.id << ": " << (ir.run.env.gpu.empty() ? "unknown device" : ir.run.env.gpu)
                << ", " << ir.tables << " tables, " << ir.points.size() << " points imported from " << o->file
                << " (" << cli.db << ")\n";
      std::cout << ir.run.id << "\n";
    }
    cli.status = kExitOk;
  });
}

}  // namespace opbench

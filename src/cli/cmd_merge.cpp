// opbench merge SRC.db... --db DEST: copy runs written on other machines into one database.
#include <iostream>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "exchange/merge.hpp"

namespace opbench {

void add_merge_command(CLI::App& app, Cli& cli) {
  auto sources = std::make_shared<std::vector<std::string>>();
  auto* cmd = app.add_subcommand(
      "merge", "copy the runs of other databases into --db (ids remapped; a run already there, by uuid, is skipped)");
  cmd->add_option("sources", *sources, "databases to copy from")->required();
  cmd->add_option("--db", cli.db, "the destination database (created when missing)")->capture_default_str()->check(file_arg());
  cmd->callback([sources, &cli] {
    auto srcs = open_merge_sources(*sources, cli.db);  // before the destination is created
    ensure_parent_dir(cli.db);
    Store dest(cli.db);
    auto stats = merge_stores(dest, srcs);
    for (size_t i = 0; i < stats.size(); ++i) {
      for (const auto& w : stats[i].warnings) std::cerr << "warning: " << w << "\n";
      std::cout << (*sources)[i] << ": " << stats[i].copied << " runs copied (" << stats[i].points << " points), "
                << stats[i].skipped << " already in " << cli.db << "\n";
      for (const auto& [from, to] : stats[i].remapped) std::cout << "  run " << from << " -> " << to << "\n";
    }
    cli.status = kExitOk;
  });
}

}  // namespace opbench

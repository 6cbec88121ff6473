// opbench merge SRC.db... --db DEST: copy runs written on other machines into one database;
// with --join-shards, join the shards of one sweep (databases or JSON exports) into one run.
#include <iostream>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "sweep/join_shards.hpp"
#include "exchange/merge.hpp"

namespace opbench {

namespace {

struct MergeArgs {
  std::vector<std::string> sources;
  bool join_shards = false, allow_mixed = false;
};

void copy_runs(const MergeArgs& a, Cli& cli) {
  auto srcs = open_merge_sources(a.sources, cli.db);  // before the destination is created
  ensure_parent_dir(cli.db);
  Store dest(cli.db);
  auto stats = merge_stores(dest, srcs);
  for (size_t i = 0; i < stats.size(); ++i) {
    for (const auto& w : stats[i].warnings) std::cerr << "warning: " << w << "\n";
    std::cout << a.sources[i] << ": " << stats[i].copied << " runs copied";
    if (stats[i].completed) std::cout << ", " << stats[i].completed << " completed";
    std::cout << " (" << stats[i].points << " points), " << stats[i].skipped << " already in " << cli.db << "\n";
    for (const auto& [from, to] : stats[i].remapped) std::cout << "  run " << from << " -> " << to << "\n";
  }
}

void join(const MergeArgs& a, Cli& cli) {
  const std::vector<SourcedRun> runs = read_runs(a.sources, cli.db);  // before the destination is created
  std::vector<RunRecord> joined = {join_shards(runs, a.allow_mixed)};
  ensure_parent_dir(cli.db);
  Store dest(cli.db);
  const bool added = insert_new_runs(dest, joined).front();
  const RunRecord& r = joined.front();
  std::cout << "joined " << runs.size() << " shards (" << r.points.size() << " points) "
            << (added ? "into " : "already in ") << cli.db << " as run " << r.run.id << "\n";
}

}  // namespace

void add_merge_command(CLI::App& app, Cli& cli) {
  auto a = std::make_shared<MergeArgs>();
  auto* cmd = app.add_subcommand(
      "merge", "copy the runs of other databases into --db (ids remapped; a run already there, by uuid, is skipped)");
  cmd->add_option("sources", a->sources, "databases to copy from (with --join-shards: databases or JSON exports)")
      ->required();
  cmd->add_option("--db", cli.db, "the destination database (created when missing)")->capture_default_str()->check(db_arg());
  cmd->add_flag("--join-shards", a->join_shards,
                "join the runs of the shards of one sweep (sweep --shard i/N) into one run: every shard once");
  cmd->add_flag("--allow-mixed", a->allow_mixed, "with --join-shards: shards measured on different GPU models");
  cmd->callback([a, &cli] {
    check_db_path(cli.db, true);
    if (a->join_shards) join(*a, cli);
    else copy_runs(*a, cli);
    cli.status = kExitOk;
  });
}

}  // namespace opbench

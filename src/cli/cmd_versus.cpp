// opbench versus RUN --provider P --against A,B: within one run, a provider against the best
// of other providers point by point, with diff's noise-aware verdicts (src/diff/versus.cpp);
// exit 1 under --fail-on-slower when a point is SLOWER.
#include <iostream>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "diff/diff.hpp"

namespace opbench {

void add_versus_command(CLI::App& app, Cli& cli) {
  struct Opts : JudgeOptions {
    std::string run, provider;
    std::vector<std::string> against;
  };
  auto o = std::make_shared<Opts>();
  o->metric = "speed";
  o->threshold_pct = 0;
  auto* cmd = app.add_subcommand("versus", "within one run, a provider against the best of others point by point (noise-aware verdicts)");
  cmd->add_option("run", o->run, "the run: ID, latest, label:TEXT or gpu:TEXT")->required();
  cmd->add_option("--provider", o->provider, "the provider to judge (name or column label)")->required();
  cmd->add_option("--against", o->against, "the providers to compare against, comma-separated; per point the one with the lowest value")
      ->required()
      ->delimiter(',')
      ->allow_extra_args(false);  // one value (a list) per --against: a run id after it stays the run
  add_judge_options(cmd, cli, *o, "speed or memory points");
  cmd->add_flag("--fail-on-slower", o->fail, "exit 1 when a point of the provider is SLOWER than the best against");
  cmd->callback([o, &cli] {
    check_out_path(o->out, cli.db);
    auto db = open_existing_store(cli.db);
    Store& store = *db;
    RunInfo r = store.select(o->run);
    DiffResult d = versus_run(RunRecord{r, store.points(r.id)}, VersusOptions{o->provider, o->against, o->metric, o->threshold_pct / 100, o->normalize == "peak"});
    write_output(o->format == "json" ? diff_json(d) : diff_markdown(d), o->out);
    const size_t slower = d.count(Verdict::Slower), errors = d.count(Verdict::Error);
    std::cerr << "versus run " << r.id << (r.label.empty() ? "" : " (" + r.label + ")") << ": " << d.opt.versus << ": "
              << d.rows.size() << " points, " << slower << " slower, " << d.count(Verdict::Faster) << " faster, "
              << d.count(Verdict::Unsure) << " unsure, " << d.count(Verdict::Same) << " same";
    if (errors) std::cerr << ", " << errors << " error";
    std::cerr << "\n";
    cli.status = o->fail && slower ? kExitRegression : kExitOk;
  });
}

}  // namespace opbench

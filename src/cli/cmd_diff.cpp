// opbench diff BASE HEAD: two runs point by point with a noise-aware verdict each
// (src/diff/verdict.hpp); exit 1 under --fail-on-regression when a point got slower, or a
// provider as a whole (src/diff/provider_verdict.hpp).
#include <iostream>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "diff/diff.hpp"

namespace opbench {

void add_diff_command(CLI::App& app, Cli& cli) {
  struct Opts : JudgeOptions {
    std::string base, head, map;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("diff", "compare two runs point by point (noise-aware verdicts, summary per provider)");
  cmd->add_option("base", o->base, "the base run: ID, latest, label:TEXT or gpu:TEXT")->required();
  cmd->add_option("head", o->head, "the head run: ID, latest, label:TEXT or gpu:TEXT")->required();
  add_judge_options(cmd, cli, *o, "only speed or only memory points (default: both)");
  cmd->add_flag("--fail-on-regression", o->fail, "exit 1 when a point is SLOWER by more than the threshold (or newly fails), or a provider is SLOWER as a whole");
  cmd->add_option("--map", o->map, "BASE_LABEL=HEAD_LABEL,...: match a base column to a head provider or label (e.g. tr=cuda)");
  cmd->callback([o, &cli] {
    check_out_path(o->out, cli.db);
    auto db = open_existing_store(cli.db);
    Store& store = *db;
    DiffOptions opt;
    opt.metric = o->metric;
    opt.threshold = o->threshold_pct / 100;
    opt.normalize_peak = o->normalize == "peak";
    if (!o->map.empty()) opt.map = parse_label_map(o->map);
    RunInfo b = store.select(o->base), h = store.select(o->head);
    RunRecord base{b, store.points(b.id)}, head{h, store.points(h.id)};
    opt.calibrations = calibrations_near(store.runs(), b, h);
    DiffResult d = diff_runs(base, head, opt);
    write_output(o->format == "json" ? diff_json(d) : diff_markdown(d), o->out);
    for (const auto& w : d.warnings) std::cerr << "diff: warning: " << w << "\n";
    std::cerr << "diff " << run_brief(d.base) << " -> " << run_brief(d.head) << ": " << d.rows.size()
              << " points matched, " << d.regressions << " regression" << (d.regressions == 1 ? "" : "s");
    if (const size_t device = d.count(Verdict::Device))
      std::cerr << " (and " << device << " DEVICE: changes the devices' calibrations explain, not counted)";
    std::cerr << "\n";
    cli.status = o->fail && d.regressions ? kExitRegression : kExitOk;
  });
}

}  // namespace opbench

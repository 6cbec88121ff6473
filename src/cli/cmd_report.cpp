// opbench report / runs: read the store.
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "report/report.hpp"

namespace opbench {

void add_report_command(CLI::App& app, Cli& cli) {
  struct Opts {
    std::vector<std::string> runs;
    std::string out, show = "value";
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("report", "write a markdown report of one or more runs");
  cmd->add_option("--db", cli.db, "the SQLite database")->capture_default_str()->check(file_arg());
  cmd->add_option("--run", o->runs, "run selector: ID, latest, label:TEXT, gpu:TEXT (repeatable; default latest)");
  cmd->add_option("--out", o->out, "write to this file instead of stdout")->check(file_arg());
  cmd->add_option("--show", o->show, "cells: value (the stored statistic), gbps, pct (of peak bandwidth)")
      ->check(CLI::IsMember({"value", "gbps", "pct"}));
  cmd->callback([o, &cli] {
    check_out_path(o->out, cli.db);
    auto store = open_existing_store(cli.db);
    std::vector<std::string> sels = o->runs.empty() ? std::vector<std::string>{"latest"} : o->runs;
    std::vector<ReportRun> runs;
    for (const auto& s : sels) {
      RunInfo r = store->select(s);
      runs.push_back({r, store->points(r.id)});
    }
    Show show = o->show == "gbps" ? Show::GBps : o->show == "pct" ? Show::PctPeak : Show::Value;
    write_output(render_report(runs, show), o->out);
    cli.status = kExitOk;
  });
}

void add_runs_command(CLI::App& app, Cli& cli) {
  auto format = std::make_shared<std::string>("table");
  auto* cmd = app.add_subcommand("runs", "list the runs in a database");
  cmd->add_option("--db", cli.db, "the SQLite database")->capture_default_str()->check(file_arg());
  cmd->add_option("--format", *format, "table or json")->check(CLI::IsMember({"table", "json"}));
  cmd->callback([format, &cli] {
    auto store = open_existing_store(cli.db);
    auto runs = store->runs();
    if (*format == "json") {
      nlohmann::ordered_json a = nlohmann::ordered_json::array();
      for (const auto& r : runs)
        a.push_back({{"id", r.id}, {"label", r.label}, {"gpu", r.env.gpu}, {"device", r.env.device},
                     {"torch", r.env.torch_version}, {"started_at", r.started_at},
                     {"finished_at", r.finished_at}, {"status", r.status}, {"points", r.points},
                     {"op", r.op}, {"config", r.config_path}, {"commit", r.git_commit},
                     {"peak_gbps", r.env.peak_gbps}, {"source", r.source}});
      // replace: a text an older opbench stored unchecked cannot stop the listing
      std::cout << a.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
    } else {
      std::printf("%-5s %-24s %-12s %-10s %-8s %-12s %-16s %s\n", "id", "started_at", "status", "points",
                  "torch", "op", "label", "gpu");
      for (const auto& r : runs)
        std::printf("%-5lld %-24s %-12s %-10lld %-8s %-12s %-16s %s\n", (long long)r.id, r.started_at.c_str(),
                    r.status.c_str(), (long long)r.points, r.env.torch_version.c_str(), r.op.c_str(),
                    r.label.c_str(), r.env.gpu.c_str());
    }
    cli.status = kExitOk;
  });
}

}  // namespace opbench

// opbench report / runs: read the store.
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "report/report.hpp"
#include "sweep/resume.hpp"

namespace opbench {

namespace {

// The run with its status as it stands now: "abandoned" when its process died.
RunInfo as_it_stands(const Store& store, RunInfo run) {
  run.status = effective_status(store, run);
  return run;
}

// For a run that did not finish: how to continue it (empty for the others).
std::string resume_hint(const Store& store, const RunInfo& run, const std::string& db) {
  if (run.status != "interrupted" && run.status != "abandoned") return "";
  return resume_command(stored_shape(store, run), db, run.id);
}

std::string holder_text(const RunLock& l) {
  return "pid " + std::to_string(l.holder.pid) + " on " + l.holder.host + " since " + l.since;
}

}  // namespace

void add_report_command(CLI::App& app, Cli& cli) {
  struct Opts {
    std::vector<std::string> runs;
    std::string out, show = "value";
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("report", "write a markdown report of one or more runs");
  cmd->add_option("--db", cli.db, "the SQLite database")->capture_default_str();
  cmd->add_option("--run", o->runs, "run selector: ID, latest, label:TEXT, gpu:TEXT (repeatable; default latest)");
  cmd->add_option("--out", o->out, "write to this file instead of stdout");
  cmd->add_option("--show", o->show, "cells: value (the stored statistic), gbps, pct (of peak bandwidth)")
      ->check(CLI::IsMember({"value", "gbps", "pct"}));
  cmd->callback([o, &cli] {
    auto store = open_existing_store(cli.db);
    std::vector<std::string> sels = o->runs.empty() ? std::vector<std::string>{"latest"} : o->runs;
    std::vector<ReportRun> runs;
    for (const auto& s : sels) {
      RunInfo r = as_it_stands(*store, store->select(s));
      runs.push_back({r, store->points(r.id)});
      const std::string hint = resume_hint(*store, r, cli.db);
      if (!hint.empty()) std::cerr << "run " << r.id << " is " << r.status << ": continue with `" << hint << "`\n";
    }
    Show show = o->show == "gbps" ? Show::GBps : o->show == "pct" ? Show::PctPeak : Show::Value;
    write_output(render_report(runs, show), o->out);
    cli.status = kExitOk;
  });
}

void add_runs_command(CLI::App& app, Cli& cli) {
  auto format = std::make_shared<std::string>("table");
  auto* cmd = app.add_subcommand("runs", "list the runs in a database");
  cmd->add_option("--db", cli.db, "the SQLite database")->capture_default_str();
  cmd->add_option("--format", *format, "table or json")->check(CLI::IsMember({"table", "json"}));
  cmd->callback([format, &cli] {
    auto store = open_existing_store(cli.db);
    std::vector<RunInfo> runs;
    for (const auto& r : store->runs()) runs.push_back(as_it_stands(*store, r));
    if (*format == "json") {
      nlohmann::ordered_json a = nlohmann::ordered_json::array();
      for (const auto& r : runs) {
        a.push_back({{"id", r.id}, {"label", r.label}, {"gpu", r.env.gpu}, {"device", r.env.device},
                     {"torch", r.env.torch_version}, {"started_at", r.started_at},
                     {"finished_at", r.finished_at}, {"status", r.status}, {"points", r.points},
                     {"op", r.op}, {"config", r.config_path}, {"commit", r.git_commit},
                     {"peak_gbps", r.env.peak_gbps}, {"source", r.source}});
        const std::string hint = resume_hint(*store, r, cli.db);
        if (!hint.empty()) a.back()["resume"] = hint;
        if (auto lock = store->run_lock(r.id))
          a.back()["holder"] = {{"host", lock->holder.host}, {"pid", lock->holder.pid}, {"since", lock->since}};
      }
      std::cout << a.dump(2) << "\n";
    } else {
      std::printf("%-5s %-24s %-12s %-10s %-8s %-12s %-16s %s\n", "id", "started_at", "status", "points",
                  "torch", "op", "label", "gpu");
      for (const auto& r : runs)
        std::printf("%-5lld %-24s %-12s %-10lld %-8s %-12s %-16s %s\n", (long long)r.id, r.started_at.c_str(),
                    r.status.c_str(), (long long)r.points, r.env.torch_version.c_str(), r.op.c_str(),
                    r.label.c_str(), r.env.gpu.c_str());
      for (const auto& r : runs) {
        const std::string hint = resume_hint(*store, r, cli.db);
        if (r.status == "running")
          if (auto lock = store->run_lock(r.id)) std::printf("run %lld: measured by %s\n", (long long)r.id, holder_text(*lock).c_str());
        if (r.status == "abandoned")
          if (auto lock = store->run_lock(r.id))
            std::printf("run %lld: abandoned by %s (the process is gone)\n", (long long)r.id, holder_text(*lock).c_str());
        if (!hint.empty()) std::printf("run %lld: continue with `%s`\n", (long long)r.id, hint.c_str());
      }
    }
    cli.status = kExitOk;
  });
}

}  // namespace opbench

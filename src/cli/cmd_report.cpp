// opbench report / runs: read the store.
#include <unistd.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "report/report.hpp"

namespace opbench {

namespace {

std::vector<std::string> path_parts(const std::string& path) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : path + "/") {
    if (c != '/') {
      cur += c;
      continue;
    }
    if (cur == "..") {
      if (!parts.empty() && parts.back() != "..") parts.pop_back();
      else parts.push_back(cur);
    } else if (!cur.empty() && cur != ".") {
      parts.push_back(cur);
    }
    cur.clear();
  }
  return parts;
}

std::string absolute(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  char buf[4096];
  return std::string(getcwd(buf, sizeof buf) ? buf : ".") + "/" + path;
}

// `path` as seen from the folder of the file `from` (a report's links to its plots).
std::string relative_to_file(const std::string& path, const std::string& from) {
  auto p = path_parts(absolute(path)), f = path_parts(absolute(from));
  if (!f.empty()) f.pop_back();  // the file's folder
  size_t common = 0;
  while (common < p.size() && common < f.size() && p[common] == f[common]) ++common;
  std::string out;
  for (size_t i = common; i < f.size(); ++i) out += "../";
  for (size_t i = common; i < p.size(); ++i) out += p[i] + (i + 1 < p.size() ? "/" : "");
  return out;
}

}  // namespace

void add_report_command(CLI::App& app, Cli& cli) {
  struct Opts {
    std::vector<std::string> runs;
    std::string out, show = "value", filter, plots;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("report", "write a markdown report of one or more runs");
  cmd->add_option("--db", cli.db, "the SQLite database")->capture_default_str();
  cmd->add_option("--run", o->runs, "run selector: ID, latest, label:TEXT, gpu:TEXT (repeatable; default latest)");
  cmd->add_option("--out", o->out, "write to this file instead of stdout");
  cmd->add_option("--show", o->show, "cells: value (the stored statistic), gbps, pct (of peak bandwidth)")
      ->check(CLI::IsMember({"value", "gbps", "pct"}));
  cmd->add_option("--filter", o->filter, "only tables whose title matches this regular expression");
  cmd->add_option("--plots", o->plots, "also draw each table into this folder (as opbench plot) and link the images");
  cmd->callback([o, &cli] {
    TitleFilter filter(o->filter);
    auto store = open_existing_store(cli.db);
    std::vector<ReportRun> runs = load_runs(*store, o->runs, filter);
    Show show = parse_show(o->show);
    std::map<std::string, std::string> links;
    if (!o->plots.empty())
      for (auto& [title, path] : make_plots(runs, show, o->plots, std::cerr))
        links[title] = o->out.empty() ? path : relative_to_file(path, o->out);
    write_output(render_report(runs, show, links), o->out);
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
    auto runs = store->runs();
    if (*format == "json") {
      nlohmann::ordered_json a = nlohmann::ordered_json::array();
      for (const auto& r : runs)
        a.push_back({{"id", r.id}, {"label", r.label}, {"gpu", r.env.gpu}, {"device", r.env.device},
                     {"torch", r.env.torch_version}, {"started_at", r.started_at},
                     {"finished_at", r.finished_at}, {"status", r.status}, {"points", r.points},
                     {"op", r.op}, {"config", r.config_path}, {"commit", r.git_commit},
                     {"peak_gbps", r.env.peak_gbps}, {"source", r.source}});
      std::cout << a.dump(2) << "\n";
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

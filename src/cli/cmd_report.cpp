// opbench report: the stored runs as markdown tables, JSON or CSV.
#include <algorithm>
#include <iostream>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "exchange/runs_json.hpp"
#include "report/csv.hpp"
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
  return fs::resolved(".") + "/" + path;
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
    std::string out, show = "value", format = "markdown", filter, plots;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("report", "write a report of one or more runs: markdown tables, JSON or CSV");
  cmd->add_option("--db", cli.db, "the SQLite database")->capture_default_str()->check(db_arg());
  cmd->add_option("--run", o->runs, "run selector: ID, latest, label:TEXT, gpu:TEXT (repeatable; default latest)");
  cmd->add_option("--out", o->out, "write to this file instead of stdout")->check(file_arg());
  cmd->add_option("--show", o->show, "cells: value (the stored statistic), gbps, pct (of peak bandwidth)")
      ->check(CLI::IsMember({"value", "gbps", "pct"}));
  cmd->add_option("--format", o->format,
                  "markdown; json (the objects of opbench export); csv (a row per point, every statistic)")
      ->check(CLI::IsMember({"markdown", "json", "csv"}))
      ->capture_default_str();
  cmd->add_option("--filter", o->filter, "only tables whose title matches this regular expression");
  cmd->add_option("--plots", o->plots, "also draw each table into this folder (as opbench plot) and link the images");
  cmd->callback([o, &cli] {
    check_out_path(o->out, cli.db);
    check_out_dir(o->plots, "--plots", {}, {cli.db});
    const TitleFilter filter(o->filter);
    auto store = open_existing_store(cli.db);
    if (o->format == "json") {
      std::vector<RunRecord> records =
          selected_runs(*store, o->runs.empty() ? std::vector<std::string>{"latest"} : o->runs, false);
      for (auto& rec : records)
        rec.points.erase(std::remove_if(rec.points.begin(), rec.points.end(),
                                        [&](const StoredPoint& p) { return !filter(p.point.title); }),
                         rec.points.end());
      write_output(runs_to_json(records), o->out);
      cli.status = kExitOk;
      return;
    }
    std::vector<RunRecord> runs = load_runs(*store, o->runs, filter);
    for (auto& rr : runs) {
      rr.run = as_it_stands(*store, rr.run);
      const std::string hint = resume_hint(*store, rr.run, cli.db);
      if (!hint.empty()) std::cerr << "run " << rr.run.id << " is " << rr.run.status << ": continue with `" << hint << "`\n";
    }
    const Show show = parse_show(o->show);
    if (o->format == "csv") {
      write_output(render_csv(runs), o->out);
      cli.status = kExitOk;
      return;
    }
    std::map<std::string, std::string> links;
    if (!o->plots.empty())
      for (auto& [title, path] : make_plots(runs, show, o->plots, std::cerr, "--plots", {cli.db}))
        links[title] = o->out.empty() ? path : relative_to_file(path, o->out);
    write_output(render_report(runs, show, links), o->out);
    cli.status = kExitOk;
  });
}

}  // namespace opbench

// opbench report / runs: read the store.
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/text.hpp"
#include "exchange/runs_json.hpp"
#include "report/csv.hpp"
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
  return resume_command(stored_options(store, run), db, run.id);
}

// The devices that measured a run, with their shares and placement (as export writes them).
nlohmann::ordered_json devices_json(const std::vector<RunDevice>& devices) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& d : devices) out.push_back(run_device_to_json(d));
  return out;
}

std::string holder_text(const RunLock& l) {
  return "pid " + std::to_string(l.holder.pid) + " on " + l.holder.host + " since " + l.since;
}

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

// Where a run's time went: {"wall_s", "timed_s", "wall_per_timed", "stages": {stage: seconds}};
// null when it was not recorded.
nlohmann::ordered_json time_json(const StageTimes& t) {
  if (t.empty()) return nullptr;
  const double wall = t.wall(), timed = t.timed();
  return {{"wall_s", wall},
          {"timed_s", timed},
          {"wall_per_timed", timed > 0 ? nlohmann::ordered_json(wall / timed) : nlohmann::ordered_json()},
          {"stages", stages_json(t)}};
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
    std::vector<ReportRun> runs = load_runs(*store, o->runs, filter);
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

void add_runs_command(CLI::App& app, Cli& cli) {
  auto format = std::make_shared<std::string>("table");
  auto out = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("runs", "list the runs in a database");
  cmd->add_option("--db", cli.db, "the SQLite database")->capture_default_str()->check(db_arg());
  cmd->add_option("--format", *format, "table or json")->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("--out", *out, "write to this file instead of stdout")->check(file_arg());
  cmd->callback([format, out, &cli] {
    check_out_path(*out, cli.db);
    auto store = open_existing_store(cli.db);
    std::vector<RunInfo> runs;
    for (const auto& r : store->runs()) runs.push_back(as_it_stands(*store, r));
    std::string text;
    if (*format == "json") {
      auto tuning_json = [](const RunInfo& r) {  // variable -> value; null when not recorded
        if (!r.env.tuning) return nlohmann::ordered_json();
        nlohmann::ordered_json o = nlohmann::ordered_json::object();
        for (const auto& [k, v] : *r.env.tuning) o[k] = v;
        return o;
      };
      nlohmann::ordered_json a = nlohmann::ordered_json::array();
      for (const auto& r : runs) {
        a.push_back({{"id", r.id}, {"label", r.label}, {"gpu", r.env.gpu}, {"device", r.env.device},
                     {"torch", r.env.torch_version}, {"started_at", r.started_at},
                     {"finished_at", r.finished_at}, {"status", r.status}, {"points", r.points},
                     {"op", r.op}, {"config", r.config_path}, {"commit", r.git_commit},
                     {"peak_gbps", r.env.peak_gbps}, {"source", r.source}});
        for (const RunField& f : run_fields())  // how it was timed: null when unknown
          if (f.listed) a.back()[f.key] = f.known(r) ? run_field_to_json(f, r) : nlohmann::ordered_json();
        a.back()["tuning"] = tuning_json(r);
        a.back()["time"] = time_json(r.stages);
        if (const auto stops = store->stop_counts(r.id); !stops.empty())
          for (const auto& [reason, n] : stops) a.back()["stops"][reason] = n;
        if (!r.shard.empty()) a.back()["shard"] = r.shard;
        if (!r.shards.empty()) a.back()["shards"] = std::stoll(r.shards);
        if (!r.devices.empty()) a.back()["devices"] = devices_json(r.devices);
        const std::string hint = resume_hint(*store, r, cli.db);
        if (!hint.empty()) a.back()["resume"] = hint;
        if (auto lock = store->run_lock(r.id))
          a.back()["holder"] = {{"host", lock->holder.host}, {"pid", lock->holder.pid}, {"since", lock->since}};
      }
      // replace: a text an older opbench stored unchecked cannot stop the listing
      text = a.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
    } else {
      // Each column padded to its width (as printf's %-Ns), never cut: a long label widens its row.
      auto row = [](const std::vector<std::pair<std::string, size_t>>& cells) {
        std::string line;
        for (const auto& [text, width] : cells) line += pad_right(text, width) + " ";
        line.pop_back();
        return line + "\n";
      };
      text = row({{"id", 5}, {"started_at", 24}, {"status", 12}, {"points", 10}, {"torch", 8}, {"op", 12}, {"label", 16}, {"gpu", 0}});
      for (const auto& r : runs)
        text += row({{std::to_string(r.id), 5}, {r.started_at, 24}, {r.status, 12}, {std::to_string(r.points), 10},
                     {r.env.torch_version, 8}, {r.op, 12}, {one_line(r.label), 16}, {one_line(r.env.gpu), 0}});
      for (const auto& r : runs) {
        const std::string hint = resume_hint(*store, r, cli.db);
        if (!r.shard.empty()) text += "run " + std::to_string(r.id) + ": shard " + r.shard + " of its sweep\n";
        if (!r.shards.empty()) text += "run " + std::to_string(r.id) + ": joined from " + r.shards + " shards\n";
        if (r.status == "running")
          if (auto lock = store->run_lock(r.id)) text += "run " + std::to_string(r.id) + ": measured by " + holder_text(*lock) + "\n";
        if (r.status == "abandoned")
          if (auto lock = store->run_lock(r.id))
            text += "run " + std::to_string(r.id) + ": abandoned by " + holder_text(*lock) + " (the process is gone)\n";
        if (!hint.empty()) text += "run " + std::to_string(r.id) + ": continue with `" + hint + "`\n";
      }
    }
    write_output(text, *out);
    cli.status = kExitOk;
  });
}

}  // namespace opbench

// opbench runs: list the runs of a store, as a table or as JSON.
#include <nlohmann/json.hpp>

#include "cli/cli.hpp"
#include "core/text.hpp"
#include "record/run_device_json.hpp"
#include "record/run_json.hpp"

namespace opbench {

namespace {

using json = nlohmann::ordered_json;

// The devices that measured a run, with their shares and placement (as export writes them).
json devices_json(const std::vector<RunDevice>& devices) {
  json out = json::array();
  for (const auto& d : devices) out.push_back(run_device_to_json(d));
  return out;
}

// Where a run's time went: {"wall_s", "timed_s", "wall_per_timed", "stages": {stage: seconds}};
// null when it was not recorded.
json time_json(const StageTimes& t) {
  if (t.empty()) return nullptr;
  const double wall = t.wall(), timed = t.timed();
  return {{"wall_s", wall},
          {"timed_s", timed},
          {"wall_per_timed", timed > 0 ? json(wall / timed) : json()},
          {"stages", stages_json(t)}};
}

// The tuning variables set for a run's providers: variable -> value; null when not recorded.
json tuning_json(const RunInfo& r) {
  if (!r.env.tuning) return json();
  json o = json::object();
  for (const auto& [k, v] : *r.env.tuning) o[k] = v;
  return o;
}

// A run as `runs --format json` lists it: what it measured and how, and what stands of it now
// (the points' stops, its shards and devices, how to continue it, the process holding it).
json run_listing_json(const Store& store, const RunInfo& r, const std::string& db) {
  json j{{"id", r.id}, {"uuid", r.uuid}, {"label", r.label}, {"gpu", r.env.gpu}, {"device", r.env.device},
         {"torch", r.env.torch_version}, {"started_at", r.started_at},
         {"finished_at", r.finished_at}, {"status", r.status}, {"points", r.points},
         {"op", r.op}, {"config", r.config_path}, {"commit", r.git_commit},
         {"peak_gbps", r.env.peak_gbps}, {"source", r.source}};
  for (const RunField& f : run_fields())  // how it was timed: null when unknown
    if (f.listed) j[*f.key ? f.key : f.name] = f.known(r) ? run_field_to_json(f, r) : json();  // a field not exported: its name
  j["tuning"] = tuning_json(r);
  j["time"] = time_json(r.stages);
  if (const auto stops = store.stop_counts(r.id); !stops.empty())
    for (const auto& [reason, n] : stops) j["stops"][reason] = n;
  if (!r.shard.empty()) j["shard"] = r.shard;
  if (!r.shards.empty()) j["shards"] = std::stoll(r.shards);
  if (!r.devices.empty()) j["devices"] = devices_json(r.devices);
  const std::string hint = resume_hint(store, r, db);
  if (!hint.empty()) j["resume"] = hint;
  if (auto lock = store.run_lock(r.id))
    j["holder"] = {{"host", lock->holder.host}, {"pid", lock->holder.pid}, {"since", lock->since}};
  return j;
}

std::string runs_json_text(const Store& store, const std::vector<RunInfo>& runs, const std::string& db) {
  json a = json::array();
  for (const auto& r : runs) a.push_back(run_listing_json(store, r, db));
  // replace: a text an older opbench stored unchecked cannot stop the listing
  return a.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

// A line of the table: each column padded to its width (as printf's %-Ns), never cut, so a
// long label widens its row.
std::string table_row(const std::vector<std::pair<std::string, size_t>>& cells) {
  std::string line;
  for (const auto& [text, width] : cells) line += pad_right(text, width) + " ";
  line.pop_back();
  return line + "\n";
}

std::string holder_text(const RunLock& l) {
  return "pid " + std::to_string(l.holder.pid) + " on " + l.holder.host + " since " + l.since;
}

// The physical GPUs that measured a run and their calibrations, a line each ("" when unknown).
std::string device_notes(const RunInfo& r, const std::string& run) {
  std::string text;
  std::vector<RunDevice> devices = r.devices;
  if (devices.empty() && r.env.identity.known())
    devices.push_back(run_device(r.env.device, r.env.gpu, r.env.peak_gbps, r.env.identity));
  for (const auto& d : devices) {
    const std::string id = identity_text(d.identity), cal = calibration_text(d.calibration);
    if (!id.empty()) text += run + d.device + " is " + id + "\n";
    if (!cal.empty()) text += run + d.device + " calibration: " + cal + "\n";
  }
  return text;
}

// The lines under the table about one run: its shard or shards, the side of a paired
// comparison it is, its devices, the process measuring it or the one that abandoned it, and
// how to continue it.
std::string run_notes(const Store& store, const RunInfo& r, const std::string& db,
                      const std::map<std::string, int64_t>& ids) {
  std::string text;
  const std::string run = "run " + std::to_string(r.id) + ": ";
  const std::string hint = resume_hint(store, r, db);
  if (!r.shard.empty()) text += run + "shard " + r.shard + " of its sweep\n";
  if (!r.shards.empty()) text += run + "joined from " + r.shards + " shards\n";
  if (!r.side.empty()) {
    auto other = ids.find(r.pair);
    text += run + "the " + r.side + " side of a paired comparison (opbench ab) with run " +
            (other == ids.end() ? "uuid " + r.pair : std::to_string(other->second)) + "\n";
  }
  text += device_notes(r, run);
  if (r.status == "running")
    if (auto lock = store.run_lock(r.id)) text += run + "measured by " + holder_text(*lock) + "\n";
  if (r.status == "abandoned")
    if (auto lock = store.run_lock(r.id)) text += run + "abandoned by " + holder_text(*lock) + " (the process is gone)\n";
  if (!hint.empty()) text += run + "continue with `" + hint + "`\n";
  return text;
}

std::string runs_table_text(const Store& store, const std::vector<RunInfo>& runs, const std::string& db) {
  std::string text = table_row({{"id", 5}, {"started_at", 24}, {"status", 12}, {"points", 10}, {"torch", 8},
                                {"op", 12}, {"label", 16}, {"gpu", 0}});
  for (const auto& r : runs)
    text += table_row({{std::to_string(r.id), 5}, {r.started_at, 24}, {r.status, 12}, {std::to_string(r.points), 10},
                       {r.env.torch_version, 8}, {r.op, 12}, {one_line(r.label), 16}, {one_line(r.env.gpu), 0}});
  std::map<std::string, int64_t> ids;  // uuid -> id: the run a paired one names
  for (const auto& r : runs) ids[r.uuid] = r.id;
  for (const auto& r : runs) text += run_notes(store, r, db, ids);
  return text;
}

}  // namespace

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
    write_output(*format == "json" ? runs_json_text(*store, runs, cli.db) : runs_table_text(*store, runs, cli.db), *out);
    cli.status = kExitOk;
  });
}

}  // namespace opbench

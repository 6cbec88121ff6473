#include "sweep/join_shards.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/hash.hpp"
#include "exchange/merge.hpp"
#include "exchange/runs_json.hpp"
#include "store/whole_run.hpp"
#include "sweep/devices.hpp"
#include "sweep/resume.hpp"
#include "sweep/shard.hpp"

namespace opbench {

namespace {

struct ShardRun {
  const SourcedRun* run;
  Shard shard;
};

std::string option(const RunRecord& rec, const std::string& name) {
  for (const auto& [n, v] : rec.options)
    if (n == name) return v;
  return "";
}

std::string run_in(const SourcedRun& r) { return "run " + std::to_string(r.rec.run.id) + " in " + r.source; }

std::string shard_name(const ShardRun& s) { return "shard " + s.shard.text(); }

// Each run as a shard: refused when it is not one.
std::vector<ShardRun> as_shards(const std::vector<SourcedRun>& runs) {
  if (runs.empty()) throw InputError("--join-shards", "", "the sources hold no runs");
  std::vector<ShardRun> out;
  for (const auto& r : runs) {
    const std::string text = option(r.rec, "shard");
    if (text.empty()) throw InputError(r.source, "run " + std::to_string(r.rec.run.id), "is not a shard (swept without --shard)");
    out.push_back({&r, parse_shard(text, r.source + ": run " + std::to_string(r.rec.run.id) + ": shard")});
  }
  return out;
}

// Whatever shapes the points must be the same in every shard as in the first.
void check_one_sweep(const std::vector<ShardRun>& shards) {
  const ShardRun& first = shards.front();
  const RunRecord& a = first.run->rec;
  auto refuse = [&](const ShardRun& s, const std::string& what, const std::string& theirs, const std::string& ours) {
    throw InputError(s.run->source, shard_name(s) + " (" + run_in(*s.run) + ")",
                     "its " + what + " is " + (theirs.empty() ? "''" : theirs) + ", but " + shard_name(first) + "'s (" +
                         run_in(*first.run) + ") is " + (ours.empty() ? "''" : ours) + ": not shards of one sweep");
  };
  for (const auto& s : shards) {
    const RunRecord& b = s.run->rec;
    if (s.shard.count != first.shard.count)
      refuse(s, "shard count", std::to_string(s.shard.count), std::to_string(first.shard.count));
    if (b.run.config_hash != a.run.config_hash) refuse(s, "config hash", b.run.config_hash, a.run.config_hash);
    for (const char* name : {"providers", "filter"})
      if (option(b, name) != option(a, name)) refuse(s, name, option(b, name), option(a, name));
    if (b.run.git_commit != a.run.git_commit) refuse(s, "commit", b.run.git_commit, a.run.git_commit);
  }
}

// Every shard 1..N once, each finished.
void check_complete(const std::vector<ShardRun>& shards) {
  const int n = shards.front().shard.count;
  std::map<int, const ShardRun*> seen;
  for (const auto& s : shards) {
    auto [it, fresh] = seen.emplace(s.shard.index, &s);
    if (!fresh)
      throw InputError("--join-shards", shard_name(s),
                       "given twice (" + run_in(*it->second->run) + ", " + run_in(*s.run) + ")");
  }
  for (int i = 1; i <= n; ++i)
    if (!seen.count(i)) throw InputError("--join-shards", "shard " + Shard{i, n}.text(), "missing");
  for (const auto& s : shards)
    if (s.run->rec.run.status != "done") {
      const RunInfo& r = s.run->rec.run;
      throw InputError(s.run->source, shard_name(s) + " (run " + std::to_string(r.id) + ")",
                       "is " + r.status + ", not done: finish it first (sweep --resume " + std::to_string(r.id) + ")");
    }
}

std::string device_name(const std::string& device, const std::string& host, bool hosts_differ) {
  return hosts_differ ? device + "@" + host : device;
}

std::vector<RunDevice> shard_devices(const RunInfo& r) {
  if (!r.devices.empty()) return r.devices;
  return {run_device(r.env.device, r.env.gpu, r.env.peak_gbps, r.env.identity)};
}

// A shard's device in the joined run as `name`: a device two shards measured on keeps the
// first one's model and placement and the sum of their shares.
void add_share(std::vector<RunDevice>& devices, const RunDevice& d, const std::string& name) {
  for (auto& have : devices)
    if (have.device == name) {
      have.cells += d.cells;
      have.points += d.points;
      have.busy_s += d.busy_s;
      return;
    }
  devices.push_back(d);
  devices.back().device = name;
}

RunRecord joined_run(const std::vector<ShardRun>& shards) {
  std::vector<const ShardRun*> in_order;
  for (const auto& s : shards) in_order.push_back(&s);
  std::sort(in_order.begin(), in_order.end(), [](auto* a, auto* b) { return a->shard.index < b->shard.index; });
  std::set<std::string> hosts;
  for (const auto* s : in_order) hosts.insert(s->run->rec.run.host);
  const bool hosts_differ = hosts.size() > 1;

  RunRecord out = in_order.front()->run->rec;
  RunInfo& r = out.run;
  r.id = 0;
  r.points = 0;
  r.shard.clear();
  r.devices.clear();
  r.stages = StageTimes();  // the shards' together: machine time, not the joined run's span
  out.points.clear();
  out.compiles.clear();
  std::string uuids;
  std::vector<std::string> runs, devices;
  for (const auto* s : in_order) {
    const SourcedRun& src = *s->run;
    const RunInfo& sr = src.rec.run;
    uuids += sr.uuid + "\x1f";
    runs.push_back(s->shard.text() + "=" + sr.uuid);
    r.started_at = std::min(r.started_at, sr.started_at);
    r.finished_at = std::max(r.finished_at, sr.finished_at);
    r.stages += sr.stages;
    for (const auto& d : shard_devices(sr)) add_share(r.devices, d, device_name(d.device, sr.host, hosts_differ));
    for (StoredPoint p : src.rec.points) {
      p.device = device_name(p.device.empty() ? sr.env.device : p.device, sr.host, hosts_differ);
      out.points.push_back(p);
    }
    out.compiles.insert(out.compiles.end(), src.rec.compiles.begin(), src.rec.compiles.end());
  }
  for (const auto& d : r.devices) devices.push_back(d.device);
  const std::string device_list = join_list(devices);
  r.host = join_list(std::vector<std::string>(hosts.begin(), hosts.end()));
  r.env.device = device_list;
  r.uuid = content_uuid("opbench-joined-shards\x1f" + uuids);
  std::stable_sort(out.points.begin(), out.points.end(),
                   [](const StoredPoint& a, const StoredPoint& b) { return a.seq < b.seq; });
  std::vector<std::pair<std::string, std::string>> options;
  for (const auto& [name, value] : out.options)
    if (name != "shard" && name != "device" && name != "devices") options.emplace_back(name, value);
  options.emplace_back("devices", device_list);
  options.emplace_back("shards", std::to_string(in_order.front()->shard.count));
  options.emplace_back("shard_runs", join_list(runs));
  out.options = options;
  return out;
}

// No point in two shards (the slices never overlap; a run edited by hand could).
void check_disjoint(const std::vector<ShardRun>& shards) {
  std::map<std::string, const ShardRun*> owner;
  for (const auto& s : shards)
    for (const auto& p : s.run->rec.points) {
      auto [it, fresh] = owner.emplace(p.point.key(), &s);
      if (!fresh)
        throw InputError("--join-shards", shard_name(s),
                         "holds " + p.point.title + " " + p.point.x_name + "=" + std::to_string(p.point.x_value) + " " +
                             p.point.provider + ", which " + shard_name(*it->second) + " holds too");
    }
}

}  // namespace

std::vector<SourcedRun> read_runs(const std::vector<std::string>& sources, const std::string& dest_path) {
  std::vector<SourcedRun> out;
  for (const auto& path : sources) {
    std::string text;
    if (fs::is_regular_file(path) && fs::read_file(path, &text) && is_runs_json(text)) {
      int64_t index = 0;
      for (auto& rec : runs_from_json(text, path)) {
        rec.run.id = ++index;  // named in messages by its place in the file
        out.push_back({path, std::move(rec)});
      }
      continue;
    }
    auto stores = open_merge_sources({path}, dest_path);
    for (const auto& run : stores.front()->runs()) out.push_back({path, load_run(*stores.front(), run)});
  }
  return out;
}

RunRecord join_shards(const std::vector<SourcedRun>& runs, bool allow_mixed) {
  const std::vector<ShardRun> shards = as_shards(runs);
  check_one_sweep(shards);
  check_complete(shards);
  check_disjoint(shards);
  RunRecord joined = joined_run(shards);
  check_one_model(joined.run.devices, allow_mixed, "--join-shards");
  return joined;
}

}  // namespace opbench

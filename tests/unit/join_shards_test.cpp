// merge --join-shards: the shards of one sweep joined into one run holding every point once
// (the same points as one unsharded sweep), the devices of all named per host, a deterministic
// uuid; a missing, doubled, unfinished or foreign shard refused naming it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "sweep/join_shards.hpp"
#include "exchange/runs_json.hpp"
#include "quick_executor.hpp"
#include "run_device.hpp"
#include "store/whole_run.hpp"
#include "sweep/runner.hpp"

using namespace opbench;

namespace {

const char* kConfig = R"(
op: act
x: {n: [256, 512, 1024, 2048]}
params: {batch: 1, head: 1, dim: 16, mode: [fwd, bwd], metric: [speed, memory]}
variants: [{act: relu}, {act: silu}]
providers: {torch: to, torch_compile: toc}
timing: {warmup_ms: 5, rep_ms: 20, rounds: 1}
)";

std::string temp_db(const std::string& name) {
  auto p = std::filesystem::temp_directory_path() / ("opbench_join_" + std::to_string(getpid()) + "_" + name + ".db");
  for (const char* s : {"", "-wal", "-shm"}) std::filesystem::remove(p.string() + s);
  return p.string();
}

// One sweep (a shard of it when count > 0) into its own database; the run with its source.
SourcedRun sweep(const std::string& name, const Shard& shard, const std::string& host = "node1",
                 const std::string& gpu = "NVIDIA H100", const std::string& config = kConfig) {
  const Config cfg = parse_config(config, "c.yaml");
  const Sweep sw = expand(cfg);
  const std::string path = temp_db(name);
  Store store(path);
  QuickExecutor ex(gpu);
  SweepOptions opt;
  opt.shape.device = "cuda:0";
  opt.shape.shard = shard.on() ? shard.text() : "";
  opt.host = host;
  opt.git_commit = "abc123";
  opt.shape.label = "nightly";
  std::ostringstream log;
  const SweepOutcome out = run_sweep(cfg, sw, ex, store, opt, log);
  return {path, load_run(store, *store.run(out.run_id))};
}

std::string error_of(const std::vector<SourcedRun>& runs) {
  try {
    join_shards(runs, false);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "joined";
  return "";
}

std::set<std::string> keys(const std::vector<StoredPoint>& points) {
  std::set<std::string> out;
  for (const auto& p : points) out.insert(p.point.key() + "@" + std::to_string(p.seq));
  return out;
}

}  // namespace

TEST(JoinShards, TheShardsOfOneSweepGiveTheSweepsPoints) {
  const SourcedRun whole = sweep("whole", Shard{});
  const std::vector<SourcedRun> shards = {sweep("s2", Shard{2, 3}, "node2"), sweep("s1", Shard{1, 3}, "node1"),
                                          sweep("s3", Shard{3, 3}, "node3")};
  const RunRecord joined = join_shards(shards, false);
  EXPECT_EQ(joined.points.size(), whole.rec.points.size());
  EXPECT_EQ(keys(joined.points), keys(whole.rec.points));  // same titles, x, providers and places; none twice
  for (size_t i = 1; i < joined.points.size(); ++i) EXPECT_LE(joined.points[i - 1].seq, joined.points[i].seq);
  const RunInfo& r = joined.run;
  EXPECT_EQ(r.status, "done");
  EXPECT_EQ(r.label, "nightly");
  EXPECT_EQ(r.config_hash, whole.rec.run.config_hash);
  EXPECT_EQ(r.host, "node1,node2,node3");
  EXPECT_EQ(r.env.device, "cuda:0@node1,cuda:0@node2,cuda:0@node3");
  ASSERT_EQ(r.devices.size(), 3u);
  expect_device(r.devices[1], "cuda:0@node2", "NVIDIA H100", 1000);
  int64_t shared = 0;  // each shard's device keeps its share
  for (const auto& d : r.devices) shared += d.points;
  EXPECT_EQ(shared, int64_t(joined.points.size()));
  std::set<std::string> devices;
  for (const auto& p : joined.points) devices.insert(p.device);
  EXPECT_EQ(devices, (std::set<std::string>{"cuda:0@node1", "cuda:0@node2", "cuda:0@node3"}));
  std::map<std::string, std::string> options(joined.options.begin(), joined.options.end());
  EXPECT_EQ(options["shards"], "3");
  EXPECT_EQ(options.count("shard"), 0u);
  EXPECT_EQ(options["shard_runs"].rfind("1/3=" + shards[1].rec.run.uuid + ",2/3=" + shards[0].rec.run.uuid, 0), 0u);
  // Joining the same shards again gives the same run; into a database that has it, nothing.
  EXPECT_EQ(join_shards({shards[2], shards[0], shards[1]}, false).run.uuid, r.uuid);
  Store dest(temp_db("dest"));
  std::vector<RunRecord> one = {joined};
  EXPECT_EQ(insert_new_runs(dest, one), std::vector<bool>{true});
  std::vector<RunRecord> again = {joined};
  EXPECT_EQ(insert_new_runs(dest, again), std::vector<bool>{false});
  const RunInfo stored = *dest.run(one[0].run.id);
  EXPECT_EQ(stored.shards, "3");
  EXPECT_EQ(stored.devices.size(), 3u);
}

TEST(JoinShards, OnOneHostTheDevicesKeepTheirNames) {
  const RunRecord joined = join_shards({sweep("h1", Shard{1, 2}), sweep("h2", Shard{2, 2})}, false);
  EXPECT_EQ(joined.run.env.device, "cuda:0");
  for (const auto& p : joined.points) EXPECT_EQ(p.device, "cuda:0");
}

TEST(JoinShards, RefusesWhatIsNotOneWholeSweep) {
  const SourcedRun a = sweep("a", Shard{1, 3}), b = sweep("b", Shard{2, 3}), c = sweep("c", Shard{3, 3});
  EXPECT_EQ(error_of({a, c}), "--join-shards: shard 2/3: missing");
  const std::string twice = error_of({a, b, c, a});
  EXPECT_EQ(twice, "--join-shards: shard 1/3: given twice (run 1 in " + a.source + ", run 1 in " + a.source + ")");
  const SourcedRun whole = sweep("w", Shard{});
  EXPECT_EQ(error_of({a, b, c, whole}), whole.source + ": run 1: is not a shard (swept without --shard)");
  const SourcedRun other_n = sweep("n", Shard{2, 2});
  EXPECT_NE(error_of({a, b, c, other_n}).find("its shard count is 2, but shard 1/3's"), std::string::npos);
  const SourcedRun other_config = sweep("o", Shard{2, 3}, "node1", "NVIDIA H100", std::string(kConfig) + "title: '{op}-{mode}-{act}-{metric}'\n");
  EXPECT_NE(error_of({a, other_config, c}).find("its config hash is"), std::string::npos);
  SourcedRun stopped = b;
  stopped.rec.run.status = "interrupted";
  EXPECT_NE(error_of({a, stopped, c}).find("shard 2/3 (run 1): is interrupted, not done"), std::string::npos);
  SourcedRun overlapping = b;
  overlapping.rec.points.push_back(a.rec.points.front());
  EXPECT_NE(error_of({a, overlapping, c}).find("which shard 1/3 holds too"), std::string::npos);
  EXPECT_EQ(error_of({}), "--join-shards: the sources hold no runs");
}

TEST(JoinShards, SeveralGpuModelsOnlyWhenAllowed) {
  const std::vector<SourcedRun> shards = {sweep("m1", Shard{1, 2}, "node1", "NVIDIA H100"),
                                          sweep("m2", Shard{2, 2}, "node2", "NVIDIA A100")};
  const std::string msg = error_of(shards);
  EXPECT_EQ(msg.rfind("--join-shards: cuda:0@node1,cuda:0@node2: the devices are different models", 0), 0u) << msg;
  EXPECT_NO_THROW(join_shards(shards, true));
}

TEST(JoinShards, ReadsDatabasesAndJsonExports) {
  const SourcedRun a = sweep("ja", Shard{1, 2}), b = sweep("jb", Shard{2, 2});
  const std::string json = temp_db("jb") + ".json";
  {
    FILE* f = std::fopen(json.c_str(), "w");
    const std::string text = runs_to_json({b.rec});
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
  const auto runs = read_runs({a.source, json}, temp_db("dest2"));
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[1].source, json);
  EXPECT_EQ(join_shards(runs, false).points.size(), a.rec.points.size() + b.rec.points.size());
  EXPECT_THROW(read_runs({temp_db("none")}, temp_db("dest2")), InputError);
  EXPECT_THROW(read_runs({a.source}, a.source), InputError);  // the destination itself
}

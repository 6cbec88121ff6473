// Shards of a sweep: --shard parsed (bad values refused naming the option), the slices
// deterministic, balanced by estimated time, every cell in exactly one shard, ties to the lowest
// shard, each shard's cells in sweep order; a sweep's run of one shard stores only its cells and
// records the shard.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "quick_executor.hpp"
#include "sweep/resume.hpp"
#include "sweep/runner.hpp"
#include "sweep/shard.hpp"

using namespace opbench;

namespace {

const char* kConfig = R"(
op: act
x: {n: [256, 512, 1024, 2048, 4096]}
params: {batch: 1, head: 1, dim: 16, mode: [fwd, bwd], metric: [speed, memory]}
variants: [{act: relu}, {act: silu}, {act: none}]
providers: {torch: to, torch_compile: toc}
timing: {warmup_ms: 5, rep_ms: 20}
)";

std::string expect_input_error(const std::string& text) {
  try {
    parse_shard(text);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted " << text;
  return "";
}

}  // namespace

TEST(Shard, ParsesIOfN) {
  EXPECT_EQ(parse_shard("1/2").index, 1);
  EXPECT_EQ(parse_shard("1/2").count, 2);
  EXPECT_EQ(parse_shard("3/3").text(), "3/3");
  EXPECT_EQ(parse_shard("1/1").text(), "1/1");
  EXPECT_FALSE(Shard().on());
  for (const char* bad : {"0/2", "3/2", "x", "", "1/", "/2", "1/0", "-1/2", "1.5/2", "2/x", "1/2/3", " 1/2"}) {
    const std::string msg = expect_input_error(bad);
    EXPECT_EQ(msg.rfind("--shard: ", 0), 0u) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
  EXPECT_NE(expect_input_error("0/2").find("1 to 2"), std::string::npos);
  EXPECT_NE(expect_input_error("3/2").find("1 to 2"), std::string::npos);
}

TEST(Shard, GreedyLongestFirstToTheLeastLoaded) {
  // Longest first: cell 1 (9) to slice 0; cell 3 (7) to 1; cell 0 (5) to 1 (7 < 9); cell 4 (5,
  // after cell 0) to 0 (9 < 12); cell 2 (2) to 1 (12 < 14).
  const std::vector<double> seconds = {5, 9, 2, 7, 5};
  EXPECT_EQ(slice_of_cells(seconds, 2), (std::vector<int>{1, 0, 1, 1, 0}));
  // Ties go to the lowest slice.
  EXPECT_EQ(slice_of_cells({1, 1, 1, 1}, 3), (std::vector<int>{0, 1, 2, 0}));
  // More slices than cells: the last ones empty.
  EXPECT_EQ(slice_of_cells({3}, 4), (std::vector<int>{0}));
}

TEST(Shard, EveryCellInExactlyOneShardBalancedAndInSweepOrder) {
  Config cfg = parse_config(kConfig, "c.yaml");
  const Sweep sw = expand(cfg);
  const std::vector<Cell> all = plan_cells(sw, {});
  for (int n : {1, 2, 3, 4, 7}) {
    std::map<size_t, int> owner;  // a cell's first point -> its shard
    std::vector<double> load;
    for (int i = 1; i <= n; ++i) {
      const std::vector<Cell> mine = shard_cells(sw, cfg.timing, Shard{i, n});
      EXPECT_EQ(mine.size(), shard_cells(sw, cfg.timing, Shard{i, n}).size());  // the same every time
      double s = 0;
      for (size_t k = 0; k < mine.size(); ++k) {
        EXPECT_TRUE(owner.emplace(mine[k].points.front(), i).second) << "cell in two shards";
        if (k) EXPECT_LT(mine[k - 1].points.front(), mine[k].points.front()) << "not in sweep order";
        s += cell_seconds(sw, mine[k], cfg.timing);
      }
      load.push_back(s);
    }
    EXPECT_EQ(owner.size(), all.size()) << n << " shards";  // every cell in one
    double longest = 0;
    for (const auto& c : all) longest = std::max(longest, cell_seconds(sw, c, cfg.timing));
    const auto [lo, hi] = std::minmax_element(load.begin(), load.end());
    EXPECT_LE(*hi - *lo, longest + 1e-9) << n << " shards";  // the greedy's bound
    EXPECT_EQ(slice_seconds(sw, all, cfg.timing, n), load);
  }
}

TEST(Shard, SameSlicesForTheSameConfigProvidersAndFilter) {
  Config a = parse_config(kConfig, "a.yaml"), b = parse_config(kConfig, "elsewhere/b.yaml");
  Sweep sa = expand(a), sb = expand(b);
  filter_providers(sa, a, {"torch"});
  filter_providers(sb, b, {"torch"});
  const auto ca = shard_cells(sa, a.timing, Shard{2, 3}), cb = shard_cells(sb, b.timing, Shard{2, 3});
  ASSERT_EQ(ca.size(), cb.size());
  for (size_t i = 0; i < ca.size(); ++i) EXPECT_EQ(ca[i].points, cb[i].points);
}

namespace {

std::string temp_db(const std::string& name) {
  auto p = std::filesystem::temp_directory_path() / ("opbench_shard_" + std::to_string(getpid()) + name + ".db");
  for (const char* s : {"", "-wal", "-shm"}) std::filesystem::remove(p.string() + s);
  return p.string();
}

}  // namespace

TEST(Shard, ARunOfOneShardStoresItsCellsAndRecordsTheShard) {
  Config cfg = parse_config(kConfig, "c.yaml");
  cfg.timing.rounds = 1;
  const Sweep sw = expand(cfg);
  std::set<std::string> seen;
  size_t total = 0;
  for (int i = 1; i <= 2; ++i) {
    Store store(temp_db(std::to_string(i)));
    QuickExecutor ex;
    SweepOptions opt;
    opt.shape.device = "cpu";
    opt.shape.shard = Shard{i, 2}.text();
    std::ostringstream log;
    const SweepOutcome out = run_sweep(cfg, sw, ex, store, opt, log);
    const RunInfo run = *store.run(out.run_id);
    EXPECT_EQ(run.shard, std::to_string(i) + "/2");
    EXPECT_EQ(stored_options(store, run).shard, std::to_string(i) + "/2");
    EXPECT_NE(resume_command(stored_options(store, run), "r.db", run.id).find(" --shard " + run.shard), std::string::npos);
    size_t want = 0;
    for (const auto& c : shard_cells(sw, cfg.timing, shard_of(opt.shape))) want += c.points.size();
    const auto points = store.points(out.run_id);
    EXPECT_EQ(points.size(), want);
    for (const auto& p : points) {
      EXPECT_TRUE(seen.insert(p.point.key()).second) << "a point in both shards";
      EXPECT_EQ(p.point.key(), sw.points[size_t(p.seq)].key());  // seq: its place in the whole sweep
      EXPECT_EQ(p.device, "cpu");
    }
    total += points.size();
  }
  EXPECT_EQ(total, sw.points.size());
}

// Where the time goes (measure/stages.hpp): a ledger's stages add up to the wall time it ran,
// nested scopes charge only their own time, moving and attributing time keep the sum, and a
// sweep stores the stages of its process from the last take to the end of the run, which add
// up to that wall time, with the protocol's own stages charged by the protocol itself.
#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <thread>

#include "measure/stages.hpp"
#include "report/provenance.hpp"
#include "sweep/runner.hpp"
#include "temp_db.hpp"
#include "virtual_clock.hpp"

using namespace opbench;
using Wall = std::chrono::steady_clock;

namespace {

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

double seconds(Wall::time_point a, Wall::time_point b) { return std::chrono::duration<double>(b - a).count(); }

}  // namespace

TEST(Stages, TheAccountsAddUpToTheWallTime) {
  const auto t0 = Wall::now();
  StageLedger ledger(t0);
  {
    StageScope a(Stage::placement, ledger);
    sleep_ms(20);
    {
      StageScope b(Stage::check, ledger);  // nested: taken out of placement
      sleep_ms(30);
    }
    sleep_ms(10);
  }
  sleep_ms(15);  // the base stage (start-up)
  const auto before = Wall::now();
  const StageTimes t = ledger.take();
  const auto after = Wall::now();
  EXPECT_GE(t.wall(), seconds(t0, before));
  EXPECT_LE(t.wall(), seconds(t0, after));
  EXPECT_GE(t[Stage::check], 0.030);
  EXPECT_LT(t[Stage::check], 0.030 + 0.025);
  EXPECT_GE(t[Stage::placement], 0.030);
  EXPECT_GE(t[Stage::startup], 0.015);
  // The next take starts where this one ended.
  sleep_ms(5);
  const auto again = Wall::now();
  const StageTimes u = ledger.take();
  EXPECT_GE(u.wall(), seconds(after, again));
  EXPECT_LE(u.wall(), seconds(before, Wall::now()));
}

TEST(Stages, MovingAndAttributingKeepTheSum) {
  StageLedger ledger(Wall::now(), Stage::other);
  {
    StageScope s(Stage::timed, ledger);
    sleep_ms(20);
    ledger.move(Stage::timed, Stage::flush, 0.005);
    ledger.move(Stage::timed, Stage::warmup, 10.0);  // no more than timed holds
  }
  sleep_ms(10);
  StageTimes remote;
  remote[Stage::timed] = 1.0;
  remote[Stage::placement] = 1.0;
  ledger.attribute(Stage::other, 0.004, remote);  // 4 ms waited: 2 ms each
  const StageTimes t = ledger.take();
  EXPECT_NEAR(t[Stage::flush], 0.005, 1e-9);
  EXPECT_NEAR(t[Stage::timed], 0.002, 1e-3);  // the remote's share: nearly all of its own was moved
  EXPECT_GE(t[Stage::warmup], 0.015 - 1e-9);
  EXPECT_NEAR(t[Stage::placement], 0.002, 1e-12);
  EXPECT_GE(t[Stage::other], 0.010 - 0.004);
}

TEST(Stages, StoredAndReadBack) {
  StageTimes t;
  t[Stage::startup] = 1.5;
  t[Stage::timed] = 10;
  t[Stage::flush] = 2;
  EXPECT_EQ(stages_of_json(stages_json(t)).seconds, t.seconds);
  EXPECT_TRUE(stages_json(StageTimes()).is_null());
  EXPECT_EQ(stages_of_json(nlohmann::ordered_json::parse(R"({"timed": 2, "from_a_newer_build": 1})"))[Stage::timed], 2);
  EXPECT_EQ(stages_text(t), "13.5 s wall, 1.12x the 12.0 s timed (warm-up, timed calls, L2 flushes): timed calls 10.0 s, "
                            "L2 flushes 2.0 s, start-up 1.5 s");
}

namespace {

// Speed points through bench_round on a virtual clock (the protocol charges its stages), with
// some real time spent placing memory.
class PlacingExecutor : public SyntheticExecutor {
 public:
  PlacingExecutor() : SyntheticExecutor([](const Point&, int, size_t) { return 0.05; }, 0.01) {}
  Environment environment() override {
    Environment e;
    e.gpu = "Virtual GPU";
    return e;
  }
  Result measure(const Point& p, const Timing& t) override {
    {
      StageScope placing(Stage::placement);
      sleep_ms(2);
    }
    return SyntheticExecutor::measure(p, t);
  }
};

}  // namespace

TEST(Stages, ASweepStoresWhereItsWallTimeWent) {
  Config cfg = parse_config(R"(
op: act
x: {n: [256, 512]}
params: {batch: 1, head: 1, dim: 16, mode: fwd, metric: [speed, memory], act: relu}
providers: {torch: to}
timing: {rounds: 4}
)",
                            "c.yaml");
  PlacingExecutor ex;
  Store store(fresh_db_path("stages", "sweep.db"));
  std::ostringstream log;
  const auto t0 = Wall::now();
  StageLedger::process().take();  // the time before this test is not the run's
  const SweepOutcome out = run_sweep(cfg, expand(cfg), ex, store, {}, log);
  const auto t1 = Wall::now();
  const RunInfo run = *store.run(out.run_id);
  EXPECT_GT(run.stages.wall(), 0.0);
  EXPECT_LE(run.stages.wall(), seconds(t0, t1));
  EXPECT_GE(run.stages.wall(), seconds(t0, t1) - 0.05);  // all but ending the run
  EXPECT_GE(run.stages[Stage::placement], 2 * 4 * 0.002);  // two speed points, four rounds
  EXPECT_GT(run.stages[Stage::store], 0.0);
  for (double s : run.stages.seconds) EXPECT_GE(s, 0.0);
  EXPECT_EQ(run.stop_rule, "noise");
  EXPECT_EQ(run.min_rounds, 4);
  EXPECT_NE(time_line(run).find("time: "), std::string::npos);
}

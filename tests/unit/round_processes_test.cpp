// Rounds spread over processes (sweep/round_processes.hpp), against fake workers running the
// real worker loop: round 0 in this process, round r in worker r mod N, placement passed on
// with the next measure, a worker that dies replaced and the round measured again, a point
// whose workers die twice lost (not stored) and measured by the resume. The workers read the
// config (worker protocol 1), or are told it and handed each point (protocol 2) with the file gone.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <set>

#include "core/error.hpp"
#include "points/points.hpp"
#include "quick_executor.hpp"
#include "sweep/measurer.hpp"
#include "sweep/round_processes.hpp"
#include "sweep/runner.hpp"
#include "temp_db.hpp"

using namespace opbench;

namespace {

// Counts what it measures, to tell this process's rounds from the workers'.
class Local : public QuickExecutor {
 public:
  int measured = 0, placed = 0;
  Result measure(const Point& p, const Timing& t) override {
    ++measured;
    return QuickExecutor::measure(p, t);
  }
  void new_round() override { ++placed; }
};

struct Sweeping {
  std::string config;
  Config cfg;
  Sweep sw;
};

Sweeping setup() {
  Sweeping s;
  s.config = fresh_db_path("rounds", "c.yaml");
  std::ofstream(s.config) << "op: act\nx: {n: [256, 512]}\nparams: {batch: 1, head: 1, dim: 16, metric: speed}\n"
                             "variants: [{act: relu}]\nproviders: {torch: to}\n";
  s.cfg = load_config(s.config);
  s.sw = expand(s.cfg);
  return s;
}

RoundProcessOptions options(const Sweeping& s, int n, std::vector<std::string> env = {}) {
  RoundProcessOptions o;
  o.processes = n;
  o.command = {OPBENCH_FAKE_WORKER, s.config, "cpu", "Fake GPU"};
  o.env = std::move(env);
  o.setup.protocol = kConfigReadingProtocol;  // the fake worker reads the config (protocol 1)
  o.setup.config_hashes = {s.cfg.hash};
  o.ops = {s.cfg.op};
  o.start_timeout_s = 30;
  return o;
}

}  // namespace

TEST(RoundProcesses, EachRoundInItsProcess) {
  const Sweeping s = setup();
  Local local;
  RoundProcesses spread(local, options(s, 3));
  EXPECT_EQ(spread.pids().size(), 2u);  // the workers; this process is round 0's
  Timing t;
  const Point& p = s.sw.points[0];
  for (int r = 0; r < 6; ++r) {
    spread.set_round(r);
    if (r) spread.new_round();
    const Result got = spread.measure(p, t);
    ASSERT_TRUE(got.ok()) << got.error;
    EXPECT_EQ(got.samples, QuickExecutor().measure(p, t).samples);  // the figures cross the pipe whole
  }
  EXPECT_EQ(local.measured, 2);  // rounds 0 and 3
  EXPECT_EQ(local.placed, 1);    // round 3's placement; the workers placed theirs
  EXPECT_EQ(spread.environment().gpu, "Fake GPU");
}

TEST(RoundProcesses, AWorkerThatDiesIsReplacedAndTheRoundMeasuredAgain) {
  const Sweeping s = setup();
  const std::string marker = fresh_db_path("rounds", "died");
  Local local;
  RoundProcesses spread(local, options(s, 2, {"FAKE_DIE=512", "FAKE_DIE_ONCE=" + marker}));
  Timing t;
  spread.set_round(1);
  const Result got = spread.measure(s.sw.points[1], t);  // x = 512: the first worker dies, the next measures it
  EXPECT_TRUE(got.ok()) << got.error;
  EXPECT_FALSE(got.lost);
  EXPECT_EQ(got.samples, QuickExecutor().measure(s.sw.points[1], t).samples);
  const std::vector<int> pids = spread.pids();
  EXPECT_EQ(std::set<int>(pids.begin(), pids.end()).size(), 2u);
}

TEST(RoundProcesses, APointWhoseWorkersDieTwiceIsLost) {
  const Sweeping s = setup();
  Local local;
  RoundProcesses spread(local, options(s, 2, {"FAKE_DIE=512"}));
  Timing t;
  spread.set_round(1);
  const Result lost = spread.measure(s.sw.points[1], t);  // x = 512: every worker dies on it
  EXPECT_FALSE(lost.ok());
  EXPECT_TRUE(lost.lost);  // not stored: a resume measures it
  EXPECT_NE(lost.error.find("round process 1 ended while measuring this point, twice (killed by signal 9; "
                            "killed by signal 9)"),
            std::string::npos)
      << lost.error;
  const Result next = spread.measure(s.sw.points[0], t);  // another point: a new worker measures it
  EXPECT_TRUE(next.ok()) << next.error;
  EXPECT_EQ(spread.pids().size(), 3u);
}

// A sweep whose round process dies twice on a point: the point is lost, not stored, the run
// ends interrupted; the resume measures it (and nothing else).
TEST(RoundProcesses, ALostPointIsLeftForTheResume) {
  const Sweeping s = setup();
  Config cfg = s.cfg;
  cfg.timing.rounds = 2;  // round 1 in the worker
  Store store(fresh_db_path("rounds", "lost.db"));
  SweepOptions opt;
  opt.shape.device = "cpu";
  std::ostringstream log;
  int64_t run = 0;
  {
    Local local;
    RoundProcesses spread(local, options(s, 2, {"FAKE_DIE=512"}));
    LocalMeasurer measurer(spread, "cpu", cfg.timing);
    const SweepOutcome out = run_sweep(cfg, s.sw, measurer, store, opt, log);
    run = out.run_id;
    EXPECT_EQ(out.lost, 1u);
    EXPECT_EQ(out.measured, 1u);
    EXPECT_EQ(store.run(run)->status, "interrupted");
    const auto points = store.points(run);
    ASSERT_EQ(points.size(), 1u);
    EXPECT_EQ(points[0].point.x_value, 256);
    EXPECT_NE(log.str().find("point lost: "), std::string::npos) << log.str();
  }
  Local local;
  RoundProcesses spread(local, options(s, 2));
  LocalMeasurer measurer(spread, "cpu", cfg.timing);
  opt.resume = run;
  const SweepOutcome out = run_sweep(cfg, s.sw, measurer, store, opt, log);
  EXPECT_EQ(out.measured, 1u);
  EXPECT_EQ(out.skipped, 1u);
  EXPECT_EQ(out.lost, 0u);
  EXPECT_EQ(store.run(run)->status, "done");
  for (const auto& p : store.points(run)) EXPECT_TRUE(p.result.ok()) << p.result.error;
}

// Worker protocol 2: the workers are told the config and handed each point; none reads the
// file (gone before they start).
TEST(RoundProcesses, WorkersTold) {
  const Sweeping s = setup();
  Local local;
  RoundProcessOptions o = options(s, 3);
  o.command = {OPBENCH_FAKE_WORKER, "-", "cpu", "Fake GPU"};
  o.setup = WorkerSetup();
  o.setup.configs = {{s.config, s.cfg.op, timing_block(s.cfg.text, s.config), {"torch"}}};
  std::remove(s.config.c_str());
  RoundProcesses spread(local, o);
  Timing t;
  for (int r = 0; r < 6; ++r) {
    spread.set_round(r);
    if (r) spread.new_round();
    const Result got = spread.measure(s.sw.points[r % 2], t);
    ASSERT_TRUE(got.ok()) << got.error;
  }
  EXPECT_EQ(local.measured, 2);  // rounds 0 and 3; the workers measured the others
}

TEST(RoundProcesses, AWorkerOnAnotherConfigIsRefused) {
  Sweeping s = setup();
  Local local;
  RoundProcessOptions o = options(s, 2);
  o.setup.config_hashes = {"another"};
  try {
    RoundProcesses spread(local, o);
    ADD_FAILURE() << "started";
  } catch (const RuntimeFailure& e) {
    EXPECT_NE(std::string(e.what()).find("read another config"), std::string::npos) << e.what();
  }
}

// The sweep loop with a fake executor: every point stored, unavailable providers skipped
// with one line, failures stored and shown as -1, an interrupted run resumed with the options
// it was started with, a point over its wall-time budget or whose call never returns stored
// as failed while the sweep goes on, a full disk leaving the run abandoned and resumable.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <thread>

#include "core/error.hpp"
#include "report/report.hpp"
#include "sweep/resume.hpp"
#include "sweep/runner.hpp"

using namespace opbench;

namespace {

class FakeExecutor : public Executor {
 public:
  int calls = 0;
  int stop_after = -1;  // raise the stop flag after this many measurements
  std::atomic<bool>* stop = nullptr;
  Environment environment() override {
    Environment e;
    e.gpu = "Fake GPU";
    e.peak_gbps = 1000;
    return e;
  }
  std::string unavailable(const std::string&, const std::string& provider) override {
    return provider == "cuda" ? "no GPU here" : "";
  }
  Result measure(const Point& p, const Timing&) override {
    ++calls;
    if (stop && stop_after >= 0 && calls >= stop_after) stop->store(true);
    Result r;
    r.unit = p.metric() == "memory" ? "MiB" : "ms";
    if (p.x_value == 512 && p.params.s("act") == "silu") {
      r.error = "out of memory";
      return r;
    }
    r.samples = {double(p.x_value) / 1000, double(p.x_value) / 1000 * 1.02};
    r.stats = summarize(r.samples);
    r.bytes = 1e6;
    return r;
  }
};

std::string temp_db(const std::string& name = "") {
  auto p = std::filesystem::temp_directory_path() / ("opbench_runner_" + std::to_string(getpid()) + name + ".db");
  std::filesystem::remove(p);
  std::filesystem::remove(p.string() + "-wal");
  std::filesystem::remove(p.string() + "-shm");
  return p.string();
}

Result ok_result(const Point& p) {
  Result r;
  r.unit = p.metric() == "memory" ? "MiB" : "ms";
  r.samples = {1.0, 1.1};
  r.stats = summarize(r.samples);
  return r;
}

const char* kConfig = R"(
op: act
x: {n: [256, 512, 1024]}
params: {batch: 1, head: 1, dim: 16, mode: [fwd, bwd], metric: speed}
variants: [{act: relu}, {act: silu}]
providers: {cuda: tr, torch: to}
)";

// The speed of act on the torch provider alone at n in `ns` (a YAML list's items), timed by
// `timing` (a YAML mapping's items).
Config torch_act_config(const std::string& ns, const std::string& timing) {
  return parse_config("\nop: act\nx: {n: [" + ns + "]}\nparams: {batch: 1, head: 1, dim: 16, metric: speed}\n"
                      "providers: {torch: to}\ntiming: {" + timing + "}\n",
                      "c.yaml");
}

// A sweep of kConfig to stop part way (stopped_after), on a database of its own: one measure a
// point, so that the stop counts points.
class StoppedSweep : public ::testing::Test {
 protected:
  static Config one_measure_a_point() {
    Config cfg = parse_config(kConfig, "c.yaml");
    cfg.timing.rounds = 1;
    return cfg;
  }

  // Sweeps `sw` (the providers the fake executor cannot run dropped) with a stop requested
  // after `after` points: an interrupted run, `stop` lowered again for what follows.
  SweepOutcome stopped_after(int after) {
    FakeExecutor ex;
    ex.stop = &stop;
    ex.stop_after = after;
    opt.interrupt = &stop;
    drop_unavailable(sw, ex, log);
    const SweepOutcome out = run_sweep(cfg, sw, ex, store, opt, log);
    stop = false;
    return out;
  }

  Config cfg = one_measure_a_point();
  Store store{temp_db(::testing::UnitTest::GetInstance()->current_test_info()->name())};
  std::atomic<bool> stop{false};
  SweepOptions opt;
  std::ostringstream log;
  Sweep sw = expand(cfg);  // cuda: no GPU here, dropped when swept
};

}  // namespace

TEST(Runner, StoresEveryPointAndSkipsUnavailable) {
  Config cfg = parse_config(kConfig, "c.yaml");
  Sweep sw = expand(cfg);
  FakeExecutor ex;
  std::ostringstream log;
  drop_unavailable(sw, ex, log);
  EXPECT_EQ(log.str(), "skipping provider cuda: no GPU here\n");
  Store store(temp_db());
  SweepOutcome out = run_sweep(cfg, sw, ex, store, {}, log);
  EXPECT_EQ(out.measured, 4u * 3);
  EXPECT_EQ(out.failed, 2u);  // silu at n=512, fwd and bwd
  auto run = *store.run(out.run_id);
  EXPECT_EQ(run.status, "done");
  EXPECT_EQ(run.points, 12);
  EXPECT_EQ(run.notation, (std::vector<std::pair<std::string, std::string>>{{"to", "torch"}}));
  std::string doc = render_report({{run, store.points(run.id)}});
  EXPECT_NE(doc.find("act-speed-fwd-batch1-head1-dim16-act_silu-bf16:\n        n       to\n"
                     "0   256.0  0.25856\n1   512.0 -1.00000\n2  1024.0  1.03424\n"),
            std::string::npos)
      << doc;
  EXPECT_NE(doc.find("error: out of memory"), std::string::npos);
}

TEST_F(StoppedSweep, InterruptedRunResumes) {
  SweepOutcome first = stopped_after(5);
  EXPECT_TRUE(first.interrupted);
  EXPECT_EQ(first.measured, 5u);
  EXPECT_EQ(store.run(first.run_id)->status, "interrupted");
  EXPECT_EQ(store.points(first.run_id).size(), 5u);

  FakeExecutor ex2;
  opt.resume = first.run_id;
  SweepOutcome second = run_sweep(cfg, sw, ex2, store, opt, log);
  EXPECT_FALSE(second.interrupted);
  EXPECT_EQ(second.run_id, first.run_id);
  EXPECT_EQ(second.skipped, 5u);
  EXPECT_EQ(ex2.calls, 7);
  EXPECT_EQ(store.points(first.run_id).size(), 12u);
  EXPECT_EQ(store.run(first.run_id)->status, "done");
  EXPECT_EQ(store.runs().size(), 1u);

  // Resuming with another config is refused.
  Config other = parse_config(std::string(kConfig) + "title: '{op}-{act}-{mode}'\n", "c.yaml");
  EXPECT_THROW(run_sweep(other, expand(other), ex2, store, opt, log), InputError);
}

// A resume on another host or GPU model is refused before anything is written, unless
// allowed: the run then records both machines' devices, and the points measured here name
// theirs with the host.
TEST_F(StoppedSweep, AResumeOnAnotherMachineIsRefusedUnlessAllowed) {
  opt.shape.device = "cpu";
  opt.host = "gpu-a";
  const int64_t run = stopped_after(5).run_id;
  opt.resume = run;
  opt.host = "gpu-b";
  FakeExecutor here;
  try {
    run_sweep(cfg, sw, here, store, opt, log);
    ADD_FAILURE() << "resumed on another host";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("run " + std::to_string(run) +
                                         " was measured on 'Fake GPU' on host 'gpu-a', this is 'Fake GPU' on host "
                                         "'gpu-b': a resumed run stays on its machine (--allow-mixed"),
              std::string::npos)
        << e.what();
  }
  struct OtherGpu : FakeExecutor {
    Environment environment() override {
      Environment e = FakeExecutor::environment();
      e.gpu = "Other GPU";
      return e;
    }
  } other;
  opt.host = "gpu-a";
  EXPECT_THROW(run_sweep(cfg, sw, other, store, opt, log), InputError);
  EXPECT_EQ(here.calls + other.calls, 0);
  EXPECT_EQ(store.run(run)->status, "interrupted");
  EXPECT_FALSE(store.run_lock(run));

  opt.host = "gpu-b";
  opt.allow_mixed = true;
  const SweepOutcome out = run_sweep(cfg, sw, here, store, opt, log);
  EXPECT_EQ(out.measured, 7u);
  const RunInfo r = *store.run(run);
  EXPECT_EQ(r.status, "done");
  std::vector<std::string> devices;  // each as "name model peak" (their shares aside)
  for (const auto& d : r.devices) devices.push_back(d.device + " " + d.gpu + " " + std::to_string(int(d.peak_gbps)));
  EXPECT_EQ(devices, (std::vector<std::string>{"cpu Fake GPU 1000", "cpu@gpu-b Fake GPU 1000"}));
  std::map<std::string, int> per_device;
  for (const auto& p : store.points(run)) ++per_device[p.device];
  EXPECT_EQ(per_device, (std::map<std::string, int>{{"cpu", 5}, {"cpu@gpu-b", 7}}));
}

// Records what the runner asks for: each measure (provider, metric, rep_ms) and each new round.
class RecordingExecutor : public Executor {
 public:
  std::vector<std::string> log;
  Environment environment() override { return {}; }
  std::string unavailable(const std::string&, const std::string&) override { return ""; }
  Result measure(const Point& p, const Timing& t) override {
    log.push_back(p.provider + ":" + p.metric() + ":" + std::to_string(int(t.rep_ms)));
    if (t.check) checked.push_back(p.provider + ":" + p.metric());
    Result r;
    r.unit = p.metric() == "memory" ? "MiB" : "ms";
    // torch's rounds take 1, 2, 3 ms; torch_compile's 10 ms each round
    const double v = p.provider == "torch" ? double(++torch_round_) : 10.0;
    r.samples = {v, v};
    r.stats = summarize(r.samples);
    r.bytes = 1e6;
    r.gbps = r.bytes / (r.stats.median * 1e-3) / 1e9;
    r.pct_peak = r.gbps;  // as if the peak were 100 GB/s
    r.rel_err = p.provider == "torch" ? -1 : 0.001 * double(log.size());
    return r;
  }
  void new_round() override { log.push_back("round"); }
  std::vector<std::string> checked;  // the measures that asked for the check against the truth
  int torch_round_ = 0;
};

TEST(Runner, RoundsInterleaveTheCellsProvidersAndPoolTheirSamples) {
  Config cfg = parse_config(R"(
op: act
x: {n: [256]}
params: {batch: 1, head: 1, dim: 16, metric: [speed, memory]}
providers: {torch: to, torch_compile: toc}
timing: {rep_ms: 90, rounds: 3}
)",
                            "c.yaml");
  Sweep sw = expand(cfg);
  RecordingExecutor ex;
  std::ostringstream log;
  Store store(temp_db());
  SweepOutcome out = run_sweep(cfg, sw, ex, store, {}, log);
  EXPECT_EQ(out.measured, 4u);
  // Speed: three rounds of both providers, each round with rep_ms / 3, each round starting
  // with the next provider; memory: one measure.
  EXPECT_EQ(ex.log, (std::vector<std::string>{"torch:speed:30", "torch_compile:speed:30", "round",
                                              "torch_compile:speed:30", "torch:speed:30", "round",
                                              "torch:speed:30", "torch_compile:speed:30",
                                              "torch:memory:90", "torch_compile:memory:90"}));
  // The check against the truth: a cell's first round only (the later rounds' output is the same).
  EXPECT_EQ(ex.checked, (std::vector<std::string>{"torch:speed", "torch_compile:speed", "torch:memory",
                                                   "torch_compile:memory"}));
  for (const auto& sp : store.points(out.run_id)) {
    if (sp.point.metric() != "speed") {
      EXPECT_EQ(sp.result.samples.size(), 2u);
      EXPECT_TRUE(sp.result.rounds.empty());  // one round
      continue;
    }
    ASSERT_EQ(sp.result.samples.size(), 6u) << sp.point.provider;
    EXPECT_EQ(sp.result.rounds, (std::vector<int64_t>{2, 2, 2})) << sp.point.provider;
    if (sp.point.provider == "torch") {
      EXPECT_DOUBLE_EQ(sp.result.stats.median, 2.0);  // samples 1 1 2 2 3 3
      EXPECT_DOUBLE_EQ(sp.result.gbps, 0.5);          // rescaled from round 1's 1 GB/s
      EXPECT_DOUBLE_EQ(sp.result.pct_peak, 0.5);
    } else {
      EXPECT_DOUBLE_EQ(sp.result.stats.median, 10.0);
      EXPECT_DOUBLE_EQ(sp.result.rel_err, 0.008);  // the largest round's (8th entry of the log)
    }
  }
}

TEST(Runner, PoolRoundsKeepsTheFirstError) {
  Result a, b, c;
  a.samples = {1, 2};
  a.stats = summarize(a.samples);
  b.error = "out of memory";
  c.samples = {3};
  c.stats = summarize(c.samples);
  c.check_failed = true;
  EXPECT_EQ(pool_rounds({a, b, c}).error, "out of memory");
  Result pooled = pool_rounds({a, c});
  EXPECT_TRUE(pooled.ok());
  EXPECT_TRUE(pooled.check_failed);
  EXPECT_EQ(pooled.samples, (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(pooled.rounds, (std::vector<int64_t>{2, 1}));
  EXPECT_TRUE(pool_rounds({a}).rounds.empty());
  EXPECT_EQ(pooled.stats.count, 3);
  EXPECT_TRUE(pool_rounds({}).samples.empty());
}

TEST(Runner, ProvidersFilter) {
  Config cfg = parse_config(kConfig, "c.yaml");
  Sweep sw = expand(cfg);
  filter_providers(sw, cfg, {"torch"});
  for (const auto& p : sw.points) EXPECT_EQ(p.provider, "torch");
  EXPECT_THROW(filter_providers(sw, cfg, {"torch_compile"}), InputError);
}

TEST_F(StoppedSweep, StoresTheOptionsThatShapedTheRunAndResumesWithThem) {
  opt.shape.device = "cpu";
  opt.shape.label = "base";
  int64_t started = 0;
  opt.started = [&](const RunInfo& r) { started = r.id; };
  SweepOutcome first = stopped_after(2);
  EXPECT_EQ(started, first.run_id);
  const RunInfo run = *store.run(first.run_id);
  const RunOptions shape = stored_options(store, run);
  EXPECT_EQ(shape.device, "cpu");
  EXPECT_EQ(shape.providers, std::vector<std::string>{"torch"});  // cuda never ran
  EXPECT_EQ(shape.label, "base");
  EXPECT_EQ(resume_command(shape, "results/my db.db", run.id),
            "opbench sweep c.yaml --db 'results/my db.db' --device cpu --providers torch --label base --resume " +
                std::to_string(run.id));
  // Options given again must agree with the stored ones; left out, the stored ones hold.
  EXPECT_EQ(resume_options(shape, RunOptions{}, run.id).providers, std::vector<std::string>{"torch"});
  EXPECT_THROW(resume_options(shape, RunOptions{"", "", {"torch", "cuda"}, ""}, run.id), InputError);
  EXPECT_THROW(resume_options(shape, RunOptions{"", "cuda", {}, ""}, run.id), InputError);
  EXPECT_THROW(resume_options(shape, RunOptions{"", "", {}, "other"}, run.id), InputError);
  EXPECT_NO_THROW(resume_options(shape, RunOptions{"c.yaml", "cpu", {"torch"}, "base"}, run.id));
  try {
    resume_options(shape, RunOptions{"", "", {"cuda", "torch"}, ""}, run.id);
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--providers"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("measured with --providers torch"), std::string::npos) << e.what();
  }
  // A run written before options were stored: its device and its notation's providers.
  RunInfo old = run;
  old.id = 0;
  old.uuid.clear();
  old.env.device = "cuda:0";
  store.begin_run(old);
  EXPECT_EQ(stored_options(store, old).device, "cuda:0");
  EXPECT_EQ(stored_options(store, old).providers, std::vector<std::string>{"torch"});
}

// Sleeps in every measure: a point's rounds add up past its budget.
class SlowExecutor : public Executor {
 public:
  double sleep_s = 0.03;
  int calls = 0;
  Environment environment() override { return {}; }
  std::string unavailable(const std::string&, const std::string&) override { return ""; }
  Result measure(const Point& p, const Timing& t) override {
    ++calls;
    EXPECT_GT(t.max_point_s, 0);  // what is left of the point's budget
    EXPECT_LE(t.max_point_s, 0.045);
    std::this_thread::sleep_for(std::chrono::duration<double>(sleep_s));
    return ok_result(p);
  }
};

TEST(Runner, APointOverItsBudgetFailsAndTheSweepGoesOn) {
  Config cfg = torch_act_config("256, 512", "rounds: 4, max_point_s: 0.045");
  SlowExecutor ex;
  Store store(temp_db("budget"));
  std::ostringstream log;
  SweepOutcome out = run_sweep(cfg, expand(cfg), ex, store, {}, log);
  EXPECT_EQ(out.measured, 2u);
  EXPECT_EQ(out.failed, 2u);
  EXPECT_LT(ex.calls, 8);  // no point ran all its four rounds
  for (const auto& sp : store.points(out.run_id)) {
    EXPECT_NE(sp.result.error.find("over its wall-time budget (timing.max_point_s = 0.045 s) before round"),
              std::string::npos)
        << sp.result.error;
    EXPECT_EQ(sp.value, -1);
  }
  EXPECT_EQ(store.run(out.run_id)->status, "done");
  EXPECT_NE(log.str().find("point failed: act-speed-fwd"), std::string::npos) << log.str();
}

// One point's call never returns until released.
class HangingExecutor : public Executor {
 public:
  Environment environment() override { return {}; }
  std::string unavailable(const std::string&, const std::string&) override { return ""; }
  Result measure(const Point& p, const Timing&) override {
    if (p.x_value == 512) {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return released_; });
    }
    return ok_result(p);
  }
  void release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool released_ = false;
};

TEST(Runner, AMeasureThatNeverReturnsIsStoredFailedAndTheSweepGoesOn) {
  Config cfg = torch_act_config("256, 512, 1024", "rounds: 2, max_point_s: 0.1");
  HangingExecutor ex;
  Store store(temp_db("hang"));
  SweepOptions opt;
  opt.hang_grace_s = 0.1;
  int64_t hung_run = 0;
  std::string stored_when_hung;
  opt.on_hung = [&](int64_t run_id) {
    hung_run = run_id;
    // The point is stored before on_hung runs (the command re-executes itself here).
    for (const auto& sp : store.points(run_id))
      stored_when_hung += std::to_string(sp.point.x_value) + (sp.result.ok() ? " ok;" : " failed;");
    ex.release();
  };
  std::ostringstream log;
  SweepOutcome out = run_sweep(cfg, expand(cfg), ex, store, opt, log);
  EXPECT_EQ(hung_run, out.run_id);
  EXPECT_EQ(stored_when_hung, "256 ok;512 failed;") << stored_when_hung;
  EXPECT_EQ(out.measured, 3u);
  EXPECT_EQ(out.failed, 1u);
  auto pts = store.points(out.run_id);
  ASSERT_EQ(pts.size(), 3u);  // the late result did not replace the failure, nor double it
  for (const auto& sp : pts) {
    if (sp.point.x_value != 512) {
      EXPECT_TRUE(sp.result.ok()) << sp.result.error;
      continue;
    }
    EXPECT_NE(sp.result.error.find("a call did not return within the wall-time budget (timing.max_point_s = 0.1 s)"),
              std::string::npos)
        << sp.result.error;
  }
  EXPECT_EQ(store.run(out.run_id)->status, "done");
}

// Limits the database's files to their present size from the `at`-th measure on, as a full
// disk would: every later write fails.
class DiskFillingExecutor : public FakeExecutor {
 public:
  std::string wal;
  int at = 3;
  Result measure(const Point& p, const Timing& t) override {
    if (calls + 1 == at) {
      struct stat st {};
      ::stat(wal.c_str(), &st);
      signal(SIGXFSZ, SIG_IGN);
      rlimit lim{rlim_t(st.st_size), rlim_t(st.st_size)};
      setrlimit(RLIMIT_FSIZE, &lim);
    }
    return FakeExecutor::measure(p, t);
  }
};

TEST(Runner, AFullDiskLeavesTheRunAbandonedAndResumable) {
  Config cfg = parse_config(kConfig, "c.yaml");
  cfg.timing.rounds = 1;
  const std::string path = temp_db("full");
  Sweep sw = expand(cfg);
  {
    FakeExecutor probe;
    std::ostringstream log;
    drop_unavailable(sw, probe, log);
  }
  const pid_t child = fork();
  if (child == 0) {
    int code = 1;
    try {
      Store store(path);
      DiskFillingExecutor ex;
      ex.wal = path + "-wal";
      std::ostringstream log;
      run_sweep(cfg, sw, ex, store, {}, log);
    } catch (const RuntimeFailure&) {
      code = 7;  // the store failed, as it should
    } catch (...) {
      code = 2;
    }
    _exit(code);
  }
  int st = 0;
  waitpid(child, &st, 0);
  ASSERT_TRUE(WIFEXITED(st));
  ASSERT_EQ(WEXITSTATUS(st), 7);
  Store store(path);
  auto runs = store.runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, "running");  // what the dead process could not change
  EXPECT_EQ(effective_status(store, runs[0]), "abandoned");
  EXPECT_EQ(store.run_lock(runs[0].id)->holder.pid, int64_t(child));
  const size_t before = store.points(runs[0].id).size();
  EXPECT_EQ(before, 2u);  // the two cells stored before the disk filled
  FakeExecutor ex;
  SweepOptions opt;
  opt.resume = runs[0].id;
  std::ostringstream log;
  SweepOutcome out = run_sweep(cfg, sw, ex, store, opt, log);
  EXPECT_EQ(out.skipped, before);
  EXPECT_EQ(store.points(runs[0].id).size(), 12u);
  EXPECT_EQ(effective_status(store, *store.run(runs[0].id)), "done");
  EXPECT_FALSE(store.run_lock(runs[0].id).has_value());
}

TEST(Stats, QuantilesAsNumpy) {
  Stats s = summarize({4, 1, 3, 2, 5});
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.p20, 1.8);
  EXPECT_DOUBLE_EQ(s.p80, 4.2);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_NEAR(s.stdev, 1.5811388, 1e-6);
  EXPECT_EQ(s.count, 5);
}

// A sweep on several devices, against fake workers that run the real worker loop: the messages
// keep every figure, every cell is measured once from one queue (longest expected first, each
// worker's share counted), one set of workers serves every config of a command, each worker
// is pinned to the CPUs a (fake) source names and reports where it runs, a worker that dies mid-cell
// has its cell measured again once (and failed when it kills a second), a call that never
// returns fails its point while a new worker goes on, a stop hands out no more cells, several
// GPU models are refused; through the sweep loop each point records the device that measured
// it and one process writes the run. The workers read the configs (worker protocol 1) but in
// one test, where they are told them and handed the points (protocol 2) with the files gone.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "core/placement.hpp"
#include "report/provenance.hpp"
#include "run_device.hpp"
#include "sweep/resume.hpp"
#include "sweep/runner.hpp"
#include "sweep/workers.hpp"
#include "temp_db.hpp"

using namespace opbench;

namespace {

std::string temp_path(const std::string& name) { return fresh_db_path("workers", name); }

// n = 256, 512, 1024; fwd and bwd; relu and silu: 12 cells of 2 providers.
std::string write_config(const std::string& extra_timing = "") {
  const std::string path = temp_path("c.yaml");
  std::ofstream(path) << "op: act\nx: {n: [256, 512, 1024]}\n"
                         "params: {batch: 1, head: 1, dim: 16, mode: [fwd, bwd], metric: speed}\n"
                         "variants: [{act: relu}, {act: silu}]\nproviders: {torch: to, torch_compile: toc}\n"
                         "timing: {rounds: 2" + extra_timing + "}\n";
  return path;
}

struct SweepSetup {
  Config cfg;
  Sweep sw;
  std::vector<CellPoints> cells;
};

SweepSetup setup(const std::string& path) {
  SweepSetup s{load_config(path), {}, {}};
  s.sw = expand(s.cfg);
  for (const auto& c : plan_cells(s.sw, {})) {
    CellPoints pts;
    for (size_t i : c.points) pts.push_back(&s.sw.points[i]);
    s.cells.push_back(pts);
  }
  return s;
}

// A second config, of its own timing (3 rounds), with `providers`.
std::string write_second_config(const std::string& providers) {
  const std::string path = temp_path("b.yaml");
  std::ofstream(path) << "op: act\nx: {n: [64, 128]}\nparams: {batch: 1, head: 1, dim: 8, mode: fwd, metric: speed}\n"
                         "variants: [{act: relu}]\nproviders: {" + providers + "}\ntiming: {rounds: 3}\n";
  return path;
}

PoolOptions options(const std::string& config, const std::string& devices, const std::string& cfg_hash,
                    std::map<std::string, std::string> gpu = {}, std::vector<std::string> env = {}) {
  PoolOptions o;
  o.slots = parse_devices(devices, 0);
  o.command = [config, gpu](const WorkerSlot& slot) {
    auto it = gpu.find(slot.name);
    return std::vector<std::string>{OPBENCH_FAKE_WORKER, config, slot.device, it == gpu.end() ? "Fake GPU" : it->second};
  };
  o.env = std::move(env);
  o.setup.protocol = kConfigReadingProtocol;  // the fake worker reads the config (protocol 1)
  o.setup.config_hashes = {cfg_hash};
  o.start_timeout_s = 30;
  o.point_timeout_s = 30;
  return o;
}

// What came back: per point key, its result and device; how often each key came.
struct Collected {
  std::map<std::string, Result> result;
  std::map<std::string, std::string> device;
  std::map<std::string, int> times;
  std::set<std::string> begun_on;
  CellHooks hooks() {
    CellHooks h;
    h.begin = [this](const CellPoints&, const std::string& d) { begun_on.insert(d); };
    h.done = [this](const CellPoints& pts, const CellResult& got, const std::string& d, double) {
      for (size_t i = 0; i < pts.size(); ++i) {
        result[pts[i]->key()] = got.results[i];
        device[pts[i]->key()] = d;
        ++times[pts[i]->key()];
      }
    };
    return h;
  }
};

// Config 0's cells into `got_a`, then config 1's into `got_b`, by one pool.
void measure_both(WorkerPool& pool, const SweepSetup& a, Collected& got_a, const SweepSetup& b, Collected& got_b) {
  pool.use_config(0);
  pool.measure(a.cells, got_a.hooks());
  pool.use_config(1);
  pool.measure(b.cells, got_b.hooks());
}

// A config written, expanded and planned, and a pool of fake workers on it, started.
struct Started {
  std::string config;
  SweepSetup s;
  std::unique_ptr<WorkerPool> pool;
};

Started started(const std::string& devices, std::vector<std::string> env, const std::string& extra_timing = "") {
  Started st{write_config(extra_timing), {}, nullptr};
  st.s = setup(st.config);
  st.pool = std::make_unique<WorkerPool>(options(st.config, devices, st.s.cfg.hash, {}, std::move(env)));
  EXPECT_TRUE(st.pool->start({}));
  return st;
}

}  // namespace

TEST(WorkerProtocol, KeepsEveryFigure) {
  const SweepSetup s = setup(write_config());
  CellResult got;
  Result r;
  r.unit = "ms";
  r.samples = {0.1 + 1e-17, 1.0 / 3, 2e-300};
  r.rounds = {2, 1};
  r.stats = summarize(r.samples);
  r.gbps = 1234.5678901234567;
  r.pct_peak = 41.000000000000007;
  r.rel_err = 2.5e-7;
  Result bad;
  bad.unit = "ms";
  bad.error = "out of memory\nat line 2";
  got.results = {r, bad};
  got.state = DeviceState{true, 1305, 2619, 1980, 87, 699.5, 4 | 32, true};
  const WorkerReply back = parse_reply(cell_reply_line(s.cells[0], got), "w");
  ASSERT_EQ(back.kind, WorkerReply::cell);
  ASSERT_EQ(back.results.size(), 2u);
  EXPECT_EQ(back.results[0].samples, r.samples);
  EXPECT_EQ(back.results[0].rounds, r.rounds);
  EXPECT_EQ(back.results[0].stats.median, r.stats.median);
  EXPECT_EQ(back.results[0].gbps, r.gbps);
  EXPECT_EQ(back.results[0].pct_peak, r.pct_peak);
  EXPECT_EQ(back.results[0].rel_err, r.rel_err);
  EXPECT_EQ(back.results[1].error, bad.error);
  EXPECT_TRUE(back.state.throttled);
  EXPECT_EQ(back.state.power_w, 699.5);
  std::vector<std::string> cell_keys;
  for (const Point& p : parse_request(cell_line(s.cells[0]), "p").points) cell_keys.push_back(p.key());
  EXPECT_EQ(cell_keys, (std::vector<std::string>{s.cells[0][0]->key(), s.cells[0][1]->key()}));
  WorkerHello h;
  h.device = "cuda:1";
  h.configs = {{"abc", {{std::string("cuda"), std::string("not built")}}}, {"def", {}}};
  h.env.gpu = "NVIDIA H100 80GB HBM3";
  h.env.peak_gbps = 2941.25;
  h.placement.cpus = {0, 1, 2, 3, 8};
  h.placement.memory = "default (local: node 0)";
  h.placement.threads = 4;
  const WorkerHello hb = parse_hello(hello_line(h), "w");
  EXPECT_EQ(hb.env.gpu, h.env.gpu);
  EXPECT_EQ(hb.env.peak_gbps, h.env.peak_gbps);
  ASSERT_EQ(hb.configs.size(), 2u);
  EXPECT_EQ(hb.configs[0].hash, "abc");
  EXPECT_EQ(hb.configs[0].unavailable, h.configs[0].unavailable);
  EXPECT_EQ(hb.configs[1].hash, "def");
  EXPECT_EQ(hb.placement.cpus, h.placement.cpus);
  EXPECT_EQ(hb.placement.memory, h.placement.memory);
  EXPECT_EQ(hb.placement.threads, 4);
  const ParentRequest cell = parse_request(cell_line(s.cells[0], 1), "p");
  EXPECT_EQ(cell.config, 1u);
  const ParentRequest measure = parse_request(measure_line({"k", true, 1, 2, 3, 0, false, 1}), "p");
  ASSERT_TRUE(measure.measure);
  EXPECT_EQ(measure.measure->config, 1u);
  EXPECT_FALSE(measure.measure->check);  // a later round: its process leaves the check to round 0's
  const ParentRequest older = parse_request(R"({"measure": "k", "new_round": false, "warmup_ms": 1, "rep_ms": 2, "max_point_s": 3})", "p");
  ASSERT_TRUE(older.measure);
  EXPECT_TRUE(older.measure->check);  // a parent that does not say: every round checks
  EXPECT_THROW(parse_request(R"({"measure": "k", "new_round": false, "warmup_ms": 1, "rep_ms": 2, "max_point_s": 3, "check": 1})", "p"), InputError);
  EXPECT_EQ(parse_reply(hung_line("k", "why"), "w").kind, WorkerReply::hung);
  EXPECT_EQ(parse_reply(declined_line(), "w").kind, WorkerReply::declined);
  EXPECT_THROW(parse_reply("not json", "w"), InputError);
}

TEST(WorkerPool, EveryCellOnceFromOneQueue) {
  Started st = started("cpu,cpu", {"FAKE_SLEEP_MS=20"});
  WorkerPool& pool = *st.pool;
  const SweepSetup& s = st.s;
  EXPECT_EQ(pool.devices().size(), 2u);
  EXPECT_EQ(pool.devices()[1].device, "cpu#2");
  EXPECT_EQ(pool.environment().device, "cpu,cpu");
  EXPECT_EQ(pool.environment().gpu, "Fake GPU");
  EXPECT_TRUE(pool.unavailable().empty());
  Collected got;
  pool.measure(s.cells, got.hooks());
  EXPECT_EQ(got.times.size(), s.sw.points.size());
  for (const auto& [key, n] : got.times) EXPECT_EQ(n, 1) << key;
  for (const auto& [key, r] : got.result) {
    EXPECT_TRUE(r.ok()) << key;
    EXPECT_EQ(r.rounds.size(), 2u);  // measured in rounds by measure_cell, as on one device
  }
  EXPECT_EQ(got.begun_on, (std::set<std::string>{"cpu", "cpu#2"}));
  // A cell's providers stay on one device.
  for (const auto& cell : s.cells) EXPECT_EQ(got.device[cell[0]->key()], got.device[cell[1]->key()]);
}

TEST(WorkerPool, AWorkerThatDiesMidCellHasItsCellMeasuredAgainOnce) {
  const std::string marker = temp_path("died-once");
  Started st = started("cpu,cpu", {"FAKE_DIE=512", "FAKE_DIE_ONCE=" + marker});
  const SweepSetup& s = st.s;
  Collected got;
  st.pool->measure(s.cells, got.hooks());
  EXPECT_TRUE(std::filesystem::exists(marker));  // a worker did die
  EXPECT_EQ(got.times.size(), s.sw.points.size());
  for (const auto& [key, n] : got.times) EXPECT_EQ(n, 1) << key;
  for (const auto& [key, r] : got.result) EXPECT_TRUE(r.ok()) << key << ": " << r.error;
}

TEST(WorkerPool, ACellThatEndsTwoWorkersFailsAndTheRestGoOn) {
  Started st = started("cpu,cpu,cpu", {"FAKE_DIE=512", "FAKE_SLEEP_MS=5"});
  const SweepSetup& s = st.s;
  Collected got;
  // Four cells at n=512 (fwd, bwd; relu, silu): the first kills two workers and fails; the third
  // worker then dies on the next and the sweep cannot go on.
  EXPECT_THROW(st.pool->measure(s.cells, got.hooks()), RuntimeFailure);
  size_t failed = 0;
  for (const auto& [key, r] : got.result) {
    if (r.ok()) continue;
    ++failed;
    EXPECT_NE(r.error.find("ended while measuring its table cell, twice (cpu"), std::string::npos) << r.error;
    EXPECT_TRUE(r.lost);  // not stored: a resume measures it
    EXPECT_NE(r.error.find("killed by signal 9"), std::string::npos) << r.error;
  }
  EXPECT_EQ(failed, 2u);  // one cell, two providers
  for (const auto& [key, n] : got.times) EXPECT_EQ(n, 1) << key;
}

TEST(WorkerPool, WhenEveryWorkerHasEndedItSaysSo) {
  Started st = started("cpu", {"FAKE_DIE=256"});
  Collected got;
  try {
    st.pool->measure(st.s.cells, got.hooks());
    ADD_FAILURE() << "no failure";
  } catch (const RuntimeFailure& e) {
    EXPECT_NE(std::string(e.what()).find("every worker has ended (cpu: killed by signal 9)"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(got.times.empty());  // the cell was left for a resume, not failed
}

TEST(WorkerPool, ACallThatNeverReturnsFailsItsPointAndANewWorkerGoesOn) {
  Started st = started("cpu", {"FAKE_HANG=1024"}, ", max_point_s: 0.1");
  const SweepSetup& s = st.s;
  Collected got;
  // Every provider's point at n=1024 hangs in turn: each fails, each time a new worker starts.
  st.pool->measure(s.cells, got.hooks());
  EXPECT_EQ(got.times.size(), s.sw.points.size());
  size_t hung = 0;
  for (const auto& [key, r] : got.result)
    if (!r.ok()) {
      ++hung;
      EXPECT_NE(r.error.find("did not return within the wall-time budget"), std::string::npos) << r.error;
    }
  EXPECT_EQ(hung, 8u);  // 4 cells at n=1024, 2 providers each
  EXPECT_EQ(st.pool->pids().size(), 1u + hung);
}

TEST(WorkerPool, AStopFinishesTheCellsUnderWayAndHandsOutNoMore) {
  Started st = started("cpu,cpu", {"FAKE_SLEEP_MS=30"});
  const SweepSetup& s = st.s;
  Collected got;
  size_t begun = 0;
  CellHooks h = got.hooks();
  auto begin = h.begin;
  h.begin = [&](const CellPoints& p, const std::string& d) { ++begun, begin(p, d); };
  h.interrupted = [&] { return !got.times.empty(); };  // after the first cell came back
  st.pool->measure(s.cells, h);
  EXPECT_GE(begun, 2u);
  EXPECT_LT(begun, s.cells.size());
  EXPECT_EQ(got.times.size(), begun * 2);  // every cell begun came back whole
}

TEST(WorkerPool, RefusesSeveralModelsUnlessAllowed) {
  const std::string config = write_config();
  const SweepSetup s = setup(config);
  const std::map<std::string, std::string> gpus = {{"cpu", "Fake H100"}, {"cpu#2", "Fake A100"}};
  {
    WorkerPool pool(options(config, "cpu,cpu", s.cfg.hash, gpus));
    try {
      pool.start({});
      ADD_FAILURE() << "mixed models accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("--devices: cpu,cpu#2: the devices are different models (cpu is 'Fake H100', "
                                           "cpu#2 is 'Fake A100')"),
                std::string::npos)
          << e.what();
    }
  }
  PoolOptions o = options(config, "cpu,cpu", s.cfg.hash, gpus);
  o.allow_mixed = true;
  WorkerPool pool(o);
  EXPECT_TRUE(pool.start({}));
}

TEST(WorkerPool, AWorkersInputErrorAndAnotherConfigAreRefused) {
  const std::string config = write_config();
  const SweepSetup s = setup(config);
  {
    WorkerPool pool(options(config, "cpu", s.cfg.hash, {}, {"FAKE_HELLO_ERROR=c.yaml: timing.flush_l2: no"}));
    try {
      pool.start({});
      ADD_FAILURE() << "accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()), "cpu: c.yaml: timing.flush_l2: no");
    }
  }
  WorkerPool pool(options(config, "cpu", "another hash"));
  EXPECT_THROW(pool.start({}), RuntimeFailure);
}

TEST(WorkerPool, TheSweepStoresEachPointWithItsDevice) {
  Started st = started("cpu,cpu", {"FAKE_SLEEP_MS=20"});
  const SweepSetup& s = st.s;
  Store store(temp_path("sweep.db"));
  SweepOptions opt;
  opt.shape.devices = {"cpu", "cpu"};
  opt.progress = ProgressMode::lines;
  std::ostringstream log;
  const SweepOutcome out = run_sweep(s.cfg, s.sw, *st.pool, store, opt, log);
  EXPECT_EQ(out.measured, s.sw.points.size());
  const RunInfo run = *store.run(out.run_id);
  EXPECT_EQ(run.status, "done");
  EXPECT_EQ(run.env.device, "cpu,cpu");
  ASSERT_EQ(run.devices.size(), 2u);
  expect_device(run.devices[1], "cpu#2", "Fake GPU", 1000);
  // Each worker's share is stored with the run: together every cell and point, once.
  int64_t cells = 0, pts = 0;
  for (const auto& d : run.devices) {
    EXPECT_GT(d.cells, 0) << d.device;
    EXPECT_GT(d.busy_s, 0) << d.device;
    EXPECT_FALSE(d.cpus.empty()) << d.device;  // where it ran, as it reported
    EXPECT_EQ(d.threads, 1) << d.device;
    cells += d.cells, pts += d.points;
  }
  EXPECT_EQ(cells, int64_t(s.cells.size()));
  EXPECT_EQ(pts, int64_t(s.sw.points.size()));
  const auto points = store.points(out.run_id);
  ASSERT_EQ(points.size(), s.sw.points.size());
  std::map<std::string, size_t> per_device;
  for (const auto& p : points) {
    ++per_device[p.device];
    EXPECT_TRUE(p.state.known);  // the cell's device state came back with it
    EXPECT_EQ(p.point.key(), s.sw.points[size_t(p.seq)].key());
  }
  EXPECT_EQ(per_device.size(), 2u);
  const std::string line = devices_line(run, points);
  EXPECT_EQ(line.rfind("devices: cpu (Fake GPU) ", 0), 0u) << line;
  EXPECT_NE(line.find("; cpu#2 (Fake GPU) "), std::string::npos) << line;
  EXPECT_NE(line.find(" s busy, CPUs "), std::string::npos) << line;
  EXPECT_NE(log.str().find(" on cpu#2 in "), std::string::npos) << log.str();
}

TEST(Handout, LongestExpectedFirstEqualsInOrder) {
  EXPECT_EQ(handout_order({1, 5, 2, 5, 0, 3}), (std::vector<size_t>{1, 3, 5, 2, 0, 4}));
  EXPECT_EQ(handout_order({}), std::vector<size_t>{});
  EXPECT_EQ(handout_order({2, 2, 2}), (std::vector<size_t>{0, 1, 2}));
}

TEST(Handout, ExpectedCellSecondsFollowTheProtocol) {
  const SweepSetup s = setup(write_config());
  const CellPoints& cell = s.cells.front();  // two speed points, rounds: 2, 25 + 100 ms
  const Timing& t = s.cfg.timing;
  // Free calls: the budget and the setup, as the shards count a cell.
  EXPECT_NEAR(expected_cell_seconds(cell, t, {}), 2 * 0.125 + 2 * kPointSetupSeconds, 1e-12);
  // 1 ms calls: a point's first call and estimate (6 calls) on top of its rounds' budgets.
  EXPECT_NEAR(expected_cell_seconds(cell, t, [](const Point&) { return 1.0; }),
              2 * (6 + 2 * (12.5 + 50)) / 1000 + 2 * kPointSetupSeconds, 1e-12);
  // 80 ms calls: past the round's budgets, one warm-up and one repeat call each round.
  EXPECT_NEAR(expected_cell_seconds(cell, t, [](const Point&) { return 80.0; }),
              2 * (6 + 2 * 2) * 80 / 1000.0 + 2 * kPointSetupSeconds, 1e-12);
  // What a call is expected to take: the stored median first, else the floor at the peak.
  const Point& p = *cell.front();
  EXPECT_EQ(expected_call_ms(p, {{p.key(), 0.25}}, 1000), 0.25);
  const double floor = expected_call_ms(p, {}, 1000);
  EXPECT_GT(floor, 0);
  EXPECT_EQ(expected_call_ms(p, {}, 0), 0);
  EXPECT_LT(floor, expected_call_ms(*s.cells.back().front(), {}, 1000));  // n = 1024 moves more than n = 256
}

TEST(WorkerPool, HandsOutLongestFirstAndCountsEachWorkersShare) {
  Started st = started("cpu,cpu", {"FAKE_SLEEP_MS=5"});
  const SweepSetup& s = st.s;
  std::vector<int64_t> begun;  // x of each cell, in hand-out order
  Collected got;
  CellHooks h = got.hooks();
  auto begin = h.begin;
  h.begin = [&](const CellPoints& p, const std::string& d) { begun.push_back(p.front()->x_value), begin(p, d); };
  h.expected_seconds = [](const CellPoints& p) { return double(p.front()->x_value); };
  st.pool->use_config(0);
  st.pool->measure(s.cells, h);
  ASSERT_EQ(begun.size(), s.cells.size());
  EXPECT_TRUE(std::is_sorted(begun.rbegin(), begun.rend())) << "not longest first";
  int64_t cells = 0, points = 0;
  double busy = 0;
  for (const auto& d : st.pool->devices()) {
    EXPECT_GT(d.cells, 0) << d.device << " got no cell";
    cells += d.cells, points += d.points, busy += d.busy_s;
  }
  EXPECT_EQ(cells, int64_t(s.cells.size()));
  EXPECT_EQ(points, int64_t(s.sw.points.size()));
  EXPECT_GT(busy, 0.005 * double(s.sw.points.size() * 2));  // every round slept
  st.pool->use_config(0);  // a new run: its shares start at 0, the command's go on
  for (const auto& d : st.pool->devices()) EXPECT_EQ(d.cells, 0);
  int64_t total = 0;
  for (const auto& d : st.pool->command_shares()) total += d.cells;
  EXPECT_EQ(total, int64_t(s.cells.size()));
}

TEST(WorkerPool, OneSetOfWorkersServesEveryConfigOfTheCommand) {
  const std::string a = write_config(), b = write_second_config("torch: to");
  const SweepSetup sa = setup(a), sb = setup(b);
  PoolOptions o = options(a + "," + b, "cpu,cpu", sa.cfg.hash);
  o.setup.config_hashes = {sa.cfg.hash, sb.cfg.hash};
  WorkerPool pool(o);
  ASSERT_TRUE(pool.start({}));
  Collected got_a, got_b;
  measure_both(pool, sa, got_a, sb, got_b);
  EXPECT_EQ(got_a.times.size(), sa.sw.points.size());
  EXPECT_EQ(got_b.times.size(), sb.sw.points.size());
  for (const auto& [key, r] : got_b.result) EXPECT_EQ(r.rounds.size(), 3u) << key;  // measured with b's timing
  EXPECT_EQ(pool.pids().size(), 2u);  // started once
  // A worker that read other configs is refused.
  PoolOptions other = options(a, "cpu", sa.cfg.hash);
  other.setup.config_hashes = {sa.cfg.hash, sb.cfg.hash};
  WorkerPool refused(other);
  EXPECT_THROW(refused.start({}), RuntimeFailure);
}

// Worker protocol 2: the workers are told the configs and handed the points; none reads a
// config (the files are gone before they start), each answers which providers it cannot run
// for what it is told, and each cell is measured with its config's timing.
TEST(WorkerPool, TellsItsWorkersTheConfigsAndHandsThemThePoints) {
  const std::string a = write_config(), b = write_second_config("torch: to, cuda: cu");
  const SweepSetup sa = setup(a), sb = setup(b);
  PoolOptions o = options("-", "cpu,cpu", "");
  o.setup = WorkerSetup();
  ASSERT_EQ(o.setup.protocol, 2);
  for (const SweepSetup* s : {&sa, &sb})
    o.setup.configs.push_back({s->cfg.path, s->cfg.op, timing_block(s->cfg.text, s->cfg.path), sweep_providers(s->cfg, s->sw)});
  std::filesystem::remove(a);
  std::filesystem::remove(b);
  WorkerPool pool(o);
  ASSERT_TRUE(pool.start({}));
  EXPECT_TRUE(pool.unavailable(0).empty());
  const std::map<std::string, std::string> gone = pool.unavailable(1);
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(gone.begin()->first, "cuda");
  EXPECT_NE(gone.begin()->second.find("no GPU here"), std::string::npos) << gone.begin()->second;
  Collected got_a, got_b;
  measure_both(pool, sa, got_a, sb, got_b);
  ASSERT_EQ(got_a.times.size(), sa.sw.points.size());
  ASSERT_EQ(got_b.times.size(), sb.sw.points.size());
  for (const auto& [key, r] : got_a.result) EXPECT_EQ(r.rounds.size(), 2u) << key;  // a's timing
  for (const auto& [key, r] : got_b.result) EXPECT_EQ(r.rounds.size(), 3u) << key;  // b's timing
  for (const auto& [key, n] : got_a.times) EXPECT_EQ(n, 1) << key;
  EXPECT_EQ(pool.pids().size(), 2u);
  // A worker that reads the configs (protocol 1) where protocol 2 is spoken is refused.
  PoolOptions older = options(write_config(), "cpu", "");  // its file again
  older.setup = o.setup;
  WorkerPool refused(older);
  try {
    refused.start({});
    ADD_FAILURE() << "started";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("protocol 1, not 2"), std::string::npos) << e.what();
  }
}

TEST(WorkerPool, PinsEachWorkerToTheCpusItsSourceNames) {
  const std::string config = write_config();
  const SweepSetup s = setup(config);
  PoolOptions o = options(config, "cpu,cpu", s.cfg.hash);
  const std::vector<int> mine = this_placement().cpus;
  ASSERT_FALSE(mine.empty());
  const std::vector<int> first = {mine.back()};
  o.cpus = [&](const WorkerSlot& slot) { return slot.name == "cpu" ? first : std::vector<int>{}; };  // a fake source
  WorkerPool pool(o);
  ASSERT_TRUE(pool.start({}));
  const std::vector<RunDevice> devices = pool.devices();
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].cpus, cpu_list_text(first));  // what the worker itself reads back
  EXPECT_TRUE(devices[0].pinned);
  EXPECT_EQ(devices[1].cpus, cpu_list_text(this_placement().cpus));  // not pinned: this process's CPUs
  EXPECT_FALSE(devices[1].pinned);
  EXPECT_FALSE(devices[0].memory.empty());
  EXPECT_EQ(this_placement().cpus, mine);  // this process was left as it was
}

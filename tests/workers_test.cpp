// A sweep on several devices, against fake workers that run the real worker loop: the messages
// keep every figure, every cell is measured once from one queue, a worker that dies mid-cell
// has its cell measured again once (and failed when it kills a second), a call that never
// returns fails its point while a new worker goes on, a stop hands out no more cells, several
// GPU models are refused; through the sweep loop each point records the device that measured
// it and one process writes the run.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "report/provenance.hpp"
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

PoolOptions options(const std::string& config, const std::string& devices, const std::string& cfg_hash,
                    std::map<std::string, std::string> gpu = {}, std::vector<std::string> env = {}) {
  PoolOptions o;
  o.slots = parse_devices(devices, 0);
  o.command = [config, gpu](const WorkerSlot& slot) {
    auto it = gpu.find(slot.name);
    return std::vector<std::string>{OPBENCH_FAKE_WORKER, config, slot.device, it == gpu.end() ? "Fake GPU" : it->second};
  };
  o.env = std::move(env);
  o.config_hash = cfg_hash;
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
  EXPECT_EQ(parse_cell(cell_line(s.cells[0]), "p"),
            (std::vector<std::string>{s.cells[0][0]->key(), s.cells[0][1]->key()}));
  WorkerHello h;
  h.device = "cuda:1";
  h.config_hash = "abc";
  h.env.gpu = "NVIDIA H100 80GB HBM3";
  h.env.peak_gbps = 2941.25;
  h.unavailable = {{std::string("cuda"), std::string("not built")}};
  const WorkerHello hb = parse_hello(hello_line(h), "w");
  EXPECT_EQ(hb.env.gpu, h.env.gpu);
  EXPECT_EQ(hb.env.peak_gbps, h.env.peak_gbps);
  EXPECT_EQ(hb.unavailable, h.unavailable);
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
  h.stop = [&] { return !got.times.empty(); };  // after the first cell came back
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
  opt.devices = {"cpu", "cpu"};
  opt.progress = ProgressMode::lines;
  std::ostringstream log;
  const SweepOutcome out = run_sweep(s.cfg, s.sw, *st.pool, store, opt, log);
  EXPECT_EQ(out.measured, s.sw.points.size());
  const RunInfo run = *store.run(out.run_id);
  EXPECT_EQ(run.status, "done");
  EXPECT_EQ(run.env.device, "cpu,cpu");
  ASSERT_EQ(run.devices.size(), 2u);
  EXPECT_EQ(run.devices[1], (RunDevice{"cpu#2", "Fake GPU", 1000}));
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
  EXPECT_NE(line.find(", cpu#2 (Fake GPU) "), std::string::npos) << line;
  EXPECT_NE(log.str().find(" on cpu#2 in "), std::string::npos) << log.str();
}

// How a run was measured, kept as data: the timing columns (flush, rounds, threads, budgets),
// the providers' tuning variables and the GPU's state per run and per table cell: stored by a
// sweep through a fake executor, backfilled into older databases from their stored configs,
// shown in the report header, throttled points flagged. Torch-free.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "report/provenance.hpp"
#include "report/report.hpp"
#include "sweep/runner.hpp"
#include "sql_file.hpp"
#include "temp_db.hpp"

using namespace opbench;

namespace {

std::string temp_db(const std::string& name) { return fresh_db_path("prov", name); }

DeviceState gpu(double sm, double temp, double watts, uint64_t reasons) {
  DeviceState s;
  s.known = true;
  s.sm_mhz = sm;
  s.memory_mhz = 2619;
  s.sm_default_mhz = 1980;
  s.temperature_c = temp;
  s.power_w = watts;
  s.reasons = reasons;
  s.throttled = throttled_for_power_or_heat(sm, s.sm_default_mhz, reasons);
  return s;
}

// A run's timing as the store gives it back: L2 flush, rounds, threads, warm-up and budget.
void expect_timing(const RunInfo& r, const std::string& flush_l2, int64_t rounds, int64_t threads,
                   double warmup_ms, double rep_ms) {
  SCOPED_TRACE("run '" + r.label + "'");
  EXPECT_EQ(r.flush_l2, flush_l2);
  EXPECT_EQ(r.rounds, rounds);
  EXPECT_EQ(r.threads, threads);
  EXPECT_DOUBLE_EQ(r.warmup_ms, warmup_ms);
  EXPECT_DOUBLE_EQ(r.rep_ms, rep_ms);
}

// The report says `text` (the whole report shown where it does not).
void expect_in(const std::string& doc, const std::string& text) {
  EXPECT_NE(doc.find(text), std::string::npos) << doc;
}

// A GPU whose state the sweep reads after each cell: hot and power-capped at n = 512.
class FakeGpu : public Executor {
 public:
  int cells = 0;
  Point last;
  Environment environment() override {
    Environment e;
    e.device = "cuda:0";
    e.gpu = "Fake GPU";
    e.state = gpu(1980, 35, 120, 0);
    e.tuning = std::vector<std::pair<std::string, std::string>>{{"OPBENCH_TUNING_1D", "flat_units=4"}};
    return e;
  }
  std::string unavailable(const std::string&, const std::string&) override { return ""; }
  Result measure(const Point& p, const Timing&) override {
    last = p;
    Result r;
    r.unit = "ms";
    r.samples = {0.01, 0.011};
    r.stats = summarize(r.samples);
    return r;
  }
  DeviceState device_state() override {
    ++cells;
    return last.x_value == 512 ? gpu(1100, 88, 700, clock_reason::kSwPowerCap | clock_reason::kSwThermal)
                               : gpu(1980, 50, 400, clock_reason::kSwPowerCap);
  }
};

const char* kConfig = R"(
op: act
x: {n: [256, 512, 1024]}
params: {batch: 1, head: 1, dim: 16, mode: fwd, metric: speed, act: relu}
providers: {torch: to, torch_compile: toc}
timing: {warmup_ms: 5, rep_ms: 20, rounds: 2, threads: 1}
)";

}  // namespace

TEST(DeviceState, ThrottledMeansPowerOrHeatBelowTheThreshold) {
  using namespace clock_reason;
  EXPECT_TRUE(throttled_for_power_or_heat(1400, 1980, kSwPowerCap));   // 71% of the default
  EXPECT_FALSE(throttled_for_power_or_heat(1500, 1980, kSwPowerCap));  // 76%: above nvbench's 75%
  EXPECT_FALSE(throttled_for_power_or_heat(345, 1980, kGpuIdle));      // idle, not throttled
  EXPECT_FALSE(throttled_for_power_or_heat(800, 1980, kApplicationsClocks));  // clocks set low by hand
  EXPECT_TRUE(throttled_for_power_or_heat(800, 1980, kHwThermal));
  EXPECT_FALSE(throttled_for_power_or_heat(800, 0, kHwThermal));  // no reference clock
  EXPECT_EQ(clock_reasons_text(kSwPowerCap | kHwThermal), "power cap, thermal slowdown (hw)");
  EXPECT_EQ(clock_reasons_text(0), "");
}

TEST(Provenance, ASweepRecordsTimingTuningAndTheGpuPerCell) {
  Config cfg = parse_config(kConfig, "c.yaml");
  EXPECT_EQ(cfg.timing.threads, 1);
  Store store(temp_db("sweep.db"));
  FakeGpu ex;
  std::ostringstream log;
  SweepOutcome out = run_sweep(cfg, expand(cfg), ex, store, {}, log);
  EXPECT_EQ(ex.cells, 3);  // once per table cell, not per point or round
  const RunInfo run = *store.run(out.run_id);
  expect_timing(run, "write", 2, 1, 5, 20);
  ASSERT_TRUE(run.env.tuning.has_value());
  EXPECT_EQ(*run.env.tuning, (std::vector<std::pair<std::string, std::string>>{{"OPBENCH_TUNING_1D", "flat_units=4"}}));
  EXPECT_TRUE(run.env.state.known);
  EXPECT_DOUBLE_EQ(run.env.state.sm_mhz, 1980);
  const auto pts = store.points(run.id);
  ASSERT_EQ(pts.size(), 6u);
  for (const auto& p : pts) {
    ASSERT_TRUE(p.state.known);
    EXPECT_EQ(p.state.throttled, p.point.x_value == 512) << p.point.x_value;
    EXPECT_DOUBLE_EQ(p.state.power_w, p.point.x_value == 512 ? 700 : 400);
    EXPECT_EQ(p.state.reasons & clock_reason::kSwThermal, p.point.x_value == 512 ? clock_reason::kSwThermal : 0u);
  }

  const std::string doc = render_report({{run, pts}});
  expect_in(doc, "\n\ntiming: L2 flush write, 2 rounds, stopping once the 95% interval of a median is under "
                 "0.5% (at least 5 samples; at most the repeat budget), warm-up 5 ms and repeat 20 ms a point, "
                 "1 thread\n");
  expect_in(doc, "\n\ntuning: OPBENCH_TUNING_1D=flat_units=4\n");
  expect_in(doc, "\n\nGPU: SM 1980 MHz (default 1980), memory 2619 MHz, 35 C, 120 W at the start; after "
                 "each of 3 table cells: SM 1100-1980 MHz, memory 2619 MHz, 50-88 C, 400-700 W; throttled "
                 "for power or heat after 1 of them\n");
  expect_in(doc, "Points measured while the GPU throttled for power or heat");
  expect_in(doc, "- act-speed-fwd-batch1-head1-dim16-act_relu-bf16 n=512 torch: SM 1100 MHz (default 1980), "
                 "memory 2619 MHz, 88 C, 700 W (power cap, thermal slowdown (sw))\n");
  EXPECT_EQ(throttled_points(pts).size(), 2u);
}

TEST(Provenance, AReportWithoutAGpuOrForAnImportShowsWhatIsKnown) {
  RunInfo r;
  r.id = 1;
  r.env.device = "cpu";
  r.env.gpu = "Some CPU";
  Timing t;
  t.threads = 0;
  t.flush_l2 = L2Flush::write;
  t.stop_rule = StopRule::budget;
  t.rounds = 8;
  set_timing(r, t);
  std::string doc = render_report({{r, {}}});
  expect_in(doc, "timing: L2 flush write, 8 rounds, all of them (do_bench's fixed budget), warm-up 25 ms and "
                 "repeat 100 ms a point, LibTorch's own threads");
  EXPECT_EQ(doc.find("GPU:"), std::string::npos);
  EXPECT_EQ(doc.find("tuning:"), std::string::npos);
  r.source = "import";
  r.config_path = "ref.md";
  doc = render_report({{r, {}}});
  EXPECT_EQ(doc.find("timing:"), std::string::npos) << doc;
  RunInfo unknown;
  EXPECT_EQ(timing_line(unknown), "");
  EXPECT_EQ(threads_text(RunInfo::kThreadsUnknown), "");
}

// A schema-5 database (as opbench wrote before the timing columns): after migration each sweep
// run has the timing its stored config spells out, the rounds its points stored where the
// config left them to the default, LibTorch's own thread count; an imported run stays unknown.
TEST(Provenance, OlderRunsAreBackfilledFromTheirStoredConfig) {
  const std::string path = temp_db("v5.db");
  {
    const char* v5 =
        "CREATE TABLE runs(id INTEGER PRIMARY KEY AUTOINCREMENT, label TEXT NOT NULL DEFAULT '', source TEXT NOT NULL DEFAULT 'sweep', device TEXT, gpu TEXT, sm_count INTEGER, memory_bytes INTEGER, driver TEXT, cuda_runtime TEXT, torch_version TEXT, compute_capability TEXT, peak_gbps REAL, host TEXT, git_commit TEXT, config_path TEXT, config_text TEXT, config_hash TEXT, op TEXT, stat TEXT, notation TEXT, started_at TEXT, finished_at TEXT, status TEXT, uuid TEXT);"
        "CREATE UNIQUE INDEX runs_uuid ON runs(uuid);"
        "CREATE TABLE points(id INTEGER PRIMARY KEY AUTOINCREMENT, run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, seq INTEGER NOT NULL, section TEXT, title TEXT NOT NULL, op TEXT, params TEXT, x_name TEXT, x_value INTEGER, provider TEXT NOT NULL, label TEXT, mode TEXT, metric TEXT, dtype TEXT, unit TEXT, stat TEXT, value REAL, median REAL, mean REAL, min REAL, max REAL, p20 REAL, p80 REAL, stdev REAL, count INTEGER, samples TEXT, bytes REAL, gbps REAL, pct_peak REAL, error TEXT, created_at TEXT, rel_err REAL, check_failed INTEGER NOT NULL DEFAULT 0, rounds TEXT, UNIQUE(run_id, title, x_value, provider));"
        "CREATE TABLE compiles(id INTEGER PRIMARY KEY AUTOINCREMENT, run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, title TEXT, provider TEXT, package_key TEXT, seconds REAL, cached INTEGER, error TEXT);"
        "INSERT INTO runs(label, source, config_path, config_text, uuid) VALUES('explicit', 'sweep', 'a.yaml',"
        " 'op: act\nx: {n: [256]}\ntiming: {flush_l2: read, rounds: 3, warmup_ms: 5, rep_ms: 20}\n', 'u1');"
        "INSERT INTO runs(label, source, config_path, config_text, uuid) VALUES('defaults', 'sweep', 'b.yaml',"
        " 'op: act\nx: {n: [256]}\n', 'u2');"
        "INSERT INTO points(run_id, seq, title, provider, x_name, x_value, value, rounds)"
        " VALUES(2, 0, 't', 'torch', 'n', 256, 1.5, '[10,10,10,10]');"
        "INSERT INTO runs(label, source, config_path, config_text, uuid) VALUES('before-rounds', 'sweep', 'c.json',"
        " '{\"op\": \"act\", \"x\": {\"n\": [256]}, \"timing\": {\"flush_l2\": false}}', 'u3');"
        "INSERT INTO runs(label, source, config_path, config_text, uuid) VALUES('broken', 'sweep', 'd.yaml',"
        " 'op: [unclosed', 'u4');"
        "INSERT INTO runs(label, source, config_path, config_text, uuid) VALUES('doc', 'import', 'ref.md', '', 'u5');"
        "PRAGMA user_version = 5;";
    ASSERT_NO_FATAL_FAILURE(exec_sql(path, v5));
  }
  Store s(path);
  EXPECT_EQ(s.version(), Store::schema_version());
  EXPECT_GE(Store::schema_version(), 6);
  const RunInfo a = s.select("label:explicit"), b = s.select("label:defaults"), c = s.select("label:before-rounds"),
                d = s.select("label:broken"), e = s.select("label:doc");
  expect_timing(a, "read", 3, 0, 5, 20);
  EXPECT_EQ(b.flush_l2, "write");
  EXPECT_EQ(b.rounds, 4);  // from its points: the config left rounds to the default
  EXPECT_DOUBLE_EQ(b.rep_ms, 100);
  EXPECT_EQ(c.flush_l2, "none");
  EXPECT_EQ(c.rounds, 0);  // unknown: neither the config nor the points say
  EXPECT_EQ(d.flush_l2, "");
  EXPECT_EQ(d.threads, 0);
  EXPECT_EQ(e.flush_l2, "");
  EXPECT_EQ(e.rounds, 0);
  EXPECT_EQ(e.threads, RunInfo::kThreadsUnknown);
  EXPECT_FALSE(e.env.tuning.has_value());
  EXPECT_FALSE(e.env.state.known);
  EXPECT_FALSE(s.points(b.id)[0].state.known);
}

TEST(Provenance, EveryFieldRoundTripsThroughTheStore) {
  Store s(temp_db("rt.db"));
  RunInfo r;
  Timing t;
  t.flush_l2 = L2Flush::none;
  t.rounds = 5;
  t.threads = 3;
  t.warmup_ms = 2.5;
  t.rep_ms = 40;
  set_timing(r, t);
  r.env.tuning.emplace();  // recorded, none set
  r.env.state = gpu(1500, 61, 350.5, clock_reason::kSwPowerCap);
  s.begin_run(r);
  StoredPoint p;
  p.run_id = r.id;
  p.point.title = "t";
  p.point.provider = "torch";
  p.state = gpu(1000, 90, 699, clock_reason::kHwThermal);
  s.add_point(p);
  const RunInfo back = *s.run(r.id);
  expect_timing(back, "none", 5, 3, 2.5, 40);
  ASSERT_TRUE(back.env.tuning.has_value());
  EXPECT_TRUE(back.env.tuning->empty());
  EXPECT_DOUBLE_EQ(back.env.state.power_w, 350.5);
  EXPECT_EQ(back.env.state.reasons, clock_reason::kSwPowerCap);
  EXPECT_FALSE(back.env.state.throttled);  // 75% of 1980 is 1485: 1500 is above
  const StoredPoint pb = s.points(r.id).at(0);
  EXPECT_TRUE(pb.state.throttled);
  EXPECT_DOUBLE_EQ(pb.state.temperature_c, 90);
  EXPECT_DOUBLE_EQ(pb.state.sm_default_mhz, 1980);
}

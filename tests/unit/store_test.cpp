// The store: schema and migrations, runs and points round trip, selectors, an interrupted
// run, and two processes writing one database.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "store/store.hpp"
#include "sql_file.hpp"
#include "temp_db.hpp"

using namespace opbench;

static std::string temp_db(const std::string& name) { return fresh_db_path("store", name); }

// Takes a database back from schema 13 (the host share) to 12.
#define kDropSchema14                                                                                              \
  "ALTER TABLE runs DROP COLUMN identity; ALTER TABLE run_devices DROP COLUMN identity; ALTER TABLE run_devices " \
  "DROP COLUMN calibration; "
#define kDropSchema13 kDropSchema14 "ALTER TABLE points DROP COLUMN host_share; "

// Takes a database back from schema 13 to 11 (schema 12: the check's reference figures, the
// control).
#define kDropSchema12                                                                                              \
  kDropSchema13                                                                                                    \
  "ALTER TABLE points DROP COLUMN max_err; ALTER TABLE points DROP COLUMN ref_err; ALTER TABLE points DROP "    \
  "COLUMN ref_max_err; ALTER TABLE points DROP COLUMN control; "

// Takes a database back from schema 13 to 9 (schema 10: stop rules, stages).
#define kDropSchema10                                                                                              \
  kDropSchema11                                                                                                    \
  "ALTER TABLE runs DROP COLUMN stop; ALTER TABLE runs DROP COLUMN noise_pct; ALTER TABLE runs DROP COLUMN "   \
  "min_rounds; ALTER TABLE runs DROP COLUMN min_samples; ALTER TABLE runs DROP COLUMN stages; ALTER TABLE "    \
  "points DROP COLUMN stop; ALTER TABLE points DROP COLUMN precision; "

// What schema 11 added (each device's share and placement), dropped to make an older database
// (with what came after it).
#define kDropSchema11                                                                                              \
  kDropSchema12                                                                                                    \
  "ALTER TABLE run_devices DROP COLUMN cells; ALTER TABLE run_devices DROP COLUMN points; ALTER TABLE "         \
  "run_devices DROP COLUMN busy_s; ALTER TABLE run_devices DROP COLUMN cpus; ALTER TABLE run_devices DROP "     \
  "COLUMN pinned; ALTER TABLE run_devices DROP COLUMN threads; ALTER TABLE run_devices DROP COLUMN memory; "

static StoredPoint make_point(int64_t run, int64_t seq, const std::string& prov, int64_t x, double ms) {
  StoredPoint sp;
  sp.run_id = run;
  sp.seq = seq;
  sp.section = "act_silu";
  sp.point.op = "act";
  sp.point.title = "act-speed-fwd-batch1-head1-dim16-act_silu-fp32";
  sp.point.params = Params({{"batch", int64_t(1)}, {"mode", std::string("fwd")}, {"metric", std::string("speed")},
                            {"n", x}, {"dtype", std::string("fp32")}});
  sp.point.x_name = "n";
  sp.point.x_value = x;
  sp.point.provider = prov;
  sp.point.label = prov.substr(0, 2);
  sp.stat = "median";
  sp.result.unit = "ms";
  sp.result.samples = {ms, ms * 1.1, ms * 0.9};
  sp.result.stats = summarize(sp.result.samples);
  sp.value = sp.result.stats.median;
  sp.result.bytes = 1024;
  sp.result.rel_err = 1e-7;
  return sp;
}

TEST(Store, SchemaVersionAndRoundTrip) {
  std::string path = temp_db("rt.db");
  Store s(path);
  EXPECT_EQ(s.version(), Store::schema_version());
  RunInfo r;
  r.label = "base";
  r.env.gpu = "NVIDIA H100 80GB HBM3";
  r.env.peak_gbps = 2940;
  r.op = "act";
  r.notation = {{"tr", "cuda"}, {"to", "torch"}};
  s.begin_run(r);
  EXPECT_GT(r.id, 0);
  auto torch = make_point(r.id, 0, "torch", 256, 0.5);
  torch.result.rounds = {2, 1};  // two rounds: 2 samples, then 1
  torch.result.control = {0.0625, 0.0631};  // the control workload's median in each
  torch.result.max_err = 3e-7;
  torch.result.ref_err = 2e-7;
  torch.result.ref_max_err = 4e-7;
  s.add_point(torch);
  auto err = make_point(r.id, 1, "cuda", 256, 0.1);
  err.result.error = "out of memory";
  err.value = -1;
  s.add_point(err);
  s.finish_run(r.id, "done");

  auto runs = s.runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].points, 2);
  EXPECT_EQ(runs[0].status, "done");
  EXPECT_EQ(runs[0].notation, r.notation);
  EXPECT_DOUBLE_EQ(runs[0].env.peak_gbps, 2940);
  auto pts = s.points(r.id);
  ASSERT_EQ(pts.size(), 2u);
  EXPECT_EQ(pts[0].point.params.i("n"), 256);
  EXPECT_EQ(pts[0].point.params.s("mode"), "fwd");
  EXPECT_EQ(pts[0].result.samples.size(), 3u);
  EXPECT_EQ(pts[0].result.rounds, (std::vector<int64_t>{2, 1}));
  EXPECT_TRUE(pts[1].result.rounds.empty());
  EXPECT_DOUBLE_EQ(pts[0].value, 0.5);
  EXPECT_DOUBLE_EQ(pts[0].result.rel_err, 1e-7);
  EXPECT_DOUBLE_EQ(pts[0].result.max_err, 3e-7);
  EXPECT_DOUBLE_EQ(pts[0].result.ref_err, 2e-7);
  EXPECT_DOUBLE_EQ(pts[0].result.ref_max_err, 4e-7);
  EXPECT_EQ(pts[0].result.control, (std::vector<double>{0.0625, 0.0631}));
  EXPECT_TRUE(pts[1].result.control.empty());
  EXPECT_EQ(pts[1].result.ref_err, -1);  // not checked
  EXPECT_EQ(pts[1].result.error, "out of memory");
  EXPECT_EQ(pts[1].value, -1);

  // read without samples: everything else as stored
  auto bare = s.points_without_samples(r.id);
  ASSERT_EQ(bare.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_TRUE(bare[i].result.samples.empty());
    EXPECT_TRUE(bare[i].result.rounds.empty());
    EXPECT_EQ(bare[i].point.key(), pts[i].point.key());
    EXPECT_EQ(bare[i].result.stats.count, pts[i].result.stats.count);
    EXPECT_DOUBLE_EQ(bare[i].result.stats.p80, pts[i].result.stats.p80);
    EXPECT_EQ(bare[i].value, pts[i].value);
    EXPECT_EQ(bare[i].result.error, pts[i].result.error);
    EXPECT_EQ(bare[i].result.bytes, pts[i].result.bytes);
  }
}

TEST(Store, Selectors) {
  Store s(temp_db("sel.db"));
  EXPECT_THROW(s.select("latest"), InputError);
  RunInfo a, b;
  a.label = "base";
  a.env.gpu = "NVIDIA A800";
  b.label = "head";
  b.env.gpu = "NVIDIA H100 80GB HBM3";
  s.begin_run(a);
  s.begin_run(b);
  EXPECT_EQ(s.select("latest").id, b.id);
  EXPECT_EQ(s.select(std::to_string(a.id)).id, a.id);
  EXPECT_EQ(s.select("label:base").id, a.id);
  EXPECT_EQ(s.select("gpu:h100").id, b.id);
  EXPECT_EQ(s.select("gpu:A800").id, a.id);
  EXPECT_THROW(s.select("label:nope"), InputError);
  EXPECT_THROW(s.select("99"), InputError);
  EXPECT_THROW(s.select("yesterday"), InputError);
}

TEST(Store, MigratesAnOlderSchema) {
  std::string path = temp_db("mig.db");
  // A version-1 database as an older opbench wrote it.
  ASSERT_NO_FATAL_FAILURE(exec_sql(path, std::string(kSchema1Tables) +
                                         "INSERT INTO runs(label, gpu, status) VALUES('old', 'A800', 'done');"
                                         "INSERT INTO points(run_id, seq, title, provider, x_name, x_value, value) VALUES(1, 0, 't', 'torch', 'n', 256, 1.5);"
                                         "PRAGMA user_version = 1;"));
  Store s(path);
  EXPECT_EQ(s.version(), Store::schema_version());
  auto pts = s.points(1);
  ASSERT_EQ(pts.size(), 1u);
  EXPECT_DOUBLE_EQ(pts[0].value, 1.5);
  EXPECT_FALSE(pts[0].result.check_failed);
  EXPECT_EQ(s.select("label:old").env.gpu, "A800");
}

TEST(Store, RefusesANewerSchema) {
  std::string path = temp_db("new.db");
  {
    sqlite3* db = nullptr;
    sqlite3_open(path.c_str(), &db);
    sqlite3_exec(db, "PRAGMA user_version = 999;", nullptr, nullptr, nullptr);
    sqlite3_close(db);
  }
  EXPECT_THROW(Store s(path), RuntimeFailure);
}

TEST(Store, AFailedBatchWritesNothing) {
  Store s(temp_db("batch.db"));
  RunInfo r;
  s.begin_run(r);
  std::vector<StoredPoint> batch = {make_point(r.id, 0, "torch", 256, 1), make_point(r.id, 1, "torch", 512, 1)};
  EXPECT_THROW(s.transaction([&] {
    s.add_points(batch);  // nested BEGIN fails: the outer transaction rolls back
  }), RuntimeFailure);
  EXPECT_TRUE(s.points(r.id).empty());
  s.add_points(batch);
  EXPECT_EQ(s.points(r.id).size(), 2u);
}

TEST(Store, TwoProcessesWriteOneDatabase) {
  std::string path = temp_db("multi.db");
  { Store init(path); }
  const int kPoints = 150;
  pid_t kids[2];
  for (int k = 0; k < 2; ++k) {
    kids[k] = fork();
    if (kids[k] == 0) {
      try {
        Store s(path);
        RunInfo r;
        r.label = "proc" + std::to_string(k);
        s.begin_run(r);
        for (int i = 0; i < kPoints; ++i) s.add_point(make_point(r.id, i, "torch", 16 + i, 1.0 + i));
        s.finish_run(r.id, "done");
        _exit(0);
      } catch (...) {
        _exit(1);
      }
    }
  }
  for (auto kid : kids) {
    int st = 0;
    waitpid(kid, &st, 0);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  Store s(path);
  auto runs = s.runs();
  ASSERT_EQ(runs.size(), 2u);
  for (const auto& r : runs) {
    EXPECT_EQ(r.points, kPoints) << r.label;
    EXPECT_EQ(r.status, "done");
  }
}

// Overwrites one page of the file (1-based) with bytes that are no b-tree page.
static void damage_page(const std::string& path, int64_t page, int64_t page_size) {
  FILE* f = std::fopen(path.c_str(), "r+b");
  ASSERT_NE(f, nullptr);
  std::string junk(size_t(page_size), '\0');
  for (size_t i = 0; i < junk.size(); ++i) junk[i] = char((i * 131 + 7) & 0xff);
  std::fseek(f, long((page - 1) * page_size), SEEK_SET);
  std::fwrite(junk.data(), 1, junk.size(), f);
  std::fclose(f);
}

TEST(Store, ADamagedFileIsRefusedOnOpen) {
  const std::string path = temp_db("damaged.db");
  int64_t root = 0, page_size = 0;
  {
    Store s(path);
    for (int i = 0; i < 3; ++i) {
      RunInfo r;
      r.label = "run" + std::to_string(i);
      s.begin_run(r);
      s.add_point(make_point(r.id, 0, "torch", 256, 1));
    }
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(s.handle(), "SELECT rootpage FROM sqlite_master WHERE name='runs'", -1, &st, nullptr);
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    root = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_prepare_v2(s.handle(), "PRAGMA page_size", -1, &st, nullptr);
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    page_size = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
  }  // closing the last connection checkpoints the WAL into the file
  damage_page(path, root, page_size);
  try {
    Store s(path, /*create=*/false);
    ADD_FAILURE() << "a damaged database opened; runs: " << s.runs().size();
  } catch (const RuntimeFailure& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("database " + path + " is damaged"), std::string::npos) << msg;
    EXPECT_NE(msg.find(".recover"), std::string::npos) << msg;
  }
}

TEST(Store, ErrorsNameTheFile) {
  const std::string path = temp_db("errors.db");
  Store s(path);
  try {
    s.add_point(make_point(12345, 0, "torch", 256, 1));  // no run 12345: a foreign key fails
    ADD_FAILURE() << "a point of no run was stored";
  } catch (const RuntimeFailure& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  // A file that is no database at all.
  const std::string text = temp_db("text.db");
  { std::ofstream(text) << "this is not a database, it is a text file long enough to have a header\n"; }
  try {
    Store t(text, /*create=*/false);
    ADD_FAILURE() << "a text file opened as a database";
  } catch (const RuntimeFailure& e) {
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

TEST(Store, SelectorsBeyondSixtyFourBitsAreInputErrors) {
  Store s(temp_db("sel64.db"));
  RunInfo r;
  s.begin_run(r);
  try {
    s.select("99999999999999999999999");
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("run 99999999999999999999999: run id out of range"), std::string::npos) << e.what();
  }
  EXPECT_THROW(s.select("0"), InputError);
  EXPECT_THROW(s.select("gpu:"), InputError);
}

// Schema 8: each point records its device. A database of schema 7 gets its points' devices
// from their runs (an import's stay unknown), read-only in memory and for good when opened to
// write; a run's devices round-trip.
TEST(Store, PointsRecordTheirDeviceAndOlderPointsTheirRuns) {
  std::string path = temp_db("dev.db");
  {
    Store s(path);
    RunInfo swept, imported;
    swept.env.device = "cuda:1";
    imported.source = "import";
    imported.env.device = "cuda:0";
    s.begin_run(swept);
    s.begin_run(imported);
    s.add_point(make_point(swept.id, 0, "torch", 256, 0.5));
    s.add_point(make_point(imported.id, 0, "torch", 256, 0.5));
    ASSERT_EQ(sqlite3_exec(s.handle(),
                           kDropSchema10 "ALTER TABLE points DROP COLUMN device; DROP TABLE run_devices; ALTER TABLE "
                           "runs DROP COLUMN interleave; ALTER TABLE runs DROP COLUMN processes; PRAGMA user_version = 7;",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
  }
  {
    auto ro = Store::open_read_only(path);
    EXPECT_EQ(ro->points(1)[0].device, "cuda:1");
    EXPECT_EQ(ro->points(2)[0].device, "");
  }
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, nullptr);
    sqlite3_step(st);
    EXPECT_EQ(sqlite3_column_int(st, 0), 7);  // the file as it was
    sqlite3_finalize(st);
    sqlite3_close(db);
  }
  Store s(path);
  EXPECT_EQ(s.version(), Store::schema_version());
  EXPECT_EQ(s.points(1)[0].device, "cuda:1");
  RunInfo multi;
  multi.devices = {{"cuda:0", "NVIDIA H100", 3000}, {"cuda:1", "NVIDIA H100", 2990.5}};
  s.begin_run(multi);
  auto p = make_point(multi.id, 0, "torch", 256, 0.5);
  p.device = "cuda:1";
  s.add_point(p);
  EXPECT_EQ(s.run(multi.id)->devices, multi.devices);
  EXPECT_EQ(s.points(multi.id)[0].device, "cuda:1");
  s.add_run_devices(multi.id, {{"cuda:2", "NVIDIA H100", 2980}});
  EXPECT_EQ(s.run(multi.id)->devices.size(), 3u);
  EXPECT_TRUE(s.run(1)->devices.empty());
}

TEST(Store, DevicesKeepTheirShareAcrossAResumeAndOlderOnesReadAsUnknown) {
  const std::string path = temp_db("shares.db");
  {
    Store s(path);
    RunInfo run;
    RunDevice d{"cuda:0", "NVIDIA H100", 3000};
    d.cpus = "0-15";
    d.pinned = true;
    d.threads = 16;
    d.memory = "default (local: node 0)";
    run.devices = {d};
    s.begin_run(run);
    RunDevice share = d;
    share.cells = 3, share.points = 9, share.busy_s = 1.5;
    s.add_device_shares(run.id, {share});
    // A resume: the device's placement as it is now, its share kept, then added to.
    RunDevice again{"cuda:0", "NVIDIA H100", 2990};
    again.cpus = "0-7";
    s.add_run_devices(run.id, {again});
    share.cells = 2, share.points = 4, share.busy_s = 0.25;
    RunDevice other = share;
    other.device = "cuda:1";
    s.add_device_shares(run.id, {share, other});
    const std::vector<RunDevice> got = s.run(run.id)->devices;
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].cells, 5);
    EXPECT_EQ(got[0].points, 13);
    EXPECT_EQ(got[0].busy_s, 1.75);
    EXPECT_EQ(got[0].cpus, "0-7");
    EXPECT_EQ(got[0].peak_gbps, 2990);
    EXPECT_EQ(got[1].device, "cuda:1");  // a device the run did not have yet
    EXPECT_EQ(got[1].cells, 2);
    ASSERT_EQ(sqlite3_exec(s.handle(), kDropSchema11 "PRAGMA user_version = 10;", nullptr, nullptr, nullptr), SQLITE_OK);
  }
  Store s(path);  // migrated: the devices stay, their share and placement unknown
  EXPECT_EQ(s.version(), Store::schema_version());
  const std::vector<RunDevice> got = s.run(1)->devices;
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].device, "cuda:0");
  EXPECT_EQ(got[0].cells, 0);
  EXPECT_EQ(got[0].cpus, "");
  EXPECT_FALSE(got[0].pinned);
}

TEST(Store, StopRulesStagesAndOlderSweepsAsBudget) {
  std::string path = temp_db("stop.db");
  {
    Store s(path);
    RunInfo old_sweep, old_import;
    old_import.source = "import";
    s.begin_run(old_sweep);
    s.begin_run(old_import);
    ASSERT_EQ(sqlite3_exec(s.handle(), kDropSchema10 "PRAGMA user_version = 9;", nullptr, nullptr, nullptr),
              SQLITE_OK);
  }
  Store s(path);
  EXPECT_EQ(s.version(), Store::schema_version());
  EXPECT_EQ(s.run(1)->stop_rule, "budget");  // every sweep before stop rules ran its whole budget
  EXPECT_EQ(s.run(2)->stop_rule, "");
  EXPECT_TRUE(s.run(1)->stages.empty());

  RunInfo r;
  Timing t;
  t.noise_pct = 0.25;
  set_timing(r, t);
  r.stages[Stage::timed] = 2;
  s.begin_run(r);
  const RunInfo back = *s.run(r.id);
  EXPECT_EQ(back.stop_rule, "noise");
  EXPECT_DOUBLE_EQ(back.noise_pct, 0.25);
  EXPECT_EQ(back.min_rounds, 4);
  EXPECT_EQ(back.min_samples, 5);
  EXPECT_DOUBLE_EQ(back.stages[Stage::timed], 2);
  StageTimes more;
  more[Stage::timed] = 1;
  more[Stage::store] = 0.5;
  s.add_run_stages(r.id, more);  // a resumed run's process adds its time
  EXPECT_DOUBLE_EQ(s.run(r.id)->stages[Stage::timed], 3);
  EXPECT_DOUBLE_EQ(s.run(r.id)->stages.wall(), 3.5);

  auto p = make_point(r.id, 0, "torch", 256, 0.5);
  p.result.stop_reason = "ceiling";
  p.result.precision = 0.031;
  s.add_point(p);
  EXPECT_EQ(s.points(r.id)[0].result.stop_reason, "ceiling");
  EXPECT_DOUBLE_EQ(s.points(r.id)[0].result.precision, 0.031);
  auto q = make_point(r.id, 1, "cuda", 256, 0.5);  // unknown: a memory point, an import
  s.add_point(q);
  EXPECT_EQ(s.points(r.id)[1].result.stop_reason, "");
  EXPECT_TRUE(std::isnan(s.points(r.id)[1].result.precision));
  EXPECT_EQ(s.stop_counts(r.id), (std::vector<std::pair<std::string, int64_t>>{{"ceiling", 1}}));
}

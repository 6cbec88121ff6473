// Runs as text: JSON export and import (lossless: export, import into a new database, export
// again gives the same bytes, and the databases hold the same rows), the errors a bad file
// gets, a second import adding nothing; CSV of the same points.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <sstream>

#include "core/error.hpp"
#include "exchange/import.hpp"
#include "exchange/runs_json.hpp"
#include "report/csv.hpp"
#include "report/table.hpp"
#include "store/whole_run.hpp"
#include "temp_db.hpp"

using namespace opbench;

namespace {

std::string temp_db(const std::string& name) { return fresh_db_path("export", name); }

StoredPoint point(int64_t seq, const std::string& provider, int64_t n, double ms) {
  StoredPoint sp;
  sp.seq = seq;
  sp.section = "act_silu";
  sp.point.op = "act";
  sp.point.title = "act-speed-fwd-batch1-head1-dim16-act_silu-fp32";
  sp.point.params = Params({{"batch", int64_t(1)}, {"head", int64_t(1)}, {"dim", int64_t(16)}, {"n", n},
                            {"act", std::string("silu")}, {"act_dim", int64_t(-1)}, {"mode", std::string("fwd")},
                            {"metric", std::string("speed")}, {"dtype", std::string("fp32")}});
  sp.point.x_name = "n";
  sp.point.x_value = n;
  sp.point.provider = provider;
  sp.point.label = provider == "torch" ? "to" : "tr, \"quoted\"";
  sp.stat = "median";
  sp.result.unit = "ms";
  // samples whose decimal forms need all 17 digits, in two rounds
  sp.result.samples = {ms, ms * (1 + 1e-15), ms / 3, ms * 0.1 + 1e-300};
  sp.result.rounds = {3, 1};
  sp.result.stats = summarize(sp.result.samples);
  sp.value = sp.result.stats.median;
  sp.result.bytes = 3.0 * 16 * n * 4;
  sp.result.gbps = sp.result.bytes / (sp.value * 1e-3) / 1e9;
  sp.result.pct_peak = 100 * sp.result.gbps / 2941.123456789;
  sp.result.rel_err = provider == "torch" ? -1 : 2.5e-7;
  sp.created_at = "2026-11-25T10:00:0" + std::to_string(seq) + ".123Z";
  return sp;
}

// A database with a swept run (samples, rounds, a failed point, a check failure, compile
// records), an interrupted run and a run imported from markdown (statistics NULL).
DeviceIdentity identity() {
  return {"GPU-3d5b6b36-0c1e-4f2a-9b7d-1a2b3c4d5e6f", "00000000:3B:00.0", "1654922001234", "96.00.89.00.01", "on", 700,
          1980, 2619, 1980, 1980};
}
Calibration calibration() {
  Calibration c;
  c.samples = {{2.125, 5.0625, 612.3456789, 9123.5, 3012.25, 1980}, {2.25, 5.125, 0.1 + 612.2, 9120.75, 3011.5, 1965}};
  return c;
}

void fill(Store& store) {
  RunRecord a;
  a.run.label = "base \"run\" \\ with \xc2\xb5s";  // quotes, a backslash, UTF-8: kept as they are
  a.run.env.device = "cuda:0";
  a.run.env.gpu = "NVIDIA H100 80GB HBM3";
  a.run.env.sm_count = 132;
  a.run.env.memory_bytes = 85000000000;
  a.run.env.driver = a.run.env.cuda_runtime = "13.0";
  a.run.env.torch_version = "2.11.0";
  a.run.env.compute_capability = "9.0";
  a.run.env.peak_gbps = 2941.123456789;
  a.run.host = "gpu-host";
  a.run.git_commit = "0123456789abcdef0123456789abcdef01234567-dirty";
  a.run.config_path = "configs/act.yaml";
  a.run.config_text = "op: act\nx: {n: [8, 16]}\n# \xc2\xb5s \\ tab\t\n";
  a.run.config_hash = "abcdef0123456789";
  a.run.op = "act";
  a.run.stat = "median";
  a.run.status = "done";
  a.run.started_at = "2026-11-25T10:00:00.000Z";
  a.run.finished_at = "2026-11-25T10:05:00.000Z";
  a.run.notation = {{"tr, \"quoted\"", "cuda"}, {"to", "torch"}};
  a.run.uuid = "11111111-2222-4333-8444-555555555555";
  a.run.flush_l2 = "read";
  a.run.rounds = 8;
  a.run.threads = 1;
  a.run.warmup_ms = 25;
  a.run.rep_ms = 100.5;
  a.run.env.tuning = std::vector<std::pair<std::string, std::string>>{{"OPBENCH_TUNING_1D", "flat_units=4"}};
  a.run.env.state = DeviceState{true, 1980, 2619, 1980, 41.5, 123.25, 4, false};
  a.options = {{"device", "cuda:0"}, {"providers", "cuda,torch"}, {"filter", "silu"}};
  int64_t seq = 0;
  for (int64_t n : {8, 16})
    for (const char* prov : {"cuda", "torch"}) a.points.push_back(point(seq++, prov, n, 0.001 * double(n) / 7));
  a.points[1].result.check_failed = true;
  a.points[1].result.rel_err = 0.25;
  a.points[1].result.max_err = 0.5;
  a.points[1].result.ref_err = 0.0125;
  a.points[1].result.ref_max_err = 0.03125;
  a.points[1].result.control = {0.0625 / 3, 0.07};
  a.points[2].result.error = "out of memory: tried to allocate 2.00 GiB";
  a.points[2].result.samples.clear();
  a.points[2].result.rounds.clear();
  a.points[2].result.stats = Stats();
  a.points[2].value = -1;
  a.points[3].state = DeviceState{true, 1305, 2619, 1980, 87, 699.5, 4 | 32, true};
  a.run.devices = {{"cuda:0", "NVIDIA H100 80GB HBM3", 2941.123456789}, {"cuda:1", "NVIDIA H100 80GB HBM3", 2939.5}};
  a.run.devices[1].cells = 7;
  a.run.devices[1].points = 19;
  a.run.devices[1].busy_s = 12.345678901234567;
  a.run.devices[1].cpus = "16-31,48-63";
  a.run.devices[1].pinned = true;
  a.run.devices[1].threads = 32;
  a.run.devices[1].memory = "default (local: node 1)";
  // which physical GPU, and its calibration passes (exact through export and import)
  a.run.env.identity = identity();
  a.run.devices[1].identity = identity();
  a.run.devices[1].calibration = calibration();
  for (size_t i = 0; i < a.points.size(); ++i) a.points[i].device = i % 2 ? "cuda:1" : "cuda:0";
  a.compiles = {{0, a.points[0].point.title, "torch_compile", "act-torch_compile-fwd-fp32-0123", 41.5, false, ""},
                {0, a.points[0].point.title, "torch_naive_compile", "k2", 0, true, "exporter: failed, once"}};

  RunRecord b = a;
  b.run.label = "stopped";
  b.run.status = "interrupted";
  b.run.uuid = "66666666-7777-4888-8999-aaaaaaaaaaaa";
  b.points.resize(1);
  b.compiles.clear();
  b.options.clear();
  b.run.devices.clear();

  std::vector<RunRecord> runs = {a, b};
  Table t;
  t.title = "act-speed-fwd-batch12-head12-dim128-act_relu-bf16";
  t.index_name = "n";
  t.index = {256, 512};
  t.columns = {"Tri Sp", "to"};
  t.cells = {{0.04, 0.014025}, {std::nan(""), -1}};
  ImportResult doc = import_document(
      "# Notation\n\n- Tri Sp: Triton Split\n- to: Torch\n\n# H100\n\n```\n" + format_block(t) + "```\n",
      "doc.md", "published");
  for (const auto& r : import_records(doc)) runs.push_back(r);
  insert_new_runs(store, runs);
}

std::string export_all(const Store& store) {
  std::vector<RunRecord> runs;
  for (const auto& r : store.runs()) runs.push_back(load_run(store, r));
  return runs_to_json(runs);
}

// Every row of a table, every column but the ids, as text (NULL and values kept apart).
std::vector<std::string> rows(const Store& store, const std::string& table, const std::string& order) {
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(store.handle(), ("SELECT * FROM " + table + " ORDER BY " + order).c_str(), -1, &st,
                               nullptr),
            SQLITE_OK);
  std::vector<std::string> out;
  while (sqlite3_step(st) == SQLITE_ROW) {
    std::ostringstream row;
    for (int c = 0; c < sqlite3_column_count(st); ++c) {
      const std::string name = sqlite3_column_name(st, c);
      if (name == "id" || name == "run_id") continue;
      row << name << "=";
      switch (sqlite3_column_type(st, c)) {
        case SQLITE_NULL: row << "NULL"; break;
        case SQLITE_INTEGER: row << "i" << sqlite3_column_int64(st, c); break;
        case SQLITE_FLOAT: {
          char buf[32];
          auto r = std::to_chars(buf, buf + sizeof buf, sqlite3_column_double(st, c));
          row << "f" << std::string(buf, r.ptr);
          break;
        }
        default: row << "t" << reinterpret_cast<const char*>(sqlite3_column_text(st, c));
      }
      row << "|";
    }
    out.push_back(row.str());
  }
  sqlite3_finalize(st);
  return out;
}

}  // namespace

TEST(ExportJson, ExportImportExportIsIdentical) {
  Store a(temp_db("a.db"));
  fill(a);
  const std::string first = export_all(a);
  Store b(temp_db("b.db"));
  std::vector<RunRecord> runs = runs_from_json(first, "first.json");
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(insert_new_runs(b, runs), std::vector<bool>(3, true));
  EXPECT_EQ(export_all(b), first);
  // The databases hold the same rows, column by column (a column export forgot would differ).
  EXPECT_EQ(rows(a, "runs", "id"), rows(b, "runs", "id"));
  EXPECT_EQ(rows(a, "points", "run_id, seq"), rows(b, "points", "run_id, seq"));
  EXPECT_EQ(rows(a, "compiles", "id"), rows(b, "compiles", "id"));
  EXPECT_EQ(rows(a, "run_options", "run_id, name"), rows(b, "run_options", "run_id, name"));
  EXPECT_EQ(rows(a, "run_devices", "run_id, device"), rows(b, "run_devices", "run_id, device"));
  EXPECT_EQ(rows(a, "run_devices", "run_id, device").size(), 2u);
  EXPECT_EQ(rows(a, "points", "run_id, seq").size(), 4u + 1u + 4u);
  // Importing the same runs again adds nothing and names the runs already there.
  std::vector<RunRecord> again = runs_from_json(first, "first.json");
  EXPECT_EQ(insert_new_runs(b, again), std::vector<bool>(3, false));
  EXPECT_EQ(again[0].run.id, b.runs()[0].id);
  EXPECT_EQ(b.runs().size(), 3u);
}

TEST(ExportJson, KeepsWhatTheStoreKeeps) {
  Store a(temp_db("keep.db"));
  fill(a);
  const std::vector<RunRecord> runs = runs_from_json(export_all(a), "x.json");
  const RunRecord& r = runs[0];
  EXPECT_EQ(r.run.label, "base \"run\" \\ with \xc2\xb5s");
  EXPECT_EQ(r.run.env.peak_gbps, 2941.123456789);
  EXPECT_EQ(r.points[0].result.samples, point(0, "cuda", 8, 0.001 * 8 / 7).result.samples);
  EXPECT_EQ(r.points[0].result.rounds, (std::vector<int64_t>{3, 1}));
  EXPECT_TRUE(r.points[1].result.check_failed);
  EXPECT_EQ(r.points[1].result.max_err, 0.5);
  EXPECT_EQ(r.points[1].result.ref_err, 0.0125);
  EXPECT_EQ(r.points[1].result.ref_max_err, 0.03125);
  EXPECT_EQ(r.points[1].result.control, (std::vector<double>{0.0625 / 3, 0.07}));
  EXPECT_TRUE(r.points[0].result.control.empty());
  EXPECT_EQ(r.points[2].result.error, "out of memory: tried to allocate 2.00 GiB");
  EXPECT_EQ(r.compiles.size(), 2u);
  EXPECT_EQ(r.compiles[1].error, "exporter: failed, once");
  EXPECT_EQ(r.points[1].device, "cuda:1");
  EXPECT_EQ(r.run.devices.size(), 2u);
  EXPECT_EQ(r.run.devices[1].device, "cuda:1");
  EXPECT_EQ(r.run.devices[1].peak_gbps, 2939.5);
  EXPECT_EQ(r.run.devices[1].cells, 7);  // each device's share and placement, exact
  EXPECT_EQ(r.run.devices[1].points, 19);
  EXPECT_EQ(r.run.devices[1].busy_s, 12.345678901234567);
  EXPECT_EQ(r.run.devices[1].cpus, "16-31,48-63");
  EXPECT_TRUE(r.run.devices[1].pinned);
  EXPECT_EQ(r.run.devices[1].threads, 32);
  EXPECT_EQ(r.run.devices[1].memory, "default (local: node 1)");
  EXPECT_EQ(r.run.devices[0].cpus, "");
  EXPECT_EQ(r.run.devices[1].identity.uuid, "GPU-3d5b6b36-0c1e-4f2a-9b7d-1a2b3c4d5e6f");
  EXPECT_EQ(r.run.devices[1].identity, identity());  // every field of it
  EXPECT_EQ(r.run.env.identity.serial, "1654922001234");
  EXPECT_EQ(r.run.devices[1].calibration, calibration());
  EXPECT_EQ(r.run.devices[1].calibration.samples[1].chase_ns, 0.1 + 612.2);
  EXPECT_FALSE(r.run.devices[0].identity.known());
  EXPECT_FALSE(r.run.devices[0].calibration.known());
  EXPECT_TRUE(runs[1].run.devices.empty());
  const RunRecord& imported = runs[2];
  EXPECT_EQ(imported.run.source, "import");
  EXPECT_TRUE(std::isnan(imported.points[0].result.stats.median));
  EXPECT_TRUE(std::isnan(imported.points[2].value));  // the NaN cell
  EXPECT_EQ(imported.points[1].point.label, "to");
  EXPECT_EQ(imported.points[0].point.label, "Tri Sp");
}

TEST(ExportJson, BadFilesNameTheField) {
  Store a(temp_db("bad.db"));
  fill(a);
  const std::string good = export_all(a);
  auto expect_error = [](const std::string& text, const std::string& field) {
    try {
      runs_from_json(text, "in.json");
      ADD_FAILURE() << "accepted: " << field;
    } catch (const InputError& e) {
      EXPECT_EQ(e.where(), "in.json");
      EXPECT_EQ(e.field(), field) << e.what();
    }
  };
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    const size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  };
  expect_error("{\"format\": \"opbench-runs\", \"version\": 1, \"runs\": [", "");
  expect_error("{\"format\": \"other\", \"version\": 1, \"runs\": []}", "format");
  expect_error("{\"format\": \"opbench-runs\", \"version\": 10, \"runs\": []}", "version");
  expect_error(replaced("\"x_value\":8", "\"x_value\":\"8\""), "runs[0].points[0].x_value");
  expect_error(replaced("\"x_value\":8", "\"x_value\":1e99999"), "");  // beyond a double: not JSON
  expect_error(replaced("\"uuid\": \"11111111-2222-4333-8444-555555555555\",", ""), "runs[0].uuid");
  expect_error(replaced("\"median\":", "\"median\":true,\"x\":"), "runs[0].points[0].stats.median");
  expect_error(replaced("\"check_failed\":false", "\"check_failed\":0"), "runs[0].points[0].check_failed");
  // a run label is bounded as --label is
  expect_error(replaced("\"label\": \"stopped\"", "\"label\": \"" + std::string(20000, 'x') + "\""), "runs[1].label");
  EXPECT_NO_THROW(runs_from_json(replaced("\"label\": \"stopped\"", "\"label\": \"" + std::string(kMaxRunLabel, 'x') + "\""), "in.json"));
  EXPECT_TRUE(is_runs_json(good));
  EXPECT_FALSE(is_runs_json("# a markdown document\n"));
  EXPECT_TRUE(runs_from_json(runs_to_json({}), "empty.json").empty());
  expect_error(replaced("\"device\":\"cuda:0\"", "\"device\":0"), "runs[0].points[0].device");
  expect_error(replaced("\"control\":[],", "\"control\":[\"x\"],"), "runs[0].points[0].control");
  // A version 6 document, without the check's reference figures and the control: read as unknown.
  std::string v5 = replaced("\"version\": 9", "\"version\": 6");
  for (const char* field : {"\"control\":[],", "\"max_err\":-1,", "\"ref_err\":-1,", "\"ref_max_err\":-1,"})
    for (size_t at; (at = v5.find(field)) != std::string::npos;) v5.erase(at, std::string(field).size());
  const std::vector<RunRecord> old = runs_from_json(v5, "v5.json");
  EXPECT_EQ(old[0].points[0].result.ref_err, -1);
  EXPECT_EQ(old[0].points[0].result.max_err, -1);
  EXPECT_TRUE(old[0].points[0].result.control.empty());
  expect_error(replaced("\"gpu\": \"NVIDIA H100 80GB HBM3\",\n          \"peak_gbps\": 2939.5",
                        "\"gpu\": 7,\n          \"peak_gbps\": 2939.5"),
               "runs[0].devices[1].gpu");
}

TEST(ExportCsv, OneRowPerPointWithEveryStatistic) {
  Store a(temp_db("csv.db"));
  fill(a);
  std::vector<RunRecord> runs;
  for (const auto& r : a.runs()) runs.push_back({r, a.points(r.id)});
  const std::string csv = render_csv(runs);
  // A small RFC 4180 reader: quoted cells may hold commas, quotes ("") and newlines.
  std::vector<std::vector<std::string>> table(1);
  std::string cell;
  bool quoted = false;
  for (size_t i = 0; i < csv.size(); ++i) {
    const char c = csv[i];
    if (quoted) {
      if (c == '"' && i + 1 < csv.size() && csv[i + 1] == '"') cell += csv[++i];
      else if (c == '"') quoted = false;
      else cell += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      table.back().push_back(cell), cell.clear();
    } else if (c == '\n') {
      table.back().push_back(cell), cell.clear();
      table.emplace_back();
    } else {
      cell += c;
    }
  }
  table.pop_back();  // after the last newline
  const auto& header = table[0];
  auto col = [&](const std::string& name) {
    for (size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return i;
    ADD_FAILURE() << "no column " << name;
    return size_t(0);
  };
  size_t points = 0;
  for (const auto& r : runs) points += r.points.size();
  ASSERT_EQ(table.size(), points + 1);
  for (const auto& row : table) EXPECT_EQ(row.size(), header.size());
  const StoredPoint& p = runs[0].points[0];
  const auto& first = table[1];
  EXPECT_EQ(first[col("title")], p.point.title);
  EXPECT_EQ(first[col("device")], p.device);
  EXPECT_FALSE(first[col("gpu")].empty());
  EXPECT_EQ(first[col("label")], "tr, \"quoted\"");
  EXPECT_EQ(first[col("act")], "silu");
  EXPECT_EQ(first[col("x")], "8");
  EXPECT_EQ(std::stod(first[col("median")]), p.result.stats.median);  // the exact double
  EXPECT_EQ(std::stod(first[col("p20")]), p.result.stats.p20);
  EXPECT_EQ(std::stod(first[col("gbps")]), p.result.gbps);
  EXPECT_EQ(std::stod(first[col("pct_peak")]), p.result.pct_peak);
  EXPECT_EQ(first[col("rounds")], "3;1");
  EXPECT_EQ(table[3][col("error")], "out of memory: tried to allocate 2.00 GiB");
  EXPECT_EQ(table[2][col("check_failed")], "1");
  EXPECT_EQ(table[2][col("ref_err")], "0.0125");
  EXPECT_EQ(table[2][col("max_err")], "0.5");
  EXPECT_EQ(table.back()[col("median")], "");  // an imported point: no statistics
  EXPECT_EQ(table[1][col("run")], std::to_string(runs[0].run.id));
}

TEST(ExportCsv, TextThatASpreadsheetWouldRunIsNeutralised) {
  RunRecord r;
  r.run.id = 1;
  r.run.env.gpu = "=cmd|' /C calc'!A0";
  StoredPoint sp;
  sp.point.title = "+title";
  sp.section = "@section";
  sp.device = "-device";
  sp.point.label = "=HYPERLINK(\"http://x\")";
  sp.point.provider = "torch";
  sp.point.x_name = "n";
  sp.point.x_value = 8;
  sp.point.params = Params({{"act", std::string("=1+2")}, {"n", int64_t(8)}});
  sp.value = -1;
  sp.result.error = "-oops";
  r.points.push_back(sp);
  const std::string csv = render_csv({r});
  for (const char* cell : {"'=cmd|' /C calc'!A0", "'+title", "'@section", "'-device", "'=1+2", "'-oops"})
    EXPECT_NE(csv.find(cell), std::string::npos) << cell << " in " << csv;
  EXPECT_NE(csv.find("\"'=HYPERLINK(\"\"http://x\"\")\""), std::string::npos) << csv;
  for (const char* raw : {",=cmd", ",+title", ",@section", ",-device", ",=1+2", ",-oops", ",\"=HYPERLINK"})
    EXPECT_EQ(csv.find(raw), std::string::npos) << raw << " in " << csv;
  EXPECT_NE(csv.find(",-1,"), std::string::npos) << csv;  // a number stays a number
}

TEST(ExportJson, WhatExportWritesImportReads) {
  Store a(temp_db("limits.db"));
  fill(a);
  std::vector<RunRecord> runs;
  for (const auto& r : a.runs()) runs.push_back(load_run(a, r));
  EXPECT_THROW(export_document({}, kMaxDocumentBytes), InputError);  // no run: import refuses it
  const std::string text = export_document(runs, kMaxDocumentBytes);
  EXPECT_EQ(runs_from_json(text, "in.json").size(), runs.size());
  try {
    export_document(runs, 1 << 10);  // over the size import reads
    ADD_FAILURE() << "written";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("MiB import reads"), std::string::npos) << e.what();
  }
}

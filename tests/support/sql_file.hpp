// SQL run on a database file directly, behind the store's back: to write a database as an
// older opbench left it, or to change one as another program might. A failure fails the test
// with SQLite's message (wrap the call in ASSERT_NO_FATAL_FAILURE to stop the test there).
#pragma once
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>

inline void exec_sql(const std::string& path, const std::string& text) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, text.c_str(), nullptr, nullptr, &err);
  const std::string msg = err ? err : "";
  sqlite3_free(err);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << msg;
}

// The tables of a schema-1 database (before uuids and checks).
inline constexpr const char* kSchema1Tables =
    "CREATE TABLE runs(id INTEGER PRIMARY KEY AUTOINCREMENT, label TEXT NOT NULL DEFAULT '', source TEXT NOT NULL DEFAULT 'sweep', device TEXT, gpu TEXT, sm_count INTEGER, memory_bytes INTEGER, driver TEXT, cuda_runtime TEXT, torch_version TEXT, compute_capability TEXT, peak_gbps REAL, host TEXT, git_commit TEXT, config_path TEXT, config_text TEXT, config_hash TEXT, op TEXT, stat TEXT, notation TEXT, started_at TEXT, finished_at TEXT, status TEXT);"
    "CREATE TABLE points(id INTEGER PRIMARY KEY AUTOINCREMENT, run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, seq INTEGER NOT NULL, section TEXT, title TEXT NOT NULL, op TEXT, params TEXT, x_name TEXT, x_value INTEGER, provider TEXT NOT NULL, label TEXT, mode TEXT, metric TEXT, dtype TEXT, unit TEXT, stat TEXT, value REAL, median REAL, mean REAL, min REAL, max REAL, p20 REAL, p80 REAL, stdev REAL, count INTEGER, samples TEXT, bytes REAL, gbps REAL, pct_peak REAL, error TEXT, created_at TEXT, UNIQUE(run_id, title, x_value, provider));";

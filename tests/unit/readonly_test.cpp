// Reading a database never writes it: no migration, no journal-mode switch, not a byte
// changed; an older schema is read through the migration in memory; a database in a
// directory the reader cannot write opens.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "store/store.hpp"
#include "sql_file.hpp"

using namespace opbench;

namespace {

std::string temp_dir(const std::string& name) {
  auto p = std::filesystem::temp_directory_path() / ("opbench_ro_" + std::to_string(getpid()) + "_" + name);
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p.string();
}

std::string bytes_of(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream o;
  o << f.rdbuf();
  return o.str();
}

std::string journal_mode(const std::string& path) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &s, nullptr);
  std::string mode = sqlite3_step(s) == SQLITE_ROW ? reinterpret_cast<const char*>(sqlite3_column_text(s, 0)) : "";
  sqlite3_finalize(s);
  sqlite3_close(db);
  return mode;
}

// A schema-4 database as an older opbench left it (rollback journal, one run, one point).
void write_schema4(const std::string& path) {
  exec_sql(path,
      "CREATE TABLE runs(id INTEGER PRIMARY KEY AUTOINCREMENT, label TEXT NOT NULL DEFAULT '', source TEXT NOT NULL "
      "DEFAULT 'sweep', device TEXT, gpu TEXT, sm_count INTEGER, memory_bytes INTEGER, driver TEXT, cuda_runtime "
      "TEXT, torch_version TEXT, compute_capability TEXT, peak_gbps REAL, host TEXT, git_commit TEXT, config_path "
      "TEXT, config_text TEXT, config_hash TEXT, op TEXT, stat TEXT, notation TEXT, started_at TEXT, finished_at "
      "TEXT, status TEXT, uuid TEXT);"
      "CREATE UNIQUE INDEX runs_uuid ON runs(uuid);"
      "CREATE TABLE points(id INTEGER PRIMARY KEY AUTOINCREMENT, run_id INTEGER NOT NULL REFERENCES runs(id) ON "
      "DELETE CASCADE, seq INTEGER NOT NULL, section TEXT, title TEXT NOT NULL, op TEXT, params TEXT, x_name TEXT, "
      "x_value INTEGER, provider TEXT NOT NULL, label TEXT, mode TEXT, metric TEXT, dtype TEXT, unit TEXT, stat "
      "TEXT, value REAL, median REAL, mean REAL, min REAL, max REAL, p20 REAL, p80 REAL, stdev REAL, count INTEGER, "
      "samples TEXT, bytes REAL, gbps REAL, pct_peak REAL, error TEXT, created_at TEXT, rel_err REAL, check_failed "
      "INTEGER NOT NULL DEFAULT 0, UNIQUE(run_id, title, x_value, provider));"
      "CREATE TABLE compiles(id INTEGER PRIMARY KEY AUTOINCREMENT, run_id INTEGER NOT NULL REFERENCES runs(id) ON "
      "DELETE CASCADE, title TEXT, provider TEXT, package_key TEXT, seconds REAL, cached INTEGER, error TEXT);"
      "INSERT INTO runs(label, gpu, status, notation, uuid) VALUES('old', 'A800', 'done', '[[\"to\",\"torch\"]]', "
      "'00000000-0000-4000-8000-000000000001');"
      "INSERT INTO points(run_id, seq, title, provider, x_name, x_value, value, samples) VALUES(1, 0, 't', 'torch', "
      "'n', 256, 1.5, '[1.5]');"
      "PRAGMA user_version = 4;");
}

}  // namespace

TEST(ReadOnly, AnOlderSchemaIsReadThroughTheMigrationInMemory) {
  const std::string path = temp_dir("old") + "/old.db";
  write_schema4(path);
  const std::string before = bytes_of(path);
  {
    auto s = Store::open_read_only(path);
    EXPECT_TRUE(s->read_only());
    EXPECT_EQ(s->version(), Store::schema_version());  // the copy in memory
    auto runs = s->runs();
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].label, "old");
    EXPECT_EQ(s->points(1).at(0).value, 1.5);
    EXPECT_FALSE(s->run_lock(1).has_value());  // a table the migration added
    RunInfo r;
    EXPECT_THROW(s->begin_run(r), RuntimeFailure);  // the copy is read-only too
  }
  EXPECT_EQ(bytes_of(path), before);
  EXPECT_EQ(journal_mode(path), "delete");
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
}

TEST(ReadOnly, ACurrentDatabaseIsReadInPlaceAndNeverWritten) {
  const std::string path = temp_dir("current") + "/cur.db";
  {
    Store w(path);
    RunInfo r;
    r.label = "now";
    w.begin_run(r);
  }
  exec_sql(path, "PRAGMA journal_mode=DELETE;");  // as if copied from elsewhere
  const std::string before = bytes_of(path);
  {
    auto s = Store::open_read_only(path);
    EXPECT_EQ(s->runs().at(0).label, "now");
    RunInfo r;
    EXPECT_THROW(s->begin_run(r), RuntimeFailure);
  }
  EXPECT_EQ(bytes_of(path), before);
  EXPECT_EQ(journal_mode(path), "delete");
}

TEST(ReadOnly, MissingAndNewerDatabasesAreRefused) {
  const std::string dir = temp_dir("refused");
  EXPECT_THROW(Store::open_read_only(dir + "/none.db"), RuntimeFailure);
  EXPECT_FALSE(std::filesystem::exists(dir + "/none.db"));
  exec_sql(dir + "/new.db", "PRAGMA user_version = 999;");
  EXPECT_THROW(Store::open_read_only(dir + "/new.db"), RuntimeFailure);
  std::ofstream(dir + "/text.db") << "not a database, just text long enough to fill a header............\n";
  EXPECT_THROW(Store::open_read_only(dir + "/text.db"), RuntimeFailure);
}

// A WAL database (as every sweep leaves one) in a directory the reader cannot write: opened
// by an unprivileged child process (as root, write permission is never refused).
TEST(ReadOnly, ADatabaseInAReadOnlyDirectoryOpens) {
  const std::string dir = temp_dir("rodir");
  const std::string path = dir + "/ro.db";
  {
    Store w(path);
    RunInfo r;
    r.label = "listed";
    w.begin_run(r);
  }
  ASSERT_FALSE(std::filesystem::exists(path + "-wal"));  // the writer closed it cleanly
  const std::string header = bytes_of(path).substr(0, 20);
  ASSERT_EQ(header[18], 2);  // the file format's read and write versions: 2 is WAL
  ASSERT_EQ(header[19], 2);
  chmod(path.c_str(), 0444);
  chmod(dir.c_str(), 0555);
  const pid_t child = fork();
  if (child == 0) {
    if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(3);
    if (access(dir.c_str(), W_OK) == 0) _exit(4);  // the directory must really be read-only here
    try {
      auto s = Store::open_read_only(path);
      _exit(s->runs().size() == 1 && s->runs()[0].label == "listed" ? 0 : 1);
    } catch (...) {
      _exit(2);
    }
  }
  int st = 0;
  waitpid(child, &st, 0);
  chmod(dir.c_str(), 0755);
  ASSERT_TRUE(WIFEXITED(st));
  if (WEXITSTATUS(st) == 3 || WEXITSTATUS(st) == 4) GTEST_SKIP() << "cannot drop write permission here";
  EXPECT_EQ(WEXITSTATUS(st), 0);
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
  EXPECT_FALSE(std::filesystem::exists(path + "-shm"));
}

TEST(ReadOnly, APathWithALeadingDoubleSlashOpens) {
  // "//tmp/x/f.db" (as "$ROOT/x" with ROOT=/ makes) names the file, never a URI's host
  const std::string dir = temp_dir("slashes");
  { Store s(dir + "/f.db"); }
  auto s = Store::open_read_only("/" + dir + "/f.db");
  EXPECT_EQ(s->version(), Store::schema_version());
  s = Store::open_read_only("/" + dir + "/f.db");
  write_schema4(dir + "/old.db");
  EXPECT_EQ(Store::open_read_only("/" + dir + "/old.db")->runs().size(), 1u);
}

TEST(ReadOnly, AnOlderSchemaIsReadInMemoryBoundedByThePageCache) {
  // a 64 MB old database: the reader's copy of it is on disk, its resident memory grows by far less
  const std::string path = temp_dir("big") + "/old.db";
  write_schema4(path);
  exec_sql(path,
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 6400) INSERT INTO points(run_id, seq, "
      "title, provider, x_name, x_value, value, samples) SELECT 1, i, 't', 'torch', 'n', 256 + i, 1.5, "
      "'[' || substr(hex(zeroblob(5000)), 1, 9998) || ']' FROM n;");
  const pid_t child = fork();
  if (child == 0) {
    auto peak_kb = [] {
      std::ifstream f("/proc/self/status");
      for (std::string line; std::getline(f, line);)
        if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
      return 0L;
    };
    const long before = peak_kb();
    auto s = Store::open_read_only(path);
    const bool read = s->runs().size() == 1;
    _exit(read && peak_kb() - before < 32 * 1024 ? 0 : 1);
  }
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(ReadOnly, ACopyThatCannotBeWrittenSaysWhyAndThatNothingChanged) {
  // the copy an old database is read through spills to SQLite's temporary folder; where no file
  // can be made there (a full disk; here /proc, a folder that takes no new file), the error names
  // the cause and the upgrade
  const std::string dir = temp_dir("nocopy"), path = dir + "/old.db";
  write_schema4(path);
  exec_sql(path,
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000) INSERT INTO points(run_id, seq, "
      "title, provider, x_name, x_value, value, samples) SELECT 1, i, 't', 'torch', 'n', 256 + i, 1.5, "
      "'[' || substr(hex(zeroblob(5000)), 1, 9998) || ']' FROM n;");
  const std::string before = bytes_of(path);
  sqlite3_temp_directory = sqlite3_mprintf("%s", "/proc");
  try {
    Store::open_read_only(path);
    ADD_FAILURE() << "opened";
  } catch (const RuntimeFailure& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("while copying it to SQLite's temporary folder"), std::string::npos) << m;
    EXPECT_NE(m.find("upgrading its schema from version 4"), std::string::npos) << m;
    EXPECT_NE(m.find("the database is unchanged"), std::string::npos) << m;
  }
  sqlite3_free(sqlite3_temp_directory);
  sqlite3_temp_directory = nullptr;
  EXPECT_EQ(bytes_of(path), before);
  EXPECT_EQ(Store::open_read_only(path)->runs().size(), 1u);  // with its folder back, read as before
}

TEST(ReadOnly, AFailedMigrationSaysWhyAndThatNothingChanged) {
  // a migration that cannot complete (here a table in its way) names its cause, and the file is as it was
  const std::string path = temp_dir("failed") + "/old.db";
  write_schema4(path);
  exec_sql(path, "CREATE TABLE run_locks(x);");
  const std::string before = bytes_of(path);
  for (bool read_only : {true, false}) {
    try {
      if (read_only) Store::open_read_only(path);
      else Store s(path);
      ADD_FAILURE() << "opened";
    } catch (const RuntimeFailure& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("run_locks already exists"), std::string::npos) << m;
      EXPECT_NE(m.find("the database is unchanged"), std::string::npos) << m;
    }
    // every byte, the journal mode's among them (a writer switches to WAL only once migrated)
    EXPECT_EQ(bytes_of(path), before) << (read_only ? "reader" : "writer");
    EXPECT_FALSE(std::filesystem::exists(path + "-wal")) << (read_only ? "reader" : "writer");
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, nullptr);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(st, 0), 4);
  sqlite3_finalize(st);
  sqlite3_close(db);
}

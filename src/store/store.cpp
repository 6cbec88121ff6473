// Opening a store (creating and migrating it, or reading it only), its transactions, and the
// clock and identifiers its rows take. The rest of the store, by idea: schema.cpp (migrations),
// statement.cpp (statements and shared columns), run_rows.cpp and point_rows.cpp (runs and
// points, from the field tables), compiles.cpp, run_lock.cpp (who measures a run). Torch-free.
#include "store/store.hpp"

#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <random>

#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/text.hpp"
#include "store/statement.hpp"

namespace opbench {

namespace {

// A damaged file is refused when opened, before anything reads or writes it: SQLite's
// quick_check (the structure of every page, linear in the file's size) must find nothing.
void check_integrity(sqlite3* db, const std::string& path) {
  Stmt s(db, "PRAGMA quick_check(1)");
  const std::string verdict = s.step() ? s.text("quick_check") : "no answer";
  if (verdict != "ok")
    throw RuntimeFailure("database " + path + " is damaged (" + one_line(verdict) +
                         "); restore it from a copy, or recover what is readable with `sqlite3 " + path + " .recover`");
}

// A database that did not open: closes what there is of it and throws "cannot WHAT database
// PATH: " with SQLite's message (`unknown` where there is no handle to ask).
[[noreturn]] void refuse_open(sqlite3*& db, const std::string& what, const std::string& path, const char* unknown) {
  std::string msg = db ? sqlite3_errmsg(db) : unknown;
  sqlite3_close(db);
  db = nullptr;
  throw RuntimeFailure("cannot " + what + " database " + path + ": " + msg);
}

// An opened database waits for another process writing rather than failing, and is refused
// (closed, then check_integrity's error) when damaged.
void settle_open(sqlite3*& db, const std::string& path) {
  sqlite3_busy_timeout(db, 30000);  // another process writing: wait, do not fail
  try {
    check_integrity(db, path);
  } catch (...) {
    sqlite3_close(db);
    db = nullptr;
    throw;
  }
}

}  // namespace

std::string now_iso() {
  auto now = std::chrono::system_clock::now();
  auto t = std::chrono::system_clock::to_time_t(now);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03dZ", buf, int(ms));
  return out;
}

std::string random_uuid() {
  // Fresh entropy each call (no cached generator: a forked child must not repeat its parent).
  std::random_device rd;
  auto word = [&] { return (uint64_t(rd()) << 32) ^ uint64_t(rd()); };
  uint64_t hi = word(), lo = word();
  hi = (hi & 0xffffffffffff0fffull) | 0x0000000000004000ull;  // version 4
  lo = (lo & 0x3fffffffffffffffull) | 0x8000000000000000ull;  // variant 10
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08llx-%04llx-%04llx-%04llx-%012llx", (unsigned long long)(hi >> 32),
                (unsigned long long)((hi >> 16) & 0xffff), (unsigned long long)(hi & 0xffff),
                (unsigned long long)(lo >> 48), (unsigned long long)(lo & 0xffffffffffffull));
  return buf;
}

Store::Store(const std::string& path, bool create) : path_(path) {
  int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
  if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) refuse_open(db_, "open", path, "out of memory");
  settle_open(db_, path_);
  exec("PRAGMA foreign_keys=ON;");
  migrate();
  // WAL once the schema is this build's: a migration that fails leaves the file as it was,
  // its journal mode included.
  exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;");
}

Store::~Store() {
  if (db_) sqlite3_close(db_);
}

void Store::exec(const std::string& sql) const {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    throw RuntimeFailure("database " + path_ + ": " + msg);
  }
}

void Store::transaction(const std::function<void()>& body) {
  exec("BEGIN IMMEDIATE");
  try {
    body();
    exec("COMMIT");
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

// ------------------------------------------------------------------------- reading only

namespace {

// A path as an SQLite URI ("file:" with %, ?, # escaped). An absolute path is given an empty
// authority ("file://" before it): "file://tmp/x.db" would name host "tmp".
std::string file_uri(const std::string& path, const std::string& query) {
  std::string out = !path.empty() && path[0] == '/' ? "file://" : "file:";
  for (char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", unsigned(static_cast<unsigned char>(c)));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "?" + query;
}

sqlite3* open_uri(const std::string& uri) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(uri.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    return nullptr;
  }
  return db;
}

// The schema version, or -1 when the file cannot be read through this connection.
int read_version(sqlite3* db) {
  sqlite3_stmt* s = nullptr;
  int v = -1;
  if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s, nullptr) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
    v = sqlite3_column_int(s, 0);
  sqlite3_finalize(s);
  return v;
}

}  // namespace

std::unique_ptr<Store> Store::open_read_only(const std::string& path) {
  return std::unique_ptr<Store>(new Store(path, ReadOnly{}));
}

Store::Store(const std::string& path, ReadOnly) : path_(path), read_only_(true) {
  if (!fs::exists(path)) throw RuntimeFailure("cannot open database " + path + ": no such file");
  db_ = open_uri(file_uri(path, "mode=ro"));
  int v = db_ ? read_version(db_) : -1;
  // A WAL database whose -wal and -shm files are gone (its last writer closed it) in a
  // directory this process cannot write: SQLite cannot create the shared-memory file a reader
  // needs. No -wal file means no writer holds it open, so it is read as an immutable file.
  if (v < 0 && !fs::exists(path + "-wal")) {
    sqlite3_close(db_);
    db_ = open_uri(file_uri(path, "mode=ro&immutable=1"));
    v = db_ ? read_version(db_) : -1;
  }
  if (v < 0) refuse_open(db_, "read", path, "cannot open the file");
  settle_open(db_, path_);
  if (v > schema_version())
    throw RuntimeFailure("database " + path_ + " has schema version " + std::to_string(v) +
                         ", newer than this opbench (" + std::to_string(schema_version()) + ")");
  if (v < schema_version()) migrate_in_memory(v);
}

// Copies the open (read-only) database into a private temporary database and migrates the
// copy: an older database is read as this opbench reads a new one, and the file stays exactly
// as it was. The copy is on disk (SQLite's temporary folder, deleted when it closes): memory
// stays bounded by SQLite's page cache however large the database.
void Store::migrate_in_memory(int version) {
  sqlite3* mem = nullptr;
  if (sqlite3_open("", &mem) != SQLITE_OK) {
    sqlite3_close(mem);
    throw RuntimeFailure("cannot read database " + path_ + ": out of memory" + upgrade_failed(version));
  }
  sqlite3_backup* b = sqlite3_backup_init(mem, "main", db_, "main");
  const int rc = b ? sqlite3_backup_step(b, -1) : SQLITE_ERROR;
  sqlite3_backup_finish(b);
  if (rc != SQLITE_DONE) {
    // The copy goes to SQLite's temporary folder ($SQLITE_TMPDIR, else $TMPDIR or /tmp).
    std::string msg = std::string(sqlite3_errmsg(mem)) + " while copying it to SQLite's temporary folder";
    sqlite3_close(mem);
    throw RuntimeFailure("cannot read database " + path_ + ": " + msg + upgrade_failed(version));
  }
  sqlite3_close(db_);
  db_ = mem;
  migrate();
  exec("PRAGMA query_only = 1");  // the copy is for reading too
}

}  // namespace opbench

// The store's SQLite statements: prepared once, parameters bound by name (":label"), columns
// read by name, so that no position has to be kept in step between a column list and its
// values; and the columns runs and points share (the GPU's state, JSON text). Torch-free.
#pragma once
#include <sqlite3.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "record/device_state.hpp"

namespace opbench {

// A database error naming the file: "database PATH: message".
std::string db_error(sqlite3* db);

class Stmt {
 public:
  Stmt(sqlite3* db, const std::string& sql);
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  // The names are string literals, or strings that live as long as the statement: each one's
  // place is looked up once, by its address.
  Stmt& bind(const char* name, const std::string& v);
  Stmt& bind(const char* name, const char* v) { return bind(name, std::string(v)); }
  Stmt& bind(const char* name, int64_t v);
  Stmt& bind(const char* name, double v);  // NaN: NULL
  Stmt& null(const char* name);
  // Ready to be bound and stepped again.
  void reset();
  bool step();
  std::string text(const char* col) const;
  int64_t i64(const char* col) const { return sqlite3_column_int64(s_, column(col)); }
  double f64(const char* col) const;  // NULL: NaN
  bool is_null(const char* col) const { return sqlite3_column_type(s_, column(col)) == SQLITE_NULL; }
  // Columns are read by name only (a 0 would read as a null name).
  int64_t i64(int) const = delete;
  std::string text(int) const = delete;
  double f64(int) const = delete;

 private:
  int index(const char* name) const;
  int column(const char* name) const;
  sqlite3* db_;
  sqlite3_stmt* s_ = nullptr;
  mutable std::vector<std::pair<const char*, int>> places_;  // parameter name -> its index
  mutable std::vector<std::string> names_;
  mutable std::vector<std::pair<const char*, int>> found_;
};

// The columns of a field of a run or a point: the GPU state's (state_fields) for the state,
// else its own ("" none).
std::vector<std::string> field_columns(bool state, const char* column);

// Column or parameter names as an SQL list, "a, b"; with `prefix` before each (":a, :b").
std::string joined(const std::vector<std::string>& names, const std::string& prefix = "");

// A column holding JSON text (params, samples, rounds, notation, tuning, stages), parsed; null
// when the column is empty.
nlohmann::ordered_json json_column(const Stmt& s, const char* col);

// The GPU state columns (state_fields: gpu_sm_mhz ...), kept by runs and points alike: NULL
// when nothing was read.
const std::vector<std::string>& state_params();  // ":gpu_sm_mhz" ..., in state_fields' order
void bind_state(Stmt& s, const DeviceState& st);
DeviceState read_state(const Stmt& s);

}  // namespace opbench

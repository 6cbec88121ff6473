// The store's SQLite statements: prepared once, parameters bound by name (":label"), columns
// read by name, so that no position has to be kept in step between a column list and its
// values; and what runs and points share: a scalar field's column (record/field_table.hpp), the
// GPU's state, JSON text. Torch-free.
#pragma once
#include <sqlite3.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "record/device_state.hpp"
#include "record/field_table.hpp"

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

// Each field's parameter of a table's statements, ":column" ("" for a field with no column).
template <class F>
std::vector<std::string> field_params(const std::vector<F>& fields) {
  std::vector<std::string> out;
  for (const auto& f : fields) out.push_back(*f.column ? std::string(":") + f.column : "");
  return out;
}

// Every field of `fields` the store writes, into its parameter (field_params) by `bind`, the
// table's own binder: bind(s, field, parameter, record).
template <class F, class R, class Bind>
void bind_written(Stmt& s, const std::vector<F>& fields, const std::vector<std::string>& params, const R& r,
                  Bind bind) {
  for (size_t i = 0; i < fields.size(); ++i)
    if (fields[i].written) bind(s, fields[i], params[i].c_str(), r);
}

// A scalar field (record/field_table.hpp) into its parameter `p`: NULL when unknown where its
// row says so (a real's NaN always), a flag or bits as an integer.
template <class R>
void bind_scalar(Stmt& s, const Field<R>& f, const char* p, const R& r) {
  if (f.null_unknown && !f.scalar_known(r)) {
    s.null(p);
    return;
  }
  switch (f.scalar_kind()) {
    case Scalar::text: s.bind(p, f.text_of(r)); return;
    case Scalar::integer: s.bind(p, f.integer_of(r)); return;
    case Scalar::real: s.bind(p, f.real_of(r)); return;
    case Scalar::flag: s.bind(p, int64_t(f.flag_of(r))); return;
    case Scalar::bits: s.bind(p, int64_t(f.bits_of(r))); return;
    case Scalar::none: return;
  }
}

// A scalar field from its column: a NULL reads as its unknown value ("", false).
template <class R>
void read_scalar(const Stmt& s, const Field<R>& f, R& r) {
  const char* c = f.column;
  switch (f.scalar_kind()) {
    case Scalar::text: f.text(r) = s.text(c); return;
    case Scalar::integer: f.integer(r) = s.is_null(c) ? int64_t(f.unknown) : s.i64(c); return;
    case Scalar::real: f.real(r) = s.is_null(c) ? f.unknown : s.f64(c); return;
    case Scalar::flag: f.flag(r) = s.i64(c) != 0; return;
    case Scalar::bits: f.bits(r) = s.is_null(c) ? uint64_t(f.unknown) : uint64_t(s.i64(c)); return;
    case Scalar::none: return;
  }
}

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

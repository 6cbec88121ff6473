#include "store/statement.hpp"

#include <cmath>
#include <stdexcept>

#include "core/error.hpp"
#include "record/state_fields.hpp"

namespace opbench {

std::string db_error(sqlite3* db) {
  const char* file = sqlite3_db_filename(db, "main");
  return std::string("database ") + (file && *file ? file : "(in memory)") + ": " + sqlite3_errmsg(db);
}

Stmt::Stmt(sqlite3* db, const std::string& sql) : db_(db) {
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s_, nullptr) != SQLITE_OK) throw RuntimeFailure(db_error(db));
}

Stmt& Stmt::bind(const char* name, const std::string& v) {
  sqlite3_bind_text(s_, index(name), v.c_str(), int(v.size()), SQLITE_TRANSIENT);
  return *this;
}

Stmt& Stmt::bind(const char* name, int64_t v) {
  sqlite3_bind_int64(s_, index(name), v);
  return *this;
}

Stmt& Stmt::bind(const char* name, double v) {
  if (std::isnan(v)) return null(name);
  sqlite3_bind_double(s_, index(name), v);
  return *this;
}

Stmt& Stmt::null(const char* name) {
  sqlite3_bind_null(s_, index(name));
  return *this;
}

void Stmt::reset() {
  sqlite3_reset(s_);
  sqlite3_clear_bindings(s_);
}

bool Stmt::step() {
  int rc = sqlite3_step(s_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  throw RuntimeFailure(db_error(db_));
}

std::string Stmt::text(const char* col) const {
  auto p = sqlite3_column_text(s_, column(col));
  return p ? reinterpret_cast<const char*>(p) : "";
}

double Stmt::f64(const char* col) const {
  const int c = column(col);
  return sqlite3_column_type(s_, c) == SQLITE_NULL ? std::nan("") : sqlite3_column_double(s_, c);
}

// A statement bound again for every point of an import would otherwise compare every name
// each time.
int Stmt::index(const char* name) const {
  for (const auto& [known, i] : places_)
    if (known == name) return i;
  const int i = sqlite3_bind_parameter_index(s_, name);
  if (i == 0) throw std::logic_error(std::string("database: no parameter ") + name + " in " + sqlite3_sql(s_));
  places_.emplace_back(name, i);
  return i;
}

// The column's position, looked up once per name (a reader of many rows asks for each column
// on every row; the names are read from SQLite once, not per lookup).
int Stmt::column(const char* name) const {
  for (const auto& [n, c] : found_)
    if (n == name && names_[size_t(c)] == name) return c;  // the same literal: the common case
  if (names_.empty())
    for (int c = 0, n = sqlite3_column_count(s_); c < n; ++c) names_.emplace_back(sqlite3_column_name(s_, c));
  for (size_t c = 0; c < names_.size(); ++c)
    if (names_[c] == name) {
      found_.emplace_back(name, int(c));
      return int(c);
    }
  throw std::logic_error(std::string("database: no column ") + name + " in " + sqlite3_sql(s_));
}

std::vector<std::string> field_columns(bool state, const char* column) {
  std::vector<std::string> out;
  if (state)
    for (const auto& f : state_fields()) out.push_back(f.column);
  else if (*column)
    out.push_back(column);
  return out;
}

std::string joined(const std::vector<std::string>& names, const std::string& prefix) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + prefix + n;
  return out;
}

nlohmann::ordered_json json_column(const Stmt& s, const char* col) {
  const std::string text = s.text(col);
  return text.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json::parse(text);
}

const std::vector<std::string>& state_params() {
  static const std::vector<std::string> params = field_params(state_fields());
  return params;
}

void bind_state(Stmt& s, const DeviceState& st) {
  const auto& fields = state_fields();
  for (size_t i = 0; i < fields.size(); ++i) {
    const char* p = state_params()[i].c_str();
    if (!st.known) s.null(p);
    else bind_scalar(s, fields[i], p, st);
  }
}

DeviceState read_state(const Stmt& s) {
  DeviceState st;
  if (s.is_null(state_fields().front().column)) return st;
  st.known = true;
  for (const auto& f : state_fields()) read_scalar(s, f, st);
  return st;
}

}  // namespace opbench

// The columns a table of a database has, by name: what the field table tests hold their rows'
// columns against.
#pragma once
#include <sqlite3.h>

#include <set>
#include <string>

inline std::set<std::string> table_columns(sqlite3* db, const std::string& table) {
  std::set<std::string> out;
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_info(?)", -1, &s, nullptr) != SQLITE_OK) return out;
  sqlite3_bind_text(s, 1, table.c_str(), -1, SQLITE_TRANSIENT);
  while (sqlite3_step(s) == SQLITE_ROW) out.insert(reinterpret_cast<const char*>(sqlite3_column_text(s, 0)));
  sqlite3_finalize(s);
  return out;
}

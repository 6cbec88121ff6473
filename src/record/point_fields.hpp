// The fields of a stored point, one row each, an instance of the field table
// (record/field_table.hpp): the one place that says how a field of StoredPoint (its Point,
// Result and Stats included) is stored (its column of the `points` table), exported (its key in
// a point of `opbench export`, the version that added it) and checked before the store takes it
// (record/run_check.hpp). The store's SQL for points, the export and import of a point, the CSV
// and the check's uniform rules all read these rows; a new field of a point is one row here and
// one migration of the store.
//
// Scalars (text, integer, real, flag) are typed by their row alone, stored and exported by the
// field table's code. The point's structured parts have kinds of their own, whose code sits
// beside each reader and writer: its params (a JSON object, whose axes mode, metric and dtype
// the store keeps in columns of their own too, for queries: kAxisColumns), its lists (samples
// and control: reals; rounds: counts; stored as JSON text, left out of a reading without
// samples) and the GPU's state (the state_fields columns, record/state_fields.hpp). The checks
// that read several fields at once (a value against its unit, samples against their count and
// rounds, a provider against its op) and the words a stat or unit may be stay with the check.
// Torch-free.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "record/field_table.hpp"
#include "record/run.hpp"

namespace opbench {

enum class PointKind {
  text,     // a string; unknown: ""
  integer,  // an int64_t; unknown: 0
  real,     // a double; unknown: PointField::unknown (NaN unless the row says otherwise)
  flag,     // a bool, stored as 0 or 1
  reals,    // a list of doubles (samples, control)
  counts,   // a list of int64_t (rounds)
  params,   // Point::params: stored and exported as an object {axis: value}
  state,    // StoredPoint::state: the state_fields columns, exported as an object (or null)
};

// What the check of a point (record/run_check.hpp) asks of a field by itself.
enum class PointCheck {
  none,
  name,           // a name printed back into documents, or empty
  required_name,  // such a name, never empty
  label,          // a column label, or empty (older opbench versions stored none)
  op,             // an op this opbench knows, or empty
  one_line,       // text kept on one line
  not_negative,   // a count or measure never below 0 (a real: NaN passes, nothing known)
};

// A row of the point's table: the field table's (record/field_table.hpp), whose numbers are
// unknown only at their unknown value (a real's NaN too), and the point's own members.
struct PointField : Field<StoredPoint> {
  PointKind kind = PointKind::text;
  // Whether an empty value is stored as the time of storing.
  bool stamped = false;
  // --- the CSV (`opbench export --format csv`): its column's header ("" not a column), in the
  // order of the rows.
  const char* csv = "";
  // --- the lists' values (params and state are reached through the point).
  std::vector<double>& (*reals)(StoredPoint&) = nullptr;
  std::vector<int64_t>& (*counts)(StoredPoint&) = nullptr;
  PointCheck check = PointCheck::none;

  // The lists: left out of a reading without samples.
  bool list() const { return kind == PointKind::reals || kind == PointKind::counts; }
  // Whether its value is other than unknown (a flag: set; params: any axis; state: read).
  bool known(const StoredPoint& p) const;
  const std::vector<double>& reals_of(const StoredPoint& p) const { return reals(const_cast<StoredPoint&>(p)); }
  const std::vector<int64_t>& counts_of(const StoredPoint& p) const { return counts(const_cast<StoredPoint&>(p)); }
};

// The axes of a point's params the store keeps in columns of their own, beside the params row's.
inline constexpr const char* kAxisColumns[] = {"mode", "metric", "dtype"};

// Every field of a point, in the order of the export (the fields it does not export first) and of
// the CSV's columns.
const std::vector<PointField>& point_fields();

}  // namespace opbench

// The fields of a stored point, one row each (point_fields.hpp). Torch-free.
#include "record/point_fields.hpp"

#include <cmath>
#include <type_traits>

namespace opbench {

namespace {

// A field reached by its member: the stored point's own, or its Point's, its Result's or its
// statistics'.
template <auto M>
auto& of(StoredPoint& p) {
  using C = typename member_owner<decltype(M)>::type;
  if constexpr (std::is_same_v<C, Point>) return p.point.*M;
  else if constexpr (std::is_same_v<C, Result>) return p.result.*M;
  else if constexpr (std::is_same_v<C, Stats>) return p.result.stats.*M;
  else return p.*M;
}

const double kNaN = std::nan("");
const bool kNullWhenUnknown = true;

// A row, filled in by the chained calls below (and the field table's).
struct Row : FieldRow<Row, PointField> {
  Row(const char* n, PointKind k) {
    name = n;
    kind = k;
    unknown = k == PointKind::real ? kNaN : 0;
  }
  // Stored in the column of its name; `null_when_unknown`: NULL when unknown.
  Row& stored(bool null_when_unknown = false) { return FieldRow::stored(name, null_when_unknown); }
  // Filled by the store: read from the column of its name, never written.
  Row& filled() { return FieldRow::filled(name); }
  // Stored as the time of storing when empty.
  Row& stamp() {
    stamped = true;
    return *this;
  }
  // Exported under its name; `in` its object ("" the point's own).
  Row& exported(int version = 1, const char* in = "") { return FieldRow::exported(in, name, version); }
  // A column of the CSV, under `header` (nullptr: its name).
  Row& in_csv(const char* header = nullptr) {
    csv = header ? header : name;
    return *this;
  }
  Row& checked(PointCheck c) {
    check = c;
    return *this;
  }
};

using K = PointKind;
using PC = PointCheck;
Row text(const char* n, std::string& (*get)(StoredPoint&)) { return Row(n, K::text).reaching(get); }
Row integer(const char* n, int64_t& (*get)(StoredPoint&)) { return Row(n, K::integer).reaching(get); }
Row real(const char* n, double& (*get)(StoredPoint&)) { return Row(n, K::real).reaching(get); }
Row flag(const char* n, bool& (*get)(StoredPoint&)) { return Row(n, K::flag).reaching(get); }
// A list, reached through its own slot (a scalar's is the field table's).
template <PointKind kind, auto slot, class V>
Row list_of(const char* name, V& (*get)(StoredPoint&)) {
  Row f(name, kind);
  f.*slot = get;
  return f;
}
Row reals(const char* n, std::vector<double>& (*get)(StoredPoint&)) { return list_of<K::reals, &PointField::reals>(n, get); }
Row counts(const char* n, std::vector<int64_t>& (*get)(StoredPoint&)) {
  return list_of<K::counts, &PointField::counts>(n, get);
}
// A statistic of the samples, in the export's stats object.
Row statistic(const char* name, double& (*get)(StoredPoint&)) {
  return real(name, get).stored().exported(1, "stats").in_csv();
}

// The point's key and what it is: the store's own fields, its table cell and its statistics.
std::vector<PointField> key_rows() {
  return {
      integer("id", of<&StoredPoint::id>).filled(),
      integer("run_id", of<&StoredPoint::run_id>).stored(),
      integer("seq", of<&StoredPoint::seq>).stored().exported().checked(PC::not_negative),
      text("section", of<&StoredPoint::section>).stored().exported().checked(PC::name),
      text("title", of<&Point::title>).stored().exported().checked(PC::required_name),
      text("op", of<&Point::op>).stored().exported().checked(PC::op),
      Row("params", PointKind::params).stored().exported(),
      text("x_name", of<&Point::x_name>).stored().exported().checked(PC::required_name).in_csv(),
      integer("x_value", of<&Point::x_value>).stored().exported().in_csv("x"),
      text("provider", of<&Point::provider>).stored().exported().checked(PC::required_name).in_csv(),
      text("label", of<&Point::label>).stored().exported().checked(PC::label).in_csv(),
      text("unit", of<&Result::unit>).stored().exported().in_csv(),
      text("stat", of<&StoredPoint::stat>).stored().exported().in_csv(),
      real("value", of<&StoredPoint::value>).stored().exported().in_csv(),
      statistic("median", of<&Stats::median>),
      statistic("mean", of<&Stats::mean>),
      statistic("min", of<&Stats::min>),
      statistic("max", of<&Stats::max>),
      statistic("p20", of<&Stats::p20>),
      statistic("p80", of<&Stats::p80>),
      statistic("stdev", of<&Stats::stdev>),
      integer("count", of<&Stats::count>).stored().exported(1, "stats").checked(PC::not_negative).in_csv(),
  };
}

// Its samples and what was measured of them, its check, its end and where it was measured.
std::vector<PointField> measure_rows() {
  return {
      reals("samples", of<&Result::samples>).stored().exported(),
      counts("rounds", of<&Result::rounds>).stored(kNullWhenUnknown).exported().in_csv(),
      reals("control", of<&Result::control>).stored(kNullWhenUnknown).exported(7),
      real("bytes", of<&Result::bytes>).stored().exported().checked(PC::not_negative).in_csv(),
      real("gbps", of<&Result::gbps>).stored().exported().checked(PC::not_negative).in_csv(),
      real("pct_peak", of<&Result::pct_peak>).stored().exported().checked(PC::not_negative).in_csv(),
      real("rel_err", of<&Result::rel_err>).stored().exported().in_csv(),
      real("max_err", of<&Result::max_err>).stored().exported(7).unknown_at(-1).in_csv(),
      real("ref_err", of<&Result::ref_err>).stored().exported(7).along("max_err").unknown_at(-1).in_csv(),
      real("ref_max_err", of<&Result::ref_max_err>).stored().exported(7).along("max_err").unknown_at(-1).in_csv(),
      flag("check_failed", of<&Result::check_failed>).stored().exported().in_csv(),
      text("error", of<&Result::error>).stored().exported().in_csv(),
      text("created_at", of<&StoredPoint::created_at>).stored().stamp().exported().checked(PC::one_line),
      Row("state", PointKind::state).exported(2),
      text("device", of<&StoredPoint::device>).stored().exported(3).checked(PC::one_line),
      text("stop", of<&Result::stop_reason>).stored(kNullWhenUnknown).exported(5).in_csv(),
      real("precision", of<&Result::precision>).stored().exported(5).along("stop").in_csv(),
      real("host_share", of<&Result::host_share>).stored().exported(8).checked(PC::not_negative).in_csv(),
  };
}

std::vector<PointField> point_rows() {
  std::vector<PointField> out = key_rows();
  const std::vector<PointField> more = measure_rows();
  out.insert(out.end(), more.begin(), more.end());
  return out;
}

}  // namespace

bool PointField::known(const StoredPoint& p) const {
  if (scalar()) return scalar_known(p);
  switch (kind) {
    case PointKind::reals: return !reals_of(p).empty();
    case PointKind::counts: return !counts_of(p).empty();
    case PointKind::params: return !p.point.params.values().empty();
    case PointKind::state: return p.state.known;
    default: break;  // a scalar: above
  }
  return false;
}

const std::vector<PointField>& point_fields() {
  static const std::vector<PointField> rows = point_rows();
  return rows;
}

}  // namespace opbench

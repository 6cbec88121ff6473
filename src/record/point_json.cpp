#include "record/point_json.hpp"

#include "core/value_json.hpp"
#include "record/field_json.hpp"
#include "record/json_number.hpp"
#include "record/state_json.hpp"

namespace opbench {

using json = nlohmann::ordered_json;

json point_field_to_json(const PointField& f, const StoredPoint& p) {
  if (f.scalar()) return scalar_to_json(f, p);
  switch (f.kind) {
    case PointKind::reals: {
      json out = json::array();
      for (double v : f.reals_of(p)) out.push_back(number_json(v));
      return out;
    }
    case PointKind::counts: return json(f.counts_of(p));
    case PointKind::params: return params_json(p.point.params);
    case PointKind::state: return state_to_json(p.state);
    default: break;  // a scalar: above
  }
  return nullptr;
}

json point_to_json(const StoredPoint& sp) {
  json out = json::object();
  for (const auto& f : point_fields()) {
    if (!f.exported()) continue;
    (*f.section ? out[f.section] : out)[f.key] = point_field_to_json(f, sp);
  }
  return out;
}

namespace {

Params params_from(const JsonReader& o) {
  Params p;
  for (const auto& [k, v] : o.raw().items()) {
    if (v.is_number_integer()) p.set(k, v.get<int64_t>());
    else if (v.is_string()) p.set(k, v.get<std::string>());
    else o.fail(k, "expected an integer or a word");
  }
  return p;
}

// A field of a point from `o`'s key: as its kind is exported.
void read_point_field(const PointField& f, const JsonReader& o, StoredPoint& p) {
  if (f.scalar()) return scalar_from_json(f, o, p);
  switch (f.kind) {
    case PointKind::reals:
      for (const auto& v : o.array(f.key)) f.reals(p).push_back(o.number_of(v, f.key));
      return;
    case PointKind::counts:
      for (const auto& v : o.array(f.key)) {
        if (!v.is_number_integer()) o.fail(f.key, "expected integers");
        f.counts(p).push_back(v.get<int64_t>());
      }
      return;
    case PointKind::params: p.point.params = params_from(o.obj(f.key)); return;
    case PointKind::state: p.state = state_from(o, f.key); return;
    default: break;  // a scalar: above
  }
}

}  // namespace

StoredPoint point_from(const JsonReader& o) {
  StoredPoint sp;
  for (const auto& f : point_fields()) {
    if (!f.exported()) continue;
    const JsonReader in = *f.section ? o.obj(f.section) : o;
    if (!held(f, in, 1)) continue;
    read_point_field(f, in, sp);
  }
  return sp;
}

StoredPoint point_from_json(const json& j, const std::string& where, const std::string& path) {
  return point_from(JsonReader(j, where, path));
}

}  // namespace opbench

#include "record/point_json.hpp"

#include "core/value_json.hpp"
#include "record/json_number.hpp"
#include "record/state_json.hpp"

namespace opbench {

using json = nlohmann::ordered_json;

json point_field_to_json(const PointField& f, const StoredPoint& p) {
  switch (f.kind) {
    case PointKind::text: return f.text_of(p);
    case PointKind::integer: return f.integer_of(p);
    case PointKind::real: return number_json(f.real_of(p));
    case PointKind::flag: return f.flag_of(p);
    case PointKind::reals: {
      json out = json::array();
      for (double v : f.reals_of(p)) out.push_back(number_json(v));
      return out;
    }
    case PointKind::counts: return json(f.counts_of(p));
    case PointKind::params: return params_json(p.point.params);
    case PointKind::state: return state_to_json(p.state);
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
  switch (f.kind) {
    case PointKind::text: f.text(p) = o.str(f.key); return;
    case PointKind::integer: f.integer(p) = o.integer(f.key); return;
    case PointKind::real: f.real(p) = o.num(f.key); return;
    case PointKind::flag: f.flag(p) = o.boolean(f.key); return;
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
  }
}

}  // namespace

StoredPoint point_from(const JsonReader& o) {
  StoredPoint sp;
  for (const auto& f : point_fields()) {
    if (!f.exported()) continue;
    const JsonReader in = *f.section ? o.obj(f.section) : o;
    if (f.since > 1 && !in.has(*f.with ? f.with : f.key)) continue;
    read_point_field(f, in, sp);
  }
  return sp;
}

StoredPoint point_from_json(const json& j, const std::string& where, const std::string& path) {
  return point_from(JsonReader(j, where, path));
}

}  // namespace opbench

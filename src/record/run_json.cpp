#include "record/run_json.hpp"

#include "record/field_json.hpp"
#include "record/json_number.hpp"
#include "record/point_json.hpp"
#include "record/run_device_json.hpp"
#include "record/state_json.hpp"

namespace opbench {

using json = nlohmann::ordered_json;

namespace {

// The parts of a run in the document, in order, with the version that added each: the objects
// its fields sit in ("" the run itself, or a field that is a part of its own: stages,
// notation), and what the store keeps beside its row (options, devices, compiles, points).
struct Part {
  const char* name;
  int since;
};
const Part kRunLayout[] = {{"", 1},       {"config", 1},      {"timing", 2},  {"stages", 5},   {"options", 2},
                           {"environment", 1}, {"devices", 3}, {"notation", 1}, {"compiles", 1}, {"points", 1}};

// ------------------------------------------------------------------ writing

json pairs_json(const std::vector<std::pair<std::string, std::string>>& pairs) {
  json out = json::array();
  for (const auto& [name, value] : pairs) out.push_back({{"name", name}, {"value", value}});
  return out;
}

// The fields of `section` into `obj`: each under its key, or (a field that is a part of its
// own) as the whole of it.
void write_section(json& obj, const RunInfo& r, const std::string& section) {
  for (const auto& f : run_fields()) {
    if (!f.exported() || section != f.section) continue;
    if (*f.key) obj[f.key] = run_field_to_json(f, r);
    else obj = run_field_to_json(f, r);
  }
}

json compiles_json(const std::vector<CompileRecord>& compiles) {
  json out = json::array();
  for (const auto& c : compiles)
    out.push_back({{"title", c.title}, {"provider", c.provider}, {"key", c.key},
                   {"seconds", number_json(c.seconds)}, {"cached", c.cached}, {"error", c.error}});
  return out;
}

}  // namespace

json run_field_to_json(const RunField& f, const RunInfo& r) {
  if (f.scalar()) return scalar_to_json(f, r);
  switch (f.kind) {
    case FieldKind::tuning: return r.env.tuning ? pairs_json(*r.env.tuning) : json(nullptr);
    case FieldKind::state: return state_to_json(r.env.state);
    case FieldKind::stages: return stages_json(r.stages);
    case FieldKind::notation: {
      json out = json::array();
      for (const auto& [label, provider] : r.notation) out.push_back({{"label", label}, {"provider", provider}});
      return out;
    }
    case FieldKind::identity: return identity_json(r.env.identity);
    default: break;  // a scalar: above
  }
  return nullptr;
}

json environment_to_json(const Environment& e) {
  RunInfo r;
  r.env = e;
  json out = json::object();
  write_section(out, r, "environment");
  return out;
}

// A run: its fields (run_fields) in their objects, and what the store keeps beside its row, in
// the document's order.
json run_record_to_json(const RunRecord& rec) {
  json out = json::object(), devices = json::array(), points = json::array();
  for (const auto& d : rec.run.devices) devices.push_back(run_device_to_json(d));
  for (const auto& p : rec.points) points.push_back(point_to_json(p));
  for (const Part& part : kRunLayout) {
    const std::string name = part.name;
    if (name == "options") out[name] = pairs_json(rec.options);
    else if (name == "devices") out[name] = devices;
    else if (name == "compiles") out[name] = compiles_json(rec.compiles);
    else if (name == "points") out[name] = points;
    else write_section(name.empty() ? out : out[name], rec.run, name);
  }
  return out;
}

// ------------------------------------------------------------------ reading

namespace {

StageTimes stages_from(const JsonReader& o) {
  StageTimes t;
  for (auto it = o.raw().begin(); it != o.raw().end(); ++it)
    if (const auto stage = stage_of_key(it.key())) {
      const double v = o.num(it.key());
      if (!(v >= 0)) o.fail(it.key(), "expected seconds, 0 or more");
      t[*stage] = v;
    }
  return t;
}

std::vector<std::pair<std::string, std::string>> pairs_from(const JsonReader& parent, const std::string& key) {
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t i = 0; i < parent.array(key).size(); ++i) {
    const JsonReader p = parent.item(key, i);
    out.emplace_back(p.str("name"), p.str("value"));
  }
  return out;
}

// A field of a run from `o`'s key (a scalar's own): as its kind is exported.
void read_field(const RunField& f, const JsonReader& o, const char* key, RunInfo& r) {
  if (f.scalar()) return scalar_from_json(f, o, r);
  switch (f.kind) {
    case FieldKind::tuning:
      if (!o.at(key).is_null()) r.env.tuning = pairs_from(o, key);
      return;
    case FieldKind::state: r.env.state = state_from(o, key); return;
    case FieldKind::stages:
      if (!o.at(key).is_null()) r.stages = stages_from(o.obj(key));
      return;
    case FieldKind::notation:
      for (size_t i = 0; i < o.array(key).size(); ++i) {
        const JsonReader n = o.item(key, i);
        r.notation.emplace_back(n.str("label"), n.str("provider"));
      }
      return;
    case FieldKind::identity: r.env.identity = o.parsed(key, identity_from_json); return;
    default: break;  // a scalar: above
  }
}

// The fields of `section` from its object `o`, added in version `since`: a field added later
// may be missing (an older document), one as old as its object may not.
void read_section(const JsonReader& o, RunInfo& r, const std::string& section, int since) {
  for (const auto& f : run_fields()) {
    if (!*f.key || section != f.section || !held(f, o, since)) continue;
    read_field(f, o, f.key, r);
  }
}

// A part of a run holding fields: an object of them, or a field of its own.
void read_part(const JsonReader& run, RunInfo& r, const Part& part) {
  const std::string name = part.name;
  if (name.empty()) return read_section(run, r, name, part.since);
  if (part.since > 1 && !run.has(name)) return;  // an older document
  for (const auto& f : run_fields())
    if (!*f.key && name == f.section) return read_field(f, run, part.name, r);
  read_section(run.obj(name), r, name, part.since);
}

std::vector<CompileRecord> compiles_from(const JsonReader& run) {
  std::vector<CompileRecord> out;
  for (size_t i = 0; i < run.array("compiles").size(); ++i) {
    const JsonReader k = run.item("compiles", i);
    out.push_back({0, k.str("title"), k.str("provider"), k.str("key"), k.num("seconds"), k.boolean("cached"),
                   k.str("error")});
  }
  return out;
}

}  // namespace

RunRecord run_record_from(const JsonReader& o) {
  RunRecord rec;
  for (const Part& part : kRunLayout) {
    const std::string name = part.name;
    if (name == "options") {
      if (o.has(name)) rec.options = pairs_from(o, name);
    } else if (name == "devices") {
      rec.run.devices = run_devices_from(o);
    } else if (name == "compiles") {
      rec.compiles = compiles_from(o);
    } else if (name == "points") {
      for (size_t i = 0; i < o.array(name).size(); ++i) rec.points.push_back(point_from(o.item(name, i)));
    } else {
      read_part(o, rec.run, part);
    }
    if (name.empty() && rec.run.uuid.empty()) o.fail("uuid", "must not be empty");
  }
  return rec;
}

Environment environment_from_json(const json& j, const std::string& where, const std::string& path) {
  RunInfo r;
  read_section(JsonReader(j, where, path), r, "environment", 1);
  return r.env;
}

StageTimes stages_from_json(const json& j, const std::string& where, const std::string& path) {
  if (j.is_null()) return StageTimes();
  return stages_from(JsonReader(j, where, path));
}

}  // namespace opbench

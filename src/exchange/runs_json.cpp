#include "exchange/runs_json.hpp"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/value_json.hpp"
#include "record/run_check.hpp"
#include "record/run_fields.hpp"

namespace opbench {

using json = nlohmann::ordered_json;

namespace {

const char* const kFormat = "opbench-runs";
// 2: timing, options, tuning and the GPU's state; 3: each point's device and a run's devices;
// 4: interleave and processes; 5: the stop rule, the run's stages, each point's stop and precision;
// 6: each device's share and placement; 7: a point's check figures against the truth (max_err,
// ref_err, ref_max_err) and its control; 8: a point's host share; 9: the device's identity (the
// run's and each device's) and each device's calibration.
const int kVersion = 9;

// ------------------------------------------------------------------ writing

json number(double v) {
  if (std::isnan(v)) return nullptr;
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

json pairs_json(const std::vector<std::pair<std::string, std::string>>& pairs) {
  json out = json::array();
  for (const auto& [name, value] : pairs) out.push_back({{"name", name}, {"value", value}});
  return out;
}

// The parts of a run in the document, in order, with the version that added each: the objects
// its fields sit in ("" the run itself, or a field that is a part of its own: stages,
// notation), and what the store keeps beside its row (options, devices, compiles, points).
struct Part {
  const char* name;
  int since;
};
const Part kRunLayout[] = {{"", 1},       {"config", 1},      {"timing", 2},  {"stages", 5},   {"options", 2},
                           {"environment", 1}, {"devices", 3}, {"notation", 1}, {"compiles", 1}, {"points", 1}};

// Whether the export holds the field (a field filled by queries it does not).
bool exported(const RunField& f) { return *f.section || *f.key; }

// The fields of `section` into `obj`: each under its key, or (a field that is a part of its
// own) as the whole of it.
void write_section(json& obj, const RunInfo& r, const std::string& section) {
  for (const auto& f : run_fields()) {
    if (!exported(f) || section != f.section) continue;
    if (*f.key) obj[f.key] = run_field_to_json(f, r);
    else obj = run_field_to_json(f, r);
  }
}

}  // namespace

// The GPU's state as read (null when nothing was read), a key a field of state_fields.
json state_to_json(const DeviceState& d) {
  if (!d.known) return nullptr;
  json out = json::object();
  for (const auto& f : state_fields()) {
    if (f.real) out[f.name] = number(d.*f.real);
    else if (f.count) out[f.name] = d.*f.count;
    else out[f.name] = d.*f.flag;
  }
  return out;
}

json run_field_to_json(const RunField& f, const RunInfo& r) {
  switch (f.kind) {
    case FieldKind::text: return f.text_of(r);
    case FieldKind::integer: return f.integer_of(r);
    case FieldKind::real: return number(f.real_of(r));
    case FieldKind::tuning: return r.env.tuning ? pairs_json(*r.env.tuning) : json(nullptr);
    case FieldKind::state: return state_to_json(r.env.state);
    case FieldKind::stages: return stages_json(r.stages);
    case FieldKind::notation: {
      json out = json::array();
      for (const auto& [label, provider] : r.notation) out.push_back({{"label", label}, {"provider", provider}});
      return out;
    }
    case FieldKind::identity: return identity_json(r.env.identity);
  }
  return nullptr;
}

json point_field_to_json(const PointField& f, const StoredPoint& p) {
  switch (f.kind) {
    case PointKind::text: return f.text_of(p);
    case PointKind::integer: return f.integer_of(p);
    case PointKind::real: return number(f.real_of(p));
    case PointKind::flag: return f.flag_of(p);
    case PointKind::reals: {
      json out = json::array();
      for (double v : f.reals_of(p)) out.push_back(number(v));
      return out;
    }
    case PointKind::counts: return json(f.counts_of(p));
    case PointKind::params: return params_json(p.point.params);
    case PointKind::state: return state_to_json(p.state);
  }
  return nullptr;
}

// A point: its fields (point_fields), each under its key in its object, in the table's order.
json point_to_json(const StoredPoint& sp) {
  json out = json::object();
  for (const auto& f : point_fields()) {
    if (!f.exported()) continue;
    (*f.section ? out[f.section] : out)[f.key] = point_field_to_json(f, sp);
  }
  return out;
}

json environment_to_json(const Environment& e) {
  RunInfo r;
  r.env = e;
  json out = json::object();
  write_section(out, r, "environment");
  return out;
}

json run_device_to_json(const RunDevice& d) {
  return {{"device", d.device}, {"gpu", d.gpu}, {"peak_gbps", number(d.peak_gbps)}, {"cells", d.cells},
          {"points", d.points}, {"busy_s", number(d.busy_s)}, {"cpus", d.cpus}, {"pinned", d.pinned},
          {"threads", d.threads}, {"memory", d.memory}, {"identity", identity_json(d.identity)},
          {"calibration", calibration_json(d.calibration)}};
}

namespace {

// A run: its fields (run_fields) in their objects, and what the store keeps beside its row, in
// the document's order.
json run_json(const RunRecord& rec) {
  const RunInfo& r = rec.run;
  json out = json::object(), devices = json::array(), compiles = json::array(), points = json::array();
  for (const auto& d : r.devices) devices.push_back(run_device_to_json(d));
  for (const auto& c : rec.compiles)
    compiles.push_back({{"title", c.title}, {"provider", c.provider}, {"key", c.key},
                        {"seconds", number(c.seconds)}, {"cached", c.cached}, {"error", c.error}});
  for (const auto& p : rec.points) points.push_back(point_to_json(p));
  for (const Part& part : kRunLayout) {
    const std::string name = part.name;
    if (name == "options") out[name] = pairs_json(rec.options);
    else if (name == "devices") out[name] = devices;
    else if (name == "compiles") out[name] = compiles;
    else if (name == "points") out[name] = points;
    else write_section(name.empty() ? out : out[name], r, name);
  }
  return out;
}

// ------------------------------------------------------------------ reading

// A JSON object being read, with where it lies in the document for messages.
class Obj {
 public:
  Obj(const json& j, std::string where, const std::string& path) : j_(j), where_(std::move(where)), path_(path) {
    if (!j_.is_object()) fail("", "expected an object");
  }

  [[noreturn]] void fail(const std::string& key, const std::string& why) const {
    std::string field = where_;
    if (!key.empty()) field += (field.empty() ? "" : ".") + key;
    throw InputError(path_, field, why);
  }

  const json& at(const std::string& key) const {
    auto it = j_.find(key);
    if (it == j_.end()) fail(key, "missing");
    return *it;
  }
  std::string str(const std::string& key) const {
    const json& v = at(key);
    if (!v.is_string()) fail(key, "expected a string");
    return v.get<std::string>();
  }
  int64_t integer(const std::string& key) const {
    const json& v = at(key);
    if (!v.is_number_integer()) fail(key, "expected an integer");
    return v.get<int64_t>();
  }
  bool boolean(const std::string& key) const {
    const json& v = at(key);
    if (!v.is_boolean()) fail(key, "expected true or false");
    return v.get<bool>();
  }
  double num(const std::string& key) const { return number_of(at(key), key); }
  double number_of(const json& v, const std::string& key) const {
    if (v.is_null()) return std::numeric_limits<double>::quiet_NaN();
    if (v.is_number()) return v.get<double>();
    if (v == "inf") return std::numeric_limits<double>::infinity();
    if (v == "-inf") return -std::numeric_limits<double>::infinity();
    fail(key, "expected a number, null, \"inf\" or \"-inf\"");
  }
  const json& array(const std::string& key) const {
    const json& v = at(key);
    if (!v.is_array()) fail(key, "expected an array");
    return v;
  }
  Obj obj(const std::string& key) const { return Obj(at(key), sub(key), path_); }
  Obj item(const std::string& key, size_t i) const { return Obj(array(key)[i], sub(key) + "[" + std::to_string(i) + "]", path_); }
  std::string sub(const std::string& key) const { return where_.empty() ? key : where_ + "." + key; }
  const json& raw() const { return j_; }
  bool has(const std::string& key) const { return j_.contains(key); }

 private:
  const json& j_;
  std::string where_;
  const std::string& path_;
};

Params params_from(const Obj& o) {
  Params p;
  for (const auto& [k, v] : o.raw().items()) {
    if (v.is_number_integer()) p.set(k, v.get<int64_t>());
    else if (v.is_string()) p.set(k, v.get<std::string>());
    else o.fail(k, "expected an integer or a word");
  }
  return p;
}

DeviceState state_from(const Obj& o) {
  DeviceState d;
  d.known = true;
  for (const auto& f : state_fields()) {
    if (f.real) d.*f.real = o.num(f.name);
    else if (f.count) d.*f.count = uint64_t(o.integer(f.name));
    else d.*f.flag = o.boolean(f.name);
  }
  return d;
}

DeviceState state_from(const Obj& parent, const std::string& key) {
  if (!parent.has(key) || parent.at(key).is_null()) return DeviceState();
  return state_from(parent.obj(key));
}

StageTimes stages_from(const Obj& o) {
  StageTimes t;
  for (auto it = o.raw().begin(); it != o.raw().end(); ++it)
    if (const auto stage = stage_of_key(it.key())) {
      const double v = o.num(it.key());
      if (!(v >= 0)) o.fail(it.key(), "expected seconds, 0 or more");
      t[*stage] = v;
    }
  return t;
}

// The structured values a record reads itself (record/device_identity.hpp), their messages
// naming the field.
DeviceIdentity identity_from(const Obj& parent, const std::string& key) {
  try {
    return identity_from_json(parent.at(key));
  } catch (const std::invalid_argument& e) {
    parent.fail(key, e.what());
  }
}

Calibration calibration_from(const Obj& parent, const std::string& key) {
  try {
    return calibration_from_json(parent.at(key));
  } catch (const std::invalid_argument& e) {
    parent.fail(key, e.what());
  }
}

std::vector<std::pair<std::string, std::string>> pairs_from(const Obj& parent, const std::string& key) {
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t i = 0; i < parent.array(key).size(); ++i) {
    const Obj p = parent.item(key, i);
    out.emplace_back(p.str("name"), p.str("value"));
  }
  return out;
}

// A field of a point from `o`'s key: as its kind is exported.
void read_point_field(const PointField& f, const Obj& o, StoredPoint& p) {
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

// A point's fields, each from its object: a field added after version 1 is read where the
// point holds it (or the first field its version added with it), an older document's point
// lacking it.
StoredPoint point_from(const Obj& o) {
  StoredPoint sp;
  for (const auto& f : point_fields()) {
    if (!f.exported()) continue;
    const Obj in = *f.section ? o.obj(f.section) : o;
    if (f.since > 1 && !in.has(*f.with ? f.with : f.key)) continue;
    read_point_field(f, in, sp);
  }
  return sp;
}

// A field of a run from `o`'s key: as its kind is exported; a number unknown when null where
// the store keeps it unknown as NULL.
void read_field(const RunField& f, const Obj& o, const char* key, RunInfo& r) {
  switch (f.kind) {
    case FieldKind::text: f.text(r) = o.str(key); return;
    case FieldKind::integer: f.integer(r) = o.integer(key); return;
    case FieldKind::real: {
      const double v = o.num(key);
      f.real(r) = f.null_unknown && std::isnan(v) ? f.unknown : v;
      return;
    }
    case FieldKind::tuning:
      if (!o.at(key).is_null()) r.env.tuning = pairs_from(o, key);
      return;
    case FieldKind::state: r.env.state = state_from(o, key); return;
    case FieldKind::stages:
      if (!o.at(key).is_null()) r.stages = stages_from(o.obj(key));
      return;
    case FieldKind::notation:
      for (size_t i = 0; i < o.array(key).size(); ++i) {
        const Obj n = o.item(key, i);
        r.notation.emplace_back(n.str("label"), n.str("provider"));
      }
      return;
    case FieldKind::identity: r.env.identity = identity_from(o, key); return;
  }
}

// The fields of `section` from its object `o`, added in version `since`: a field added later
// may be missing (an older document), one as old as its object may not.
void read_section(const Obj& o, RunInfo& r, const std::string& section, int since) {
  for (const auto& f : run_fields()) {
    if (!*f.key || section != f.section || (f.since > since && !o.has(f.key))) continue;
    read_field(f, o, f.key, r);
  }
}

// A part of a run holding fields: an object of them, or a field of its own.
void read_part(const Obj& run, RunInfo& r, const Part& part) {
  const std::string name = part.name;
  if (name.empty()) return read_section(run, r, name, part.since);
  if (part.since > 1 && !run.has(name)) return;  // an older document
  for (const auto& f : run_fields())
    if (!*f.key && name == f.section) return read_field(f, run, part.name, r);
  read_section(run.obj(name), r, name, part.since);
}

Environment environment_from(const Obj& e) {
  RunInfo r;
  read_section(e, r, "environment", 1);
  return r.env;
}

std::vector<RunDevice> devices_from(const Obj& o) {
  std::vector<RunDevice> out;
  if (!o.has("devices")) return out;  // versions 1 and 2
  for (size_t i = 0; i < o.array("devices").size(); ++i) {
    const Obj d = o.item("devices", i);
    RunDevice rd;
    rd.device = d.str("device");
    rd.gpu = d.str("gpu");
    rd.peak_gbps = d.num("peak_gbps");
    if (d.has("cells")) {  // version 6
      rd.cells = d.integer("cells");
      rd.points = d.integer("points");
      rd.busy_s = d.num("busy_s");
      rd.cpus = d.str("cpus");
      rd.pinned = d.boolean("pinned");
      rd.threads = d.integer("threads");
      rd.memory = d.str("memory");
    }
    if (d.has("identity")) {  // version 9
      rd.identity = identity_from(d, "identity");
      rd.calibration = calibration_from(d, "calibration");
    }
    out.push_back(rd);
  }
  return out;
}

RunRecord run_from(const Obj& o) {
  RunRecord rec;
  RunInfo& r = rec.run;
  for (const Part& part : kRunLayout) {
    const std::string name = part.name;
    if (name == "options") {
      if (o.has(name)) rec.options = pairs_from(o, name);
    } else if (name == "devices") {
      r.devices = devices_from(o);
    } else if (name == "compiles") {
      for (size_t i = 0; i < o.array(name).size(); ++i) {
        const Obj k = o.item(name, i);
        rec.compiles.push_back({0, k.str("title"), k.str("provider"), k.str("key"), k.num("seconds"),
                                k.boolean("cached"), k.str("error")});
      }
    } else if (name == "points") {
      for (size_t i = 0; i < o.array(name).size(); ++i) rec.points.push_back(point_from(o.item(name, i)));
    } else {
      read_part(o, r, part);
    }
    if (name.empty() && r.uuid.empty()) o.fail("uuid", "must not be empty");
  }
  return rec;
}

// `text` with every line after the first indented by `by` spaces.
std::string indent(const std::string& text, const std::string& by) {
  std::string out;
  for (char c : text) {
    out += c;
    if (c == '\n') out += by;
  }
  return out;
}

}  // namespace

StoredPoint point_from_json(const json& j, const std::string& where, const std::string& path) {
  return point_from(Obj(j, where, path));
}

Environment environment_from_json(const json& j, const std::string& where, const std::string& path) {
  return environment_from(Obj(j, where, path));
}

DeviceState state_from_json(const json& j, const std::string& where, const std::string& path) {
  if (j.is_null()) return DeviceState();
  return state_from(Obj(j, where, path));
}

StageTimes stages_from_json(const json& j, const std::string& where, const std::string& path) {
  if (j.is_null()) return StageTimes();
  return stages_from(Obj(j, where, path));
}

std::string runs_to_json(const std::vector<RunRecord>& runs) {
  // Pretty-printed, except that each point is one line: a changed point is a changed line.
  std::string out = std::string("{\n  \"format\": \"") + kFormat + "\",\n  \"version\": " +
                    std::to_string(kVersion) + ",\n  \"runs\": [";
  for (size_t i = 0; i < runs.size(); ++i) {
    json run = run_json(runs[i]);
    json points = run["points"];
    run.erase("points");
    std::string text = indent(run.dump(2), "    ");
    text.erase(text.size() - 1);  // the closing brace
    while (!text.empty() && text.back() == ' ') text.pop_back();
    text.back() = ',';            // the last field's newline becomes a comma ...
    text += "\n      \"points\": [";  // ... before the points
    for (size_t k = 0; k < points.size(); ++k) text += (k ? ",\n        " : "\n        ") + points[k].dump();
    text += points.empty() ? "]\n    }" : "\n      ]\n    }";
    out += (i ? ",\n    " : "\n    ") + text;
  }
  out += runs.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

bool is_runs_json(const std::string& text) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_object() && j.contains("format") && j["format"] == kFormat;
}

std::vector<RunRecord> runs_from_json(const std::string& text, const std::string& path) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {  // a syntax error, or a number beyond a double
    throw InputError(path, "", std::string("not JSON: ") + e.what());
  }
  if (!j.is_object())
    throw InputError(path, "", std::string("not an opbench export: the top level is ") + j.type_name() +
                                   ", not an object {\"format\": \"" + kFormat + "\", ...}");
  const Obj doc(j, "", path);
  if (doc.str("format") != kFormat) doc.fail("format", std::string("expected \"") + kFormat + "\"");
  const int64_t version = doc.integer("version");
  if (version < 1 || version > kVersion)
    doc.fail("version", "this opbench reads versions 1 to " + std::to_string(kVersion));
  std::vector<RunRecord> out;
  for (size_t i = 0; i < doc.array("runs").size(); ++i) {
    out.push_back(run_from(doc.item("runs", i)));
    check_record(out.back(), path, "runs[" + std::to_string(i) + "]");
  }
  check_distinct_uuids(out, path);
  return out;
}

std::string export_document(const std::vector<RunRecord>& runs, long long max_bytes) {
  if (runs.empty()) throw InputError("export", "", "no run to export (import reads no document without runs)");
  std::string text = runs_to_json(runs);
  if (static_cast<long long>(text.size()) > max_bytes) {
    size_t points = 0;
    for (const auto& r : runs) points += r.points.size();
    throw InputError("export", "",
                     std::to_string(runs.size()) + " runs of " + std::to_string(points) + " points make " +
                         std::to_string(text.size() >> 20) + " MiB of JSON, more than the " +
                         std::to_string(max_bytes >> 20) + " MiB import reads: export fewer runs at a time");
  }
  return text;
}

}  // namespace opbench

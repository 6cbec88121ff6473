// Config loading: YAML or JSON (by extension) into one tree, then one schema check.
// Every error names the file and the field: "configs/x.yaml: params.dim: ...".
#include "config/config.hpp"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "core/hash.hpp"
#include "core/suggest.hpp"
#include "ops/op.hpp"

namespace opbench {

using json = nlohmann::ordered_json;

const std::vector<std::string>& stat_names() {
  static const std::vector<std::string> names = {"median", "mean", "min", "max", "p20", "p80"};
  return names;
}

const char* l2_flush_name(L2Flush f) {
  switch (f) {
    case L2Flush::none: return "none";
    case L2Flush::write: return "write";
    case L2Flush::read: return "read";
  }
  return "?";
}

namespace {

// A YAML scalar as the JSON value it spells: integer, float, bool, null or string.
json scalar_to_json(const YAML::Node& n) {
  const std::string& s = n.Scalar();
  if (n.Tag() == "!") return s;  // quoted: always a string
  if (s == "true" || s == "True") return true;
  if (s == "false" || s == "False") return false;
  if (s == "null" || s == "~" || s.empty()) return nullptr;
  try {
    size_t used = 0;
    long long v = std::stoll(s, &used, 10);
    if (used == s.size()) return v;
  } catch (...) {
  }
  try {
    size_t used = 0;
    double v = std::stod(s, &used);
    if (used == s.size()) return v;
  } catch (...) {
  }
  return s;
}

json yaml_to_json(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      json j = json::object();
      for (const auto& kv : n) j[kv.first.as<std::string>()] = yaml_to_json(kv.second);
      return j;
    }
    case YAML::NodeType::Sequence: {
      json j = json::array();
      for (const auto& v : n) j.push_back(yaml_to_json(v));
      return j;
    }
    case YAML::NodeType::Scalar:
      return scalar_to_json(n);
    default:
      return nullptr;
  }
}

std::string show(const json& j) { return j.dump(); }

std::vector<std::string> axis_names(const OpSpec& op) {
  std::vector<std::string> out;
  for (const auto& a : op.axes) out.push_back(a.name);
  return out;
}

std::vector<std::string> provider_names(const OpSpec& op) {
  std::vector<std::string> out;
  for (const auto& p : op.providers) out.push_back(p.first);
  return out;
}

struct Checker {
  std::string path;
  [[noreturn]] void fail(const std::string& field, const std::string& msg) const {
    throw InputError(path, field, msg);
  }
  const json& object(const json& j, const std::string& field) const {
    if (!j.is_object()) fail(field, "must be a mapping, got " + show(j));
    return j;
  }
  void known_keys(const json& j, const std::string& field, const std::set<std::string>& keys) const {
    for (auto it = j.begin(); it != j.end(); ++it)
      if (!keys.count(it.key()))
        fail(field.empty() ? it.key() : field + "." + it.key(),
             "unknown key" + suggest_names(it.key(), {keys.begin(), keys.end()}));
  }
  // One axis value, checked against the axis spec.
  Value axis_value(const AxisSpec& a, const json& j, const std::string& field) const {
    if (a.kind == AxisKind::Int) {
      if (!j.is_number_integer()) fail(field, "must be an integer, got " + show(j));
      int64_t v = j.get<int64_t>();
      if (a.positive && v <= 0) fail(field, "must be positive, got " + std::to_string(v));
      return v;
    }
    std::string w;
    if (j.is_string()) w = j.get<std::string>();
    else if (j.is_number_integer()) w = std::to_string(j.get<int64_t>());
    else fail(field, "must be a word, got " + show(j));
    if (!a.choices.empty()) {
      bool ok = false;
      for (const auto& c : a.choices) ok = ok || c == w;
      if (!ok) {
        fail(field, "unknown " + a.name + " '" + w + "'" + suggest_names(w, a.choices));
      }
    }
    return w;
  }
  std::vector<Value> axis_values(const AxisSpec& a, const json& j, const std::string& field) const {
    std::vector<Value> out;
    if (j.is_array()) {
      if (j.empty()) fail(field, "empty list");
      for (size_t i = 0; i < j.size(); ++i)
        out.push_back(axis_value(a, j[i], field + "[" + std::to_string(i) + "]"));
    } else {
      out.push_back(axis_value(a, j, field));
    }
    return out;
  }
  double positive_number(const json& j, const std::string& field) const {
    if (!j.is_number()) fail(field, "must be a number, got " + show(j));
    double v = j.get<double>();
    if (!(v > 0)) fail(field, "must be positive, got " + show(j));
    return v;
  }
};

json parse_tree(const std::string& text, const std::string& path) {
  auto ends_with = [&](const std::string& suf) {
    return path.size() >= suf.size() && path.compare(path.size() - suf.size(), suf.size(), suf) == 0;
  };
  if (ends_with(".json")) {
    try {
      return json::parse(text);
    } catch (const json::parse_error& e) {
      throw InputError(path, "", std::string("not valid JSON: ") + e.what());
    }
  }
  if (!ends_with(".yaml") && !ends_with(".yml"))
    throw InputError(path, "", "unknown config format (use .yaml, .yml or .json)");
  try {
    return yaml_to_json(YAML::Load(text));
  } catch (const YAML::Exception& e) {
    throw InputError(path, "", "not valid YAML: line " + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
}

}  // namespace

Config parse_config(const std::string& text, const std::string& path) {
  Checker c{path};
  json root = parse_tree(text, path);
  if (!root.is_object()) c.fail("", "the config must be a mapping with an 'op' key");
  c.known_keys(root, "", {"op", "x", "params", "variants", "providers", "title", "timing"});

  Config cfg;
  cfg.path = path;
  cfg.text = text;
  cfg.hash = content_hash(text);

  if (!root.contains("op")) c.fail("op", "missing (one of the ops `opbench list` shows)");
  if (!root["op"].is_string()) c.fail("op", "must be a word, got " + show(root["op"]));
  cfg.op = root["op"].get<std::string>();
  const OpSpec* op = find_op(cfg.op);
  if (!op) {
    std::vector<std::string> names;
    for (auto* o : all_ops()) names.push_back(o->name);
    c.fail("op", "unknown op '" + cfg.op + "'" + suggest_names(cfg.op, names));
  }

  // x: exactly one axis, a list of positive integers.
  if (!root.contains("x")) c.fail("x", "missing (the table's index axis, e.g. x: {n: [256, 512]})");
  const json& x = c.object(root["x"], "x");
  if (x.size() != 1) c.fail("x", "must name exactly one axis, got " + std::to_string(x.size()));
  cfg.x_name = x.begin().key();
  {
    bool allowed = false;
    for (const auto& a : op->x_axes) allowed = allowed || a == cfg.x_name;
    if (!allowed) c.fail("x." + cfg.x_name, "not an index axis of " + cfg.op + " (use " + op->x_axes.at(0) + ")");
    const AxisSpec* a = op->axis(cfg.x_name);
    for (const auto& v : c.axis_values(*a, x.begin().value(), "x." + cfg.x_name))
      cfg.x_values.push_back(std::get<int64_t>(v));
  }

  std::set<std::string> seen;
  if (root.contains("params")) {
    const json& params = c.object(root["params"], "params");
    for (auto it = params.begin(); it != params.end(); ++it) {
      const std::string field = "params." + it.key();
      const AxisSpec* a = op->axis(it.key());
      if (!a) c.fail(field, "unknown axis for " + cfg.op + suggest_names(it.key(), axis_names(*op)));
      if (it.key() == cfg.x_name) c.fail(field, "is the x axis already");
      cfg.params.emplace_back(it.key(), c.axis_values(*a, it.value(), field));
      seen.insert(it.key());
    }
  }

  if (root.contains("variants")) {
    const json& vs = root["variants"];
    if (!vs.is_array()) c.fail("variants", "must be a list of mappings");
    if (vs.empty()) c.fail("variants", "empty list");
    for (size_t i = 0; i < vs.size(); ++i) {
      const std::string field = "variants[" + std::to_string(i) + "]";
      const json& row = c.object(vs[i], field);
      if (row.empty()) c.fail(field, "empty mapping");
      std::vector<std::pair<std::string, Value>> out;
      std::vector<int64_t> xs;
      for (auto it = row.begin(); it != row.end(); ++it) {
        if (it.key() == cfg.x_name) {  // this row's own x values
          for (const auto& v : c.axis_values(*op->axis(cfg.x_name), it.value(), field + "." + it.key()))
            xs.push_back(std::get<int64_t>(v));
          continue;
        }
        const AxisSpec* a = op->axis(it.key());
        if (!a) c.fail(field + "." + it.key(), "unknown axis for " + cfg.op + suggest_names(it.key(), axis_names(*op)));
        if (seen.count(it.key())) c.fail(field + "." + it.key(), "already set under params");
        out.emplace_back(it.key(), c.axis_value(*a, it.value(), field + "." + it.key()));
      }
      cfg.variants.push_back(std::move(out));
      cfg.variant_x.push_back(std::move(xs));
    }
  }

  if (!root.contains("providers")) {
    for (const auto& p : op->providers) cfg.providers.emplace_back(p.first, p.first);
  } else {
    const json& ps = root["providers"];
    auto add = [&](const std::string& name, const std::string& label, const std::string& field) {
      bool known = false;
      for (const auto& p : op->providers) known = known || p.first == name;
      if (!known) {
        c.fail(field, "unknown provider '" + name + "' for " + cfg.op + suggest_names(name, provider_names(*op)));
      }
      if (label.empty() || label.find_first_of(" \t\n") != std::string::npos)
        c.fail(field, "column label must be one word, got '" + label + "'");
      for (const auto& p : cfg.providers)
        if (p.first == name || p.second == label) c.fail(field, "listed twice");
      cfg.providers.emplace_back(name, label);
    };
    if (ps.is_object()) {
      if (ps.empty()) c.fail("providers", "empty mapping");
      for (auto it = ps.begin(); it != ps.end(); ++it) {
        if (!it.value().is_string()) c.fail("providers." + it.key(), "label must be a word, got " + show(it.value()));
        add(it.key(), it.value().get<std::string>(), "providers." + it.key());
      }
    } else if (ps.is_array()) {
      if (ps.empty()) c.fail("providers", "empty list");
      for (size_t i = 0; i < ps.size(); ++i) {
        if (!ps[i].is_string()) c.fail("providers[" + std::to_string(i) + "]", "must be a provider name");
        add(ps[i].get<std::string>(), ps[i].get<std::string>(), "providers[" + std::to_string(i) + "]");
      }
    } else {
      c.fail("providers", "must be a mapping provider: label, or a list of providers");
    }
  }

  if (root.contains("title")) {
    if (!root["title"].is_string() || root["title"].get<std::string>().empty())
      c.fail("title", "must be a non-empty template string");
    cfg.title = root["title"].get<std::string>();
  }

  if (root.contains("timing")) {
    const json& t = c.object(root["timing"], "timing");
    c.known_keys(t, "timing", {"warmup_ms", "rep_ms", "stat", "flush_l2", "rounds"});
    if (t.contains("rounds")) {
      const json& r = t["rounds"];
      if (!r.is_number_integer() || r.get<int64_t>() < 1 || r.get<int64_t>() > 100)
        c.fail("timing.rounds", "must be an integer from 1 to 100, got " + show(r));
      cfg.timing.rounds = int(r.get<int64_t>());
    }
    if (t.contains("warmup_ms")) cfg.timing.warmup_ms = c.positive_number(t["warmup_ms"], "timing.warmup_ms");
    if (t.contains("rep_ms")) cfg.timing.rep_ms = c.positive_number(t["rep_ms"], "timing.rep_ms");
    if (t.contains("stat")) {
      if (!t["stat"].is_string()) c.fail("timing.stat", "must be a word");
      cfg.timing.stat = t["stat"].get<std::string>();
      bool ok = false;
      for (const auto& s : stat_names()) ok = ok || s == cfg.timing.stat;
      if (!ok) c.fail("timing.stat", "unknown stat '" + cfg.timing.stat + "' (median, mean, min, max, p20, p80)");
    }
    if (t.contains("flush_l2")) {
      const json& f = t["flush_l2"];
      bool ok = f.is_boolean();
      if (ok) cfg.timing.flush_l2 = f.get<bool>() ? L2Flush::write : L2Flush::none;
      for (L2Flush m : {L2Flush::none, L2Flush::write, L2Flush::read})
        if (!ok && f.is_string() && f.get<std::string>() == l2_flush_name(m)) {
          cfg.timing.flush_l2 = m;
          ok = true;
        }
      if (!ok) c.fail("timing.flush_l2", "must be write, read, none, true (write) or false (none)");
    }
  }
  return cfg;
}

Config load_config(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", "cannot read the file");
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw InputError(path, "", "cannot read the file");
  return parse_config(ss.str(), path);
}

}  // namespace opbench

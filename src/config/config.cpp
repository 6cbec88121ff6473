// Config loading: YAML or JSON (by extension) into one tree, then one schema check.
// Every error names the file and the field: "configs/x.yaml: params.dim: ...".
#include "config/config.hpp"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/hash.hpp"
#include "core/text.hpp"
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
    case L2Flush::device: return "device";
  }
  return "?";
}

const char* stop_rule_name(StopRule r) { return r == StopRule::budget ? "budget" : "noise"; }

void resolve_device_defaults(Timing& timing, const std::string& device) {
  const bool cpu = device.rfind("cpu", 0) == 0;
  if (timing.flush_l2 == L2Flush::device) timing.flush_l2 = cpu ? L2Flush::none : L2Flush::write;
  if (timing.interleave == Timing::kDeviceDefault) timing.interleave = cpu ? Timing::kCpuInterleave : 1;
  if (timing.processes == Timing::kDeviceDefault) timing.processes = cpu ? Timing::kCpuProcesses : 1;
  if (timing.threads == Timing::kDeviceDefault) timing.threads = cpu ? 1 : 0;
}

namespace {

bool all_digits(const std::string& s, size_t from) {
  if (from >= s.size()) return false;
  for (size_t i = from; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

// YAML 1.2's core schema: [-+]?[0-9]+ is an integer; [-+]?(.[0-9]+|[0-9]+(.[0-9]*)?)([eE][-+]?[0-9]+)?
// and .inf, -.inf, .nan are floats. Anything else is a string.
bool yaml_float(const std::string& s, double* out) {
  size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  const bool neg = i && s[0] == '-';
  const std::string rest = s.substr(i);
  if (rest == ".inf" || rest == ".Inf" || rest == ".INF") {
    *out = neg ? -HUGE_VAL : HUGE_VAL;
    return true;
  }
  if (i == 0 && (s == ".nan" || s == ".NaN" || s == ".NAN")) {
    *out = std::nan("");
    return true;
  }
  size_t digits = 0, j = i;
  while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j, ++digits;
  if (j < s.size() && s[j] == '.') {
    ++j;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j, ++digits;
  }
  if (digits == 0) return false;
  if (j < s.size() && (s[j] == 'e' || s[j] == 'E')) {
    size_t k = j + 1;
    if (k < s.size() && (s[k] == '-' || s[k] == '+')) ++k;
    if (!all_digits(s, k)) return false;
    j = s.size();
  }
  if (j != s.size()) return false;
  *out = std::strtod(s.c_str(), nullptr);
  return true;
}

// A YAML scalar as the JSON value it spells: integer, float, bool, null or string.
json scalar_to_json(const YAML::Node& n) {
  const std::string& s = n.Scalar();
  if (n.Tag() == "!") return s;  // quoted: always a string
  if (s == "true" || s == "True") return true;
  if (s == "false" || s == "False") return false;
  if (s == "null" || s == "~" || s.empty()) return nullptr;
  if (all_digits(s, (s[0] == '-' || s[0] == '+') ? 1 : 0)) {
    errno = 0;
    long long v = std::strtoll(s.c_str(), nullptr, 10);
    if (errno != ERANGE) return v;
  }
  double d = 0;
  if (yaml_float(s, &d)) return d;
  return s;
}

// A value for messages: JSON, with non-finite numbers spelled as YAML does, and cut short.
std::string show(const json& j) {
  if (j.is_number_float() && !std::isfinite(j.get<double>())) {
    const double v = j.get<double>();
    return std::isnan(v) ? ".nan" : v > 0 ? ".inf" : "-.inf";
  }
  std::string s = j.dump(-1, ' ', false, json::error_handler_t::replace);
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

std::string child(const std::string& field, const std::string& key) {
  return field.empty() ? key : field + "." + key;
}

std::string item(const std::string& field, size_t i) { return field + "[" + std::to_string(i) + "]"; }

// The YAML node tree as JSON, bounded: at most kMaxConfigDepth levels of mappings and lists
// and kMaxConfigValues values, aliases expanded (a "billion laughs" file stops at the budget);
// an alias inside the collection it names, and a key given twice, are errors.
class YamlTree {
 public:
  explicit YamlTree(const std::string& path) : path_(path) {}

  json convert(const YAML::Node& n, const std::string& field) {
    const std::string& tag = n.Tag();
    if (!tag.empty() && tag != "?" && tag != "!")
      fail(n, field, "a YAML tag (" + one_line(tag.substr(0, 40)) + ") is not read: write the value plainly (a word quoted)");
    if (++values_ > kMaxConfigValues)
      fail(n, field, "more than " + std::to_string(kMaxConfigValues) + " values (aliases expanded)");
    if (!n.IsMap() && !n.IsSequence()) return n.IsScalar() ? scalar_to_json(n) : json(nullptr);
    if (open_.size() >= size_t(kMaxConfigDepth))
      fail(n, field, "nested deeper than " + std::to_string(kMaxConfigDepth) + " levels");
    for (const auto& o : open_)
      if (o.is(n)) fail(n, field, "an alias refers to a mapping or list that contains it");
    open_.push_back(n);
    json j = n.IsMap() ? mapping(n, field) : list(n, field);
    open_.pop_back();
    return j;
  }

 private:
  json mapping(const YAML::Node& n, const std::string& field) {
    json j = json::object();
    std::map<std::string, int> lines;  // key -> its line
    for (const auto& kv : n) {
      if (!kv.first.IsScalar()) fail(kv.first, field, "a key must be a plain word");
      const std::string key = kv.first.Scalar();
      const int line = kv.first.Mark().line + 1;
      auto [it, fresh] = lines.emplace(key, line);
      if (!fresh)
        fail(kv.first, child(field, key),
             "duplicate key (lines " + std::to_string(it->second) + " and " + std::to_string(line) + ")");
      j[key] = convert(kv.second, child(field, key));
    }
    return j;
  }

  json list(const YAML::Node& n, const std::string& field) {
    json j = json::array();
    size_t i = 0;
    for (const auto& v : n) j.push_back(convert(v, item(field, i++)));
    return j;
  }

  [[noreturn]] void fail(const YAML::Node& n, const std::string& field, const std::string& msg) const {
    const int line = n.Mark().line;
    throw InputError(line >= 0 ? path_ + ":" + std::to_string(line + 1) : path_, field, msg);
  }

  std::string path_;
  size_t values_ = 0;
  std::vector<YAML::Node> open_;  // the collections being converted, outermost first
};

// JSON parsed under the same bounds as YAML: depth, number of values, no key twice (the
// parser's callback sees every event; our own stack of open collections names the field).
class JsonTree {
 public:
  explicit JsonTree(const std::string& path) : path_(path) {}

  json parse(const std::string& text) {
    return json::parse(text, [this](int, json::parse_event_t ev, json& parsed) { return on_event(ev, parsed); });
  }

 private:
  struct Frame {
    bool object = false;
    std::set<std::string> keys;
    std::string key;   // the current key (object)
    size_t next = 0;   // the next index (array)
    std::string field;
  };

  bool on_event(json::parse_event_t ev, const json& parsed) {
    using E = json::parse_event_t;
    switch (ev) {
      case E::object_start:
      case E::array_start: {
        const std::string field = value_field();
        if (stack_.size() >= size_t(kMaxConfigDepth))
          throw InputError(path_, field, "nested deeper than " + std::to_string(kMaxConfigDepth) + " levels");
        count(field);
        Frame f;
        f.object = ev == E::object_start;
        f.field = field;
        stack_.push_back(std::move(f));
        break;
      }
      case E::key: {
        Frame& f = stack_.back();
        f.key = parsed.get<std::string>();
        if (!f.keys.insert(f.key).second) throw InputError(path_, child(f.field, f.key), "duplicate key");
        break;
      }
      case E::value:
        count(value_field());
        break;
      case E::object_end:
      case E::array_end:
        stack_.pop_back();
        break;
    }
    return true;
  }

  // The field of the value that starts now (advances the enclosing list's index).
  std::string value_field() {
    if (stack_.empty()) return "";
    Frame& f = stack_.back();
    return f.object ? child(f.field, f.key) : item(f.field, f.next++);
  }

  void count(const std::string& field) {
    if (++values_ > kMaxConfigValues)
      throw InputError(path_, field, "more than " + std::to_string(kMaxConfigValues) + " values");
  }

  std::string path_;
  size_t values_ = 0;
  std::vector<Frame> stack_;
};

// Config text must be UTF-8 without control characters other than tab and line breaks (as
// YAML requires of any document): every string read from it is stored and printed back.
void check_text(const std::string& text, const std::string& path) {
  size_t bad = 0;
  if (!valid_utf8(text, &bad))
    throw InputError(path + ":" + std::to_string(line_of(text, bad)), "", "not valid UTF-8");
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f)
      throw InputError(path + ":" + std::to_string(line_of(text, i)), "",
                       "control character (byte " + std::to_string(int(c)) + ") in the config");
  }
}



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

// A config is one YAML document: a document marker ('---' or '...' at the start of a line) after
// content starts another. Read from the text, not with YAML::LoadAll, which yaml-cpp 0.7 can
// loop in forever on a malformed second document.
void check_one_document(const std::string& text, const std::string& path) {
  bool content = false, ended = false;
  size_t line = 0;
  auto second = [&](const char* after) {
    throw InputError(path + ":" + std::to_string(line + 1), "",
                     std::string("a second YAML document (after '") + after + "'): a config is one document");
  };
  for (size_t at = 0; at < text.size(); ++line) {
    const size_t end = std::min(text.find('\n', at), text.size());
    const std::string l = text.substr(at, end - at);
    at = end + 1;
    const bool marker = (l.rfind("---", 0) == 0 || l.rfind("...", 0) == 0) &&
                        (l.size() == 3 || l[3] == ' ' || l[3] == '\t' || l[3] == '\r');
    const size_t first = l.find_first_not_of(" \t\r", marker ? 3 : 0);
    const bool meaningful = first != std::string::npos && l[first] != '#' && (marker || l[first] != '%');
    if (marker && l[0] == '-') {
      if (content || ended) second("---");
      content = meaningful;  // "--- {op: act}": the document starts on the marker's line
    } else if (marker) {
      ended = ended || content;
    } else if (meaningful) {
      if (ended) second("...");
      content = true;
    }
  }
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
      if (j.is_number_unsigned() && j.get<uint64_t>() > uint64_t(INT64_MAX))
        fail(field, "must be an integer below 2^63, got " + show(j));
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
      std::map<Value, size_t> seen;  // a value twice would be one point counted twice
      for (size_t i = 0; i < j.size(); ++i) {
        out.push_back(axis_value(a, j[i], field + "[" + std::to_string(i) + "]"));
        auto [it, fresh] = seen.emplace(out.back(), i);
        if (!fresh)
          fail(field + "[" + std::to_string(i) + "]", "repeats " + show(j[i]) + " (also at [" +
                                                          std::to_string(it->second) + "]): axis " + a.name +
                                                          " takes each value once");
      }
    } else {
      out.push_back(axis_value(a, j, field));
    }
    return out;
  }
  // A finite number of `unit` above 0 and at most `max`.
  double bounded(const json& j, const std::string& field, double max, const std::string& unit) const {
    if (!j.is_number()) fail(field, "must be a number, got " + show(j));
    double v = j.get<double>();
    if (!std::isfinite(v) || !(v > 0) || v > max)
      fail(field, "must be a number of " + unit + " above 0 and at most " + std::to_string(int64_t(max)) + ", got " + show(j));
    return v;
  }
  double milliseconds(const json& j, const std::string& field, double max) const {
    return bounded(j, field, max, "milliseconds");
  }
  // A name printed back in reports (a column label, the title template).
  void printable_name(const std::string& s, const std::string& field, const std::string& what) const {
    const std::string why = name_problem(s);
    if (!why.empty()) fail(field, what + " " + why);
  }
};

json parse_tree(const std::string& text, const std::string& path) {
  auto ends_with = [&](const std::string& suf) {
    return path.size() >= suf.size() && path.compare(path.size() - suf.size(), suf.size(), suf) == 0;
  };
  const bool is_json = ends_with(".json");
  if (!is_json && !ends_with(".yaml") && !ends_with(".yml"))
    throw InputError(path, "", "unknown config format (use .yaml, .yml or .json)");
  check_text(text, path);
  if (is_json) {
    try {
      return JsonTree(path).parse(text);
    } catch (const json::exception& e) {  // a syntax error, or a number beyond a double
      throw InputError(path, "", std::string("not valid JSON: ") + e.what());
    }
  }
  try {
    check_one_document(text, path);
    return YamlTree(path).convert(YAML::Load(text), "");
  } catch (const YAML::Exception& e) {
    const std::string at = e.mark.is_null() ? "" : "line " + std::to_string(e.mark.line + 1) + ": ";
    throw InputError(path, "", "not valid YAML: " + at + e.msg);
  }
}

// An integer key of the timing block within [lo, hi]; `range` says what the bounds mean.
int64_t timing_integer(const json& t, const char* key, int64_t lo, int64_t hi, const std::string& range,
                       const Checker& c) {
  const json& n = t[key];
  if (!n.is_number_integer() || n.get<int64_t>() < lo || n.get<int64_t>() > hi)
    c.fail(std::string("timing.") + key, "must be an integer from " + range + ", got " + show(n));
  return n.get<int64_t>();
}

// The stop rule's keys: stop, noise, min_rounds, min_samples, and the rounds' default by rule.
void parse_stop_rule(const json& t, const Checker& c, Timing& timing) {
  if (t.contains("stop")) {
    const json& s = t["stop"];
    if (s == "noise") timing.stop_rule = StopRule::noise;
    else if (s == "budget") timing.stop_rule = StopRule::budget;
    else c.fail("timing.stop_rule", "must be noise (stop once a median is known within timing.noise) or budget (every "
                               "round, as do_bench), got " + show(s));
  }
  if (t.contains("noise")) timing.noise_pct = c.bounded(t["noise"], "timing.noise", 100, "percent");
  if (t.contains("min_rounds")) timing.min_rounds = int(timing_integer(t, "min_rounds", 1, 100, "1 to 100", c));
  if (t.contains("min_samples"))
    timing.min_samples = timing_integer(t, "min_samples", 1, 1000000, "1 to 1000000", c);
  timing.rounds = timing.stop_rule == StopRule::budget ? Timing::kBudgetRounds : Timing::kNoiseRounds;
  if (t.contains("rounds")) timing.rounds = int(timing_integer(t, "rounds", 1, 100, "1 to 100", c));
  if (t.contains("min_rounds") && timing.min_rounds > timing.rounds)
    c.fail("timing.min_rounds", std::to_string(timing.min_rounds) + " is more than timing.rounds (" +
                                    std::to_string(timing.rounds) + "): a point is measured in at most " +
                                    std::to_string(timing.rounds) + " rounds");
}

// The `timing` block: every key checked, the defaults for the keys it leaves out.
Timing parse_timing(const json& block, const Checker& c) {
  Timing timing;
  const json& t = c.object(block, "timing");
  c.known_keys(t, "timing", {"warmup_ms", "rep_ms", "stat", "flush_l2", "rounds", "interleave", "processes",
                             "threads", "max_point_s", "stop", "noise", "min_rounds", "min_samples"});
  parse_stop_rule(t, c, timing);
  if (t.contains("interleave"))
    timing.interleave = int(timing_integer(t, "interleave", 1, 1000, "1 (each table cell whole) to 1000", c));
  if (t.contains("processes"))
    timing.processes = int(timing_integer(t, "processes", 1, 64, "1 (this process alone) to 64", c));
  if (t.contains("threads"))
    timing.threads = int(timing_integer(t, "threads", 0, 1024, "0 (LibTorch's own count) to 1024", c));
  if (t.contains("warmup_ms")) timing.warmup_ms = c.milliseconds(t["warmup_ms"], "timing.warmup_ms", kMaxWarmupMs);
  if (t.contains("rep_ms")) timing.rep_ms = c.milliseconds(t["rep_ms"], "timing.rep_ms", kMaxRepMs);
  if (t.contains("max_point_s")) {
    timing.max_point_s = c.bounded(t["max_point_s"], "timing.max_point_s", 86400, "seconds");
  }
  if (t.contains("stat")) {
    if (!t["stat"].is_string()) c.fail("timing.stat", "must be a word");
    timing.stat = t["stat"].get<std::string>();
    bool ok = false;
    for (const auto& s : stat_names()) ok = ok || s == timing.stat;
    if (!ok) c.fail("timing.stat", "unknown stat '" + timing.stat + "' (median, mean, min, max, p20, p80)");
  }
  if (t.contains("flush_l2")) {
    const json& f = t["flush_l2"];
    bool ok = f.is_boolean();
    if (ok) timing.flush_l2 = f.get<bool>() ? L2Flush::write : L2Flush::none;
    for (L2Flush m : {L2Flush::none, L2Flush::write, L2Flush::read})
      if (!ok && f.is_string() && f.get<std::string>() == l2_flush_name(m)) {
        timing.flush_l2 = m;
        ok = true;
      }
    if (!ok) c.fail("timing.flush_l2", "must be write, read, none, true (write) or false (none)");
  }
  return timing;
}

// `op`: one of the registered ops.
const OpSpec& parse_op(const json& root, const Checker& c, Config& cfg) {
  if (!root.contains("op")) c.fail("op", "missing (one of the ops `opbench list` shows)");
  if (!root["op"].is_string()) c.fail("op", "must be a word, got " + show(root["op"]));
  cfg.op = root["op"].get<std::string>();
  const OpSpec* op = find_op(cfg.op);
  if (!op) {
    std::vector<std::string> names;
    for (auto* o : all_ops()) names.push_back(o->name);
    c.fail("op", "unknown op '" + cfg.op + "'" + suggest_names(cfg.op, names));
  }
  return *op;
}

// `x`: exactly one axis, one of the op's index axes, a list of positive integers.
void parse_x(const json& root, const Checker& c, const OpSpec& op, Config& cfg) {
  if (!root.contains("x")) c.fail("x", "missing (the table's index axis, e.g. x: {n: [256, 512]})");
  const json& x = c.object(root["x"], "x");
  if (x.size() != 1) c.fail("x", "must name exactly one axis, got " + std::to_string(x.size()));
  cfg.x_name = x.begin().key();
  bool allowed = false;
  for (const auto& a : op.x_axes) allowed = allowed || a == cfg.x_name;
  if (!allowed) c.fail("x." + cfg.x_name, "not an index axis of " + cfg.op + " (use " + op.x_axes.at(0) + ")");
  const AxisSpec* a = op.axis(cfg.x_name);
  for (const auto& v : c.axis_values(*a, x.begin().value(), "x." + cfg.x_name))
    cfg.x_values.push_back(std::get<int64_t>(v));
}

// `params`: axis -> values, for axes of the op other than x; returns the axes it sets.
std::set<std::string> parse_params(const json& root, const Checker& c, const OpSpec& op, Config& cfg) {
  std::set<std::string> seen;
  if (!root.contains("params")) return seen;
  const json& params = c.object(root["params"], "params");
  for (auto it = params.begin(); it != params.end(); ++it) {
    const std::string field = "params." + it.key();
    const AxisSpec* a = op.axis(it.key());
    if (!a) c.fail(field, "unknown axis for " + cfg.op + suggest_names(it.key(), axis_names(op)));
    if (it.key() == cfg.x_name) c.fail(field, "is the x axis already");
    cfg.params.emplace_back(it.key(), c.axis_values(*a, it.value(), field));
    seen.insert(it.key());
  }
  return seen;
}

// One row of `variants`: a value for each axis it names (none set under params), and its own
// x values when it names the x axis.
void parse_variant(const json& row, const std::string& field, const Checker& c, const OpSpec& op,
                   const std::set<std::string>& in_params, Config& cfg) {
  if (row.empty()) c.fail(field, "empty mapping");
  std::vector<std::pair<std::string, Value>> out;
  std::vector<int64_t> xs;
  for (auto it = row.begin(); it != row.end(); ++it) {
    if (it.key() == cfg.x_name) {  // this row's own x values
      for (const auto& v : c.axis_values(*op.axis(cfg.x_name), it.value(), field + "." + it.key()))
        xs.push_back(std::get<int64_t>(v));
      continue;
    }
    const AxisSpec* a = op.axis(it.key());
    if (!a) c.fail(field + "." + it.key(), "unknown axis for " + cfg.op + suggest_names(it.key(), axis_names(op)));
    if (in_params.count(it.key())) c.fail(field + "." + it.key(), "already set under params");
    out.emplace_back(it.key(), c.axis_value(*a, it.value(), field + "." + it.key()));
  }
  cfg.variants.push_back(std::move(out));
  cfg.variant_x.push_back(std::move(xs));
}

// `variants`: a non-empty list of rows (parse_variant).
void parse_variants(const json& root, const Checker& c, const OpSpec& op, const std::set<std::string>& in_params,
                    Config& cfg) {
  if (!root.contains("variants")) return;
  const json& vs = root["variants"];
  if (!vs.is_array()) c.fail("variants", "must be a list of mappings");
  if (vs.empty()) c.fail("variants", "empty list");
  for (size_t i = 0; i < vs.size(); ++i) {
    const std::string field = "variants[" + std::to_string(i) + "]";
    parse_variant(c.object(vs[i], field), field, c, op, in_params, cfg);
  }
}

// A provider of the op with its column label, each listed once (labels compared ignoring case,
// as the Notation list matches them).
void add_provider(const std::string& name, const std::string& label, const std::string& field, const Checker& c,
                  const OpSpec& op, Config& cfg) {
  bool known = false;
  for (const auto& p : op.providers) known = known || p.first == name;
  if (!known) {
    c.fail(field, "unknown provider '" + name + "' for " + cfg.op + suggest_names(name, provider_names(op)));
  }
  const std::string why = label_problem(label);
  if (!why.empty()) c.fail(field, "column label '" + label + "' " + why);
  for (const auto& p : cfg.providers)
    if (p.first == name || to_lower(p.second) == to_lower(label)) c.fail(field, "listed twice");
  cfg.providers.emplace_back(name, label);
}

// `providers`: a mapping provider -> label or a list of providers (each its own label); every
// provider of the op when left out.
void parse_providers(const json& root, const Checker& c, const OpSpec& op, Config& cfg) {
  if (!root.contains("providers")) {
    for (const auto& p : op.providers) cfg.providers.emplace_back(p.first, p.first);
    return;
  }
  const json& ps = root["providers"];
  if (ps.is_object()) {
    if (ps.empty()) c.fail("providers", "empty mapping");
    for (auto it = ps.begin(); it != ps.end(); ++it) {
      if (!it.value().is_string()) c.fail("providers." + it.key(), "label must be a word, got " + show(it.value()));
      add_provider(it.key(), it.value().get<std::string>(), "providers." + it.key(), c, op, cfg);
    }
  } else if (ps.is_array()) {
    if (ps.empty()) c.fail("providers", "empty list");
    for (size_t i = 0; i < ps.size(); ++i) {
      if (!ps[i].is_string()) c.fail("providers[" + std::to_string(i) + "]", "must be a provider name");
      add_provider(ps[i].get<std::string>(), ps[i].get<std::string>(), "providers[" + std::to_string(i) + "]", c,
                   op, cfg);
    }
  } else {
    c.fail("providers", "must be a mapping provider: label, or a list of providers");
  }
}

// `title`: a non-empty template that prints as one line.
void parse_title(const json& root, const Checker& c, Config& cfg) {
  if (!root.contains("title")) return;
  if (!root["title"].is_string() || root["title"].get<std::string>().empty())
    c.fail("title", "must be a non-empty template string");
  cfg.title = root["title"].get<std::string>();
  c.printable_name(cfg.title, "title", "the title");
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
  const OpSpec& op = parse_op(root, c, cfg);
  parse_x(root, c, op, cfg);
  const std::set<std::string> in_params = parse_params(root, c, op, cfg);
  parse_variants(root, c, op, in_params, cfg);
  parse_providers(root, c, op, cfg);
  parse_title(root, c, cfg);
  if (root.contains("timing")) cfg.timing = parse_timing(root["timing"], c);
  return cfg;
}

std::optional<StoredTiming> stored_timing(const std::string& text, const std::string& path) {
  try {
    const json root = parse_tree(text, path);
    StoredTiming out;
    if (!root.is_object() || !root.contains("timing")) return out;
    const Checker c{path};
    out.timing = parse_timing(root["timing"], c);
    for (auto it = root["timing"].begin(); it != root["timing"].end(); ++it) out.given.insert(it.key());
    return out;
  } catch (const InputError&) {
    return std::nullopt;
  }
}

std::string timing_block(const std::string& text, const std::string& path) {
  const json root = parse_tree(text, path);
  return root.is_object() && root.contains("timing") ? root["timing"].dump() : "";
}

Timing timing_from_block(const std::string& block, const std::string& path) {
  if (block.empty()) return Timing();
  json j;
  try {
    j = json::parse(block);
  } catch (const json::exception& e) {
    throw InputError(path, "timing", std::string("not valid JSON: ") + e.what());
  }
  return parse_timing(j, Checker{path});
}

namespace {

// The configs a suite file lists (paths relative to its folder made relative to ours), or
// nothing when `path` is not a suite file: a mapping with the key `configs` and no `op`.
// Whatever cannot be read is left for load_config to say.
std::optional<std::vector<std::string>> suite_entries(const std::string& path) {
  std::string text;
  if (!fs::is_regular_file(path) || !fs::read_file(path, &text)) return std::nullopt;
  json root;
  try {
    root = parse_tree(text, path);
  } catch (const InputError&) {
    return std::nullopt;
  }
  if (!root.is_object() || !root.contains("configs") || root.contains("op")) return std::nullopt;
  Checker c{path};
  c.known_keys(root, "", {"configs"});
  const json& list = root["configs"];
  if (!list.is_array() || list.empty()) c.fail("configs", "must be a non-empty list of config files");
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash == 0 ? 1 : slash);
  std::vector<std::string> out;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string field = "configs[" + std::to_string(i) + "]";
    if (!list[i].is_string() || list[i].get<std::string>().empty()) c.fail(field, "must be a config file's path");
    const std::string entry = list[i].get<std::string>();
    const std::string why = text_problem(entry);
    if (!why.empty()) c.fail(field, "the path " + why);
    out.push_back(entry[0] == '/' || dir.empty() ? entry : dir == "/" ? "/" + entry : dir + "/" + entry);
  }
  return out;
}

}  // namespace

std::vector<std::string> command_configs(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  std::map<std::string, std::string> seen;  // canonical path -> as named
  auto add = [&](const std::string& path, const std::string& named_by) {
    auto [it, fresh] = seen.emplace(fs::resolved(path), path);
    if (!fresh) throw InputError(named_by, "", "names " + path + " again (as " + it->second + "): one run per config");
    out.push_back(path);
  };
  for (const auto& arg : args) {
    const auto entries = suite_entries(arg);
    if (!entries) {
      add(arg, arg);
      continue;
    }
    for (size_t i = 0; i < entries->size(); ++i) {
      const std::string field = "configs[" + std::to_string(i) + "]";
      if (suite_entries((*entries)[i])) throw InputError(arg, field, (*entries)[i] + " is a suite: a suite lists configs");
      add((*entries)[i], arg + ": " + field);
    }
  }
  return out;
}

Config load_config(const std::string& path) {
  if (!fs::is_regular_file(path))
    throw InputError(path, "", fs::is_directory(path) ? "is a directory, not a config file"
                               : fs::exists(path)     ? "not a regular file"
                                                      : "no such file");
  const std::string why = text_problem(path);
  if (!why.empty()) throw InputError(one_line(path), "", "the file name " + why);
  std::string text;
  if (!fs::read_file(path, &text)) throw InputError(path, "", "cannot read the file");
  return parse_config(text, path);
}

}  // namespace opbench

#include "sweep/worker_protocol.hpp"

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "record/point_json.hpp"
#include "record/run_json.hpp"
#include "record/state_json.hpp"

namespace opbench {

using json = nlohmann::ordered_json;

namespace {

json parse_object(const std::string& line, const std::string& who) {
  const json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) throw InputError(who, "", "not a JSON object: " + line.substr(0, 200));
  return j;
}

std::string text_of(const json& j, const char* key, const std::string& who) {
  if (!j.contains(key) || !j[key].is_string()) throw InputError(who, key, "expected a string");
  return j[key].get<std::string>();
}

json point_json(const Point& p) {
  StoredPoint sp;
  sp.point = p;
  return point_to_json(sp);
}

Point point_of(const json& j, const std::string& where, const std::string& who) {
  if (!j.is_object()) throw InputError(who, where, "expected a point");
  return point_from_json(j, where, who).point;
}

}  // namespace

std::string configs_line(const std::vector<WorkerConfigLine>& configs) {
  json out = json::array();
  for (const auto& c : configs)
    out.push_back({{"name", c.name},
                   {"op", c.op},
                   {"timing", c.timing.empty() ? json() : json::parse(c.timing)},
                   {"providers", c.providers}});
  return json{{"configs", out}}.dump() + "\n";
}

std::vector<WorkerConfigLine> parse_configs(const std::string& line, const std::string& who) {
  const json j = parse_object(line, who);
  if (!j.contains("configs") || !j["configs"].is_array() || j["configs"].empty())
    throw InputError(who, "configs", "expected the parent's configs");
  std::vector<WorkerConfigLine> out;
  for (const auto& c : j["configs"]) {
    if (!c.is_object()) throw InputError(who, "configs", "expected objects");
    const json timing = c.value("timing", json());
    if (!timing.is_null() && !timing.is_object()) throw InputError(who, "timing", "expected a config's timing block");
    WorkerConfigLine w{text_of(c, "name", who), text_of(c, "op", who), timing.is_null() ? "" : timing.dump(), {}};
    if (!c.contains("providers") || !c["providers"].is_array()) throw InputError(who, "providers", "expected an array");
    for (const auto& p : c["providers"]) {
      if (!p.is_string()) throw InputError(who, "providers", "expected names");
      w.providers.push_back(p.get<std::string>());
    }
    out.push_back(std::move(w));
  }
  return out;
}

std::string hello_line(const WorkerHello& h) {
  json hello = {{"protocol", h.protocol}, {"device", h.device}};
  if (!h.error.empty()) {
    hello["error"] = h.error;
    hello["input_error"] = h.input_error;
  } else {
    json configs = json::array();
    for (const auto& c : h.configs) {
      json unavailable = json::object();
      for (const auto& [provider, why] : c.unavailable) unavailable[provider] = why;
      json one = json::object();
      if (!c.hash.empty()) one["hash"] = c.hash;  // a config it read (protocol 1)
      one["unavailable"] = unavailable;
      configs.push_back(one);
    }
    hello["configs"] = configs;
    hello["environment"] = environment_to_json(h.env);
    hello["placement"] = {{"cpus", cpu_list_text(h.placement.cpus)},
                          {"memory", h.placement.memory},
                          {"threads", h.placement.threads}};
  }
  return json{{"hello", hello}}.dump() + "\n";
}

std::string cell_line(const CellPoints& points, size_t config, int protocol) {
  json cell = json::array();
  for (const Point* p : points) cell.push_back(protocol < 2 ? json(p->key()) : point_json(*p));
  return json{{"cell", cell}, {"config", config}}.dump() + "\n";
}

std::string measure_line(const MeasureRequest& m, int protocol) {
  const json point = protocol < 2 || !m.point ? json(m.key) : point_json(*m.point);
  return json{{"measure", point},         {"config", m.config},           {"new_round", m.new_round},
              {"warmup_ms", m.warmup_ms}, {"rep_ms", m.rep_ms},           {"max_point_s", m.max_point_s},
              {"estimate_ms", m.estimate_ms}, {"check", m.check}}
             .dump() +
         "\n";
}

std::string cell_reply_line(const CellPoints& points, const CellResult& got, const StageTimes& stages,
                            const std::vector<CalibrationSample>& calibration) {
  json out = json::array(), estimates = json::array();
  for (size_t i = 0; i < points.size(); ++i) {
    StoredPoint sp;
    sp.point = *points[i];
    sp.result = got.results[i];
    out.push_back(point_to_json(sp));
    estimates.push_back(got.results[i].estimate_ms);
  }
  return json{{"points", out}, {"state", state_to_json(got.state)}, {"estimates", estimates},
              {"stages", stages_json(stages)}, {"calibration", calibration_json(Calibration{calibration})}}
             .dump() +
         "\n";
}

std::string hung_line(const std::string& key, const std::string& why) {
  return json{{"hung", key}, {"error", why}}.dump() + "\n";
}

std::string declined_line() { return json{{"declined", true}}.dump() + "\n"; }

std::string error_line(const std::string& why) { return json{{"error", why}}.dump() + "\n"; }

namespace {

ConfigHello config_hello(const json& c, int protocol, const std::string& who) {
  if (!c.is_object()) throw InputError(who, "configs", "expected objects");
  ConfigHello out;
  if (protocol < 2 || c.contains("hash")) out.hash = text_of(c, "hash", who);
  if (!c.contains("unavailable") || !c["unavailable"].is_object()) throw InputError(who, "unavailable", "expected an object");
  for (const auto& [provider, why] : c["unavailable"].items()) {
    if (!why.is_string()) throw InputError(who, "unavailable." + provider, "expected a string");
    out.unavailable.emplace_back(provider, why.get<std::string>());
  }
  return out;
}

Calibration calibration_of(const json& j, const std::string& who) {
  try {
    return calibration_from_json(j);
  } catch (const std::invalid_argument& e) {
    throw InputError(who, "calibration", e.what());
  }
}

}  // namespace

WorkerHello parse_hello(const std::string& line, const std::string& who) {
  const json j = parse_object(line, who);
  if (!j.contains("hello") || !j["hello"].is_object()) throw InputError(who, "hello", "expected the worker's hello");
  const json& h = j["hello"];
  WorkerHello out;
  out.protocol = h.contains("protocol") && h["protocol"].is_number_integer() ? h["protocol"].get<int>() : 0;
  out.device = text_of(h, "device", who);
  if (h.contains("error")) {
    out.error = text_of(h, "error", who);
    out.input_error = h.value("input_error", false);
    return out;
  }
  if (!h.contains("configs") || !h["configs"].is_array()) throw InputError(who, "configs", "expected an array");
  for (const auto& c : h["configs"]) out.configs.push_back(config_hello(c, out.protocol, who));
  if (!h.contains("environment")) throw InputError(who, "environment", "missing");
  out.env = environment_from_json(h["environment"], "hello.environment", who);
  if (!h.contains("placement") || !h["placement"].is_object()) throw InputError(who, "placement", "expected an object");
  const json& p = h["placement"];
  out.placement.cpus = parse_cpu_list(text_of(p, "cpus", who));
  out.placement.memory = text_of(p, "memory", who);
  if (!p.contains("threads") || !p["threads"].is_number_integer()) throw InputError(who, "threads", "expected an integer");
  out.placement.threads = p["threads"].get<int>();
  return out;
}

namespace {

// A cell's keys (protocol 1) or points (protocol 2), into `r`.
void read_cell(const json& j, ParentRequest& r, const std::string& who) {
  if (!j.contains("cell") || !j["cell"].is_array()) throw InputError(who, "cell", "expected an array of points");
  const json& cell = j["cell"];
  for (size_t i = 0; i < cell.size(); ++i) {
    if (cell[i].is_string()) r.cell.push_back(cell[i].get<std::string>());
    else r.points.push_back(point_of(cell[i], "cell[" + std::to_string(i) + "]", who));
  }
  if (!r.cell.empty() && !r.points.empty()) throw InputError(who, "cell", "expected keys or points, not both");
}

// The config a request names (0 when it names none).
size_t config_of(const json& j, const std::string& who) {
  if (!j.contains("config")) return 0;
  if (!j["config"].is_number_unsigned()) throw InputError(who, "config", "expected a config's index");
  return j["config"].get<size_t>();
}

MeasureRequest measure_request(const json& j, const std::string& who) {
  MeasureRequest m;
  if (j["measure"].is_object()) {
    m.point = point_of(j["measure"], "measure", who);
    m.key = m.point->key();
  } else {
    m.key = text_of(j, "measure", who);
  }
  m.config = config_of(j, who);
  if (!j.contains("new_round") || !j["new_round"].is_boolean()) throw InputError(who, "new_round", "expected true or false");
  m.new_round = j["new_round"].get<bool>();
  for (auto [key, field] : {std::pair{"warmup_ms", &m.warmup_ms}, {"rep_ms", &m.rep_ms}, {"max_point_s", &m.max_point_s}}) {
    if (!j.contains(key) || !j[key].is_number() || !(j[key].get<double>() > 0)) throw InputError(who, key, "expected a positive number");
    *field = j[key].get<double>();
  }
  if (j.contains("estimate_ms")) {
    if (!j["estimate_ms"].is_number() || !(j["estimate_ms"].get<double>() >= 0))
      throw InputError(who, "estimate_ms", "expected a number of milliseconds, 0 or more");
    m.estimate_ms = j["estimate_ms"].get<double>();
  }
  if (j.contains("check")) {
    if (!j["check"].is_boolean()) throw InputError(who, "check", "expected true or false");
    m.check = j["check"].get<bool>();
  }
  return m;
}

}  // namespace

ParentRequest parse_request(const std::string& line, const std::string& who) {
  const json j = parse_object(line, who);
  ParentRequest r;
  if (j.contains("measure")) {
    r.measure = measure_request(j, who);
    r.config = r.measure->config;
  } else {
    read_cell(j, r, who);
    r.config = config_of(j, who);
  }
  return r;
}

namespace {

template <typename F>
auto from_worker(const std::string& who, F read) {
  try {
    return read();
  } catch (const InputError& e) {
    throw RuntimeFailure(who + " answered what cannot be read: " + e.what());
  }
}

}  // namespace

WorkerHello accept_hello(const std::string& line, const std::string& who, const std::string& name,
                         const WorkerSetup& setup) {
  const WorkerHello h = from_worker(who, [&] { return parse_hello(line, who); });
  if (h.protocol != setup.protocol)
    throw RuntimeFailure(who + " speaks worker protocol " + std::to_string(h.protocol) + ", not " +
                         std::to_string(setup.protocol) +
                         (h.protocol ? "" : " (a build from before `opbench ab`)"));
  if (!h.error.empty()) {
    if (h.input_error) throw InputError(name, "", h.error);
    throw RuntimeFailure(name + ": " + h.error);
  }
  if (setup.protocol >= 2) {
    if (h.configs.size() != setup.configs.size())
      throw RuntimeFailure(who + " answered for " + std::to_string(h.configs.size()) + " configs, not " +
                           std::to_string(setup.configs.size()));
    return h;
  }
  std::vector<std::string> read;
  for (const auto& c : h.configs) read.push_back(c.hash);
  if (read != setup.config_hashes)
    throw RuntimeFailure(who + " read another config (the file changed while the workers started)");
  return h;
}

WorkerReply read_reply(const std::string& line, const std::string& who) {
  return from_worker(who, [&] { return parse_reply(line, who); });
}

WorkerReply parse_reply(const std::string& line, const std::string& who) {
  const json j = parse_object(line, who);
  WorkerReply r;
  if (j.contains("points")) {
    if (!j["points"].is_array()) throw InputError(who, "points", "expected an array");
    r.kind = WorkerReply::cell;
    for (size_t i = 0; i < j["points"].size(); ++i)
      r.results.push_back(point_from_json(j["points"][i], "points[" + std::to_string(i) + "]", who).result);
    r.state = state_from_json(j.contains("state") ? j["state"] : json(), "state", who);
    if (j.contains("estimates")) {
      const json& e = j["estimates"];
      if (!e.is_array() || e.size() != r.results.size()) throw InputError(who, "estimates", "expected one number a point");
      for (size_t i = 0; i < e.size(); ++i) {
        if (!e[i].is_number()) throw InputError(who, "estimates", "expected one number a point");
        r.results[i].estimate_ms = e[i].get<double>();
      }
    }
    if (j.contains("stages")) r.stages = stages_from_json(j["stages"], "stages", who);
    if (j.contains("calibration")) r.calibration = calibration_of(j["calibration"], who).samples;
  } else if (j.contains("hung")) {
    r.kind = WorkerReply::hung;
    r.key = text_of(j, "hung", who);
    r.error = text_of(j, "error", who);
  } else if (j.contains("declined")) {
    r.kind = WorkerReply::declined;
  } else {
    r.kind = WorkerReply::failure;
    r.error = text_of(j, "error", who);
  }
  return r;
}

}  // namespace opbench

#include "exchange/runs_json.hpp"

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "record/json_reader.hpp"
#include "record/run_check.hpp"
#include "record/run_json.hpp"

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

std::string runs_to_json(const std::vector<RunRecord>& runs) {
  // Pretty-printed, except that each point is one line: a changed point is a changed line.
  std::string out = std::string("{\n  \"format\": \"") + kFormat + "\",\n  \"version\": " +
                    std::to_string(kVersion) + ",\n  \"runs\": [";
  for (size_t i = 0; i < runs.size(); ++i) {
    json run = run_record_to_json(runs[i]);
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
  const JsonReader doc(j, "", path);
  if (doc.str("format") != kFormat) doc.fail("format", std::string("expected \"") + kFormat + "\"");
  const int64_t version = doc.integer("version");
  if (version < 1 || version > kVersion)
    doc.fail("version", "this opbench reads versions 1 to " + std::to_string(kVersion));
  std::vector<RunRecord> out;
  for (size_t i = 0; i < doc.array("runs").size(); ++i) {
    out.push_back(run_record_from(doc.item("runs", i)));
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

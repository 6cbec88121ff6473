// The runs and documents a site is built from. Torch-free.
#include "site/input.hpp"

#include <algorithm>
#include <set>

#include "core/error.hpp"
#include "exchange/import.hpp"
#include "exchange/runs_json.hpp"

namespace opbench {

using json = nlohmann::ordered_json;

namespace {

// Runs of every source, each uuid once, ids unique (kept where free).
class RunCollector {
 public:
  void add(SiteRun r) {
    if (!r.run.uuid.empty() && !uuids_.insert(r.run.uuid).second) return;
    pending_.push_back(std::move(r));
  }
  // Ids kept where no earlier run took them, the rest numbered after the largest.
  std::vector<SiteRun> take() {
    std::set<int64_t> taken;
    int64_t next = 1;
    for (const auto& r : pending_) next = std::max(next, r.run.id + 1);
    for (auto& r : pending_) {
      if (r.run.id <= 0 || !taken.insert(r.run.id).second) r.run.id = next++;
      taken.insert(r.run.id);
      for (auto& p : r.points) p.run_id = r.run.id;
    }
    std::stable_sort(pending_.begin(), pending_.end(), [](const SiteRun& a, const SiteRun& b) {
      if (a.run.started_at != b.run.started_at) return a.run.started_at < b.run.started_at;
      return a.run.id < b.run.id;
    });
    return std::move(pending_);
  }

 private:
  std::set<std::string> uuids_;
  std::vector<SiteRun> pending_;
};

bool is_number_or_null(const json& v) { return v.is_number() || v.is_null(); }

// The fields the diff page reads of each compared point.
std::string row_problem(const json& p, std::string* field) {
  const std::pair<const char*, bool (*)(const json&)> checks[] = {
      {"title", [](const json& v) { return v.is_string(); }},
      {"x", [](const json& v) { return v.is_number_integer(); }},
      {"x_name", [](const json& v) { return v.is_string(); }},
      {"provider", [](const json& v) { return v.is_string(); }},
      {"verdict", [](const json& v) { return v.is_string(); }},
      {"base", is_number_or_null},
      {"head", is_number_or_null},
      {"ratio", is_number_or_null}};
  for (const auto& [name, ok] : checks)
    if (!p.is_object() || !p.contains(name) || !ok(p[name])) {
      *field = name;
      return "missing or of the wrong type";
    }
  return "";
}

}  // namespace

std::string document_problem(const json& j, std::string* field, std::string* kind) {
  *field = "";
  if (!j.is_object()) return "not a JSON object";
  const bool versus = j.contains("versus") && j.contains("run");
  const bool diff = j.contains("base") && j.contains("head");
  if (!versus && !diff)
    return "neither a runs export (opbench export) nor a diff or versus document (opbench diff|versus --format json)";
  *kind = versus ? "versus" : "diff";
  for (const char* f : {"points", "summary"})
    if (!j.contains(f) || !j[f].is_array()) {
      *field = f;
      return "missing or not a list";
    }
  for (const char* f : versus ? std::vector<const char*>{"run"} : std::vector<const char*>{"base", "head"})
    if (!j[f].is_object()) {
      *field = f;
      return "not an object (a run)";
    }
  for (size_t i = 0; i < j["points"].size(); ++i) {
    std::string sub;
    const std::string why = row_problem(j["points"][i], &sub);
    if (!why.empty()) {
      *field = "points[" + std::to_string(i) + "]." + sub;
      return why;
    }
  }
  return "";
}

SiteInput read_site_input(std::vector<std::unique_ptr<Store>> stores, const std::vector<std::string>& jsons) {
  SiteInput in;
  RunCollector runs;
  for (const auto& store : stores) {
    in.sources.push_back(store->path());
    for (const auto& r : store->runs())
      runs.add(SiteRun{{r, store->points_without_samples(r.id)}, store.get(), r.id});
  }
  for (const auto& path : jsons) {
    in.sources.push_back(path);
    const std::string text = read_document(path);
    if (is_runs_json(text)) {
      for (auto& rec : runs_from_json(text, path)) runs.add(SiteRun{{rec.run, std::move(rec.points)}, nullptr, 0});
      continue;
    }
    SiteDocument doc{path, "", json::parse(text, nullptr, /*allow_exceptions=*/false)};
    if (doc.json.is_discarded()) throw InputError(path, "", "not JSON");
    std::string field;
    const std::string why = document_problem(doc.json, &field, &doc.kind);
    if (!why.empty()) throw InputError(path, field, why);
    in.documents.push_back(std::move(doc));
  }
  in.runs = runs.take();
  in.stores = std::move(stores);
  return in;
}

std::vector<StoredPoint> points_with_samples(const SiteRun& r) {
  if (!r.store) return r.points;
  std::vector<StoredPoint> out = r.store->points(r.stored_id);
  for (auto& p : out) p.run_id = r.run.id;
  return out;
}

}  // namespace opbench

// What `opbench site` is built from: the runs of databases (--db) and of JSON exports (--json),
// and the diff and versus documents CI produced (`opbench diff|versus --format json`, also
// given with --json: told apart by their content). Torch-free.
//
// A run found twice (same uuid: a database and its export) is read once, from the first source
// naming it. Runs keep their ids where no earlier source took the id; the others get the next
// free ones. Runs of a database are read without their samples (the pages show values and
// spreads); points_with_samples reads a run's samples back for the diffs of the index.
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "record/run_record.hpp"
#include "store/store.hpp"

namespace opbench {

// A run and where it was read from.
struct SiteRun : RunRecord {
  const Store* store = nullptr;  // the database it was read from, without samples; null: read whole
  int64_t stored_id = 0;         // its id there
};

// A diff or versus document: kind "diff" or "versus", its path, its JSON as written.
struct SiteDocument {
  std::string path, kind;
  nlohmann::ordered_json json;
};

struct SiteInput {
  std::vector<std::unique_ptr<Store>> stores;
  std::vector<SiteRun> runs;  // in time order (start, then id)
  std::vector<SiteDocument> documents;
  std::vector<std::string> sources;  // every --db and --json, as given
};

// Reads the runs of the open databases (kept in the result, in the order given) and every JSON
// file. Throws InputError naming the file (and field) for a JSON file that is missing, neither
// a runs export nor a diff or versus document, or one of those lacking a field the pages read.
SiteInput read_site_input(std::vector<std::unique_ptr<Store>> stores, const std::vector<std::string>& jsons);

// A run's points with their samples and rounds (read again from its database where needed).
std::vector<StoredPoint> points_with_samples(const SiteRun& r);

// Why a JSON value is no diff or versus document the site can show ("" when it is one), with
// the field at fault; *kind is set to "diff" or "versus". Exposed for tests.
std::string document_problem(const nlohmann::ordered_json& j, std::string* field, std::string* kind);

}  // namespace opbench

// A run with everything the store keeps of it: its row, its points (samples and rounds
// included) and the table work it recorded. What merge copies between databases and what
// export writes as JSON. Torch-free.
#pragma once
#include <cstdint>
#include <vector>

#include "store/store.hpp"

namespace opbench {

struct RunRecord {
  RunInfo run;
  std::vector<StoredPoint> points;
  std::vector<CompileRecord> compiles;
  std::vector<std::pair<std::string, std::string>> options;  // the options that shaped it (run_options)
};

// A run of `store` with its points and compile records.
RunRecord load_run(const Store& store, const RunInfo& run);

// Inserts the run under a new id (set in rec.run.id, its points and compiles follow), keeping
// its uuid, times, status and environment. No transaction of its own: call inside
// Store::transaction.
void insert_run(Store& store, RunRecord& rec);

// Inserts, in one transaction, each run whose uuid `store` does not hold yet. Returns, per run,
// whether it was added; every rec.run.id is set: the new id, or the id of the run already
// there with that uuid.
std::vector<bool> insert_new_runs(Store& store, std::vector<RunRecord>& runs);

}  // namespace opbench

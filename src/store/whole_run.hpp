// A whole run (record/run_record.hpp: its row, points, compile records and options) read out
// of a store and inserted into one: what merge, import and the joining of shards store.
// Torch-free.
#pragma once
#include <vector>

#include "record/run_record.hpp"
#include "store/store.hpp"

namespace opbench {

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

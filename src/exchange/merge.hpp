// opbench merge: copy the runs of databases written elsewhere into one. Torch-free.
//
// Runs get new ids in the destination (their points follow); a run whose uuid the destination
// already holds is skipped, so merging the same database twice copies nothing the second time.
// A run the destination holds unfinished (copied while interrupted or abandoned) is completed
// from a source that holds more of it: the points it lacks are added and its status and end
// follow the source's. A source run that a live sweep is measuring (its lock held) is
// refused, as is a run the store must not take (record/run_check.hpp): nothing is copied.
// Sources are opened read-only: one written by an older opbench is migrated in memory (the
// file stays as it was), its runs getting uuids derived from their content, so two copies of
// one old database agree on them.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "store/store.hpp"

namespace opbench {

struct MergeStats {
  size_t copied = 0, completed = 0, skipped = 0, points = 0;
  std::vector<std::pair<int64_t, int64_t>> remapped;  // source id -> destination id
  std::vector<std::string> warnings;                   // runs copied unfinished
};

// Copies every run of `src` that `dest` lacks. No transaction of its own: call inside
// dest.transaction() (merge_databases does).
MergeStats merge_runs(Store& dest, const Store& src);

// Opens each source: it must exist, be an opbench database, not be `dest_path`, hold no run
// being measured and only runs the store may take (InputError otherwise). Called before the destination is opened, so that bad input
// creates no database.
std::vector<std::unique_ptr<Store>> open_merge_sources(const std::vector<std::string>& sources,
                                                       const std::string& dest_path);

// Copies every source into `dest` in one transaction (runs, their points and compile
// records). Returns one MergeStats per source.
std::vector<MergeStats> merge_stores(Store& dest, const std::vector<std::unique_ptr<Store>>& sources);

// open_merge_sources + merge_stores.
std::vector<MergeStats> merge_databases(Store& dest, const std::vector<std::string>& sources);

}  // namespace opbench

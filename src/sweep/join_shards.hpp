// `opbench merge --join-shards SRC... --db DEST`: the runs of the N shards of one sweep
// (`sweep --shard i/N`, each on its own host, in its own database or JSON export) joined into
// one run, as if one sweep had measured every cell. Torch-free.
//
// The shards must be of one sweep: the same config (hash), N, providers, title filter and
// commit; every shard 1..N exactly once, each finished (done). Their GPUs must be one model
// unless allow_mixed. The joined run holds every point of the shards (each keeping the device
// that measured it, named DEVICE@HOST when the shards ran on several hosts), their compile
// records, the devices of them all, and as options those of the shards without `shard`, plus
// `shards` (N) and `shard_runs` (i/N=uuid, ...). Its uuid comes from the shards' uuids, so
// joining the same shards again adds nothing.
#pragma once
#include <string>
#include <vector>

#include "record/run_record.hpp"

namespace opbench {

// A run and where it was read from (a database or a JSON export).
struct SourcedRun {
  std::string source;
  RunRecord rec;
};

// Every run of the sources: databases (read only) and JSON exports (`opbench export`).
// InputError for a source that is missing, unreadable or the destination database.
std::vector<SourcedRun> read_runs(const std::vector<std::string>& sources, const std::string& dest_path);

// The shards joined into one run; InputError naming the shard (or run) otherwise:
// "shard 2/3 missing", "shard 1/3 given twice (run 4 in a.db, run 7 in b.db)", ...
RunRecord join_shards(const std::vector<SourcedRun>& runs, bool allow_mixed);

}  // namespace opbench

// The providers' once-per-table work (the compiled packages) for every config of a sweep
// command, done together before its first run: in parallel, outside every timed region.
#pragma once
#include <string>
#include <vector>

#include "core/progress.hpp"
#include "sweep/prepared.hpp"
#include "torch/providers/table_jobs.hpp"

namespace opbench {

// One config's table jobs and their outcomes (what its run records as its compiles).
struct ConfigTables {
  std::vector<TableJob> jobs;
  std::vector<TableOutcome> outcomes;
};

// The work every config needs (its shard's tables, on each of `devices`: one per GPU model),
// one entry a config.
std::vector<ConfigTables> prepare_tables(const std::vector<Prepared>& configs, const std::vector<std::string>& devices,
                                         ProgressMode progress);

}  // namespace opbench

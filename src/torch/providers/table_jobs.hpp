// The once-per-table work of a sweep's providers (Provider::table_work): which tasks a sweep
// needs, and running them with a progress line. Used by `opbench compile` and `opbench sweep`.
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

#include "core/progress.hpp"
#include "points/points.hpp"
#include "torch/providers/table_work.hpp"

namespace opbench {

struct TableJob {
  TableTask task;
  TableWork* work = nullptr;  // the provider's
};

// One job per table and provider with table work in `sw` (a provider's speed and memory tables
// of the same shapes share one), in table order.
std::vector<TableJob> table_jobs(const Sweep& sw, const std::string& device);

// "" when every job's work can run for `device`, else "PROVIDER: reason" of the first that cannot.
std::string table_jobs_unavailable(const std::vector<TableJob>& jobs, const std::string& device);

// Runs the jobs, each work's together (up to `parallel` at a time), with progress on `log` in
// `mode`, failures and a summary per work. One outcome per job, in order.
std::vector<TableOutcome> run_table_jobs(const std::vector<TableJob>& jobs, int parallel, ProgressMode mode,
                                         std::ostream& log);

// What one job may take at its peak (an AOTInductor export: torch.export, Inductor and the C++
// compiler in one process; docs/findings/2026-11-26-compiled-export-memory.md measured it).
constexpr double kTableJobMemoryBytes = 3.0 * (1 << 30);

// The default `parallel`: the cores, and no more jobs than fit in the memory available
// now at kTableJobMemoryBytes each (at least one).
int default_table_jobs();

}  // namespace opbench

// Work a provider does once per table before any of the table's points is timed, such as
// building an ahead-of-time compiled package for the table's shapes (dynamic over its x axis).
// A provider offers it through Provider::table_work; the harness collects one task per table
// and provider (src/torch/providers/table_jobs.hpp) and runs them in parallel, outside every timed
// region. Torch-free.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/value.hpp"

namespace opbench {

// One table's worth of points of one provider: everything but x is fixed.
struct TableTask {
  std::string op, provider;
  std::string title;               // the table (for messages and records)
  Params params;                   // every axis (mode and dtype included) but metric and x
  std::string x_name;              // the swept axis
  std::vector<int64_t> x_values;
  std::string device;              // "cpu", "cuda" or "cuda:N"
};

struct TableOutcome {
  std::string key;      // what identifies the result (a cache key)
  std::string path;     // where it lies ("" when nothing was made)
  std::string error;    // "" on success, else one line
  double seconds = 0;   // wall time spent (0 when found ready)
  bool cached = false;  // found ready, nothing was done
  std::string stages;   // where the time went, in words ("" unknown or cached)
};

using TableProgress = std::function<void(size_t done, size_t total, const TableOutcome&)>;

class TableWork {
 public:
  virtual ~TableWork() = default;
  // What the work makes, plural ("AOTInductor packages"), for progress lines.
  virtual std::string what() const = 0;
  // "" when the work can run for `device` here, else the one-line reason.
  virtual std::string unavailable(const std::string& device) = 0;
  // Whether the task's result is there already, so that run() would find it and do nothing
  // (a dry run's estimate counts the others). False when unknown.
  virtual bool ready(const TableTask&) { return false; }
  // Runs the tasks, up to `jobs` at a time; one outcome per task, in order. Never throws for
  // a failing task (its outcome carries the error). `progress` may be empty.
  virtual std::vector<TableOutcome> run(const std::vector<TableTask>& tasks, int jobs,
                                        const TableProgress& progress) = 0;
};

}  // namespace opbench

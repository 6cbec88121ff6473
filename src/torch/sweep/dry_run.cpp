#include "torch/sweep/dry_run.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <unordered_map>

#include "core/fs.hpp"
#include "core/progress.hpp"
#include "store/store.hpp"
#include "sweep/plan.hpp"
#include "sweep/resume.hpp"
#include "sweep/shard.hpp"
#include "torch/providers/table_jobs.hpp"

namespace opbench {

namespace {

// The mean export time of the packages this database's runs built, 0 when none did.
double typical_export_seconds(const std::string& db) {
  if (!fs::is_regular_file(db)) return 0;
  double sum = 0;
  size_t n = 0;
  try {
    auto store = Store::open_read_only(db);
    for (const auto& r : store->runs())
      for (const auto& c : store->compiles(r.id))
        if (!c.cached && c.error.empty() && c.seconds > 0) sum += c.seconds, ++n;
  } catch (const std::exception&) {
    return 0;
  }
  return n ? sum / double(n) : 0;
}

// The time a sweep should take: its points' timing budgets, and the providers' once-per-table
// work not done yet (compiled packages not in the cache: their mean export time in this
// database, else a minute each); on several devices, the busiest one's share of the cells.
std::string estimate_line(const Config& cfg, const Sweep& sw, const std::vector<Cell>& cells,
                          const std::string& device, const std::string& db, size_t devices) {
  const double budget = timing_budget_seconds(sw, cells, cfg.timing);
  std::string text = "estimated time: ";
  size_t to_export = 0;
  std::string what;
  const auto jobs = table_jobs(sw, device);
  if (table_jobs_unavailable(jobs, device).empty())
    for (const auto& job : jobs) {
      try {
        if (!job.work->ready(job.task)) ++to_export, what = job.work->what();
      } catch (const std::exception&) {
        ++to_export;
      }
    }
  double each = typical_export_seconds(db);
  const bool measured = each > 0;
  if (!measured) each = 60;
  const int parallel = default_table_jobs();
  const double compile_s = std::ceil(double(to_export) / double(parallel)) * each;
  text += format_duration(budget + compile_s) + " (timing budgets " + format_duration(budget);
  if (devices > 1) {
    const auto loads = slice_seconds(sw, cells, cfg.timing, int(devices));
    text += ", on " + std::to_string(devices) + " devices about " +
            format_duration(*std::max_element(loads.begin(), loads.end())) + " for the busiest (with " +
            format_duration(kPointSetupSeconds) + " a point added)";
  }
  if (to_export)
    text += "; " + std::to_string(to_export) + " " + (what.empty() ? "tables to prepare" : what) + " to make, " + format_duration(each) + " each " +
            (measured ? "as before in this database" : "assumed") + ", " + std::to_string(parallel) + " at a time";
  return text + "; calls slower than their budgets take longer)";
}

// Lists what one config (this shard of it) measures and estimates its time.
void print_config(const Prepared& p, const std::string& device, const std::string& db, size_t devices) {
  const Config& cfg = p.cfg;
  const Sweep& sw = p.sw;
  const Shard shard = shard_of(p.options);
  const Sweep part = only_cells(sw, shard_cells(sw, cfg.timing, shard));
  std::unordered_map<std::string, size_t> per_table;
  size_t stored = 0;
  for (const auto& pt : part.points) ++per_table[pt.title], stored += p.done.count(pt.key());
  const std::string where = p.options.devices.empty() ? device : join_list(p.options.devices);
  std::cout << cfg.path << ": " << cfg.op << " on " << where << ", ";
  if (shard.on())
    std::cout << "shard " << shard.text() << ": " << per_table.size() << " of " << sw.tables.size() << " tables, "
              << part.points.size() << " of " << sw.points.size() << " points";
  else
    std::cout << sw.tables.size() << " tables, " << sw.points.size() << " points";
  if (stored) std::cout << " (" << stored << " already stored)";
  std::cout << "\n";
  for (const auto& t : sw.tables)
    if (!shard.on() || per_table.count(t.title))
      std::cout << "  [" << t.section << "] " << t.title << ": " << per_table[t.title] << " points\n";
  std::cout << estimate_line(cfg, part, plan_cells(part, p.done), device, db, devices) << "\n";
}

}  // namespace

void print_dry_run(const std::vector<Prepared>& configs, const std::string& db, const std::string& device,
                   size_t devices) {
  for (const auto& p : configs) print_config(p, device, db, devices);
}

}  // namespace opbench

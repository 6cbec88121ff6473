#include "torch/providers/table_jobs.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <ostream>
#include <set>
#include <thread>

#include "torch/providers/provider.hpp"

namespace opbench {

std::vector<TableJob> table_jobs(const Sweep& sw, const std::string& device) {
  std::vector<TableJob> jobs;
  std::set<std::string> seen;  // provider, device and every axis but metric: one task
  for (const auto& t : sw.tables) {
    std::set<std::string> providers;
    for (const auto& p : sw.points)
      if (p.title == t.title) providers.insert(p.provider);
    for (const auto& name : providers) {
      const Provider* prov = find_provider(sw.op->name, name);
      if (!prov || !prov->table_work) continue;
      TableTask task{sw.op->name, name, t.title, t.params, sw.op->x_axes.front(), t.x_values, device};
      task.params.erase("metric");
      std::string key = name + "|" + device;
      for (const auto& [k, v] : task.params.values()) key += "|" + k + "=" + to_string(v);
      if (!seen.insert(key).second) continue;
      jobs.push_back({task, prov->table_work.get()});
    }
  }
  return jobs;
}

std::string table_jobs_unavailable(const std::vector<TableJob>& jobs, const std::string& device) {
  std::set<TableWork*> asked;
  for (const auto& j : jobs) {
    if (!asked.insert(j.work).second) continue;
    const std::string why = j.work->unavailable(device);
    if (!why.empty()) return j.task.provider + ": " + why;
  }
  return "";
}

std::vector<TableOutcome> run_table_jobs(const std::vector<TableJob>& jobs, int parallel, ProgressMode mode,
                                         std::ostream& log) {
  std::vector<TableOutcome> out(jobs.size());
  // The jobs of each work, in first-seen order of the works.
  std::vector<TableWork*> works;
  std::map<TableWork*, std::vector<size_t>> of;
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (!of.count(jobs[i].work)) works.push_back(jobs[i].work);
    of[jobs[i].work].push_back(i);
  }
  for (TableWork* w : works) {
    std::vector<TableTask> tasks;
    for (size_t i : of[w]) tasks.push_back(jobs[i].task);
    size_t failed = 0;
    const auto t0 = std::chrono::steady_clock::now();
    Progress progress(mode, log, tasks.size(), 0, w->what());
    progress.begin("preparing", 0);
    const std::vector<TableOutcome> got = w->run(tasks, parallel, [&](size_t done, size_t, const TableOutcome& o) {
      if (!o.error.empty()) {
        ++failed;
        progress.note("failed: " + o.key + ": " + o.error);
      }
      const std::string what = (o.cached ? "cached " : o.error.empty() ? "built " : "failed ") + o.key +
                               (o.cached ? "" : " (" + format_duration(o.seconds) + ")");
      progress.end(what, done, 1);
      progress.begin(what, done);
    });
    progress.finish();
    double seconds = 0;
    size_t cached = 0;
    for (size_t k = 0; k < got.size(); ++k) {
      out[of[w][k]] = got[k];
      seconds += got[k].seconds;
      cached += got[k].cached;
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    log << w->what() << ": " << got.size() << " (" << cached << " cached, " << failed << " failed)";
    if (got.size() > cached)
      log << "; " << got.size() - cached << " made in " << format_duration(wall) << " of wall time, up to " << parallel
          << " at a time (" << format_duration(seconds) << " of work)";
    log << "\n";
  }
  return out;
}

namespace {

// MemAvailable of /proc/meminfo in bytes (0 when unknown).
double available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  double kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return 0;
}

}  // namespace

int default_table_jobs() {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const double memory = available_memory_bytes();
  if (!(memory > 0)) return int(cores);
  const unsigned fit = unsigned(std::max(1.0, memory / kTableJobMemoryBytes));
  return int(std::min(cores, fit));
}

}  // namespace opbench

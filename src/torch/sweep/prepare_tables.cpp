#include "torch/sweep/prepare_tables.hpp"

#include <iostream>

#include "measure/stages.hpp"
#include "sweep/shard.hpp"

namespace opbench {

std::vector<ConfigTables> prepare_tables(const std::vector<Prepared>& ps, const std::vector<std::string>& devices,
                                         ProgressMode progress) {
  std::vector<ConfigTables> out(ps.size());
  std::vector<TableJob> all;
  for (size_t i = 0; i < ps.size(); ++i) {
    const Prepared& p = ps[i];
    const Sweep part = only_cells(p.sw, shard_cells(p.sw, p.cfg.timing, shard_of(p.options)));
    for (const auto& device : devices)
      for (auto& job : table_jobs(part, device)) out[i].jobs.push_back(job);
    all.insert(all.end(), out[i].jobs.begin(), out[i].jobs.end());
  }
  if (all.empty()) return out;
  StageScope loading(Stage::packages);  // charged to the first run's accounts
  const std::vector<TableOutcome> got = run_table_jobs(all, default_table_jobs(), progress, std::cerr);
  size_t k = 0;
  for (auto& w : out)
    for (size_t j = 0; j < w.jobs.size(); ++j) w.outcomes.push_back(got[k++]);
  return out;
}

}  // namespace opbench

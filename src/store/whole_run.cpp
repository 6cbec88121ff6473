#include "store/whole_run.hpp"

namespace opbench {

RunRecord load_run(const Store& store, const RunInfo& run) {
  return {run, store.points(run.id), store.compiles(run.id), store.run_options(run.id)};
}

void insert_run(Store& store, RunRecord& rec) {
  rec.run.id = 0;
  store.begin_run(rec.run);
  for (auto& p : rec.points) p.run_id = rec.run.id;
  store.insert_points(rec.points);
  for (auto& c : rec.compiles) {
    c.run_id = rec.run.id;
    store.add_compile(c);
  }
  store.set_run_options(rec.run.id, rec.options);
}

std::vector<bool> insert_new_runs(Store& store, std::vector<RunRecord>& runs) {
  std::vector<bool> added(runs.size(), false);
  store.transaction([&] {
    for (size_t i = 0; i < runs.size(); ++i) {
      if (auto there = store.run_by_uuid(runs[i].run.uuid)) {
        runs[i].run.id = there->id;
        continue;
      }
      insert_run(store, runs[i]);
      added[i] = true;
    }
  });
  return added;
}

}  // namespace opbench

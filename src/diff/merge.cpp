// opbench merge: runs from other databases, ids remapped, never duplicated. Torch-free.
#include "diff/merge.hpp"

#include <memory>

#include "core/error.hpp"
#include "core/fs.hpp"

namespace opbench {

MergeStats merge_runs(Store& dest, const Store& src) {
  MergeStats st;
  for (RunInfo r : src.runs()) {
    if (r.uuid.empty() || dest.run_by_uuid(r.uuid)) {
      ++st.skipped;
      continue;
    }
    const int64_t from = r.id;
    std::vector<StoredPoint> pts = src.points(from);
    r.id = 0;
    dest.begin_run(r);  // keeps uuid, times, status, environment
    for (auto& p : pts) p.run_id = r.id;
    dest.insert_points(pts);
    if (r.status == "running")
      st.warnings.push_back(src.path() + ": run " + std::to_string(from) +
                            " was still running; points it stores later will not follow");
    ++st.copied;
    st.points += pts.size();
    st.remapped.emplace_back(from, r.id);
  }
  return st;
}

std::vector<MergeStats> merge_databases(Store& dest, const std::vector<std::string>& sources) {
  std::vector<std::unique_ptr<Store>> srcs;
  for (const auto& path : sources) {
    if (!fs::is_regular_file(path)) throw InputError(path, "", "no such database");
    if (fs::same_file(path, dest.path())) throw InputError(path, "", "is the destination database");
    try {
      srcs.push_back(Store::open_read_only(path));
    } catch (const RuntimeFailure& e) {
      throw InputError(path, "", std::string("not a readable opbench database: ") + e.what());
    }
  }
  std::vector<MergeStats> out;
  dest.transaction([&] {
    for (auto& s : srcs) out.push_back(merge_runs(dest, *s));
  });
  return out;
}

}  // namespace opbench

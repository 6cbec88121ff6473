// opbench merge: runs from other databases, ids remapped, never duplicated. Torch-free.
#include "exchange/merge.hpp"

#include <memory>

#include "core/error.hpp"
#include "core/fs.hpp"
#include "exchange/run_record.hpp"

namespace opbench {

MergeStats merge_runs(Store& dest, const Store& src) {
  MergeStats st;
  for (const RunInfo& r : src.runs()) {
    if (r.uuid.empty() || dest.run_by_uuid(r.uuid)) {
      ++st.skipped;
      continue;
    }
    RunRecord rec = load_run(src, r);
    insert_run(dest, rec);  // keeps uuid, times, status, environment
    if (r.status == "running")
      st.warnings.push_back(src.path() + ": run " + std::to_string(r.id) +
                            " was still running; points it stores later will not follow");
    ++st.copied;
    st.points += rec.points.size();
    st.remapped.emplace_back(r.id, rec.run.id);
  }
  return st;
}

std::vector<std::unique_ptr<Store>> open_merge_sources(const std::vector<std::string>& sources,
                                                       const std::string& dest_path) {
  std::vector<std::unique_ptr<Store>> srcs;
  for (const auto& path : sources) {
    if (!fs::is_regular_file(path)) throw InputError(path, "", "no such database");
    if (fs::same_file(path, dest_path)) throw InputError(path, "", "is the destination database");
    try {
      srcs.push_back(Store::open_read_only(path));
    } catch (const RuntimeFailure& e) {
      throw InputError(path, "", std::string("not a readable opbench database: ") + e.what());
    }
  }
  return srcs;
}

std::vector<MergeStats> merge_stores(Store& dest, const std::vector<std::unique_ptr<Store>>& sources) {
  std::vector<MergeStats> out;
  dest.transaction([&] {
    for (const auto& s : sources) out.push_back(merge_runs(dest, *s));
  });
  return out;
}

std::vector<MergeStats> merge_databases(Store& dest, const std::vector<std::string>& sources) {
  return merge_stores(dest, open_merge_sources(sources, dest.path()));
}

}  // namespace opbench

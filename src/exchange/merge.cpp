// opbench merge: runs from other databases, ids remapped, never duplicated. Torch-free.
#include "exchange/merge.hpp"

#include <memory>
#include <set>

#include "core/error.hpp"
#include "core/fs.hpp"
#include "record/run_check.hpp"
#include "store/whole_run.hpp"

namespace opbench {

namespace {

// The points of `rec` the destination's copy `there` lacks, added; its status, end and
// devices brought up to the source's. Returns the points added.
size_t complete_run(Store& dest, const RunInfo& there, RunRecord& rec) {
  std::set<std::string> held;
  for (const auto& k : dest.done_keys(there.id)) held.insert(k);
  std::vector<StoredPoint> missing;
  for (auto& p : rec.points)
    if (!held.count(p.point.key())) {
      p.run_id = there.id;
      missing.push_back(std::move(p));
    }
  dest.insert_points(missing);
  dest.add_run_devices(there.id, rec.run.devices);
  dest.set_run_end(there.id, rec.run.status, rec.run.finished_at);
  return missing.size();
}

}  // namespace

MergeStats merge_runs(Store& dest, const Store& src) {
  MergeStats st;
  for (const RunInfo& r : src.runs()) {
    const auto there = r.uuid.empty() ? std::nullopt : dest.run_by_uuid(r.uuid);
    const bool nothing_new =
        there && (there->status == "done" || (there->status == r.status && there->points >= r.points));
    if (r.uuid.empty() || nothing_new) {
      ++st.skipped;
      continue;
    }
    RunRecord rec = load_run(src, r);
    if (there) {  // copied before its sweep ended: what it measured since follows now
      st.points += complete_run(dest, *there, rec);
      ++st.completed;
      st.remapped.emplace_back(r.id, there->id);
      continue;
    }
    insert_run(dest, rec);  // keeps uuid, times, status, environment
    if (r.status != "done")
      st.warnings.push_back(src.path() + ": run " + std::to_string(r.id) + " is " + effective_status(src, r) +
                            ": copied as it stands; merge again once it is complete to bring the rest");
    ++st.copied;
    st.points += rec.points.size();
    st.remapped.emplace_back(r.id, rec.run.id);
  }
  return st;
}

namespace {

// Every run of a source must be one the store may take (record/run_check.hpp), and none may
// be under way: a sweep measuring it would add points after the copy (InputError naming it).
void check_source(const Store& src, const std::string& path) {
  for (const RunInfo& r : src.runs()) {
    const std::string run = "run " + std::to_string(r.id);
    if (effective_status(src, r) == "running") {
      const auto lock = src.run_lock(r.id);
      throw InputError(path, run,
                       "is being measured (pid " + std::to_string(lock->holder.pid) + " on " + lock->holder.host +
                           " since " + lock->since + "): merge once its sweep ends");
    }
    check_record(load_run(src, r), path, run);
  }
}

}  // namespace

std::vector<std::unique_ptr<Store>> open_merge_sources(const std::vector<std::string>& sources,
                                                       const std::string& dest_path) {
  std::vector<std::unique_ptr<Store>> srcs;
  for (const auto& path : sources) {
    const std::string why = fs::database_problem(path, false);
    if (!why.empty()) throw InputError(path, "", why);
    if (!fs::exists(path)) throw InputError(path, "", "no such database");
    if (fs::same_file(path, dest_path)) throw InputError(path, "", "is the destination database");
    try {
      srcs.push_back(Store::open_read_only(path));
    } catch (const RuntimeFailure& e) {
      throw InputError(path, "", std::string("not a readable opbench database: ") + e.what());
    }
    check_source(*srcs.back(), path);
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

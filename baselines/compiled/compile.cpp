// compile_packages (compiled.h) as a few named steps: plan each request (cached, known to
// fail, or wanting a package), group the wanted ones by the package that serves them (one
// export for tables differing only in the op's shared axes), start exporters up to the job
// count, reap the ones that ended (or ran past the timeout), and finish each request once its
// last export is in (a failed dynamic export falling back to one static package per x; a
// failed export dynamic over a shared axis to one package per value).
#include <algorithm>
#include <chrono>
#include <climits>
#include <deque>
#include <iostream>
#include <map>
#include <set>
#include <stdexcept>
#include <thread>

#include "baselines/compiled/compiled.h"
#include "baselines/compiled/exporter.h"
#include "baselines/compiled/package_cache.h"
#include "core/fs.hpp"
#include "core/process.hpp"
#include "core/text.hpp"

namespace opbench {

namespace {

using namespace compiled;
using Clock = std::chrono::steady_clock;


// One exporter process and the requests its package serves.
struct Job {
  std::vector<size_t> members;
  ExportJob spec;
  bool merged = false;  // dynamic over a shared axis: falls back to one package per value
  pid_t pid = -1;
  Clock::time_point started;
};

struct RequestState {
  PackageKey key;
  std::string dir;
  std::vector<int64_t> xs;                // sorted, unique
  SharedPoint point;                      // its shared axes' values
  std::map<int64_t, std::string> served;  // x -> package
  std::string error;
  bool export_failed = false;  // an exporter failed (remembered for the process)
  bool cached = false, wanted = false, started = false, finished = false;
  int pending = 0;             // jobs queued or running
  ExportStages stages;         // where its exports' time went
  Clock::time_point first_start;
  double seconds = 0;
};

class Build {
 public:
  Build(const std::vector<CompileRequest>& requests, int jobs, const TableProgress& progress)
      : requests_(requests), jobs_(std::max(1, jobs)), progress_(progress), state_(requests.size()),
        outcomes_(requests.size()), timeout_(export_timeout()) {}

  std::vector<CompileOutcome> run() {
    for (size_t i = 0; i < requests_.size(); ++i) plan(i);
    for (const auto& members : groups()) queue(members);
    for (size_t i = 0; i < requests_.size(); ++i)
      if (state_[i].pending == 0) finish(i);
    while (!queue_.empty() || !running_.empty()) {
      start_ready();
      if (!reap() && !running_.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return outcomes_;
  }

 private:
  // What request i needs: nothing (its packages are on disk), or a package (wanted).
  void plan(size_t i) {
    CompileRequest& r = requests_[i];
    RequestState& s = state_[i];
    try {
      r.device = normalize_device(r.device);
      if (r.x_values.empty()) throw std::runtime_error("no " + r.x_name + " values to compile");
      s.key = make_key(r);
      s.dir = package_dir(s.key);
      s.xs = distinct_sorted(r.x_values);
      s.point = shared_point(r);
      if (s.xs.front() < 1) throw std::runtime_error(r.x_name + " values must be >= 1");
      for (const auto& [axis, v] : s.point)
        if (v < 1) throw std::runtime_error(axis + " values must be >= 1");
      s.served = cached_packages(s.dir, s.xs, s.point);
      if (!s.served.empty()) {
        s.cached = true;
        return;
      }
      for (int64_t x : s.xs) {
        const std::string failure = PackageMemory::get().failure_of(point_signature(r, x));
        if (!failure.empty()) throw std::runtime_error(failure);
      }
      fs::make_dirs(s.dir);
      const std::string key_file = s.dir + "/key.txt";
      if (!fs::is_regular_file(key_file)) fs::write_file(key_file, s.key.canonical);
      s.wanted = true;
    } catch (const std::exception& e) {
      s.error = first_line(e.what());
    }
  }

  // The wanted requests by the package that serves them, in request order: one per key when
  // the op has shared axes (tables differing in them alone), else one per key and x range.
  std::vector<std::vector<size_t>> groups() const {
    std::vector<std::vector<size_t>> out;
    std::map<std::string, size_t> index;
    for (size_t i = 0; i < state_.size(); ++i) {
      const RequestState& s = state_[i];
      if (!s.wanted) continue;
      std::string id = s.key.key;
      if (s.point.empty()) id += "|" + std::to_string(s.xs.front()) + "-" + std::to_string(s.xs.back());
      auto [it, added] = index.emplace(id, out.size());
      if (added) out.emplace_back();
      out[it->second].push_back(i);
    }
    return out;
  }

  // One export serving `members` (requests of one key): every x value of theirs, each shared
  // axis over their values.
  void queue(const std::vector<size_t>& members) {
    Job job;
    job.members = members;
    SharedRanges ranges;
    for (size_t m : members) {
      const RequestState& s = state_[m];
      job.spec.xs.insert(job.spec.xs.end(), s.xs.begin(), s.xs.end());
      for (const auto& [axis, v] : s.point) job.spec.shared[axis].push_back(v);
    }
    job.spec.xs = distinct_sorted(job.spec.xs);
    for (auto& [axis, values] : job.spec.shared) {
      values = distinct_sorted(values);
      ranges[axis] = range_of(values);
      job.merged = job.merged || values.size() > 1;
    }
    job.spec.lo = job.spec.xs.front();
    job.spec.hi = job.spec.xs.back();
    const std::string& dir = state_[members.front()].dir;
    job.spec.output = dir + "/" + package_name(PackageName{range_of(job.spec.xs), ranges});
    if (job.spec.lo != job.spec.hi && !job.merged)
      job.spec.static_output = dir + "/" + package_name("static-{x}", ranges);
    for (size_t m : members) ++state_[m].pending;
    queue_.push_back(job);
  }

  // Starts queued exports while fewer than jobs_ run.
  void start_ready() {
    while (!queue_.empty() && static_cast<int>(running_.size()) < jobs_) {
      Job job = queue_.front();
      queue_.pop_front();
      if (all_failed(job)) {  // a sibling export already failed: start no more for it
        for (size_t m : job.members)
          if (--state_[m].pending == 0) finish(m);
        continue;
      }
      start(job);
    }
  }

  bool all_failed(const Job& job) const {
    for (size_t m : job.members)
      if (state_[m].error.empty()) return false;
    return true;
  }

  void start(Job job) {
    const std::string base = job.spec.output.substr(0, job.spec.output.size() - 4);  // drop .pt2
    try {
      const RequestState& s = state_[job.members.front()];
      fs::write_file(base + ".request.json", request_json(requests_[job.members.front()], s.key.key, job.spec));
    } catch (const std::exception& e) {
      job_done(job, first_line(e.what()));
      return;
    }
    for (size_t m : job.members) {
      RequestState& s = state_[m];
      if (s.started) continue;
      s.started = true;
      s.first_start = Clock::now();
    }
    const Started st = start_export(base + ".request.json", base + ".log", jobs_);
    if (st.pid < 0) {
      job_done(job, st.error);
      return;
    }
    job.pid = st.pid;
    job.started = Clock::now();
    running_.push_back(job);
  }

  // Collects every exporter that ended or ran past the timeout; true when one did.
  bool reap() {
    bool any = false;
    for (size_t k = 0; k < running_.size();) {
      const Job job = running_[k];
      int status = 0;
      std::string error;
      if (process::poll(job.pid, &status)) {
        error = export_error(status, job.spec.output.substr(0, job.spec.output.size() - 4) + ".log");
      } else if (timeout_ > 0 && std::chrono::duration<double>(Clock::now() - job.started).count() > timeout_) {
        process::kill_group(job.pid);  // the exporter and its compile workers
        error = "export_aoti.py ran past $OPBENCH_EXPORT_TIMEOUT (" + std::to_string(int64_t(timeout_)) +
                " s) and was killed";
      } else {
        ++k;
        continue;
      }
      running_.erase(running_.begin() + static_cast<long>(k));
      any = true;
      job_done(job, error);
    }
    return any;
  }

  void job_done(const Job& job, std::string error) {
    const bool built = error.empty() && fs::is_regular_file(job.spec.output);
    if (!built && error.empty() && !job.spec.static_output.empty()) {
      fall_back_static(job);
    } else if (!built) {
      if (error.empty()) error = "the exporter succeeded but wrote no " + job.spec.output;
      if (job.merged)
        fall_back_per_value(job, error);
      else
        failed(job, error);
    }
    for (size_t m : job.members) {
      RequestState& s = state_[m];
      s.seconds = std::chrono::duration<double>(Clock::now() - s.first_start).count();
      if (built) {
        for (int64_t x : s.xs)
          if (x >= job.spec.lo && x <= job.spec.hi) s.served[x] = job.spec.output;
        s.stages.add(read_stages(job.spec.output));
      }
      if (--s.pending == 0) finish(m);
    }
  }

  void failed(const Job& job, const std::string& error) {
    for (size_t m : job.members) {
      RequestState& s = state_[m];
      if (s.error.empty()) s.error = error;
      s.export_failed = true;
    }
  }

  // The export dynamic over a shared axis failed: one package per value of the shared axes,
  // each serving the requests of that value (as one package per table), with a warning.
  void fall_back_per_value(const Job& job, const std::string& error) {
    std::string axes;
    for (const auto& [axis, values] : job.spec.shared) axes += (axes.empty() ? "" : ", ") + axis;
    std::cerr << "opbench: warning: " << state_[job.members.front()].key.key << ": the package dynamic over "
              << axes << " failed (" << error << "): one package per " << axes << " value instead\n";
    std::map<SharedPoint, std::vector<size_t>> by_value;
    for (size_t m : job.members) by_value[state_[m].point].push_back(m);
    for (const auto& [point, members] : by_value) queue(members);
  }

  // The exporter fell back to a static package at its example x: one static export per x.
  void fall_back_static(const Job& job) {
    SharedRanges ranges;
    for (const auto& [axis, values] : job.spec.shared) ranges[axis] = range_of(values);
    const std::string& dir = state_[job.members.front()].dir;
    for (int64_t x : job.spec.xs) {
      Job one;
      for (size_t m : job.members)
        if (std::binary_search(state_[m].xs.begin(), state_[m].xs.end(), x)) one.members.push_back(m);
      const std::string p = dir + "/" + package_name(PackageName{{x, x}, ranges});
      if (fs::is_regular_file(p)) {
        for (size_t m : one.members) state_[m].served[x] = p;
        continue;
      }
      one.spec = {x, x, {x}, job.spec.shared, p, ""};
      for (size_t m : one.members) ++state_[m].pending;
      queue_.push_back(one);
    }
  }

  // Request i's outcome, the process's memory of its packages, and progress.
  void finish(size_t i) {
    RequestState& s = state_[i];
    if (s.finished) return;
    s.finished = true;
    CompileOutcome& o = outcomes_[i];
    const CompileRequest& r = requests_[i];
    o.key = s.key.key;
    o.error = s.error;
    o.cached = s.error.empty() && s.cached;
    o.seconds = s.seconds;
    o.stages = s.stages.words(s.seconds);
    if (s.error.empty()) {
      std::set<std::string> paths;
      for (const auto& [x, p] : s.served) {
        paths.insert(p);
        PackageMemory::get().served(point_signature(r, x), p);
      }
      o.path = paths.size() == 1 ? *paths.begin() : s.dir;
    } else if (s.export_failed) {
      for (int64_t x : s.xs)
        if (!s.served.count(x)) PackageMemory::get().failed(point_signature(r, x), s.error);
    }
    ++done_;
    if (progress_) progress_(done_, requests_.size(), o);
  }

  std::vector<CompileRequest> requests_;
  const int jobs_;
  const TableProgress& progress_;
  std::vector<RequestState> state_;
  std::vector<CompileOutcome> outcomes_;
  const double timeout_;
  std::deque<Job> queue_;
  std::vector<Job> running_;
  size_t done_ = 0;
};

}  // namespace

std::vector<CompileOutcome> compile_packages(const std::vector<CompileRequest>& requests, int jobs,
                                             const TableProgress& progress) {
  return Build(requests, jobs, progress).run();
}

}  // namespace opbench

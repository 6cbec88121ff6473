// compile_packages (compiled.h) as a few named steps: plan each request (cached, known to
// fail, shared with another, or queued for an exporter), start exporters up to the job count,
// reap the ones that ended (or ran past the timeout), and finish each request once its last
// export is in (a failed dynamic export falling back to one static package per x).
#include <algorithm>
#include <chrono>
#include <climits>
#include <deque>
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


struct Job {
  size_t request = 0;
  ExportJob spec;
  bool dynamic = false;
  pid_t pid = -1;
  Clock::time_point started;
};

struct RequestState {
  PackageKey key;
  std::string dir;
  std::vector<int64_t> xs;                // sorted, unique
  std::map<int64_t, std::string> served;  // x -> package
  std::string error;
  bool export_failed = false;  // an exporter failed (remembered for the process)
  bool cached = false, started = false, finished = false;
  int pending = 0;             // jobs queued or running
  ExportStages stages;         // where its exports' time went
  Clock::time_point first_start;
  double seconds = 0;
  size_t owner = SIZE_MAX;     // another request building the same package
};

class Build {
 public:
  Build(const std::vector<CompileRequest>& requests, int jobs, const TableProgress& progress)
      : requests_(requests), jobs_(std::max(1, jobs)), progress_(progress), state_(requests.size()),
        outcomes_(requests.size()), timeout_(export_timeout()) {}

  std::vector<CompileOutcome> run() {
    for (size_t i = 0; i < requests_.size(); ++i) plan(i);
    for (size_t i = 0; i < requests_.size(); ++i)
      if (state_[i].pending == 0 && state_[i].owner == SIZE_MAX) finish(i);
    while (!queue_.empty() || !running_.empty()) {
      start_ready();
      if (!reap() && !running_.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return outcomes_;
  }

 private:
  // What request i needs: nothing (its packages are on disk), or one export, shared with an
  // earlier request building the same package.
  void plan(size_t i) {
    CompileRequest& r = requests_[i];
    RequestState& s = state_[i];
    try {
      r.device = normalize_device(r.device);
      if (r.x_values.empty()) throw std::runtime_error("no " + r.x_name + " values to compile");
      s.key = make_key(r);
      s.dir = package_dir(s.key);
      s.xs = distinct_sorted(r.x_values);
      if (s.xs.front() < 1) throw std::runtime_error(r.x_name + " values must be >= 1");
      s.served = cached_packages(s.dir, s.xs);
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
      Job job;
      job.request = i;
      job.dynamic = s.xs.front() != s.xs.back();
      job.spec = {s.xs.front(), s.xs.back(), s.xs,
                  s.dir + "/" + (job.dynamic ? dyn_name(s.xs.front(), s.xs.back()) : static_name(s.xs.front())),
                  job.dynamic ? s.dir + "/static-{x}.pt2" : ""};
      auto owner = owner_of_.find(job.spec.output);
      if (owner != owner_of_.end()) {
        s.owner = owner->second;
        return;
      }
      owner_of_[job.spec.output] = i;
      s.pending = 1;
      queue_.push_back(job);
    } catch (const std::exception& e) {
      s.error = first_line(e.what());
    }
  }

  // Starts queued exports while fewer than jobs_ run.
  void start_ready() {
    while (!queue_.empty() && static_cast<int>(running_.size()) < jobs_) {
      Job job = queue_.front();
      queue_.pop_front();
      RequestState& s = state_[job.request];
      if (!s.error.empty()) {  // a sibling export already failed: start no more for it
        if (--s.pending == 0) finish(job.request);
        continue;
      }
      start(job);
    }
  }

  void start(Job job) {
    RequestState& s = state_[job.request];
    const std::string base = job.spec.output.substr(0, job.spec.output.size() - 4);  // drop .pt2
    try {
      fs::write_file(base + ".request.json", request_json(requests_[job.request], s.key.key, job.spec));
    } catch (const std::exception& e) {
      job_done(job, first_line(e.what()));
      return;
    }
    if (!s.started) {
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

  void job_done(const Job& job, const std::string& error) {
    RequestState& s = state_[job.request];
    s.seconds = std::chrono::duration<double>(Clock::now() - s.first_start).count();
    if (!error.empty()) {
      if (s.error.empty()) s.error = error;
      s.export_failed = true;
    } else if (fs::is_regular_file(job.spec.output)) {
      for (int64_t x : job.spec.xs) s.served[x] = job.spec.output;
      s.stages.add(read_stages(job.spec.output));
    } else if (job.dynamic) {
      fall_back_static(job);
    } else if (s.error.empty()) {
      s.error = "the exporter succeeded but wrote no " + job.spec.output;
      s.export_failed = true;
    }
    if (--s.pending == 0) finish(job.request);
  }

  // The exporter fell back to a static package at its example x: one static export per x.
  void fall_back_static(const Job& job) {
    RequestState& s = state_[job.request];
    for (int64_t x : job.spec.xs) {
      const std::string p = s.dir + "/" + static_name(x);
      if (fs::is_regular_file(p)) {
        s.served[x] = p;
        continue;
      }
      Job one;
      one.request = job.request;
      one.spec = {x, x, {x}, p, ""};
      ++s.pending;
      queue_.push_back(one);
    }
  }

  // Request i's outcome, the process's memory of its packages, progress, and the requests
  // that waited on its package.
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
    for (size_t f = 0; f < state_.size(); ++f) {
      if (state_[f].owner != i || state_[f].finished) continue;
      state_[f].served = s.served;
      state_[f].error = s.error;
      state_[f].export_failed = s.export_failed;
      state_[f].seconds = s.seconds;
      state_[f].stages = s.stages;
      finish(f);
    }
  }

  std::vector<CompileRequest> requests_;
  const int jobs_;
  const TableProgress& progress_;
  std::vector<RequestState> state_;
  std::vector<CompileOutcome> outcomes_;
  const double timeout_;
  std::deque<Job> queue_;
  std::vector<Job> running_;
  std::map<std::string, size_t> owner_of_;  // package path -> the request building it
  size_t done_ = 0;
};

}  // namespace

std::vector<CompileOutcome> compile_packages(const std::vector<CompileRequest>& requests, int jobs,
                                             const TableProgress& progress) {
  return Build(requests, jobs, progress).run();
}

}  // namespace opbench

#include "sweep/runner.hpp"

#include <cstdio>
#include <map>
#include <memory>
#include <ostream>
#include <set>

#include "core/error.hpp"
#include "sweep/plan.hpp"
#include "sweep/resume.hpp"
#include "sweep/watch.hpp"
#include "core/suggest.hpp"

namespace opbench {

void filter_providers(Sweep& sw, const Config& cfg, const std::vector<std::string>& names) {
  if (names.empty()) return;
  std::set<std::string> want;
  std::vector<std::string> listed_names;
  for (const auto& p : cfg.providers) listed_names.push_back(p.first);
  for (const auto& n : names) {
    bool listed = false;
    for (const auto& p : cfg.providers) listed = listed || p.first == n;
    if (!listed) throw InputError("--providers", n, "not a provider of " + cfg.path + suggest_names(n, listed_names));
    want.insert(n);
  }
  std::vector<Point> kept;
  for (auto& p : sw.points)
    if (want.count(p.provider)) kept.push_back(p);
  sw.points = std::move(kept);
}

std::vector<std::string> drop_unavailable(Sweep& sw, Executor& ex, std::ostream& log) {
  std::map<std::string, std::string> why;
  for (const auto& p : sw.points)
    if (!why.count(p.provider)) why[p.provider] = ex.unavailable(p.op, p.provider);
  std::vector<Point> kept;
  for (auto& p : sw.points)
    if (why[p.provider].empty()) kept.push_back(p);
  std::vector<std::string> dropped;
  for (const auto& [prov, reason] : why) {
    if (reason.empty()) continue;
    log << "skipping provider " << prov << ": " << reason << "\n";
    dropped.push_back(prov);
  }
  sw.points = std::move(kept);
  return dropped;
}

namespace {

std::string cell_name(const Point& p) { return p.title + " " + p.x_name + "=" + std::to_string(p.x_value); }

// One sweep, step by step (run() reads as the whole loop).
class SweepLoop {
 public:
  SweepLoop(const Config& cfg, const Sweep& sw, Executor& ex, Store& store, const SweepOptions& opt,
            std::ostream& log)
      : cfg_(cfg), sw_(sw), ex_(ex), store_(store), opt_(opt), log_(log), me_(this_process()) {
    for (const auto& t : sw_.tables) section_of_[t.title] = t.section;
  }

  SweepOutcome run() {
    if (stop_requested()) return out_;  // before the run exists: nothing to store
    start_or_resume();
    try {
      watch_ = std::make_unique<Watch>(opt_.heartbeat_s, [this] { heartbeat(); });
      if (opt_.before_measure) opt_.before_measure(run_.id);
      measure(plan_cells(sw_, done_));
      watch_.reset();
      finish();
    } catch (...) {
      watch_.reset();
      abandon();
      throw;
    }
    return out_;
  }

 private:
  // --- start or resume the run, and hold it
  void start_or_resume() {
    if (opt_.resume) resume();
    else start();
    for (const auto& p : sw_.points) out_.skipped += done_.count(p.key());
  }

  // Right after the run is taken: from here on a second signal can mark it interrupted.
  void held() {
    out_.run_id = run_.id;
    if (opt_.started) opt_.started(run_);
  }

  void start() {
    run_.label = opt_.label;
    run_.host = opt_.host;
    run_.git_commit = opt_.git_commit;
    run_.config_path = cfg_.path;
    run_.config_text = cfg_.text;
    run_.config_hash = cfg_.hash;
    run_.op = cfg_.op;
    run_.stat = cfg_.timing.stat;
    set_timing(run_, cfg_.timing);
    const RunShape shape{cfg_.path, opt_.device, sweep_providers(cfg_, sw_), opt_.label, opt_.filter};
    for (const auto& [prov, label] : cfg_.providers)
      for (const auto& used : shape.providers)
        if (used == prov) run_.notation.emplace_back(label, prov);
    run_.env = ex_.environment();
    store_.take_run(me_, [&] {
      store_.begin_run(run_);
      store_.set_run_options(run_.id, shape_options(shape));
      return run_.id;
    });
    held();
  }

  void resume() {
    auto r = store_.run(opt_.resume);
    if (!r) throw InputError("--resume", std::to_string(opt_.resume), "no run with that id in " + store_.path());
    if (r->config_hash != cfg_.hash)
      throw InputError("--resume", std::to_string(opt_.resume), "that run used another config (hash differs)");
    run_ = *r;
    store_.take_run(me_, [&] {
      run_.status = "running";
      store_.update_run(run_);
      return run_.id;
    });
    held();
    for (const auto& k : store_.done_keys(run_.id)) done_.insert(k);
    const Environment env = ex_.environment();
    if (env.gpu != run_.env.gpu)
      log_ << "warning: resuming run " << run_.id << " measured on '" << run_.env.gpu << "' on '" << env.gpu << "'\n";
  }

  // --- measure each cell, store it, report it
  void measure(const std::vector<Cell>& cells) {
    Progress progress(opt_.progress, log_, sw_.points.size(), out_.skipped, "points");
    for (const Cell& cell : cells) {
      if (stop_requested()) break;
      progress.begin(cell_name(sw_.points[cell.points.front()]) + " (" + providers_text(cell) + ")", cell.last + 1);
      const CellResult got = measure_cell(ex_, points_of(cell), cfg_.timing, guard());
      store_cell(cell, got);
      report_cell(cell, got, progress);
    }
    progress.finish();
  }

  bool stop_requested() {
    out_.interrupted = opt_.stop && opt_.stop->load();
    return out_.interrupted;
  }

  std::vector<const Point*> points_of(const Cell& cell) const {
    std::vector<const Point*> out;
    for (size_t i : cell.points) out.push_back(&sw_.points[i]);
    return out;
  }

  static std::string providers_text(const Cell& cell) {
    return std::to_string(cell.points.size()) + (cell.points.size() == 1 ? " provider" : " providers");
  }

  // Measures watched for calls that never return (when the command can go on without them).
  MeasureGuard guard() {
    if (!opt_.on_hung) return {};
    return [this](const Point& p, double seconds, const std::function<void()>& measure) {
      return watch_->within(seconds + opt_.hang_grace_s, measure, [this, &p] {
        Result r;
        r.unit = p.metric() == "memory" ? "MiB" : "ms";
        r.error = hung_error(cfg_.timing, opt_.hang_grace_s);
        store_.add_point(stored_point(p, r));
        log_ << "point failed: " << cell_name(p) << " " << p.provider << ": " << r.error << "\n" << std::flush;
        opt_.on_hung(run_.id);
      });
    };
  }

  void heartbeat() {
    try {
      if (!beat_) beat_ = std::make_unique<Store>(store_.path());
      beat_->heartbeat(run_.id, me_);
    } catch (const std::exception&) {
      beat_.reset();  // a full disk, a busy database: the next beat tries again
    }
  }

  // --- store the cell: its points in one transaction
  StoredPoint stored_point(const Point& p, const Result& r) const {
    StoredPoint sp;
    sp.run_id = run_.id;
    sp.seq = int64_t(&p - sw_.points.data());
    sp.section = section_of_.at(p.title);
    sp.point = p;
    sp.stat = p.metric() == "memory" ? "max" : cfg_.timing.stat;
    sp.result = r;
    sp.value = shown_value(r, sp.stat);
    return sp;
  }

  void store_cell(const Cell& cell, const CellResult& got) {
    std::vector<StoredPoint> batch;
    for (size_t c = 0; c < cell.points.size(); ++c)
      if (!got.abandoned[c]) {
        batch.push_back(stored_point(sw_.points[cell.points[c]], got.results[c]));
        batch.back().state = got.state;
      }
    store_.add_points(batch);
  }

  // --- report progress
  void report_cell(const Cell& cell, const CellResult& got, Progress& progress) {
    for (size_t c = 0; c < cell.points.size(); ++c) {
      const Point& p = sw_.points[cell.points[c]];
      const Result& r = got.results[c];
      ++out_.measured;
      if (!r.ok()) {
        ++out_.failed;
        if (!got.abandoned[c]) progress.note("point failed: " + cell_name(p) + " " + p.provider + ": " + r.error);
      } else if (r.check_failed) {
        ++out_.check_failed;
        progress.note("check failed: " + cell_name(p) + " " + p.provider + ": relative error " +
                      std::to_string(r.rel_err) + " against torch");
      }
    }
    char took[64];
    std::snprintf(took, sizeof took, ": %zu point%s in %.1fs", cell.points.size(), cell.points.size() == 1 ? "" : "s",
                  progress.step_seconds());
    progress.end(cell_name(sw_.points[cell.points.front()]) + took, cell.last + 1, cell.points.size());
  }

  // --- finish: the run's status, and let go of it
  void finish() { store_.end_run(run_.id, out_.interrupted ? "interrupted" : "done", me_); }

  // A failure (a full disk, a database error): the run is left interrupted if that can still
  // be written; if not, its lock stays behind and the run reads as abandoned.
  void abandon() {
    try {
      store_.end_run(run_.id, "interrupted", me_);
    } catch (const std::exception&) {
    }
  }

  const Config& cfg_;
  const Sweep& sw_;
  Executor& ex_;
  Store& store_;
  const SweepOptions& opt_;
  std::ostream& log_;
  const ProcessIdentity me_;
  std::map<std::string, std::string> section_of_;
  RunInfo run_;
  std::set<std::string> done_;
  SweepOutcome out_;
  std::unique_ptr<Watch> watch_;
  std::unique_ptr<Store> beat_;
};

}  // namespace

SweepOutcome run_sweep(const Config& cfg, Sweep sw, Executor& ex, Store& store, const SweepOptions& opt,
                       std::ostream& log) {
  return SweepLoop(cfg, sw, ex, store, opt, log).run();
}

}  // namespace opbench

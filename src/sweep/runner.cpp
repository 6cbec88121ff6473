#include "sweep/runner.hpp"

#include <cstdio>
#include <map>
#include <memory>
#include <ostream>
#include <set>

#include "core/error.hpp"
#include "record/run_check.hpp"
#include "record/check_note.hpp"
#include "measure/stages.hpp"
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
  return drop_providers(sw, why, log);
}

std::vector<std::string> drop_providers(Sweep& sw, const std::map<std::string, std::string>& why, std::ostream& log) {
  auto dropped_reason = [&](const std::string& provider) {
    auto it = why.find(provider);
    return it == why.end() ? std::string() : it->second;
  };
  std::vector<Point> kept;
  std::set<std::string> gone;
  for (auto& p : sw.points) {
    if (dropped_reason(p.provider).empty()) kept.push_back(p);
    else gone.insert(p.provider);
  }
  std::vector<std::string> dropped;
  for (const auto& prov : gone) {
    log << "skipping provider " << prov << ": " << dropped_reason(prov) << "\n";
    dropped.push_back(prov);
  }
  sw.points = std::move(kept);
  return dropped;
}

namespace {

std::string cell_name(const Point& p) { return p.title + " " + p.x_name + "=" + std::to_string(p.x_value); }

// One sweep, step by step (run() reads as the whole loop). A run per side of the measurer
// (one, or a paired comparison's two); run_ is the first side's.
class SweepLoop {
 public:
  SweepLoop(const Config& cfg, const Sweep& sw, CellMeasurer& measurer, Store& store, const SweepOptions& opt,
            std::ostream& log)
      : cfg_(cfg), sw_(sw), measurer_(measurer), store_(store), opt_(opt), log_(log), me_(this_process()) {
    for (const auto& t : sw_.tables) section_of_[t.title] = t.section;
    runs_.resize(measurer_.sides());
  }

  SweepOutcome run() {
    if (interrupted()) {  // before the run exists: nothing to store
      out_.interrupted = true;
      return out_;
    }
    // From here on what no stage claims is the sweep's own work (start-up ends here).
    StageLedger::process().set_base(Stage::other);
    start_or_resume();
    try {
      watch_ = std::make_unique<Watch>(opt_.heartbeat_s, [this] { heartbeat(); });
      record_compiles();
      measure(drop_done(sw_, planned_, done_));
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
  RunInfo& run_() { return runs_.front(); }
  bool paired() const { return runs_.size() > 1; }

  // --- start or resume the run, and hold it; plan this shard's cells
  void start_or_resume() {
    if (opt_.resume) resume();
    else start();
    planned_ = shard_cells(sw_, cfg_.timing, shard_of(opt_.shape));
    for (const auto& c : planned_)
      for (size_t i : c.points) {
        ++total_;
        out_.skipped += done_.count(sw_.points[i].key());
      }
    total_ *= runs_.size();
    position_ = out_.skipped;
  }

  // Right after the runs are taken: from here on a second signal can mark them interrupted.
  void held() {
    out_.run_id = run_().id;
    for (const auto& r : runs_) {
      out_.run_ids.push_back(r.id);
      if (opt_.started) opt_.started(r);
    }
  }

  RunOptions run_options() const {
    RunOptions options = opt_.shape;
    options.config = cfg_.path;
    if (!options.devices.empty()) options.device = "";
    options.providers = sweep_providers(cfg_, sw_);
    return options;
  }

  // Side `side`'s run as it begins: the config, how it is timed, its environment and devices.
  RunInfo new_run(size_t side, const RunOptions& options) {
    RunInfo r;
    r.label = paired() ? opt_.sides.at(side).label : opt_.shape.label;
    r.host = opt_.host;
    r.git_commit = paired() ? opt_.sides.at(side).git_commit : opt_.git_commit;
    r.config_path = cfg_.path;
    r.config_text = cfg_.text;
    r.config_hash = cfg_.hash;
    r.op = cfg_.op;
    r.stat = cfg_.timing.stat;
    set_timing(r, cfg_.timing);
    for (const auto& [prov, label] : cfg_.providers)
      for (const auto& used : options.providers)
        if (used == prov) r.notation.emplace_back(label, prov);
    r.env = measurer_.side_environment(side);
    r.devices = measurer_.side_devices(side);
    if (paired()) r.uuid = random_uuid();
    if (const Problem p = run_problem(r)) throw InputError(cfg_.path, p.field, p.why);
    return r;
  }

  // A paired run's options say which side it is and which run it is paired with.
  std::vector<std::pair<std::string, std::string>> side_rows(const RunOptions& options, size_t side) const {
    std::vector<std::pair<std::string, std::string>> rows = option_rows(options);
    if (!paired()) return rows;
    RunOptions own = options;
    own.label = runs_[side].label;
    rows = option_rows(own);
    rows.emplace_back(kSideOption, side == 0 ? "base" : "head");
    rows.emplace_back(kPairOption, runs_[1 - side].uuid);
    return rows;
  }

  void start() {
    const RunOptions options = this->run_options();
    for (size_t s = 0; s < runs_.size(); ++s) runs_[s] = new_run(s, options);
    StageScope storing(Stage::store);
    for (size_t s = 0; s < runs_.size(); ++s)
      store_.take_run(me_, [&] {
        store_.begin_run(runs_[s]);
        store_.set_run_options(runs_[s].id, side_rows(options, s));
        return runs_[s].id;
      });
    held();
  }

  void resume() {
    if (paired()) throw InputError("--resume", std::to_string(opt_.resume), "a paired comparison cannot be resumed");
    auto r = store_.run(opt_.resume);
    if (!r) throw InputError("--resume", std::to_string(opt_.resume), "no run with that id in " + store_.path());
    if (r->config_hash != cfg_.hash)
      throw InputError("--resume", std::to_string(opt_.resume), "that run used another config (hash differs)");
    run_() = *r;
    const Environment env = measurer_.environment();
    std::vector<RunDevice> devices = measurer_.devices();
    if (env.gpu != run_().env.gpu || opt_.host != run_().host) devices = mixed_devices(env, devices);
    store_.take_run(me_, [&] {
      run_().status = "running";
      store_.update_run(run_());
      store_.add_run_devices(run_().id, devices);
      return run_().id;
    });
    held();
    for (const auto& k : store_.done_keys(run_().id)) done_.insert(k);
  }

  // A resume on another GPU model or host: refused unless --allow-mixed, which records the
  // devices as a run on several does (the run's own, then this machine's, named DEVICE@HOST,
  // or DEVICE#N on the same host, so that the points tell them apart).
  std::vector<RunDevice> mixed_devices(const Environment& env, const std::vector<RunDevice>& here) {
    const RunInfo& run = run_();
    const std::string id = std::to_string(run.id);
    auto machine = [](const std::string& gpu, const std::string& host) {
      return "'" + (gpu.empty() ? std::string("an unknown device") : gpu) + "' on host '" + host + "'";
    };
    if (!opt_.allow_mixed)
      throw InputError("--resume", id,
                       "run " + id + " was measured on " + machine(run.env.gpu, run.host) + ", this is " +
                           machine(env.gpu, opt_.host) +
                           ": a resumed run stays on its machine (--allow-mixed to add points measured here)");
    std::vector<RunDevice> out = run.devices;
    if (out.empty()) out.push_back(run_device(run.env.device, run.env.gpu, run.env.peak_gbps, run.env.identity));
    if (opt_.host != run.host) suffix_ = "@" + opt_.host;
    else suffix_ = "#" + std::to_string(out.size() + 1);  // the same host, another model: cuda:0#2
    if (here.empty()) out.push_back(run_device(device_name(opt_.shape.device), env.gpu, env.peak_gbps, env.identity));
    for (const auto& d : here) out.push_back(run_device(device_name(d.device), d.gpu, d.peak_gbps, d.identity));
    return out;
  }

  // The name a device's points record: this machine's devices carry its host when the run was
  // begun on another.
  std::string device_name(const std::string& device) const { return device + suffix_; }

  void record_compiles() {
    for (CompileRecord c : opt_.compiles) {
      c.run_id = run_().id;
      store_.add_compile(c);
    }
  }

  // --- have the cells measured; store and report each as it comes back
  void measure(const std::vector<Cell>& cells) {
    Progress progress(opt_.progress, log_, total_, out_.skipped, "points");
    const bool several = measurer_.devices().size() > 1;
    CellHooks hooks;
    hooks.interrupted = [this] { return interrupted(); };
    hooks.begin = [&](const CellPoints& points, const std::string& device) {
      progress.begin(cell_name(*points.front()) + " (" + points_text(points.size(), "provider") +
                         (paired() ? ", both sides" : "") + (several ? " on " + device : "") + ")",
                     position_ + points.size() * runs_.size());
    };
    hooks.done = [&](const CellPoints& points, const CellResult& got, const std::string& device, double seconds) {
      store_cell(points, got, device);
      report_cell(points, got, progress, where_text(got.side, several ? device : ""), seconds);
    };
    hooks.guard = guard();
    hooks.expected_seconds = expected_seconds();
    std::vector<CellPoints> jobs;
    for (const Cell& cell : cells) jobs.push_back(points_of(cell));
    measurer_.measure(jobs, hooks);
    progress.finish();
  }

  // " (head) on cuda:1": which side and device a cell's line speaks of.
  std::string where_text(size_t side, const std::string& device) const {
    std::string out = paired() ? std::string(side == 0 ? " (base)" : " (head)") : "";
    return out + (device.empty() ? "" : " on " + device);
  }

  bool interrupted() const { return opt_.interrupt && opt_.interrupt->load(); }

  // What each cell is expected to take, from the calls' newest medians on this GPU model in the
  // database, else their minimal bytes at the measured peak (for every side).
  std::function<double(const CellPoints&)> expected_seconds() {
    const Environment env = measurer_.environment();
    auto measured = std::make_shared<std::map<std::string, double>>(store_.latest_medians(cfg_.op, env.gpu));
    const double peak = env.peak_gbps;
    const double sides = double(runs_.size());
    return [this, measured, peak, sides](const CellPoints& points) {
      return sides * expected_cell_seconds(points, cfg_.timing,
                                           [&](const Point& p) { return expected_call_ms(p, *measured, peak); });
    };
  }

  std::vector<const Point*> points_of(const Cell& cell) const {
    std::vector<const Point*> out;
    for (size_t i : cell.points) out.push_back(&sw_.points[i]);
    return out;
  }

  static std::string points_text(size_t n, const std::string& what) {
    return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
  }

  // Measures watched for calls that never return (when the command can go on without them).
  MeasureGuard guard() {
    if (!opt_.on_hung) return {};
    return [this](const Point& p, double seconds, const std::function<void()>& measure) {
      return watch_->within(seconds + opt_.hang_grace_s, measure, [this, &p] {
        const Result r = failed_result(p, hung_error(cfg_.timing, opt_.hang_grace_s));
        store_.add_point(stored_point(p, r, device_name(opt_.shape.device), 0));
        log_ << "point failed: " << cell_name(p) << " " << p.provider << ": " << r.error << "\n" << std::flush;
        opt_.on_hung(run_().id);
      });
    };
  }

  void heartbeat() {
    try {
      if (!beat_) beat_ = std::make_unique<Store>(store_.path());
      for (const auto& r : runs_) beat_->heartbeat(r.id, me_);
    } catch (const std::exception&) {
      beat_.reset();  // a full disk, a busy database: the next beat tries again
    }
  }

  // --- store the cell: its points in one transaction
  StoredPoint stored_point(const Point& p, const Result& r, const std::string& device, size_t side) const {
    StoredPoint sp;
    sp.run_id = runs_.at(side).id;
    sp.seq = int64_t(&p - sw_.points.data());
    sp.section = section_of_.at(p.title);
    sp.point = p;
    sp.stat = p.metric() == "memory" ? "max" : cfg_.timing.stat;
    sp.result = r;
    sp.value = shown_value(r, sp.stat);
    sp.device = device;
    return sp;
  }

  // A point whose process ended while measuring it (lost) is not stored: --resume measures it.
  // One the store must not take (record/run_check.hpp: an impossible number) is stored failed.
  void store_cell(const CellPoints& points, const CellResult& got, const std::string& device) {
    StageScope storing(Stage::store);
    std::vector<StoredPoint> batch;
    for (size_t c = 0; c < points.size(); ++c)
      if (!got.abandoned[c] && !got.results[c].lost) {
        batch.push_back(stored_point(*points[c], got.results[c], device_name(device), got.side));
        batch.back().state = got.state;
        if (const Problem p = point_problem(batch.back(), "sweep")) {
          batch.back().result = failed_result(*points[c], "measured an impossible result: " + p.field + " " + p.why);
          batch.back().value = -1;
        }
      }
    store_.add_points(batch);
  }

  // --- report progress
  void report_cell(const CellPoints& points, const CellResult& got, Progress& progress, const std::string& where,
                   double seconds) {
    for (size_t c = 0; c < points.size(); ++c) {
      const Point& p = *points[c];
      const Result& r = got.results[c];
      if (r.lost) {
        ++out_.lost;
        progress.note("point lost: " + cell_name(p) + " " + p.provider + ": " + r.error + " (not stored)");
        continue;
      }
      ++out_.measured;
      if (!r.ok()) {
        ++out_.failed;
        if (!got.abandoned[c]) progress.note("point failed: " + cell_name(p) + " " + p.provider + ": " + r.error);
      } else if (r.check_failed) {
        ++out_.check_failed;
        progress.note("check failed: " + cell_name(p) + " " + p.provider + ": " +
                      check_note(r, p.params.s_or("dtype", "")));
      }
    }
    position_ += points.size();
    char took[64];
    std::snprintf(took, sizeof took, " in %.1fs", seconds);
    progress.end(cell_name(*points.front()) + ": " + points_text(points.size(), "point") + where + took, position_,
                 points.size());
  }

  // --- finish: the run's status, and let go of it. Interrupted: a stop left points unmeasured.
  // A point lost (its process ended while measuring it) leaves the run interrupted too.
  void finish() {
    out_.interrupted = interrupted() && out_.skipped + out_.measured < total_;
    StageScope storing(Stage::store);
    for (size_t s = 0; s < runs_.size(); ++s) store_.add_device_shares(runs_[s].id, measurer_.side_devices(s));
    record_stages();
    for (const auto& r : runs_) store_.end_run(r.id, out_.interrupted || out_.lost ? "interrupted" : "done", me_);
  }

  // A failure (a full disk, a database error): the run is left interrupted if that can still
  // be written; if not, its lock stays behind and the run reads as abandoned.
  void abandon() {
    try {
      record_stages();
      for (const auto& r : runs_)
        if (r.id) store_.end_run(r.id, "interrupted", me_);
    } catch (const std::exception&) {
    }
  }

  // Where this process's time went since the last run it recorded (or its start), added to
  // the run's (a resumed run's processes add up); the two runs of a paired comparison took
  // that time together, and each records it.
  void record_stages() {
    const StageTimes took = StageLedger::process().take();
    for (const auto& r : runs_)
      if (r.id) store_.add_run_stages(r.id, took);
  }

  const Config& cfg_;
  const Sweep& sw_;
  CellMeasurer& measurer_;
  Store& store_;
  const SweepOptions& opt_;
  std::ostream& log_;
  const ProcessIdentity me_;
  std::map<std::string, std::string> section_of_;
  std::vector<RunInfo> runs_;  // a run per side
  std::set<std::string> done_;
  std::vector<Cell> planned_;  // this shard's cells, stored points included
  size_t total_ = 0;           // the points of planned_
  size_t position_ = 0;        // points stored before this process, and since
  SweepOutcome out_;
  std::unique_ptr<Watch> watch_;
  std::unique_ptr<Store> beat_;
  std::string suffix_;  // "@HOST" on the devices of a resume on another host (--allow-mixed)
};

}  // namespace

SweepOutcome run_sweep(const Config& cfg, Sweep sw, Executor& ex, Store& store, const SweepOptions& opt,
                       std::ostream& log) {
  Config resolved = cfg;
  resolve_device_defaults(resolved.timing, opt.shape.device);
  resolved.timing.processes = 1;  // every round on `ex`
  LocalMeasurer local(ex, opt.shape.device, resolved.timing);
  return SweepLoop(resolved, sw, local, store, opt, log).run();
}

SweepOutcome run_sweep(const Config& cfg, Sweep sw, CellMeasurer& measurer, Store& store, const SweepOptions& opt,
                       std::ostream& log) {
  return SweepLoop(cfg, sw, measurer, store, opt, log).run();
}

}  // namespace opbench

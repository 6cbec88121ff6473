#include "sweep/measure_worker.hpp"

#include <poll.h>

#include <chrono>
#include <cmath>

#include "core/error.hpp"
#include "measure/stages.hpp"
#include "sweep/cell.hpp"

namespace opbench {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

MeasureWorker::MeasureWorker(MeasureWorkerOptions opt) : opt_(std::move(opt)) {}

MeasureWorker::~MeasureWorker() { process::close_piped(proc_, 2); }

void MeasureWorker::spawn() {
  pending_new_round_ = false;
  proc_ = process::spawn_piped(opt_.command, opt_.env, opt_.cpus);
  if (proc_.pid < 0) throw RuntimeFailure("cannot start " + opt_.name + ": " + proc_.error);
  pids_.push_back(proc_.pid);
  in_ = std::make_unique<LineReader>(proc_.from);
  // One that ends before reading it: its end is what await_hello reports.
  if (opt_.setup.protocol >= 2) write_all(proc_.to, configs_line(opt_.setup.configs));
}

std::string MeasureWorker::end_of() {
  const std::string why = process::exit_reason(process::close_piped(proc_, 10));
  return why.empty() ? "exited" : why;
}

// Waits up to `timeout_s` for a whole line: kLine, kEnded (its output closed) or kSilent.
MeasureWorker::Wait MeasureWorker::wait_line(double timeout_s, std::string* line) {
  const auto t0 = Clock::now();
  pollfd fd{proc_.from, POLLIN, 0};
  while (!in_->next(*line)) {
    const double left = timeout_s - seconds_since(t0);
    if (left <= 0) return kSilent;
    const int ms = int(std::min(left * 1000 + 1, 1000.0));
    if (::poll(&fd, 1, ms) > 0 && !in_->fill() && !in_->next(*line)) return kEnded;
  }
  return kLine;
}

void MeasureWorker::launch() {
  StageScope starting(Stage::workers);
  spawn();
}

void MeasureWorker::await_hello() {
  StageScope starting(Stage::workers);
  std::string line;
  const Wait got = wait_line(opt_.start_timeout_s, &line);
  if (got == kEnded) throw RuntimeFailure(opt_.name + " ended before it was ready (" + end_of() + ")");
  if (got == kSilent) {
    process::close_piped(proc_, 0);
    throw RuntimeFailure(opt_.name + " did not say hello within " + std::to_string(int(opt_.start_timeout_s)) + " s");
  }
  try {
    hello_ = accept_hello(line, opt_.name, opt_.name, opt_.setup);
  } catch (...) {
    process::close_piped(proc_, 0);  // one that answered wrongly is not asked
    throw;
  }
}

std::vector<CalibrationSample> MeasureWorker::take_calibration() {
  std::vector<CalibrationSample> out;
  out.swap(calibration_);
  return out;
}

// Sends the measure and waits for its answer: kLine, kEnded (the worker ended first) or
// kSilent (past `timeout_s`).
MeasureWorker::Wait MeasureWorker::ask(const MeasureRequest& m, double timeout_s, std::string* line, double* waited) {
  line->clear();
  const auto asked = Clock::now();
  Wait got = kEnded;
  {
    StageScope waiting(Stage::other);  // then spread over the stages the worker reports
    if (write_all(proc_.to, measure_line(m, opt_.setup.protocol))) got = wait_line(timeout_s, line);
  }
  *waited = seconds_since(asked);
  return got;
}

Result MeasureWorker::reply_result(const std::string& line, double waited) {
  const WorkerReply r = read_reply(line, opt_.name);
  if (r.kind != WorkerReply::cell || r.results.size() != 1)
    throw RuntimeFailure(opt_.name + " did not answer with the point's result" + (r.error.empty() ? "" : ": " + r.error));
  last_state_ = r.state;
  calibration_.insert(calibration_.end(), r.calibration.begin(), r.calibration.end());
  StageLedger::process().attribute(Stage::other, waited, r.stages);
  return r.results.front();
}

Result MeasureWorker::measure(const Point& point, const Timing& timing, size_t config, bool new_round) {
  std::string ends;
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      if (proc_.pid < 0) start();  // the one before it ended: a new one in its place
    } catch (const std::exception& e) {
      process::close_piped(proc_, 0);
      ends += (ends.empty() ? "" : "; ") + std::string(e.what());
      continue;
    }
    const MeasureRequest m{point.key(),       new_round || pending_new_round_, timing.warmup_ms, timing.rep_ms,
                           timing.max_point_s, timing.estimate_ms, timing.check, config, point};
    pending_new_round_ = false;
    std::string line;
    double waited = 0;
    const Wait got = ask(m, timing.max_point_s + opt_.grace_s, &line, &waited);
    if (got == kLine) return reply_result(line, waited);
    if (got == kSilent) {  // silent past the budget: a call that never returned
      process::close_piped(proc_, 0);
      pending_new_round_ = true;
      return failed_result(point, hung_error(timing, opt_.grace_s));
    }
    ends += (ends.empty() ? "" : "; ") + end_of();
    pending_new_round_ = true;
  }
  Result lost = failed_result(point, opt_.name + " ended while measuring this point, twice (" + ends + ")");
  lost.lost = true;
  return lost;
}

std::string WorkerExecutor::unavailable(const std::string&, const std::string& provider) {
  const auto& configs = workers_.front()->hello().configs;
  if (config_ >= configs.size()) return "";
  for (const auto& [name, why] : configs[config_].unavailable)
    if (name == provider) return why;
  return "";
}

Result WorkerExecutor::measure(const Point& point, const Timing& timing) {
  const bool fresh = fresh_[current_];
  fresh_[current_] = false;
  return workers_[current_]->measure(point, timing, config_, fresh);
}

std::vector<CalibrationSample> WorkerExecutor::take_calibration() {
  std::vector<CalibrationSample> out;
  for (MeasureWorker* w : workers_) {
    const std::vector<CalibrationSample> more = w->take_calibration();
    out.insert(out.end(), more.begin(), more.end());
  }
  return out;
}

}  // namespace opbench

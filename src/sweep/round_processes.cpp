#include "sweep/round_processes.hpp"

#include <poll.h>
#include <signal.h>

#include <chrono>

#include "core/error.hpp"
#include "core/lines.hpp"
#include "core/process.hpp"
#include "measure/stages.hpp"
#include "sweep/cell.hpp"
#include "sweep/worker_protocol.hpp"

namespace opbench {

struct RoundProcesses::Worker {
  size_t index = 0;
  process::Piped proc;
  std::unique_ptr<LineReader> in;
  bool new_round = false;  // place memory anew before its next measure
  std::string name() const { return "round process " + std::to_string(index); }
  ~Worker() { process::close_piped(proc, 2); }
};

RoundProcesses::RoundProcesses(Executor& local, RoundProcessOptions opt) : local_(local), opt_(std::move(opt)) {
  old_sigpipe_ = ::signal(SIGPIPE, SIG_IGN);  // a worker gone: the write fails instead
  for (int i = 1; i < opt_.processes; ++i) {
    workers_.push_back(std::make_unique<Worker>());
    workers_.back()->index = size_t(i);
  }
  try {
    StageScope starting(Stage::workers);
    for (auto& w : workers_) spawn(*w);  // they open the device side by side
    for (auto& w : workers_) await_hello(*w);
  } catch (...) {
    workers_.clear();  // each ends its process
    ::signal(SIGPIPE, old_sigpipe_);
    throw;
  }
}

RoundProcesses::~RoundProcesses() {
  workers_.clear();
  ::signal(SIGPIPE, old_sigpipe_);
}

std::vector<int> RoundProcesses::pids() const { return pids_; }

void RoundProcesses::spawn(Worker& w) {
  w.proc = process::spawn_piped(opt_.command, opt_.env);
  if (w.proc.pid < 0) throw RuntimeFailure("cannot start " + w.name() + ": " + w.proc.error);
  pids_.push_back(w.proc.pid);
  w.in = std::make_unique<LineReader>(w.proc.from);
  w.new_round = false;
}

std::string RoundProcesses::end_of(Worker& w) {
  const std::string why = process::exit_reason(process::close_piped(w.proc, 10));
  return why.empty() ? "exited" : why;
}

void RoundProcesses::await_hello(Worker& w) {
  std::string line;
  pollfd fd{w.proc.from, POLLIN, 0};
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(opt_.start_timeout_s);
  while (!w.in->next(line)) {
    if (std::chrono::steady_clock::now() > until) {
      process::close_piped(w.proc, 0);
      throw RuntimeFailure(w.name() + " did not say hello within " + std::to_string(int(opt_.start_timeout_s)) + " s");
    }
    if (::poll(&fd, 1, 100) > 0 && !w.in->fill() && !w.in->next(line))
      throw RuntimeFailure(w.name() + " ended before it was ready (" + end_of(w) + ")");
  }
  const WorkerHello h = accept_hello(line, w.name(), w.name(), opt_.config_hashes);
  for (size_t c = 0; c < h.configs.size() && c < opt_.ops.size(); ++c)
    for (const auto& [provider, why] : h.configs[c].unavailable)
      if (local_.unavailable(opt_.ops[c], provider).empty())
        throw RuntimeFailure(w.name() + " cannot run " + provider + ", which this process runs: " + why);
}

void RoundProcesses::set_round(int round) { current_ = size_t(round) % (workers_.size() + 1); }

void RoundProcesses::new_round() {
  if (current_ == 0) local_.new_round();
  else workers_[current_ - 1]->new_round = true;
}

DeviceState RoundProcesses::device_state() { return current_ == 0 ? local_.device_state() : last_state_; }

Result RoundProcesses::measure(const Point& point, const Timing& timing) {
  if (current_ == 0) return local_.measure(point, timing);
  return measure_remote(*workers_[current_ - 1], point, timing);
}

Result RoundProcesses::measure_remote(Worker& w, const Point& point, const Timing& timing) {
  // A worker that ends (a crash, a kill), before it is ready or while it measures: a new one
  // measures the round again; one that ends too loses the point (not stored: --resume
  // measures it). The point did not fail on its own.
  std::string ends;
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      if (w.proc.pid < 0) {
        StageScope starting(Stage::workers);
        spawn(w);  // the one before it ended: a new one in its place
        await_hello(w);
      }
    } catch (const RuntimeFailure& e) {
      process::close_piped(w.proc, 0);  // one that answered wrongly is not asked
      ends += (ends.empty() ? "" : "; ") + std::string(e.what());
      continue;
    }
    std::string line;
    double waited = 0;
    if (ask(w, point, timing, &line, &waited)) return reply_result(w, line, waited);
    ends += (ends.empty() ? "" : "; ") + end_of(w);
  }
  Result lost = failed_result(point, w.name() + " ended while measuring this point, twice (" + ends + ")");
  lost.lost = true;
  return lost;
}

// Asks `w` to measure `point`; the reply line (empty when the worker ended) and the seconds waited.
bool RoundProcesses::ask(Worker& w, const Point& point, const Timing& timing, std::string* line, double* waited) {
  const MeasureRequest m{point.key(),        w.new_round,          timing.warmup_ms, timing.rep_ms,
                         timing.max_point_s, timing.estimate_ms, config_};
  w.new_round = false;
  line->clear();
  const auto asked = std::chrono::steady_clock::now();
  {
    StageScope waiting(Stage::other);  // then spread over the stages the worker reports
    if (write_all(w.proc.to, measure_line(m)))
      while (!w.in->next(*line))
        if (!w.in->fill()) break;
  }
  *waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count();
  return !line->empty();
}

Result RoundProcesses::reply_result(Worker& w, const std::string& line, double waited) {
  const WorkerReply r = read_reply(line, w.name());
  if (r.kind != WorkerReply::cell || r.results.size() != 1)
    throw RuntimeFailure(w.name() + " did not answer with the point's result" + (r.error.empty() ? "" : ": " + r.error));
  last_state_ = r.state;
  StageLedger::process().attribute(Stage::other, waited, r.stages);
  return r.results.front();
}

}  // namespace opbench

#include "sweep/round_processes.hpp"

#include <signal.h>

#include "core/error.hpp"
#include "measure/round_process.hpp"
#include "measure/stages.hpp"

namespace opbench {

RoundProcesses::RoundProcesses(Executor& local, RoundProcessOptions opt) : local_(local), opt_(std::move(opt)) {
  old_sigpipe_ = ::signal(SIGPIPE, SIG_IGN);  // a worker gone: the write fails instead
  for (int i = 1; i < opt_.processes; ++i) {
    MeasureWorkerOptions w;
    w.name = "round process " + std::to_string(i);
    w.command = opt_.command;
    w.env = opt_.env;
    w.env.push_back(std::string(kRoundProcessVariable) + "=" + std::to_string(i));
    w.setup = opt_.setup;
    w.start_timeout_s = opt_.start_timeout_s;
    w.grace_s = 1e9;  // a call that never returns: the sweep's own guard deals with it
    workers_.push_back(std::make_unique<MeasureWorker>(w));
  }
  new_round_.assign(workers_.size(), false);
  try {
    for (auto& w : workers_) {
      w->start();
      check_providers(*w);
    }
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

// A worker that cannot run a provider this process runs would fail its rounds.
void RoundProcesses::check_providers(const MeasureWorker& w) const {
  const auto& configs = w.hello().configs;
  for (size_t c = 0; c < configs.size() && c < opt_.ops.size(); ++c)
    for (const auto& [provider, why] : configs[c].unavailable)
      if (local_.unavailable(opt_.ops[c], provider).empty())
        throw RuntimeFailure(w.name() + " cannot run " + provider + ", which this process runs: " + why);
}

std::vector<int> RoundProcesses::pids() const {
  std::vector<int> out;
  for (const auto& w : workers_)
    for (pid_t p : w->pids()) out.push_back(int(p));
  return out;
}

void RoundProcesses::set_round(int round) { current_ = size_t(round) % (workers_.size() + 1); }

void RoundProcesses::new_round() {
  if (current_ == 0) local_.new_round();
  else new_round_[current_ - 1] = true;
}

DeviceState RoundProcesses::device_state() {
  return current_ == 0 ? local_.device_state() : workers_[current_ - 1]->last_state();
}

std::vector<CalibrationSample> RoundProcesses::take_calibration() {
  std::vector<CalibrationSample> out = local_.take_calibration();
  for (auto& w : workers_) {
    const std::vector<CalibrationSample> more = w->take_calibration();
    out.insert(out.end(), more.begin(), more.end());
  }
  return out;
}

Result RoundProcesses::measure(const Point& point, const Timing& timing) {
  if (current_ == 0) return local_.measure(point, timing);
  const size_t i = current_ - 1;
  const bool fresh = new_round_[i];
  new_round_[i] = false;
  return workers_[i]->measure(point, timing, config_, fresh);
}

}  // namespace opbench

#include "sweep/workers.hpp"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <numeric>

#include "core/error.hpp"
#include "measure/stages.hpp"

namespace opbench {

namespace {

using Clock = std::chrono::steady_clock;

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

}  // namespace

WorkerPool::WorkerPool(PoolOptions opt) : opt_(std::move(opt)) {
  old_sigpipe_ = ::signal(SIGPIPE, SIG_IGN);  // a worker gone: its write fails instead
}

WorkerPool::~WorkerPool() {
  for (auto& w : workers_)
    if (w->state != Worker::ended && w->proc.to >= 0) {
      ::close(w->proc.to);  // the input ends: an idle worker ends
      w->proc.to = -1;
    }
  for (auto& w : workers_)
    if (w->state != Worker::ended) end_worker(*w);
  ::signal(SIGPIPE, old_sigpipe_);
}

std::vector<pid_t> WorkerPool::pids() const { return pids_; }

std::vector<size_t> handout_order(const std::vector<double>& expected_seconds) {
  std::vector<size_t> order(expected_seconds.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return expected_seconds[a] > expected_seconds[b]; });
  return order;
}

void WorkerPool::spawn(const WorkerSlot& slot) {
  auto w = std::make_unique<Worker>();
  w->slot = slot;
  const std::vector<int> cpus = opt_.cpus ? opt_.cpus(slot) : std::vector<int>();
  w->pinned = !cpus.empty();
  w->proc = process::spawn_piped(opt_.command(slot), opt_.env, cpus);
  if (w->proc.pid < 0) throw RuntimeFailure("cannot start the worker for " + slot.name + ": " + w->proc.error);
  w->in = std::make_unique<LineReader>(w->proc.from);
  // One that ends before reading it: its end is read next.
  if (opt_.setup.protocol >= 2) write_all(w->proc.to, configs_line(opt_.setup.configs));
  w->since = Clock::now();
  w->deadline = w->since + seconds(opt_.start_timeout_s);
  pids_.push_back(w->proc.pid);
  workers_.push_back(std::move(w));
}

bool WorkerPool::start(const std::function<bool()>& interrupted) {
  StageScope starting(Stage::workers);
  const auto t0 = Clock::now();
  for (const auto& slot : opt_.slots) spawn(slot);
  std::deque<Job> none;
  const CellHooks no_hooks;
  while (any(Worker::starting)) {
    if (interrupted && interrupted()) return false;
    wait_and_read(none, no_hooks, false);
    if (interrupted && interrupted()) return false;  // a signal to the group may end a worker not yet ready
    for (const auto& w : workers_)
      if (w->state == Worker::ended && !w->hello)
        throw RuntimeFailure("the worker for " + w->slot.name + " ended before it was ready (" + w->end + ")");
  }
  check_one_model(devices(), opt_.allow_mixed, "--devices");
  start_s_ = std::chrono::duration<double>(Clock::now() - t0).count();
  return true;
}

bool WorkerPool::any(Worker::State s) const {
  for (const auto& w : workers_)
    if (w->state == s) return true;
  return false;
}

void WorkerPool::take_hello(Worker& w, const std::string& line) {
  w.hello = accept_hello(line, "the worker for " + w.slot.name, w.slot.name, opt_.setup);
  w.state = Worker::idle;
}

const WorkerPool::Worker* WorkerPool::ready_worker(const std::string& name) const {
  const Worker* found = nullptr;
  for (const auto& w : workers_)
    if (w->slot.name == name && w->hello) found = w.get();  // the latest one started on the device
  return found;
}

void WorkerPool::use_config(size_t config) {
  config_ = config;
  run_share_.clear();
}

void WorkerPool::count(const std::string& device, size_t points, double seconds,
                       const std::vector<CalibrationSample>& calibration) {
  for (auto* share : {&run_share_[device], &command_share_[device]}) {
    ++share->cells;
    share->points += int64_t(points);
    share->busy_s += seconds;
    share->calibration.samples.insert(share->calibration.samples.end(), calibration.begin(), calibration.end());
  }
}

Environment WorkerPool::environment() {
  Environment env = workers_.front()->hello->env;
  env.device = devices_text(opt_.slots);
  return env;
}

RunDevice WorkerPool::record(const WorkerSlot& slot, const std::map<std::string, Share>& shares) const {
  RunDevice d;
  d.device = slot.name;
  if (const Worker* w = ready_worker(slot.name)) {
    d.gpu = w->hello->env.gpu;
    d.peak_gbps = w->hello->env.peak_gbps;
    d.identity = w->hello->env.identity;
    set_placement(d, w->hello->placement, w->pinned);
  }
  auto it = shares.find(slot.name);
  if (it != shares.end()) {
    d.cells = it->second.cells, d.points = it->second.points, d.busy_s = it->second.busy_s;
    d.calibration = it->second.calibration;
  }
  return d;
}

std::vector<RunDevice> WorkerPool::devices() {
  std::vector<RunDevice> out;
  for (const auto& slot : opt_.slots)
    if (ready_worker(slot.name)) out.push_back(record(slot, run_share_));
  return out;
}

std::vector<RunDevice> WorkerPool::command_shares() const {
  std::vector<RunDevice> out;
  for (const auto& slot : opt_.slots) out.push_back(record(slot, command_share_));
  return out;
}

std::map<std::string, std::string> WorkerPool::unavailable(size_t config) const {
  std::map<std::string, std::string> out;
  for (const auto& w : workers_)
    if (w->hello && config < w->hello->configs.size())
      for (const auto& [provider, why] : w->hello->configs[config].unavailable)
        if (!out.count(provider)) out[provider] = w->slot.name + ": " + why;
  return out;
}

void WorkerPool::measure(const std::vector<CellPoints>& cells, const CellHooks& hooks) {
  std::vector<double> expected(cells.size(), 0.0);
  if (hooks.expected_seconds)
    for (size_t i = 0; i < cells.size(); ++i) expected[i] = hooks.expected_seconds(cells[i]);
  std::deque<Job> queue;
  for (size_t i : handout_order(expected)) queue.push_back({cells[i], {}});
  bool stopping = false;
  for (;;) {
    stopping = stopping || (hooks.interrupted && hooks.interrupted());
    if (!stopping) dispatch(queue, hooks);
    if (!any(Worker::busy)) {
      if (queue.empty() || stopping) break;
      if (!any(Worker::idle) && !any(Worker::starting))
        throw RuntimeFailure("every worker has ended (" + ends_text() + "); " + std::to_string(queue.size()) +
                             " table cells are left to measure");
    }
    wait_and_read(queue, hooks, stopping);
  }
}

void WorkerPool::dispatch(std::deque<Job>& queue, const CellHooks& hooks) {
  for (size_t i = 0; i < workers_.size() && !queue.empty(); ++i) {
    Worker& w = *workers_[i];
    if (w.state != Worker::idle) continue;
    Job job = std::move(queue.front());
    queue.pop_front();
    // A worker that ended while idle: the cell was not started.
    if (!write_all(w.proc.to, cell_line(job.points, config_, opt_.setup.protocol))) {
      queue.push_front(std::move(job));
      end_worker(w);
      continue;
    }
    w.since = Clock::now();
    w.deadline = w.since + seconds(opt_.point_timeout_s * double(job.points.size()));
    w.state = Worker::busy;
    if (hooks.begin) hooks.begin(job.points, w.slot.name);
    w.job = std::move(job);
  }
}

void WorkerPool::wait_and_read(std::deque<Job>& queue, const CellHooks& hooks, bool stopping) {
  std::vector<pollfd> fds;
  std::vector<Worker*> who;
  for (auto& w : workers_)
    if (w->state != Worker::ended) {
      fds.push_back({w->proc.from, POLLIN, 0});
      who.push_back(w.get());
    }
  if (fds.empty()) return;
  ::poll(fds.data(), fds.size(), 100);
  std::vector<Answered> answered;
  for (size_t i = 0; i < fds.size(); ++i) {
    if (!fds[i].revents) continue;
    Worker& w = *who[i];
    const bool open = w.in->fill();
    std::string line;
    while (w.state != Worker::ended && w.in->next(line)) {
      if (w.state == Worker::starting) take_hello(w, line);
      else take_reply(w, line, queue, hooks, stopping, answered);
    }
    if (!open) on_end(w, queue, hooks, stopping);
  }
  // The idle workers get their next cells before the answered ones are stored.
  if (!answered.empty() && !stopping && !(hooks.interrupted && hooks.interrupted())) dispatch(queue, hooks);
  for (const Answered& a : answered) hooks.done(a.points, a.got, a.device, a.seconds);
  const auto now = Clock::now();
  for (Worker* w : who)
    if (w->state != Worker::ended && w->state != Worker::idle && now > w->deadline && w->end.empty()) {
      w->end = "silent past its deadline, killed";
      ::kill(w->proc.pid, SIGKILL);  // its end is read next
    }
}

void WorkerPool::take_reply(Worker& w, const std::string& line, std::deque<Job>& queue, const CellHooks& hooks,
                            bool stopping, std::vector<Answered>& answered) {
  const std::string who = "the worker for " + w.slot.name;
  const WorkerReply r = read_reply(line, who);
  if (r.kind == WorkerReply::failure) throw RuntimeFailure(who + ": " + r.error);
  if (!w.job) throw RuntimeFailure(who + " answered a cell it was not given");
  Job job = std::move(*w.job);
  w.job.reset();
  const double took = std::chrono::duration<double>(Clock::now() - w.since).count();
  if (r.kind == WorkerReply::cell) {
    if (r.results.size() != job.points.size())
      throw RuntimeFailure(who + " answered " + std::to_string(r.results.size()) + " points for a cell of " +
                           std::to_string(job.points.size()));
    w.state = Worker::idle;
    StageLedger::process().attribute(Stage::other, took, r.stages);  // the wait, by what the worker did
    count(w.slot.name, job.points.size(), took, r.calibration);
    answered.push_back({job.points, {r.results, std::vector<bool>(r.results.size(), false), r.state}, w.slot.name, took});
    return;
  }
  // hung or declined: the worker ends next (killed if it does not, after a while)
  w.deadline = Clock::now() + seconds(30);
  if (r.kind == WorkerReply::declined) {
    if (!stopping) queue.push_front(std::move(job));
    return;
  }
  w.hung = true;
  CellPoints rest;
  for (const Point* p : job.points) {
    if (p->key() != r.key) {
      rest.push_back(p);
      continue;
    }
    hooks.done({p}, {{failed_result(*p, r.error)}, {false}, {}}, w.slot.name, took);
  }
  if (rest.size() == job.points.size()) throw RuntimeFailure(who + " reported a point not in its cell");
  if (!rest.empty()) queue.push_front({rest, job.ends});
}

void WorkerPool::end_worker(Worker& w) {
  const int status = process::close_piped(w.proc, 10);
  if (w.end.empty()) {
    const std::string why = process::exit_reason(status);
    w.end = why.empty() ? "exited" : why;
  }
  w.state = Worker::ended;
}

void WorkerPool::on_end(Worker& w, std::deque<Job>& queue, const CellHooks& hooks, bool stopping) {
  end_worker(w);
  if (w.job) {
    Job job = std::move(*w.job);
    w.job.reset();
    job.ends.push_back(w.slot.name + ": " + w.end);
    if (stopping) {
      // left unmeasured: a resume measures it
    } else if (job.ends.size() < 2) {
      queue.push_front(std::move(job));
    } else {
      give_up(job, hooks, w.slot.name);
    }
  }
  if (w.hung && !stopping) spawn(w.slot);  // a new worker on the device
}

void WorkerPool::give_up(Job& job, const CellHooks& hooks, const std::string& device) {
  std::string ends;
  for (const auto& e : job.ends) ends += (ends.empty() ? "" : "; ") + e;
  CellResult got;
  for (const Point* p : job.points) {
    got.results.push_back(failed_result(*p, "its worker ended while measuring its table cell, twice (" + ends + ")"));
    got.results.back().lost = true;  // not stored: a resume measures it again
    got.abandoned.push_back(false);
  }
  hooks.done(job.points, got, device, 0);
}

std::string WorkerPool::ends_text() const {
  std::string out;
  for (const auto& w : workers_)
    if (w->state == Worker::ended) out += (out.empty() ? "" : "; ") + w->slot.name + ": " + w->end;
  return out;
}

}  // namespace opbench

#include "sweep/ab_measurer.hpp"

#include <signal.h>

#include <deque>
#include <exception>
#include <thread>

#include "core/error.hpp"
#include "measure/round_process.hpp"
#include "measure/stages.hpp"
#include "sweep/workers.hpp"

namespace opbench {

namespace {

const char* side_name(size_t side) { return side == kBase ? "base" : "head"; }

}  // namespace

// The cells left, in hand-out order, and the first failure of a device's thread.
struct AbMeasurer::Queue {
  std::deque<CellPoints> cells;
  std::exception_ptr failure;
};

AbMeasurer::AbMeasurer(AbOptions opt) : opt_(std::move(opt)) {
  old_sigpipe_ = ::signal(SIGPIPE, SIG_IGN);  // a worker gone: its write fails instead
  for (const auto& slot : opt_.slots) {
    auto s = std::make_unique<Slot>();
    s->slot = slot;
    for (size_t side : {kBase, kHead})
      for (int i = 0; i < std::max(1, opt_.processes); ++i) {
        MeasureWorkerOptions w;
        w.name = std::string("the ") + side_name(side) + "'s worker " +
                 (opt_.processes > 1 ? std::to_string(i) + " " : "") + "on " + slot.name;
        w.command = opt_.command(side, slot);
        w.env = opt_.env[side];
        w.env.push_back(std::string(kRoundProcessVariable) + "=" + std::to_string(i));
        if (opt_.cpus) w.cpus = opt_.cpus(slot);
        w.setup = opt_.setup[side];
        w.start_timeout_s = opt_.start_timeout_s;
        w.grace_s = opt_.grace_s;
        s->workers[side].push_back(std::make_unique<MeasureWorker>(w));
      }
    slots_.push_back(std::move(s));
  }
}

AbMeasurer::~AbMeasurer() {
  slots_.clear();  // each worker ends its process
  ::signal(SIGPIPE, old_sigpipe_);
}

bool AbMeasurer::start(const std::function<bool()>& interrupted) {
  each_worker([](MeasureWorker& w) { w.launch(); });  // they open their devices side by side
  bool stopped = false;
  each_worker([&](MeasureWorker& w) {
    if (!stopped && !(stopped = interrupted && interrupted())) w.await_hello();
  });
  if (stopped || (interrupted && interrupted())) return false;
  for (size_t side : {kBase, kHead}) check_one_model(side_devices(side), opt_.allow_mixed, "--devices");
  return true;
}

std::map<std::string, std::string> AbMeasurer::unavailable(size_t config) const {
  std::map<std::string, std::string> out;
  for (const auto& s : slots_)
    for (size_t side : {kBase, kHead}) {
      const auto& configs = s->workers[side].front()->hello().configs;
      if (config >= configs.size()) continue;
      for (const auto& [provider, why] : configs[config].unavailable)
        if (!out.count(provider)) out[provider] = std::string(side_name(side)) + ": " + s->slot.name + ": " + why;
    }
  return out;
}

void AbMeasurer::use_config(size_t config) {
  config_ = config;
  for (auto& s : slots_) s->share = {};
}

Environment AbMeasurer::side_environment(size_t side) {
  Environment env = slots_.front()->workers[side].front()->hello().env;
  if (slots_.size() > 1) env.device = devices_text(opt_.slots);
  return env;
}

std::vector<RunDevice> AbMeasurer::side_devices(size_t side) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<RunDevice> out;
  for (const auto& s : slots_) {
    const MeasureWorker& w = *s->workers[side].front();
    RunDevice d = run_device(s->slot.name, w.hello().env.gpu, w.hello().env.peak_gbps, w.hello().env.identity);
    set_placement(d, w.hello().placement, w.pinned());
    const Share& share = s->share[side];
    d.cells = share.cells, d.points = share.points, d.busy_s = share.busy_s;
    d.calibration = share.calibration;
    out.push_back(d);
  }
  return out;
}

std::vector<pid_t> AbMeasurer::pids() const {
  std::vector<pid_t> out;
  for (const auto& s : slots_)
    for (const auto& side : s->workers)
      for (const auto& w : side)
        for (pid_t p : w->pids()) out.push_back(p);
  return out;
}

void AbMeasurer::count(Slot& slot, std::array<WorkerExecutor, 2>& ex, const std::array<CellResult, 2>& got,
                       size_t points) {
  for (size_t side : {kBase, kHead}) {
    Share& share = slot.share[side];
    ++share.cells;
    share.points += int64_t(points);
    share.busy_s += got[side].seconds;
    const std::vector<CalibrationSample> passes = ex[side].take_calibration();  // every worker's of the side
    share.calibration.samples.insert(share.calibration.samples.end(), passes.begin(), passes.end());
  }
}

// A device's thread: the next cell from the queue, its two sides measured here, both handed
// back; until the queue is empty, a stop, or a failure anywhere.
void AbMeasurer::serve(Slot& slot, Queue& q, const CellHooks& hooks) {
  const auto side = [&](size_t s) {
    std::vector<MeasureWorker*> ws;
    for (auto& w : slot.workers[s]) ws.push_back(w.get());
    return WorkerExecutor(ws, config_);
  };
  std::array<WorkerExecutor, 2> ex{side(kBase), side(kHead)};
  for (;;) {
    CellPoints points;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (q.cells.empty() || q.failure || (hooks.interrupted && hooks.interrupted())) return;
      points = q.cells.front();
      q.cells.pop_front();
      if (hooks.begin) hooks.begin(points, slot.slot.name);
    }
    const std::array<CellResult, 2> got = measure_paired_cell({&ex[kBase], &ex[kHead]}, points, opt_.timings.at(config_),
                                                                  opt_.same_within);
    std::lock_guard<std::mutex> lock(mu_);
    count(slot, ex, got, points.size());
    for (const CellResult& side : got) hooks.done(points, side, slot.slot.name, side.seconds);
  }
}

void AbMeasurer::measure(const std::vector<CellPoints>& cells, const CellHooks& hooks) {
  Queue q;
  std::vector<double> expected(cells.size(), 0.0);
  if (hooks.expected_seconds)
    for (size_t i = 0; i < cells.size(); ++i) expected[i] = hooks.expected_seconds(cells[i]);
  for (size_t i : handout_order(expected)) q.cells.push_back(cells[i]);
  std::vector<std::thread> threads;
  for (auto& s : slots_)
    threads.emplace_back([this, &s, &q, &hooks] {
      try {
        serve(*s, q, hooks);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu_);
        if (!q.failure) q.failure = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  if (q.failure) std::rethrow_exception(q.failure);
}

}  // namespace opbench

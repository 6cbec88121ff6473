// The parent side of a sweep measured by workers: one worker process per device (a command
// the caller gives, e.g. `opbench sweep - --worker --device D`), started once per
// command and serving every config of it (a suite's), spoken to through pipes
// (sweep/worker_protocol.hpp). The cells of a run come from one queue, longest expected first
// (CellHooks::expected_seconds; equals in sweep order): an idle worker gets the next cell,
// whose providers all stay on its device. Results come back to this process, the only one
// writing the database; a worker is handed its next cell before the last one is stored. Each
// worker is pinned to the CPUs the caller names for its device (those local to its GPU), and
// its share (cells, points, seconds busy) is counted per run and per command.
//
// A worker that ends while measuring a cell (a crash, a kill): the cell goes back to the front
// of the queue once; if it ends a second worker, its points are lost (Result::lost: not
// stored, the run ends interrupted and --resume measures them). A worker
// that reports a call that never returned: that point fails, the rest of its cell goes back
// to the queue, and a new worker starts on the device. A worker silent past its cell's
// deadline is killed (and its cell handled as above). When every worker has ended with cells
// left, RuntimeFailure. A stop finishes the cells under way and hands out no more.
// Torch-free.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <deque>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/lines.hpp"
#include "core/process.hpp"
#include "sweep/devices.hpp"
#include "sweep/measurer.hpp"
#include "sweep/worker_protocol.hpp"

namespace opbench {

struct PoolOptions {
  std::vector<WorkerSlot> slots;
  // The command line of a worker on a slot's device (argv[0] a path).
  std::function<std::vector<std::string>(const WorkerSlot& slot)> command;
  // The CPUs a slot's worker is pinned to (empty, or unset: not pinned).
  std::function<std::vector<int>(const WorkerSlot& slot)> cpus;
  std::vector<std::string> env;             // added to the workers' environment ("NAME=value")
  WorkerSetup setup;             // the workers' protocol, and what they are told of the configs
  bool allow_mixed = false;      // several GPU models in one run
  double start_timeout_s = 600;  // for a worker's hello (opening the device, its bandwidth)
  double point_timeout_s = 300;  // a cell's deadline: this per point, plus start_timeout_s
};

class WorkerPool final : public CellMeasurer {
 public:
  explicit WorkerPool(PoolOptions opt);
  // Closes every worker's input, gives each a while to end, then kills what is left.
  ~WorkerPool() override;
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Starts the workers and waits for every hello. Throws what a worker reports (InputError for
  // bad input, RuntimeFailure for its device), InputError naming --devices for several GPU
  // models (unless allow_mixed), RuntimeFailure for a worker that ends first or another config.
  // False when `interrupted` turned true first.
  bool start(const std::function<bool()>& interrupted);

  // The providers of config `config` some worker cannot run: provider -> "DEVICE: why".
  std::map<std::string, std::string> unavailable(size_t config = 0) const;
  // The config whose cells the next measure() hands out (an index into the setup's), and
  // whose run the devices' shares count from here on.
  void use_config(size_t config);
  Environment environment() override;
  // Each device with its model, peak, placement and its share since use_config.
  std::vector<RunDevice> devices() override;
  void measure(const std::vector<CellPoints>& cells, const CellHooks& hooks) override;

  // Each device's share over the whole command (every config), with its placement.
  std::vector<RunDevice> command_shares() const;
  // The workers' process ids (ended ones included).
  std::vector<pid_t> pids() const;
  // Seconds from starting the workers to the last hello (what starting them cost).
  double start_seconds() const { return start_s_; }

 private:
  struct Job {
    CellPoints points;
    std::vector<std::string> ends;  // how the workers that measured it ended, each
  };
  // A cell answered, stored (hooks.done) once the idle workers have their next cells.
  struct Answered {
    CellPoints points;
    CellResult got;
    std::string device;
    double seconds = 0;
  };
  struct Share {
    int64_t cells = 0, points = 0;
    double busy_s = 0;
    Calibration calibration;  // the passes its worker took
  };
  struct Worker {
    WorkerSlot slot;
    process::Piped proc;
    std::unique_ptr<LineReader> in;
    enum State { starting, idle, busy, ended } state = starting;
    std::optional<WorkerHello> hello;
    std::optional<Job> job;
    std::chrono::steady_clock::time_point since, deadline;
    bool hung = false;    // it reported a call that never returned: another starts after it ends
    bool pinned = false;  // started pinned to the CPUs PoolOptions::cpus named
    std::string end;      // how it ended
  };

  void spawn(const WorkerSlot& slot);
  void take_hello(Worker& w, const std::string& line);
  void dispatch(std::deque<Job>& queue, const CellHooks& hooks);
  void wait_and_read(std::deque<Job>& queue, const CellHooks& hooks, bool stopping);
  void take_reply(Worker& w, const std::string& line, std::deque<Job>& queue, const CellHooks& hooks, bool stopping,
                  std::vector<Answered>& answered);
  void count(const std::string& device, size_t points, double seconds, const std::vector<CalibrationSample>& calibration);
  const Worker* ready_worker(const std::string& name) const;
  RunDevice record(const WorkerSlot& slot, const std::map<std::string, Share>& shares) const;
  void on_end(Worker& w, std::deque<Job>& queue, const CellHooks& hooks, bool stopping);
  void give_up(Job& job, const CellHooks& hooks, const std::string& device);
  void end_worker(Worker& w);
  bool any(Worker::State s) const;
  std::string ends_text() const;

  PoolOptions opt_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<pid_t> pids_;
  size_t config_ = 0;
  std::map<std::string, Share> run_share_, command_share_;  // by slot name
  double start_s_ = 0;
  void (*old_sigpipe_)(int) = nullptr;
};

// The order in which cells are handed out: longest expected first (LPT), equals in their
// given order.
std::vector<size_t> handout_order(const std::vector<double>& expected_seconds);

}  // namespace opbench

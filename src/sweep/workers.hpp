// The parent side of a sweep on several devices: one worker process per device (a command the
// caller gives, e.g. `opbench sweep CONFIG --worker --device D`), spoken to through pipes
// (sweep/worker_protocol.hpp), taking the cells from one queue: an idle worker gets the next
// cell, whose providers all stay on its device. Results come back to this process, the only
// one writing the database.
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
  std::vector<std::string> env;  // added to the workers' environment ("NAME=value")
  std::string config_hash;       // the config every worker must have read
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
  // False when `stop` turned true first.
  bool start(const std::function<bool()>& stop);

  // The config's providers some worker cannot run: provider -> "DEVICE: why".
  std::map<std::string, std::string> unavailable() const;
  Environment environment() override;
  std::vector<RunDevice> devices() override;
  void measure(const std::vector<CellPoints>& cells, const CellHooks& hooks) override;

  // The workers' process ids (ended ones included).
  std::vector<pid_t> pids() const;

 private:
  struct Job {
    CellPoints points;
    std::vector<std::string> ends;  // how the workers that measured it ended, each
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
    std::string end;      // how it ended
  };

  void spawn(const WorkerSlot& slot);
  void take_hello(Worker& w, const std::string& line);
  void dispatch(std::deque<Job>& queue, const CellHooks& hooks);
  void wait_and_read(std::deque<Job>& queue, const CellHooks& hooks, bool stopping);
  void take_reply(Worker& w, const std::string& line, std::deque<Job>& queue, const CellHooks& hooks, bool stopping);
  void on_end(Worker& w, std::deque<Job>& queue, const CellHooks& hooks, bool stopping);
  void give_up(Job& job, const CellHooks& hooks, const std::string& device);
  void end_worker(Worker& w);
  bool any(Worker::State s) const;
  std::string ends_text() const;

  PoolOptions opt_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<pid_t> pids_;
  void (*old_sigpipe_)(int) = nullptr;
};

}  // namespace opbench

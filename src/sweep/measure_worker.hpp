// One worker process that measures one round of one point at a time for its parent (`opbench
// sweep - --worker --device D`, spoken to through the measure lines of
// sweep/worker_protocol.hpp): a round process of a sweep (round_processes.hpp), or one side of
// `opbench ab` (ab_measurer.hpp), whose worker may be another build's binary.
//
// A worker that ends while measuring (a crash, a kill): a new one is started in its place and
// measures the round again; when that one ends too, the point is lost (Result::lost: not
// stored, so that --resume measures it). A worker silent past a measure's budget and
// `grace_s` is killed, and its point fails as hung. Torch-free.
#pragma once
#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "core/lines.hpp"
#include "core/process.hpp"
#include "measure/executor.hpp"
#include "sweep/worker_protocol.hpp"

namespace opbench {

struct MeasureWorkerOptions {
  std::string name;                         // in messages: "round process 1", "the base's worker on cuda:0"
  std::vector<std::string> command, env;    // its command line (argv[0] a path) and what its environment gets
  std::vector<int> cpus;                    // pinned to these (empty: not pinned)
  WorkerSetup setup;                        // its protocol, and what it is told of the configs
  double start_timeout_s = 600;             // for its hello (opening the device, its bandwidth)
  double grace_s = 30;                      // past a measure's budget before it counts as hung
};

class MeasureWorker {
 public:
  explicit MeasureWorker(MeasureWorkerOptions opt);
  ~MeasureWorker();
  MeasureWorker(const MeasureWorker&) = delete;
  MeasureWorker& operator=(const MeasureWorker&) = delete;

  // Starts the process (protocol 2: tells it the configs) and waits for its hello:
  // RuntimeFailure for one that cannot start, ends first, speaks another protocol than its
  // setup's or read another config; InputError for a hello that
  // blames the input. launch() and await_hello() are its two halves, for workers that start
  // side by side.
  void start() {
    launch();
    await_hello();
  }
  void launch();
  void await_hello();
  const WorkerHello& hello() const { return hello_; }
  const std::string& name() const { return opt_.name; }
  bool pinned() const { return !opt_.cpus.empty(); }

  // One round of `point` of config `config` with the round's `timing`, memory placed anew first
  // when `new_round`. Never throws for the point: a worker lost twice gives a lost result, a
  // hung call a failed one.
  Result measure(const Point& point, const Timing& timing, size_t config, bool new_round);
  // The device right after the last measure, and the calibration passes since the last take.
  DeviceState last_state() const { return last_state_; }
  std::vector<CalibrationSample> take_calibration();
  std::vector<pid_t> pids() const { return pids_; }

 private:
  enum Wait { kLine, kEnded, kSilent };
  void spawn();
  std::string end_of();  // how its process ended, once its output closed
  Wait ask(const MeasureRequest& m, double timeout_s, std::string* line, double* waited);
  Wait wait_line(double timeout_s, std::string* line);
  Result reply_result(const std::string& line, double waited);

  MeasureWorkerOptions opt_;
  process::Piped proc_;
  std::unique_ptr<LineReader> in_;
  WorkerHello hello_;
  std::vector<pid_t> pids_;
  DeviceState last_state_;
  std::vector<CalibrationSample> calibration_;
  bool pending_new_round_ = false;  // a replacement places memory anew before its first measure
};

// Workers of one side as the executor of a cell's rounds: round r measured by worker r mod N
// (one worker: every round), each placing its memory anew before the first measure of a new
// round that reaches it; a worker's calibration passes are everyone's.
class WorkerExecutor final : public Executor {
 public:
  WorkerExecutor(std::vector<MeasureWorker*> workers, size_t config = 0)
      : workers_(std::move(workers)), fresh_(workers_.size(), false), config_(config) {}
  WorkerExecutor(MeasureWorker& worker, size_t config = 0) : WorkerExecutor(std::vector<MeasureWorker*>{&worker}, config) {}
  void use_config(size_t config) { config_ = config; }
  Environment environment() override { return workers_.front()->hello().env; }
  std::string unavailable(const std::string& op, const std::string& provider) override;
  Result measure(const Point& point, const Timing& timing) override;
  void set_round(int round) override { current_ = size_t(round) % workers_.size(); }
  void new_round() override { fresh_[current_] = true; }
  DeviceState device_state() override { return workers_[current_]->last_state(); }
  std::vector<CalibrationSample> take_calibration() override;

 private:
  std::vector<MeasureWorker*> workers_;
  std::vector<bool> fresh_;  // each worker places memory anew before its next measure
  size_t config_;
  size_t current_ = 0;
};

}  // namespace opbench

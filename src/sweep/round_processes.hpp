// The rounds of every cell spread over several processes (Timing::processes): round r of a
// cell is measured in process r mod N, this one being process 0 and the others worker
// processes on the same device (`opbench sweep - --worker`, spoken to one measure at a
// time: sweep/worker_protocol.hpp). Some of what a call's time depends on lasts as long as the
// process (where its allocations land, which pages back them): on a shared CPU one process
// measured a cell 30% slower in every round while the next nine did not. With the rounds in
// several processes such a process holds one round of a cell, not all of them, and the
// verdicts' round test sees it (docs/measurement.md, round processes).
//
// A worker that ends while measuring (a crash, a kill): a new worker takes its place and
// measures the round again; when that one ends too, the point is lost (Result::lost: not
// stored, so that --resume measures it). Torch-free.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "measure/executor.hpp"
#include "sweep/measure_worker.hpp"

namespace opbench {

struct RoundProcessOptions {
  int processes = 1;  // N, this process included
  // The command line of a worker (argv[0] a path) and what its environment gets ("NAME=value").
  std::vector<std::string> command, env;
  // The workers' protocol and what they are told of the configs (a suite's), and the op of each.
  WorkerSetup setup;
  std::vector<std::string> ops;
  double start_timeout_s = 600;  // for a worker's hello
};

class RoundProcesses final : public Executor {
 public:
  // Starts the N - 1 workers and waits for their hellos. RuntimeFailure for a worker that
  // cannot start, ends first, read another config or cannot run a provider `local` runs.
  RoundProcesses(Executor& local, RoundProcessOptions opt);
  ~RoundProcesses() override;
  RoundProcesses(const RoundProcesses&) = delete;
  RoundProcesses& operator=(const RoundProcesses&) = delete;

  Environment environment() override { return local_.environment(); }
  std::string unavailable(const std::string& op, const std::string& provider) override {
    return local_.unavailable(op, provider);
  }
  Result measure(const Point& point, const Timing& timing) override;
  // The config (an index into the setup's) of the points measured from here on.
  void use_config(size_t config) { config_ = config; }
  void new_round() override;
  void set_round(int round) override;
  DeviceState device_state() override;
  std::vector<CalibrationSample> take_calibration() override;

  // The workers' process ids (ended ones included).
  std::vector<int> pids() const;

 private:
  void check_providers(const MeasureWorker& w) const;

  Executor& local_;
  RoundProcessOptions opt_;
  std::vector<std::unique_ptr<MeasureWorker>> workers_;  // processes 1 .. N - 1
  std::vector<bool> new_round_;                          // each worker places memory anew before its next measure
  size_t current_ = 0;                                   // 0: this process
  size_t config_ = 0;
  void (*old_sigpipe_)(int) = nullptr;
};

}  // namespace opbench

// The worker side of a sweep measured by workers (`sweep --devices`, a sweep on one GPU): it
// says hello (its device's environment, where it runs, the providers that cannot run there),
// then measures the cells its parent sends, one at a time, each with its config's timing, with measure_cell on its Executor (the path of a sweep on one
// device: nothing else runs while a cell is timed), and answers each with its results
// (sweep/worker_protocol.hpp). Torch-free: `opbench sweep --worker` runs it on a TorchExecutor.
#pragma once
#include <atomic>
#include <string>

#include "config/config.hpp"
#include "measure/executor.hpp"
#include "points/points.hpp"
#include "sweep/worker_protocol.hpp"

namespace opbench {

// One config a worker serves: the config (its op, timing and providers) and its expanded
// sweep, whose points the parent's requests name by key.
struct WorkerConfig {
  Config cfg;
  Sweep sw;
};

// The hello of a worker on `device`: the executor's environment, this process's placement
// (LibTorch's threads left to the caller), and for each config its hash and the providers its
// sweep measures that the executor cannot run.
WorkerHello worker_hello(Executor& ex, const std::vector<WorkerConfig>& configs, const std::string& device);

struct WorkerLoop {
  int in = 0, out = 1;                       // the parent's cells come in, the answers go out
  const std::atomic<bool>* interrupt = nullptr;   // a first signal
  double hang_grace_s = 30;                  // as SweepOptions::hang_grace_s
};

// Answers cells until the input ends (returns 0) or a signal stops it (returns 130: after the
// cell under way; a cell read after the signal is declined). A measure that has not returned
// hang_grace_s after its point's budget: answers `hung` and ends the process (exit status 3),
// since the call cannot be taken back.
// Each request is measured with its config's timing.
int serve_cells(Executor& ex, const std::vector<WorkerConfig>& configs, const WorkerLoop& loop);

}  // namespace opbench

// The worker side of a sweep on several devices (`sweep --devices`): it says hello (its
// device's environment, the providers that cannot run there), then measures the cells its
// parent sends, one at a time, with measure_cell on its Executor (the path of a sweep on one
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

// The hello of a worker on `device`: the executor's environment and the config's providers it
// cannot run.
WorkerHello worker_hello(Executor& ex, const Config& cfg, const std::string& device);

struct WorkerLoop {
  int in = 0, out = 1;                       // the parent's cells come in, the answers go out
  const std::atomic<bool>* stop = nullptr;   // a first signal
  double hang_grace_s = 30;                  // as SweepOptions::hang_grace_s
};

// Answers cells until the input ends (returns 0) or a signal stops it (returns 130: after the
// cell under way; a cell read after the signal is declined). A measure that has not returned
// hang_grace_s after its point's budget: answers `hung` and ends the process (exit status 3),
// since the call cannot be taken back.
int serve_cells(Executor& ex, const Sweep& sw, const Timing& timing, const WorkerLoop& loop);

}  // namespace opbench

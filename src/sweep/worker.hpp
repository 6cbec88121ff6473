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

// One config a worker serves: the config (its op and timing; its path and hash when read from
// a file), the providers measured of it, and (protocol 1) its expanded sweep, whose points the
// parent's requests name by key (protocol 2: the requests hold their points).
struct WorkerConfig {
  Config cfg;
  Sweep sw;
  std::vector<std::string> providers;
};

// A config read from its file (protocol 1): expanded (refusing more than `max_points`), its
// points narrowed to `providers` (all when empty), the providers its sweep measures.
WorkerConfig read_worker_config(const std::string& path, size_t max_points, const std::vector<std::string>& providers);
// A config as the parent tells it (protocol 2).
WorkerConfig told_worker_config(const WorkerConfigLine& line);

// The hello of a worker on `device` speaking `protocol`: the executor's environment, this
// process's placement (LibTorch's threads left to the caller), and for each config its hash
// ("" for one told) and those of its providers that the executor cannot run.
WorkerHello worker_hello(Executor& ex, const std::vector<WorkerConfig>& configs, const std::string& device,
                         int protocol = kWorkerProtocol);

struct WorkerLoop {
  int in = 0, out = 1;                       // the parent's cells come in, the answers go out
  const std::atomic<bool>* interrupt = nullptr;   // a first signal
  double hang_grace_s = 30;                  // as SweepOptions::hang_grace_s
};

// Answers cells until the input ends (returns 0) or a signal stops it (returns 130: after the
// cell under way; a cell read after the signal is declined). A measure that has not returned
// hang_grace_s after its point's budget: answers `hung` and ends the process (exit status 3),
// since the call cannot be taken back.
// Each request is measured with its config's timing; its points are those it holds, or those
// of its config's sweep it names by key.
int serve_cells(Executor& ex, const std::vector<WorkerConfig>& configs, const WorkerLoop& loop);

}  // namespace opbench

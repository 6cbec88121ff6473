// `opbench sweep CONFIG... --worker --device D [--providers LIST]`: one worker of a sweep
// measured by workers (on several devices, or on one GPU) or one of its round processes,
// started by its parent sweep (sweep/workers.hpp, sweep/round_processes.hpp) with its input and
// output on pipes to it. It reads every config of the command (a suite's).
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "config/config.hpp"

namespace opbench {

class TorchExecutor;

// The executor a sweep measures on `device` with (in the sweep's process or in a worker): what
// the config leaves to the device decided (resolve_device_defaults), LibTorch's threads pinned
// first (cfg.timing.threads becomes the count recorded), the device opened, the config's L2
// flush checked against it (InputError naming timing.flush_l2).
std::unique_ptr<TorchExecutor> open_executor(Config& cfg, const std::string& device);
// Another config measured on that executor (a suite's): what it leaves to the device decided,
// LibTorch's `threads` (the first config's, already pinned) recorded, its flush checked.
void adopt_config(Config& cfg, TorchExecutor& ex, const std::string& device, int threads);

// The environment entry a parent gives its workers (its pid): a worker whose parent is gone
// ends instead of measuring for nobody.
std::string worker_parent_env();

struct WorkerArgs {
  std::vector<std::string> configs;
  std::string device;
  size_t max_points = 0;
  std::vector<std::string> providers;  // the providers the parent measures (empty: all)
};

// Opens the device, says hello and answers cells until the parent closes its input; the exit
// status (0, 2 for bad input, 3 for a device failure, 130 after a signal).
int run_sweep_worker(const WorkerArgs& a);

}  // namespace opbench

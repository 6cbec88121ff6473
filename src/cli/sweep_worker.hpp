// `opbench sweep CONFIG --worker --device D`: one worker of a sweep on several devices, started
// by its parent sweep (sweep/workers.hpp) with its input and output on pipes to it.
#pragma once
#include <cstddef>
#include <memory>
#include <string>

#include "config/config.hpp"

namespace opbench {

class TorchExecutor;

// The executor a sweep measures on `device` with (in the sweep's process or in a worker): what
// the config leaves to the device decided (resolve_device_defaults), LibTorch's threads pinned
// first (cfg.timing.threads becomes the count recorded), the device opened, the config's L2
// flush checked against it (InputError naming timing.flush_l2).
std::unique_ptr<TorchExecutor> open_executor(Config& cfg, const std::string& device);

// The environment entry a parent gives its workers (its pid): a worker whose parent is gone
// ends instead of measuring for nobody.
std::string worker_parent_env();

// Opens the device, says hello and answers cells until the parent closes its input; the exit
// status (0, 2 for bad input, 3 for a device failure, 130 after a signal).
int run_sweep_worker(const std::string& config, const std::string& device, size_t max_points);

}  // namespace opbench

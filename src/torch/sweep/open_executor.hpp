// The executor a sweep measures on a device with, in the sweep's own process or in one of its
// workers, and the configs it measures adopted by it.
#pragma once
#include <memory>
#include <string>

#include "config/config.hpp"

namespace opbench {

class TorchExecutor;

// The executor a sweep measures on `device` with: what the config leaves to the device decided
// (resolve_device_defaults), LibTorch's threads pinned first (cfg.timing.threads becomes the
// count recorded), the device opened, the config's L2 flush checked against it (InputError
// naming timing.flush_l2).
std::unique_ptr<TorchExecutor> open_executor(Config& cfg, const std::string& device);
// Another config measured on that executor (a suite's): what it leaves to the device decided,
// LibTorch's `threads` (the first config's, already pinned) recorded, its flush checked.
void adopt_config(Config& cfg, TorchExecutor& ex, const std::string& device, int threads);

}  // namespace opbench

#include "torch/sweep/open_executor.hpp"

#include "core/error.hpp"
#include "torch/measure/threads.hpp"
#include "torch/measure/torch_executor.hpp"

namespace opbench {

std::unique_ptr<TorchExecutor> open_executor(Config& cfg, const std::string& device) {
  resolve_device_defaults(cfg.timing, device);
  cfg.timing.threads = pin_threads(cfg.timing.threads);  // before any LibTorch work
  auto ex = std::make_unique<TorchExecutor>(device);
  adopt_config(cfg, *ex, device, cfg.timing.threads);
  return ex;
}

void adopt_config(Config& cfg, TorchExecutor& ex, const std::string& device, int threads) {
  resolve_device_defaults(cfg.timing, device);
  cfg.timing.threads = threads;
  const std::string no_flush = ex.device().flush_unsupported(cfg.timing.flush_l2);
  if (!no_flush.empty()) throw InputError(cfg.path, "timing.flush_l2", no_flush);
}

}  // namespace opbench

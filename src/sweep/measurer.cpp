#include "sweep/measurer.hpp"

#include <chrono>

namespace opbench {

void LocalMeasurer::measure(const std::vector<CellPoints>& cells, const CellHooks& hooks) {
  for (const CellPoints& points : cells) {
    if (hooks.stop && hooks.stop()) return;
    if (hooks.begin) hooks.begin(points, device_);
    const auto t0 = std::chrono::steady_clock::now();
    const CellResult got = measure_cell(ex_, points, timing_, hooks.guard);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    hooks.done(points, got, device_, seconds);
  }
}

}  // namespace opbench

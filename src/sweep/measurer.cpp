#include "sweep/measurer.hpp"

namespace opbench {

void LocalMeasurer::measure(const std::vector<CellPoints>& cells, const CellHooks& hooks) {
  for (const auto& block : interleave_blocks(cells, timing_.interleave)) {
    if (hooks.stop && hooks.stop()) return;
    if (hooks.begin)
      for (const CellPoints& points : block) hooks.begin(points, device_);
    const std::vector<CellResult> got = measure_cells(ex_, block, timing_, hooks.guard, hooks.stop);
    for (size_t i = 0; i < block.size(); ++i)
      if (got[i].finished()) hooks.done(block[i], got[i], device_, got[i].seconds);  // else left for a resume
  }
}

}  // namespace opbench

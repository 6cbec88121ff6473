#include "sweep/measurer.hpp"

namespace opbench {

void set_placement(RunDevice& d, const Placement& p, bool pinned) {
  d.cpus = cpu_list_text(p.cpus);
  d.memory = p.memory;
  d.threads = p.threads;
  d.pinned = pinned && !p.cpus.empty();
}

std::vector<RunDevice> LocalMeasurer::devices() {
  const Environment env = ex_.environment();
  RunDevice d = share_;
  d.device = device_;
  d.gpu = env.gpu;
  d.peak_gbps = env.peak_gbps;
  d.identity = env.identity;
  set_placement(d, placement_, false);
  return {d};
}

void LocalMeasurer::measure(const std::vector<CellPoints>& cells, const CellHooks& hooks) {
  for (const auto& block : interleave_blocks(cells, timing_.interleave)) {
    if (hooks.interrupted && hooks.interrupted()) return;
    if (hooks.begin)
      for (const CellPoints& points : block) hooks.begin(points, device_);
    const std::vector<CellResult> got = measure_cells(ex_, block, timing_, hooks.guard, hooks.interrupted);
    for (size_t i = 0; i < block.size(); ++i) {
      if (!got[i].finished()) continue;  // left for a resume
      ++share_.cells;
      share_.points += int64_t(block[i].size());
      share_.busy_s += got[i].seconds;
      hooks.done(block[i], got[i], device_, got[i].seconds);
    }
    const std::vector<CalibrationSample> passes = ex_.take_calibration();
    share_.calibration.samples.insert(share_.calibration.samples.end(), passes.begin(), passes.end());
  }
}

}  // namespace opbench

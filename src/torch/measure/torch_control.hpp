// The control workload of a CPU run: one fixed LibTorch computation, timed beside every speed
// point in the same process, right before and right after the point's own samples, so that
// what moves a shared machine as a whole (other tenants' load, the clock, what lasts a process)
// shows in it as in the point. Its tensor is sized to the point's minimal bytes, so that it
// lives where the point's data lives (L2, the last-level cache, memory) and feels what another
// tenant does there. `diff` holds a point's change against the control's over the same rounds
// (diff/verdict.hpp, rule 5; docs/measurement.md, "The control workload").
#pragma once
#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "measure/bench.hpp"

namespace opbench {

class ControlWorkload {
 public:
  // The control of a point that moves `bytes` (OpSpec::min_bytes): a float32 tensor of as many
  // bytes, 64 KiB to 16 MiB, made without the random generator (the points' seeded inputs stay
  // as they were).
  explicit ControlWorkload(double bytes);
  int64_t elements() const { return x_.numel(); }
  static int64_t elements_for(double bytes);
  // kSamples samples of one call (ms) on `clock`, each after its flush, after one call untimed.
  static constexpr size_t kSamples = 12;
  std::vector<double> samples(Clock& clock);
  // `measure` bracketed by the control: its samples before and after, their median (ms). The
  // control's own time is charged to Stage::control.
  double around(Clock& clock, const std::function<void()>& measure);

 private:
  at::Tensor x_;
};

}  // namespace opbench

// The control workload of a CPU run: one fixed LibTorch computation, timed beside every speed
// point in the same process, right before and right after the point's own samples, so that what moves a
// shared machine as a whole (other tenants' load, the clock, what lasts a process) shows in it
// as in the point. `diff` holds a point's change against the control's over the same rounds
// (diff/verdict.hpp, rule 3c; docs/measurement.md, "The control workload").
#pragma once
#include <ATen/ATen.h>

#include <functional>
#include <vector>

#include "measure/bench.hpp"

namespace opbench {

class ControlWorkload {
 public:
  ControlWorkload();
  // The samples of one call (ms), timed as a point's round is (do_bench on `clock`) with fixed
  // budgets: a dozen samples or more, about a millisecond.
  std::vector<double> samples(Clock& clock, const Timing& timing);
  // `measure` bracketed by the control: its samples before and after, their median (ms).
  double around(Clock& clock, const Timing& timing, const std::function<void()>& measure);

 private:
  at::Tensor x_;
};

}  // namespace opbench

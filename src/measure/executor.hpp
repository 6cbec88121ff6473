// The seam between the torch-free core (sweep, store, report) and what runs the points
// (src/measure, which links LibTorch). Tests drive the sweep with a fake executor.
#pragma once
#include "config/config.hpp"
#include "record/environment.hpp"
#include "record/point.hpp"
#include "record/result.hpp"

namespace opbench {

class Executor {
 public:
  virtual ~Executor() = default;
  virtual Environment environment() = 0;
  // Why `provider` cannot run `op` here ("" when it can): not built, no GPU, ...
  virtual std::string unavailable(const std::string& op, const std::string& provider) = 0;
  // Everything outside the timed region (inputs, compilation) happens inside; never throws
  // for a failing point: the error is returned in Result::error.
  virtual Result measure(const Point& point, const Timing& timing) = 0;
  // Before the next round of a cell (Timing::rounds): what a timing depends on besides the
  // code (the flush buffer, the inputs) is placed in new memory for the measures that follow.
  virtual void new_round() {}
  // The measures that follow are round `round` (0-based) of their cell: where an executor
  // spreads the rounds over processes, this picks the process (sweep/round_processes.hpp).
  virtual void set_round(int /*round*/) {}
  // After a round measured in a process that takes turns on its device with other processes
  // (rounds spread over processes): gives back what the process holds but no longer uses, so
  // that what one process kept from its largest point cannot starve another's.
  virtual void yield_memory() {}
  // The device's state now (clocks, temperature, power, throttling): read once per table
  // cell, right after its measures. Unknown (known = false) where there is none to read.
  virtual DeviceState device_state() { return {}; }
  // The passes of the device calibration (record/device_identity.hpp) taken since the last
  // call, in order; an executor that measures a GPU takes one at its first measure and then
  // between measures every few seconds. None on the CPU.
  virtual std::vector<CalibrationSample> take_calibration() { return {}; }
};

}  // namespace opbench

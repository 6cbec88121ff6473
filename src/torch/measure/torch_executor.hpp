// The Executor that runs points through LibTorch: builds each point's seeded inputs on the
// device, prepares the provider (outside timing), checks its output against the op's
// reference computed in a wider dtype (torch_check.hpp), then measures time (bench.hpp's
// protocol; on a CPU with the control workload first, torch_control.hpp) or peak memory.
#pragma once
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>

#include "measure/executor.hpp"
#include "measure/round_process.hpp"
#include "torch/measure/device.hpp"
#include "torch/measure/torch_check.hpp"
#include "torch/measure/torch_control.hpp"
#include "torch/measure/torch_plant.hpp"
#include "torch/providers/provider.hpp"

namespace opbench {

class TorchExecutor final : public Executor {
 public:
  explicit TorchExecutor(const std::string& device);
  Environment environment() override;
  std::string unavailable(const std::string& op, const std::string& provider) override;
  Result measure(const Point& point, const Timing& timing) override;
  void new_round() override;
  void yield_memory() override;
  DeviceState device_state() override;
  std::vector<CalibrationSample> take_calibration() override;

  Device& device() { return *device_; }
  // The seeded inputs of a point (cached: the providers of one table cell share them).
  const Inputs& inputs_for(const Point& point);

 private:
  std::unique_ptr<Device> device_;
  std::optional<Environment> env_;
  std::string inputs_key_;
  Inputs inputs_;
  bool new_inputs_ = false;  // new_round(): the next inputs_for makes new copies
  std::mt19937_64 spacer_rng_;  // the placement spacers' sizes (seeded at random)
  ReferenceCheck check_;
  std::optional<ControlWorkload> control_;  // a CPU's, of the last point's size
  ControlWorkload& control_for(double bytes);
  std::vector<Plant> plants_;               // OPBENCH_PLANT
  // The device calibration's passes not yet taken, and when the last one ran.
  std::vector<CalibrationSample> calibration_;
  std::optional<std::chrono::steady_clock::time_point> calibrated_at_;
  // The passes describe the device: of the processes a cell's rounds are spread over, process 0
  // takes them (each of ab's eight workers on one GPU taking its own every 2 s cost the device
  // eight times the time of one).
  const bool calibrates_ = round_process_index() == 0;
  void calibrate_when_due();

  // The steps of measure. A point's inputs and its provider's call, placed on the device (the
  // placement stage), with the spacer that is held until the point is measured.
  struct Placed {
    at::Tensor spacer;
    const Inputs* inputs = nullptr;
    Call call;
  };
  Placed place(const Point& point, const Provider& provider);
  // place, after freeing the calls kept across rounds if the device runs out of memory.
  Placed place_or_free(const Point& point, const Provider& provider);
  // The provider's output against the op's reference (speed points), into r's check fields;
  // whether the check ran the call.
  bool check_against_truth(const Point& point, const Placed& placed, bool check, Result& r);
  void measure_peak_memory(const Call& call, Result& r);
  // The timing protocol's round (`warm`: the call has run on this placement); on a CPU inside
  // the control workload's.
  void measure_time(const Point& point, const Call& call, const Timing& timing, bool warm, Result& r);
  // Placed (or kept), checked and measured: the body of measure.
  void measure_placed(const Point& point, const Provider& provider, const Timing& timing, Result& r);
  // The calls of long speed points, kept from their first round to their last (by provider; the
  // cell's whose inputs are held, inputs_key_): the call a later round of the point reuses
  // (null: place it anew), and keeping one after its round; cleared with the inputs, before a
  // memory point and to free memory.
  std::map<std::string, Call> kept_;
  const Call* kept_call(const Point& point, const Timing& timing) const;
  void keep(const Point& point, const Call& call, const Result& r);
  // Nothing held for points (inputs, kept calls, truth, control workload) and the caching
  // allocator's idle blocks given back: before a memory point, and after a failed point.
  void hold_nothing();
  // After a failed point: no samples, and nothing of it kept.
  void forget_failed_point(Result& r);
};

at::ScalarType scalar_type(const std::string& dtype);

}  // namespace opbench

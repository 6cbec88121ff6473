// The Executor that runs points through LibTorch: builds each point's seeded inputs on the
// device, prepares the provider (outside timing), checks its output against the torch
// provider, then measures time (bench.hpp's protocol) or peak memory.
#pragma once
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>

#include "measure/device.hpp"
#include "providers/provider.hpp"
#include "measure/executor.hpp"

namespace opbench {

class TorchExecutor final : public Executor {
 public:
  explicit TorchExecutor(const std::string& device);
  Environment environment() override;
  std::string unavailable(const std::string& op, const std::string& provider) override;
  Result measure(const Point& point, const Timing& timing) override;
  void new_round() override;
  DeviceState device_state() override;

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
  std::set<std::string> checked_;  // providers of the current cell checked against torch
};

// ||a - b|| / ||b|| over every output, in float32 (the largest of the outputs).
double relative_error(const std::vector<at::Tensor>& out, const std::vector<at::Tensor>& ref);
// The check's tolerance for a storage dtype: 1e-2 for bf16/fp16, 1e-5 for fp32.
double tolerance(const std::string& dtype);
at::ScalarType scalar_type(const std::string& dtype);

}  // namespace opbench

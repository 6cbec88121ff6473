// An executor for the torch-free tests of sweeps on several devices and shards: every point
// measured at once with samples from its x, a GPU of the given name, the cuda provider
// unavailable, the device's state known after each cell.
#pragma once
#include <string>
#include <utility>

#include "measure/executor.hpp"

namespace opbench {

class QuickExecutor : public Executor {
 public:
  explicit QuickExecutor(std::string gpu = "Fake GPU", std::string device = "cuda:0")
      : gpu_(std::move(gpu)), device_(std::move(device)) {}
  Environment environment() override {
    Environment e;
    e.device = device_;
    e.gpu = gpu_;
    e.peak_gbps = 1000;
    return e;
  }
  std::string unavailable(const std::string&, const std::string& provider) override {
    return provider == "cuda" ? "no GPU here" : "";
  }
  Result measure(const Point& p, const Timing&) override {
    Result r;
    r.unit = p.metric() == "memory" ? "MiB" : "ms";
    r.samples = {double(p.x_value) / 1000, double(p.x_value) / 1000 * 1.25, 1.0 / 3};
    r.stats = summarize(r.samples);
    r.bytes = 1e6;
    r.gbps = 0.1 + 1e-17;
    return r;
  }
  DeviceState device_state() override { return DeviceState{true, 1980, 2619, 1980, 41.5, 120.25, 4, false}; }

 private:
  std::string gpu_, device_;
};

}  // namespace opbench

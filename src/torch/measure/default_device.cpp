#include "torch/measure/default_device.hpp"

#include "torch/measure/device.hpp"

namespace opbench {

std::string default_device() { return cuda_present() ? "cuda" : "cpu"; }

}  // namespace opbench

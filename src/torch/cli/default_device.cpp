// The device a command measures on when none is named (cli.hpp): it needs LibTorch, so it
// lives with the commands that measure (opbench-measure).
#include "cli/cli.hpp"
#include "torch/measure/device.hpp"

namespace opbench {

std::string default_device() { return cuda_present() ? "cuda" : "cpu"; }

}  // namespace opbench

// The devices of a sweep on several (`sweep --devices`): one worker process each, named as the
// run's points record them; and the check that they are one GPU model. Torch-free.
#pragma once
#include <string>
#include <vector>

#include "store/store.hpp"

namespace opbench {

// One worker: the device it opens and its name in the run: the device, or for the CPU named
// again, cpu#2, cpu#3 ... (only the CPU may be named twice: its workers share its cores).
struct WorkerSlot {
  std::string name, device;
};

// --devices: "all" (cuda:0 to cuda:{cuda_count - 1}) or a comma-separated list of cpu, cuda and
// cuda:N. InputError naming `option` for an empty list, an unknown name, a CUDA device that is
// not present (cuda_count of them are) or named twice, and the CPU beside CUDA devices.
std::vector<WorkerSlot> parse_devices(const std::string& text, int cuda_count, const std::string& option = "--devices");

// The devices as --devices repeats them ("cuda:0,cuda:1", "cpu,cpu").
std::string devices_text(const std::vector<WorkerSlot>& slots);

// Throws InputError naming `option` when the devices are not all one model (RunDevice::gpu),
// listing each device's, unless `allow_mixed`.
void check_one_model(const std::vector<RunDevice>& devices, bool allow_mixed, const std::string& option);

}  // namespace opbench

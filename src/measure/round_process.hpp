// A worker process's index among the processes a cell's rounds are spread over (round r in
// process r mod N: sweep/round_processes.hpp, sweep/ab_measurer.hpp), set in its environment by
// the parent; unset: process 0. OPBENCH_PLANT's `@I` reads it (measure/torch_plant.hpp).
#pragma once

namespace opbench {

constexpr const char* kRoundProcessVariable = "OPBENCH_ROUND_PROCESS";

}  // namespace opbench

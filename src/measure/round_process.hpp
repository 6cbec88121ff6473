// A worker process's index among the processes a cell's rounds are spread over (round r in
// process r mod N: sweep/round_processes.hpp, sweep/ab_measurer.hpp), set in its environment by
// the parent; unset: process 0. OPBENCH_PLANT's `@I` reads it (torch/measure/torch_plant.hpp).
#pragma once
#include <cstdlib>

namespace opbench {

constexpr const char* kRoundProcessVariable = "OPBENCH_ROUND_PROCESS";

// This process's index (0 where the variable is unset).
inline int round_process_index() {
  const char* index = std::getenv(kRoundProcessVariable);
  return index ? std::atoi(index) : 0;
}

}  // namespace opbench

// Faults and slowdowns planted into providers' calls on purpose, to test that the check fails a
// wrong output and that a diff finds a slower provider (OPBENCH_PLANT; docs/cli.md):
//
//   OPBENCH_PLANT="PROVIDER:KIND[,PROVIDER:KIND ...]"   PROVIDER a provider's name, or * for all
//
//   element   the output's middle element (flat index numel / 2) off by the output's root mean
//             square (by one where the output is all zeros): one wrong element
//   scale     every output element times 1.05: a wrong scale
//   tail      the elements past the output's last whole block of 256 (in memory order) left
//             holding what the kernel did not write (here the value the element fault adds): a
//             dropped tail block, which shows where the element count is no multiple of 256
//   slow=F    after each call the host busy-waits F times the call's own time: a provider
//             1 + F times slower (on a CPU, whose calls end when they return)
//
// A planted call returns new tensors (the provider's own output, e.g. an input returned as
// is, is never changed). The run records the variable with the tuning variables, so a diff
// warns that the runs ran differently.
#pragma once
#include <string>
#include <vector>

#include "providers/provider.hpp"

namespace opbench {

constexpr const char* kPlantVariable = "OPBENCH_PLANT";

struct Plant {
  std::string provider;  // a name, or "*"
  enum Kind { element, scale, tail, slow } kind = element;
  double slow_fraction = 0;  // slow=F
};

// The plants of a spec as above; throws InputError naming OPBENCH_PLANT for a malformed one.
std::vector<Plant> parse_plants(const std::string& spec);
// The plants of $OPBENCH_PLANT (none when unset).
std::vector<Plant> plants_from_environment();

// `call` with the plants that name `provider` applied (`call` itself when none does).
Call planted(const std::vector<Plant>& plants, const std::string& provider, Call call);
// Whether a plant that changes outputs (not a slowdown) names `provider`.
bool alters_output(const std::vector<Plant>& plants, const std::string& provider);

// The faults as they act on one output (exposed for tests).
at::Tensor plant_fault(const at::Tensor& out, Plant::Kind kind);

}  // namespace opbench

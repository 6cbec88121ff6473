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
//   slow=F    a provider 1 + F times slower. On a CPU, whose calls end when they return, the
//             host busy-waits F times the call's own time after each call. On a GPU a wait on
//             the host would hide behind the queued calls (the samples are queued back to
//             back), and a kernel added after the call costs a launch of its own (about a
//             microsecond, more than 3% of a 20 us call): the clock's readings of the
//             provider's calls are stretched instead, every sample times 1 + F, after the
//             samples are taken. So the planted provider's noise is the real one, its median
//             1 + F times as long (what a test of the verdicts needs).
//
// A kind followed by `@I` (e.g. `torch:slow=0.3@1`) acts only in round process I, the worker
// process whose kRoundProcessVariable is I (measure/executor.hpp; unset: 0): an offset that one
// process carries through all its rounds, as a process's placement or launch path can.
//
// A planted call returns new tensors (the provider's own output, e.g. an input returned as
// is, is never changed). The run records the variable with the tuning variables, so a diff
// warns that the runs ran differently.
#pragma once
#include <string>
#include <vector>

#include "measure/round_process.hpp"
#include "torch/providers/provider.hpp"

namespace opbench {

constexpr const char* kPlantVariable = "OPBENCH_PLANT";

struct Plant {
  std::string provider;  // a name, or "*"
  enum Kind { element, scale, tail, slow } kind = element;
  double slow_fraction = 0;  // slow=F
  int process = -1;          // @I: only in round process I; -1 every process
};

// The plants of a spec as above; throws InputError naming OPBENCH_PLANT for a malformed one.
std::vector<Plant> parse_plants(const std::string& spec);
// The plants of those that act in round process `process`.
std::vector<Plant> plants_in_process(const std::vector<Plant>& plants, int process);
// The plants of $OPBENCH_PLANT (none when unset) that act in this process.
std::vector<Plant> plants_from_environment();

// `call` with the plants that name `provider` applied (`call` itself when none does). On a
// device whose clock queues the calls (`queued`: a GPU) the slow plants are left to
// planted_stretch.
Call planted(const std::vector<Plant>& plants, const std::string& provider, Call call, bool queued = false);
// What a GPU's samples of `provider` are multiplied by: the product of 1 + F over the slow
// plants that name it (1 when none does).
double planted_stretch(const std::vector<Plant>& plants, const std::string& provider);
// Whether a plant that changes outputs (not a slowdown) names `provider`.
bool alters_output(const std::vector<Plant>& plants, const std::string& provider);

// The faults as they act on one output (exposed for tests).
at::Tensor plant_fault(const at::Tensor& out, Plant::Kind kind);

}  // namespace opbench

// The runs of a sweep command, one per config in turn, on the measurers of `Where` (one
// process, one set of workers for them all): the providers' packages built first for every
// config, then each run measured and stored, its outcome and report printed.
#pragma once
#include <string>
#include <vector>

#include "sweep/prepared.hpp"
#include "sweep/sweep_request.hpp"
#include "sweep/sweep_stops.hpp"
#include "torch/sweep/where.hpp"

namespace opbench {

// Measures each config's run (`commit`: the tree's, for every run); stops at the first run
// interrupted (130) or left incomplete (3); a failure goes on up. The exit status.
int measure_configs(const SweepRequest& request, std::vector<Prepared>& configs, Where& where, SweepStops& stops,
                    const std::string& commit);

// "interrupted before the run started: nothing stored"; 130.
int stopped_before_runs();

}  // namespace opbench

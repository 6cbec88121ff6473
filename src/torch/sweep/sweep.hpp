// A sweep command from its request to its exit status: its configs loaded, expanded and
// narrowed, where they are measured opened once for them all (torch/sweep/where.hpp), what
// cannot run there dropped, then either the dry run's listing or one run per config measured
// and stored (torch/sweep/measure_configs.hpp). A first signal finishes the table cell under way
// and ends the run interrupted, a second marks it so at once (sweep/sweep_stops.hpp).
#pragma once
#include <string>

#include "sweep/sweep_request.hpp"

namespace opbench {

// Runs the sweep `request` asks for (`source_dir`: the tree whose commit the runs record); the
// exit status. Throws InputError and RuntimeFailure as the command reports them.
int sweep(SweepRequest request, const std::string& source_dir);

}  // namespace opbench

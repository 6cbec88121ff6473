// `opbench sweep CONFIG... --worker --device D [--providers LIST]`: one worker of a sweep
// measured by workers (on several devices, or on one GPU) or one of its round processes,
// started by its parent sweep (sweep/workers.hpp, sweep/round_processes.hpp) with its input and
// output on pipes to it. It reads every config of the command (a suite's).
#pragma once
#include <string>

#include "sweep/sweep_request.hpp"

namespace opbench {

// The environment entry a parent gives its workers (its pid): a worker whose parent is gone
// ends instead of measuring for nobody.
std::string worker_parent_env();

// Opens the device (`request.shape.device`), says hello and answers cells of its configs'
// points (of `request.shape.providers`, all when empty) until the parent closes its input; the
// exit status (0, 2 for bad input, 3 for a device failure, 130 after a signal).
int run_sweep_worker(const SweepRequest& request);

}  // namespace opbench

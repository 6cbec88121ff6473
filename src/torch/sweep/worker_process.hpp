// `opbench sweep - --worker --device D`: one worker of a sweep measured by workers (on several
// devices, or on one GPU), one of its round processes or one side's of `opbench ab`, started by
// its parent (sweep/workers.hpp, sweep/round_processes.hpp, sweep/ab_measurer.hpp) with its
// input and output on pipes to it. It reads no config: its parent tells it the configs and
// hands it the points (worker protocol 2, sweep/worker_protocol.hpp). Given configs (`opbench
// sweep CONFIG... --worker --device D --max-points N [--providers LIST]`, as a parent of a build
// before protocol 2 starts it) it reads and expands each and speaks protocol 1.
#pragma once
#include <string>

#include "sweep/sweep_request.hpp"

namespace opbench {

// The environment entry a parent gives its workers (its pid): a worker whose parent is gone
// ends instead of measuring for nobody.
std::string worker_parent_env();

// Opens the device (`request.shape.device`), says hello and answers cells of its configs'
// points until the parent closes its input; the exit status (0, 2 for bad input, 3 for a
// device failure, 130 after a signal).
int run_sweep_worker(const SweepRequest& request);

}  // namespace opbench

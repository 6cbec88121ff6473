// The lines a sweep command prints of what it measured: each run's outcome, and for a suite or
// several devices the command's summary with each device's share. Torch-free.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "record/run.hpp"
#include "sweep/runner.hpp"

namespace opbench {

// "run ID: N points measured, ... (DB)".
void print_outcome(const SweepOutcome& r, const std::string& db, std::ostream& log);
// The runs the command made, its points and time, then each device's share over the command.
void print_summary(const std::vector<SweepOutcome>& runs, const std::vector<RunDevice>& shares, double seconds,
                   std::ostream& log);

}  // namespace opbench

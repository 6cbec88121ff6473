// The smallest change that counts when nothing else is asked for: diffs, history steps, the
// site's verdicts. Inside it is a fraction; the command line takes it in percent
// (cli/cli.hpp's kDefaultThresholdPct). Torch-free.
#pragma once

namespace opbench {

constexpr double kDefaultThreshold = 0.05;

}  // namespace opbench

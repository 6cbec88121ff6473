// The configs a sweep command names, loaded and expanded, each with the options its run is
// measured with: the shape given, or for --resume the resumed run's stored options (checked
// against the shape given), the suite taken from that run's config on. Torch-free.
#pragma once
#include <vector>

#include "sweep/prepared.hpp"
#include "sweep/sweep_request.hpp"

namespace opbench {

// Each config of `request` (suite files read), from the resumed run's on. InputError for a
// resumed run that is not in the database or measured none of the configs.
std::vector<Prepared> load_configs(const SweepRequest& request);

}  // namespace opbench

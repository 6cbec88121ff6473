// The configs of a measuring command (sweep, ab) narrowed by --providers and --filter: one
// config strictly (a name it does not list, a filter matching none of its titles, is an input
// error), a suite leniently (a config with none of them is left out, a line each). Torch-free.
#pragma once
#include <ostream>
#include <vector>

#include "sweep/prepared.hpp"

namespace opbench {

// --providers and --filter (each config's options) on one config.
void filter_config(Prepared& p);
// --providers and --filter (the last config's options) over a suite: each provider named must
// be one of some config's; `first`: the configs before it keep their own (a resumed run's
// stored) options. InputError when nothing is left to measure.
void filter_suite(std::vector<Prepared>& ps, size_t first, std::ostream& log);

}  // namespace opbench

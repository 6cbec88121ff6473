// One config of a measuring command as the command shapes it: loaded and expanded, with the
// options its run is measured and stored with, and what a resumed run stores already.
// Torch-free.
#pragma once
#include <cstdint>
#include <set>
#include <string>

#include "config/config.hpp"
#include "points/points.hpp"
#include "record/run_options.hpp"

namespace opbench {

struct Prepared {
  Config cfg;
  Sweep sw;
  RunOptions options;
  std::set<std::string> done;  // the keys of the points a resumed run stores already
  int64_t resume = 0;          // the run it continues (--resume), 0: a new run
};

}  // namespace opbench

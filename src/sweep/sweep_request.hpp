// What one `opbench sweep` command asks for: the one set of options its command line fills,
// its planning and its runs read, and its workers are started with (a worker's command line is
// written from it and read back into it). Torch-free.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "points/points.hpp"
#include "record/run_options.hpp"

namespace opbench {

struct SweepRequest {
  std::vector<std::string> configs;  // configs and suite files, as given
  std::string db;
  // The runs' shape as given (its config left empty): --device, --providers, --label, --filter;
  // --devices and --shard once read (read_given_shape).
  RunOptions shape;
  // --devices and --shard as the command line spells them, and whether each was given (an empty
  // value is refused, not ignored).
  struct Spelled {
    std::string devices, shard;
    bool devices_given = false, shard_given = false;
  } spelled;
  int64_t resume = 0;  // --resume: the run to continue, 0: new runs
  size_t max_points = kDefaultMaxPoints;
  bool allow_mixed = false;
  bool dry_run = false;
  bool worker = false;  // this process is a worker of a parent sweep
  bool worker_protocol = false;  // print the worker protocol this build speaks (sweep/worker_protocol.hpp)
  std::string progress = "auto";
  // Where the reports go: printed unless `print` is off, and all of them also to `out`.
  struct Reports {
    bool print = true;
    std::string out;
  } reports;
};

}  // namespace opbench

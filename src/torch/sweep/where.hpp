// Where the runs of one `opbench sweep` command are measured, opened once for all its configs
// (a suite's): one start-up, one bandwidth copy, one set of workers. On a GPU every cell is
// measured in a worker process pinned to the CPUs local to its GPU, the command's own process
// only coordinating and storing, whether on one device or several (`--devices`); on the CPU,
// and on a GPU whose configs interleave cells or spread rounds over processes, in this process
// (its rounds spread over the round processes timing.processes asks for).
#pragma once
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "points/points.hpp"
#include "sweep/measurer.hpp"
#include "sweep/prepared.hpp"
#include "sweep/sweep_request.hpp"
#include "sweep/worker_protocol.hpp"

namespace opbench {

// Where the configs are measured: in this process, or on worker processes (open_where decides).
class Where {
 public:
  virtual ~Where() = default;
  // Starts what measures (the workers, the round processes) once every config is known; false
  // when a signal came first.
  virtual bool start(const std::vector<Prepared>& configs) = 0;
  // The providers of config `i` that cannot run here, dropped from its sweep (a line each on
  // `log`); their names.
  virtual std::vector<std::string> drop_unavailable(size_t i, Sweep& sw, std::ostream& log) = 0;
  // What measures config `i`'s run (its cells, with its timing).
  virtual CellMeasurer& measurer(size_t i, const Config& cfg) = 0;
  // The devices the providers' once-per-table work is done for (one per GPU model).
  virtual std::vector<std::string> table_devices() = 0;
  // Whether calls that never return are watched in this process (they are in the workers).
  virtual bool watch_hangs() const = 0;
  // Each device's share over the command, with its placement (for the summary).
  virtual std::vector<RunDevice> shares() = 0;
};

// Decides how the configs are measured (on the devices or device of the first one's options:
// a resumed run's own; with `request.dry_run` the first device, in this process), resolves
// what their timing leaves to the device (the same for every config: one command times with
// one thread count and one set of round processes; InputError naming the config otherwise)
// and opens it.
std::unique_ptr<Where> open_where(std::vector<Prepared>& configs, const SweepRequest& request);

// How a parent speaks to a worker of `protocol` about `configs` (sweep/worker_protocol.hpp):
// protocol 2, each config's path, op, timing as its text gives it and the providers its sweep
// measures; protocol 1, the configs' hashes.
WorkerSetup worker_setup(const std::vector<Prepared>& configs, int protocol = kWorkerProtocol);

// The command line of a worker or round process: this opbench (or `binary`), `sweep - --worker
// --device D` (protocol 2: `-`, the configs come on its input), or for a worker of protocol 1
// `sweep CONFIG... --worker --device D --max-points N [--providers LIST]`.
std::vector<std::string> worker_command(const std::vector<Prepared>& configs, const std::string& device,
                                        size_t max_points, const std::string& binary = "/proc/self/exe",
                                        int protocol = kWorkerProtocol);

}  // namespace opbench

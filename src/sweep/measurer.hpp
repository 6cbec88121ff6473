// What measures a sweep's table cells: the Executor of this process, one block of cells
// (Timing::interleave) after another (LocalMeasurer), or worker processes, one per device,
// taking the cells from one queue (sweep/workers.hpp). The sweep loop (runner.hpp) hands them
// the cells and stores each as it comes back. Torch-free.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "core/placement.hpp"
#include "measure/executor.hpp"
#include "store/store.hpp"
#include "sweep/cell.hpp"

namespace opbench {

struct CellHooks {
  // True once no more cells are to be started (the cells under way finish).
  std::function<bool()> interrupted;
  // A cell starts on `device` (the name its points record); the cells of a block all start
  // together, before the block's first measure.
  std::function<void(const CellPoints& points, const std::string& device)> begin;
  // A cell's points are measured (one result per point, in order), on `device`, in `seconds`.
  // Once for each point that is measured or given up on; never for a point left unmeasured by
  // a stop.
  std::function<void(const CellPoints& points, const CellResult& got, const std::string& device, double seconds)> done;
  // Watches the measures that run in this process (MeasureGuard); empty: unwatched.
  MeasureGuard guard;
  // The seconds a cell is expected to take: workers take the longest first (empty: the cells in
  // their order). One device in this process measures them in order whatever it says.
  std::function<double(const CellPoints& points)> expected_seconds;
};

class CellMeasurer {
 public:
  virtual ~CellMeasurer() = default;
  // The environment the run records (with several devices: the first one's, its device the
  // list of them).
  virtual Environment environment() = 0;
  // Each device measuring, with its model, measured peak bandwidth, placement and its share of
  // the cells measured so far (since the run started, or since use_config for workers).
  virtual std::vector<RunDevice> devices() = 0;
  // Each cell's points come back once for each side (CellResult::side; hooks.done once a side):
  // one, or two for a paired comparison (opbench ab), each side a run of its own with its own
  // environment and devices.
  virtual size_t sides() { return 1; }
  virtual Environment side_environment(size_t /*side*/) { return environment(); }
  virtual std::vector<RunDevice> side_devices(size_t /*side*/) { return devices(); }
  virtual void measure(const std::vector<CellPoints>& cells, const CellHooks& hooks) = 0;
};

// One device in this process: the cells in order on `ex`, a block at a time through
// measure_cells; a stop ends the block under way after the cell's round in hand, its cells
// whose rounds are not all measured left unmeasured (a resume measures them).
class LocalMeasurer final : public CellMeasurer {
 public:
  LocalMeasurer(Executor& ex, std::string device, const Timing& timing, Placement placement = {})
      : ex_(ex), device_(std::move(device)), timing_(timing), placement_(std::move(placement)) {}
  Environment environment() override { return ex_.environment(); }
  // This device, with this process's placement and its share.
  std::vector<RunDevice> devices() override;
  void measure(const std::vector<CellPoints>& cells, const CellHooks& hooks) override;

 private:
  Executor& ex_;
  std::string device_;
  const Timing& timing_;
  Placement placement_;
  RunDevice share_;  // its cells, points, seconds and calibration since the run started
};

// A device's record from where its process runs (cpus, memory, threads; `pinned` as told).
void set_placement(RunDevice& d, const Placement& p, bool pinned);

}  // namespace opbench

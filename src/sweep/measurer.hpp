// What measures a sweep's table cells: the Executor of this process, one block of cells
// (Timing::interleave) after another (LocalMeasurer), or worker processes, one per device,
// taking the blocks from one queue (sweep/workers.hpp). The sweep loop (runner.hpp) hands them the cells and stores each as it
// comes back. Torch-free.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "measure/executor.hpp"
#include "store/store.hpp"
#include "sweep/cell.hpp"

namespace opbench {

struct CellHooks {
  // True once no more cells are to be started (the cells under way finish).
  std::function<bool()> stop;
  // A cell starts on `device` (the name its points record); the cells of a block all start
  // together, before the block's first measure.
  std::function<void(const CellPoints& points, const std::string& device)> begin;
  // A cell's points are measured (one result per point, in order), on `device`, in `seconds`.
  // Once for each point that is measured or given up on; never for a point left unmeasured by
  // a stop.
  std::function<void(const CellPoints& points, const CellResult& got, const std::string& device, double seconds)> done;
  // Watches the measures that run in this process (MeasureGuard); empty: unwatched.
  MeasureGuard guard;
};

class CellMeasurer {
 public:
  virtual ~CellMeasurer() = default;
  // The environment the run records (with several devices: the first one's, its device the
  // list of them).
  virtual Environment environment() = 0;
  // Each device with its model and measured peak bandwidth, when there are several workers;
  // empty for one device in this process.
  virtual std::vector<RunDevice> devices() { return {}; }
  virtual void measure(const std::vector<CellPoints>& cells, const CellHooks& hooks) = 0;
};

// One device in this process: the cells in order on `ex`, a block at a time through
// measure_cells; a stop ends the block under way after the cell's round in hand, its cells
// whose rounds are not all measured left unmeasured (a resume measures them).
class LocalMeasurer final : public CellMeasurer {
 public:
  LocalMeasurer(Executor& ex, std::string device, const Timing& timing)
      : ex_(ex), device_(std::move(device)), timing_(timing) {}
  Environment environment() override { return ex_.environment(); }
  void measure(const std::vector<CellPoints>& cells, const CellHooks& hooks) override;

 private:
  Executor& ex_;
  std::string device_;
  const Timing& timing_;
};

}  // namespace opbench

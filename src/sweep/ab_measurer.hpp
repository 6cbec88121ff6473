// The measurer of `opbench ab`: two sides (base and head: two builds, or one build with two
// environments), each `processes` worker processes on every device (MeasureWorker, its command
// the side's own binary; round r of a cell in the side's process r mod N), and every table
// cell measured by both sides of one device with their rounds interleaved (paired_cell.hpp).
// The devices take the cells from one queue, longest expected first, a thread each; a cell's two sides never leave their device. Each cell comes back once
// per side (CellResult::side), and each side is a run of its own (CellMeasurer::sides).
// Torch-free.
#pragma once
#include <array>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "sweep/devices.hpp"
#include "sweep/measure_worker.hpp"
#include "sweep/measurer.hpp"
#include "sweep/paired_cell.hpp"

namespace opbench {

struct AbOptions {
  std::vector<WorkerSlot> slots;
  // A side's worker on a slot's device: its command line (argv[0] the side's binary) and what
  // its environment gets besides the parent's ("NAME=value").
  std::function<std::vector<std::string>(size_t side, const WorkerSlot& slot)> command;
  std::array<std::vector<std::string>, 2> env;
  // The worker processes a side has on every device, its rounds spread over them; each worker's
  // environment also gets kRoundProcessVariable=I, its index (0 .. processes - 1).
  int processes = 1;
  std::function<std::vector<int>(const WorkerSlot& slot)> cpus;  // unset: not pinned
  std::array<WorkerSetup, 2> setup;        // a side's workers' protocol, and what they are told of the configs
  std::vector<Timing> timings;             // each config's, resolved for the device
  double same_within = 0;                  // the paired diff's threshold: a pair decided SAME stops
  bool allow_mixed = false;                // several GPU models among the slots
  double start_timeout_s = 600;
  double grace_s = 30;                     // past a point's budget before its call counts as hung
};

class AbMeasurer final : public CellMeasurer {
 public:
  explicit AbMeasurer(AbOptions opt);
  ~AbMeasurer() override;

  // Starts every worker (side by side) and waits for their hellos: what MeasureWorker::start
  // throws, and InputError naming --devices for several GPU models. False when `interrupted` turned
  // true first.
  bool start(const std::function<bool()>& interrupted);
  // The providers of config `config` that a side cannot run: provider -> "base: DEVICE: why".
  std::map<std::string, std::string> unavailable(size_t config) const;
  // The config whose cells measure() gets next, and whose runs the shares count from here on.
  void use_config(size_t config);

  Environment environment() override { return side_environment(kBase); }
  std::vector<RunDevice> devices() override { return side_devices(kBase); }
  size_t sides() override { return 2; }
  Environment side_environment(size_t side) override;
  std::vector<RunDevice> side_devices(size_t side) override;
  void measure(const std::vector<CellPoints>& cells, const CellHooks& hooks) override;

  std::vector<pid_t> pids() const;

 private:
  struct Share {
    int64_t cells = 0, points = 0;
    double busy_s = 0;
    Calibration calibration;
  };
  struct Slot {
    WorkerSlot slot;
    std::array<std::vector<std::unique_ptr<MeasureWorker>>, 2> workers;  // a side's processes
    std::array<Share, 2> share;  // since use_config
  };
  struct Queue;
  void serve(Slot& slot, Queue& q, const CellHooks& hooks);
  void count(Slot& slot, std::array<WorkerExecutor, 2>& ex, const std::array<CellResult, 2>& got, size_t points);
  template <class F> void each_worker(F f) {
    for (auto& s : slots_)
      for (auto& side : s->workers)
        for (auto& w : side) f(*w);
  }

  AbOptions opt_;
  std::vector<std::unique_ptr<Slot>> slots_;
  size_t config_ = 0;
  std::mutex mu_;  // the hooks, the shares
  void (*old_sigpipe_)(int) = nullptr;
};

}  // namespace opbench

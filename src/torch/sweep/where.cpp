#include "torch/sweep/where.hpp"

#include <ATen/Parallel.h>

#include <algorithm>
#include <iostream>
#include <set>

#include "core/error.hpp"
#include "core/placement.hpp"
#include "sweep/devices.hpp"
#include "sweep/resume.hpp"
#include "sweep/round_processes.hpp"
#include "sweep/runner.hpp"
#include "sweep/stop_signals.hpp"
#include "sweep/workers.hpp"
#include "torch/measure/default_device.hpp"
#include "torch/measure/device.hpp"
#include "torch/measure/threads.hpp"
#include "torch/measure/torch_executor.hpp"
#include "torch/sweep/open_executor.hpp"
#include "torch/sweep/worker_process.hpp"

namespace opbench {

namespace {

// Every config times with the same `field` (threads, processes): one command opens its device
// once. InputError naming the first config that differs.
void check_same(const std::vector<Prepared>& ps, int Timing::*field, const std::string& key, const std::string& why) {
  for (const auto& p : ps)
    if (p.cfg.timing.*field != ps.front().cfg.timing.*field)
      throw InputError(p.cfg.path, key,
                       "is " + std::to_string(p.cfg.timing.*field) + " where " + ps.front().cfg.path + " has " +
                           std::to_string(ps.front().cfg.timing.*field) + ": " + why + " (sweep them apart)");
}

// Whether a worker can measure the config on `device` as the config asks: each cell whole in
// one process (no interleaving, no round processes).
bool cells_whole(const Config& cfg, const std::string& device) {
  Timing t = cfg.timing;
  resolve_device_defaults(t, device);
  return t.interleave == 1 && t.processes == 1;
}

// The providers any config measures: what each worker checks it can run.
std::vector<std::string> all_providers(const std::vector<Prepared>& ps) {
  std::set<std::string> seen;
  std::vector<std::string> out;
  for (const auto& p : ps)
    for (const auto& name : sweep_providers(p.cfg, p.sw))
      if (seen.insert(name).second) out.push_back(name);
  return out;
}

// In this process: the device opened once, its rounds spread over the round processes.
class InProcess final : public Where {
 public:
  InProcess(std::vector<Prepared>& ps, const std::string& device, size_t max_points)
      : device_(canonical_device(device)), max_points_(max_points) {
    ex_ = open_executor(ps.front().cfg, device);
    for (size_t i = 1; i < ps.size(); ++i) adopt_config(ps[i].cfg, *ex_, device, ps.front().cfg.timing.threads);
    check_same(ps, &Timing::processes, "timing.processes", "one command spreads its rounds over one set of processes");
    placement_ = this_placement();
    placement_.threads = at::get_num_threads();
  }
  // The round processes start with the first measurer, once every config's providers are
  // known (each process checks only those).
  bool start(const std::vector<Prepared>& ps) override {
    configs_ = &ps;
    return true;
  }
  std::vector<std::string> drop_unavailable(size_t, Sweep& sw, std::ostream& log) override {
    return opbench::drop_unavailable(sw, *ex_, log);
  }
  CellMeasurer& measurer(size_t i, const Config& cfg) override {
    if (!spread_ && cfg.timing.processes > 1) start_round_processes(cfg.timing.processes);
    if (spread_) spread_->use_config(i);
    Executor& ex = spread_ ? static_cast<Executor&>(*spread_) : *ex_;
    local_ = std::make_unique<LocalMeasurer>(ex, device_, cfg.timing, placement_);
    return *local_;
  }
  std::vector<std::string> table_devices() override { return {device_}; }
  bool watch_hangs() const override { return true; }
  std::vector<RunDevice> shares() override { return {}; }

 private:
  void start_round_processes(int n) {
    RoundProcessOptions o;
    o.processes = n;
    o.command = worker_command(*configs_, device_, max_points_);
    o.env = {worker_parent_env()};
    o.setup = worker_setup(*configs_);
    for (const auto& p : *configs_) o.ops.push_back(p.cfg.op);
    spread_ = std::make_unique<RoundProcesses>(*ex_, o);
  }

  const std::vector<Prepared>* configs_ = nullptr;
  std::string device_;
  size_t max_points_;
  std::unique_ptr<TorchExecutor> ex_;
  std::unique_ptr<RoundProcesses> spread_;
  std::unique_ptr<LocalMeasurer> local_;
  Placement placement_;
};

// A worker per device, each pinned to the CPUs local to its GPU.
class OnWorkers final : public Where {
 public:
  OnWorkers(std::vector<Prepared>& ps, std::vector<WorkerSlot> slots, const SweepRequest& request)
      : slots_(std::move(slots)), max_points_(request.max_points), allow_mixed_(request.allow_mixed) {
    for (auto& p : ps) {
      if (slots_.size() > 1 && (p.cfg.timing.interleave > 1 || p.cfg.timing.processes > 1))
        std::cerr << "note: " << p.cfg.path
                  << ": with --devices each device's worker measures a table cell whole in its one process: "
                     "timing.interleave and timing.processes are taken as 1\n";
      resolve_device_defaults(p.cfg.timing, slots_.front().device);  // as each worker does (open_executor)
      p.cfg.timing.interleave = p.cfg.timing.processes = 1;
    }
    check_same(ps, &Timing::threads, "timing.threads", "one command times with one thread count");
    const int threads = pin_threads(ps.front().cfg.timing.threads);  // the count recorded, and the packages'
    for (auto& p : ps) p.cfg.timing.threads = threads;
  }
  bool start(const std::vector<Prepared>& ps) override {
    PoolOptions o;
    o.slots = slots_;
    std::map<std::string, std::vector<std::string>> commands;
    for (const auto& slot : slots_) commands[slot.device] = worker_command(ps, slot.device, max_points_);
    o.command = [commands](const WorkerSlot& slot) { return commands.at(slot.device); };
    o.cpus = [](const WorkerSlot& slot) { return local_cpus(slot.device); };
    o.env = {worker_parent_env()};
    o.setup = worker_setup(ps);
    double max_point_s = 0;
    for (const auto& p : ps) max_point_s = std::max(max_point_s, p.cfg.timing.max_point_s);
    o.allow_mixed = allow_mixed_;
    o.point_timeout_s = max_point_s + 2 * SweepOptions().hang_grace_s;
    pool_ = std::make_unique<WorkerPool>(o);
    return pool_->start([] { return interrupt_requested().load(); });
  }
  std::vector<std::string> drop_unavailable(size_t i, Sweep& sw, std::ostream& log) override {
    return drop_providers(sw, pool_->unavailable(i), log);
  }
  CellMeasurer& measurer(size_t i, const Config&) override {
    pool_->use_config(i);
    return *pool_;
  }
  // The first device of each GPU model among the workers.
  std::vector<std::string> table_devices() override {
    std::set<std::string> models;
    std::vector<std::string> out;
    for (const auto& d : pool_->devices())
      for (const auto& slot : slots_)
        if (slot.name == d.device && models.insert(d.gpu).second) out.push_back(slot.device);
    return out;
  }
  bool watch_hangs() const override { return false; }
  std::vector<RunDevice> shares() override { return pool_->command_shares(); }

 private:
  std::vector<WorkerSlot> slots_;
  size_t max_points_;
  bool allow_mixed_;
  std::unique_ptr<WorkerPool> pool_;
};

bool on_gpu(const std::string& device) { return device.rfind("cuda", 0) == 0; }

}  // namespace

WorkerSetup worker_setup(const std::vector<Prepared>& configs, int protocol) {
  WorkerSetup s;
  s.protocol = protocol;
  for (const auto& p : configs) {
    s.config_hashes.push_back(p.cfg.hash);
    // The timing block its file gives (the worker reads it as a config's own and decides what it
    // leaves to the device, as it would reading the file).
    s.configs.push_back({p.cfg.path, p.cfg.op, timing_block(p.cfg.text, p.cfg.path), sweep_providers(p.cfg, p.sw)});
  }
  return s;
}

std::vector<std::string> worker_command(const std::vector<Prepared>& configs, const std::string& device,
                                        size_t max_points, const std::string& binary, int protocol) {
  if (protocol >= 2) return {binary, "sweep", "-", "--worker", "--device", device};  // told the configs
  std::vector<std::string> cmd = {binary, "sweep"};
  for (const auto& p : configs) cmd.push_back(p.cfg.path);
  for (const std::string& arg : {std::string("--worker"), std::string("--device"), device, std::string("--max-points"),
                                 std::to_string(max_points)})
    cmd.push_back(arg);
  const std::vector<std::string> providers = all_providers(configs);
  if (!providers.empty()) cmd.insert(cmd.end(), {"--providers", join_list(providers)});
  return cmd;
}

std::unique_ptr<Where> open_where(std::vector<Prepared>& ps, const SweepRequest& request) {
  const RunOptions& where = ps.front().options;
  const std::string device = !where.devices.empty() ? where.devices.front()
                             : where.device.empty() ? default_device()
                                                    : where.device;
  if (request.dry_run) return std::make_unique<InProcess>(ps, device, request.max_points);
  if (!where.devices.empty())
    return std::make_unique<OnWorkers>(ps, parse_devices(join_list(where.devices), cuda_device_count()), request);
  size_t whole = 0;
  for (const auto& p : ps) whole += cells_whole(p.cfg, device);
  if (!on_gpu(device) || whole == 0) return std::make_unique<InProcess>(ps, device, request.max_points);
  if (whole < ps.size())
    for (const auto& p : ps)
      if (!cells_whole(p.cfg, device))
        throw InputError(p.cfg.path, "timing",
                         "interleaves table cells or spreads rounds over processes, which the other configs do not: "
                         "one command measures its configs one way (sweep it apart)");
  return std::make_unique<OnWorkers>(ps, parse_devices(device, cuda_device_count()), request);
}

}  // namespace opbench

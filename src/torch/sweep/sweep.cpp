#include "torch/sweep/sweep.hpp"

#include <algorithm>
#include <iostream>
#include <memory>

#include "core/error.hpp"
#include "sweep/builds.hpp"
#include "sweep/config_filter.hpp"
#include "sweep/devices.hpp"
#include "sweep/load_configs.hpp"
#include "sweep/resume.hpp"
#include "sweep/shard.hpp"
#include "sweep/stop_signals.hpp"
#include "sweep/sweep_stops.hpp"
#include "torch/measure/default_device.hpp"
#include "torch/measure/device.hpp"
#include "torch/sweep/dry_run.hpp"
#include "torch/sweep/measure_configs.hpp"
#include "torch/sweep/where.hpp"

namespace opbench {

namespace {

// --devices read against the CUDA devices here (and refused beside --device), --shard read.
void read_spelled_shape(SweepRequest& a) {
  if (a.spelled.devices_given) {
    if (!a.shape.device.empty())
      throw InputError("--devices", a.spelled.devices,
                       "cannot be given with --device (--devices D measures on D through a worker process)");
    for (const auto& slot : parse_devices(a.spelled.devices, cuda_device_count())) a.shape.devices.push_back(slot.device);
  }
  if (a.spelled.shard_given) a.shape.shard = parse_shard(a.spelled.shard).text();
}

// The configs of the command, narrowed by --providers and --filter: one strictly, a suite
// leniently; for a suite, the command that sweeps it again is what a stop prints.
std::vector<Prepared> narrowed_configs(SweepRequest& a, SweepStops& stops, bool suite) {
  read_spelled_shape(a);
  std::vector<Prepared> ps = load_configs(a);
  if (!suite) {
    filter_config(ps.front());
    return ps;
  }
  filter_suite(ps, a.resume ? 1 : 0, std::cerr);
  stops.set_suite_command(sweep_command(a.configs, a.shape, a.db));
  return ps;
}

// A resumed run never loses a provider: one that cannot run here now is refused.
void refuse_dropped(int64_t resume, const std::vector<std::string>& dropped) {
  if (resume && !dropped.empty())
    throw InputError("--resume", std::to_string(resume),
                     "the run measures " + dropped.front() + ", which cannot run here (see above)");
}

// Drops what cannot run here from every config; a config of a suite left with nothing is
// skipped (a line; its index stays, as the workers know it), one alone is an input error.
void drop_unavailable_everywhere(std::vector<Prepared>& ps, Where& where, bool suite) {
  for (size_t i = 0; i < ps.size(); ++i) {
    Prepared& p = ps[i];
    refuse_dropped(p.resume, where.drop_unavailable(i, p.sw, std::cerr));
    if (p.options.devices.empty())
      p.options.device = canonical_device(p.options.device.empty() ? default_device() : p.options.device);
    p.options.providers = sweep_providers(p.cfg, p.sw);
    if (!p.sw.points.empty()) continue;
    if (!suite) throw InputError(p.cfg.path, "providers", "no provider can run here (see the lines above)");
    std::cerr << "skipping " << p.cfg.path << ": no provider of it can run here\n";
  }
}

// Lists what each config measures, on the first device of the first config's options.
int dry_run(const std::vector<Prepared>& ps, const std::string& db) {
  const RunOptions& options = ps.front().options;
  const std::string device = options.devices.empty() ? options.device : options.devices.front();
  print_dry_run(ps, db, device.empty() ? default_device() : device, std::max<size_t>(1, options.devices.size()));
  return kExitOk;
}

// The configs planned, where they are measured opened, then each run measured (or, for a dry
// run, listed); the exit status.
int plan_and_measure(SweepRequest& a, SweepStops& stops, const std::string& source_dir) {
  const bool suite = command_configs(a.configs).size() > 1;
  std::vector<Prepared> ps = narrowed_configs(a, stops, suite);
  // The tree's commit, read once (git runs as a child process) and before any worker starts.
  const std::string commit = a.dry_run ? "" : tree_commit(source_dir);
  const std::unique_ptr<Where> where = open_where(ps, a);
  if (!where->start(ps)) return stopped_before_runs();
  drop_unavailable_everywhere(ps, *where, suite);
  if (a.dry_run) return dry_run(ps, a.db);
  return measure_configs(a, ps, *where, stops, commit);
}

}  // namespace

int sweep(SweepRequest request, const std::string& source_dir) {
  // From the start: a signal while the device opens and the bandwidth is measured stops the
  // sweep before it measures anything (exit 130, whatever that signal broke on its way).
  static SweepStops stops;  // the signal thread's, for the life of the process
  stops.set_db(request.db);
  if (!request.dry_run) install_stop_signals([] { stops.stop_now(); });
  try {
    return plan_and_measure(request, stops, source_dir);
  } catch (const std::exception&) {
    if (!interrupt_requested().load() || stops.any_began()) throw;
    return stopped_before_runs();
  }
}

}  // namespace opbench

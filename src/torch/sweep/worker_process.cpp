#include "torch/sweep/worker_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <ATen/Parallel.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "core/error.hpp"
#include "core/lines.hpp"
#include "sweep/stop_signals.hpp"
#include "sweep/worker.hpp"
#include "torch/measure/torch_executor.hpp"
#include "torch/sweep/open_executor.hpp"

namespace opbench {

namespace {

constexpr const char* kParentVariable = "OPBENCH_WORKER_PARENT";

// The worker dies with its parent (a parent killed, or gone before this line ran).
void end_with_parent() {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  const char* parent = std::getenv(kParentVariable);
  if (parent && std::to_string(::getppid()) != parent) _exit(kExitRuntime);
}

// The answers go to a descriptor of their own; whatever else writes to stdout (a library's
// message) goes to stderr, so that it cannot break a line of the protocol.
int protocol_output() {
  const int out = ::fcntl(1, F_DUPFD_CLOEXEC, 3);
  ::dup2(2, 1);
  return out;
}

struct WorkerState {
  std::vector<WorkerConfig> configs;
  std::unique_ptr<TorchExecutor> ex;
};

// The sweep's points of the providers the parent measures (all when it names none).
void keep_providers(Sweep& sw, const std::vector<std::string>& providers) {
  if (providers.empty()) return;
  std::vector<Point> kept;
  for (auto& p : sw.points)
    if (std::find(providers.begin(), providers.end(), p.provider) != providers.end()) kept.push_back(p);
  sw.points = std::move(kept);
}

// Reads every config, opens the device once (with the first config's threads: a suite's
// configs agree on them) and says hello for them all.
WorkerHello open_device(WorkerState& m, const SweepRequest& a) {
  const std::string& device = a.shape.device;
  for (const auto& path : a.configs) {
    WorkerConfig c{load_config(path), {}};
    c.sw = expand(c.cfg, a.max_points);
    keep_providers(c.sw, a.shape.providers);
    m.configs.push_back(std::move(c));
  }
  m.ex = open_executor(m.configs.front().cfg, device);
  for (size_t i = 1; i < m.configs.size(); ++i)
    adopt_config(m.configs[i].cfg, *m.ex, device, m.configs.front().cfg.timing.threads);
  WorkerHello hello = worker_hello(*m.ex, m.configs, device);
  hello.placement.threads = at::get_num_threads();
  return hello;
}

}  // namespace

std::string worker_parent_env() { return std::string(kParentVariable) + "=" + std::to_string(::getpid()); }

int run_sweep_worker(const SweepRequest& a) {
  end_with_parent();
  const int out = protocol_output();
  install_stop_signals([] {});  // a second signal: the process ends at once
  WorkerState m;
  WorkerHello hello;
  hello.device = a.shape.device;
  int failed = 0;
  try {
    hello = open_device(m, a);
  } catch (const InputError& e) {
    hello.error = e.what();
    hello.input_error = true;
    failed = kExitUsage;
  } catch (const std::exception& e) {
    hello.error = e.what();
    failed = kExitRuntime;
  }
  if (!write_all(out, hello_line(hello)) || failed) return failed ? failed : kExitRuntime;
  WorkerLoop loop;
  loop.out = out;
  loop.interrupt = &interrupt_requested();
  return serve_cells(*m.ex, m.configs, loop);
}

}  // namespace opbench

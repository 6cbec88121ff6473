#include "torch/sweep/worker_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <ATen/Parallel.h>

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

// Whether its parent tells it the configs (`-`: they come on its input; protocol 2).
bool told_configs(const SweepRequest& a) { return a.configs == std::vector<std::string>{"-"}; }

// The configs it serves: those its command line names, read (protocol 1), else those its
// parent tells it in its first line (protocol 2; nothing else comes before the hello).
std::vector<WorkerConfig> worker_configs(const SweepRequest& a) {
  std::vector<WorkerConfig> out;
  if (!told_configs(a)) {
    for (const auto& path : a.configs) out.push_back(read_worker_config(path, a.max_points, a.shape.providers));
    return out;
  }
  std::string line;
  if (!LineReader(0).read_line(line)) throw InputError("the parent", "configs", "its input ended before them");
  for (const auto& c : parse_configs(line, "the parent")) out.push_back(told_worker_config(c));
  return out;
}

// Opens the device once (with the first config's threads: a suite's configs agree on them) and
// says hello for every config.
WorkerHello open_device(WorkerState& m, const SweepRequest& a, int protocol) {
  const std::string& device = a.shape.device;
  m.configs = worker_configs(a);
  m.ex = open_executor(m.configs.front().cfg, device);
  for (size_t i = 1; i < m.configs.size(); ++i)
    adopt_config(m.configs[i].cfg, *m.ex, device, m.configs.front().cfg.timing.threads);
  WorkerHello hello = worker_hello(*m.ex, m.configs, device, protocol);
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
  hello.protocol = told_configs(a) ? kWorkerProtocol : kConfigReadingProtocol;
  hello.device = a.shape.device;
  int failed = 0;
  try {
    hello = open_device(m, a, hello.protocol);
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

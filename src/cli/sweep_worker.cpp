#include "cli/sweep_worker.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>

#include "cli/stop_signals.hpp"
#include "core/error.hpp"
#include "core/lines.hpp"
#include "measure/threads.hpp"
#include "measure/torch_executor.hpp"
#include "sweep/worker.hpp"

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

struct Measuring {
  Config cfg;
  Sweep sw;
  std::unique_ptr<TorchExecutor> ex;
};

WorkerHello open_device(Measuring& m, const std::string& config, const std::string& device, size_t max_points) {
  m.cfg = load_config(config);
  m.sw = expand(m.cfg, max_points);
  m.ex = open_executor(m.cfg, device);
  return worker_hello(*m.ex, m.cfg, device);
}

}  // namespace

std::unique_ptr<TorchExecutor> open_executor(Config& cfg, const std::string& device) {
  resolve_device_defaults(cfg.timing, device);
  cfg.timing.threads = pin_threads(cfg.timing.threads);  // before any LibTorch work
  auto ex = std::make_unique<TorchExecutor>(device);
  const std::string no_flush = ex->device().flush_unsupported(cfg.timing.flush_l2);
  if (!no_flush.empty()) throw InputError(cfg.path, "timing.flush_l2", no_flush);
  return ex;
}

std::string worker_parent_env() { return std::string(kParentVariable) + "=" + std::to_string(::getpid()); }

int run_sweep_worker(const std::string& config, const std::string& device, size_t max_points) {
  end_with_parent();
  const int out = protocol_output();
  install_stop_signals([] {});  // a second signal: the process ends at once
  Measuring m;
  WorkerHello hello;
  hello.device = device;
  int failed = 0;
  try {
    hello = open_device(m, config, device, max_points);
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
  loop.stop = &stop_requested();
  return serve_cells(*m.ex, m.sw, m.cfg.timing, loop);
}

}  // namespace opbench

// A worker of a sweep on several devices for workers_test: the real worker loop
// (sweep/worker.hpp) on a fake executor. Usage: fake_worker CONFIG[,CONFIG...] DEVICE GPU.
// FAKE_DIE=X: measuring a point at x = X kills the process (SIGKILL), or only the first time
// with FAKE_DIE_ONCE=MARKER (a file made before dying); FAKE_HANG=X: such a call never returns;
// FAKE_SLEEP_MS: every measure sleeps that long; FAKE_HELLO_ERROR: the hello reports it.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
#include <thread>

#include "core/lines.hpp"
#include "quick_executor.hpp"
#include "sweep/worker.hpp"

using namespace opbench;

namespace {

int64_t env_x(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::atoll(v) : -1;
}

void die_if_asked(const Point& p) {
  if (p.x_value != env_x("FAKE_DIE")) return;
  if (const char* marker = std::getenv("FAKE_DIE_ONCE")) {
    if (std::ifstream(marker).good()) return;
    std::ofstream(marker) << "died\n";
  }
  ::raise(SIGKILL);
}

// The quick executor, with the behaviours the environment asks for.
class FakeExecutor : public QuickExecutor {
 public:
  using QuickExecutor::QuickExecutor;
  Result measure(const Point& p, const Timing& t) override {
    die_if_asked(p);
    if (p.x_value == env_x("FAKE_HANG")) std::this_thread::sleep_for(std::chrono::hours(1));
    if (const char* ms = std::getenv("FAKE_SLEEP_MS")) std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(ms)));
    return QuickExecutor::measure(p, t);
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) return 2;
  std::vector<WorkerConfig> configs;
  const bool told = std::string(argv[1]) == "-";
  if (told) {
    std::string line;
    if (!LineReader(0).read_line(line)) return 2;
    for (const auto& c : parse_configs(line, "the parent")) configs.push_back(told_worker_config(c));
  }
  std::stringstream paths(told ? "" : argv[1]);
  for (std::string path; std::getline(paths, path, ',');)
    configs.push_back(read_worker_config(path, kDefaultMaxPoints, {}));
  FakeExecutor ex(argv[3], "fake");
  WorkerHello hello = worker_hello(ex, configs, argv[2], told ? kWorkerProtocol : kConfigReadingProtocol);
  hello.placement.threads = 1;
  if (const char* e = std::getenv("FAKE_HELLO_ERROR")) {
    hello.error = e;
    hello.input_error = true;
  }
  if (!write_all(1, hello_line(hello)) || !hello.error.empty()) return 2;
  WorkerLoop loop;
  loop.hang_grace_s = 0.2;
  return serve_cells(ex, configs, loop);
}

#include "measure/torch_control.hpp"

#include <algorithm>

#include "measure/executor.hpp"

namespace opbench {

namespace {

// 64 Ki float32 values (256 KiB, the working set of the small CPU points), made without the
// random generator so that the points' seeded inputs stay as they were.
constexpr int64_t kRows = 64, kCols = 1024;
constexpr double kWarmupMs = 0.5, kRepMs = 1.5;

}  // namespace

ControlWorkload::ControlWorkload() : x_(at::linspace(-4, 4, kRows * kCols, at::kFloat).reshape({kRows, kCols})) {}

double ControlWorkload::measure(Clock& clock, const Timing& timing) {
  Timing t = timing;
  t.warmup_ms = kWarmupMs;
  t.rep_ms = kRepMs;
  const at::Tensor x = x_;
  // An activation, a reduction along rows and the sines of an angle table: the kinds of work
  // the ops' CPU points do, in one thread as they run.
  const std::vector<double> samples = do_bench(clock, [&] {
    at::Tensor a = at::silu(x);
    at::Tensor s = at::softmax(x, -1);
    at::Tensor c = at::sin(x * 0.5);
  }, t);
  return summarize(samples).median;
}

}  // namespace opbench

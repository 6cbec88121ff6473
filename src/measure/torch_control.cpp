#include "measure/torch_control.hpp"

#include <algorithm>

#include "measure/executor.hpp"

namespace opbench {

namespace {

// 64 Ki float32 values (256 KiB, the working set of the small CPU points), made without the
// random generator so that the points' seeded inputs stay as they were.
constexpr int64_t kRows = 64, kCols = 1024;
constexpr double kWarmupMs = 0.25, kRepMs = 0.75;

}  // namespace

ControlWorkload::ControlWorkload() : x_(at::linspace(-4, 4, kRows * kCols, at::kFloat).reshape({kRows, kCols})) {}

std::vector<double> ControlWorkload::samples(Clock& clock, const Timing& timing) {
  Timing t = timing;
  t.warmup_ms = kWarmupMs;
  t.rep_ms = kRepMs;
  const at::Tensor x = x_;
  // An activation, a reduction along rows and the sines of an angle table: the kinds of work
  // the ops' CPU points do, in one thread as they run.
  return do_bench(clock, [&] {
    at::Tensor a = at::silu(x);
    at::Tensor s = at::softmax(x, -1);
    at::Tensor c = at::sin(x * 0.5);
  }, t);
}

double ControlWorkload::around(Clock& clock, const Timing& timing, const std::function<void()>& measure) {
  std::vector<double> all = samples(clock, timing);
  measure();
  const std::vector<double> after = samples(clock, timing);
  all.insert(all.end(), after.begin(), after.end());
  return summarize(all).median;
}

}  // namespace opbench

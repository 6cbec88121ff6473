#include "torch/measure/torch_control.hpp"

#include <algorithm>

#include "measure/executor.hpp"
#include "measure/stages.hpp"

namespace opbench {

namespace {

constexpr int64_t kCols = 1024, kMinElements = int64_t{16} << 10, kMaxElements = int64_t{4} << 20;

}  // namespace

int64_t ControlWorkload::elements_for(double bytes) {
  const int64_t rows = std::clamp<int64_t>(int64_t(bytes / 4) / kCols, kMinElements / kCols, kMaxElements / kCols);
  return rows * kCols;
}

ControlWorkload::ControlWorkload(double bytes)
    : x_(at::linspace(-4, 4, elements_for(bytes), at::kFloat).reshape({-1, kCols})) {}

std::vector<double> ControlWorkload::samples(Clock& clock) {
  StageScope stage(Stage::control);
  const at::Tensor x = x_;
  // An activation, a reduction along rows and the sines of an angle table: the kinds of work
  // the ops' CPU points do, in one thread as they run.
  auto call = [&] {
    at::Tensor a = at::silu(x);
    at::Tensor s = at::softmax(x, -1);
    at::Tensor c = at::sin(x * 0.5);
  };
  call();
  clock.reserve(kSamples);
  for (size_t i = 0; i < kSamples; ++i) {
    clock.flush();
    clock.start(i);
    call();
    clock.end(i);
  }
  clock.sync();
  std::vector<double> out(kSamples);
  for (size_t i = 0; i < kSamples; ++i) out[i] = clock.elapsed_ms(i);
  return out;
}

double ControlWorkload::around(Clock& clock, const std::function<void()>& measure) {
  std::vector<double> all = samples(clock);
  measure();
  const std::vector<double> after = samples(clock);
  all.insert(all.end(), after.begin(), after.end());
  return summarize(all).median;
}

}  // namespace opbench

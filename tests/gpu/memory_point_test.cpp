// A memory point on CUDA (label gpu; skips without a CUDA device): its peak is what the call's
// blocks need, whatever earlier points left idle in the caching allocator. An idle segment of
// 10 MiB, the right size to take a 9 MiB input whole (the allocator does not split off 1 MiB;
// a speed point's placement spacer leaves such segments), must not move the peak of silu's
// forward at b = h = 12, n = 256, d = 128 (x and y, 9 MiB each).
#include <ATen/ATen.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <gtest/gtest.h>

#include <string>

#include "config/config.hpp"
#include "points/points.hpp"
#include "torch/measure/device.hpp"
#include "torch/measure/torch_executor.hpp"

using namespace opbench;

namespace {

const char* kConfig = R"(
op: act
x: {n: [256, 1024]}
params: {batch: 12, head: 12, dim: 128, dtype: bf16, mode: fwd, metric: memory, act: silu}
providers: {torch: to}
)";

double peak_mib(TorchExecutor& ex, const Point& p, const Timing& t) {
  const Result r = ex.measure(p, t);
  EXPECT_TRUE(r.ok()) << r.error;
  return r.samples.empty() ? -1 : r.samples[0];
}

}  // namespace

TEST(MemoryPoint, ThePeakDoesNotDependOnTheAllocatorsIdleBlocks) {
  if (!cuda_present()) GTEST_SKIP() << "no CUDA device";
  Config cfg = parse_config(kConfig, "memory_point.yaml");
  const Sweep sw = expand(cfg);
  ASSERT_EQ(sw.points.size(), 2u);
  const Point& small = sw.points[0];
  const Point& large = sw.points[1];
  ASSERT_EQ(small.x_value, 256);
  TorchExecutor ex("cuda");
  const double first = peak_mib(ex, small, cfg.timing);
  EXPECT_DOUBLE_EQ(first, 18.0);  // x and y, 9 MiB each
  EXPECT_DOUBLE_EQ(peak_mib(ex, large, cfg.timing), 72.0);
  // A segment of its own for 10 MiB (no idle block left to split it from), then idle.
  c10::cuda::CUDACachingAllocator::emptyCache();
  { at::Tensor idle = at::empty({int64_t{10} << 20}, at::TensorOptions().device(at::kCUDA).dtype(at::kByte)); }
  EXPECT_DOUBLE_EQ(peak_mib(ex, small, cfg.timing), first);
}

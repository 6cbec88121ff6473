// The GPU's state on a CUDA run (label gpu; skips without a CUDA device): a small sweep through
// the TorchExecutor records the clocks, temperature, power and throttle reasons (NVML) with the
// run and with every point, the report header shows them, and a run pins nothing on CUDA by
// default.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "torch/measure/torch_executor.hpp"
#include "torch/measure/threads.hpp"
#include "report/report.hpp"
#include "sweep/runner.hpp"

using namespace opbench;

namespace {

const char* kConfig = R"(
op: act
x: {n: [256, 1024]}
params: {batch: 2, head: 4, dim: 64, dtype: bf16, mode: fwd, metric: [speed, memory], act: silu}
providers: {torch: to}
timing: {warmup_ms: 5, rep_ms: 20, rounds: 2}
)";

void expect_state(const DeviceState& s, const std::string& where) {
  EXPECT_TRUE(s.known) << where << ": no NVML state (is libnvidia-ml.so.1 there?)";
  EXPECT_GT(s.sm_mhz, 0) << where;
  EXPECT_GT(s.memory_mhz, 0) << where;
  EXPECT_GT(s.sm_default_mhz, 0) << where;
  EXPECT_GT(s.temperature_c, 0) << where;
  EXPECT_GT(s.power_w, 0) << where;
  EXPECT_EQ(s.throttled, throttled_for_power_or_heat(s.sm_mhz, s.sm_default_mhz, s.reasons)) << where;
}

}  // namespace

TEST(GpuState, ACudaRunRecordsTheGpuStatePerRunAndPerCell) {
  if (!cuda_present()) GTEST_SKIP() << "no CUDA device";
  Config cfg = parse_config(kConfig, "gpu_state.yaml");
  resolve_device_defaults(cfg.timing, "cuda");
  cfg.timing.threads = pin_threads(cfg.timing.threads);
  EXPECT_EQ(cfg.timing.threads, 0);  // LibTorch's own count on CUDA unless the config pins one
  TorchExecutor ex("cuda");
  const auto path = std::filesystem::temp_directory_path() / ("opbench_gpu_state_" + std::to_string(getpid()) + ".db");
  std::filesystem::remove(path);
  std::ostringstream log;
  {
    Store store(path.string());
    SweepOutcome out = run_sweep(cfg, expand(cfg), ex, store, {}, log);
    ASSERT_EQ(out.failed, 0u) << log.str();
    const RunInfo run = *store.run(out.run_id);
    expect_state(run.env.state, "run");
    EXPECT_TRUE(run.env.tuning.has_value());
    EXPECT_EQ(run.threads, 0);
    EXPECT_EQ(run.rounds, 2);
    const auto pts = store.points(run.id);
    ASSERT_EQ(pts.size(), 4u);
    for (const auto& p : pts) expect_state(p.state, p.point.title + " n=" + std::to_string(p.point.x_value));
    const std::string doc = render_report({{run, pts}});
    EXPECT_NE(doc.find("\nGPU: SM "), std::string::npos) << doc;
    EXPECT_NE(doc.find("after each of 4 table cells"), std::string::npos) << doc;
  }
  std::filesystem::remove(path);
}

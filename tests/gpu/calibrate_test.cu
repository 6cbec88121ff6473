// The device calibration's micro-suite (src/measure/calibrate.h) on a real GPU: every figure
// comes back positive and within what any Hopper-class or older datacenter GPU gives (loose
// bounds: a kernel that faults, times nothing or reads the wrong clock lands far outside them),
// two passes on one device agree within a factor the suite's noise never reaches, and the
// suite leaves no CUDA error behind (a later kernel still runs). GPU test: skipped when no CUDA
// device is present.
#include <gtest/gtest.h>

#include "measure/calibrate.h"

namespace {

void expect_plausible(const opbench::CalibrationSample& f) {
  EXPECT_GT(f.launch_us, 0.2);
  EXPECT_LT(f.launch_us, 50);
  EXPECT_GT(f.sync_us, f.launch_us * 0.5);
  EXPECT_LT(f.sync_us, 2000);
  EXPECT_GT(f.chase_ns, 100);   // a load that misses L2: hundreds of ns
  EXPECT_LT(f.chase_ns, 5000);
  EXPECT_GT(f.dram_gbps, 300);  // any HBM part copies faster
  EXPECT_LT(f.dram_gbps, 20000);
  EXPECT_GT(f.l2_gbps, f.dram_gbps);  // L2 reads outrun the DRAM copy
  EXPECT_GT(f.narrow_gbps, 10);       // 8 multiprocessors read some GB/s each
  EXPECT_LT(f.narrow_gbps, f.dram_gbps);  // and less than the whole chip copies
  EXPECT_GT(f.sm_mhz, 300);
  EXPECT_LT(f.sm_mhz, 4000);
}

TEST(Calibration, EveryFigureIsPlausibleAndTwoPassesAgree) {
  opbench::Calibrator c(0);
  const opbench::CalibrationSample a = c.measure(nullptr);
  const opbench::CalibrationSample b = c.measure(nullptr);
  expect_plausible(a);
  expect_plausible(b);
  EXPECT_NEAR(a.dram_gbps / b.dram_gbps, 1.0, 0.2);
  EXPECT_NEAR(a.chase_ns / b.chase_ns, 1.0, 0.3);
  EXPECT_NEAR(a.sm_mhz / b.sm_mhz, 1.0, 0.3);
  EXPECT_NEAR(a.narrow_gbps / b.narrow_gbps, 1.0, 0.3);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

}  // namespace

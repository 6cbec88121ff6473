// `--normalize peak` (diff/normalize.hpp) on synthetic runs of two GPU models, an H100 at 3,350
// GB/s against an H200 at 4,800: a bandwidth-bound point that uses both peaks alike is SAME
// (a plain diff calls it FASTER), one planted 10% slower on the H200 is SLOWER, one whose use
// of the head's peak fell most leads its provider's scaling list; a latency-bound or host-paced
// point is judged on its time and set apart; a run without a measured peak is refused.
// Torch-free.
#include <gtest/gtest.h>

#include <random>

#include "core/error.hpp"
#include "diff/diff.hpp"
#include "diff/normalize.hpp"
#include "stored_points.hpp"

using namespace opbench;

namespace {

constexpr double kH100 = 3350, kH200 = 4800;
const std::string kTitle = "act-speed-fwd-batch12-head12-dim128-act_relu-bf16";

// 4 rounds of 8 samples around `ms`, 0.3% noise, moving `bytes`, of provider `provider`,
// measured on a device of `peak` GB/s.
StoredPoint point(int64_t x, const std::string& provider, double ms, double bytes, double peak, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> noise(0, 0.003);
  std::vector<double> s;
  for (int i = 0; i < 32; ++i) s.push_back(ms * (1 + noise(gen)));
  StoredPoint p = speed_point(kTitle, x, provider, provider, s);
  p.result.rounds = {8, 8, 8, 8};
  p.result.bytes = bytes;
  p.result.gbps = bytes / (p.value * 1e-3) / 1e9;
  p.result.pct_peak = 100 * p.result.gbps / peak;
  p.result.host_share = 0.1;
  return p;
}

// The H200's time of a point that uses its peak as well as the H100's `ms` used its own.
double alike(double ms) { return ms * kH100 / kH200; }

// x 1: bandwidth-bound (1e9 bytes in 0.4 ms on the H100: 75% of its peak), equal use;
// x 2: the same, 10% slower on the H200 than equal use; x 3: latency-bound (1e6 bytes in 14 us:
// 2% of the peak), 3% faster on the H200; x 4: bandwidth-bound but host-paced.
DiffResult h100_to_h200(bool normalize) {
  StoredPoint paced_b = point(4, "cuda", 0.4, 1e9, kH100, 7), paced_h = point(4, "cuda", alike(0.4), 1e9, kH200, 8);
  paced_h.result.host_share = 0.9;
  const RunRecord b = gpu_run(1, "NVIDIA H100 80GB HBM3", kH100,
                          {point(1, "cuda", 0.4, 1e9, kH100, 1), point(2, "cuda", 0.4, 1e9, kH100, 3),
                           point(3, "cuda", 0.014, 1e6, kH100, 5), paced_b});
  const RunRecord h = gpu_run(2, "NVIDIA H200", kH200,
                          {point(1, "cuda", alike(0.4), 1e9, kH200, 2), point(2, "cuda", alike(0.4) * 1.10, 1e9, kH200, 4),
                           point(3, "cuda", 0.014 * 0.97, 1e6, kH200, 6), paced_h});
  DiffOptions opt;
  opt.normalize_peak = normalize;
  return diff_runs(b, h, opt);
}

}  // namespace

TEST(NormalizePeak, EqualUseOfBothPeaksIsSame) {
  const DiffResult d = h100_to_h200(true);
  ASSERT_EQ(d.rows.size(), 4u);
  EXPECT_EQ(d.rows[0].j.verdict, Verdict::Same);
  EXPECT_FALSE(d.rows[0].apart);
  EXPECT_NEAR(d.rows[0].j.ratio, 1.0, 0.01);
  // A plain diff calls the faster chip's point FASTER.
  EXPECT_EQ(h100_to_h200(false).rows[0].j.verdict, Verdict::Faster);
}

TEST(NormalizePeak, APlantedDropIsSlowerAndScalesWorst) {
  const DiffResult d = h100_to_h200(true);
  EXPECT_EQ(d.rows[1].j.verdict, Verdict::Slower);
  EXPECT_NEAR(d.rows[1].j.ratio, 1.10, 0.01);  // the base's fraction of peak over the head's
  EXPECT_EQ(d.regressions, 1u);
  const auto worst = d.scaling_worst(3);
  ASSERT_EQ(worst.size(), 1u);
  EXPECT_EQ(worst[0].first, "cuda");
  ASSERT_FALSE(worst[0].second.empty());
  EXPECT_EQ(worst[0].second.front()->x, 2);
  // Without normalising, it is FASTER: the H200's bandwidth hides the drop.
  EXPECT_EQ(h100_to_h200(false).rows[1].j.verdict, Verdict::Faster);
}

TEST(NormalizePeak, LatencyBoundAndHostPacedPointsAreApartAndJudgedOnTime) {
  const DiffResult d = h100_to_h200(true);
  EXPECT_TRUE(d.rows[2].apart);
  EXPECT_NEAR(d.rows[2].j.ratio, 0.97, 0.01);  // its time, not scaled to the peak
  EXPECT_TRUE(d.rows[3].apart);                // 75% of the peak, but the host paced it
  EXPECT_EQ(d.rows[3].j.verdict, Verdict::Unsure);  // rule 6 on its time: FASTER held back
  const std::string md = diff_markdown(d);
  EXPECT_NE(md.find("normalized to the peak: base 3350 GB/s, head 4800 GB/s"), std::string::npos) << md;
  EXPECT_NE(md.find("## Latency-bound points"), std::string::npos);
  EXPECT_NE(md.find("## Scaling worst"), std::string::npos);
  EXPECT_NE(md.find("no launch or latency figures"), std::string::npos);  // no calibrations here
  const std::string json = diff_json(d);
  EXPECT_NE(json.find("\"peak_ratio\""), std::string::npos);
  EXPECT_NE(json.find("\"apart\": true"), std::string::npos);
}

TEST(NormalizePeak, ARunWithoutAPeakIsRefused) {
  RunRecord b = gpu_run(1, "NVIDIA H100 80GB HBM3", kH100, {point(1, "cuda", 0.4, 1e9, kH100, 1)});
  const RunRecord h = gpu_run(2, "cpu", 0, {point(1, "cuda", 0.4, 1e9, kH100, 2)});
  DiffOptions opt;
  opt.normalize_peak = true;
  try {
    diff_runs(b, h, opt);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--normalize"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("run 2 holds no measured peak"), std::string::npos) << e.what();
  }
}

TEST(NormalizePeak, TheHeadIsScaledToTheBasesPeak) {
  StoredPoint h = point(1, "cuda", 0.2, 1e9, kH200, 9);
  const StoredPoint s = at_base_peak(h, {kH100, kH200});
  EXPECT_NEAR(s.value, h.value * kH200 / kH100, 1e-12);
  EXPECT_NEAR(s.result.samples[5], h.result.samples[5] * kH200 / kH100, 1e-12);
  h.result.error = "failed";
  EXPECT_EQ(at_base_peak(h, {kH100, kH200}).value, h.value);  // an error stays as it is
}

// The DEVICE verdict (diff/device_verdict.hpp, rule 8) and the paired rule (rule 7) on synthetic
// runs: two runs of one commit on two physical GPUs whose calibrations differ give DEVICE for the
// changes the shift explains, with the figures in the reason, and SLOWER for a change beyond it;
// equal calibrations leave a change SLOWER; one GPU (one UUID) is never DEVICE; a bandwidth-bound
// point is explained by the DRAM figure alone; paired runs are judged round against round, so a
// drift both sides shared does not hide a small change and is not one, and where each side's
// rounds rotated over worker processes an offset that some processes carry is UNSURE while a
// change every process shows is SLOWER. Torch-free.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "diff/device_verdict.hpp"
#include "diff/diff.hpp"
#include "stored_points.hpp"

using namespace opbench;

namespace {

const std::string kTitle = "act-speed-fwd-batch12-head12-dim128-act_relu-bf16";

// 8 rounds of 8 samples around center, each round's level drifting by `drift` (relative, the
// same pattern for every run: the chip's own drift), seeded noise of 0.3% within a round.
// `process_offsets`: round r is also moved by offsets[r mod N] (a process's own offset).
StoredPoint rounds_point(int64_t x, double center, uint64_t seed, double drift = 0.002, int count = 8,
                         const std::vector<double>& process_offsets = {0}) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> noise(0, 0.003);
  std::vector<double> s;
  std::vector<int64_t> rounds;
  for (int r = 0; r < count; ++r) {
    const double level = center * (1 + drift * std::sin(1.3 * r + 0.5)) *
                         (1 + process_offsets[size_t(r) % process_offsets.size()]);
    for (int i = 0; i < 8; ++i) s.push_back(level * (1 + noise(gen)));
    rounds.push_back(8);
  }
  StoredPoint p = speed_point(kTitle, x, "cuda", "cuda", s);
  p.result.rounds = rounds;
  p.result.bytes = 1e6;
  p.device = "cuda:0";
  return p;
}

// A calibration of `passes` passes, the dependent load at chase_ns, DRAM at dram_gbps, the
// 8-block read at narrow_gbps and the launch at launch_us.
Calibration calibration(double chase_ns, double dram_gbps, size_t passes = 12, uint64_t seed = 7,
                        double narrow_gbps = 200, double launch_us = 2.0) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> noise(0, 0.001);
  Calibration c;
  for (size_t i = 0; i < passes; ++i) {
    CalibrationSample s;
    s.launch_us = launch_us * (1 + noise(gen));
    s.sync_us = 5.0 * (1 + noise(gen));
    s.chase_ns = chase_ns * (1 + noise(gen));
    s.l2_gbps = 9000 * (1 + noise(gen));
    s.dram_gbps = dram_gbps * (1 + noise(gen));
    s.narrow_gbps = narrow_gbps * (1 + noise(gen));
    s.sm_mhz = 1980;
    c.samples.push_back(s);
  }
  return c;
}

RunRecord run_on(int64_t id, const std::string& uuid, const Calibration& cal, std::vector<StoredPoint> points) {
  RunRecord r;
  r.run.id = id;
  r.run.env.gpu = "NVIDIA H100 80GB HBM3";
  r.run.env.peak_gbps = 3350;
  r.run.env.device = "cuda:0";
  r.run.env.identity.uuid = uuid;
  RunDevice d = run_device("cuda:0", r.run.env.gpu, 3350, r.run.env.identity);
  d.calibration = cal;
  r.run.devices = {d};
  for (auto& p : points) p.run_id = id;
  r.points = std::move(points);
  return r;
}

// A diff at the threshold `ab` uses.
DiffOptions at_2pct() {
  DiffOptions opt;
  opt.threshold = 0.02;
  return opt;
}

// The two runs as the sides of one paired comparison, each naming the other.
void pair_up(RunRecord& b, RunRecord& h) {
  b.run.uuid = "run-b";
  h.run.uuid = "run-h";
  b.run.pair = h.run.uuid;
  h.run.pair = b.run.uuid;
}

// x 1: latency-bound (1e6 bytes in ~14 us: 2% of peak), slower by `change` on the head.
DiffResult diff_latency(double change, const Calibration& base_cal, const Calibration& head_cal,
                        const std::string& head_uuid = "GPU-bbbb") {
  const RunRecord b = run_on(1, "GPU-aaaa", base_cal, {rounds_point(1, 0.014, 11)});
  const RunRecord h = run_on(2, head_uuid, head_cal, {rounds_point(1, 0.014 * change, 12)});
  return diff_runs(b, h, at_2pct());
}

}  // namespace

TEST(DeviceVerdict, AChangeTheChipsShiftExplainsIsDevice) {
  const DiffResult d = diff_latency(1.07, calibration(600, 3000), calibration(642, 3000));
  ASSERT_EQ(d.rows.size(), 1u);
  EXPECT_EQ(d.rows[0].j.verdict, Verdict::Device);
  EXPECT_FALSE(d.rows[0].j.regression);
  EXPECT_EQ(d.regressions, 0u);
  EXPECT_EQ(d.count(Verdict::Device), 1u);
  EXPECT_NE(d.rows[0].j.reason.find("dependent load"), std::string::npos) << d.rows[0].j.reason;
  ASSERT_EQ(d.shifts.size(), 1u);  // the report opens with the shift
  EXPECT_TRUE(d.shifts[0].different);
  const std::string md = diff_markdown(d);
  EXPECT_NE(md.find("## Devices"), std::string::npos);
  EXPECT_NE(md.find("DEVICE"), std::string::npos);
}

// A kernel of a few blocks runs at the pace of the multiprocessors it lands on: a chip whose
// first multiprocessors reach memory more slowly shows it in the 8-block read alone.
TEST(DeviceVerdict, TheEightBlockReadExplainsASmallGridsChange) {
  const DiffResult d =
      diff_latency(1.07, calibration(600, 3000, 12, 7, 200), calibration(600, 3000, 12, 8, 200 / 1.07));
  ASSERT_EQ(d.rows.size(), 1u);
  EXPECT_EQ(d.rows[0].j.verdict, Verdict::Device);
  EXPECT_NE(d.rows[0].j.reason.find("8-block read"), std::string::npos) << d.rows[0].j.reason;
  EXPECT_EQ(d.rows[0].j.reason.find("dependent load"), std::string::npos) << d.rows[0].j.reason;
  // and explains no more than its own shift: 20% on top of it stays SLOWER
  EXPECT_EQ(diff_latency(1.07 * 1.2, calibration(600, 3000, 12, 7, 200), calibration(600, 3000, 12, 8, 200 / 1.07))
                .rows[0]
                .j.verdict,
            Verdict::Slower);
}

// The launch moved 15% (a process's launch path as much as a chip's): a call the GPU paces is not
// explained by it, one the host half paces is, by the share of its time the launch takes.
TEST(DeviceVerdict, TheLaunchExplainsAPointByItsHostShare) {
  const Calibration base = calibration(600, 3000, 12, 7, 200, 2.0), head = calibration(600, 3000, 12, 8, 200, 2.3);
  auto at_share = [&](double change, double share) {
    StoredPoint b = rounds_point(1, 0.014, 11), h = rounds_point(1, 0.014 * change, 12);
    b.result.host_share = h.result.host_share = share;
    return diff_runs(run_on(1, "GPU-aaaa", base, {b}), run_on(2, "GPU-bbbb", head, {h}), at_2pct()).rows[0].j;
  };
  EXPECT_EQ(at_share(1.10, 0.05).verdict, Verdict::Slower);  // 0.75% explained of 10%
  const Judgement paced = at_share(1.06, 0.45);              // 6.75% explained
  EXPECT_EQ(paced.verdict, Verdict::Device) << paced.reason;
  EXPECT_NE(paced.reason.find("at a host share of 0.45"), std::string::npos) << paced.reason;
  EXPECT_EQ(at_share(1.06, std::nan("")).verdict, Verdict::Slower);  // no share known: nothing explained
}

TEST(DeviceVerdict, AChangeBeyondTheShiftStaysSlower) {
  const DiffResult d = diff_latency(1.20, calibration(600, 3000), calibration(642, 3000));
  EXPECT_EQ(d.rows[0].j.verdict, Verdict::Slower);
  EXPECT_EQ(d.regressions, 1u);
}

TEST(DeviceVerdict, EqualCalibrationsExplainNothing) {
  const DiffResult d = diff_latency(1.07, calibration(600, 3000, 12, 7), calibration(600, 3000, 12, 8));
  EXPECT_EQ(d.rows[0].j.verdict, Verdict::Slower);
}

TEST(DeviceVerdict, OneGpuIsNeverDevice) {
  const DiffResult d = diff_latency(1.07, calibration(600, 3000), calibration(642, 3000), "GPU-aaaa");
  EXPECT_EQ(d.rows[0].j.verdict, Verdict::Slower);
  EXPECT_TRUE(d.shifts.empty());
}

TEST(DeviceVerdict, WithoutCalibrationsAChangeOfChipIsNotExplained) {
  const DiffResult d = diff_latency(1.07, Calibration{}, Calibration{});
  EXPECT_EQ(d.rows[0].j.verdict, Verdict::Slower);
}

TEST(DeviceVerdict, ABandwidthBoundPointFollowsTheDramFigureAlone) {
  // 1e9 bytes in 0.4 ms: 2,500 GB/s, 75% of the peak.
  auto bound = [](double ms, uint64_t seed) {
    StoredPoint p = rounds_point(1, ms, seed);
    p.result.bytes = 1e9;
    p.result.gbps = 1e9 / (ms * 1e-3) / 1e9;
    return p;
  };
  const DiffOptions opt = at_2pct();
  // The dependent load moved 7%, DRAM did not: a bandwidth-bound point 7% slower is SLOWER.
  const DiffResult same_dram = diff_runs(run_on(1, "GPU-aaaa", calibration(600, 3000), {bound(0.4, 1)}),
                                         run_on(2, "GPU-bbbb", calibration(642, 3000), {bound(0.428, 2)}), opt);
  EXPECT_EQ(same_dram.rows[0].j.verdict, Verdict::Slower);
  // DRAM 7% slower on the head's chip: the same change is DEVICE.
  const DiffResult slow_dram = diff_runs(run_on(1, "GPU-aaaa", calibration(600, 3000), {bound(0.4, 1)}),
                                         run_on(2, "GPU-bbbb", calibration(600, 2800), {bound(0.428, 2)}), opt);
  EXPECT_EQ(slow_dram.rows[0].j.verdict, Verdict::Device) << slow_dram.rows[0].j.reason;
}

TEST(DeviceVerdict, TheShiftCountsOnlyRealMoves) {
  const RunDevice a = run_on(1, "GPU-aaaa", calibration(600, 3000, 12, 1), {}).run.devices[0];
  const RunDevice b = run_on(2, "GPU-bbbb", calibration(601, 3000, 12, 2), {}).run.devices[0];
  const DeviceShift s = device_shift(a, b);
  EXPECT_TRUE(s.different);
  EXPECT_TRUE(s.calibrated);
  for (const auto& f : s.figures) EXPECT_FALSE(f.real) << f.figure->key;  // 0.2%: below kRealShift
  EXPECT_EQ(s.latency_lo, 1);
  EXPECT_EQ(s.latency_hi, 1);
}

TEST(DeviceVerdict, TheReportNamesTheFiguresEachKindCounts) {
  EXPECT_EQ(explaining_figures(true), "DRAM copy");
  const std::string latency = explaining_figures(false);
  for (const char* name : {"dependent load", "L2 read", "8-block read", "SM clock under load"})
    EXPECT_NE(latency.find(name), std::string::npos) << name;
  EXPECT_EQ(latency.find("launch and wait"), std::string::npos);
  EXPECT_EQ(latency.find("DRAM"), std::string::npos);
  EXPECT_NE(latency.find("and the launch in proportion to the point's host share"), std::string::npos);
}

TEST(PairedVerdict, RoundAgainstRoundASmallChangeUnderADriftIsConfirmed) {
  // Both sides drift 3% together round by round; head is 2.5% slower in every round.
  RunRecord b = run_on(1, "GPU-aaaa", calibration(600, 3000), {rounds_point(1, 0.014, 21, 0.03)});
  RunRecord h = run_on(2, "GPU-aaaa", calibration(600, 3000), {rounds_point(1, 0.014 * 1.025, 22, 0.03)});
  pair_up(b, h);
  const DiffOptions opt = at_2pct();
  const DiffResult paired = diff_runs(b, h, opt);
  EXPECT_TRUE(paired.paired);
  EXPECT_EQ(paired.rows[0].j.pairs, 8u);
  EXPECT_EQ(paired.rows[0].j.verdict, Verdict::Slower);
  EXPECT_GT(paired.rows[0].j.ci_lo, 1);
  // The same runs not paired: rounds compared as two groups, the drift inside them.
  b.run.pair = h.run.pair = "";
  const DiffResult unpaired = diff_runs(b, h, opt);
  EXPECT_FALSE(unpaired.paired);
  EXPECT_EQ(unpaired.rows[0].j.pairs, 0u);
}

TEST(PairedVerdict, TheSameCodeOnBothSidesIsSame) {
  RunRecord b = run_on(1, "GPU-aaaa", calibration(600, 3000), {rounds_point(1, 0.014, 31, 0.03)});
  RunRecord h = run_on(2, "GPU-aaaa", calibration(600, 3000), {rounds_point(1, 0.014, 32, 0.03)});
  pair_up(b, h);
  const DiffOptions opt = at_2pct();
  const DiffResult d = diff_runs(b, h, opt);
  EXPECT_EQ(d.rows[0].j.verdict, Verdict::Same);
  EXPECT_EQ(d.regressions, 0u);
}

TEST(PairedVerdict, AnOffsetSomeProcessesCarryIsUnsureAChangeAllShowIsSlower) {
  // Nine rounds a side over three processes a side; the head's processes 0 and 1 carry +6%
  // through all their rounds, its process 2 none: an offset of processes, not of the code.
  RunRecord b = run_on(1, "GPU-aaaa", calibration(600, 3000), {rounds_point(1, 0.014, 41, 0.002, 9)});
  RunRecord h = run_on(2, "GPU-aaaa", calibration(600, 3000),
                       {rounds_point(1, 0.014, 42, 0.002, 9, {0.06, 0.06, 0.0})});
  pair_up(b, h);
  b.run.processes = h.run.processes = 3;
  const DiffResult d = diff_runs(b, h, at_2pct());
  EXPECT_EQ(d.processes, 3);
  EXPECT_EQ(d.rows[0].j.pairs, 9u);
  EXPECT_EQ(d.rows[0].j.pair_units, 3u);
  EXPECT_GT(d.rows[0].j.ratio, 1.02);
  EXPECT_EQ(d.rows[0].j.verdict, Verdict::Unsure);
  EXPECT_EQ(d.regressions, 0u);
  EXPECT_NE(diff_markdown(d).find("spread over 3 worker processes"), std::string::npos);
  // The same rounds judged one by one (as if one process a side had measured them): SLOWER.
  b.run.processes = h.run.processes = 1;
  EXPECT_EQ(diff_runs(b, h, at_2pct()).rows[0].j.verdict, Verdict::Slower);
  // A 4% change every process shows stays SLOWER when judged by pair of processes.
  RunRecord h4 = run_on(2, "GPU-aaaa", calibration(600, 3000), {rounds_point(1, 0.014 * 1.04, 43, 0.002, 9)});
  pair_up(b, h4);
  b.run.processes = h4.run.processes = 3;
  const DiffResult all = diff_runs(b, h4, at_2pct());
  EXPECT_EQ(all.rows[0].j.pair_units, 3u);
  EXPECT_EQ(all.rows[0].j.verdict, Verdict::Slower);
}

TEST(PairedVerdict, APairedChangeMustPassTheThresholdByItsPairsNotByThePooledMedians) {
  // Every round of the head 0.1% slower than the base's, and the head took more samples in its
  // slow rounds: the pooled medians differ by 6%, the pairs by 0.1% (an interval wholly above 1).
  std::vector<double> bs, hs;
  std::vector<int64_t> counts_b, counts_h;
  for (int r = 0; r < 8; ++r) {
    const double level = 0.014 * (r % 2 ? 1.06 : 1.0);
    const int nb = r % 2 ? 4 : 12, nh = r % 2 ? 12 : 4;
    for (int i = 0; i < nb; ++i) bs.push_back(level * (1 + 0.0001 * (i - (nb - 1) / 2.0)));  // median: level
    for (int i = 0; i < nh; ++i) hs.push_back(level * 1.001 * (1 + 0.0001 * (i - (nh - 1) / 2.0)));
    counts_b.push_back(nb);
    counts_h.push_back(nh);
  }
  StoredPoint pb = speed_point(kTitle, 1, "cuda", "cuda", bs), ph = speed_point(kTitle, 1, "cuda", "cuda", hs);
  pb.result.rounds = counts_b;
  ph.result.rounds = counts_h;
  RunRecord b = run_on(1, "GPU-aaaa", calibration(600, 3000), {pb});
  RunRecord h = run_on(2, "GPU-aaaa", calibration(600, 3000), {ph});
  pair_up(b, h);
  const DiffResult d = diff_runs(b, h, at_2pct());
  EXPECT_GT(d.rows[0].j.ratio, 1.04);
  EXPECT_GT(d.rows[0].j.ci_lo, 1);
  EXPECT_NEAR(std::sqrt(d.rows[0].j.ci_lo * d.rows[0].j.ci_hi), 1.001, 0.0005);
  EXPECT_NE(d.rows[0].j.verdict, Verdict::Slower);
  EXPECT_EQ(d.regressions, 0u);
}

TEST(PairedVerdict, AnIntervalThatLeavesOneButNotHalfTheThresholdIsUnsure) {
  // Four processes a side; the head's pairs of processes show +1%, +2%, +4% and +3%: a mean of
  // 2.5%, but an interval (t with 3 degrees of freedom) reaching below +1%, half the threshold.
  RunRecord b = run_on(1, "GPU-aaaa", calibration(600, 3000), {rounds_point(1, 0.014, 51, 0.002, 8)});
  RunRecord h = run_on(2, "GPU-aaaa", calibration(600, 3000),
                       {rounds_point(1, 0.014, 52, 0.002, 8, {0.01, 0.02, 0.04, 0.03})});
  pair_up(b, h);
  b.run.processes = h.run.processes = 4;
  const DiffResult d = diff_runs(b, h, at_2pct());
  EXPECT_EQ(d.rows[0].j.pair_units, 4u);
  EXPECT_GT(d.rows[0].j.ci_lo, 1);
  EXPECT_LT(d.rows[0].j.ci_lo, 1.01);
  EXPECT_EQ(d.rows[0].j.verdict, Verdict::Unsure);
  // The same change shown evenly by every pair of processes: SLOWER.
  RunRecord even = run_on(2, "GPU-aaaa", calibration(600, 3000),
                          {rounds_point(1, 0.014 * 1.025, 52, 0.002, 8)});
  pair_up(b, even);
  even.run.processes = 4;
  EXPECT_EQ(diff_runs(b, even, at_2pct()).rows[0].j.verdict, Verdict::Slower);
}

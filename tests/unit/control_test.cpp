// The control workload against the machine's drift: each round's control kept when a point's
// rounds are pooled, and the verdict's rule 5 (diff/verdict.hpp) on synthetic drifts: the whole
// machine slower is not a regression (UNSURE, with the reason, where the rest would say
// SLOWER), one provider slower with the control steady is; the diff shows the reason.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "diff/diff.hpp"
#include "diff/verdict.hpp"
#include "stored_points.hpp"
#include "sweep/cell.hpp"

using namespace opbench;

namespace {

const char* const kTitle = "act-speed-bwd-batch2-head4-dim64-act_silu-fp32";

// A CPU point in four rounds (configs/quick.yaml's): round r's samples around levels[r] with
// 1% noise, and the control's median in that round.
StoredPoint drifting(const std::vector<double>& levels, const std::vector<double>& control, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0, 0.01);
  std::vector<double> all;
  std::vector<int64_t> counts;
  for (double level : levels) {
    for (int i = 0; i < 25; ++i) all.push_back(level * (1 + noise(rng)));
    counts.push_back(25);
  }
  StoredPoint p = speed_point(kTitle, 256, "torch", "to", all);
  p.result.rounds = counts;
  p.result.control = control;
  return p;
}

const std::vector<double> kLevels = {0.100, 0.101, 0.099, 0.100};
const std::vector<double> kControl = {0.050, 0.0502, 0.0499, 0.0501};

std::vector<double> times(const std::vector<double>& v, double f) {
  std::vector<double> out;
  for (double x : v) out.push_back(x * f);
  return out;
}

TEST(Control, WholeMachineSlowerIsNoRegression) {
  const StoredPoint base = drifting(kLevels, kControl, 1);
  const StoredPoint head = drifting(times(kLevels, 1.2), times(kControl, 1.2), 2);
  const Judgement j = judge(base, head, 0.05);
  EXPECT_NE(j.verdict, Verdict::Slower);
  EXPECT_EQ(j.verdict, Verdict::Unsure);
  EXPECT_FALSE(j.regression);
  EXPECT_NEAR(j.control_ratio, 1.2, 1e-9);
  EXPECT_NE(j.reason.find("the control workload moved +20.0% between the runs"), std::string::npos) << j.reason;
  // Without the control the same samples are a regression.
  StoredPoint b = base, h = head;
  b.result.control.clear();
  h.result.control.clear();
  EXPECT_EQ(judge(b, h, 0.05).verdict, Verdict::Slower);
  // ... and so when only one side has one (a run stored before the control).
  EXPECT_EQ(judge(b, head, 0.05).verdict, Verdict::Slower);
  // The machine faster by as much: not FASTER either.
  EXPECT_EQ(judge(head, base, 0.05).verdict, Verdict::Unsure);
}

TEST(Control, OneProviderSlowerIsARegression) {
  const StoredPoint base = drifting(kLevels, kControl, 3);
  const StoredPoint head = drifting(times(kLevels, 1.3), times(kControl, 1.005), 4);
  const Judgement j = judge(base, head, 0.05);
  EXPECT_EQ(j.verdict, Verdict::Slower);
  EXPECT_TRUE(j.regression);
  EXPECT_TRUE(j.reason.empty());
  // Slower against the control by more than the threshold and the machine's drift: still a
  // regression; by less (30% while the machine drifted 15%): UNSURE.
  EXPECT_EQ(judge(base, drifting(times(kLevels, 1.5), times(kControl, 1.15), 5), 0.05).verdict, Verdict::Slower);
  EXPECT_EQ(judge(base, drifting(times(kLevels, 1.3), times(kControl, 1.15), 5), 0.05).verdict, Verdict::Unsure);
}

// A machine unsteady within a run (the control's rounds 30% apart) cannot resolve a 10% change,
// even with the control's median where it was.
TEST(Control, UnsteadyMachineIsUnsure) {
  const StoredPoint base = drifting(kLevels, kControl, 13);
  const StoredPoint head = drifting(times(kLevels, 1.1), {0.050, 0.065, 0.0501, 0.0499}, 14);
  const Judgement j = judge(base, head, 0.05);
  EXPECT_EQ(j.verdict, Verdict::Unsure);
  EXPECT_NEAR(j.control_drift, 0.065 / 0.0499 - 1, 1e-9);
  EXPECT_NE(j.reason.find("up to 30.3% between the rounds of one"), std::string::npos) << j.reason;
}

TEST(Control, SteadyIsSame) {
  const StoredPoint base = drifting(kLevels, kControl, 6);
  EXPECT_EQ(judge(base, drifting(kLevels, times(kControl, 1.01), 7), 0.05).verdict, Verdict::Same);
  // The control only vetoes: the machine 20% slower while the point held is SAME, not FASTER.
  EXPECT_EQ(judge(base, drifting(kLevels, times(kControl, 1.2), 8), 0.05).verdict, Verdict::Same);
}

// A control per round of the point, or none: a count that does not match is ignored.
TEST(Control, MismatchedCountsAreIgnored) {
  const StoredPoint base = drifting(kLevels, kControl, 9);
  StoredPoint head = drifting(times(kLevels, 1.2), {0.06, 0.06}, 10);
  EXPECT_EQ(judge(base, head, 0.05).verdict, Verdict::Slower);
  EXPECT_TRUE(std::isnan(judge(base, head, 0.05).control_ratio));
}

TEST(Control, PooledPerRound) {
  std::vector<Result> rounds(3);
  for (size_t r = 0; r < rounds.size(); ++r) {
    rounds[r].unit = "ms";
    rounds[r].samples = {1.0 + double(r), 1.5 + double(r)};
    rounds[r].control = {0.5 + double(r)};
  }
  EXPECT_EQ(pool_rounds(rounds).control, (std::vector<double>{0.5, 1.5, 2.5}));
  rounds[1].control.clear();  // a round without one: the point has none
  EXPECT_TRUE(pool_rounds(rounds).control.empty());
}

TEST(Control, DiffShowsTheReason) {
  RunRecord a, b;
  a.run.id = 1;
  b.run.id = 2;
  a.points = {drifting(kLevels, kControl, 11)};
  b.points = {drifting(times(kLevels, 1.2), times(kControl, 1.2), 12)};
  const DiffResult d = diff_runs(a, b, DiffOptions{});
  ASSERT_EQ(d.rows.size(), 1u);
  EXPECT_EQ(d.regressions, 0u);
  const std::string md = diff_markdown(d);
  EXPECT_NE(md.find("UNSURE against the control workload"), std::string::npos) << md;
  EXPECT_NE(md.find("n=256 torch: the control workload moved +20.0% between the runs"), std::string::npos) << md;
  const std::string js = diff_json(d);
  EXPECT_NE(js.find("\"reason\": \"the control workload moved +20.0%"), std::string::npos) << js;
  EXPECT_NE(js.find("\"control_ratio\": 1.2"), std::string::npos) << js;
  EXPECT_NE(js.find("\"control_drift\": "), std::string::npos) << js;
}

}  // namespace

// A provider judged as a whole against the control (diff/provider_verdict.hpp): the rule on
// synthetic changes, and a diff of two runs where few points alone can show a provider 30%
// slower but the provider as a whole does, and fails the gate.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "diff/diff.hpp"
#include "diff/provider_verdict.hpp"
#include "stored_points.hpp"

using namespace opbench;

namespace {

WholeVerdict whole_of(const std::vector<double>& against, double threshold = 0.05) {
  WholeJudge w;
  for (double a : against) {
    Judgement j;
    j.against = a;
    w.add(j);
  }
  return w.verdict(threshold);
}

TEST(WholeVerdict, SlowerWhenTheMeanLeavesTheBandAndThePointsAgree) {
  const WholeVerdict w = whole_of(std::vector<double>(18, 1.3));
  EXPECT_TRUE(w.judged);
  EXPECT_EQ(w.verdict, Verdict::Slower);
  EXPECT_NEAR(w.geomean, 1.3, 1e-12);
  EXPECT_EQ(w.up, 18u);
  EXPECT_DOUBLE_EQ(w.band, kWholeBand);
  EXPECT_EQ(whole_of(std::vector<double>(18, 1 / 1.3)).verdict, Verdict::Faster);
}

TEST(WholeVerdict, SameInsideTheBand) {
  // Every point 15% slower against the control: what identical code showed on the CPU machine.
  EXPECT_EQ(whole_of(std::vector<double>(18, 1.15)).verdict, Verdict::Same);
  EXPECT_EQ(whole_of(std::vector<double>(18, 1 / 1.15)).verdict, Verdict::Same);
}

TEST(WholeVerdict, UnsureWhenFewPointsCarryTheChange) {
  // A mean beyond the band from a few large changes, most points not moved up: not the
  // provider's code as a whole.
  std::vector<double> a(18, 0.98);
  for (size_t i = 0; i < 5; ++i) a[i] = 3.0;
  const WholeVerdict w = whole_of(a);
  EXPECT_GT(w.geomean, 1 + kWholeBand);
  EXPECT_EQ(w.verdict, Verdict::Unsure);
}

TEST(WholeVerdict, NeedsEnoughPointsWithAControl) {
  EXPECT_FALSE(whole_of(std::vector<double>(kWholeMinPoints - 1, 2.0)).judged);
  // Points without a control (NaN) do not count.
  std::vector<double> a(10, std::nan(""));
  a[0] = 2.0;
  EXPECT_FALSE(whole_of(a).judged);
  EXPECT_TRUE(whole_of(std::vector<double>(kWholeMinPoints, 2.0)).judged);
}

TEST(WholeVerdict, BandIsAtLeastTheThreshold) {
  EXPECT_EQ(whole_of(std::vector<double>(18, 1.3), 0.35).verdict, Verdict::Same);
  EXPECT_DOUBLE_EQ(whole_of(std::vector<double>(18, 1.3), 0.35).band, 0.35);
}

// A CPU point: four rounds whose levels scatter by `spread` around `level`, 1% noise within a
// round, the control steady.
StoredPoint noisy(const std::string& title, double level, double spread, std::mt19937_64& rng) {
  std::normal_distribution<double> within(0, 0.01);
  std::uniform_real_distribution<double> across(-spread, spread);
  std::vector<double> all;
  for (int r = 0; r < 4; ++r) {
    const double l = level * (1 + across(rng));
    for (int i = 0; i < 20; ++i) all.push_back(l * (1 + within(rng)));
  }
  StoredPoint p = speed_point(title, 256, "torch", "to", all);
  p.result.rounds = {20, 20, 20, 20};
  p.result.control = {0.05, 0.05, 0.05, 0.05};
  return p;
}

// The diff of two runs of 18 such points each, head's at `head_level` (base's at 0.1).
DiffResult diff_of_noisy_runs(double head_level, uint64_t seed) {
  std::mt19937_64 rng(seed);
  RunRecord a, b;
  a.run.id = 1;
  b.run.id = 2;
  for (int i = 0; i < 18; ++i) {
    const std::string title = "act-speed-fwd-case" + std::to_string(i);
    a.points.push_back(noisy(title, 0.1, 0.35, rng));
    b.points.push_back(noisy(title, head_level, 0.35, rng));
  }
  return diff_runs(a, b, DiffOptions{});
}

TEST(WholeVerdict, DiffCatchesAProviderFewPointsShow) {
  const DiffResult d = diff_of_noisy_runs(0.13, 7);  // the provider 30% slower
  ASSERT_EQ(d.summary.size(), 1u);
  EXPECT_TRUE(d.summary[0].whole.judged);
  EXPECT_EQ(d.summary[0].whole.verdict, Verdict::Slower);
  EXPECT_LT(d.count(Verdict::Slower), 9u);  // the rounds scatter too much for most points alone
  EXPECT_GE(d.regressions, 1u);
  const std::string md = diff_markdown(d);
  EXPECT_NE(md.find("torch as a whole: SLOWER"), std::string::npos) << md;
  const std::string js = diff_json(d);
  EXPECT_NE(js.find("\"whole\": {"), std::string::npos) << js;
  EXPECT_NE(js.find("\"verdict\": \"SLOWER\""), std::string::npos) << js;
}

TEST(WholeVerdict, DiffOfTheSameCodeIsNotARegression) {
  const DiffResult d = diff_of_noisy_runs(0.1, 8);
  ASSERT_EQ(d.summary.size(), 1u);
  EXPECT_EQ(d.summary[0].whole.verdict, Verdict::Same);
  EXPECT_EQ(d.regressions, 0u);
}

}  // namespace

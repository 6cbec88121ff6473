// Tests of history's change points (src/diff/changepoints.cpp, src/diff/history.cpp): level
// shifts found across a whole series, one outlier no step, noise no step, one series per GPU,
// the latest level as a regression; the store-level history with failures and bad input.
// Torch-free.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>

#include "core/error.hpp"
#include "diff/changepoints.hpp"
#include "diff/history.hpp"
#include "stored_points.hpp"
#include "temp_db.hpp"

namespace fs = std::filesystem;
using namespace opbench;

namespace {

const std::string kTitle = "act-speed-fwd-batch12-head12-dim128-act_relu-bf16";

// n values around `level` with relative normal noise `rel` (seeded: reproducible).
std::vector<double> series(double level, double rel, size_t n, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> d(0, 1);
  std::vector<double> v;
  for (size_t i = 0; i < n; ++i) v.push_back(level * std::exp(rel * d(gen)));
  return v;
}

std::vector<size_t> step_positions(const std::vector<Segment>& segs) {
  std::vector<size_t> out;
  for (size_t k = 1; k < segs.size(); ++k) out.push_back(segs[k].begin);
  return out;
}

}  // namespace

TEST(ChangePoints, OneOutlierIsNoStep) {
  for (size_t where : {0u, 5u, 10u, 18u}) {
    auto v = series(1.0, 0.01, 20, 7);
    v[where] *= 3;  // one run 3x slower, the rest unchanged
    auto segs = fit_levels(v);
    EXPECT_EQ(segs.size(), 1u) << "outlier at " << where;
    EXPECT_NEAR(segs[0].level, 1.0, 0.02);
  }
  // one outlier below, too
  auto v = series(1.0, 0.01, 20, 8);
  v[9] *= 0.3;
  EXPECT_EQ(fit_levels(v).size(), 1u);
}

TEST(ChangePoints, ALevelShiftIsOneStepAtItsPlace) {
  for (size_t at : {2u, 7u, 12u, 18u}) {
    auto v = series(1.0, 0.01, 20, 11 + at);
    for (size_t i = at; i < v.size(); ++i) v[i] *= 1.2;
    auto segs = fit_levels(v);
    ASSERT_EQ(segs.size(), 2u) << "shift at " << at;
    EXPECT_EQ(segs[1].begin, at);
    EXPECT_NEAR(segs[1].level / segs[0].level, 1.2, 0.02);
  }
  // up, then back down: two steps
  auto v = series(1.0, 0.01, 24, 5);
  for (size_t i = 8; i < 16; ++i) v[i] *= 1.3;
  EXPECT_EQ(step_positions(fit_levels(v)), (std::vector<size_t>{8, 16}));
}

TEST(ChangePoints, TheLatestRunAloneCanStartALevel) {
  auto v = series(1.0, 0.01, 12, 3);
  v.back() *= 1.5;
  auto segs = fit_levels(v);
  ASSERT_EQ(segs.size(), 2u);
  EXPECT_EQ(segs[1].begin, 11u);
  EXPECT_EQ(segs[1].size(), 1u);
  // ... but not by a change inside the series' noise
  auto w = series(1.0, 0.01, 12, 3);
  w.back() *= 1.02;
  EXPECT_EQ(fit_levels(w).size(), 1u);
}

TEST(ChangePoints, NoiseOnlyIsNoStep) {
  // 2% noise, 5% threshold: in 200 series of each length at most a few show any step
  for (size_t n : {4u, 10u, 30u, 100u}) {
    size_t flagged = 0;
    for (uint64_t seed = 0; seed < 200; ++seed) flagged += fit_levels(series(1.0, 0.02, n, 1000 * n + seed)).size() > 1;
    EXPECT_LE(flagged, 6u) << "n=" << n;
  }
  // noise five times the threshold: the penalty and the noise test, not the threshold, hold
  // most series flat
  size_t flagged = 0;
  for (uint64_t seed = 0; seed < 200; ++seed) flagged += fit_levels(series(1.0, 0.05, 30, seed), {0.01, 0}).size() > 1;
  EXPECT_LE(flagged, 30u);
  // a fixed seed of pure noise: none
  EXPECT_EQ(fit_levels(series(1.0, 0.03, 40, 42)).size(), 1u);
}

TEST(ChangePoints, ShiftsOfThreeSigmaAreFound) {
  size_t found = 0;
  for (uint64_t seed = 0; seed < 100; ++seed) {
    auto v = series(1.0, 0.03, 20, 500 + seed);
    for (size_t i = 10; i < 20; ++i) v[i] *= std::exp(0.09);
    auto steps = step_positions(fit_levels(v));
    found += steps.size() == 1 && (steps[0] >= 9 && steps[0] <= 11);
  }
  EXPECT_GE(found, 80u);
}

TEST(ChangePoints, StepsBelowTheThresholdMerge) {
  // an exact 3% shift, no noise: real, but under a 5% threshold; over a 2% one
  std::vector<double> v(10, 1.0);
  for (size_t i = 5; i < 10; ++i) v[i] = 1.03;
  EXPECT_EQ(fit_levels(v, {0.05, 0}).size(), 1u);
  EXPECT_EQ(fit_levels(v, {0.02, 0}).size(), 2u);
  // the points' own noise raises the bar: a 3% shift inside 5% noise per point is none
  EXPECT_EQ(fit_levels(v, {0.02, 0.05}).size(), 1u);
}

TEST(ChangePoints, ShortSeries) {
  EXPECT_TRUE(fit_levels({}).empty());
  EXPECT_EQ(fit_levels({2.0}).size(), 1u);
  EXPECT_DOUBLE_EQ(fit_levels({2.0}).at(0).level, 2.0);
  EXPECT_EQ(fit_levels({1.0, 1.0}).size(), 1u);
  EXPECT_EQ(fit_levels({1.0, 2.0}).size(), 2u);       // two runs: the second against the first
  EXPECT_EQ(fit_levels({1.0, 1.02}).size(), 1u);
  EXPECT_EQ(fit_levels({2.0, 1.0, 1.0}).size(), 1u);  // the first of three alone is an outlier
  EXPECT_EQ(fit_levels({1.0, 1.0, 2.0}).size(), 2u);  // the latest alone can be a level
  EXPECT_EQ(fit_levels({1.0, 1.0, 1.02}).size(), 1u);  // within the threshold
  EXPECT_EQ(series_sigma({}), 0);
}

// --- history over a store ------------------------------------------------------------------

namespace {

std::string temp_db(const std::string& name) { return fresh_db_path("history", name); }

int64_t add_run(Store& s, const std::string& gpu, int day, std::vector<StoredPoint> pts) {
  RunInfo r;
  r.label = gpu + "-" + std::to_string(day);
  r.git_commit = "c" + std::to_string(day);
  r.env.gpu = gpu;
  char when[40];
  std::snprintf(when, sizeof when, "2025-01-%02dT00:00:00.000Z", day);
  r.started_at = when;
  return store_run(s, r, std::move(pts));
}

}  // namespace

TEST(History, ChangePointsPerGpu) {
  Store s(temp_db("gpu.db"));
  // H100: 1.0 x4, one 2.0 outlier, 1.0 x2, then 1.3 x3 (a lasting step up)
  // A100: 3.0 throughout (mixing it with the H100 would make steps of its own)
  const double h100[] = {1.0, 1.0, 1.0, 1.0, 2.0, 1.0, 1.0, 1.3, 1.3, 1.3};
  for (int i = 0; i < 10; ++i) {
    add_run(s, "NVIDIA H100", 2 * i + 1, {speed_point(kTitle, 256, "torch", "to", series(h100[i], 0.005, 40, 100 + i))});
    add_run(s, "NVIDIA A100", 2 * i + 2, {speed_point(kTitle, 256, "torch", "to", series(3.0, 0.005, 40, 200 + i))});
  }
  HistoryQuery q;
  q.title = kTitle;
  auto all = point_history(s, q);
  ASSERT_EQ(all.size(), 2u);  // one series per GPU
  EXPECT_EQ(all[0].gpu, "NVIDIA A100");
  EXPECT_EQ(all[0].steps(), 0u);
  EXPECT_FALSE(all[0].latest_regression());

  q.gpu = "h100";
  auto h = point_history(s, q);
  ASSERT_EQ(h.size(), 1u);
  const auto& e = h[0].entries;
  ASSERT_EQ(e.size(), 10u);
  for (size_t i = 0; i < e.size(); ++i) EXPECT_EQ(e[i].step, i == 7 ? "up" : "") << i;
  EXPECT_NEAR(e[7].change, 0.3, 0.02);
  EXPECT_EQ(h[0].segments.size(), 2u);
  EXPECT_TRUE(h[0].latest_regression());
  EXPECT_NEAR(e[4].level, 1.0, 0.01);  // the outlier sits on the first level

  std::string md = history_markdown(h, 0.05);
  EXPECT_NE(md.find("**step up +30.0%**"), std::string::npos) << md;
  EXPECT_NE(md.find("| c15 |"), std::string::npos) << md;  // run 8 of the H100 started on day 15
  EXPECT_NE(md.find("**the latest level is a regression**"), std::string::npos) << md;
  auto j = nlohmann::json::parse(history_json(h, 0.05));
  EXPECT_EQ(j[0]["gpu"], "NVIDIA H100");
  EXPECT_EQ(j[0]["entries"][7]["step"], "up");
  EXPECT_EQ(j[0]["segments"].size(), 2u);
  EXPECT_EQ(j[0]["latest_regression"], true);
  auto plot = nlohmann::json::parse(history_plot_json(h, 0.05));
  EXPECT_EQ(plot["kind"], "history");
  EXPECT_EQ(plot["runs"].size(), 10u);
  EXPECT_EQ(plot["series"][0]["steps"].size(), 1u);
  EXPECT_EQ(plot["series"][0]["steps"][0]["pos"], 7);

  q.gpu = "v100";
  EXPECT_THROW(point_history(s, q), InputError);
}

TEST(History, FailuresAndBackDown) {
  Store s(temp_db("fail.db"));
  // 1.0 x3, 1.4 x3, 1.0 x3 (back down: the latest level is no regression), then a failure
  for (int i = 0; i < 9; ++i)
    add_run(s, "H100", i + 1, {speed_point(kTitle, 256, "cuda", "tr", series(i >= 3 && i < 6 ? 1.4 : 1.0, 0.005, 40, 10 + i))});
  HistoryQuery q;
  q.title = kTitle;
  q.provider = "tr";  // by column label
  auto h = point_history(s, q);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].provider, "cuda");
  EXPECT_EQ(h[0].entries[3].step, "up");
  EXPECT_EQ(h[0].entries[6].step, "down");
  EXPECT_FALSE(h[0].latest_regression());

  StoredPoint bad = speed_point(kTitle, 256, "cuda", "tr", {});
  bad.result.error = "out of memory";
  bad.value = -1;
  add_run(s, "H100", 10, {bad});
  h = point_history(s, q);
  EXPECT_EQ(h[0].entries.back().step, "error");
  EXPECT_TRUE(h[0].latest_regression());  // newly failing
  EXPECT_EQ(h[0].segments.size(), 3u);    // the failure is not fitted

  auto msg = [&](HistoryQuery bad_q) {
    try {
      point_history(s, bad_q);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  HistoryQuery t = q;
  t.title = "act-speed-fwd-batch12-head12-dim128-act_relu-bf15";
  EXPECT_NE(msg(t).find("did you mean '" + kTitle + "'"), std::string::npos) << msg(t);
  t = q;
  t.provider = "triton";
  EXPECT_NE(msg(t).find("providers: cuda (tr)"), std::string::npos) << msg(t);
  t = q;
  t.x = 999;
  EXPECT_NE(msg(t).find("x: 256"), std::string::npos) << msg(t);
}

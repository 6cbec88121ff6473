// Stopping on precision (measure/stop_rule.hpp), through the real protocol (bench_round) and
// the cell's rounds (measure_cell) on a virtual clock: a point whose rounds scatter by a known
// amount stops at the round the interval predicts, a noisy one runs to its ceiling and says
// so, a long call stops at the repeat budget after the minimum, and stop: budget keeps
// do_bench's counts in every round while the first call and the estimate come once a point.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "measure/stop_rule.hpp"
#include "record/run_fields.hpp"
#include "sweep/cell.hpp"
#include "virtual_clock.hpp"

using namespace opbench;

namespace {

Point speed_point(const std::string& provider) {
  Point p;
  p.op = "act";
  p.title = "t";
  p.params.set("metric", Value(std::string("speed")));
  p.x_name = "n";
  p.x_value = 256;
  p.provider = provider;
  return p;
}

// Round r of the synthetic call runs at 1 + level(r) times 0.1 ms; within a round the calls
// differ by a few parts per million (never the order of the rounds).
SyntheticExecutor::CallTime rounds_at(std::function<double(int)> level) {
  return [level](const Point&, int round, size_t call) {
    return 0.1 * (1 + level(round)) * (1 + 1e-6 * double(call % 3));
  };
}

Timing noise_timing() {
  Timing t;  // stop: noise, noise 0.5%, 16 rounds at most, at least 4 rounds and 5 samples
  t.warmup_ms = 25;
  t.rep_ms = 100;
  return t;
}

}  // namespace

TEST(StopRule, StudentQuantiles) {
  EXPECT_DOUBLE_EQ(student_t_975(1), 12.706);
  EXPECT_DOUBLE_EQ(student_t_975(3), 3.182);
  EXPECT_NEAR(student_t_975(31), 2.0395, 1e-3);
  EXPECT_NEAR(student_t_975(1000), 1.9623, 1e-3);
}

TEST(StopRule, TheIntervalHoldsTheRoundsSpreadAndTheSamplesOwn) {
  // Four rounds at +-1%: the rounds' t interval (t(3) * s / 2, s = 1.1547%) beats the samples'.
  std::vector<std::vector<double>> rounds;
  for (int r = 0; r < 4; ++r) rounds.push_back(std::vector<double>(50, r % 2 ? 0.99 : 1.01));
  const Precision p = median_precision(rounds);
  EXPECT_NEAR(p.width(), 2 * 3.182 * 0.011547 / 2, 1e-4);
  // Rounds that agree: the samples' own interval (order statistics of the pooled median).
  std::vector<std::vector<double>> same(4, std::vector<double>{1.0, 1.1, 0.9, 1.0, 1.05, 0.95});
  const Precision q = median_precision(same);
  EXPECT_GT(q.width(), 0.0);
  EXPECT_NEAR(q.median, 1.0, 1e-12);
}

TEST(StopRule, ASamplerWithKnownNoiseStopsWhereTheIntervalSays) {
  // Rounds alternating at +-0.2%: the interval's width is 3.67 sigma after 4 rounds (0.73%),
  // 2.72 sigma after 5 (0.54%), 2.30 sigma after 6 (0.46%): under 0.5% at the sixth.
  const Point p = speed_point("a");
  SyntheticExecutor ex(rounds_at([](int r) { return r % 2 ? -0.002 : 0.002; }), 0.02);
  const CellResult got = measure_cell(ex, {&p}, noise_timing());
  ASSERT_TRUE(got.finished());
  const Result& r = got.results[0];
  EXPECT_EQ(r.stop_reason, "noise");
  EXPECT_EQ(r.rounds.size(), 6u);
  EXPECT_LT(r.precision, 0.005);
  EXPECT_GT(r.precision, 0.004);
  // Rounds of 100 ms / 16 of samples costing 0.1202 ms each by the first round's estimate: 51
  // a round, every round.
  for (int64_t n : r.rounds) EXPECT_EQ(n, 51);
}

TEST(StopRule, QuietRoundsStopAtTheMinimum) {
  const Point p = speed_point("a");
  SyntheticExecutor ex(rounds_at([](int) { return 0.0; }), 0.02);
  const Result r = measure_cell(ex, {&p}, noise_timing()).results[0];
  EXPECT_EQ(r.stop_reason, "noise");
  EXPECT_EQ(r.rounds.size(), 4u);  // Timing::min_rounds
}

TEST(StopRule, ANoisySamplerRunsToItsCeilingAndSaysSo) {
  const Point p = speed_point("a");
  SyntheticExecutor ex(rounds_at([](int r) { return r % 2 ? -0.05 : 0.05; }), 0.02);
  const Result r = measure_cell(ex, {&p}, noise_timing()).results[0];
  EXPECT_EQ(r.stop_reason, "ceiling");
  EXPECT_EQ(r.rounds.size(), 16u);  // Timing::rounds: all of rep_ms spent
  EXPECT_GT(r.precision, 0.005);
}

TEST(StopRule, ALongCallStopsAtTheRepeatBudgetAfterTheMinimum) {
  // 60 ms calls scattering by 5%: one sample a round; the repeat budget (100 ms) is spent
  // after two rounds, but four rounds and five samples come first.
  const Point p = speed_point("a");
  SyntheticExecutor ex([](const Point&, int round, size_t) { return 60.0 * (round % 2 ? 0.95 : 1.05); }, 0.02);
  const Result r = measure_cell(ex, {&p}, noise_timing()).results[0];
  EXPECT_EQ(r.stop_reason, "ceiling");
  EXPECT_EQ(r.rounds, (std::vector<int64_t>{1, 1, 1, 1, 1}));
  // The first round: a first call, one more to confirm the estimate (not five), one warm-up
  // call and one sample; every later round a warm-up call and a sample.
  EXPECT_EQ(ex.calls_by_round, (std::vector<size_t>{4, 2, 2, 2, 2}));
}

TEST(StopRule, EachProviderStopsOnItsOwn) {
  // In one cell, a quiet provider stops at four rounds while a noisy one goes on alone.
  const Point quiet = speed_point("quiet"), noisy = speed_point("noisy");
  SyntheticExecutor ex(
      [](const Point& p, int round, size_t call) {
        const double level = p.provider == "noisy" ? (round % 2 ? -0.05 : 0.05) : 0;
        return 0.1 * (1 + level) * (1 + 1e-6 * double(call % 3));
      },
      0.02);
  const CellResult got = measure_cell(ex, {&quiet, &noisy}, noise_timing());
  EXPECT_EQ(got.results[0].rounds.size(), 4u);
  EXPECT_EQ(got.results[0].stop_reason, "noise");
  EXPECT_EQ(got.results[1].rounds.size(), 16u);
  EXPECT_EQ(got.results[1].stop_reason, "ceiling");
}

TEST(StopRule, AtLeastARoundPerProviderOfTheCell) {
  // Five quiet providers: each takes five rounds, so that each has come first once.
  std::vector<Point> points;
  for (const char* name : {"a", "b", "c", "d", "e"}) points.push_back(speed_point(name));
  SyntheticExecutor ex(rounds_at([](int) { return 0.0; }), 0.02);
  const CellResult got = measure_cell(ex, {&points[0], &points[1], &points[2], &points[3], &points[4]}, noise_timing());
  for (const Result& r : got.results) {
    EXPECT_EQ(r.rounds.size(), 5u);
    EXPECT_EQ(r.stop_reason, "noise");
  }
}

TEST(StopRule, BudgetKeepsDoBenchsCountsInEveryRound) {
  // do_bench's counts from one estimate: the estimate of a 0.1 ms call after a 0.02 ms flush is
  // 0.12 ms; a round of 25 / 8 ms warm-up and 100 / 8 ms repeat: 26 warm-up calls, 104 samples.
  // As every round re-estimated before, on this clock every round gets the same counts; the
  // first call and the five estimate calls come in the first round only.
  const Point p = speed_point("a");
  SyntheticExecutor ex(rounds_at([](int) { return 0.0; }), 0.02);
  Timing t = noise_timing();
  t.stop_rule = StopRule::budget;
  t.rounds = 8;
  const BenchCounts n = bench_counts(0.12, [] {
    Timing r;
    r.warmup_ms = 25.0 / 8;
    r.rep_ms = 100.0 / 8;
    return r;
  }());
  EXPECT_EQ(n.warmup, 26u);
  EXPECT_EQ(n.repeat, 104u);
  const Result r = measure_cell(ex, {&p}, t).results[0];
  EXPECT_EQ(r.stop_reason, "budget");
  EXPECT_EQ(r.rounds, std::vector<int64_t>(8, 104));
  std::vector<size_t> calls(8, 26 + 104);
  calls[0] += 1 + 5;
  EXPECT_EQ(ex.calls_by_round, calls);
  for (double v : r.samples) EXPECT_NEAR(v, 0.1, 1e-6);
}

TEST(StopRule, BudgetKeepsALongCallsSingleSampleARound) {
  const Point p = speed_point("a");
  SyntheticExecutor ex([](const Point&, int, size_t) { return 60.0; }, 0.02);
  Timing t = noise_timing();
  t.stop_rule = StopRule::budget;
  t.rounds = 8;
  const Result r = measure_cell(ex, {&p}, t).results[0];
  EXPECT_EQ(r.rounds, std::vector<int64_t>(8, 1));
  std::vector<size_t> calls(8, 2);
  // do_bench's first call, then one call confirms what five would: counts of 1 and 1, once.
  calls[0] += 1 + 1;
  EXPECT_EQ(ex.calls_by_round, calls);
}

TEST(StopRule, ALongCallThatSpeedsUpTakesTheFiveCallEstimate) {
  // A first call over the budget (lazy work) whose next call is under it: the estimate of five.
  const Point p = speed_point("a");
  SyntheticExecutor ex([](const Point&, int round, size_t i) { return round == 0 && i == 0 ? 60.0 : 0.5; }, 0.02);
  Timing t = noise_timing();
  t.stop_rule = StopRule::budget;
  t.rounds = 8;
  measure_cell(ex, {&p}, t);
  EXPECT_EQ(ex.calls_by_round[0] - ex.calls_by_round[1], 1u + 1 + 5);
}

TEST(StopRule, AWarmCallSkipsTheFirstCall) {
  // A call the check has run on this placement: no first call. A long one is confirmed by its
  // first estimate call; a short one takes four more, and do_bench's counts from their mean.
  Timing t;
  t.stop_rule = StopRule::budget;
  t.warmup_ms = 25.0 / 8;
  t.rep_ms = 100.0 / 8;
  for (double call_ms : {60.0, 0.1}) {
    VirtualClock clock(0.02);
    size_t calls = 0;
    const BenchRound b = bench_round(clock, [&] {
      clock.now += call_ms;
      ++calls;
    }, t, /*warm=*/true);
    const BenchCounts n = bench_counts(call_ms + 0.02, t);
    EXPECT_NEAR(b.estimate_ms, call_ms + 0.02, 1e-9);
    EXPECT_EQ(calls, (call_ms > 12.5 ? 1u : 5u) + n.warmup + n.repeat) << call_ms;
  }
}

TEST(StopRule, TheRuleInWords) {
  EXPECT_EQ(stop_rule_text("budget", 0, 0, 0, 8), "8 rounds, all of them (do_bench's fixed budget)");
  EXPECT_EQ(stop_rule_text("noise", 0.5, 4, 5, 16),
            "4 to 16 rounds, stopping once the 95% interval of a median is under 0.5% (at least 5 samples; at most "
            "the repeat budget)");
  EXPECT_EQ(stop_rule_text("noise", 1, 4, 5, 2).substr(0, 31), "2 rounds, stopping once the 95%");
  EXPECT_EQ(stop_rule_text("", 0, 0, 0, 8), "8 rounds");  // a rule not recorded
  EXPECT_EQ(stop_rule_text("", 0, 0, 0, 0), "");
}

// Tests of opbench diff and merge (src/diff): verdicts on synthetic runs with known
// shifts and noise, memory and error points, label mapping, % of peak across GPUs, the
// summary; merge idempotence and id remapping; bad input (history: history_test.cpp). Torch-free.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "core/error.hpp"
#include "diff/diff.hpp"
#include "exchange/merge.hpp"
#include "record/median_interval.hpp"
#include "sql_file.hpp"
#include "stored_points.hpp"
#include "temp_db.hpp"

namespace fs = std::filesystem;
using namespace opbench;

namespace {

const std::string kTitle = "act-speed-fwd-batch12-head12-dim128-act_relu-bf16";
const std::string kMemTitle = "act-memory-fwd-batch12-head12-dim128-act_relu-bf16";

std::string temp_db(const std::string& name) { return fresh_db_path("diff", name); }

// n samples around `center` with relative noise `rel` (normal, seeded: reproducible).
std::vector<double> noisy(double center, double rel, size_t n, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> d(0, 1);
  std::vector<double> v;
  for (size_t i = 0; i < n; ++i) v.push_back(center * (1 + rel * d(gen)));
  return v;
}

// A point as an imported document holds it: one value, no samples.
StoredPoint value_point(const std::string& title, int64_t x, const std::string& provider,
                        const std::string& label, double value, const std::string& metric = "speed") {
  StoredPoint sp = speed_point(title, x, provider, label, {});
  sp.point.params.set("metric", metric);
  sp.result.unit = metric == "memory" ? "MiB" : "ms";
  sp.value = value;
  if (value == -1) sp.result.error = "imported as -1";
  return sp;
}

StoredPoint memory_point(const std::string& title, int64_t x, const std::string& provider, double mib) {
  StoredPoint sp = speed_point(title, x, provider, "to", {mib});
  sp.point.params.set("metric", std::string("memory"));
  sp.result.unit = "MiB";
  sp.stat = "max";
  sp.value = mib;
  return sp;
}

RunRecord run_of(int64_t id, std::vector<StoredPoint> points, const std::string& gpu = "H100",
                 double peak = 0) {
  RunRecord r;
  r.run.id = id;
  r.run.env.gpu = gpu;
  r.run.env.peak_gbps = peak;
  r.points = std::move(points);
  return r;
}

const DiffRow& row_at(const DiffResult& d, int64_t x, const std::string& provider = "torch") {
  for (const auto& r : d.rows)
    if (r.x == x && r.head_provider == provider) return r;
  throw std::runtime_error("no row at x=" + std::to_string(x));
}

}  // namespace

// --- the statistics -------------------------------------------------------------------------

TEST(Verdict, MannWhitney) {
  std::vector<double> a = noisy(1.0, 0.01, 30, 1), b = noisy(1.2, 0.01, 30, 2);
  EXPECT_LT(mann_whitney_p(a, b), 1e-6);
  EXPECT_GT(mann_whitney_p(a, a), 0.9);
  EXPECT_DOUBLE_EQ(mann_whitney_p({1, 1, 1}, {1, 1, 1}), 1.0);  // all tied
  // Small samples: 5 against 5 fully separated is p ~ 0.012 (normal approximation).
  double p = mann_whitney_p({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10});
  EXPECT_GT(p, 0.005);
  EXPECT_LT(p, 0.02);
  // Same distribution, different draws: not significant.
  EXPECT_GT(mann_whitney_p(noisy(1.0, 0.05, 40, 3), noisy(1.0, 0.05, 40, 4)), kAlpha);
}

// Samples of a 2.9 us call timed by a clock of 32 ns ticks: `center` ticks, spread over +-2.
std::vector<double> ticks(int center, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_int_distribution<int> d(-2, 2);
  std::vector<double> v;
  for (int i = 0; i < 200; ++i) v.push_back((center + d(gen)) * 32e-6);  // ms
  return v;
}

TEST(Verdict, AChangeOfTwoClockTicksIsNone) {
  EXPECT_NEAR(timer_tick(ticks(91, 1), ticks(89, 2)), 32e-6, 1e-12);
  EXPECT_EQ(timer_tick({0.5}, {0.5}), 0);                          // too few samples
  EXPECT_EQ(timer_tick(noisy(1.0, 0.01, 50, 1), noisy(1.0, 0.01, 50, 2)), 0);  // values that never repeat
  const auto base = speed_point(kTitle, 256, "cuda", "cuda", ticks(91, 1));
  // two ticks faster (2.2%): past a 2% threshold, but a step the clock barely resolves
  const Judgement two = judge(base, speed_point(kTitle, 256, "cuda", "cuda", ticks(89, 2)), 0.02);
  EXPECT_LT(two.ratio, 0.98);
  EXPECT_EQ(two.verdict, Verdict::Same);
  // four ticks faster (4.4%): a change
  EXPECT_EQ(judge(base, speed_point(kTitle, 256, "cuda", "cuda", ticks(87, 3)), 0.02).verdict, Verdict::Faster);
}

TEST(Verdict, MedianIntervalAndSpread) {
  auto v = noisy(2.0, 0.02, 200, 5);
  auto [lo, hi] = median_interval(v, 0.95);
  double m = median_of(v);
  EXPECT_LT(lo, m);
  EXPECT_GT(hi, m);
  EXPECT_GT(lo, 1.98);
  EXPECT_LT(hi, 2.02);
  auto small = median_interval({3, 1, 2}, 0.95);  // too few for an interval: the range
  EXPECT_EQ(small.first, 1);
  EXPECT_EQ(small.second, 3);
  EXPECT_NEAR(half_spread({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}), 3.0, 1e-12);  // p20 3, p80 9
  EXPECT_EQ(half_spread({4}), 0);
}

TEST(Verdict, ShiftsAgainstNoise) {
  auto base = speed_point(kTitle, 256, "torch", "to", noisy(1.0, 0.01, 50, 10));
  // a 20% slowdown with 1% noise
  EXPECT_EQ(judge(base, speed_point(kTitle, 256, "torch", "to", noisy(1.2, 0.01, 50, 11)), 0.05).verdict,
            Verdict::Slower);
  // a 20% speedup
  EXPECT_EQ(judge(base, speed_point(kTitle, 256, "torch", "to", noisy(0.8, 0.01, 50, 12)), 0.05).verdict,
            Verdict::Faster);
  // a 1% shift inside the noise: SAME
  auto j = judge(base, speed_point(kTitle, 256, "torch", "to", noisy(1.01, 0.01, 50, 13)), 0.05);
  EXPECT_EQ(j.verdict, Verdict::Same);
  EXPECT_FALSE(j.regression);
  EXPECT_TRUE(j.tested);
  // The same point against itself.
  EXPECT_EQ(judge(base, base, 0.05).verdict, Verdict::Same);
  // Noise larger than the shift, threshold below the shift: never SLOWER (UNSURE or SAME).
  auto wide = speed_point(kTitle, 256, "torch", "to", noisy(1.0, 0.10, 40, 14));
  for (uint64_t seed = 20; seed < 40; ++seed) {
    auto h = speed_point(kTitle, 256, "torch", "to", noisy(1.03, 0.10, 40, seed));
    auto jj = judge(wide, h, 0.01);
    EXPECT_NE(jj.verdict, Verdict::Slower) << "seed " << seed << " ratio " << jj.ratio;
    EXPECT_NE(jj.verdict, Verdict::Faster) << "seed " << seed << " ratio " << jj.ratio;
  }
  // A 10% jump seen in 5 samples each with 30% noise: not confirmed -> UNSURE.
  auto a = speed_point(kTitle, 256, "torch", "to", {1.0, 1.3, 0.7, 1.1, 0.9});
  auto b = speed_point(kTitle, 256, "torch", "to", {1.1, 1.43, 0.77, 1.21, 0.99});
  EXPECT_EQ(judge(a, b, 0.05).verdict, Verdict::Unsure);
  // A 6% shift with 0.5% noise and enough samples: a real regression past 5%.
  EXPECT_EQ(judge(base, speed_point(kTitle, 256, "torch", "to", noisy(1.06, 0.005, 50, 15)), 0.05).verdict,
            Verdict::Slower);
  // ... which a 10% threshold calls SAME.
  EXPECT_EQ(judge(base, speed_point(kTitle, 256, "torch", "to", noisy(1.06, 0.005, 50, 15)), 0.10).verdict,
            Verdict::Same);
}

// A point measured in rounds: `levels` are the rounds' centres (each round one placement of
// memory), `per` samples a round with relative noise `rel`.
StoredPoint rounds_point(const std::vector<double>& levels, size_t per, double rel, uint64_t seed) {
  std::vector<double> all;
  std::vector<int64_t> counts;
  for (size_t r = 0; r < levels.size(); ++r) {
    auto v = noisy(levels[r], rel, per, seed + r);
    all.insert(all.end(), v.begin(), v.end());
    counts.push_back(int64_t(per));
  }
  auto sp = speed_point(kTitle, 512, "torch", "to", all);
  if (levels.size() > 1) sp.result.rounds = counts;
  return sp;
}

TEST(Verdict, RoundsAreTheUnitOfEvidence) {
  // The act relu backward n = 512 pattern (as measured on an H100): two placement levels 0.8 us
  // apart, head on the high one in three rounds of four, base mostly low. The 800 samples a
  // side make the sample tests significant (p ~ 1e-45), but the rounds overlap: UNSURE.
  auto base = rounds_point({25.54, 25.02, 24.90, 25.36}, 200, 0.002, 100);
  auto head = rounds_point({25.12, 25.92, 25.92, 25.92}, 200, 0.002, 200);
  Judgement j = judge(base, head, 0.0);
  EXPECT_LT(j.p_value, 1e-10);
  EXPECT_EQ(j.rounds_base, 4u);
  EXPECT_EQ(j.rounds_head, 4u);
  EXPECT_GT(j.round_p, kAlpha);
  EXPECT_EQ(j.verdict, Verdict::Unsure);
  EXPECT_FALSE(j.regression);
  // The same samples without their rounds (as stored before rounds were kept): SLOWER.
  auto flat_base = base, flat_head = head;
  flat_base.result.rounds.clear();
  flat_head.result.rounds.clear();
  EXPECT_EQ(judge(flat_base, flat_head, 0.0).verdict, Verdict::Slower);
  // A 5% regression slower in every placement: SLOWER (4 against 4 separated: p ~ 0.03).
  auto slow = rounds_point({26.8, 26.3, 26.2, 26.6}, 200, 0.002, 300);
  j = judge(base, slow, 0.0);
  EXPECT_EQ(j.verdict, Verdict::Slower);
  EXPECT_LT(j.round_p, kAlpha);
  EXPECT_EQ(judge(slow, base, 0.0).verdict, Verdict::Faster);
  // Fewer rounds than the test can use (2 against 2): every round must lie beyond the other
  // side's.
  auto b2 = rounds_point({1.00, 1.02}, 100, 0.001, 400);
  EXPECT_EQ(judge(b2, rounds_point({1.04, 1.06}, 100, 0.001, 500), 0.0).verdict, Verdict::Slower);
  EXPECT_EQ(judge(b2, rounds_point({1.01, 1.06}, 100, 0.001, 600), 0.0).verdict, Verdict::Unsure);
  // One side without rounds counts as one placement: beyond all four rounds of the other.
  auto one = rounds_point({26.5}, 400, 0.002, 700);
  EXPECT_EQ(judge(base, one, 0.0).verdict, Verdict::Slower);
  EXPECT_EQ(judge(base, rounds_point({25.4}, 400, 0.002, 800), 0.0).verdict, Verdict::Unsure);
  // Counts that do not add up to the samples: the rounds are ignored (one median).
  auto odd = head;
  odd.result.rounds = {200, 200};
  EXPECT_EQ(round_medians(odd.result).size(), 1u);
  EXPECT_EQ(round_medians(head.result).size(), 4u);
}

// A change far beyond the threshold is decided whatever the spread; the noise gates only judge
// changes near it.
TEST(Verdict, AWideCleanShiftIsDecided) {
  // The CPU case: torch 20 samples near 0.24 ms, the other side 49 samples from 1 to 250 ms,
  // every one above every torch sample (a ratio of ~100), its p20-p80 band wider than the shift.
  std::vector<double> fast, slow;
  for (int i = 0; i < 20; ++i) fast.push_back(0.23 + 0.001 * i);
  for (int i = 0; i < 49; ++i) slow.push_back(i < 15 ? 1.0 + 0.02 * i : 10 * std::pow(1.1, i - 15));
  auto b = speed_point(kTitle, 256, "torch", "to", fast), h = speed_point(kTitle, 256, "torch", "to", slow);
  ASSERT_GT(half_spread(slow), h.value - b.value);  // the old band gate's veto
  Judgement j = judge(b, h, 0.0);
  EXPECT_EQ(j.verdict, Verdict::Slower);
  EXPECT_GT(j.ratio, 50);
  EXPECT_EQ(judge(b, h, 0.05).verdict, Verdict::Slower);
  EXPECT_EQ(judge(h, b, 0.05).verdict, Verdict::Faster);
  // The interval alone: two samples of the fast side among the slow ones (not separated), the
  // interval of the ratio of medians still far beyond the threshold.
  auto mixed = fast;
  mixed[0] = 25.0;
  mixed[1] = 30.0;
  j = judge(speed_point(kTitle, 256, "torch", "to", mixed), h, 0.05);
  EXPECT_GT(j.ci_lo, 1.05);
  EXPECT_EQ(j.verdict, Verdict::Slower);
  // Separation alone, too few samples for an interval: 4 against 4 is enough, 3 against 3 not.
  auto b4 = speed_point(kTitle, 256, "torch", "to", {1.0, 1.1, 0.9, 1.05});
  auto h4 = speed_point(kTitle, 256, "torch", "to", {1.2, 3.0, 9.0, 14.0});
  EXPECT_EQ(judge(b4, h4, 0.05).verdict, Verdict::Slower);
  auto b3 = speed_point(kTitle, 256, "torch", "to", {1.0, 1.1, 0.9});
  auto h3 = speed_point(kTitle, 256, "torch", "to", {1.2, 9.0, 30.0});  // its range hides the shift
  EXPECT_EQ(judge(b3, h3, 0.05).verdict, Verdict::Unsure);
  EXPECT_FALSE(separation_decides(3, 3));
  EXPECT_TRUE(separation_decides(4, 4));
  EXPECT_TRUE(separation_decides(3, 5));
  EXPECT_FALSE(separation_decides(1, 1000));
  // In rounds: the rounds agree with a clean shift; one round a side neither confirms nor vetoes.
  auto rb = rounds_point({1.0, 1.01, 0.99, 1.0}, 50, 0.01, 900);
  auto rh = rounds_point({2.0, 30.0, 3.0, 12.0}, 50, 0.5, 910);
  EXPECT_EQ(judge(rb, rh, 0.05).verdict, Verdict::Slower);
  auto one_b = rounds_point({1.0}, 50, 0.01, 920), one_h = rounds_point({8.0}, 50, 0.9, 930);
  j = judge(one_b, one_h, 0.05);
  EXPECT_TRUE(std::isnan(j.round_p));
  EXPECT_EQ(j.verdict, Verdict::Slower);
  // A clean shift the rounds contradict (head's rounds on both sides of base's) stays UNSURE.
  auto split = rounds_point({0.5, 0.5, 3.0, 3.0}, 50, 0.001, 940);
  EXPECT_EQ(judge(rounds_point({1.0, 1.0, 1.0, 1.0}, 50, 0.001, 950), split, 0.05).verdict, Verdict::Unsure);
  // An imported value against a measured point: every sample beyond the threshold decides.
  EXPECT_EQ(judge(value_point(kTitle, 256, "torch", "to", 0.24), h, 0.05).verdict, Verdict::Slower);
  EXPECT_EQ(judge(h, value_point(kTitle, 256, "torch", "to", 0.24), 0.05).verdict, Verdict::Faster);
}

TEST(Verdict, ASmallShiftInsideTheNoiseIsNot) {
  // 3% slower with 10% noise: beyond a 1% threshold, inside the noise: never SLOWER. The clear
  // margin is 5% when the threshold is smaller, so a threshold of 0 (versus) does not make a
  // 1-3% change clear.
  auto base = speed_point(kTitle, 256, "torch", "to", noisy(1.0, 0.10, 200, 960));
  for (double t : {0.0, 0.01}) {
    int decided = 0;
    for (uint64_t seed = 0; seed < 40; ++seed) {
      auto j = judge(base, speed_point(kTitle, 256, "torch", "to", noisy(1.03, 0.10, 200, 1000 + seed)), t);
      decided += j.verdict == Verdict::Slower || j.verdict == Verdict::Faster;
    }
    EXPECT_EQ(decided, 0) << "threshold " << t;
  }
}

TEST(Verdict, AAgainstAStaysSame) {
  // The same code measured twice: 8 rounds a side, each round on its own placement (levels
  // +-4%), 1% noise within a round, many seeds. At the default 5% nothing is SLOWER or FASTER.
  std::mt19937_64 gen(77);
  std::uniform_real_distribution<double> level(0.96, 1.04);
  int decided = 0, same = 0;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    std::vector<double> lb, lh;
    for (int r = 0; r < 8; ++r) lb.push_back(0.02 * level(gen)), lh.push_back(0.02 * level(gen));
    auto j = judge(rounds_point(lb, 60, 0.01, 2000 + 20 * seed), rounds_point(lh, 60, 0.01, 7000 + 20 * seed), 0.05);
    decided += j.verdict == Verdict::Slower || j.verdict == Verdict::Faster;
    same += j.verdict == Verdict::Same;
  }
  EXPECT_EQ(decided, 0);
  EXPECT_GT(same, 190);
}

TEST(Verdict, WithoutSamplesTheThresholdDecides) {
  auto b = value_point(kTitle, 256, "Triton", "tr", 1.0);
  EXPECT_EQ(judge(b, value_point(kTitle, 256, "Triton", "tr", 1.06), 0.05).verdict, Verdict::Slower);
  EXPECT_EQ(judge(b, value_point(kTitle, 256, "Triton", "tr", 1.04), 0.05).verdict, Verdict::Same);
  EXPECT_EQ(judge(b, value_point(kTitle, 256, "Triton", "tr", 0.90), 0.05).verdict, Verdict::Faster);
  // One side with samples: the shift must leave that side's noise.
  auto noisy_head = speed_point(kTitle, 256, "Triton", "tr", noisy(1.08, 0.2, 50, 16));
  EXPECT_EQ(judge(b, noisy_head, 0.05).verdict, Verdict::Unsure);
  auto quiet_head = speed_point(kTitle, 256, "Triton", "tr", noisy(1.08, 0.001, 50, 17));
  EXPECT_EQ(judge(b, quiet_head, 0.05).verdict, Verdict::Slower);
}

TEST(Verdict, FewSamples) {
  // Measured once on each side: the noise is unknown, a 20% shift is UNSURE, never SLOWER.
  auto one_b = speed_point(kTitle, 256, "torch", "to", {1.0});
  auto one_h = speed_point(kTitle, 256, "torch", "to", {1.2});
  EXPECT_EQ(judge(one_b, one_h, 0.05).verdict, Verdict::Unsure);
  EXPECT_EQ(judge(one_b, speed_point(kTitle, 256, "torch", "to", {1.01}), 0.05).verdict, Verdict::Same);
  // A published value against one measurement: the same.
  EXPECT_EQ(judge(value_point(kTitle, 256, "torch", "to", 1.0), one_h, 0.05).verdict, Verdict::Unsure);
  // Three samples: their range is the noise.
  auto tight_b = speed_point(kTitle, 256, "torch", "to", {1.0, 1.01, 0.99});
  auto tight_h = speed_point(kTitle, 256, "torch", "to", {1.2, 1.21, 1.19});
  EXPECT_EQ(judge(tight_b, tight_h, 0.05).verdict, Verdict::Slower);
  EXPECT_EQ(judge(tight_h, tight_b, 0.05).verdict, Verdict::Faster);
  auto wide_b = speed_point(kTitle, 256, "torch", "to", {1.0, 1.5, 0.6});
  EXPECT_EQ(judge(wide_b, tight_h, 0.05).verdict, Verdict::Unsure);
  // Peak memory is deterministic: one sample each, the threshold decides.
  auto mb = memory_point(kMemTitle, 256, "torch", 100), mh = memory_point(kMemTitle, 256, "torch", 120);
  EXPECT_EQ(judge(mb, mh, 0.05).verdict, Verdict::Slower);
  EXPECT_EQ(judge(mh, mb, 0.05).verdict, Verdict::Faster);
}

TEST(Verdict, ErrorsAndOddValues) {
  auto ok = value_point(kTitle, 256, "torch", "to", 1.0);
  auto bad = value_point(kTitle, 256, "torch", "to", -1);
  auto j = judge(ok, bad, 0.05);
  EXPECT_EQ(j.verdict, Verdict::Error);
  EXPECT_TRUE(j.regression);  // newly failing
  j = judge(bad, bad, 0.05);
  EXPECT_EQ(j.verdict, Verdict::Error);
  EXPECT_FALSE(j.regression);  // failing before too
  EXPECT_EQ(judge(bad, ok, 0.05).verdict, Verdict::Fixed);
  EXPECT_EQ(judge(ok, value_point(kTitle, 256, "torch", "to", std::nan("")), 0.05).verdict, Verdict::Unsure);
  EXPECT_EQ(judge(value_point(kTitle, 256, "torch", "to", 0), value_point(kTitle, 256, "torch", "to", 0), 0.05).verdict,
            Verdict::Same);
}

// --- diff of runs ------------------------------------------------------------------------

TEST(Diff, SyntheticRunsWithKnownShifts) {
  std::vector<StoredPoint> b, h;
  // x=256: 20% slower; x=512: 1% inside noise; x=1024: 20% faster; x=2048 only in base;
  // x=4096 only in head.
  b.push_back(speed_point(kTitle, 256, "torch", "to", noisy(1.0, 0.01, 50, 1)));
  h.push_back(speed_point(kTitle, 256, "torch", "to", noisy(1.2, 0.01, 50, 2)));
  b.push_back(speed_point(kTitle, 512, "torch", "to", noisy(2.0, 0.01, 50, 3)));
  h.push_back(speed_point(kTitle, 512, "torch", "to", noisy(2.02, 0.01, 50, 4)));
  b.push_back(speed_point(kTitle, 1024, "torch", "to", noisy(4.0, 0.01, 50, 5)));
  h.push_back(speed_point(kTitle, 1024, "torch", "to", noisy(3.2, 0.01, 50, 6)));
  b.push_back(speed_point(kTitle, 2048, "torch", "to", noisy(8.0, 0.01, 50, 7)));
  h.push_back(speed_point(kTitle, 4096, "torch", "to", noisy(8.0, 0.01, 50, 8)));
  // another provider, unchanged
  b.push_back(speed_point(kTitle, 256, "cuda", "tr", noisy(0.5, 0.01, 50, 9)));
  h.push_back(speed_point(kTitle, 256, "cuda", "tr", noisy(0.5, 0.01, 50, 10)));
  // memory: more memory is worse
  b.push_back(memory_point(kMemTitle, 256, "torch", 100));
  h.push_back(memory_point(kMemTitle, 256, "torch", 130));
  b.push_back(memory_point(kMemTitle, 512, "torch", 200));
  h.push_back(memory_point(kMemTitle, 512, "torch", 150));
  b.push_back(memory_point(kMemTitle, 1024, "torch", 400));
  h.push_back(memory_point(kMemTitle, 1024, "torch", 404));

  DiffResult d = diff_runs(run_of(1, b), run_of(2, h), DiffOptions{});
  ASSERT_EQ(d.rows.size(), 7u);
  EXPECT_EQ(row_at(d, 256).j.verdict, Verdict::Slower);
  EXPECT_NEAR(row_at(d, 256).j.ratio, 1.2, 0.02);
  EXPECT_EQ(row_at(d, 512).j.verdict, Verdict::Same);
  EXPECT_EQ(row_at(d, 1024).j.verdict, Verdict::Faster);
  EXPECT_EQ(row_at(d, 256, "cuda").j.verdict, Verdict::Same);
  ASSERT_EQ(d.only_base.size(), 1u);
  EXPECT_EQ(d.only_base[0].x, 2048);
  ASSERT_EQ(d.only_head.size(), 1u);
  EXPECT_EQ(d.only_head[0].x, 4096);
  // memory verdicts
  int mem_slower = 0, mem_faster = 0, mem_same = 0;
  for (const auto& r : d.rows)
    if (r.metric == "memory") {
      mem_slower += r.j.verdict == Verdict::Slower;
      mem_faster += r.j.verdict == Verdict::Faster;
      mem_same += r.j.verdict == Verdict::Same;
    }
  EXPECT_EQ(mem_slower, 1);
  EXPECT_EQ(mem_faster, 1);
  EXPECT_EQ(mem_same, 1);
  EXPECT_EQ(d.regressions, 2u);  // the speed point at 256 and the memory point at 256

  // Summary: torch first (it has the regressions); cuda unchanged.
  ASSERT_EQ(d.summary.size(), 2u);
  EXPECT_EQ(d.summary[0].provider, "torch");
  EXPECT_EQ(d.summary[0].regressions, 2u);
  EXPECT_EQ(d.summary[0].points, 6u);
  EXPECT_EQ(d.summary[0].counts.at(Verdict::Slower), 2u);
  EXPECT_NEAR(d.summary[0].worst, 1.3, 1e-9);
  EXPECT_EQ(d.summary[1].provider, "cuda");
  EXPECT_NEAR(d.summary[1].geomean, 1.0, 0.01);
  // severity order: regressions first, worst first
  auto sorted = d.by_severity();
  EXPECT_EQ(sorted[0]->metric, "memory");  // 1.3
  EXPECT_EQ(sorted[1]->x, 256);            // 1.2
  EXPECT_EQ(sorted[1]->metric, "speed");

  // --metric filters
  DiffOptions speed;
  speed.metric = "speed";
  EXPECT_EQ(diff_runs(run_of(1, b), run_of(2, h), speed).rows.size(), 4u);
  DiffOptions memory;
  memory.metric = "memory";
  DiffResult dm = diff_runs(run_of(1, b), run_of(2, h), memory);
  EXPECT_EQ(dm.rows.size(), 3u);
  EXPECT_EQ(dm.regressions, 1u);

  // markdown: regressions section first, then the points; JSON: every field
  std::string md = diff_markdown(d);
  EXPECT_NE(md.find("**2 regressions**"), std::string::npos) << md;
  EXPECT_LT(md.find("## Regressions"), md.find("## Changes"));
  EXPECT_NE(md.find("3 of 7 points are SAME"), std::string::npos) << md;
  EXPECT_NE(md.find("| torch | 6 |"), std::string::npos) << md;
  EXPECT_NE(md.find("Only in base (1)"), std::string::npos);
  auto j = nlohmann::json::parse(diff_json(d));
  EXPECT_EQ(j["regressions"], 2);
  ASSERT_EQ(j["points"].size(), 7u);
  for (const auto& p : j["points"])
    for (const char* k : {"title", "x", "provider", "base", "head", "ratio", "verdict"}) EXPECT_TRUE(p.contains(k)) << k;
  EXPECT_EQ(j["points"][0]["verdict"], "SLOWER");
  EXPECT_EQ(j["points"][0]["x"], 256);
  EXPECT_EQ(j["unmatched"]["base"].size(), 1u);
  EXPECT_EQ(j["unmatched"]["head"][0]["x"], 4096);
}

TEST(Diff, ARunAgainstItselfHasNoRegression) {
  std::vector<StoredPoint> pts;
  for (int64_t x : {256, 512, 1024}) pts.push_back(speed_point(kTitle, x, "torch", "to", noisy(double(x) / 256, 0.03, 30, uint64_t(x))));
  pts.push_back(value_point(kTitle, 2048, "torch", "to", -1));
  pts.push_back(memory_point(kMemTitle, 256, "torch", 12.5));
  RunRecord r = run_of(7, pts);
  DiffResult d = diff_runs(r, r, DiffOptions{});
  EXPECT_EQ(d.regressions, 0u);
  EXPECT_EQ(d.rows.size(), 5u);
  for (const auto& row : d.rows)
    EXPECT_TRUE(row.j.verdict == Verdict::Same || row.j.verdict == Verdict::Error) << verdict_name(row.j.verdict);
  EXPECT_NE(diff_markdown(d).find("No regressions."), std::string::npos);
}

TEST(Diff, WarnsWhenTheRunsInterleavedOrSpreadTheirRoundsDifferently) {
  std::vector<StoredPoint> pts = {speed_point(kTitle, 256, "torch", "to", noisy(1.0, 0.01, 20, 1))};
  RunRecord a = run_of(1, pts), b = run_of(2, pts);
  Timing t;
  t.interleave = 1;
  t.processes = 1;
  set_timing(a.run, t);
  t.interleave = 64;
  t.processes = 4;
  set_timing(b.run, t);
  DiffResult d = diff_runs(a, b, DiffOptions{});
  ASSERT_EQ(d.warnings.size(), 2u);
  EXPECT_NE(d.warnings[0].find("interleaved the rounds of different numbers of table cells (base: 1, head: 64)"),
            std::string::npos)
      << d.warnings[0];
  EXPECT_NE(d.warnings[1].find("different numbers of processes (base: 1, head: 4)"), std::string::npos)
      << d.warnings[1];
  b.run.processes = 0;  // unknown (an import): nothing to compare
  EXPECT_EQ(diff_runs(a, b, DiffOptions{}).warnings.size(), 1u);
}

TEST(Diff, WarnsWhenTheRunsWereTimedDifferently) {
  std::vector<StoredPoint> pts = {speed_point(kTitle, 256, "torch", "to", noisy(1.0, 0.01, 20, 1))};
  RunRecord a = run_of(1, pts), b = run_of(2, pts);
  Timing t;
  t.flush_l2 = L2Flush::write;
  set_timing(a.run, t);
  t.flush_l2 = L2Flush::read;
  set_timing(b.run, t);
  DiffResult d = diff_runs(a, b, DiffOptions{});
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_NE(d.warnings[0].find("base: write, head: read"), std::string::npos) << d.warnings[0];
  EXPECT_NE(diff_markdown(d).find("**Warning:** the runs flushed L2 differently"), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(diff_json(d))["warnings"].size(), 1u);
  b.run.flush_l2 = "";  // an imported run: nothing to compare
  EXPECT_TRUE(diff_runs(a, b, DiffOptions{}).warnings.empty());
  b.run.stat = "p20";
  a.run.stat = "median";
  d = diff_runs(a, b, DiffOptions{});
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_NE(d.warnings[0].find("base: median, head: p20"), std::string::npos);
  // Threads, rounds, budgets and tuning, each a warning of its own.
  b = run_of(2, pts);
  t = Timing();
  t.threads = 1;
  set_timing(a.run, t);
  t.threads = 0;
  t.rounds = 3;
  t.rep_ms = 20;
  set_timing(b.run, t);
  a.run.env.tuning.emplace();
  b.run.env.tuning = std::vector<std::pair<std::string, std::string>>{{"OPBENCH_TUNING_1D", "flat_units=4"}};
  d = diff_runs(a, b, DiffOptions{});
  ASSERT_EQ(d.warnings.size(), 4u) << diff_markdown(d);
  EXPECT_NE(d.warnings[0].find("thread counts (base: 1 thread, head: LibTorch's own threads)"), std::string::npos)
      << d.warnings[0];
  EXPECT_NE(d.warnings[1].find("rounds (base: 16, head: 3)"), std::string::npos) << d.warnings[1];
  EXPECT_NE(d.warnings[2].find("repeat 100 ms, head: warm-up 25 ms, repeat 20 ms"), std::string::npos) << d.warnings[2];
  EXPECT_NE(d.warnings[3].find("(base: none, head: OPBENCH_TUNING_1D=flat_units=4)"), std::string::npos) << d.warnings[3];
  // A run that did not record its tuning compares with nothing.
  a.run.env.tuning.reset();
  EXPECT_EQ(diff_runs(a, b, DiffOptions{}).warnings.size(), 3u);
}

TEST(Diff, CountsPointsMeasuredWhileTheGpuThrottled) {
  auto hot = [](StoredPoint p, bool throttled) {
    p.state.known = true;
    p.state.sm_mhz = throttled ? 1100 : 1980;
    p.state.sm_default_mhz = 1980;
    p.state.reasons = throttled ? clock_reason::kSwPowerCap : 0;
    p.state.throttled = throttled;
    return p;
  };
  std::vector<StoredPoint> b, h;
  for (int64_t x : {256, 512, 1024}) {
    b.push_back(hot(speed_point(kTitle, x, "torch", "to", noisy(1.0, 0.01, 30, uint64_t(x))), x == 512));
    h.push_back(hot(speed_point(kTitle, x, "torch", "to", noisy(1.0, 0.01, 30, uint64_t(x) + 1)), x >= 512));
  }
  DiffResult d = diff_runs(run_of(1, b), run_of(2, h), DiffOptions{});
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_NE(d.warnings[0].find("2 points were measured while the GPU throttled for power or heat (base: 1, head: 2)"),
            std::string::npos)
      << d.warnings[0];
  auto j = nlohmann::json::parse(diff_json(d));
  EXPECT_EQ(j["points"][1]["throttled"], nlohmann::json::array({true, true}));
  EXPECT_EQ(j["points"][0]["throttled"], nlohmann::json::array({false, false}));
  EXPECT_TRUE(diff_runs(run_of(1, {b[0]}), run_of(2, {h[0]}), DiffOptions{}).warnings.empty());
}

TEST(Diff, ErrorPoints) {
  std::vector<StoredPoint> b = {value_point(kTitle, 256, "torch", "to", 1.0), value_point(kTitle, 512, "torch", "to", -1),
                                value_point(kTitle, 1024, "torch", "to", -1)};
  std::vector<StoredPoint> h = {value_point(kTitle, 256, "torch", "to", -1), value_point(kTitle, 512, "torch", "to", 2.0),
                                value_point(kTitle, 1024, "torch", "to", -1)};
  DiffResult d = diff_runs(run_of(1, b), run_of(2, h), DiffOptions{});
  EXPECT_EQ(row_at(d, 256).j.verdict, Verdict::Error);
  EXPECT_EQ(row_at(d, 512).j.verdict, Verdict::Fixed);
  EXPECT_EQ(row_at(d, 1024).j.verdict, Verdict::Error);
  EXPECT_EQ(d.regressions, 1u);  // only the point that worked before
  auto j = nlohmann::json::parse(diff_json(d));
  EXPECT_EQ(j["points"][0]["head_error"], "imported as -1");
  EXPECT_TRUE(j["points"][0]["ratio"].is_null());
}

TEST(Diff, LabelMapping) {
  // A published document's "tr" (provider "Triton") against our cuda provider.
  std::vector<StoredPoint> b = {value_point(kTitle, 256, "Triton", "tr", 1.0), value_point(kTitle, 256, "Torch", "to", 2.0)};
  std::vector<StoredPoint> h = {speed_point(kTitle, 256, "cuda", "cu", noisy(0.5, 0.01, 30, 1)),
                                speed_point(kTitle, 256, "torch", "to", noisy(2.0, 0.01, 30, 2))};
  try {
    diff_runs(run_of(1, b), run_of(2, h), DiffOptions{});
    ADD_FAILURE() << "matched without a mapping";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--map"), std::string::npos) << e.what();
  }
  DiffOptions opt;
  opt.map = parse_label_map("tr=cuda, to=torch");
  DiffResult d = diff_runs(run_of(1, b), run_of(2, h), opt);
  ASSERT_EQ(d.rows.size(), 2u);
  EXPECT_EQ(d.rows[0].base_label, "tr");
  EXPECT_EQ(d.rows[0].head_provider, "cuda");
  EXPECT_EQ(d.rows[0].provider(), "Triton -> cuda");
  EXPECT_EQ(d.rows[0].j.verdict, Verdict::Faster);
  EXPECT_EQ(d.rows[1].j.verdict, Verdict::Same);
  // the head's label works as the target too; the base's provider name as the source
  opt.map = parse_label_map("Triton=cu");
  d = diff_runs(run_of(1, b), run_of(2, h), opt);
  ASSERT_EQ(d.rows.size(), 1u);
  EXPECT_EQ(d.rows[0].head_provider, "cuda");
  EXPECT_EQ(d.only_base.size(), 1u);  // Torch is not torch without a mapping
  EXPECT_EQ(d.only_head.size(), 1u);
  for (std::string bad : {"tr", "=cuda", "tr=", "tr=cuda,tr=torch", "a=b=c", ","})
    EXPECT_THROW(parse_label_map(bad), InputError) << bad;
}

TEST(Diff, PercentOfPeakAcrossGpus) {
  // Base: a GPU with 1000 GB/s, 2 ms for 1 GB = 500 GB/s = 50%. Head: 2000 GB/s, 1 ms = 50%.
  auto bp = speed_point(kTitle, 256, "torch", "to", noisy(2.0, 0.001, 30, 1));
  bp.result.bytes = 1e9;
  bp.result.gbps = 1e9 / (bp.result.stats.median * 1e-3) / 1e9;
  bp.result.pct_peak = 100 * bp.result.gbps / 1000;
  auto hp = speed_point(kTitle, 256, "torch", "to", noisy(1.0, 0.001, 30, 2));
  hp.result.bytes = 1e9;
  hp.result.gbps = 1e9 / (hp.result.stats.median * 1e-3) / 1e9;
  hp.result.pct_peak = 100 * hp.result.gbps / 2000;
  DiffResult d = diff_runs(run_of(1, {bp}, "A800", 1000), run_of(2, {hp}, "H100", 2000), DiffOptions{});
  ASSERT_TRUE(d.peaks);
  const DiffRow& r = d.rows.at(0);
  EXPECT_EQ(r.j.verdict, Verdict::Faster);
  EXPECT_NEAR(r.j.ratio, 0.5, 0.01);
  EXPECT_NEAR(r.pct_base, 50, 0.5);
  EXPECT_NEAR(r.pct_head, 50, 0.5);
  EXPECT_NEAR(r.pct_ratio, 1.0, 0.01);  // the same efficiency on either GPU
  EXPECT_NEAR(d.summary[0].geomean_pct, 1.0, 0.01);
  auto j = nlohmann::json::parse(diff_json(d));
  EXPECT_NEAR(j["points"][0]["pct_peak_ratio"].get<double>(), 1.0, 0.01);
  EXPECT_NE(diff_markdown(d).find("% of peak"), std::string::npos);
  // When only one run measured a peak there is no % comparison.
  DiffResult d2 = diff_runs(run_of(1, {bp}, "A800", 0), run_of(2, {hp}, "H100", 2000), DiffOptions{});
  EXPECT_FALSE(d2.peaks);
  EXPECT_TRUE(std::isnan(d2.rows[0].pct_ratio));
  EXPECT_FALSE(nlohmann::json::parse(diff_json(d2))["points"][0].contains("pct_peak_ratio"));
}

TEST(Diff, BadInput) {
  std::vector<StoredPoint> speed = {speed_point(kTitle, 256, "torch", "to", noisy(1, 0.01, 10, 1))};
  std::vector<StoredPoint> memory = {memory_point(kMemTitle, 256, "torch", 10)};
  // metrics that cannot be compared
  try {
    diff_runs(run_of(1, speed), run_of(2, memory), DiffOptions{});
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("mismatched metrics"), std::string::npos) << e.what();
  }
  // one title measured as speed in one run and memory in the other
  auto odd = memory_point(kTitle, 256, "torch", 10);
  odd.point.params.erase("metric");
  try {
    diff_runs(run_of(1, speed), run_of(2, {odd}), DiffOptions{});
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("mismatched metrics"), std::string::npos) << e.what();
  }
  DiffOptions mem;
  mem.metric = "memory";
  EXPECT_THROW(diff_runs(run_of(1, speed), run_of(2, speed), mem), InputError);
  // nothing in common
  std::vector<StoredPoint> other = {speed_point("other-speed", 256, "torch", "to", {1, 2, 3})};
  try {
    diff_runs(run_of(1, speed), run_of(2, other), DiffOptions{});
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("nothing matched"), std::string::npos) << e.what();
  }
  EXPECT_THROW(diff_runs(run_of(1, {}), run_of(2, speed), DiffOptions{}), InputError);
  // no title in common, whatever the metrics: said so, with the nearest titles
  std::vector<StoredPoint> near = {speed_point(kTitle + "-v2", 256, "torch", "to", {1, 2, 3}),
                                   speed_point("zzz-speed", 256, "torch", "to", {1, 2, 3})};
  for (auto& p : near) p.point.params.erase("metric");
  try {
    diff_runs(run_of(1, speed), run_of(2, near), DiffOptions{});
    ADD_FAILURE();
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("share no table title"), std::string::npos) << m;
    EXPECT_NE(m.find("the nearest are the base's '" + kTitle + "' and the head's '" + kTitle + "-v2'"),
              std::string::npos) << m;
  }
  // unknown selectors and a missing database: the store refuses them
  Store s(temp_db("sel.db"));
  RunInfo r;
  s.begin_run(r);
  EXPECT_THROW(s.select("label:nope"), InputError);
  EXPECT_THROW(s.select("tomorrow"), InputError);
  EXPECT_THROW(Store(temp_db("missing.db"), /*create=*/false), RuntimeFailure);
}

// --- versus: one run's provider against the best of others -------------------------------

namespace {

VersusOptions versus(const std::string& provider, std::vector<std::string> against, double threshold = 0) {
  VersusOptions o;
  o.provider = provider;
  o.against = std::move(against);
  o.threshold = threshold;
  return o;
}

// Speed points of kTitle at one x, one per {provider, center}: 1% noise, n samples each, seeds
// counting up from `seed`; labels as the configs give them (cuda: cu).
void add_at(std::vector<StoredPoint>& pts, int64_t x, const std::vector<std::pair<std::string, double>>& centers,
            size_t n, uint64_t seed) {
  static const std::map<std::string, std::string> labels = {
      {"torch", "to"}, {"torch_compile", "toc"}, {"torch_naive", "ton"}, {"cuda", "cu"}};
  for (const auto& [provider, center] : centers)
    pts.push_back(speed_point(kTitle, x, provider, labels.at(provider), noisy(center, 0.01, n, seed++)));
}

std::string versus_error(const RunRecord& run, const VersusOptions& opt) {
  try {
    versus_run(run, opt);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(Versus, BestAgainstPointPerPoint) {
  // memory points: left out under the default --metric speed
  std::vector<StoredPoint> pts = {memory_point(kMemTitle, 256, "torch", 10), memory_point(kMemTitle, 256, "cuda", 12)};
  // x=256: torch_compile is the faster; x=512: torch (torch_naive, not named, is left out)
  add_at(pts, 256, {{"torch", 1.0}, {"torch_compile", 0.8}, {"cuda", 0.8}}, 40, 1);
  add_at(pts, 512, {{"torch", 1.5}, {"torch_compile", 2.0}, {"cuda", 1.5}, {"torch_naive", 0.1}}, 40, 4);
  // x=1024: no cuda point; x=2048: no against point
  add_at(pts, 1024, {{"torch", 3.0}}, 40, 8);
  add_at(pts, 2048, {{"cuda", 3.0}}, 40, 9);
  RunRecord run = run_of(3, pts);
  run.run.label = "nightly";
  DiffResult d = versus_run(run, versus("cuda", {"torch", "torch_compile"}));
  ASSERT_EQ(d.rows.size(), 2u);
  EXPECT_EQ(row_at(d, 256, "cuda").base_provider, "torch_compile");
  EXPECT_EQ(row_at(d, 256, "cuda").provider(), "torch_compile -> cuda");
  EXPECT_EQ(row_at(d, 512, "cuda").base_provider, "torch");
  EXPECT_EQ(row_at(d, 512, "cuda").base_label, "to");
  ASSERT_EQ(d.only_base.size(), 1u);  // without a cuda point
  EXPECT_EQ(d.only_base[0].x, 1024);
  ASSERT_EQ(d.only_head.size(), 1u);  // without an against point
  EXPECT_EQ(d.only_head[0].x, 2048);
  EXPECT_EQ(d.opt.versus, "cuda against the faster of torch, torch_compile");
  EXPECT_EQ(d.opt.threshold, 0);
  EXPECT_EQ(d.base.id, 3);
  EXPECT_EQ(d.head.id, 3);
  // providers by column label work as well
  DiffResult dl = versus_run(run, versus("cu", {"to", "toc"}));
  EXPECT_EQ(dl.rows.size(), 2u);
  EXPECT_EQ(row_at(dl, 256, "cuda").base_provider, "torch_compile");
  // memory: the smallest peak
  VersusOptions mem = versus("cuda", {"torch"});
  mem.metric = "memory";
  DiffResult dm = versus_run(run, mem);
  ASSERT_EQ(dm.rows.size(), 1u);
  EXPECT_EQ(dm.rows[0].j.verdict, Verdict::Slower);  // 12 MiB against 10 MiB: deterministic
  EXPECT_EQ(dm.opt.versus, "cuda against torch");
}

TEST(Versus, VerdictsAgainstTheBest) {
  // x=256: cuda 10% slower than the best (torch_compile), with 1% noise; x=1024: 20% faster
  std::vector<StoredPoint> pts;
  add_at(pts, 256, {{"torch", 1.5}, {"torch_compile", 1.0}, {"cuda", 1.1}}, 50, 1);
  add_at(pts, 1024, {{"torch", 2.0}, {"cuda", 1.6}}, 50, 4);
  DiffResult d = versus_run(run_of(1, pts), versus("cuda", {"torch", "torch_compile"}));
  EXPECT_EQ(row_at(d, 256, "cuda").j.verdict, Verdict::Slower);
  EXPECT_NEAR(row_at(d, 256, "cuda").j.ratio, 1.1, 0.02);
  EXPECT_EQ(row_at(d, 1024, "cuda").j.verdict, Verdict::Faster);
  EXPECT_EQ(d.count(Verdict::Slower), 1u);
  EXPECT_EQ(d.count(Verdict::Faster), 1u);
  // the summary is per pair
  ASSERT_EQ(d.summary.size(), 2u);
  EXPECT_EQ(d.summary[0].provider, "torch_compile -> cuda");
  EXPECT_EQ(d.summary[1].provider, "torch -> cuda");

  std::string md = diff_markdown(d);
  EXPECT_EQ(md.rfind("# opbench versus\n", 0), 0u) << md;
  EXPECT_NE(md.find("- run: run 1, H100"), std::string::npos) << md;
  EXPECT_EQ(md.find("- base:"), std::string::npos) << md;
  EXPECT_NE(md.find("- cuda against the faster of torch, torch_compile\n"), std::string::npos) << md;
  EXPECT_NE(md.find("threshold 0%"), std::string::npos) << md;
  EXPECT_NE(md.find("**1 slower point**"), std::string::npos) << md;
  EXPECT_NE(md.find("## Slower"), std::string::npos) << md;
  EXPECT_EQ(md.find("regression"), std::string::npos) << md;
  EXPECT_NE(md.find("| torch_compile -> cuda | 1 |"), std::string::npos) << md;
  auto j = nlohmann::json::parse(diff_json(d));
  EXPECT_EQ(j["slower"], 1);
  EXPECT_EQ(j["versus"], "cuda against the faster of torch, torch_compile");
  EXPECT_EQ(j["run"]["id"], 1);
  EXPECT_FALSE(j.contains("base"));
  EXPECT_FALSE(j.contains("regressions"));
  EXPECT_EQ(j["points"][0]["base_provider"], "torch_compile");
  EXPECT_EQ(j["points"][0]["verdict"], "SLOWER");

  // The same distribution as the best, drawn again: SAME or UNSURE, never SLOWER, even at
  // the default threshold of 0.
  for (uint64_t seed = 10; seed < 30; ++seed) {
    std::vector<StoredPoint> eq = {speed_point(kTitle, 256, "torch", "to", noisy(1.0, 0.02, 50, seed)),
                                   speed_point(kTitle, 256, "cuda", "cu", noisy(1.0, 0.02, 50, seed + 100))};
    DiffResult de = versus_run(run_of(1, eq), versus("cuda", {"torch"}));
    ASSERT_EQ(de.rows.size(), 1u);
    Verdict v = de.rows[0].j.verdict;
    EXPECT_TRUE(v == Verdict::Same || v == Verdict::Unsure) << "seed " << seed << ": " << verdict_name(v);
  }
  // Nothing slower: the markdown says so.
  std::vector<StoredPoint> fast;
  add_at(fast, 256, {{"torch", 1.0}, {"cuda", 0.5}}, 50, 1);
  EXPECT_NE(diff_markdown(versus_run(run_of(1, fast), versus("cuda", {"torch"}))).find("No slower points."),
            std::string::npos);
}

TEST(Versus, FailedAgainstPointsAreSkipped) {
  StoredPoint broken = value_point(kTitle, 256, "torch_compile", "toc", -1);  // lower, but failed
  std::vector<StoredPoint> pts = {speed_point(kTitle, 256, "torch", "to", noisy(1.0, 0.01, 40, 1)), broken,
                                  speed_point(kTitle, 256, "cuda", "cu", noisy(1.0, 0.01, 40, 2)),
                                  // x=512: every against point failed: judged against a failure
                                  value_point(kTitle, 512, "torch", "to", -1),
                                  value_point(kTitle, 512, "torch_compile", "toc", -1),
                                  speed_point(kTitle, 512, "cuda", "cu", noisy(1.0, 0.01, 40, 3)),
                                  // x=1024: the provider failed where an against point works
                                  speed_point(kTitle, 1024, "torch", "to", noisy(1.0, 0.01, 40, 4)),
                                  value_point(kTitle, 1024, "cuda", "cu", -1)};
  DiffResult d = versus_run(run_of(1, pts), versus("cuda", {"torch_compile", "torch"}));
  ASSERT_EQ(d.rows.size(), 3u);
  EXPECT_EQ(row_at(d, 256, "cuda").base_provider, "torch");
  EXPECT_TRUE(row_at(d, 256, "cuda").base_error.empty());
  EXPECT_NE(row_at(d, 256, "cuda").j.verdict, Verdict::Error);
  EXPECT_EQ(row_at(d, 512, "cuda").base_provider, "torch");  // the first of the failed ones
  EXPECT_EQ(row_at(d, 512, "cuda").j.verdict, Verdict::Fixed);
  EXPECT_EQ(row_at(d, 1024, "cuda").j.verdict, Verdict::Error);
  EXPECT_EQ(d.count(Verdict::Slower), 0u);  // a failing provider is an ERROR row, not SLOWER
}

TEST(Versus, MissingProvidersAreInputErrors) {
  std::vector<StoredPoint> pts = {speed_point("other-speed", 256, "torch_compile", "toc", noisy(1.0, 0.01, 20, 3))};
  add_at(pts, 256, {{"torch", 1.0}, {"cuda", 1.0}}, 20, 1);
  RunRecord run = run_of(4, pts);
  std::string e = versus_error(run, versus("triton", {"torch"}));
  EXPECT_NE(e.find("run 4: --provider: "), std::string::npos) << e;
  EXPECT_NE(e.find("triton"), std::string::npos) << e;
  EXPECT_NE(e.find("torch (to)"), std::string::npos) << e;  // what the run holds
  e = versus_error(run, versus("cuda", {"triton", "tvm"}));
  EXPECT_NE(e.find("run 4: --against: "), std::string::npos) << e;
  EXPECT_NE(e.find("triton, tvm"), std::string::npos) << e;
  e = versus_error(run, versus("cuda", {"cuda"}));
  EXPECT_NE(e.find("--against"), std::string::npos) << e;
  e = versus_error(run, versus("cuda", {"cu"}));  // cuda's own label
  EXPECT_NE(e.find("--against"), std::string::npos) << e;
  e = versus_error(run, versus("cuda", {" ", ""}));
  EXPECT_NE(e.find("--against"), std::string::npos) << e;
  e = versus_error(run, versus("", {"torch"}));
  EXPECT_NE(e.find("--provider"), std::string::npos) << e;
  // torch_compile is in the run, but never beside cuda
  e = versus_error(run, versus("cuda", {"torch_compile"}));
  EXPECT_NE(e.find("--against"), std::string::npos) << e;
  EXPECT_NE(e.find("no table and x"), std::string::npos) << e;
  VersusOptions mem = versus("cuda", {"torch"});
  mem.metric = "memory";
  e = versus_error(run, mem);
  EXPECT_NE(e.find("--metric"), std::string::npos) << e;
  // Some against providers missing: compared against the rest, the description says so.
  DiffResult d = versus_run(run, versus("cuda", {"torch", " triton "}));
  ASSERT_EQ(d.rows.size(), 1u);
  EXPECT_EQ(d.opt.versus, "cuda against the faster of torch, triton (the run holds no speed points of triton)");
}

// --- merge -----------------------------------------------------------------------------------

namespace {

int64_t add_run(Store& s, const std::string& label, std::vector<StoredPoint> pts) {
  RunInfo r;
  r.label = label;
  r.env.gpu = "H100";
  r.status = "done";
  r.notation = {{"to", "torch"}};
  return store_run(s, r, std::move(pts));
}

}  // namespace

TEST(Merge, IdempotentWithRemappedIds) {
  const std::string a = temp_db("a.db"), b = temp_db("b.db"), dest = temp_db("dest.db");
  std::string uuid_a1;
  {
    Store sa(a);
    add_run(sa, "a1", {speed_point(kTitle, 256, "torch", "to", {1, 2, 3, 4, 5})});
    add_run(sa, "a2", {speed_point(kTitle, 256, "torch", "to", {2, 3, 4}), memory_point(kMemTitle, 256, "torch", 9)});
    uuid_a1 = sa.select("label:a1").uuid;
    Store sb(b);
    add_run(sb, "b1", {speed_point(kTitle, 512, "torch", "to", {7, 8})});
  }
  Store d(dest);
  add_run(d, "own", {speed_point(kTitle, 256, "torch", "to", {1})});

  auto st = merge_databases(d, {a, b});
  ASSERT_EQ(st.size(), 2u);
  EXPECT_EQ(st[0].copied, 2u);
  EXPECT_EQ(st[0].points, 3u);
  EXPECT_EQ(st[1].copied, 1u);
  // ids remapped: a's runs 1, 2 -> 2, 3; b's run 1 -> 4
  ASSERT_EQ(st[0].remapped.size(), 2u);
  EXPECT_EQ(st[0].remapped[0], (std::pair<int64_t, int64_t>{1, 2}));
  EXPECT_EQ(st[0].remapped[1], (std::pair<int64_t, int64_t>{2, 3}));
  EXPECT_EQ(st[1].remapped[0], (std::pair<int64_t, int64_t>{1, 4}));
  auto runs = d.runs();
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_EQ(runs[1].label, "a1");
  EXPECT_EQ(runs[1].uuid, uuid_a1);
  EXPECT_EQ(runs[1].notation, (std::vector<std::pair<std::string, std::string>>{{"to", "torch"}}));
  auto pts = d.points(runs[1].id);
  ASSERT_EQ(pts.size(), 1u);
  EXPECT_EQ(pts[0].result.samples, (std::vector<double>{1, 2, 3, 4, 5}));
  EXPECT_EQ(pts[0].run_id, runs[1].id);

  // twice: nothing new
  auto again = merge_databases(d, {a, b});
  EXPECT_EQ(again[0].copied + again[1].copied, 0u);
  EXPECT_EQ(again[0].skipped + again[1].skipped, 3u);
  EXPECT_EQ(d.runs().size(), 4u);
  // the same source twice in one merge: copied once
  const std::string d2 = temp_db("dest2.db");
  Store dd(d2);
  auto both = merge_databases(dd, {a, a});
  EXPECT_EQ(both[0].copied, 2u);
  EXPECT_EQ(both[1].copied, 0u);
  EXPECT_EQ(dd.runs().size(), 2u);
  // and back the other way: the destination's own run is the only new one for a
  Store sa(a);
  auto back = merge_databases(sa, {dest});
  EXPECT_EQ(back[0].copied, 2u);  // "own" and b1
  EXPECT_EQ(sa.runs().size(), 4u);
}

TEST(Merge, OldDatabasesGetOneUuidPerRun) {
  // A schema-2 database (before uuids), copied to two machines and migrated on each: the
  // run gets the same uuid in both, so merging both copies keeps one.
  const std::string old1 = temp_db("old1.db"), old2 = temp_db("old2.db"), dest = temp_db("olddest.db");
  {
    const std::string v2 = std::string(kSchema1Tables) +
        "ALTER TABLE points ADD COLUMN rel_err REAL; ALTER TABLE points ADD COLUMN check_failed INTEGER NOT NULL DEFAULT 0;"
        "INSERT INTO runs(label, gpu, status, started_at, host) VALUES('old', 'A800', 'done', '2024-01-01T00:00:00.000Z', 'm1');"
        "INSERT INTO runs(label, gpu, status, started_at, host) VALUES('old2', 'A800', 'done', '2024-01-02T00:00:00.000Z', 'm1');"
        "INSERT INTO points(run_id, seq, title, provider, x_name, x_value, value, created_at) VALUES(1, 0, 't', 'torch', 'n', 256, 1.5, '2024-01-01T00:00:01.000Z');"
        "PRAGMA user_version = 2;";
    ASSERT_NO_FATAL_FAILURE(exec_sql(old1, v2));
  }
  fs::copy_file(old1, old2);
  std::string u1, u2;
  {
    Store s1(old1), s2(old2);
    EXPECT_EQ(s1.version(), Store::schema_version());
    u1 = s1.select("label:old").uuid;
    u2 = s2.select("label:old").uuid;
    EXPECT_EQ(u1.size(), 36u);
    EXPECT_NE(s1.select("label:old2").uuid, u1);  // distinct runs, distinct uuids
  }
  EXPECT_EQ(u1, u2);
  {
    Store again(old1);  // reopening keeps the uuid
    EXPECT_EQ(again.select("label:old").uuid, u1);
  }
  Store d(dest);
  auto st = merge_databases(d, {old1, old2});
  EXPECT_EQ(st[0].copied, 2u);
  EXPECT_EQ(st[1].copied, 0u);
  EXPECT_EQ(d.runs().size(), 2u);
  EXPECT_DOUBLE_EQ(d.points(d.select("label:old").id).at(0).value, 1.5);
  // New runs get random uuids, never a repeat.
  RunInfo r1, r2;
  d.begin_run(r1);
  d.begin_run(r2);
  EXPECT_NE(r1.uuid, r2.uuid);
}

TEST(Merge, BadSources) {
  const std::string dest = temp_db("bd.db");
  Store d(dest);
  try {
    merge_databases(d, {temp_db("nope.db")});
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no such database"), std::string::npos);
  }
  const std::string text = temp_db("text.db");
  std::ofstream(text) << "this is not a database, just text long enough to be read as a header....\n";
  EXPECT_THROW(merge_databases(d, {text}), InputError);
  EXPECT_THROW(merge_databases(d, {dest}), InputError);  // itself
  EXPECT_TRUE(d.runs().empty());
}

TEST(Merge, CopiesCompileRecords) {
  const std::string src = temp_db("cs.db"), dest = temp_db("cd.db");
  int64_t from = 0;
  {
    Store s(src);
    from = add_run(s, "compiled", {speed_point(kTitle, 256, "torch_compile", "toc", {1, 2, 3})});
    s.add_compile({from, kTitle, "torch_compile", "key-a", 41.5, false, ""});
    s.add_compile({from, kTitle, "torch_naive_compile", "key-b", 0.25, true, "export failed"});
  }
  Store d(dest);
  add_run(d, "own", {});
  auto st = merge_databases(d, {src});
  ASSERT_EQ(st.at(0).remapped.size(), 1u);
  const int64_t to = st[0].remapped[0].second;
  EXPECT_NE(to, from);
  auto c = d.compiles(to);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].run_id, to);
  EXPECT_EQ(c[0].key, "key-a");
  EXPECT_DOUBLE_EQ(c[0].seconds, 41.5);
  EXPECT_FALSE(c[0].cached);
  EXPECT_EQ(c[1].provider, "torch_naive_compile");
  EXPECT_TRUE(c[1].cached);
  EXPECT_EQ(c[1].error, "export failed");
}

TEST(Merge, BadSourcesAreFoundBeforeTheDestinationIsOpened) {
  const std::string text = temp_db("junk.db"), dest = temp_db("never.db");
  std::ofstream(text) << "this is not a database, just text long enough to be read as a header....\n";
  EXPECT_THROW(open_merge_sources({text}, dest), InputError);
  EXPECT_FALSE(fs::exists(dest));
}

// The host's share of the GPU's time per sample (Result::host_share): measured by the timing
// protocol on a clock whose marks are queued with the calls, pooled as the median over the
// rounds, and read by diff's rule 6 (diff/verdict.hpp): a change of a call the host may pace
// is UNSURE, with the reason.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "diff/verdict.hpp"
#include "stored_points.hpp"
#include "sweep/cell.hpp"
#include "virtual_clock.hpp"

using namespace opbench;

namespace {

// A GPU-like clock on virtual time: the marks read the GPU's time (`now`), the host's clock
// advances by what a test says the host spends.
class QueuedClock : public VirtualClock {
 public:
  using VirtualClock::VirtualClock;
  double host = 0;  // ms
  bool queued() const override { return true; }
  double host_ms() const override { return host; }
};

Timing round_budget() {
  Timing t;
  t.stop_rule = StopRule::budget;
  t.warmup_ms = 1;
  t.rep_ms = 10;
  return t;
}

// Samples of a clear 20% change: 1.0 ms against 1.2 ms.
std::vector<double> steady(double ms) { return std::vector<double>(40, ms); }

StoredPoint with_share(std::vector<double> samples, double share) {
  StoredPoint p = speed_point("t", 256, "torch", "to", std::move(samples));
  p.result.host_share = share;
  return p;
}

}  // namespace

TEST(HostShare, IsTheHostsTimeForOneCallOverTheGpusTimePerSample) {
  // Each call: 0.03 ms of the host's launches, 0.05 ms on the GPU after a 0.1 ms flush.
  QueuedClock clock(0.1);
  const BenchRound b = bench_round(clock, [&] {
    clock.host += 0.03;
    clock.now += 0.05;
  }, round_budget(), /*warm=*/true);
  EXPECT_NEAR(b.host_share, 0.03 / (0.1 + 0.05), 1e-9);
}

TEST(HostShare, IsUnknownOnAClockThatWaitsForEveryCall) {
  VirtualClock clock(0.1);
  const BenchRound b = bench_round(clock, [&] { clock.now += 0.05; }, round_budget(), /*warm=*/true);
  EXPECT_TRUE(std::isnan(b.host_share));
}

TEST(HostShare, PooledAsTheMedianOfTheRounds) {
  std::vector<Result> rounds(3);
  const double shares[] = {0.2, std::nan(""), 0.9};
  for (size_t i = 0; i < rounds.size(); ++i) {
    rounds[i].unit = "ms";
    rounds[i].samples = {1.0, 1.0};
    rounds[i].host_share = shares[i];
  }
  EXPECT_NEAR(pool_rounds(rounds).host_share, 0.55, 1e-12);
  rounds[0].host_share = rounds[2].host_share = std::nan("");
  EXPECT_TRUE(std::isnan(pool_rounds(rounds).host_share));
}

TEST(HostShare, AChangeOfACallTheHostMayPaceIsUnsure) {
  const Judgement j = judge(with_share(steady(1.0), 0.2), with_share(steady(1.2), kHostBound), 0.05);
  EXPECT_EQ(j.verdict, Verdict::Unsure);
  EXPECT_FALSE(j.regression);
  EXPECT_EQ(j.reason,
            "the host took 20% (base) and 50% (head) of the GPU's time per sample to queue one call: its time moves "
            "with the host process");
  // Either side: base host-bound, head not known (a run from before the share was recorded).
  EXPECT_EQ(judge(with_share(steady(1.0), 0.97), with_share(steady(0.8), std::nan("")), 0.05).verdict,
            Verdict::Unsure);
}

TEST(HostShare, AChangeOfACallTheGpuBoundsStands) {
  const Judgement j = judge(with_share(steady(1.0), 0.2), with_share(steady(1.2), 0.3), 0.05);
  EXPECT_EQ(j.verdict, Verdict::Slower);
  EXPECT_TRUE(j.regression);
  EXPECT_EQ(j.reason, "");
  // No share on either side (a CPU, an import): the rule does not apply.
  EXPECT_EQ(judge(with_share(steady(1.0), std::nan("")), with_share(steady(1.2), std::nan("")), 0.05).verdict,
            Verdict::Slower);
}

// A cell measured by the two sides of a comparison (sweep/paired_cell.hpp): in each round both
// sides measure each provider back to back, the side that goes first alternating from round to
// round, the providers rotated as in a sweep's cell; both sides keep the same rounds, so round r
// of one pairs with round r of the other; the pair stops once its paired interval is narrow
// enough (stop: noise) and not before min_rounds; a side planted slower shows as such in every
// pair; a failed side does not stop the other; a pair whose interval lies within the diff's
// threshold stops decided. Rounds spread over worker processes take whole
// turns through them, and the paired interval is then over the pairs of processes: an offset
// that one process carries widens it, a change every process shows decides it.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "act_point.hpp"
#include "measure/stop_rule.hpp"
#include "sweep/paired_cell.hpp"

using namespace opbench;

namespace {

// One side of the comparison: every call it gets goes into the shared log, as "side:provider".
// Its samples are `ms` times its factor, with a spread of `spread` (relative) round by round.
class SideRecorder : public Executor {
 public:
  SideRecorder(std::string name, std::vector<std::string>& log, double factor, double spread = 0)
      : name_(std::move(name)), log_(log), factor_(factor), spread_(spread) {}
  Environment environment() override { return {}; }
  std::string unavailable(const std::string&, const std::string&) override { return ""; }
  Result measure(const Point& p, const Timing& t) override {
    log_.push_back(name_ + ":" + p.provider);
    if (t.check) checked.push_back(round_);
    Result r;
    r.unit = p.metric() == "memory" ? "MiB" : "ms";
    if (p.provider == fail_) {
      r.error = "planted failure";
      return r;
    }
    // Round r's level moves for both sides alike (the chip's drift); the side's factor on top.
    const double level = 1 + spread_ * std::sin(1.7 * round_);
    const double own = 1 + jitter * std::sin(2.9 * round_ + 1);  // this side's alone
    for (int i = 0; i < 8; ++i) r.samples.push_back(factor_ * level * own * (1 + 1e-4 * i));
    r.stats = summarize(r.samples);
    r.estimate_ms = 1;
    return r;
  }
  void new_round() override {}
  void set_round(int r) override {
    round_ = r;
    log_.push_back(name_ + ":round " + std::to_string(r));
  }
  std::string fail_;
  double jitter = 0;         // a round-to-round spread of this side's own (relative)
  std::vector<int> checked;  // the rounds whose measures asked for the check against the truth

 private:
  std::string name_;
  std::vector<std::string>& log_;
  double factor_, spread_;
  int round_ = 0;
};

Point point(const std::string& provider, const std::string& metric = "speed") {
  return act_point("relu", metric, provider);
}

struct Pair {
  std::vector<std::string> log;
  SideRecorder base{"base", log, 1.0}, head{"head", log, 1.0};
  std::vector<Point> points = {point("a"), point("b")};
  CellPoints cell() const { return {&points[0], &points[1]}; }
  std::array<Executor*, 2> sides() { return {&base, &head}; }
};

// Stop: noise at 0.5%, 4 to 16 rounds.
Timing noise_timing() {
  Timing t;
  t.stop_rule = StopRule::noise;
  t.rounds = 16;
  t.min_rounds = 4;
  t.noise_pct = 0.5;
  return t;
}

// The log without the round markers.
std::vector<std::string> measures(const std::vector<std::string>& log) {
  std::vector<std::string> out;
  for (const auto& l : log)
    if (l.find(":round") == std::string::npos) out.push_back(l);
  return out;
}

}  // namespace

TEST(PairedCell, BothSidesBackToBackTheFirstSideAlternatingByRound) {
  Pair p;
  Timing t;
  t.stop_rule = StopRule::budget;
  t.rounds = 4;
  const auto got = measure_paired_cell(p.sides(), p.cell(), t);
  const std::vector<std::string> want = {
      "base:a", "head:a", "base:b", "head:b",   // round 0: base first, provider a first
      "head:b", "base:b", "head:a", "base:a",   // round 1: head first, provider b first
      "base:a", "head:a", "base:b", "head:b",   // round 2
      "head:b", "base:b", "head:a", "base:a"};  // round 3
  EXPECT_EQ(measures(p.log), want);
  EXPECT_EQ(first_side(0), kBase);
  EXPECT_EQ(first_side(1), kHead);
  EXPECT_EQ(got[kBase].side, kBase);
  EXPECT_EQ(got[kHead].side, kHead);
  for (size_t s : {kBase, kHead})
    for (const auto& r : got[s].results) EXPECT_EQ(r.rounds.size(), 4u);  // the same rounds: they pair
}

TEST(PairedCell, EachSideLearnsTheRoundBeforeItsMeasures) {
  Pair p;
  Timing t;
  t.stop_rule = StopRule::budget;
  t.rounds = 2;
  measure_paired_cell(p.sides(), p.cell(), t);
  ASSERT_GE(p.log.size(), 2u);
  EXPECT_EQ(p.log[0], "base:round 0");
  EXPECT_EQ(p.log[1], "head:round 0");
}

TEST(PairedCell, APlantedSideIsSlowerInEveryPairWhateverTheRoundsDrift) {
  std::vector<std::string> log;
  SideRecorder base("base", log, 1.0, 0.05), head("head", log, 1.03, 0.05);  // rounds drift 5%, head 3% slower
  const std::vector<Point> points = {point("a")};
  Timing t;
  t.stop_rule = StopRule::budget;
  t.rounds = 6;
  const auto got = measure_paired_cell({&base, &head}, {&points[0]}, t);
  const Result &b = got[kBase].results[0], &h = got[kHead].results[0];
  ASSERT_EQ(b.rounds.size(), 6u);
  // Round by round, the pooled samples of each round pair up.
  std::vector<double> mb, mh;
  size_t at = 0;
  for (size_t r = 0; r < b.rounds.size(); ++r) {
    const size_t n = size_t(b.rounds[r]);
    mb.push_back(summarize({b.samples.begin() + long(at), b.samples.begin() + long(at + n)}).median);
    mh.push_back(summarize({h.samples.begin() + long(at), h.samples.begin() + long(at + n)}).median);
    at += n;
  }
  const PairedInterval e = paired_interval(mb, mh);
  EXPECT_NEAR(e.ratios.front(), 1.03, 1e-9);
  EXPECT_GT(e.lo, 1.029);  // the drift cancels in each pair: the interval is the plant's alone
  EXPECT_LT(e.hi, 1.031);
}

TEST(PairedCell, UnderStopNoiseThePairStopsWhenItsIntervalIsNarrow) {
  Pair p;
  Timing t = noise_timing();
  const auto got = measure_paired_cell(p.sides(), p.cell(), t);
  // Identical sides: the pair is as precise as can be after min_rounds, never before.
  for (size_t s : {kBase, kHead})
    for (const auto& r : got[s].results) {
      EXPECT_EQ(r.rounds.size(), 4u);
      EXPECT_EQ(r.stop_reason, "noise");
    }
  EXPECT_EQ(measures(p.log).size(), 16u);
}

TEST(PairedCell, APairWhoseIntervalLiesWithinTheThresholdStopsDecided) {
  // The head's rounds scatter by 0.8% on their own: its median is not precise to 0.5% after four
  // rounds, but the pair's interval already lies within 2%.
  Pair p;
  p.head.jitter = 0.008;
  const Timing t = noise_timing();
  const auto got = measure_paired_cell(p.sides(), p.cell(), t, 0.02);
  for (size_t s : {kBase, kHead})
    for (const auto& r : got[s].results) {
      EXPECT_EQ(r.rounds.size(), 4u);
      EXPECT_EQ(r.stop_reason, "decided");
    }
  Pair q;  // without a threshold the head's own rule keeps both measuring
  q.head.jitter = 0.008;
  const auto undecided = measure_paired_cell(q.sides(), q.cell(), t);
  EXPECT_GT(undecided[kHead].results[0].rounds.size(), 4u);
  EXPECT_NE(undecided[kHead].results[0].stop_reason, "decided");
}

TEST(PairedCell, APairThatMayHaveChangedIsNotDecided) {
  // The head 3% slower, or 1.5% slower (beyond half the threshold): neither stops as SAME.
  for (const double factor : {1.03, 1.015}) {
    std::vector<std::string> log;
    SideRecorder base("base", log, 1.0), head("head", log, factor);
    head.jitter = 0.008;
    const std::vector<Point> points = {point("a")};
    const auto got = measure_paired_cell({&base, &head}, {&points[0]}, noise_timing(), 0.02);
    EXPECT_GT(got[kHead].results[0].rounds.size(), 4u) << factor;
    EXPECT_NE(got[kHead].results[0].stop_reason, "decided") << factor;
  }
}

TEST(PairedCell, AMemoryCellIsMeasuredOnceBySide) {
  std::vector<std::string> log;
  SideRecorder base("base", log, 1.0), head("head", log, 1.0);
  const std::vector<Point> points = {point("a", "memory"), point("b", "memory")};
  Timing t;
  t.rounds = 8;
  measure_paired_cell({&base, &head}, {&points[0], &points[1]}, t);
  EXPECT_EQ(measures(log), (std::vector<std::string>{"base:a", "head:a", "base:b", "head:b"}));
}

TEST(PairedCell, AFailedSideStopsItsPointButNotTheOthers) {
  Pair p;
  p.head.fail_ = "a";
  Timing t;
  t.stop_rule = StopRule::budget;
  t.rounds = 3;
  const auto got = measure_paired_cell(p.sides(), p.cell(), t);
  EXPECT_FALSE(got[kHead].results[0].ok());
  EXPECT_TRUE(got[kBase].results[0].ok());
  EXPECT_TRUE(got[kHead].results[1].ok());
  EXPECT_EQ(got[kBase].results[1].rounds.size(), 3u);
  size_t head_a = 0;
  for (const auto& l : measures(p.log)) head_a += l == "head:a";
  EXPECT_EQ(head_a, 1u);  // measured once: its failure ends it on that side
}

TEST(PairedCell, RoundsSpreadOverProcessesTakeWholeTurns) {
  Pair p;
  Timing t = noise_timing();
  t.processes = 3;
  const auto got = measure_paired_cell(p.sides(), p.cell(), t);
  // Precise after 4 rounds, but a pair of processes would then hold two rounds and the others one.
  for (size_t s : {kBase, kHead})
    for (const auto& r : got[s].results) EXPECT_EQ(r.rounds.size(), 6u);
  t.rounds = 2;  // a ceiling below the processes: each pair of processes still measured once
  Pair q;
  const auto few = measure_paired_cell(q.sides(), q.cell(), t);
  EXPECT_EQ(few[kBase].results[0].rounds.size(), 3u);
}

TEST(PairedCell, OnlyACellsFirstRoundChecksItsOutputWhateverProcessMeasuresTheOthers) {
  Pair p;
  Timing t = noise_timing();
  t.processes = 4;
  measure_paired_cell(p.sides(), p.cell(), t);
  // Round 0 of each side checks both providers; rounds 1-3 (the other processes) none.
  EXPECT_EQ(p.base.checked, std::vector<int>({0, 0}));
  EXPECT_EQ(p.head.checked, std::vector<int>({0, 0}));
}

TEST(PairedCell, EachPairOfProcessesAlternatesItsFirstSide) {
  for (int processes : {1, 2, 3, 4}) {
    for (int r = 0; r + 1 < 16; ++r)  // from round to round within a turn through the processes
      if ((r + 1) % processes != 0 || processes % 2 == 1) EXPECT_NE(first_side(r, processes), first_side(r + 1, processes)) << processes << " " << r;
    for (int r = 0; r + processes < 16; ++r)  // from turn to turn in one process
      EXPECT_NE(first_side(r, processes), first_side(r + processes, processes)) << processes << " " << r;
  }
}

TEST(PairedInterval, OverPairsOfProcessesAnOffsetOfOneProcessDecidesNothing) {
  // Twelve rounds over three processes: the head's process 0 carries +10% through its rounds.
  std::vector<double> base, offset, shared;
  for (int r = 0; r < 12; ++r) {
    const double noise = 1 + 0.002 * std::sin(2.3 * r);
    base.push_back(1.0);
    offset.push_back((r % 3 == 0 ? 1.10 : 1.0) * noise);
    shared.push_back(1.10 * noise);
  }
  const PairedInterval rounds = paired_interval(base, offset);  // every round a unit
  EXPECT_EQ(rounds.units, 12u);
  EXPECT_GT(rounds.lo, 1.0);  // twelve pairs "show" a change
  const PairedInterval processes = paired_interval(base, offset, 3);
  EXPECT_EQ(processes.units, 3u);
  EXPECT_EQ(processes.ratios.size(), 12u);
  EXPECT_LT(processes.lo, 1.0);  // three pairs of processes do not
  EXPECT_GT(processes.hi, 1.0);
  EXPECT_GT(processes.p, 0.05);
  const PairedInterval every = paired_interval(base, shared, 3);  // a change every process shows
  EXPECT_GT(every.lo, 1.09);
  EXPECT_LT(every.hi, 1.11);
  // Fewer rounds than processes: each round is its own pair of processes.
  EXPECT_EQ(paired_interval({1, 1}, {1.1, 1.1}, 3).units, 2u);
}

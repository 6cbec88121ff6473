// Interleaved rounds (Timing::interleave): the rounds of a block of cells in turn, round r of
// every cell before round r + 1 of any, each cell's providers rotated by round, memory cells
// measured once, new placement before every cell's round but the first, the process of each
// round picked through Executor::set_round; a stop ends the block with its unfinished cells
// left out; the blocks a sweep's cells are cut into.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "act_point.hpp"
#include "sweep/cell.hpp"

using namespace opbench;

namespace {

// Records every call the block makes, in order.
class Recorder : public Executor {
 public:
  std::vector<std::string> log;
  int measures = 0;
  Environment environment() override { return {}; }
  std::string unavailable(const std::string&, const std::string&) override { return ""; }
  Result measure(const Point& p, const Timing& t) override {
    ++measures;
    log.push_back(p.params.s("act") + ":" + p.metric() + ":" + p.provider);
    Result r;
    r.unit = p.metric() == "memory" ? "MiB" : "ms";
    r.samples = p.metric() == "memory" ? std::vector<double>{1} : std::vector<double>{t.rep_ms, t.rep_ms};
    r.stats = summarize(r.samples);
    return r;
  }
  void new_round() override { log.push_back("new"); }
  void set_round(int r) override { log.push_back("round " + std::to_string(r)); }
};

struct Block {
  std::vector<Point> points = {act_point("relu", "speed", "a"), act_point("relu", "speed", "b"),
                               act_point("silu", "speed", "a"), act_point("silu", "speed", "b"),
                               act_point("relu", "memory", "a"), act_point("relu", "memory", "b")};
  std::vector<CellPoints> cells() const {
    return {{&points[0], &points[1]}, {&points[2], &points[3]}, {&points[4], &points[5]}};
  }
};

}  // namespace

TEST(Interleave, RoundROfEveryCellBeforeRoundRPlusOneOfAny) {
  Block b;
  Recorder ex;
  Timing t;
  t.rounds = 2;
  t.rep_ms = 100;
  const auto got = measure_cells(ex, b.cells(), t);
  const std::vector<std::string> want = {
      "round 0", "relu:speed:a", "relu:speed:b",                 // the first measure: no new placement
      "round 0", "new", "silu:speed:a", "silu:speed:b",          //
      "round 0", "new", "relu:memory:a", "relu:memory:b",        // a memory cell: one round
      "round 1", "new", "relu:speed:b", "relu:speed:a",          // round 1 starts with provider 1
      "round 1", "new", "silu:speed:b", "silu:speed:a"};
  EXPECT_EQ(ex.log, want);
  ASSERT_EQ(got.size(), 3u);
  for (size_t c = 0; c < 2; ++c) {
    EXPECT_TRUE(got[c].finished());
    ASSERT_EQ(got[c].results.size(), 2u);
    EXPECT_EQ(got[c].results[0].rounds, (std::vector<int64_t>{2, 2}));  // each round's samples kept
    EXPECT_EQ(got[c].results[0].samples.front(), 50);                 // rep_ms / rounds a round
  }
  EXPECT_TRUE(got[2].finished());
  EXPECT_EQ(got[2].results[0].samples, (std::vector<double>{1}));
  EXPECT_TRUE(got[2].results[0].rounds.empty());
}

TEST(Interleave, OneCellIsMeasuredWholeAsBefore) {
  Block b;
  Recorder ex;
  Timing t;
  t.rounds = 3;
  const CellResult got = measure_cell(ex, b.cells()[0], t);
  const std::vector<std::string> want = {"round 0", "relu:speed:a", "relu:speed:b", "round 1", "new",
                                         "relu:speed:b", "relu:speed:a", "round 2", "new", "relu:speed:a",
                                         "relu:speed:b"};
  EXPECT_EQ(ex.log, want);
  EXPECT_EQ(got.results[1].rounds.size(), 3u);
}

TEST(Interleave, AStopEndsTheBlockAndLeavesItsUnfinishedCellsOut) {
  Block b;
  Recorder ex;
  Timing t;
  t.rounds = 2;
  // Asked before each cell's round after the first: true once the memory cell (round 0) is done.
  const auto got = measure_cells(ex, b.cells(), t, {}, [&] { return ex.measures >= 6; });
  EXPECT_EQ(ex.measures, 6);
  EXPECT_FALSE(got[0].finished());  // one round of two: not stored, a resume measures it
  EXPECT_FALSE(got[1].finished());
  EXPECT_TRUE(got[2].finished());   // its one round is all it has
  EXPECT_TRUE(got[0].results.empty());
  // A cell measured alone is finished whatever the stop says, as before.
  Recorder alone;
  const auto whole = measure_cells(alone, {b.cells()[0]}, t, {}, [] { return true; });
  EXPECT_TRUE(whole[0].finished());
  EXPECT_EQ(alone.measures, 4);
}

TEST(Interleave, CellsAreCutIntoConsecutiveBlocks) {
  Block b;
  std::vector<CellPoints> five;
  for (int i = 0; i < 5; ++i) five.push_back(b.cells()[size_t(i % 3)]);
  auto sizes = [](const std::vector<std::vector<CellPoints>>& blocks) {
    std::vector<size_t> out;
    for (const auto& bl : blocks) out.push_back(bl.size());
    return out;
  };
  EXPECT_EQ(sizes(interleave_blocks(five, 2)), (std::vector<size_t>{2, 2, 1}));
  EXPECT_EQ(sizes(interleave_blocks(five, 1)), (std::vector<size_t>{1, 1, 1, 1, 1}));
  EXPECT_EQ(sizes(interleave_blocks(five, 64)), (std::vector<size_t>{5}));
  EXPECT_EQ(sizes(interleave_blocks(five, Timing::kDeviceDefault)), (std::vector<size_t>{1, 1, 1, 1, 1}));
  EXPECT_EQ(interleave_blocks(five, 2)[1][0], five[2]);
  EXPECT_TRUE(interleave_blocks({}, 4).empty());
}

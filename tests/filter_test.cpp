// Tests of --filter REGEX (src/core/title_filter.cpp, filter_tables in src/sweep/points.cpp):
// which tables a sweep keeps, a bad expression, a filter that matches nothing. Torch-free.
#include <gtest/gtest.h>

#include "config/config.hpp"
#include "core/error.hpp"
#include "core/title_filter.hpp"
#include "points/points.hpp"

using namespace opbench;

namespace {

Sweep act_sweep() {
  return expand(parse_config(R"(
op: act
x: {n: [256, 512]}
params: {batch: 1, head: 2, dim: 16, mode: [fwd, bwd], metric: [speed, memory]}
variants: [{act: relu}, {act: silu}]
providers: {torch: to, torch_compile: toc}
)", "c.yaml"));
}

}  // namespace

TEST(TitleFilter, MatchesAnyPart) {
  TitleFilter none;
  EXPECT_TRUE(none.empty());
  EXPECT_TRUE(none("anything"));
  TitleFilter f("speed-fwd.*silu");
  EXPECT_TRUE(f("act-speed-fwd-batch1-head2-dim16-act_silu-bf16"));
  EXPECT_FALSE(f("act-speed-bwd-batch1-head2-dim16-act_silu-bf16"));
  EXPECT_TRUE(TitleFilter("^act-memory")("act-memory-fwd"));
  EXPECT_FALSE(TitleFilter("^memory")("act-memory-fwd"));
  EXPECT_THROW(TitleFilter("act_(silu"), InputError);
}

TEST(TitleFilter, SweepKeepsTheMatchingTables) {
  Sweep sw = act_sweep();
  ASSERT_EQ(sw.tables.size(), 8u);
  filter_tables(sw, TitleFilter("speed-fwd"), "c.yaml");
  ASSERT_EQ(sw.tables.size(), 2u);
  for (const auto& t : sw.tables) EXPECT_NE(t.title.find("speed-fwd"), std::string::npos);
  EXPECT_EQ(sw.points.size(), 2u * 2 * 2);  // tables x n x providers
  for (const auto& p : sw.points) EXPECT_NE(p.title.find("speed-fwd"), std::string::npos);

  Sweep all = act_sweep();
  filter_tables(all, TitleFilter(), "c.yaml");
  EXPECT_EQ(all.tables.size(), 8u);
}

TEST(TitleFilter, NothingMatchedIsAnInputError) {
  Sweep sw = act_sweep();
  try {
    filter_tables(sw, TitleFilter("tpa"), "c.yaml");
    FAIL() << "no error";
  } catch (const InputError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("--filter: tpa: matches no table title of c.yaml (8 titles: act-speed-fwd"), std::string::npos) << m;
  }
  EXPECT_EQ(sw.tables.size(), 8u);  // untouched
}

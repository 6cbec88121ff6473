// Tests of --filter REGEX (src/core/title_filter.cpp, filter_tables in src/sweep/points.cpp):
// which tables a sweep keeps, a bad expression, a filter that matches nothing. Torch-free.
#include <gtest/gtest.h>

#include <chrono>
#include <regex>

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

TEST(TitleFilter, AgreesWithTheRegularExpressions) {
  const std::vector<std::string> exprs = {"a.c", "^ab", "bc$", "a|bc", "(ab)+c", "a{2,3}", "[a-c]x", "[^a]b",
                                          "\\d+", "x?y", "(?:a|b)*c", "a{2}", "\\.", "[\\w-]+z", "a.*?c", "^$"};
  const std::vector<std::string> texts = {"", "abc", "aac", "xab", "aaab", "bx", "cb", "a1", "12", "y", "ababc",
                                          "a.c", "q-z", "aaa", "abbc"};
  for (const auto& e : exprs)
    for (const auto& t : texts)
      EXPECT_EQ(TitleFilter(e)(t), std::regex_search(t, std::regex(e))) << e << " on '" << t << "'";
  for (const char* bad : {"(", ")", "a{3,2}", "*a", "[a", "\\1", "(?=a)", "a\\"})
    EXPECT_THROW(TitleFilter{bad}, InputError) << bad;
}

TEST(TitleFilter, LongTitlesAndNestedRepeatsCostLinearTime) {
  const std::string title(50000, 'L');
  EXPECT_FALSE(TitleFilter("L*X")(title));
  EXPECT_TRUE(TitleFilter("L*X")(title + "X"));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(TitleFilter("(L+)+X")(std::string(5000, 'L')));
  EXPECT_FALSE(TitleFilter("(L*)*(L*)*X")(title));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_THROW(TitleFilter(std::string(2000, 'a')), InputError);           // longer than the limit
  EXPECT_THROW(TitleFilter("((a{1000}){1000}){1000}"), InputError);       // too many states
}

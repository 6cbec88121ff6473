// Title templates (src/ops/title.hpp): rendering, conditions, the inversion that reads a title
// back, bad templates; and for every registered op, that its template reads back what it wrote.
#include <gtest/gtest.h>

#include <stdexcept>

#include "ops/op.hpp"
#include "ops/title.hpp"

using namespace opbench;

namespace {

const std::vector<AxisSpec>& axes() {
  static const std::vector<AxisSpec> a = {
      axis_int("batch", 1, "b"), axis_int("k", 0, "k", false),
      axis_word("act", "none", {"none", "silu", "softmax"}, "activation"),
      axis_word("dtype", "bf16", {"bf16", "fp32"}, "dtype"), axis_word("tag", "x", {}, "free word")};
  return a;
}

const AxisSpec* lookup(const std::string& name) {
  for (const auto& a : axes())
    if (a.name == name) return &a;
  return nullptr;
}

Params params(std::initializer_list<std::pair<const std::string, Value>> v) { return Params(v); }

bool parse(const TitleTemplate& t, const std::string& title, Params* out) {
  // accept what renders back to the title (as OpSpec::parse_title does, without defaults)
  return t.parse(title, "op", lookup, [&](const Params& p) {
    try {
      return t.render("op", p) == title;
    } catch (const std::out_of_range&) {
      return false;
    }
  }, out);
}

}  // namespace

TEST(TitleTemplate, RendersSlotsAndConditions) {
  const TitleTemplate t("{op}-b{batch}-act_{act}{?act=softmax:-dim_{k}}{?act!=none:-on}-{dtype}");
  EXPECT_EQ(t.render("op", params({{"batch", int64_t(4)}, {"act", std::string("silu")}, {"dtype", std::string("bf16")}})),
            "op-b4-act_silu-on-bf16");
  EXPECT_EQ(t.render("op", params({{"batch", int64_t(4)}, {"act", std::string("softmax")}, {"k", int64_t(-2)},
                                    {"dtype", std::string("fp32")}})),
            "op-b4-act_softmax-dim_-2-on-fp32");
  EXPECT_EQ(t.render("op", params({{"batch", int64_t(1)}, {"act", std::string("none")}, {"dtype", std::string("bf16")}})),
            "op-b1-act_none-bf16");
  EXPECT_EQ(t.axes(), (std::vector<std::string>{"batch", "act", "k", "dtype"}));
  EXPECT_THROW(t.render("op", params({{"batch", int64_t(1)}})), std::out_of_range);
}

TEST(TitleTemplate, ParsesWhatItRenders) {
  const TitleTemplate t("{op}-b{batch}-act_{act}{?act=softmax:-dim_{k}}-{dtype}-{tag}");
  Params p;
  ASSERT_TRUE(parse(t, "op-b12-act_softmax-dim_-2-fp32-big_one", &p));
  EXPECT_EQ(p.i("batch"), 12);
  EXPECT_EQ(p.s("act"), "softmax");
  EXPECT_EQ(p.i("k"), -2);
  EXPECT_EQ(p.s("dtype"), "fp32");
  EXPECT_EQ(p.s("tag"), "big_one");
  ASSERT_TRUE(parse(t, "op-b3-act_silu-bf16-x", &p));
  EXPECT_FALSE(p.has("k"));
  // a condition's text where its condition does not hold, an unknown word, another op
  EXPECT_FALSE(parse(t, "op-b3-act_silu-dim_1-bf16-x", &p));
  EXPECT_FALSE(parse(t, "op-b3-act_gelu-bf16-x", &p));
  EXPECT_FALSE(parse(t, "other-b3-act_silu-bf16-x", &p));
  EXPECT_FALSE(parse(t, "op-b3-act_silu-bf16-x-", &p));
}

TEST(TitleTemplate, IntegersNextToDigitsAndRepeatedAxes) {
  // "{md}d-l{l}": the integer reading stops where the rest still matches
  const TitleTemplate t("{batch}{k}x-{batch}");
  Params p;
  ASSERT_TRUE(parse(t, "123x-1", &p));  // batch 1 (it repeats), k 23
  EXPECT_EQ(p.i("batch"), 1);
  EXPECT_EQ(p.i("k"), 23);
  EXPECT_FALSE(parse(t, "123x-7", &p));
}

TEST(TitleTemplate, BadTemplates) {
  for (const char* bad : {"a-{batch", "a-{}", "a-{?act:x}", "a-{?=x:y}", "a-{?act=x:y", "a-{b:c}"})
    EXPECT_THROW(TitleTemplate{bad}, std::invalid_argument) << bad;
  EXPECT_NO_THROW(TitleTemplate{"plain } text"});
}

// Every registered op: its template parses, names only its axes, and reads back the axes of
// titles rendered at its defaults and at every word value of its axes.
TEST(TitleTemplate, EveryOpReadsBackItsTitles) {
  for (const OpSpec* op : all_ops()) {
    const TitleTemplate t(op->title);
    for (const auto& a : t.axes()) EXPECT_NE(op->axis(a), nullptr) << op->name << ": {" << a << "}";
    const Params base = op->with_defaults(Params());
    std::vector<Params> cases = {base};
    for (const auto& a : op->axes)
      for (const auto& c : a.choices) {
        Params p = base;
        p.set(a.name, c);
        cases.push_back(p);
      }
    for (const auto& full : cases) {
      try {
        op->validate(full);
      } catch (const std::exception&) {
        continue;  // a combination the op rejects (bwd of a forward-only op ...)
      }
      const std::string title = op->default_title(full);
      Params spelt;
      ASSERT_TRUE(op->parse_title(title, &spelt)) << op->name << ": " << title;
      for (const auto& [axis, value] : spelt.values()) EXPECT_EQ(full.values().at(axis), value) << title;
      EXPECT_EQ(op->default_title(op->with_defaults(spelt)), title);
    }
  }
}

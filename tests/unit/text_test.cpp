// Text that is stored and printed back: UTF-8 and name checks, markdown escaping in the
// documents opbench writes (history, report), and the run selector parser. Torch-free.
#include <gtest/gtest.h>

#include <sstream>

#include "core/error.hpp"
#include "core/text.hpp"
#include "diff/history.hpp"
#include "report/report.hpp"
#include "store/selector.hpp"

using namespace opbench;

TEST(Text, Utf8) {
  EXPECT_TRUE(valid_utf8("plain ascii"));
  EXPECT_TRUE(valid_utf8("größe τ 日本 \xf0\x9f\x98\x80"));
  size_t at = 0;
  EXPECT_FALSE(valid_utf8("ab\xff", &at));
  EXPECT_EQ(at, 2u);
  EXPECT_FALSE(valid_utf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(valid_utf8("\xed\xa0\x80"));      // a UTF-16 surrogate
  EXPECT_FALSE(valid_utf8("\xf4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(valid_utf8("\xe6\x97"));          // cut short
  EXPECT_EQ(line_of("a\nb\nc", 4), 3);
}

TEST(Text, NamesThatWouldBreakADocument) {
  EXPECT_EQ(name_problem("act-speed-fwd-batch12"), "");
  EXPECT_EQ(name_problem("größe"), "");
  EXPECT_NE(name_problem("a\nb"), "");
  EXPECT_NE(name_problem(std::string("a\0b", 3)), "");
  EXPECT_NE(name_problem("a\tb"), "");
  EXPECT_NE(name_problem("x```"), "");
  EXPECT_NE(name_problem("~~~"), "");
  EXPECT_NE(name_problem("\xff"), "");
  EXPECT_EQ(text_problem("a```b"), "");  // a file name may hold backticks
  EXPECT_EQ(md_cell("a|b\nc"), "a\\|b c");
  EXPECT_EQ(one_line("a\r\nb\x1b"), "a  b ");
}

TEST(Text, TrimTakesTheBlanksAtEitherEnd) {
  EXPECT_EQ(trim(" \t a b \r\f\v"), "a b");
  EXPECT_EQ(trim("a"), "a");
  EXPECT_EQ(trim(" \t "), "");
  EXPECT_EQ(trim(""), "");
  EXPECT_EQ(trim("\na\n"), "\na\n");  // line breaks are kept
}

TEST(Text, InputErrorsAreOneLine) {
  InputError e("f.yaml", "op", "unknown op 'a\nb'");
  EXPECT_EQ(std::string(e.what()), "f.yaml: op: unknown op 'a b'");
}

namespace {

RunSelector sel(const std::string& s) { return parse_selector(s, "db"); }

std::string sel_error(const std::string& s) {
  try {
    parse_selector(s, "x.db");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Selector, Kinds) {
  EXPECT_EQ(sel("latest").kind, RunSelector::Latest);
  EXPECT_EQ(sel("42").kind, RunSelector::Id);
  EXPECT_EQ(sel("42").id, 42);
  EXPECT_EQ(sel("007").id, 7);
  EXPECT_EQ(sel("9223372036854775807").id, INT64_MAX);
  EXPECT_EQ(sel("label:ci").kind, RunSelector::Label);
  EXPECT_EQ(sel("label:ci").text, "ci");
  EXPECT_EQ(sel("label:").text, "");  // runs without a label
  EXPECT_EQ(sel("gpu:h100").kind, RunSelector::Gpu);
  EXPECT_TRUE(gpu_matches("NVIDIA H100 80GB HBM3", "h100"));
  EXPECT_FALSE(gpu_matches("NVIDIA A800", "h100"));
}

TEST(Selector, BadOnesNameTheSelector) {
  EXPECT_EQ(sel_error("99999999999999999999999"),
            "x.db: run 99999999999999999999999: run id out of range (ids are 1 to 9223372036854775807)");
  EXPECT_NE(sel_error("9223372036854775808").find("out of range"), std::string::npos);
  EXPECT_EQ(sel_error("0"), "x.db: run 0: run ids start at 1");
  EXPECT_EQ(sel_error("000"), "x.db: run 000: run ids start at 1");
  EXPECT_NE(sel_error("").find("not a run selector"), std::string::npos);
  EXPECT_NE(sel_error("-1").find("not a run selector"), std::string::npos);
  EXPECT_NE(sel_error("newest").find("not a run selector"), std::string::npos);
  EXPECT_NE(sel_error("gpu:").find("gpu: needs"), std::string::npos);
  EXPECT_NE(sel_error("label:a\nb").find("control character"), std::string::npos);
  EXPECT_NE(sel_error("label:\xff").find("not valid UTF-8"), std::string::npos);
}

TEST(Escaping, HistoryCellsHoldOneLineEach) {
  HistorySeries s;
  s.title = "t|x\ny";
  s.x_name = "n";
  s.x = 16;
  s.provider = "torch";
  s.label = "to";
  HistoryEntry e;
  e.run.id = 1;
  e.run.label = "a|b\n| 9 | fake row |";
  e.run.env.gpu = "H100\n# heading";
  s.gpu = e.run.env.gpu;
  e.run.git_commit = "abc|def";
  e.point.value = 1.5;
  s.entries.push_back(e);
  const std::string md = history_markdown({s}, 0.05);
  EXPECT_NE(md.find("# History of t|x y\n"), std::string::npos) << md;
  EXPECT_NE(md.find("| a\\|b \\| 9 \\| fake row \\| |"), std::string::npos) << md;
  EXPECT_NE(md.find(", H100 # heading\n"), std::string::npos) << md;  // the series' heading, one line
  EXPECT_NE(md.find("| abc\\|def |"), std::string::npos) << md;
  // every table line has the header's number of unescaped cell borders
  std::istringstream in(md);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] != '|') continue;
    size_t bars = 0;
    for (size_t i = 0; i < line.size(); ++i) bars += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
    EXPECT_EQ(bars, 8u) << line;
  }
}

TEST(Escaping, ReportNamesStayOnTheirLine) {
  RunRecord r;
  r.run.id = 3;
  r.run.label = "x\n```\ny";  // from a database written before labels were checked
  r.run.env.gpu = "H100";
  r.run.status = "done";
  r.run.notation = {{"to", "torch"}};
  StoredPoint p;
  p.section = "s\nt";
  p.point.title = "t\n```";
  p.point.x_name = "n";
  p.point.x_value = 16;
  p.point.provider = "torch";
  p.point.label = "to";
  p.point.params.set("metric", std::string("speed"));
  p.value = 1;
  p.result.error = "line one\n```\nline two";
  r.points.push_back(p);
  const std::string md = render_report({r});
  std::istringstream in(md);
  size_t fences = 0;
  for (std::string line; std::getline(in, line);) fences += line.rfind("```", 0) == 0;
  EXPECT_EQ(fences, 2u) << md;  // the table's own fence, opened and closed
  EXPECT_NE(md.find("run 3 (x ``` y)"), std::string::npos) << md;
  EXPECT_NE(md.find("error: line one ``` line two"), std::string::npos) << md;
}

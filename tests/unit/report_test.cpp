// Tests of src/report: pandas-compatible tables and the reference-document parser, against
// the reference documents of tests/data/reference (reference_docs.hpp) and the frames pandas
// rendered (tests/data/pandas_cases.txt). Torch-free. Needs the compile definitions
// OPBENCH_SOURCE_DIR (the repository root) and OPBENCH_TEST_DATA (tests/data).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "exchange/markdown_parser.hpp"
#include "report/table.hpp"
#include "reference_docs.hpp"

#ifndef OPBENCH_SOURCE_DIR
#error "compile with -DOPBENCH_SOURCE_DIR=\"<repository root>\""
#endif

namespace fs = std::filesystem;
using opbench::format_block;
using opbench::format_pandas;
using opbench::InputError;
using opbench::parse_document;
using opbench::ParsedDocument;
using opbench::Table;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + p.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (c == '\n') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

fs::path test_data_dir() { return fs::path(OPBENCH_TEST_DATA); }

// Independent of the parser: a title line has no indentation, ends with ':' and is
// followed by an indented header line.
int count_title_lines(const std::vector<std::string>& lines) {
  int n = 0;
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (l.empty() || l[0] == ' ' || l[0] == '#' || l[0] == '-' || l.back() != ':') continue;
    if (!lines[i + 1].empty() && lines[i + 1][0] == ' ') ++n;
  }
  return n;
}

// Runs parse_document on `doc` and returns the InputError's where() and what().
std::pair<std::string, std::string> parse_error(const std::string& doc) {
  try {
    parse_document(doc, "doc.md");
  } catch (const InputError& e) {
    return {e.where(), e.what()};
  }
  return {"<no error>", ""};
}

// The document is refused at `where` with an error that says `fragment`.
void expect_parse_error(const std::string& doc, const std::string& where, const std::string& fragment) {
  SCOPED_TRACE(doc);
  auto [at, what] = parse_error(doc);
  EXPECT_EQ(at, where);
  EXPECT_NE(what.find(fragment), std::string::npos) << what;
}

}  // namespace

// (a) Every table of every reference document re-renders byte for byte.
TEST(ReferenceDocs, EveryTableRoundTripsByteIdentical) {
  const std::vector<fs::path> docs = reference_docs();
  ASSERT_FALSE(docs.empty());

  int total = 0;
  for (const auto& p : docs) {
    SCOPED_TRACE(p.string());
    const std::string text = read_text(p);
    const std::vector<std::string> lines = split_lines(text);
    ParsedDocument doc = parse_document(text, p.string());
    EXPECT_EQ(static_cast<int>(doc.tables.size()), count_title_lines(lines));
    EXPECT_FALSE(doc.notation.empty());
    for (const auto& pt : doc.tables) {
      SCOPED_TRACE("table at line " + std::to_string(pt.line) + ": " + pt.table.title);
      EXPECT_FALSE(pt.gpu.empty());
      const std::string block = format_block(pt.table);
      const std::vector<std::string> want = split_lines(block);
      ASSERT_LE(pt.line - 1 + want.size(), lines.size());
      std::string expected;
      for (size_t k = 0; k < want.size(); ++k) expected += lines[pt.line - 1 + k] + "\n";
      EXPECT_EQ(block, expected);
      // The table ends where the rendering ends: next line is blank or closes the fence.
      const size_t after = pt.line - 1 + want.size();
      if (after < lines.size()) {
        EXPECT_TRUE(lines[after].empty() || lines[after].rfind("```", 0) == 0) << lines[after];
      }
      // Every provider column is explained by the notation.
      for (const auto& c : pt.table.columns) EXPECT_NE(opbench::notation_for(doc, c), nullptr) << c;
      ++total;
    }
  }
  std::cout << "[ reference ] " << total << " tables in " << docs.size()
            << " documents re-rendered byte-identical\n";
  EXPECT_GT(total, 0);
}

TEST(ReferenceDocs, KnownContents) {
  const fs::path dir = reference_dir();
  ParsedDocument act = parse_document(reference_text(dir / "act_h100.md"), "act_h100.md");
  ASSERT_EQ(act.tables.size(), 24u);
  EXPECT_EQ(act.gpus, std::vector<std::string>{"H100"});
  ASSERT_EQ(act.notation.size(), 3u);
  EXPECT_EQ(act.notation[0], (std::pair<std::string, std::string>{"tr", "Triton"}));
  EXPECT_EQ(act.notation[2], (std::pair<std::string, std::string>{"toc", "Torch Compile"}));
  const auto& t0 = act.tables[0];
  EXPECT_EQ(t0.line, 18);
  EXPECT_EQ(t0.gpu, "H100");
  EXPECT_EQ(t0.headings, (std::vector<std::string>{"act: published figures", "H100", "Elementwise activations",
                                                   "Time, forward"}));
  EXPECT_TRUE(t0.run_line.empty());
  EXPECT_EQ(t0.table.title, "act-speed-fwd-batch12-head12-dim128-act_relu-bf16");
  EXPECT_EQ(t0.table.index_name, "n");
  EXPECT_EQ(t0.table.columns, (std::vector<std::string>{"tr", "to", "toc"}));
  ASSERT_EQ(t0.table.index.size(), 8u);
  EXPECT_EQ(t0.table.index[0], 256.0);
  EXPECT_EQ(t0.table.index[7], 32768.0);
  EXPECT_EQ(t0.table.cells[0][0], 0.043131);
  EXPECT_EQ(t0.table.cells[7][2], 1.009366);

  ParsedDocument lrpe = parse_document(reference_text(dir / "lrpe_cosine_a800.md"), "lrpe.md");
  EXPECT_EQ(lrpe.tables.size(), 16u);
  EXPECT_EQ(lrpe.gpus, std::vector<std::string>{"A800"});
  ASSERT_EQ(lrpe.notation.size(), 3u);
  EXPECT_EQ(lrpe.notation[0].first, "Tr");  // label kept as written
  ASSERT_NE(opbench::notation_for(lrpe, "toc"), nullptr);
  EXPECT_EQ(*opbench::notation_for(lrpe, "toc"), "Torch Compile");
  EXPECT_EQ(opbench::notation_for(lrpe, "n"), nullptr);
  EXPECT_EQ(lrpe.tables.back().headings,
            (std::vector<std::string>{"A800", "softmax over the sequence (act_dim 1)"}));
  EXPECT_EQ(lrpe.tables.back().table.cells[7][0], 10310.613867);

  ParsedDocument tpa = parse_document(reference_text(dir / "tpa_decode_a800.md"), "tpa.md");
  ASSERT_EQ(tpa.tables.size(), 4u);
  EXPECT_EQ(tpa.notation.size(), 7u);
  EXPECT_EQ(tpa.tables[0].gpu, "A800");
  EXPECT_EQ(tpa.tables[0].headings, (std::vector<std::string>{"A800", "Time (ms)"}));
  EXPECT_EQ(tpa.tables[0].table.index_name, "m");
  EXPECT_EQ(tpa.tables[0].table.columns.size(), 7u);
  EXPECT_EQ(tpa.tables[3].table.cells[7][5], 33544.78125);

  // An opbench report: the run's heading names the GPU in full, the run line follows it.
  ParsedDocument rot = parse_document(reference_text(dir / "lrpe_rotate_h100.md"), "rot.md");
  EXPECT_EQ(rot.gpus, std::vector<std::string>{"NVIDIA H100 80GB HBM3"});
  ASSERT_EQ(rot.notation.size(), 3u);
  EXPECT_EQ(rot.notation[0], (std::pair<std::string, std::string>{"tr", "cuda"}));
  ASSERT_FALSE(rot.tables.empty());
  EXPECT_EQ(rot.tables[0].run_line.rfind("run 1 (h100-lrpe_rotate), ", 0), 0u) << rot.tables[0].run_line;
  EXPECT_EQ(rot.tables[0].table.title, "lrpe_rotate-speed-fwd-batch12-head12-dim128-act_none-bf16");
}

// (b) Frames rendered by real pandas (tests/support/gen_pandas_cases.py).
namespace {

struct PandasCase {
  int id = 0;
  std::vector<std::string> names;
  std::vector<std::vector<double>> rows;
  std::string expected;
};

double parse_repr(const std::string& s) {
  if (s == "nan") return kNaN;
  if (s == "inf") return std::numeric_limits<double>::infinity();
  if (s == "-inf") return -std::numeric_limits<double>::infinity();
  size_t used = 0;
  double v = std::stod(s, &used);
  if (used != s.size()) throw std::runtime_error("bad fixture number " + s);
  return v;
}

std::vector<PandasCase> load_pandas_cases() {
  const fs::path p = test_data_dir() / "pandas_cases.txt";
  const std::vector<std::string> lines = split_lines(read_text(p));
  std::vector<PandasCase> cases;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (l.empty() || l[0] == '#') continue;
    if (l.rfind("case ", 0) != 0) throw std::runtime_error("fixture line " + std::to_string(i + 1));
    PandasCase c;
    c.id = std::stoi(l.substr(5));
    for (++i; i < lines.size(); ++i) {
      std::istringstream ss(lines[i]);
      std::string key;
      ss >> key;
      if (key == "columns") {
        for (std::string w; ss >> w;) c.names.push_back(w);
      } else if (key == "row") {
        std::vector<double> row;
        for (std::string w; ss >> w;) row.push_back(parse_repr(w));
        c.rows.push_back(row);
      } else if (key == "expect") {
        int k = 0;
        ss >> k;
        for (int j = 0; j < k; ++j) c.expected += (j ? "\n" : "") + lines[++i];
      } else if (key == "end") {
        break;
      } else {
        throw std::runtime_error("fixture line " + std::to_string(i + 1) + ": " + lines[i]);
      }
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

Table table_of(const PandasCase& c) {
  Table t;
  t.title = "case-" + std::to_string(c.id);
  t.index_name = c.names.at(0);
  t.columns.assign(c.names.begin() + 1, c.names.end());
  for (const auto& r : c.rows) {
    t.index.push_back(r.at(0));
    t.cells.emplace_back(r.begin() + 1, r.end());
  }
  return t;
}

}  // namespace

TEST(PandasFixtures, FormatPandasMatchesPandas) {
  const std::vector<PandasCase> cases = load_pandas_cases();
  ASSERT_GE(cases.size(), 400u);
  int failed = 0;
  for (const auto& c : cases) {
    const std::string got = format_pandas(table_of(c));
    EXPECT_EQ(got, c.expected) << "pandas case " << c.id;
    if (got != c.expected) ++failed;
  }
  std::cout << "[ pandas    ] " << cases.size() - failed << "/" << cases.size()
            << " fixture frames identical\n";
}

TEST(PandasFixtures, RenderedTextParsesBack) {
  // Fixed-point text keeps every rendered digit, so parsing and re-rendering must give the
  // same text. (Scientific columns drop digits and may legitimately render differently.)
  int checked = 0;
  for (const auto& c : load_pandas_cases()) {
    if (c.expected.find("e+") != std::string::npos || c.expected.find("e-") != std::string::npos)
      continue;
    const std::string doc = "## H100\n\n```\ncase:\n" + c.expected + "\n```\n";
    ParsedDocument d = parse_document(doc, "case.md");
    ASSERT_EQ(d.tables.size(), 1u) << "pandas case " << c.id;
    const Table& t = d.tables[0].table;
    EXPECT_EQ(t.index.size(), c.rows.size());
    EXPECT_EQ(t.index_name, c.names[0]);
    EXPECT_EQ(format_pandas(t), c.expected) << "pandas case " << c.id;
    ++checked;
  }
  EXPECT_GT(checked, 100);
}

// (c) Bad input names the file and line.
TEST(ParseDocument, RowWithTooFewCells) {
  auto [where, what] = parse_error(
      "# A800\n"
      "```\n"
      "t:\n"
      "       n    tr\n"
      "0  256.0  0.25\n"
      "1  512.0\n"
      "```\n");
  EXPECT_EQ(where, "doc.md:6");
  EXPECT_NE(what.find("doc.md:6: "), std::string::npos) << what;
  EXPECT_NE(what.find("has 2 cells, expected 3"), std::string::npos) << what;
}

TEST(ParseDocument, RowWithTooManyCells) {
  expect_parse_error(
      "```\n"
      "a:\n"
      "       n    tr\n"
      "0  256.0  0.25\n"
      "\n"
      "b:\n"
      "       n    tr\n"
      "0  256.0  0.25  0.5\n"
      "```\n",
      "doc.md:8", "table 'b' row 0 has 4 cells");
}

TEST(ParseDocument, UnparsableNumber) {
  for (const std::string bad : {"0.2x", "abc", "1..2", "0x10", "--1", "e5", "."}) {
    expect_parse_error("# H100\n\n```\nt:\n     n    tr\n0  1.0  " + bad + "\n```\n", "doc.md:6",
                       "cannot parse '" + bad + "' in column 'tr'");
  }
}

TEST(ParseDocument, WrongRowLabel) {
  expect_parse_error("```\nt:\n     n\n0  1.0\n2  2.0\n```\n", "doc.md:5", "row label '2', expected '1'");
}

TEST(ParseDocument, FenceNeverClosed) {
  expect_parse_error("# A800\n\ntext\n```\nt:\n     n\n0  1.0\n", "doc.md:4", "never closed");
  // A longer fence is not closed by a shorter one.
  EXPECT_EQ(parse_error("````\nt:\n     n\n0  1.0\n```\n").first, "doc.md:1");
}

TEST(ParseDocument, MissingTitleHeaderOrRows) {
  // Second table of a block without its title line.
  expect_parse_error("```\na:\n     n\n0  1.0\n\n     n\n0  1.0\n```\n", "doc.md:6", "expected a table title");
  // Title then the rows without a header.
  expect_parse_error("```\na:\n0  1.0\n```\n", "doc.md:3", "expected the header of table 'a'");
  // Title alone.
  expect_parse_error("```\na:\n\nb:\n     n\n0  1.0\n```\n", "doc.md:2", "has no header line");
  // Header without rows.
  expect_parse_error("```\na:\n     n  tr\n```\n", "doc.md:3", "has no rows");
}

// Tables printed back to back in one fence: a title line ("TITLE:" alone) ends the table
// before it, with or without a blank line; so does it an empty frame.
TEST(ParseDocument, ATitleLineEndsTheTableBeforeIt) {
  const std::string doc =
      "# H100\n"                 // 1
      "```\n"                    // 2
      "a:\n"                     // 3
      "     n   tr\n"            // 4
      "0  1.0  2.0\n"            // 5
      "1  2.0  3.0\n"            // 6
      "b:\n"                     // 7
      "Empty DataFrame\n"        // 8
      "Columns: [n, tr]\n"       // 9
      "Index: []\n"              // 10
      "c:\n"                     // 11
      "     n   tr\n"            // 12
      "0  4.0  5.0\n"            // 13
      "\n"                       // 14
      "d:\n"                     // 15
      "     n   tr\n"            // 16
      "0  6.0  7.0\n"            // 17
      "```\n";
  const ParsedDocument d = parse_document(doc, "x.md");
  ASSERT_EQ(d.tables.size(), 4u);
  EXPECT_EQ(d.tables[0].table.title, "a");
  EXPECT_EQ(d.tables[0].table.index.size(), 2u);
  EXPECT_EQ(d.tables[1].table.title, "b");
  EXPECT_TRUE(d.tables[1].table.index.empty());
  EXPECT_EQ(d.tables[2].line, 11);
  EXPECT_EQ(d.tables[2].table.cells, (std::vector<std::vector<double>>{{5.0}}));
  EXPECT_EQ(d.tables[3].line, 15);
  // A title line with no header after it, and a row that is no row, still name their line.
  EXPECT_EQ(parse_error("```\na:\n     n\n0  1.0\nb:\nc:\n     n\n0  1.0\n```\n").first, "doc.md:5");
  expect_parse_error("```\na:\n     n\n0  1.0\nnot a row\n```\n", "doc.md:5", "row 1 has 3 cells");
}

// A table of more than kMaxTableColumns columns is refused at its header, before its rows.
TEST(ParseDocument, AWiderTableThanTheLimitIsRefused) {
  std::string header = "     n", row = "0  1.0";
  for (size_t c = 0; c <= opbench::kMaxTableColumns; ++c) header += " c" + std::to_string(c), row += " 1.0";
  expect_parse_error("# H100\n```\nt:\n" + header + "\n" + row + "\n```\n", "doc.md:4",
                     "table 't' has 100001 columns, more than the 100000 a table may have");
}

TEST(ParseDocument, DuplicateColumn) {
  expect_parse_error("\n```\na:\n     n  tr  tr\n0  1.0 2.0 3.0\n```\n", "doc.md:4", "column 'tr' twice");
}

TEST(ParseDocument, BadNotation) {
  expect_parse_error("# Notation\n\n- tr: Triton\n- Triton only\n", "doc.md:4", "'- label: description'");
  expect_parse_error("# Notation\n- tr: Triton\n- Tr: Triton again\n", "doc.md:3", "defined twice");
  EXPECT_EQ(parse_error("## Notation\n- : Triton\n").first, "doc.md:2");
  EXPECT_EQ(parse_error("## Notation\n- tr:\n").first, "doc.md:2");
  // List items elsewhere are prose, not notation.
  ParsedDocument d = parse_document("# Summary\n- use Triton: it is fast\n- anything\n", "x.md");
  EXPECT_TRUE(d.notation.empty());
}

TEST(ParseDocument, BadEmptyFrame) {
  EXPECT_EQ(parse_error("```\na:\nEmpty DataFrame\nColumns: n, tr\nIndex: []\n```\n").first,
            "doc.md:4");
  EXPECT_EQ(parse_error("```\na:\nEmpty DataFrame\nColumns: [n, tr]\nIndex: [0]\n```\n").first,
            "doc.md:5");
  EXPECT_EQ(parse_error("```\na:\nEmpty DataFrame\nColumns: [n]\n```\n").first, "doc.md:3");
}

// Structure: headings, GPUs, notation, several blocks, skipped code blocks.
TEST(ParseDocument, HeadingsGpusAndBlocks) {
  const std::string doc =
      "# Results\n"                        // 1
      "\n"                                 // 2
      "## Notation\n"                      // 3
      "\n"                                 // 4
      "- Tr: Triton\n"                     // 5
      "- to: Torch\n"                      // 6
      "\n"                                 // 7
      "## NVIDIA A800 80GB\n"              // 8
      "### Speed\n"                        // 9
      "```bash\n"                          // 10
      "opbench sweep x.yaml:\n"            // 11
      "```\n"                              // 12
      "```text\n"                          // 13
      "s1:\n"                              // 14
      "       n   tr   to\n"               // 15
      "0  256.0  1.0  NaN\n"               // 16
      "\n"                                 // 17
      "\n"                                 // 18
      "s2:\n"                              // 19
      "       n   tr    to\n"              // 20
      "0  256.0 -1.0  0.25\n"              // 21
      "```\n"                              // 22
      "## Notes\n"                         // 23
      "```\n"                              // 24
      "just prose in a fence\n"            // 25
      "```\n"                              // 26
      "```\n"                              // 27
      "s3:\n"                              // 28
      "Empty DataFrame\n"                  // 29
      "Columns: [n, tr]\n"                 // 30
      "Index: []\n"                        // 31
      "```\n"                              // 32
      "# rtx4090 run\n"                    // 33
      "~~~\r\n"                            // 34
      "s4:\r\n"                            // 35
      "     m   tr\r\n"                    // 36
      "0  1.0  2.0\r\n"                    // 37
      "~~~\n";                             // 38
  ParsedDocument d = parse_document(doc, "x.md");
  EXPECT_EQ(d.gpus, (std::vector<std::string>{"A800", "RTX 4090"}));
  ASSERT_EQ(d.notation.size(), 2u);
  EXPECT_EQ(d.notation[0].first, "Tr");
  EXPECT_EQ(d.notation[1].second, "Torch");
  ASSERT_EQ(d.tables.size(), 4u);
  EXPECT_EQ(d.tables[0].line, 14);
  EXPECT_EQ(d.tables[0].gpu, "A800");
  EXPECT_EQ(d.tables[0].headings,
            (std::vector<std::string>{"Results", "NVIDIA A800 80GB", "Speed"}));
  EXPECT_TRUE(std::isnan(d.tables[0].table.cells[0][1]));
  EXPECT_EQ(d.tables[1].line, 19);
  EXPECT_EQ(d.tables[1].table.cells[0][0], -1.0);
  EXPECT_EQ(d.tables[1].table.cells[0][1], 0.25);
  EXPECT_EQ(d.tables[2].line, 28);
  EXPECT_EQ(d.tables[2].gpu, "A800");  // nearest device heading above "## Notes"
  EXPECT_EQ(d.tables[2].headings, (std::vector<std::string>{"Results", "Notes"}));
  EXPECT_TRUE(d.tables[2].table.index.empty());
  EXPECT_EQ(d.tables[2].table.columns, std::vector<std::string>{"tr"});
  EXPECT_EQ(format_block(d.tables[2].table), "s3:\nEmpty DataFrame\nColumns: [n, tr]\nIndex: []\n");
  EXPECT_EQ(d.tables[3].gpu, "RTX 4090");
  EXPECT_EQ(d.tables[3].headings, std::vector<std::string>{"rtx4090 run"});
  EXPECT_EQ(d.tables[3].table.index_name, "m");
  EXPECT_EQ(format_pandas(d.tables[3].table), "     m   tr\n0  1.0  2.0");
}

TEST(ParseDocument, DeviceNames) {
  using opbench::device_in_text;
  EXPECT_EQ(device_in_text("H100"), "H100");
  EXPECT_EQ(device_in_text("A800"), "A800");
  EXPECT_EQ(device_in_text("Results on NVIDIA H200 (SXM)"), "H200");
  EXPECT_EQ(device_in_text("H800-80G"), "H800");
  EXPECT_EQ(device_in_text("L40S"), "L40S");
  EXPECT_EQ(device_in_text("A100, then H100"), "A100");
  EXPECT_EQ(device_in_text("H20"), "H20");
  EXPECT_EQ(device_in_text("RTX 4090"), "RTX 4090");
  EXPECT_EQ(device_in_text("on an rtx-4090"), "RTX 4090");
  EXPECT_EQ(device_in_text("Tesla T4"), "T4");
  EXPECT_EQ(device_in_text("MI300X"), "MI300X");
  EXPECT_EQ(device_in_text("A10G"), "A10G");
  EXPECT_EQ(device_in_text("Speed(fwd)"), "");
  EXPECT_EQ(device_in_text("Notation"), "");
  EXPECT_EQ(device_in_text("batch12-head12-dim128"), "");
  EXPECT_EQ(device_in_text("A1000x"), "");
  EXPECT_EQ(device_in_text("H1"), "");
  EXPECT_EQ(device_in_text("h100"), "");  // the pattern wants the upper-case letter
  EXPECT_EQ(device_in_text("Softmax on sequence"), "");
}

// (d) -1 (error) and NaN (missing) cells; expectations checked against pandas 3.1.1.
TEST(FormatPandas, MinusOneAndNaN) {
  Table t;
  t.title = "act-speed-fwd";
  t.index_name = "n";
  t.index = {256.0, 512.0, 1024.0};
  t.columns = {"tr", "to", "toc"};
  t.cells = {{0.043131, -1.0, kNaN}, {-1.0, 18.0, kNaN}, {0.5, kNaN, kNaN}};
  EXPECT_EQ(format_block(t),
            "act-speed-fwd:\n"
            "        n        tr    to  toc\n"
            "0   256.0  0.043131  -1.0  NaN\n"
            "1   512.0 -1.000000  18.0  NaN\n"
            "2  1024.0  0.500000   NaN  NaN\n");
}

TEST(FormatPandas, ReferenceShapes) {
  Table t;
  t.title = "m";
  t.index_name = "n";
  t.index = {256.0, 512.0};
  t.columns = {"tr", "to", "toc"};
  t.cells = {{44.55, 18.0, 27.00293}, {89.1, 36.0, 54.00293}};
  EXPECT_EQ(format_pandas(t),
            "       n     tr    to       toc\n"
            "0  256.0  44.55  18.0  27.00293\n"
            "1  512.0  89.10  36.0  54.00293");
  // Ties at the 7th decimal round to even, as pandas (Python) and the references do.
  EXPECT_EQ(opbench::format_float_column({44.7609375, 89.3109375, 0.0078125}),
            (std::vector<std::string>{" 44.760937", " 89.310937", " 0.007812"}));
  // Scientific notation: a tiny value, or a long column with a value above 1e6.
  EXPECT_EQ(opbench::format_float_column({5e-7, -1.0, kNaN}),
            (std::vector<std::string>{" 5.000000e-07", "-1.000000e+00", "NaN"}));
  EXPECT_EQ(opbench::format_float_column({1234567.5, 0.123456}),
            (std::vector<std::string>{" 1.234568e+06", " 1.234560e-01"}));
  EXPECT_EQ(opbench::format_float_column({1234567.5, 0.125}),  // 12 characters: not too long
            (std::vector<std::string>{" 1234567.500", " 0.125"}));
  EXPECT_EQ(opbench::format_float_column({1234567.5, 0.5}),
            (std::vector<std::string>{" 1234567.5", " 0.5"}));
}

TEST(FormatPandas, WideIndexLongHeadersAndErrors) {
  Table t;
  t.title = "x";
  t.index_name = "seq_len";
  t.columns = {"torch_compile_naive"};
  for (int i = 0; i < 11; ++i) {
    t.index.push_back(i + 1);
    t.cells.push_back({i * 0.25});
  }
  const std::vector<std::string> lines = split_lines(format_pandas(t) + "\n");
  ASSERT_EQ(lines.size(), 12u);
  EXPECT_EQ(lines[0], "    seq_len  torch_compile_naive");
  EXPECT_EQ(lines[1], "0       1.0                 0.00");
  EXPECT_EQ(lines[11], "10     11.0                 2.50");

  Table bad = t;
  bad.cells.pop_back();
  EXPECT_THROW(format_pandas(bad), std::invalid_argument);
  bad = t;
  bad.cells[3].push_back(1.0);
  EXPECT_THROW(format_pandas(bad), std::invalid_argument);
}

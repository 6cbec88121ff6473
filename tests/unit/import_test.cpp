// Tests of opbench import (src/exchange/import.*): every table of the reference documents
// (tests/data/reference/*.md, reference_docs.hpp) goes through import -> store ->
// build_sections -> format_block and comes back byte for byte; titles parse back into op and
// axes; -1 cells become failed points; bad documents are refused with their line number and
// leave nothing behind. Torch-free.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "config/config.hpp"
#include "exchange/import.hpp"
#include "exchange/markdown_parser.hpp"
#include "ops/op.hpp"
#include "points/points.hpp"
#include "report/report.hpp"
#include "report/table.hpp"
#include "reference_docs.hpp"
#include "temp_db.hpp"

namespace fs = std::filesystem;
using namespace opbench;

namespace {

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string l; std::getline(ss, l);) {
    if (!l.empty() && l.back() == '\r') l.pop_back();
    out.push_back(l);
  }
  return out;
}

std::string temp_db(const std::string& name) { return fresh_db_path("import", name); }

// The exact text of the table whose title line is `line` (1-based): the title line, the
// header and one line per row, each ending in '\n' -- what format_block must give back.
std::string original_block(const std::vector<std::string>& lines, const ParsedTable& pt) {
  std::string out;
  for (size_t i = 0; i < pt.table.index.size() + 2; ++i) out += lines.at(size_t(pt.line) - 1 + i) + "\n";
  return out;
}

// Every table of every run in `store` re-rendered, by (gpu, title).
std::map<std::pair<std::string, std::string>, std::string> rerender(const Store& store) {
  std::map<std::pair<std::string, std::string>, std::string> out;
  for (const auto& run : store.runs()) {
    RunRecord rr{run, store.points(run.id)};
    for (const auto& s : build_sections(rr))
      for (const auto& t : s.tables) {
        auto key = std::make_pair(run.env.gpu, t.title);
        EXPECT_EQ(out.count(key), 0u) << "table rendered twice: " << t.title;
        out[key] = format_block(t);
      }
  }
  return out;
}

// Makes the store refuse a point titled "boom", as a full disk or a constraint would.
int add_failing_trigger(Store& s) {
  return sqlite3_exec(s.handle(),
                      "CREATE TRIGGER boom BEFORE INSERT ON points WHEN NEW.title = 'boom' "
                      "BEGIN SELECT RAISE(ABORT, 'boom'); END;",
                      nullptr, nullptr, nullptr);
}

void expect_import_error(const std::string& doc, int line, const std::string& fragment) {
  try {
    import_document(doc, "bad.md", "");
    ADD_FAILURE() << "accepted:\n" << doc;
  } catch (const InputError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("bad.md:" + std::to_string(line) + ":"), std::string::npos) << what;
    EXPECT_NE(what.find(fragment), std::string::npos) << what;
  }
}

// Imports `doc` expecting an InputError whose message holds `fragment`.
void expect_import_error_in(const std::string& doc, const std::string& fragment) {
  try {
    import_document(doc, "bad.md", "");
    ADD_FAILURE() << "accepted:\n" << doc;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(ImportReference, EveryTableRoundTripsByteForByte) {
  const auto docs = reference_docs();
  size_t checked = 0;
  for (const auto& path : docs) {
    SCOPED_TRACE(path.string());
    const std::string text = read_text(path);
    const auto lines = lines_of(text);
    const ParsedDocument doc = parse_document(text, path.string());
    ASSERT_FALSE(doc.tables.empty());

    const std::string db = temp_db(path.filename().string() + ".db");
    {
      Store store(db);
      ImportResult res = import_file(store, path.string(), "ref");
      EXPECT_EQ(res.runs.size(), doc.gpus.size());  // one run per GPU
    }
    Store store(db);  // read back from disk, not from memory
    const auto runs = store.runs();
    auto rendered = rerender(store);
    size_t with_rows = 0;
    for (const ParsedTable& pt : doc.tables) {
      if (pt.table.index.empty()) continue;
      ++with_rows;
      auto it = rendered.find({pt.gpu, pt.table.title});
      ASSERT_NE(it, rendered.end()) << "table not re-rendered: " << pt.table.title;
      EXPECT_EQ(it->second, original_block(lines, pt)) << "line " << pt.line;
      ++checked;
    }
    EXPECT_EQ(rendered.size(), with_rows);

    // The whole report of each run holds every block of its GPU verbatim, under its section.
    for (const auto& run : runs) {
      EXPECT_EQ(run.source, "import");
      EXPECT_EQ(run.config_path, path.string());
      EXPECT_EQ(run.label, "ref");
      EXPECT_FALSE(run.uuid.empty());
      const std::string report = render_report({{run, store.points(run.id)}});
      for (const ParsedTable& pt : doc.tables)
        if (pt.gpu == run.env.gpu && !pt.table.index.empty()) {
          EXPECT_NE(report.find(original_block(lines, pt)), std::string::npos) << pt.table.title;
          EXPECT_NE(report.find("### " + pt.headings.back() + "\n"), std::string::npos);
        }
      // Notation: the document's descriptions, labels as the tables spell them.
      ASSERT_FALSE(run.notation.empty());
      for (const auto& [label, desc] : run.notation) {
        const std::string* want = notation_for(doc, label);
        ASSERT_NE(want, nullptr) << label;
        EXPECT_EQ(desc, *want);
      }
    }
  }
  EXPECT_GT(checked, 0u);
  std::cout << "round-tripped " << checked << " reference tables\n";
}

// The documents hold every registered op and more than one GPU: a new op brings its document.
TEST(ImportReference, EveryOpOnSeveralGpus) {
  std::set<std::string> ops, gpus;
  for (const auto& path : reference_docs()) {
    const ImportResult res = import_document(reference_text(path), path.string(), "");
    for (const auto& r : res.runs) {
      gpus.insert(r.run.env.gpu);
      for (const auto& sp : r.points) ops.insert(sp.point.op);
    }
  }
  for (const OpSpec* op : all_ops()) EXPECT_TRUE(ops.count(op->name)) << "no reference document holds " << op->name;
  EXPECT_GE(gpus.size(), 2u) << "the documents name too few GPUs";
}

TEST(ImportReference, PointsCarryOpAxesAndNotation) {
  const fs::path p = reference_dir() / "tpa_decode_a800.md";
  ImportResult res = import_document(reference_text(p), p.string(), "");
  ASSERT_EQ(res.runs.size(), 1u);
  const ImportedRun& r = res.runs[0];
  EXPECT_EQ(r.run.env.gpu, "A800");
  EXPECT_EQ(r.run.op, "tpa_decode");
  EXPECT_EQ(r.tables, 4u);
  ASSERT_EQ(r.run.notation.size(), 7u);
  EXPECT_EQ(r.run.notation[0], (std::pair<std::string, std::string>{"trb", "Triton parallel_b"}));
  const StoredPoint& first = r.points.front();
  EXPECT_EQ(first.point.title, "tpa_decode-speed-fwd-batch8-head32-dim128-rank16-bf16");
  EXPECT_EQ(first.point.op, "tpa_decode");
  EXPECT_EQ(first.point.x_name, "m");
  EXPECT_EQ(first.point.x_value, 256);
  EXPECT_EQ(first.point.params.i("m"), 256);
  EXPECT_EQ(first.point.params.i("rank"), 16);
  EXPECT_EQ(first.point.params.s("metric"), "speed");
  EXPECT_EQ(first.point.label, "trb");
  EXPECT_EQ(first.point.provider, "Triton parallel_b");
  EXPECT_EQ(first.section, "Time (ms)");
  EXPECT_DOUBLE_EQ(first.value, 0.017620);
  EXPECT_EQ(first.result.unit, "ms");
  EXPECT_TRUE(first.result.samples.empty());
  EXPECT_GT(first.result.bytes, 0);  // from the op's byte count
  EXPECT_GT(first.result.gbps, 0);
  size_t memory = 0;
  for (const auto& sp : r.points)
    if (sp.point.params.s("metric") == "memory") {
      ++memory;
      EXPECT_EQ(sp.result.unit, "MiB");
      EXPECT_EQ(sp.section, "Peak memory (MiB)");
    }
  EXPECT_EQ(memory, 2u * 8 * 7);
  EXPECT_EQ(r.points.size(), 4u * 8 * 7);
}

// Every table title every registered op's shipped config makes reads back as that op, with the
// axes the title spells equal to the table's.
TEST(ImportTitles, DefaultTitlesOfEveryOpParseBack) {
  size_t checked = 0;
  for (const OpSpec* op : all_ops()) {
    const Sweep sw = expand(load_config(std::string(OPBENCH_SOURCE_DIR) + "/configs/" + op->name + ".yaml"));
    for (const auto& t : sw.tables) {
      const TitleInfo info = parse_title(t.title);
      EXPECT_EQ(info.op, op->name) << t.title;
      for (const auto& [axis, value] : info.params.values()) {
        ASSERT_TRUE(t.params.has(axis)) << t.title << " " << axis;
        EXPECT_EQ(t.params.values().at(axis), value) << t.title << " " << axis;
      }
      EXPECT_TRUE(info.params.has("metric") && info.params.has("mode")) << t.title;
      ++checked;
    }
  }
  EXPECT_GT(checked, all_ops().size());
  // Not an op's default title: kept with op '' (the metric still read when a word names it).
  for (std::string bad : {"act-speed-fwd-batch12-head12-dim128-act_relu-dim_1-bf16",  // no op writes dim_ for relu
                          "act-speed-fwd-batch12-head12-dim128-act_gelu-bf16",        // unknown act
                          "act-speed-fwd-batch12-head12-dim128-act_softmax-dim_3-bf16",  // act rejects dim 3
                          "md_lrpe_cosine-speed-fwd-batch12-head12-dim128-act_none-bf16-1d-l0",  // none is omitted
                          "tpa_decode-speed-bwd-batch8-head32-dim128-rank16-bf16",  // no backward
                          "my_kernel-speed-fwd", "flash-attn"}) {
    TitleInfo t = parse_title(bad);
    EXPECT_EQ(t.op, "") << bad;
  }
  EXPECT_EQ(parse_title("my_kernel-speed-fwd").params.s("metric"), "speed");
  EXPECT_EQ(parse_title("x-memory").params.s("metric"), "memory");
  EXPECT_FALSE(parse_title("flash-attn").params.has("metric"));
}

TEST(ImportDocument, ErrorsGpusSectionsAndUnknownTitles) {
  const std::string doc =
      "# Two GPUs\n"                          // 1
      "\n"                                    // 2
      "## Notation\n"                         // 3
      "\n"                                    // 4
      "- Tr: Triton\n"                        // 5
      "- to: Torch\n"                         // 6
      "\n"                                    // 7
      "## H100\n"                             // 8
      "\n"                                    // 9
      "### Speed\n"                           // 10
      "```\n"                                 // 11
      "custom-speed-table:\n"                 // 12
      "     n        tr        to\n"          // 13
      "0  1.0  0.500000 -1.000000\n"          // 14
      "1  2.0  1.000000  2.000000\n"          // 15
      "```\n"                                 // 16
      "\n"                                    // 17
      "## A800\n"                             // 18
      "\n"                                    // 19
      "### Mem\n"                             // 20
      "```\n"                                 // 21
      "custom-speed-table:\n"                 // 22
      "     n   to    tr\n"                   // 23
      "0  1.0  NaN   3.5\n"                   // 24
      "```\n";                                // 25
  ImportResult res = import_document(doc, "two.md", "lbl");
  ASSERT_EQ(res.runs.size(), 2u);
  const ImportedRun& h100 = res.runs[0];
  const ImportedRun& a800 = res.runs[1];
  EXPECT_EQ(h100.run.env.gpu, "H100");
  EXPECT_EQ(a800.run.env.gpu, "A800");
  EXPECT_EQ(h100.run.op, "");
  ASSERT_EQ(h100.points.size(), 4u);
  // tr 1 -> 0.5; to 1 -> -1 (failed)
  EXPECT_EQ(h100.points[0].point.label, "tr");
  EXPECT_EQ(h100.points[0].point.provider, "Triton");
  EXPECT_EQ(h100.points[0].point.op, "");
  EXPECT_EQ(h100.points[0].point.params.s("metric"), "speed");
  EXPECT_EQ(h100.points[0].section, "Speed");
  EXPECT_TRUE(h100.points[0].result.ok());
  EXPECT_FALSE(h100.points[1].result.ok());
  EXPECT_EQ(h100.points[1].result.error, "imported as -1");
  EXPECT_EQ(h100.points[1].value, -1);
  // the notation list's "Tr" is the tables' "tr"
  EXPECT_EQ(h100.run.notation,
            (std::vector<std::pair<std::string, std::string>>{{"tr", "Triton"}, {"to", "Torch"}}));

  // Stored and rendered back: the -1 and the NaN cells, and a column order that differs
  // from the notation's.
  const std::string db = temp_db("two.db");
  Store store(db);
  store_import(store, res);
  EXPECT_GT(res.runs[0].run.id, 0);
  auto stored = store.points(res.runs[0].run.id);
  ASSERT_EQ(stored.size(), 4u);
  EXPECT_EQ(stored[1].result.error, "imported as -1");
  auto rendered = rerender(store);
  auto lines = lines_of(doc);
  ParsedDocument pd = parse_document(doc, "two.md");
  ASSERT_EQ(pd.tables.size(), 2u);
  for (const auto& pt : pd.tables) {
    std::string want = format_block(pt.table);
    EXPECT_EQ(rendered.at({pt.gpu, pt.table.title}), want);
  }
  EXPECT_EQ(rendered.at({"A800", "custom-speed-table"}), "custom-speed-table:\n     n  to   tr\n0  1.0 NaN  3.5\n");
}

TEST(ImportDocument, ARepeatedTitleOnOneGpuStartsAnotherRun) {
  // Two runs of one GPU, one after the other under its heading.
  const std::string block = "```\nt-speed:\n     n   to\n0  1.0  2.0\n```\n";
  ImportResult res = import_document("# H100\n## first\n" + block + "## second\n" + block, "r.md", "");
  ASSERT_EQ(res.runs.size(), 2u);
  EXPECT_EQ(res.runs[0].run.env.gpu, "H100");
  EXPECT_EQ(res.runs[0].run.env.device, "");  // the document does not say
  EXPECT_EQ(res.runs[0].points.size(), 1u);
  EXPECT_EQ(res.runs[1].points.size(), 1u);
  // A table whose GPU no heading names (a "## GPU" heading names none), and a run heading
  // with no name, are refused: a run is measured on one device.
  expect_import_error("## GPU\n" + block, 3, "table 't-speed': no heading above it names its GPU");
  expect_import_error("##\n\nrun 1, 2026-11-22, cpu, median of each point's samples\n" + block, 1,
                      "the run heading above 'run 1, 2026-11-22, cpu, median of each p' names no GPU");
}

TEST(ImportDocument, OwnReportRoundTrips) {
  // A run as opbench sweep stores it, rendered, imported, rendered again: same tables, same
  // provider names (the report's notation lists providers).
  RunRecord rr;
  rr.run.id = 1;
  rr.run.env.gpu = "NVIDIA H100 80GB HBM3";
  rr.run.env.device = "cuda:0";
  rr.run.env.torch_version = "2.11.0+cu130";
  rr.run.env.peak_gbps = 2941.4;
  rr.run.git_commit = "0123456789abcdef0123456789abcdef01234567";
  rr.run.label = "base, nightly";
  rr.run.started_at = "2026-11-22T10:00:00.000Z";
  rr.run.stat = "median";
  rr.run.notation = {{"tr", "cuda"}, {"to", "torch"}};
  rr.run.status = "done";
  const std::string title = "lrpe_rotate-speed-fwd-batch2-head4-dim64-act_silu-fp32";
  int64_t seq = 0;
  for (int64_t n : {64, 128, 256})
    for (auto [prov, label] : {std::pair<std::string, std::string>{"cuda", "tr"}, {"torch", "to"}}) {
      StoredPoint sp;
      sp.seq = seq++;
      sp.section = "act_silu";
      sp.point.title = title;
      sp.point.op = "lrpe_rotate";
      sp.point.x_name = "n";
      sp.point.x_value = n;
      sp.point.provider = prov;
      sp.point.label = label;
      sp.stat = "median";
      sp.result.unit = "ms";
      sp.value = prov == "cuda" ? 0.001234567 * double(n) : 1.0 / 3.0 * double(n);
      if (prov == "cuda" && n == 128) {
        sp.result.error = "boom";
        sp.value = -1;
      }
      rr.points.push_back(sp);
    }
  const std::string report = render_report({rr});
  ImportResult res = import_document(report, "own.md", "");
  ASSERT_EQ(res.runs.size(), 1u);
  const ImportedRun& r = res.runs[0];
  // the run header: the full GPU name, commit (as the report shows it), torch, peak bandwidth
  EXPECT_EQ(r.run.env.gpu, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(r.run.env.device, "cuda:0");
  EXPECT_EQ(r.run.git_commit, "0123456789ab");
  EXPECT_EQ(r.run.env.torch_version, "2.11.0+cu130");
  EXPECT_EQ(r.run.env.peak_gbps, 2941);
  EXPECT_EQ(r.run.op, "lrpe_rotate");
  EXPECT_EQ(r.run.notation, rr.run.notation);
  ASSERT_EQ(r.points.size(), 6u);
  EXPECT_EQ(r.points[0].point.provider, "cuda");
  EXPECT_EQ(r.points[1].point.provider, "torch");
  EXPECT_EQ(r.points[0].section, "act_silu");
  EXPECT_EQ(r.points[2].result.error, "imported as -1");
  RunRecord back{r.run, r.points};
  auto a = build_sections(rr), b = build_sections(back);
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(a[0].name, b[0].name);
  ASSERT_EQ(b[0].tables.size(), 1u);
  EXPECT_EQ(format_block(a[0].tables[0]), format_block(b[0].tables[0]));
}

namespace {

// A one-table run as a sweep stores it: the fields of its run line from `run`.
RunRecord one_table_run(const RunInfo& run) {
  RunRecord rr;
  rr.run = run;
  rr.run.id = 1;
  rr.run.env.gpu = "NVIDIA H100 80GB HBM3";
  rr.run.env.device = "cuda:0";
  rr.run.started_at = "2026-11-22T10:00:00.000Z";
  rr.run.stat = "median";
  rr.run.status = "done";
  StoredPoint sp;
  sp.point.title = "lrpe_rotate-speed-fwd-batch2-head4-dim64-act_silu-fp32";
  sp.point.op = "lrpe_rotate";
  sp.point.x_name = "n";
  sp.point.x_value = 64;
  sp.point.provider = sp.point.label = "torch";
  sp.stat = "median";
  sp.result.unit = "ms";
  sp.value = 0.5;
  rr.points.push_back(sp);
  return rr;
}

}  // namespace

TEST(ImportDocument, TheRunLineReadsNoFieldFromTheLabel) {
  for (const std::string label : {"x, commit deadbeef, torch 9.9.9, measured peak bandwidth 99999 GB/s, mean of each point's samples",
                                  "x), cpu, commit deadbeef, torch 9.9.9", "a\\), commit dead\\"}) {
    RunInfo plain;
    plain.label = label;
    ImportResult res = import_document(render_report({one_table_run(plain)}), "own.md", "");
    ASSERT_EQ(res.runs.size(), 1u) << label;
    EXPECT_EQ(res.runs[0].run.git_commit, "") << label;
    EXPECT_EQ(res.runs[0].run.env.torch_version, "") << label;
    EXPECT_EQ(res.runs[0].run.env.peak_gbps, 0) << label;
    EXPECT_EQ(res.runs[0].run.env.device, "cuda:0") << label;
    EXPECT_EQ(res.runs[0].run.stat, "median") << label;
    RunInfo full = plain;
    full.git_commit = "0123456789abcdef";
    full.env.torch_version = "2.11.0";
    full.env.peak_gbps = 2941;
    full.stat = "p20";
    res = import_document(render_report({one_table_run(full)}), "own.md", "");
    ASSERT_EQ(res.runs.size(), 1u) << label;
    EXPECT_EQ(res.runs[0].run.git_commit, "0123456789ab") << label;
    EXPECT_EQ(res.runs[0].run.env.torch_version, "2.11.0") << label;
    EXPECT_EQ(res.runs[0].run.env.peak_gbps, 2941) << label;
  }
}

TEST(ImportDocument, ARunLineWithALongFieldIsRead) {
  // each field of a run line read without recursion: any length is read (or refused), never a crash
  RunInfo run;
  const std::string report = render_report({one_table_run(run)});
  const size_t at = report.find(", median of each");
  ASSERT_NE(at, std::string::npos);
  for (const std::string field : {", commit " + std::string(30000, 'a'), ", torch " + std::string(300000, '1')}) {
    const std::string doc = report.substr(0, at) + field + report.substr(at);
    ImportResult res = import_document(doc, "long.md", "");
    ASSERT_EQ(res.runs.size(), 1u);
    EXPECT_EQ(res.runs[0].run.git_commit.size() + res.runs[0].run.env.torch_version.size(), field.size() - (field[2] == 'c' ? 9 : 8));
  }
}

TEST(ImportDocument, UnreadableInputNamesTheLine) {
  // a row with a missing cell
  expect_import_error("# H100\n```\nact-t:\n     n   to\n0  1.0  2.0\n1  2.0\n```\n", 6, "cells");
  // an unparsable number
  expect_import_error("# H100\n\n```\nt:\n     n   to\n0  1.0  abc\n```\n", 6, "abc");
  // an x value that is not an integer
  expect_import_error("# H100\n```\nt:\n     n   to\n0  1.0  2.0\n1  1.5  2.0\n```\n", 6, "not an integer");
  // an x value twice
  expect_import_error("# H100\n```\nt:\n     n   to\n0  1.0  2.0\n1  1.0  3.0\n```\n", 6, "twice");
  // a fence never closed
  expect_import_error("# H100\n\n```\nt:\n     n   to\n0  1.0  2.0\n", 3, "never closed");
  // no tables at all
  expect_import_error("# H100\n\nJust prose.\n", 1, "no tables");
}

TEST(ImportDocument, NothingHalfImported) {
  const std::string path = temp_db("half.md");
  {
    std::ofstream f(path);
    f << "# H100\n```\nfine:\n     n   to\n0  1.0  2.0\n```\n# A800\n```\nboom:\n     n   to\n0  1.0  2.0\n```\n";
  }
  const std::string db = temp_db("half.db");
  Store store(db);
  RunInfo before;
  before.label = "existing";
  store.begin_run(before);
  // The second run's insert fails inside the store: the first run must not stay behind.
  ASSERT_EQ(add_failing_trigger(store), SQLITE_OK);
  EXPECT_THROW(import_file(store, path, ""), RuntimeFailure);
  ASSERT_EQ(store.runs().size(), 1u);
  EXPECT_EQ(store.runs()[0].label, "existing");
  // A bad document stores nothing either.
  std::ofstream(path) << "# H100\n```\nfine:\n     n   to\n0  1.0  2.0\n```\n```\nbad:\n     n   to\n0  x  2.0\n```\n";
  try {
    import_file(store, path, "");
    ADD_FAILURE() << "accepted a bad document";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":10:"), std::string::npos) << e.what();
  }
  EXPECT_EQ(store.runs().size(), 1u);
  EXPECT_THROW(import_file(store, path + ".missing", ""), InputError);
}

// A published document of the kind opbench did not write: labels with spaces in its Notation
// list and its table headers, a prose summary naming them. Each header resolves by the
// columns' right edges to the notation's labels; the tables re-render byte for byte.
const char* const kSpacedLabels =
    "# A800\n"
    "\n"
    "## Summary\n"
    "\n"
    "In summary, use `Tri Bp` when `dim=-2` and `act=softmax`; otherwise, use `Tri Sp`.\n"
    "\n"
    "## Notation\n"
    "\n"
    "- Tri: Triton\n"
    "- Tri Sp: Triton Split\n"
    "- Tri Bp: Triton Block Parallel\n"
    "- Tor: Torch\n"
    "- Tor C: Torch Compile\n"
    "\n"
    "## Softmax\n"
    "\n"
    "```\n"
    "lrpe_cosine-speed-fwd-batch12-head12-dim128-act_softmax-dim_1-bf16:\n"
    "        n       Tri    Tri Sp    Tri Bp       Tor     Tor C\n"
    "0   256.0  0.038915  0.030112  0.041000  0.135323  0.074762\n"
    "1   512.0  0.050502  0.045120  0.052217  0.237365  0.159553\n"
    "2  1024.0  0.094652  0.081004  0.090121  0.434426  0.110080\n"
    "\n"
    "lrpe_cosine-memory-fwd-batch12-head12-dim128-act_softmax-dim_1-bf16:\n"
    "        n        Tri    Tri Sp    Tri Bp         Tor     Tor C\n"
    "0   256.0   27.00293  27.00293  27.00293   85.504883  27.00293\n"
    "1   512.0   54.00293  54.00293  54.00293  171.006836  54.00293\n"
    "2  1024.0  108.00293  -1.00000  -1.00000  342.010742  54.00293\n"
    "```\n";

TEST(ImportDocument, LabelsWithSpacesResolveByNotationAndRightEdges) {
  const std::string path = temp_db("spaced.md");
  std::ofstream(path) << kSpacedLabels;
  const ParsedDocument doc = parse_document(kSpacedLabels, path);
  ASSERT_EQ(doc.tables.size(), 2u);
  EXPECT_EQ(doc.tables[0].table.columns, (std::vector<std::string>{"Tri", "Tri Sp", "Tri Bp", "Tor", "Tor C"}));
  EXPECT_EQ(doc.notation[1], (std::pair<std::string, std::string>{"Tri Sp", "Triton Split"}));

  Store store(temp_db("spaced.db"));
  ImportResult res = import_file(store, path, "published");
  ASSERT_EQ(res.runs.size(), 1u);
  const auto lines = lines_of(kSpacedLabels);
  const auto rendered = rerender(store);
  for (const ParsedTable& pt : doc.tables)
    EXPECT_EQ(rendered.at({pt.gpu, pt.table.title}), original_block(lines, pt));
  const RunInfo run = store.runs().at(0);
  EXPECT_EQ(run.notation[1], (std::pair<std::string, std::string>{"Tri Sp", "Triton Split"}));
  const auto points = store.points(run.id);
  EXPECT_EQ(points[1].point.label, "Tri Sp");
  EXPECT_EQ(points[1].point.provider, "Triton Split");
  EXPECT_EQ(points[1].point.op, "lrpe_cosine");
  const std::string report = render_report({{run, points}});
  EXPECT_NE(report.find("- Tor C: Torch Compile\n"), std::string::npos);

  // A header that does not end where the columns do, or a spaced name the notation lacks.
  std::string misaligned = kSpacedLabels;
  misaligned.replace(misaligned.find("Tor     Tor C\n0   256.0  0.038915"), 13, "Tor    Tor C ");
  expect_import_error_in(misaligned, "do not end where the columns do");
  std::string unlisted = kSpacedLabels;
  unlisted.replace(unlisted.find("- Tor C: Torch Compile\n"), 23, "");
  expect_import_error_in(unlisted, "'Tor C' (read from the columns' right edges) is not a label of the Notation list");
}

// A published document that prints several tables in one fence with no blank line between
// them (tests/data/back_to_back.md, written in the reference text format): every table is
// imported, and each fence re-renders byte for byte, its tables one after another.
TEST(ImportDocument, TablesBackToBackReRenderByteForByte) {
  const std::string path = std::string(OPBENCH_TEST_DATA) + "/back_to_back.md";
  const std::string text = read_document(path);
  const ParsedDocument doc = parse_document(text, path);
  ASSERT_EQ(doc.tables.size(), 5u);
  Store store(temp_db("back_to_back.db"));
  const ImportResult res = import_file(store, path, "");
  ASSERT_EQ(res.runs.size(), 1u);
  EXPECT_EQ(res.runs[0].count, 5u * 4 * 2);
  const RunInfo run = store.runs().at(0);
  EXPECT_EQ(run.points, int64_t(5 * 4 * 2));
  const auto lines = lines_of(text);
  const auto rendered = rerender(store);
  for (const ParsedTable& pt : doc.tables) EXPECT_EQ(rendered.at({pt.gpu, pt.table.title}), original_block(lines, pt));
  // Each fence's body: its tables' blocks with nothing between them.
  std::vector<std::string> bodies;
  for (size_t at = text.find("```\n"); at != std::string::npos;) {
    const size_t close = text.find("```\n", at + 4);
    bodies.push_back(text.substr(at + 4, close - at - 4));
    at = text.find("```\n", close + 4);
  }
  const auto sections = build_sections(RunRecord{run, store.points(run.id)});
  ASSERT_EQ(sections.size(), bodies.size());
  for (size_t i = 0; i < sections.size(); ++i) {
    std::string block;
    for (const auto& t : sections[i].tables) block += format_block(t);
    EXPECT_EQ(block, bodies[i]) << sections[i].name;
  }
}

// The peak resident memory of this process so far, in bytes.
long peak_rss() {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return long(u.ru_maxrss) * 1024;
}

// A document is read as it is parsed: an 8 MB table (a million points) raises the peak memory
// by less than twice the text's size (it once took 170 times the file), and every point is
// read; no more than --max-points are stored.
TEST(ImportDocument, ALargeDocumentIsReadInBoundedMemory) {
  const size_t target = 8u << 20;
  std::string doc;
  doc.reserve(target + 4096);  // built without doubling past its size: the peak before is the text
  doc += "# H100\n\n```\nt-speed:\n        n";
  for (int c = 0; c < 8; ++c) doc += "        c" + std::to_string(c);
  doc += "\n";
  size_t rows = 0;
  while (doc.size() + 100 < target) {
    doc += std::to_string(rows) + " " + std::to_string(rows + 1) + ".0";
    for (int c = 0; c < 8; ++c) doc += "  0.123456";
    doc += "\n";
    ++rows;
  }
  doc += "```\n";
  const long before = peak_rss();
  const ImportResult res = import_document(doc, "big.md", "", PointSink());
  const long grew = peak_rss() - before;
  std::cout << "read " << doc.size() << " bytes, " << res.runs.at(0).count << " points: peak memory +" << grew
            << " bytes\n";
  ASSERT_EQ(res.runs.size(), 1u);
  EXPECT_EQ(res.runs[0].count, rows * 8);
  EXPECT_LT(grew, 2 * long(doc.size())) << "reading " << doc.size() << " bytes raised the peak by " << grew;
  EXPECT_THROW(check_point_limit(res, "big.md", rows * 8 - 1), InputError);
  EXPECT_NO_THROW(check_point_limit(res, "big.md", rows * 8));
}

TEST(ImportDocument, TheSameDocumentTwiceIsOneRun) {
  const std::string path = temp_db("twice.md");
  std::ofstream(path) << kSpacedLabels;
  Store store(temp_db("twice.db"));
  ImportResult first = import_file(store, path, "published");
  ImportResult again = import_document(read_document(path), path, "another label");
  const std::vector<bool> added = store_import(store, again);
  EXPECT_EQ(added, std::vector<bool>{false});
  EXPECT_EQ(again.runs[0].run.id, first.runs[0].run.id);  // reported: the run already there
  EXPECT_EQ(store.runs().size(), 1u);
  EXPECT_EQ(store.runs()[0].label, "published");
  // Another document (one value changed) is another run.
  std::string changed = kSpacedLabels;
  changed.replace(changed.find("0.038915"), 8, "0.038916");
  ImportResult other = import_document(changed, path, "");
  EXPECT_EQ(store_import(store, other), std::vector<bool>{true});
  EXPECT_EQ(store.runs().size(), 2u);
}

TEST(ImportDocument, TwoColumnsOneProviderIsAnError) {
  // Two notation labels for torch: one run holds one point per provider, so the second
  // column would silently replace the first.
  expect_import_error("## Notation\n\n- to: torch\n- t2: torch\n\n# H100\n```\nt:\n     n   to   t2\n0  1.0  2.0  3.0\n```\n",
                      9, "columns 'to' and 't2' both stand for provider 'torch'");
  // A label the Notation maps to cuda beside a column named cuda.
  expect_import_error("## Notation\n\n- tr: cuda\n\n# H100\n```\nt:\n     n   tr  cuda\n0  1.0  2.0  3.0\n```\n", 8,
                      "columns 'tr' and 'cuda' both stand for provider 'cuda'");
  // Different providers are fine, and every cell becomes a point.
  ImportResult ok = import_document("## Notation\n\n- tr: cuda\n\n# H100\n```\nt:\n     n   tr  to\n0  1.0  2.0  3.0\n```\n",
                                    "ok.md", "");
  ASSERT_EQ(ok.runs.size(), 1u);
  EXPECT_EQ(ok.runs[0].points.size(), 2u);
}

TEST(ImportDocument, NamesThatWouldBreakAReportAreRefused) {
  expect_import_error("# H100\n```\nt\x01x:\n     n   to\n0  1.0  2.0\n```\n", 3, "title 't x' holds a control character");
  expect_import_error(std::string("# H100\n```\nt\0x:\n     n   to\n0  1.0  2.0\n```\n", 44), 3, "control character");
  expect_import_error("# H100\n```\nt~~~:\n     n   to\n0  1.0  2.0\n```\n", 3, "code fence");
  expect_import_error("# H100\n```\nt:\n     n   t\x1bo\n0  1.0  2.0\n```\n", 3, "column");
  expect_import_error("# H100 \x7f\n```\nt:\n     n   to\n0  1.0  2.0\n```\n", 3, "heading");
  expect_import_error("# H100\n\n```\nt:\n     n   to\n0  1.0  2.0\n```\n\xff\n", 8, "not valid UTF-8");
  expect_import_error("## Notation\n\n- to: tor\x07" "ch\n\n# H100\n```\nt:\n     n   to\n0  1.0  2.0\n```\n", 3, "notation");
}

TEST(ImportDocument, AReportOfImportedNamesImportsAgain) {
  const std::string doc = "## Notation\n\n- tr: cuda\n- to: torch\n\n# H100\n\n## größe | x\n\n```\nact-ü:\n     n   tr   to\n0  1.0  2.0  3.0\n```\n";
  ImportResult first = import_document(doc, "a.md", "");
  RunRecord r{first.runs.at(0).run, first.runs.at(0).points};
  r.run.id = 1;
  const std::string report = render_report({r});
  ImportResult again = import_document(report, "b.md", "");
  ASSERT_EQ(again.runs.size(), 1u);
  EXPECT_EQ(again.runs[0].points.size(), first.runs[0].points.size());
  const std::string second = render_report({RunRecord{again.runs[0].run, again.runs[0].points}});
  EXPECT_EQ(second.substr(second.find("### ")), report.substr(report.find("### ")));
}

TEST(ImportDocument, ColumnLabelsTheNotationListCanHold) {
  // ':' would split the label in "- label: provider"; two labels differing only in case are
  // one entry of a list read ignoring case.
  expect_import_error("# H100\n```\nt:\n     n  a:b  a:c\n0  1.0  2.0  3.0\n```\n", 3, "column 'a:b' holds ':'");
  expect_import_error("# H100\n```\nt:\n     n   to   TO\n0  1.0  2.0  3.0\n```\n", 4, "columns 'to' and 'TO' differ only in case");
}

TEST(ImportDocument, TheNotationListEndsAtItsFirstOtherLine) {
  // A section named Notation holding a failed point: the report lists the failure under it,
  // and that list is not read as notation.
  const std::string doc = "# H100\n\n## Notation\n\n```\nt:\n     n   to\n0  1.0  -1.0\n```\n";
  ImportResult first = import_document(doc, "a.md", "");
  ASSERT_EQ(first.runs.size(), 1u);
  const std::string report = render_report({RunRecord{first.runs[0].run, first.runs[0].points}});
  ASSERT_NE(report.find("\n- t n=1 to: error: imported as -1\n"), std::string::npos) << report;
  ImportResult again = import_document(report, "b.md", "");
  ASSERT_EQ(again.runs.size(), 1u);
  EXPECT_EQ(again.runs[0].points.size(), 1u);
  // prose after the list ends it too
  ParsedDocument d = parse_document("## Notation\n\n- tr: cuda\n\nSome prose.\n\n- x y: z\n", "c.md");
  ASSERT_EQ(d.notation.size(), 1u);
}

TEST(ImportDocument, ATableWithoutValueColumnsHoldsNoPoint) {
  // Only an index column: no cell to store, so no run either (a run of no points would
  // render into a report with no table, which no import accepts).
  expect_import_error("# H100\n```\nt:\n  -\n0  10\n```\n", 1, "every table is empty");
  ImportResult r = import_document("# H100\n```\nt:\n  -\n0  10\n```\n```\nu:\n     n   to\n0  1.0  2.0\n```\n", "a.md", "");
  ASSERT_EQ(r.runs.size(), 1u);
  EXPECT_EQ(r.runs[0].tables, 1u);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("has no columns besides -"), std::string::npos) << r.warnings[0];
}

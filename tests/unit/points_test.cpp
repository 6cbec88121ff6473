// Sweep expansion and default titles against the names the reference documents use.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "config/config.hpp"
#include "points/points.hpp"
#include "reference_docs.hpp"

using namespace opbench;

TEST(Points, CartesianProductTimesVariants) {
  Config c = parse_config(R"(
op: act
x: {n: [256, 512, 1024]}
params: {batch: 12, head: 12, dim: 128, mode: [fwd, bwd], metric: [speed, memory]}
variants: [{act: relu}, {act: softmax, act_dim: -2}]
providers: {torch: to, cuda: tr}
)", "c.yaml");
  Sweep s = expand(c);
  EXPECT_EQ(s.tables.size(), 2u * 2 * 2);
  EXPECT_EQ(s.points.size(), 8u * 3 * 2);
  EXPECT_EQ(s.tables[0].title, "act-speed-fwd-batch12-head12-dim128-act_relu-bf16");
  EXPECT_EQ(s.tables[1].title, "act-speed-fwd-batch12-head12-dim128-act_softmax-dim_-2-bf16");
  EXPECT_EQ(s.tables[0].section, "act_relu");
  EXPECT_EQ(s.tables[1].section, "act_softmax-dim_-2");
  // points: table-major, then x, then providers in column order
  EXPECT_EQ(s.points[0].provider, "torch");
  EXPECT_EQ(s.points[0].label, "to");
  EXPECT_EQ(s.points[1].provider, "cuda");
  EXPECT_EQ(s.points[2].x_value, 512);
  EXPECT_EQ(s.points[0].params.i("n"), 256);
  EXPECT_EQ(s.points[0].params.i("act_dim"), -1);  // default filled
}

TEST(Points, TitlesOfEveryOp) {
  auto title = [](const std::string& text) { return expand(parse_config(text, "t.yaml")).tables.at(0).title; };
  EXPECT_EQ(title("op: lrpe_cosine\nx: {n: [8]}\nparams: {act: softmax, act_dim: 1}\n"),
            "lrpe_cosine-speed-fwd-batch12-head12-dim128-act_softmax-dim_1-bf16");
  EXPECT_EQ(title("op: lrpe_rotate\nx: {n: [8]}\nparams: {mode: bwd, metric: memory, act: silu}\n"),
            "lrpe_rotate-memory-bwd-batch12-head12-dim128-act_silu-bf16");
  EXPECT_EQ(title("op: lrpe_cosine_md\nx: {n: [8]}\nparams: {md: 2, l: 10}\n"),
            "md_lrpe_cosine-speed-fwd-batch12-head12-dim128-bf16-2d-l10");
  EXPECT_EQ(title("op: lrpe_cosine_md\nx: {n: [8]}\nparams: {md: 3, act: softmax, act_dim: -2}\n"),
            "md_lrpe_cosine-speed-fwd-batch12-head12-dim128-act_softmax-dim_-2-bf16-3d-l0");
  EXPECT_EQ(title("op: tpa_decode\nx: {m: [8]}\nparams: {batch: 32}\n"),
            "tpa_decode-speed-fwd-batch32-head32-dim128-rank16-bf16");
  EXPECT_EQ(title("op: act\nx: {n: [8]}\ntitle: '{op}-{act}-{dtype}'\n"), "act-none-bf16");
}

// Every title in the reference documents is one a shipped config produces.
TEST(Points, ShippedConfigsReproduceReferenceTitles) {
  std::set<std::string> ours;
  for (const OpSpec* op : all_ops()) {
    Sweep s = expand(load_config(std::string(OPBENCH_SOURCE_DIR) + "/configs/" + op->name + ".yaml"));
    for (const auto& t : s.tables) ours.insert(t.title);
  }
  int checked = 0;
  const std::regex title_re(R"(^([a-z_]+-(speed|memory)-[A-Za-z0-9_\-]+):$)");
  for (const auto& doc : reference_docs()) {
    std::istringstream in(reference_text(doc));
    std::smatch m;
    for (std::string line; std::getline(in, line);)
      if (std::regex_match(line, m, title_re)) {
        ++checked;
        EXPECT_TRUE(ours.count(m[1])) << doc.filename() << ": no shipped config makes " << m[1];
      }
  }
  EXPECT_GT(checked, 40);
}

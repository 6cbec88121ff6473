// Tests of the data `opbench plot` draws (src/report/plot_data.cpp): a figure per title, a line
// per provider (per run when several), failed points left out, the bandwidth floor from the
// stored bytes and the run's peak in each view, file names from titles. Torch-free.
#include <gtest/gtest.h>

#include <cctype>
#include <nlohmann/json.hpp>
#include <set>

#include "report/plot_data.hpp"
#include "stored_points.hpp"

using namespace opbench;

namespace {

StoredPoint point(const std::string& title, int64_t x, const std::string& label, double ms, double bytes,
                  const std::string& metric = "speed") {
  StoredPoint sp;
  sp.point.title = title;
  sp.point.x_name = "n";
  sp.point.x_value = x;
  sp.point.provider = label == "to" ? "torch" : "cuda";
  sp.point.label = label;
  sp.point.params = Params({{"metric", metric}, {"n", x}});
  sp.result.unit = metric == "speed" ? "ms" : "MiB";
  sp.value = ms;
  sp.result.bytes = bytes;
  sp.result.gbps = bytes / (ms * 1e-3) / 1e9;
  sp.result.pct_peak = sp.result.gbps / 2000 * 100;
  return sp;
}

const std::string kSpeed = "act-speed-fwd-batch1-head2-dim16-act_silu-bf16";
const std::string kMemory = "act-memory-fwd-batch1-head2-dim16-act_silu-bf16";

std::vector<StoredPoint> points() {
  std::vector<StoredPoint> v;
  for (int64_t n : {256, 512, 1024}) {
    const double bytes = double(n) * 1e6;  // 256 MB at n = 256
    v.push_back(point(kSpeed, n, "to", bytes / 1e9 / 1000 * 1e3 * 1.5, bytes));  // 667 GB/s
    v.push_back(point(kSpeed, n, "tr", bytes / 1e9 / 1000 * 1e3, bytes));  // 1000 GB/s: half the 2000 GB/s peak
    v.push_back(point(kMemory, n, "to", 64, 0, "memory"));
    v.push_back(point(kMemory, n, "tr", 32, 0, "memory"));
  }
  StoredPoint failed = point(kSpeed, 2048, "tr", -1, 2048e6);
  failed.result.error = "out of memory";
  v.push_back(failed);
  return v;
}

}  // namespace

TEST(PlotData, OneFigurePerTitleOneLinePerProviderAndTheFloor) {
  auto tables = plot_tables({gpu_run(1, "H100", 2000, points())}, Show::Value);
  ASSERT_EQ(tables.size(), 2u);
  const PlotTable& s = tables[0];
  EXPECT_EQ(s.title, kSpeed);
  EXPECT_EQ(s.file, kSpeed + ".png");
  EXPECT_TRUE(s.speed);
  EXPECT_EQ(s.y_label, "time (ms, median)");
  ASSERT_EQ(s.lines.size(), 3u);
  EXPECT_EQ(s.lines[0].label, "to");
  EXPECT_EQ(s.lines[1].label, "tr");
  EXPECT_EQ(s.lines[1].x, (std::vector<double>{256, 512, 1024}));  // the failed 2048 left out
  EXPECT_FALSE(s.lines[1].floor);
  const PlotLine& f = s.lines[2];
  EXPECT_TRUE(f.floor);
  EXPECT_EQ(f.label, "bandwidth floor");
  ASSERT_EQ(f.x.size(), 4u);  // every x with stored bytes, the failed one's too
  EXPECT_NEAR(f.y[0], 256e6 / 2000e9 * 1e3, 1e-12);  // ms at the measured peak
  // memory: no floor
  EXPECT_EQ(tables[1].lines.size(), 2u);
  EXPECT_EQ(tables[1].y_label, "peak memory (MiB)");
}

TEST(PlotData, ViewsOfBandwidth) {
  auto g = plot_tables({gpu_run(1, "H100", 2000, points())}, Show::GBps);
  ASSERT_EQ(g.size(), 1u);  // speed tables only
  EXPECT_NEAR(g[0].lines[1].y[0], 1000, 1e-6);
  EXPECT_EQ(g[0].lines[2].y, std::vector<double>(4, 2000));
  auto p = plot_tables({gpu_run(1, "H100", 2000, points())}, Show::PctPeak);
  EXPECT_NEAR(p[0].lines[1].y[0], 50, 1e-6);
  EXPECT_EQ(p[0].lines[2].y, std::vector<double>(4, 100));
  // no measured peak: no floor
  auto none = plot_tables({gpu_run(1, "cpu", 0, points())}, Show::Value);
  EXPECT_EQ(none[0].lines.size(), 2u);
}

TEST(PlotData, SeveralRunsEachProviderItsOwnLine) {
  RunRecord a = gpu_run(1, "H100", 2000, points()), b = gpu_run(2, "A100", 1500, points());
  b.run.label = "head";
  auto t = plot_tables({a, b}, Show::Value);
  ASSERT_EQ(t.size(), 2u);
  ASSERT_EQ(t[0].lines.size(), 6u);  // (to, tr, floor) per run
  EXPECT_EQ(t[0].lines[0].label, "to (run 1, H100)");
  EXPECT_EQ(t[0].lines[3].label, "to (run 2 head, A100)");
  EXPECT_EQ(t[0].lines[5].label, "bandwidth floor (run 2 head, A100)");
  EXPECT_NEAR(t[0].lines[5].y[0], 256e6 / 1500e9 * 1e3, 1e-12);

  auto pct = plot_tables({a, b}, Show::PctPeak);
  ASSERT_EQ(pct[0].lines.size(), 5u);  // one 100% floor for both
  EXPECT_EQ(pct[0].lines[2].label, "bandwidth floor");

  auto j = nlohmann::json::parse(plot_tables_json(t, Show::Value));
  EXPECT_EQ(j["kind"], "tables");
  EXPECT_EQ(j["tables"][0]["lines"].size(), 6u);
  EXPECT_EQ(j["tables"][0]["lines"][2]["floor"], true);
}

TEST(PlotData, FileNames) {
  EXPECT_EQ(plot_file_name("tpa_decode-speed-fwd-b1"), "tpa_decode-speed-fwd-b1.png");
  EXPECT_EQ(plot_file_name("a/b c:d"), "a_b_c_d.png");
  EXPECT_EQ(plot_file_name(".hidden"), "_.hidden.png");
}

TEST(PlotData, EachTableItsOwnFileOfBoundedLength) {
  // titles that differ only where a file name cannot (punctuation, case), and a long one
  const std::vector<std::string> titles = {"T x", "T_x", "T/x", "T:x", "t_X", std::string(5000, 'L')};
  std::vector<StoredPoint> pts;
  for (const auto& title : titles) pts.push_back(point(title, 256, "to", 1, 1e6));
  const auto tables = plot_tables({gpu_run(1, "H100", 2000, pts)}, Show::Value);
  ASSERT_EQ(tables.size(), titles.size());
  std::set<std::string> files;
  for (const auto& t : tables) {
    std::string lower = t.file;
    for (auto& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_TRUE(files.insert(lower).second) << t.file;
    EXPECT_LE(t.file.size(), 120u);
    EXPECT_EQ(t.file.find('/'), std::string::npos);
  }
  EXPECT_EQ(tables[0].file, "T_x.png");
  EXPECT_EQ(tables[1].file, "T_x-2.png");
}

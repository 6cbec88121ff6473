// Tests of the report's noise note (src/report/noise.cpp): a table whose points spread by more
// than 10% of their median between p20 and p80 gets a line naming them; quiet tables,
// imported points without samples and failed points get none. Torch-free.
#include <gtest/gtest.h>

#include <cmath>

#include "report/noise.hpp"
#include "report/report.hpp"
#include "stored_points.hpp"

using namespace opbench;

namespace {

StoredPoint point(const std::string& title, int64_t x, const std::string& label, std::vector<double> samples) {
  StoredPoint sp = speed_point(title, x, label == "to" ? "torch" : "cuda", label, std::move(samples));
  sp.section = "s";
  return sp;
}

// 10 samples evenly spread over [1 - w/2, 1 + w/2]: p80 - p20 is about 0.6 w.
std::vector<double> spread(double w) {
  std::vector<double> v;
  for (int i = 0; i < 10; ++i) v.push_back(1 - w / 2 + w * i / 9.0);
  return v;
}

RunRecord run_of(std::vector<StoredPoint> pts) {
  RunRecord r;
  r.run.id = 1;
  r.run.env.gpu = "H100";
  r.run.notation = {{"to", "torch"}, {"tr", "cuda"}};
  r.points = std::move(pts);
  return r;
}

}  // namespace

TEST(NoiseNote, RelativeSpread) {
  EXPECT_NEAR(relative_spread(point("t", 1, "to", spread(0.5))), 0.3, 0.01);
  EXPECT_TRUE(std::isnan(relative_spread(point("t", 1, "to", {1.0, 2.0}))));  // too few samples
  StoredPoint failed = point("t", 1, "to", spread(0.5));
  failed.result.error = "boom";
  EXPECT_TRUE(std::isnan(relative_spread(failed)));
}

TEST(NoiseNote, NamesTheNoisyPointsOfEachTable) {
  auto r = run_of({point("quiet", 256, "to", spread(0.05)), point("quiet", 256, "tr", spread(0.1)),
                   point("loud", 256, "to", spread(0.05)), point("loud", 256, "tr", spread(0.5)),
                   point("loud", 512, "to", spread(0.25)), point("loud", 512, "tr", spread(0.1))});
  std::string md = render_report({r});
  EXPECT_NE(md.find("Noisy points (p20-p80 spread over 10% of the median):"), std::string::npos) << md;
  EXPECT_NE(md.find("- loud: 2 of 4 points: n=256 tr 30%, n=512 to 15%\n"), std::string::npos) << md;
  EXPECT_EQ(md.find("- quiet:"), std::string::npos) << md;  // 6% at most
}

TEST(NoiseNote, QuietOrUnsampledTablesHaveNone) {
  StoredPoint imported = point("t", 256, "to", {});
  imported.value = 0.5;
  auto r = run_of({point("t", 512, "to", spread(0.1)), imported});
  EXPECT_EQ(render_report({r}).find("Noisy points"), std::string::npos);
}

TEST(NoiseNote, ManyNoisyPointsAreCut) {
  std::vector<StoredPoint> pts;
  for (int64_t x = 1; x <= 8; ++x) pts.push_back(point("t", x, "to", spread(0.2 + 0.01 * double(x))));
  std::string note = noise_notes(pts, {Table{"t", "n", {}, {}, {}}});
  EXPECT_NE(note.find("- t: 8 of 8 points: n=8 to 17%"), std::string::npos) << note;
  EXPECT_NE(note.find(", ...\n"), std::string::npos) << note;
}

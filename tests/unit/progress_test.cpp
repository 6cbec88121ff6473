// Live progress: `lines` prints one line per finished step with the elapsed time and an ETA
// (what CI logs show), `bar` redraws one line in place, `none` prints only the notes; a sweep
// in lines mode prints one line per table cell.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <regex>
#include <sstream>

#include "core/error.hpp"
#include "sweep/runner.hpp"

using namespace opbench;

TEST(Progress, ModesByName) {
  EXPECT_EQ(parse_progress("auto", true), ProgressMode::bar);
  EXPECT_EQ(parse_progress("auto", false), ProgressMode::lines);
  EXPECT_EQ(parse_progress("bar", false), ProgressMode::bar);
  EXPECT_EQ(parse_progress("lines", true), ProgressMode::lines);
  EXPECT_EQ(parse_progress("none", true), ProgressMode::none);
  EXPECT_THROW(parse_progress("fancy", true), InputError);
}

TEST(Progress, Durations) {
  EXPECT_EQ(format_duration(0.45), "0.5s");
  EXPECT_EQ(format_duration(42.4), "42s");
  EXPECT_EQ(format_duration(187), "3m07s");
  EXPECT_EQ(format_duration(7500), "2h05m");
}

TEST(Progress, LinesOnePerStepWithElapsedAndEta) {
  std::ostringstream log;
  Progress p(ProgressMode::lines, log, 10, 4, "points");
  EXPECT_EQ(p.eta(), "?");
  p.begin("cell a", 6);
  p.end("cell a: 2 points", 6, 2);
  p.note("point failed: x");
  p.begin("cell b", 10);
  p.end("cell b: 4 points", 10, 4);
  p.finish();
  const std::regex line(R"(\[6/10 points\] cell a: 2 points; elapsed [\d.]+s, ETA [\d.]+s
point failed: x
\[10/10 points\] cell b: 4 points; elapsed [\d.]+s, ETA 0\.0s
)");
  EXPECT_TRUE(std::regex_match(log.str(), line)) << log.str();
  EXPECT_EQ(log.str().find('\r'), std::string::npos);
}

TEST(Progress, BarRedrawsInPlaceAndClearsForNotes) {
  std::ostringstream log;
  Progress p(ProgressMode::bar, log, 4, 0, "points");
  p.begin("cell a", 2);
  p.note("check failed: y");
  p.end("cell a", 2, 2);
  p.finish();
  EXPECT_EQ(log.str(), "\r\033[K[##########..........] 2/4 cell a  ETA ?\r\033[Kcheck failed: y\n");
}

TEST(Progress, NoneKeepsOnlyTheNotes) {
  std::ostringstream log;
  Progress p(ProgressMode::none, log, 4, 0, "points");
  p.begin("cell a", 2);
  p.end("cell a", 2, 2);
  p.note("point failed: z");
  p.finish();
  EXPECT_EQ(log.str(), "point failed: z\n");
}

namespace {

class OkExecutor : public Executor {
 public:
  Environment environment() override { return {}; }
  std::string unavailable(const std::string&, const std::string&) override { return ""; }
  Result measure(const Point& p, const Timing&) override {
    Result r;
    r.unit = p.metric() == "memory" ? "MiB" : "ms";
    r.samples = {1, 2};
    r.stats = summarize(r.samples);
    return r;
  }
};

}  // namespace

TEST(Progress, ASweepInLinesModePrintsOneLinePerTableCell) {
  Config cfg = parse_config(R"(
op: act
x: {n: [256, 512]}
params: {batch: 1, head: 1, dim: 16, mode: [fwd, bwd], metric: speed}
providers: {torch: to, torch_compile: toc}
timing: {rounds: 2}
)",
                            "c.yaml");
  auto db = std::filesystem::temp_directory_path() / ("opbench_progress_" + std::to_string(getpid()) + ".db");
  std::filesystem::remove(db);
  Store store(db.string());
  OkExecutor ex;
  SweepOptions opt;
  opt.progress = ProgressMode::lines;
  std::ostringstream log;
  run_sweep(cfg, expand(cfg), ex, store, opt, log);
  const std::string text = log.str();
  EXPECT_TRUE(std::regex_search(
      text, std::regex(R"(^\[2/8 points\] act-speed-fwd-batch1-head1-dim16-act_none-bf16 n=256: 2 points in \d+\.\ds; elapsed [\d.]+s, ETA [\d.]+s$)",
                       std::regex::multiline)))
      << text;
  size_t lines = 0;
  for (char c : text) lines += c == '\n';
  EXPECT_EQ(lines, 4u) << text;  // 2 tables x 2 x values
  EXPECT_NE(text.find("[8/8 points] act-speed-bwd"), std::string::npos) << text;
}

// The sweep loop with a fake executor: every point stored, unavailable providers skipped
// with one line, failures stored and shown as -1, an interrupted run resumed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <sstream>

#include "core/error.hpp"
#include "report/report.hpp"
#include "sweep/runner.hpp"

using namespace opbench;

namespace {

class FakeExecutor : public Executor {
 public:
  int calls = 0;
  int stop_after = -1;  // raise the stop flag after this many measurements
  std::atomic<bool>* stop = nullptr;
  Environment environment() override {
    Environment e;
    e.gpu = "Fake GPU";
    e.peak_gbps = 1000;
    return e;
  }
  std::string unavailable(const std::string&, const std::string& provider) override {
    return provider == "cuda" ? "no GPU here" : "";
  }
  Result measure(const Point& p, const Timing&) override {
    ++calls;
    if (stop && stop_after >= 0 && calls >= stop_after) stop->store(true);
    Result r;
    r.unit = p.metric() == "memory" ? "MiB" : "ms";
    if (p.x_value == 512 && p.params.s("act") == "silu") {
      r.error = "out of memory";
      return r;
    }
    r.samples = {double(p.x_value) / 1000, double(p.x_value) / 1000 * 1.02};
    r.stats = summarize(r.samples);
    r.bytes = 1e6;
    return r;
  }
};

std::string temp_db() {
  auto p = std::filesystem::temp_directory_path() / ("opbench_runner_" + std::to_string(getpid()) + ".db");
  std::filesystem::remove(p);
  return p.string();
}

const char* kConfig = R"(
op: act
x: {n: [256, 512, 1024]}
params: {batch: 1, head: 1, dim: 16, mode: [fwd, bwd], metric: speed}
variants: [{act: relu}, {act: silu}]
providers: {cuda: tr, torch: to}
)";

}  // namespace

TEST(Runner, StoresEveryPointAndSkipsUnavailable) {
  Config cfg = parse_config(kConfig, "c.yaml");
  Sweep sw = expand(cfg);
  FakeExecutor ex;
  std::ostringstream log;
  drop_unavailable(sw, ex, log);
  EXPECT_EQ(log.str(), "skipping provider cuda: no GPU here\n");
  Store store(temp_db());
  SweepOutcome out = run_sweep(cfg, sw, ex, store, {}, log);
  EXPECT_EQ(out.measured, 4u * 3);
  EXPECT_EQ(out.failed, 2u);  // silu at n=512, fwd and bwd
  auto run = *store.run(out.run_id);
  EXPECT_EQ(run.status, "done");
  EXPECT_EQ(run.points, 12);
  EXPECT_EQ(run.notation, (std::vector<std::pair<std::string, std::string>>{{"to", "torch"}}));
  std::string doc = render_report({{run, store.points(run.id)}});
  EXPECT_NE(doc.find("act-speed-fwd-batch1-head1-dim16-act_silu-bf16:\n        n       to\n"
                     "0   256.0  0.25856\n1   512.0 -1.00000\n2  1024.0  1.03424\n"),
            std::string::npos)
      << doc;
  EXPECT_NE(doc.find("error: out of memory"), std::string::npos);
}

TEST(Runner, InterruptedRunResumes) {
  Config cfg = parse_config(kConfig, "c.yaml");
  Store store(temp_db());
  std::atomic<bool> stop{false};
  FakeExecutor ex;
  ex.stop = &stop;
  ex.stop_after = 5;
  SweepOptions opt;
  opt.stop = &stop;
  std::ostringstream log;
  Sweep sw = expand(cfg);
  drop_unavailable(sw, ex, log);
  SweepOutcome first = run_sweep(cfg, sw, ex, store, opt, log);
  EXPECT_TRUE(first.interrupted);
  EXPECT_EQ(first.measured, 5u);
  EXPECT_EQ(store.run(first.run_id)->status, "interrupted");
  EXPECT_EQ(store.points(first.run_id).size(), 5u);

  stop = false;
  FakeExecutor ex2;
  opt.resume = first.run_id;
  SweepOutcome second = run_sweep(cfg, sw, ex2, store, opt, log);
  EXPECT_FALSE(second.interrupted);
  EXPECT_EQ(second.run_id, first.run_id);
  EXPECT_EQ(second.skipped, 5u);
  EXPECT_EQ(ex2.calls, 7);
  EXPECT_EQ(store.points(first.run_id).size(), 12u);
  EXPECT_EQ(store.run(first.run_id)->status, "done");
  EXPECT_EQ(store.runs().size(), 1u);

  // Resuming with another config is refused.
  Config other = parse_config(std::string(kConfig) + "title: '{op}-{act}-{mode}'\n", "c.yaml");
  EXPECT_THROW(run_sweep(other, expand(other), ex2, store, opt, log), InputError);
}

TEST(Runner, ProvidersFilter) {
  Config cfg = parse_config(kConfig, "c.yaml");
  Sweep sw = expand(cfg);
  filter_providers(sw, cfg, {"torch"});
  for (const auto& p : sw.points) EXPECT_EQ(p.provider, "torch");
  EXPECT_THROW(filter_providers(sw, cfg, {"torch_compile"}), InputError);
}

TEST(Stats, QuantilesAsNumpy) {
  Stats s = summarize({4, 1, 3, 2, 5});
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.p20, 1.8);
  EXPECT_DOUBLE_EQ(s.p80, 4.2);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_NEAR(s.stdev, 1.5811388, 1e-6);
  EXPECT_EQ(s.count, 5);
}

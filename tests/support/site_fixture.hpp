// Runs for the site's tests and its scale benchmark: a few ops' tables measured on several GPUs
// over several commits, every point with samples in rounds, a bandwidth floor, and one planted
// step (a point that gets slower from one commit on, on every GPU). Torch-free.
#pragma once
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "core/hash.hpp"
#include "store/store.hpp"

namespace opbench {

struct SiteFixture {
  std::vector<std::string> gpus = {"NVIDIA H100 80GB HBM3", "NVIDIA H200"};
  std::vector<double> peaks = {3000, 4200};  // GB/s, one per GPU
  int commits = 3;                           // runs per GPU, one per commit
  std::vector<std::string> ops = {"act", "lrpe_cosine"};
  int tables_per_op = 2;                     // speed tables; each op also has one memory table
  std::vector<int64_t> xs = {256, 1024, 4096};
  std::vector<std::pair<std::string, std::string>> providers = {{"cuda", "tr"}, {"torch", "to"}};
  int samples = 20, rounds = 4;
  size_t max_points = 0;                     // points per run at most (0: no limit)
  // The planted step: the first speed table of the first op, at x, for this provider, is
  // `factor` times slower from commit `at` on.
  int step_at = 2;
  int64_t step_x = 4096;
  std::string step_provider = "cuda";
  double step_factor = 1.5;
};

inline std::string fixture_title(const std::string& op, const std::string& metric, int t) {
  return op + "-" + metric + "-fwd-t" + std::to_string(t) + "-bf16";
}

// One point: its time from x and the provider (1% noise in its samples), its bytes and GB/s.
inline StoredPoint fixture_point(const SiteFixture& f, const std::string& op, const std::string& metric, int t,
                                 int64_t x, size_t prov, double factor, double peak, std::mt19937& rng) {
  StoredPoint sp;
  sp.point.title = fixture_title(op, metric, t);
  sp.point.op = op;
  sp.point.params = Params({{"metric", metric}, {"n", x}});
  sp.point.x_name = "n";
  sp.point.x_value = x;
  sp.point.provider = f.providers[prov].first;
  sp.point.label = f.providers[prov].second;
  sp.section = op + "_t" + std::to_string(t);
  sp.stat = "median";
  const double bytes = double(x) * 4096 * (t + 1);
  if (metric == "memory") {
    sp.result.unit = "MiB";
    sp.result.samples = {bytes / 1048576 * (1 + 0.5 * double(prov))};
  } else {
    sp.result.unit = "ms";
    const double base = (0.004 + bytes / (peak * 1e6) * (1.3 + 0.4 * double(prov))) * factor;
    std::normal_distribution<double> noise(0, 0.01);
    for (int i = 0; i < f.samples; ++i) sp.result.samples.push_back(base * std::exp(noise(rng)));
    for (int r = 0; r < f.rounds; ++r) sp.result.rounds.push_back(f.samples / f.rounds);
    sp.result.bytes = bytes;
  }
  sp.result.stats = summarize(sp.result.samples);
  sp.value = sp.result.stats.median;
  if (metric == "speed") {
    sp.result.gbps = bytes / (sp.value * 1e6);
    sp.result.pct_peak = 100 * sp.result.gbps / peak;
  }
  return sp;
}

// The points of one run: every op's tables, x and providers (at most f.max_points).
inline std::vector<StoredPoint> fixture_points(const SiteFixture& f, size_t gpu, int commit, std::mt19937& rng) {
  std::vector<StoredPoint> out;
  for (const auto& op : f.ops)
    for (int t = 0; t <= f.tables_per_op; ++t) {
      const std::string metric = t < f.tables_per_op ? "speed" : "memory";
      for (int64_t x : f.xs)
        for (size_t p = 0; p < f.providers.size(); ++p) {
          if (f.max_points && out.size() >= f.max_points) return out;
          const bool stepped = op == f.ops.front() && t == 0 && x == f.step_x &&
                               f.providers[p].first == f.step_provider && commit >= f.step_at;
          out.push_back(fixture_point(f, op, metric, t, x, p, stepped ? f.step_factor : 1.0, f.peaks[gpu], rng));
          out.back().seq = int64_t(out.size());
        }
    }
  return out;
}

// Writes f.commits runs on each GPU, the commits in time order (GPUs alternating).
inline void write_site_fixture(Store& store, const SiteFixture& f) {
  std::mt19937 rng(7);
  for (int c = 0; c < f.commits; ++c)
    for (size_t g = 0; g < f.gpus.size(); ++g) {
      RunInfo run;
      run.label = "c" + std::to_string(c);
      run.op = f.ops.front();
      run.git_commit = content_hash("commit " + std::to_string(c)).substr(0, 12);
      char when[40];  // a commit an hour, the GPUs ten minutes apart
      const int minute = c * 60 + int(g) * 10;
      std::snprintf(when, sizeof when, "2026-01-%02dT%02d:%02d:00.000Z", 1 + minute / 1440, minute / 60 % 24, minute % 60);
      run.started_at = run.finished_at = when;
      run.env.device = "cuda:0";
      run.env.gpu = f.gpus[g];
      run.env.peak_gbps = f.peaks[g];
      run.status = "done";
      for (const auto& [prov, label] : f.providers) run.notation.emplace_back(label, prov);
      store.begin_run(run);
      std::vector<StoredPoint> pts = fixture_points(f, g, c, rng);
      for (auto& p : pts) p.run_id = run.id;
      store.add_points(pts);
    }
}

}  // namespace opbench

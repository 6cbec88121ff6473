// Building stored points for the torch-free tests: a speed point of an act table from its
// samples (the median shown, every statistic computed as a sweep would); a run of such points
// on a GPU with its measured peak; a run stored with its points.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "report/report.hpp"
#include "store/store.hpp"

namespace opbench {

inline StoredPoint speed_point(const std::string& title, int64_t x, const std::string& provider,
                               const std::string& label, std::vector<double> samples) {
  StoredPoint sp;
  sp.point.title = title;
  sp.point.op = "act";
  sp.point.params = Params({{"metric", std::string("speed")}, {"n", x}});
  sp.point.x_name = "n";
  sp.point.x_value = x;
  sp.point.provider = provider;
  sp.point.label = label;
  sp.section = "relu";
  sp.stat = "median";
  sp.result.unit = "ms";
  sp.result.samples = std::move(samples);
  sp.result.stats = summarize(sp.result.samples);
  sp.value = sp.result.stats.median;
  return sp;
}

inline RunRecord gpu_run(int64_t id, const std::string& gpu, double peak_gbps, std::vector<StoredPoint> points) {
  RunRecord r;
  r.run.id = id;
  r.run.env.gpu = gpu;
  r.run.env.peak_gbps = peak_gbps;
  for (auto& p : points) p.run_id = id;
  r.points = std::move(points);
  return r;
}

// Stores run `r` and its points (each given the run's id); the run's id.
inline int64_t store_run(Store& s, RunInfo r, std::vector<StoredPoint> points) {
  s.begin_run(r);
  for (auto& p : points) p.run_id = r.id;
  s.add_points(points);
  return r.id;
}

}  // namespace opbench

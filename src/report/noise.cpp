#include "report/noise.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

namespace opbench {

namespace {

constexpr size_t kShown = 5;  // noisy points named per table

struct Noisy {
  const StoredPoint* p;
  double spread;
};

}  // namespace

double relative_spread(const StoredPoint& p) {
  const Stats& s = p.result.stats;
  if (!p.result.ok() || s.count < kNoiseMinSamples || !(s.median > 0)) return std::nan("");
  return (s.p80 - s.p20) / s.median;
}

std::string noise_notes(const std::vector<StoredPoint>& points, const std::vector<Table>& tables) {
  std::map<std::string, std::vector<Noisy>> noisy;
  std::map<std::string, size_t> judged;
  for (const auto& p : points) {
    const double s = relative_spread(p);
    if (std::isnan(s)) continue;
    ++judged[p.point.title];
    if (s > kNoisySpread) noisy[p.point.title].push_back({&p, s});
  }
  std::ostringstream o;
  for (const auto& t : tables) {
    auto it = noisy.find(t.title);
    if (it == noisy.end()) continue;
    auto& v = it->second;
    std::stable_sort(v.begin(), v.end(), [](const Noisy& a, const Noisy& b) { return a.spread > b.spread; });
    if (o.tellp() == 0)
      o << "\nNoisy points (p20-p80 spread over " << int(kNoisySpread * 100) << "% of the median):\n\n";
    o << "- " << t.title << ": " << v.size() << " of " << judged[t.title] << " points:";
    for (size_t i = 0; i < v.size() && i < kShown; ++i) {
      char buf[32];
      std::snprintf(buf, sizeof buf, " %.0f%%", v[i].spread * 100);
      o << (i ? "," : "") << " " << v[i].p->point.x_name << "=" << v[i].p->point.x_value << " " << v[i].p->point.label
        << buf;
    }
    if (v.size() > kShown) o << ", ...";
    o << "\n";
  }
  return o.str();
}

}  // namespace opbench

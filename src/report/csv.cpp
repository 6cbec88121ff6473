#include "report/csv.hpp"

#include <charconv>
#include <cmath>
#include <set>

namespace opbench {

namespace {

std::string cell(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string number(double v) {
  if (std::isnan(v)) return "";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string rounds_cell(const std::vector<int64_t>& rounds) {
  std::string s;
  for (int64_t n : rounds) s += (s.empty() ? "" : ";") + std::to_string(n);
  return s;
}

void row(std::string& out, const std::vector<std::string>& cells) {
  for (size_t i = 0; i < cells.size(); ++i) out += (i ? "," : "") + cell(cells[i]);
  out += "\n";
}

// The GPU of the device that measured `p` (a run on several devices lists each), else the run's.
std::string point_gpu(const RunInfo& run, const StoredPoint& p) {
  for (const auto& d : run.devices)
    if (d.device == p.device) return d.gpu;
  return run.env.gpu;
}

}  // namespace

std::string render_csv(const std::vector<ReportRun>& runs) {
  std::vector<std::string> axes;
  std::set<std::string> seen;
  for (const auto& r : runs)
    for (const auto& p : r.points)
      for (const auto& [axis, v] : p.point.params.values())
        if (seen.insert(axis).second) axes.push_back(axis);

  std::string out;
  std::vector<std::string> header = {"run", "gpu", "device", "title", "section"};
  header.insert(header.end(), axes.begin(), axes.end());
  for (const char* c : {"x_name", "x", "provider", "label", "unit", "stat", "value", "median", "mean", "min",
                        "max", "p20", "p80", "stdev", "count", "rounds", "bytes", "gbps", "pct_peak", "rel_err",
                        "max_err", "ref_err", "ref_max_err", "check_failed", "error"})
    header.push_back(c);
  row(out, header);
  for (const auto& r : runs)
    for (const auto& p : r.points) {
      const Result& res = p.result;
      const Stats& s = res.stats;
      std::vector<std::string> cells = {std::to_string(r.run.id), point_gpu(r.run, p), p.device, p.point.title, p.section};
      for (const auto& a : axes) cells.push_back(p.point.params.has(a) ? to_string(p.point.params.values().at(a)) : "");
      for (const std::string& c :
           {p.point.x_name, std::to_string(p.point.x_value), p.point.provider, p.point.label, res.unit, p.stat,
            number(p.value), number(s.median), number(s.mean), number(s.min), number(s.max), number(s.p20),
            number(s.p80), number(s.stdev), std::to_string(s.count), rounds_cell(res.rounds), number(res.bytes),
            number(res.gbps), number(res.pct_peak), number(res.rel_err), number(res.max_err), number(res.ref_err),
            number(res.ref_max_err), std::string(res.check_failed ? "1" : "0"),
            res.error})
        cells.push_back(c);
      row(out, cells);
    }
  return out;
}

}  // namespace opbench

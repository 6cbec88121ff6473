// A run's provenance in words (provenance.hpp). Torch-free.
#include "report/provenance.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <utility>

#include "core/placement.hpp"
#include "core/text.hpp"
#include "record/run_fields.hpp"

namespace opbench {

namespace {

// "lo-hi unit" or "v unit" when they are equal (rounded as shown).
std::string range(double lo, double hi, const char* unit) {
  const std::string a = number_text("%.0f", lo), b = number_text("%.0f", hi);
  return (a == b ? a : a + "-" + b) + " " + unit;
}

}  // namespace

std::string timing_line(const RunInfo& r) {
  std::string out;
  for (const RunField* f : timing_fields()) {
    const std::string part = f->phrase(r);
    if (!part.empty()) out += (out.empty() ? "timing: " : ", ") + part;
  }
  return out;
}

std::string stops_line(const std::vector<StoredPoint>& points) {
  std::map<std::string, size_t> by;
  double widest = 0;
  for (const auto& p : points)
    if (!p.result.stop_reason.empty()) {
      ++by[p.result.stop_reason];
      if (p.result.stop_reason == "ceiling" && p.result.precision > widest) widest = p.result.precision;
    }
  if (by.empty()) return "";
  std::string out = "speed points stopped: ";
  const std::vector<std::pair<const char*, const char*>> kinds = {
      {"noise", " at the noise target"}, {"ceiling", " at the ceiling"}, {"budget", " after every round"},
      {"decided", " once the paired interval lay within the threshold"}};
  bool first = true;
  for (const auto& [reason, words] : kinds) {
    if (!by.count(reason)) continue;
    out += (first ? "" : ", ") + std::to_string(by[reason]) + words;
    if (std::string(reason) == "ceiling" && widest > 0) out += number_text(" (their intervals up to %.1f%% wide)", widest * 100);
    first = false;
  }
  return out;
}

std::string time_line(const RunInfo& r) {
  const std::string t = stages_text(r.stages);
  return t.empty() ? "" : "time: " + t;
}

std::string tuning_text(const RunInfo& r) {
  if (!r.env.tuning || r.env.tuning->empty()) return "";
  return "tuning: " + tuning_list(r);
}

std::string state_text(const DeviceState& s) {
  if (!s.known) return "";
  std::string out = "SM " + number_text("%.0f", s.sm_mhz) + " MHz";
  if (s.sm_default_mhz > 0) out += " (default " + number_text("%.0f", s.sm_default_mhz) + ")";
  out += ", memory " + number_text("%.0f", s.memory_mhz) + " MHz, " + number_text("%.0f", s.temperature_c) + " C, " +
         number_text("%.0f", s.power_w) + " W";
  const std::string why = clock_reasons_text(s.reasons);
  if (!why.empty()) out += " (" + why + ")";
  return out;
}

std::string devices_line(const RunInfo& r, const std::vector<StoredPoint>& points) {
  std::vector<std::string> order;
  std::map<std::string, const RunDevice*> known;
  std::map<std::string, std::set<std::pair<std::string, int64_t>>> cells;
  for (const auto& d : r.devices) {
    order.push_back(d.device);
    known[d.device] = &d;
    cells[d.device];
  }
  for (const auto& p : points) {
    if (p.device.empty()) continue;
    if (!cells.count(p.device)) order.push_back(p.device);
    cells[p.device].insert({p.point.title, p.point.x_value});
  }
  bool placed = false;
  for (const auto& d : r.devices) placed = placed || !d.cpus.empty();
  if (order.size() < 2 && !placed) return "";
  std::string out = order.size() < 2 ? "device: " : "devices: ";
  for (size_t i = 0; i < order.size(); ++i) {
    const RunDevice* d = known.count(order[i]) ? known[order[i]] : nullptr;
    const std::string gpu = d ? d->gpu : r.env.gpu;
    const size_t n = cells[order[i]].size();
    out += (i ? "; " : "") + order[i] + (gpu.empty() ? "" : " (" + gpu + ")") + " " + std::to_string(n) +
           (n == 1 ? " cell" : " cells");
    if (d && d->busy_s > 0) out += ", " + number_text("%.1f", d->busy_s) + " s busy";
    const std::string where = d ? placement_text(d->cpus, d->memory, int(d->threads), d->pinned) : "";
    if (!where.empty()) out += ", " + where;
  }
  return out;
}

std::string identity_lines(const RunInfo& r) {
  std::vector<RunDevice> devices = r.devices;
  if (devices.empty() && r.env.identity.known())
    devices.push_back(run_device(r.env.device, r.env.gpu, r.env.peak_gbps, r.env.identity));
  std::string ids, cals;
  for (const auto& d : devices) {
    const std::string id = identity_text(d.identity), cal = calibration_text(d.calibration);
    if (!id.empty()) ids += (ids.empty() ? "identity: " : "; ") + d.device + " is " + id;
    if (!cal.empty()) cals += (cals.empty() ? "calibration: " : "; ") + d.device + ": " + cal;
  }
  return ids + (ids.empty() || cals.empty() ? "" : "\n") + cals;
}

std::vector<const StoredPoint*> throttled_points(const std::vector<StoredPoint>& points) {
  std::vector<const StoredPoint*> out;
  for (const auto& p : points)
    if (p.state.known && p.state.throttled) out.push_back(&p);
  return out;
}

std::string gpu_line(const RunInfo& r, const std::vector<StoredPoint>& points) {
  // One state per table cell (its points share it).
  std::set<std::pair<std::string, int64_t>> seen;
  std::vector<const DeviceState*> cells;
  for (const auto& p : points)
    if (p.state.known && seen.insert({p.point.title, p.point.x_value}).second) cells.push_back(&p.state);
  if (!r.env.state.known && cells.empty()) return "";
  std::string out = "GPU: ";
  if (r.env.state.known) out += state_text(r.env.state) + " at the start";
  if (!cells.empty()) {
    auto span = [&](double DeviceState::*field, const char* unit) {
      double lo = cells.front()->*field, hi = lo;
      for (const DeviceState* c : cells) lo = std::min(lo, c->*field), hi = std::max(hi, c->*field);
      return range(lo, hi, unit);
    };
    size_t throttled = 0;
    for (const DeviceState* c : cells) throttled += c->throttled ? 1 : 0;
    if (r.env.state.known) out += "; ";
    out += "after each of " + std::to_string(cells.size()) + " table cells: SM " +
           span(&DeviceState::sm_mhz, "MHz") + ", memory " + span(&DeviceState::memory_mhz, "MHz") + ", " +
           span(&DeviceState::temperature_c, "C") + ", " + span(&DeviceState::power_w, "W") +
           "; throttled for power or heat after " + std::to_string(throttled) + " of them";
  }
  return out;
}

}  // namespace opbench

// Rule 8: a change of chip, told from a change of code (device_verdict.hpp). Torch-free.
#include "diff/device_verdict.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "core/text.hpp"

namespace opbench {

namespace {

bool is_launch(const CalibrationFigure& f) { return std::strcmp(f.key, "launch_us") == 0; }
// The figures that explain a latency-bound point's time (the launch in proportion to its host share).
bool explains_latency(const CalibrationFigure& f) {
  for (const char* key : {"launch_us", "chase_ns", "sm_mhz", "l2_gbps", "narrow_gbps"})
    if (std::strcmp(f.key, key) == 0) return true;
  return false;
}
double share_of(double host_share) { return std::isfinite(host_share) ? std::clamp(host_share, 0.0, 1.0) : 0.0; }
// What a launch that moved by `ratio` explains of a point whose host share is `host_share`.
double launch_explains(double ratio, double host_share) { return 1 + share_of(host_share) * (ratio - 1); }
bool explains_bandwidth(const CalibrationFigure& f) { return std::strcmp(f.key, "dram_gbps") == 0; }

}  // namespace

std::string explaining_figures(bool bandwidth) {
  std::string out;
  for (const CalibrationFigure& f : calibration_figures())
    if (!is_launch(f) && (bandwidth ? explains_bandwidth(f) : explains_latency(f)))
      out += (out.empty() ? "" : ", ") + std::string(f.name);
  return bandwidth ? out : out + ", and the launch in proportion to the point's host share";
}

namespace {

FigureShift figure_shift(const CalibrationFigure& f, const Calibration& base, const Calibration& head) {
  FigureShift s;
  s.figure = &f;
  const std::vector<double> vb = base.values(f), vh = head.values(f);
  if (vb.empty() || vh.empty()) return s;
  s.base = median_of(vb);
  s.head = median_of(vh);
  s.time_ratio = f.higher_is_faster ? s.base / s.head : s.head / s.base;
  s.p = mann_whitney_p(vb, vh);
  s.real = s.p < kShiftAlpha && std::fabs(s.time_ratio - 1) >= kRealShift;
  return s;
}

std::string pct(double ratio) { return number_text("%+.1f%%", (ratio - 1) * 100); }

// "cuda:1 (GPU-1a2b3c4d)": a device as the reason names it.
std::string device_words(const std::string& device, const DeviceIdentity& id) {
  const std::string uuid = id.uuid.size() > 12 ? id.uuid.substr(0, 12) : id.uuid;
  return (device.empty() ? std::string("its device") : device) + (uuid.empty() ? "" : " (" + uuid + ")");
}

// The real figures of one kind, in words: "dependent load 612 -> 654 ns (time +6.9%)", the
// launch's with what it explains at the point's host share.
std::string figures_words(const DeviceShift& s, bool bandwidth, double host_share) {
  std::string out;
  for (const auto& f : s.figures) {
    if (!f.real || (bandwidth ? !explains_bandwidth(*f.figure) : !explains_latency(*f.figure))) continue;
    std::string time = "time " + pct(f.time_ratio);
    if (is_launch(*f.figure))
      time += ", " + pct(launch_explains(f.time_ratio, host_share)) + " at a host share of " +
              number_text("%.2f", share_of(host_share));
    out += (out.empty() ? "" : ", ") + std::string(f.figure->name) + " " + number_text("%.4g", f.base) + " -> " +
           number_text("%.4g", f.head) + " " + f.figure->unit + " (" + time + ")";
  }
  return out;
}

}  // namespace

DeviceShift device_shift(const RunDevice& base, const RunDevice& head) {
  DeviceShift s;
  s.base_device = base.device;
  s.head_device = head.device;
  s.base_identity = base.identity;
  s.head_identity = head.identity;
  s.base_passes = base.calibration.samples.size();
  s.head_passes = head.calibration.samples.size();
  s.different = !base.identity.uuid.empty() && !head.identity.uuid.empty() && base.identity.uuid != head.identity.uuid;
  s.calibrated = base.calibration.known() && head.calibration.known();
  if (!s.calibrated) return s;
  for (const auto& f : calibration_figures()) {
    const FigureShift fs = figure_shift(f, base.calibration, head.calibration);
    if (!fs.figure || !(fs.base > 0)) continue;
    s.figures.push_back(fs);
    if (!fs.real) continue;
    if (is_launch(f)) {
      s.launch = fs.time_ratio;
    } else if (explains_latency(f)) {
      s.latency_lo = std::min(s.latency_lo, fs.time_ratio);
      s.latency_hi = std::max(s.latency_hi, fs.time_ratio);
    }
    if (explains_bandwidth(f)) {
      s.bandwidth_lo = std::min(s.bandwidth_lo, fs.time_ratio);
      s.bandwidth_hi = std::max(s.bandwidth_hi, fs.time_ratio);
    }
  }
  return s;
}

namespace {

// Seconds since the epoch of a stored time ("2026-11-28T20:04:18.520Z"); NaN when unreadable.
double stored_time_seconds(const std::string& iso) {
  std::tm t{};
  double sec = 0;
  if (std::sscanf(iso.c_str(), "%d-%d-%dT%d:%d:%lf", &t.tm_year, &t.tm_mon, &t.tm_mday, &t.tm_hour, &t.tm_min, &sec) != 6)
    return std::nan("");
  t.tm_year -= 1900;
  t.tm_mon -= 1;
  t.tm_sec = 0;
  return double(timegm(&t)) + sec;
}

// The physical GPUs a run measured on (those with a UUID).
std::vector<std::string> run_uuids(const RunInfo& run) {
  std::vector<std::string> out;
  for (const auto& d : run.devices)
    if (!d.identity.uuid.empty()) out.push_back(d.identity.uuid);
  if (run.devices.empty() && !run.env.identity.uuid.empty()) out.push_back(run.env.identity.uuid);
  return out;
}

// Every pass on `uuid` of the runs that started within kNearSeconds of `at`.
void add_passes_near(const std::vector<RunInfo>& runs, const std::string& uuid, double at, Calibration& into) {
  for (const auto& r : runs) {
    const double t = stored_time_seconds(r.started_at);
    if (!(std::fabs(t - at) <= kNearSeconds)) continue;
    for (const auto& d : r.devices)
      if (d.identity.uuid == uuid)
        into.samples.insert(into.samples.end(), d.calibration.samples.begin(), d.calibration.samples.end());
  }
}

}  // namespace

std::map<std::string, Calibration> calibrations_near(const std::vector<RunInfo>& runs, const RunInfo& base,
                                                     const RunInfo& head) {
  std::map<std::string, Calibration> out;
  for (const RunInfo* run : {&base, &head}) {
    const double at = stored_time_seconds(run->started_at);
    for (const auto& uuid : run_uuids(*run)) {
      if (out.count(uuid)) continue;  // both runs on one GPU: its passes near the base's
      Calibration c;
      add_passes_near(runs, uuid, at, c);
      if (c.known()) out[uuid] = std::move(c);
    }
  }
  return out;
}

RunDevice run_device_of(const RunInfo& run, const std::string& device) {
  for (const auto& d : run.devices)
    if (d.device == device || device.empty()) return d;
  return run_device(device.empty() ? run.env.device : device, run.env.gpu, run.env.peak_gbps, run.env.identity);
}

Band explained_band(const DeviceShift& s, bool bandwidth, double host_share) {
  if (bandwidth) return {s.bandwidth_lo, s.bandwidth_hi};
  const double launch = launch_explains(s.launch, host_share);
  return {std::min(s.latency_lo, launch), std::max(s.latency_hi, launch)};
}

void apply_device_rule(const StoredPoint& base, const StoredPoint& head, double threshold, int paired_processes,
                       const DeviceShift& shift, double pct_base, double pct_head, Judgement& j) {
  if (j.verdict != Verdict::Slower && j.verdict != Verdict::Faster) return;
  if (!shift.different || !shift.calibrated || !(j.ratio > 0)) return;
  const bool bandwidth = pct_base >= kBandwidthBound || pct_head >= kBandwidthBound;
  const double host_share = std::fmax(base.result.host_share, head.result.host_share);  // fmax skips a NaN side
  const Band band = explained_band(shift, bandwidth, host_share);
  const double explained = std::clamp(j.ratio, band.lo, band.hi);
  if (explained == 1) return;
  StoredPoint scaled = head;
  for (double& v : scaled.result.samples) v /= explained;
  scaled.value /= explained;
  // The rest judged at half the threshold: a chip's shift must not hide a change of the
  // threshold's size on top of it.
  const Judgement again = judge(base, scaled, threshold * kDeviceRest, paired_processes);
  if (again.verdict == j.verdict) return;
  const double peak = std::isfinite(pct_base) ? pct_base : pct_head;
  j.reason = std::string(bandwidth ? "a bandwidth-bound" : "a latency-bound") + " point (" +
             (std::isfinite(peak) ? number_text("%.1f", peak) + "% of peak" : std::string("% of peak unknown")) +
             ") measured on " + device_words(shift.head_device, shift.head_identity) + " against " +
             device_words(shift.base_device, shift.base_identity) + ", whose calibration shows " +
             figures_words(shift, bandwidth, host_share) + ": the point moved " + pct(j.ratio) + ", " + pct(j.ratio / explained) +
             " once the device's " + pct(explained) + " is taken out (" + verdict_name(again.verdict) + ")";
  j.verdict = Verdict::Device;
  j.regression = false;
}

}  // namespace opbench

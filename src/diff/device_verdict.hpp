// Rule 8 of the verdicts (diff/verdict.hpp): when base and head ran on different physical GPUs
// (their UUIDs differ), a change the two devices' calibrations explain is DEVICE, not a
// regression. Torch-free.
//
// The shift between two devices: each figure of the calibration (record/device_identity.hpp)
// as a time ratio head / base (a latency's own ratio; a bandwidth's or a clock's inverse), counted
// only when it is real: the two devices' passes differ by a Mann-Whitney U test (p < 0.01) and
// by kRealShift or more. What the shift explains depends on the point's kind:
//   bandwidth-bound (kBandwidthBound of the peak or more on either side): the DRAM copy's ratio;
//   latency-bound (below it): the ratios of the dependent load, the SM clock, the L2 read and
//   the 8-block read, and the launch's in proportion to the point's host share (the larger of
//   its two sides', 0 when unknown): a launch is a fixed cost a call pays per kernel, which
//   moves a call's time by its own ratio only where the launch paces the call, and the figure
//   follows the measuring process as much as the chip.
// The explained band is [min, max] of 1 and the ratios of its figures. A SLOWER or FASTER point
// whose head, scaled back by the band's value nearest its change, is judged anew (rules 1 to 7)
// at kDeviceRest of the threshold and is no longer SLOWER or FASTER is DEVICE, with the figures
// in its reason; one that stays so keeps its verdict (the change exceeds what the chip explains),
// so a real change of the threshold's size on top of a chip's is still caught.
//
// A run's own calibration passes are few when it is short (one every 2 s): the shift is taken
// from every pass the database holds of each physical GPU within kNearSeconds of the run that
// measured on it (calibrations_near), so that a short run's device is known as well as a long one's.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "diff/verdict.hpp"
#include "record/run.hpp"

namespace opbench {

constexpr double kBandwidthBound = 50;  // % of the run's measured peak bandwidth
constexpr double kRealShift = 0.005;    // a calibration figure must move by this much to count
constexpr double kShiftAlpha = 0.01;
constexpr double kDeviceRest = 0.5;     // the threshold the rest of a change is judged at

// One figure of the calibration compared between the two devices.
struct FigureShift {
  const CalibrationFigure* figure = nullptr;
  double base = 0, head = 0;  // the medians of the passes
  double time_ratio = 1;      // what the figure predicts of a call's time, head / base
  double p = 1;               // Mann-Whitney U over the two devices' passes
  bool real = false;
};

// Two devices as the points of a diff name them, and their shift.
struct DeviceShift {
  std::string base_device, head_device;
  DeviceIdentity base_identity, head_identity;
  size_t base_passes = 0, head_passes = 0;
  bool different = false;   // both identities known and their UUIDs differ
  bool calibrated = false;  // both devices carry calibration passes
  std::vector<FigureShift> figures;
  // The band of time ratios the shift explains for a point of each kind, a latency-bound point's
  // before its launch (explained_band adds that).
  double latency_lo = 1, latency_hi = 1, bandwidth_lo = 1, bandwidth_hi = 1;
  double launch = 1;  // the launch's time ratio (1 when it did not move)
};

// The calibration figures that explain a point of each kind, in words ("dependent load, L2
// read, ..., and the launch in proportion to the point's host share"; "DRAM copy").
std::string explaining_figures(bool bandwidth);

// The band of time ratios `s` explains for one point: its kind's, the launch's ratio scaled by
// `host_share` (clamped to [0, 1]; NaN: 0) for a latency-bound one.
struct Band {
  double lo = 1, hi = 1;
};
Band explained_band(const DeviceShift& s, bool bandwidth, double host_share);

constexpr double kNearSeconds = 3600;

// The shift between `base` and `head` (devices of the two runs).
DeviceShift device_shift(const RunDevice& base, const RunDevice& head);

// Calibration passes by GPU UUID for the diff of `base` and `head`: for each physical GPU either
// run measured on, the passes of every run in `runs` on that GPU that started within kNearSeconds
// of the run (base's GPUs near base, head's near head). A GPU no run calibrated is left out.
std::map<std::string, Calibration> calibrations_near(const std::vector<RunInfo>& runs, const RunInfo& base,
                                                     const RunInfo& head);

// The device of a run that measured point `device` ("" for the run's own: its first device, or
// one made of its environment).
RunDevice run_device_of(const RunInfo& run, const std::string& device);

// Rule 8 on one judged point: its kind from its % of peak (`pct_base`, `pct_head`, NaN when
// unknown: latency-bound), the band the shift explains for it, the point judged anew with its
// head scaled back (`paired_processes` as judge's); `j` becomes DEVICE with the reason when the change goes.
void apply_device_rule(const StoredPoint& base, const StoredPoint& head, double threshold, int paired_processes,
                       const DeviceShift& shift, double pct_base, double pct_head, Judgement& j);

}  // namespace opbench

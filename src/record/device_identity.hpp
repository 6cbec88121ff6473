// Which physical GPU measured, and how it behaved: its identity as NVML reports it (UUID, PCI
// bus, serial, VBIOS, power limit, application clocks, ECC) and the device calibration, a fixed
// micro-suite timed inside a run's own rounds (measure/calibrate.h). A run keeps one identity
// (its first device's, Environment::identity) and each of its devices keeps its own with its
// calibration (RunDevice); diff reads them to tell a change of chip from a change of code
// (diff/device_verdict.hpp). Plain data with its JSON codec, torch-free.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "record/calibration_sample.hpp"

namespace opbench {

struct DeviceIdentity {
  std::string uuid;        // "GPU-..." ("" unknown: the CPU, no NVML)
  std::string pci_bus_id;  // "00000000:3B:00.0"
  std::string serial;      // the board's serial, where NVML gives it
  std::string vbios;
  std::string ecc;               // "on", "off" ("" unknown)
  double power_limit_w = 0;      // the enforced power limit (0 unknown)
  double app_sm_mhz = 0, app_memory_mhz = 0;  // the application clocks in force (0 unknown)
  double default_app_sm_mhz = 0;              // the default application SM clock (0 unknown)
  double max_sm_mhz = 0;                      // the highest SM clock the board allows (0 unknown)
  bool known() const { return !uuid.empty() || !pci_bus_id.empty(); }
  bool operator==(const DeviceIdentity& o) const;
  bool operator!=(const DeviceIdentity& o) const { return !(*this == o); }
};

// A figure of the suite: its key, its words, its unit, and whether more is faster (bandwidths
// and clocks) or slower (latencies).
struct CalibrationFigure {
  const char* key;
  const char* name;
  const char* unit;
  bool higher_is_faster;
  double CalibrationSample::*value;
};
const std::vector<CalibrationFigure>& calibration_figures();

// A device's calibration over a run: every pass of the suite, in the order taken.
struct Calibration {
  std::vector<CalibrationSample> samples;
  bool known() const { return !samples.empty(); }
  // The median of one figure over the samples (NaN when none).
  double median(const CalibrationFigure& f) const;
  // The figure's values, one per sample.
  std::vector<double> values(const CalibrationFigure& f) const;
  bool operator==(const Calibration& o) const { return samples == o.samples; }
};

// The identity in a few words: "GPU-1a2b3c4d, PCI 00000000:3B:00.0, serial 1650..., VBIOS
// 96.00.., 700 W, application clocks 1980/2619 MHz, ECC on" ("" when unknown).
std::string identity_text(const DeviceIdentity& id);
// The calibration's medians in a few words: "launch 2.1 us, launch and wait 8.4 us, dependent
// load 612 ns, L2 9.8 TB/s, DRAM 3.01 TB/s, SM 1980 MHz (36 passes)" ("" when none).
std::string calibration_text(const Calibration& c);

// JSON: the identity an object of its fields (null when unknown); the calibration
// {"figures": [KEY...], "samples": [[V...]...]} (null when none). The readers throw
// std::invalid_argument naming the field for a value they cannot take.
nlohmann::ordered_json identity_json(const DeviceIdentity& id);
DeviceIdentity identity_from_json(const nlohmann::ordered_json& j);
nlohmann::ordered_json calibration_json(const Calibration& c);
Calibration calibration_from_json(const nlohmann::ordered_json& j);

}  // namespace opbench

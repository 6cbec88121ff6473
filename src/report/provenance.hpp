// How a run was measured, in words: its timing (flush, rounds, budgets, threads), the tuning
// variables set for its providers, the GPU's state (clocks, temperature, power, throttling).
// The report's run header and diff's warnings use them. Torch-free.
#pragma once
#include <string>
#include <vector>

#include "record/run_fields.hpp"
#include "store/store.hpp"

namespace opbench {

// "timing: L2 flush write, 4 to 16 rounds, stopping once the 95% interval of a median is under
// 0.5% (...), warm-up 25 ms and repeat 100 ms a point, 1 thread"
// (the phrases of the run fields that have one, record/run_fields.hpp, in their places);
// "" when it recorded none (an imported run).
std::string timing_line(const RunInfo& r);

// "speed points stopped: 380 at the noise target, 340 at the ceiling (their intervals up to 8.1%
// wide)": how the points' rounds ended (stop_rule.hpp); "" when none recorded it.
std::string stops_line(const std::vector<StoredPoint>& points);

// "time: 88.1 s wall, 1.17x the 75.3 s timed (...): timed calls 40.1 s, ..." (stages.hpp); ""
// when the run recorded no stages.
std::string time_line(const RunInfo& r);

// "tuning: OPBENCH_TUNING_1D=flat_units=4" (every variable set, ", "-separated); "" for none.
std::string tuning_text(const RunInfo& r);

// "SM 1980 MHz (default 1980), memory 2619 MHz, 41 C, 118 W" plus the active clock event
// reasons in brackets; "" when the state is unknown.
std::string state_text(const DeviceState& s);

// "GPU: <state at the start>; over the N table cells: SM lo-hi MHz, lo-hi C, lo-hi W; throttled
// for power or heat in K cells" from the run's and its points' states; "" when none was read.
std::string gpu_line(const RunInfo& r, const std::vector<StoredPoint>& points);

// "devices: cuda:0 (NVIDIA H100 80GB HBM3) 40 cells, 21.3 s busy, pinned to CPUs 0-15, 16
// threads, memory default (local: node 0); cuda:1 (...) 38 cells, ...": how many table cells
// each device measured, the seconds it was busy and where its process ran, for a run measured
// on several (the run's devices, then any other its points name), or on one whose placement
// was recorded ("device: ..."); "" otherwise.
std::string devices_line(const RunInfo& r, const std::vector<StoredPoint>& points);

// "identity: cuda:0 is GPU-1a2b... (PCI ..., serial ..., VBIOS ..., power limit 700 W, ...)\n
// calibration: cuda:0: launch 2.1 us, ..." a line each for the run's physical GPUs and their
// calibrations (record/device_identity.hpp); "" when none was recorded (the CPU, an import).
std::string identity_lines(const RunInfo& r);

// The points measured while the GPU throttled for power or heat.
std::vector<const StoredPoint*> throttled_points(const std::vector<StoredPoint>& points);

}  // namespace opbench

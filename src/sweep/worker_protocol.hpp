// The lines a sweep's parent and its workers exchange (`sweep --devices`, a sweep's round
// processes), one JSON object a line; points, results, environments and device states as the
// runs document writes them (record/point_json.hpp, record/run_json.hpp, record/state_json.hpp).
// A worker reads every config of its command (a suite's), in order; a request names its config
// by that index.
//
//   worker -> parent, first:  {"hello": {"protocol", "device", "configs": [{"hash", "unavailable"}...],
//                                        "environment", "placement": {"cpus", "memory", "threads"}}}
//                             or {"hello": {"device", "error", "input_error"}} (it cannot measure)
//   parent -> worker:         {"cell": [KEY...], "config": I}   a cell's points by Point::key(),
//                                 in column order, of config I
//                             {"measure": KEY, "config": I, "new_round": B, "warmup_ms", "rep_ms",
//                              "max_point_s", "estimate_ms"}
//                                 one round of one point of config I, with that round's timing
//                                 (and the point's estimate, 0 in its first round), after placing
//                                 memory anew when B (a round process: round_processes.hpp);
//                                 answered as a cell of that one point
//   worker -> parent:         {"points": [POINT...], "state": STATE, "estimates": [MS...],
//                              "stages": {STAGE: SECONDS...}, "calibration": CALIBRATION}
//                                 the cell measured, each point's estimate, where the worker's
//                                 time on it went, and the device calibration's passes taken
//                                 since its last answer (null: none; record/device_identity.hpp)
//                             {"hung": KEY, "error": WHY}   a call that never returned; it ends
//                             {"declined": true}   a signal came before the cell; it ends
//                             {"error": WHY}       a cell it cannot measure
// A worker built from another revision (`opbench ab`) speaks to a parent of this build only when
// their protocols (kWorkerProtocol, in the hello) are the same. Torch-free.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/placement.hpp"
#include "measure/executor.hpp"
#include "measure/stages.hpp"
#include "sweep/cell.hpp"
#include "sweep/measurer.hpp"

namespace opbench {

// The version of these lines: a hello without one is of a build from before `opbench ab`.
constexpr int kWorkerProtocol = 1;

// What a worker says of one config it read: its hash, and the providers of it that the
// sweep measures and that cannot run there (provider -> why).
struct ConfigHello {
  std::string hash;
  std::vector<std::pair<std::string, std::string>> unavailable;
};

struct WorkerHello {
  int protocol = kWorkerProtocol;  // 0: a hello that names none (a build from before it)
  std::string device;
  std::vector<ConfigHello> configs;  // in the order of its command line
  Environment env;
  Placement placement;       // where it runs (its CPUs, memory policy, LibTorch's threads)
  std::string error;         // why the worker cannot measure ("" when it can)
  bool input_error = false;  // the error is the user's input's (exit 2), not the device's (exit 3)
};

struct WorkerReply {
  enum Kind { cell, hung, declined, failure } kind = failure;
  std::vector<Result> results;  // cell: one per point of the cell, in order (with their estimates)
  DeviceState state;            // cell: the device right after it
  StageTimes stages;            // cell: where the worker's time on it went (measure/stages.hpp)
  std::vector<CalibrationSample> calibration;  // cell: the device calibration's passes since the last answer
  std::string key;              // hung: the point whose call never returned
  std::string error;            // hung, failure: why
};

std::string hello_line(const WorkerHello& h);
std::string cell_line(const CellPoints& points, size_t config = 0);
// One round of one point: its config and key, whether memory is placed anew first, the round's
// timing.
struct MeasureRequest {
  std::string key;
  bool new_round = false;
  double warmup_ms = 0, rep_ms = 0, max_point_s = 0;
  double estimate_ms = 0;  // the point's, from its first round (Timing::estimate_ms); 0: none yet
  bool check = true;       // Timing::check (absent: true)
  size_t config = 0;
};
std::string measure_line(const MeasureRequest& m);
std::string cell_reply_line(const CellPoints& points, const CellResult& got, const StageTimes& stages = {},
                            const std::vector<CalibrationSample>& calibration = {});
std::string hung_line(const std::string& key, const std::string& why);
std::string declined_line();
std::string error_line(const std::string& why);

// The readers throw InputError naming `who` (the worker, or the parent) for a line they cannot take.
WorkerHello parse_hello(const std::string& line, const std::string& who);
std::vector<std::string> parse_cell(const std::string& line, const std::string& who);
// What the parent asks of a worker: a cell's keys and config, or one measure (read from the
// line once).
struct ParentRequest {
  std::vector<std::string> cell;
  size_t config = 0;
  std::optional<MeasureRequest> measure;
};
ParentRequest parse_request(const std::string& line, const std::string& who);
WorkerReply parse_reply(const std::string& line, const std::string& who);

// The parent's side, where a line the worker `who` wrote that cannot be read is that worker's
// failure (RuntimeFailure), not the user's input. accept_hello also refuses a hello that
// reports an error (InputError naming `name` when the worker found the user's input at fault,
// else RuntimeFailure), another protocol (RuntimeFailure) or configs other than those of
// `config_hashes`.
WorkerHello accept_hello(const std::string& line, const std::string& who, const std::string& name,
                         const std::vector<std::string>& config_hashes);
WorkerReply read_reply(const std::string& line, const std::string& who);

}  // namespace opbench

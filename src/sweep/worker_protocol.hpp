// The lines a sweep's parent and its workers exchange (`sweep --devices`, a sweep's round
// processes, `opbench ab`), one JSON object a line; points, results, environments and device
// states as the runs document writes them (record/point_json.hpp, record/run_json.hpp,
// record/state_json.hpp).
//
// Protocol 2 (`opbench sweep - --worker --device D`): the worker reads no config (`-`: they
// come on its input). The parent names the configs it measures first, and then hands over the
// points themselves:
//
//   parent -> worker, first:  {"configs": [{"name", "op", "timing": TIMING, "providers": [P...]}...]}
//                                 each config's path (for messages), op, timing block as its
//                                 file writes it (null: none; the worker reads it as a config's
//                                 and decides what it leaves to the device, as a sweep's own
//                                 process does) and the providers measured
//   worker -> parent:         {"hello": {"protocol": 2, "device", "configs": [{"unavailable"}...],
//                                        "environment", "placement": {"cpus", "memory", "threads"}}}
//                                 the providers of each config that cannot run there (provider -> why)
//                             or {"hello": {"protocol", "device", "error", "input_error"}} (it cannot measure)
//   parent -> worker:         {"cell": [POINT...], "config": I}   a cell's points, in column order,
//                                 measured with config I's timing
//                             {"measure": POINT, "config": I, "new_round": B, "warmup_ms", "rep_ms",
//                              "max_point_s", "estimate_ms", "check"}
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
//
// Protocol 1 (`opbench sweep CONFIG... --worker --device D --max-points N [--providers LIST]`,
// what builds before protocol 2 speak): the worker reads every config of its command line, in
// order, and expands it; nothing comes before its hello, whose configs also carry each file's
// "hash"; a request names its points by Point::key() ("cell": [KEY...], "measure": KEY) of
// config I of its command line. The replies are those of protocol 2. A build of protocol 2
// still serves protocol 1 when its command line names configs.
//
// A worker built from another revision (`opbench ab`) is asked first which protocol it speaks
// (`BINARY sweep - --print-worker-protocol` prints it; a build before protocol 2 refuses the option:
// protocol 1), and is started and spoken to in that one; its hello must name it. Torch-free.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/config.hpp"
#include "core/placement.hpp"
#include "measure/executor.hpp"
#include "measure/stages.hpp"
#include "sweep/cell.hpp"
#include "sweep/measurer.hpp"

namespace opbench {

// The version of these lines this build speaks: a hello without one is of a build from before
// `opbench ab`.
constexpr int kWorkerProtocol = 2;
// The oldest a parent of this build still speaks to (its workers read the configs).
constexpr int kConfigReadingProtocol = 1;

// What a worker says of one config: its hash (the file it read; "" when it read none),
// and the providers of it that the sweep measures and that cannot run there (provider -> why).
struct ConfigHello {
  std::string hash;
  std::vector<std::pair<std::string, std::string>> unavailable;
};

// What a parent tells a worker of protocol 2 of one config (its first line).
struct WorkerConfigLine {
  std::string name;                    // the config's path, for messages
  std::string op;
  std::string timing;                  // its file's timing block (config/config.hpp timing_block)
  std::vector<std::string> providers;  // those its points measure
};

// How a parent speaks to one worker: its protocol, and what that protocol needs of the
// configs: protocol 2, the configs told in its first line; protocol 1, the hashes of the
// configs its command line names (which its hello must report), in order.
struct WorkerSetup {
  int protocol = kWorkerProtocol;
  std::vector<WorkerConfigLine> configs;
  std::vector<std::string> config_hashes;
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

std::string configs_line(const std::vector<WorkerConfigLine>& configs);
std::string hello_line(const WorkerHello& h);
// A cell of config `config`: its points (protocol 2) or their keys (protocol 1).
std::string cell_line(const CellPoints& points, size_t config = 0, int protocol = kWorkerProtocol);
// One round of one point: its config and the point (protocol 2; protocol 1 its key alone),
// whether memory is placed anew first, the round's timing.
struct MeasureRequest {
  std::string key;
  bool new_round = false;
  double warmup_ms = 0, rep_ms = 0, max_point_s = 0;
  double estimate_ms = 0;  // the point's, from its first round (Timing::estimate_ms); 0: none yet
  bool check = true;       // Timing::check (absent: true)
  size_t config = 0;
  std::optional<Point> point;  // protocol 2: the point itself
};
std::string measure_line(const MeasureRequest& m, int protocol = kWorkerProtocol);
std::string cell_reply_line(const CellPoints& points, const CellResult& got, const StageTimes& stages = {},
                            const std::vector<CalibrationSample>& calibration = {});
std::string hung_line(const std::string& key, const std::string& why);
std::string declined_line();
std::string error_line(const std::string& why);

// The readers throw InputError naming `who` (the worker, or the parent) for a line they cannot take.
std::vector<WorkerConfigLine> parse_configs(const std::string& line, const std::string& who);
WorkerHello parse_hello(const std::string& line, const std::string& who);
// What the parent asks of a worker: a cell's points (protocol 2) or keys (protocol 1) and its
// config, or one measure (read from the line once).
struct ParentRequest {
  std::vector<std::string> cell;
  std::vector<Point> points;
  size_t config = 0;
  std::optional<MeasureRequest> measure;
};
ParentRequest parse_request(const std::string& line, const std::string& who);
WorkerReply parse_reply(const std::string& line, const std::string& who);

// The parent's side, where a line the worker `who` wrote that cannot be read is that worker's
// failure (RuntimeFailure), not the user's input. accept_hello also refuses a hello that
// reports an error (InputError naming `name` when the worker found the user's input at fault,
// else RuntimeFailure), another protocol than `setup`'s (RuntimeFailure), or configs other
// than those of `setup` (protocol 1: their hashes; protocol 2: their number).
WorkerHello accept_hello(const std::string& line, const std::string& who, const std::string& name,
                         const WorkerSetup& setup);
WorkerReply read_reply(const std::string& line, const std::string& who);

}  // namespace opbench

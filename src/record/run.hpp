// A run as the store keeps it (its environment, how it was timed, its devices), its points and
// its compiled packages. Plain data, torch-free: the field tables (run_fields.hpp) say how each
// of a run's fields is stored, exported, shown and compared.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "record/device_state.hpp"
#include "record/environment.hpp"
#include "record/point.hpp"
#include "record/result.hpp"
#include "record/stage_times.hpp"

namespace opbench {

// A device that measured part of a run made on several (sweep --devices, or shards joined):
// its name as its points record it, the GPU (or CPU) model and the peak bandwidth measured on it.
struct RunDevice {
  std::string device, gpu;
  double peak_gbps = 0;
  // Its share of the run (schema 11; 0 unknown): the table cells and points it measured and the
  // seconds it spent measuring them (from handing a cell out to its answer).
  int64_t cells = 0, points = 0;
  double busy_s = 0;
  // Where its process ran (schema 11; "" unknown): the CPUs it could run on (the kernel's list
  // format), whether opbench pinned it there (the CPUs local to its GPU), LibTorch's intra-op
  // threads (0 unknown) and its memory policy (core/placement.hpp).
  std::string cpus;
  bool pinned = false;
  int64_t threads = 0;
  std::string memory;
  // Which physical GPU it was, and its calibration over the run (schema 14; unknown: empty).
  DeviceIdentity identity;
  Calibration calibration;
  bool operator==(const RunDevice& o) const {
    return device == o.device && gpu == o.gpu && peak_gbps == o.peak_gbps && cells == o.cells && points == o.points &&
           busy_s == o.busy_s && cpus == o.cpus && pinned == o.pinned && threads == o.threads && memory == o.memory &&
           identity == o.identity && calibration == o.calibration;
  }
};
// A device as a run first records it: its name, model and peak (its share and placement later).
inline RunDevice run_device(const std::string& device, const std::string& gpu, double peak_gbps,
                            const DeviceIdentity& identity = {}) {
  RunDevice d;
  d.device = device;
  d.gpu = gpu;
  d.peak_gbps = peak_gbps;
  d.identity = identity;
  return d;
}

struct RunInfo {
  int64_t id = 0;
  std::string label, source = "sweep";  // sweep | import
  Environment env;
  std::string host, git_commit;
  std::string config_path, config_text, config_hash;
  std::string op, stat = "median";
  // How the run was timed (set_timing; older runs backfilled from their stored config where
  // it says; unknown for imported runs): the L2 flush ("" unknown), rounds (0 unknown),
  // LibTorch's thread count (kThreadsUnknown, 0: LibTorch's own, N: pinned to N), the
  // warm-up and repeat budgets of a point in ms (0 unknown).
  std::string flush_l2;
  int64_t rounds = 0;
  static constexpr int64_t kThreadsUnknown = -1;
  int64_t threads = kThreadsUnknown;
  double warmup_ms = 0, rep_ms = 0;
  // The table cells whose rounds were interleaved, and the processes the rounds were spread
  // over (schema 9; 0 unknown; older sweeps: 1 and 1).
  int64_t interleave = 0, processes = 0;
  // When its speed points stopped (schema 10): "noise" (once the 95% interval of the median was
  // under noise_pct percent, after min_rounds rounds and min_samples samples, rounds the
  // most), "budget" (every round: every sweep before schema 10), "" unknown (imports).
  std::string stop_rule;
  double noise_pct = 0;
  int64_t min_rounds = 0, min_samples = 0;
  // Where the run's wall time went, by stage (schema 10; empty: not recorded). A resumed run
  // adds each process's time.
  StageTimes stages;
  std::string started_at, finished_at;
  std::string status = "running";  // running | done | interrupted
  // column label -> provider, in column order (the report's Notation list)
  std::vector<std::pair<std::string, std::string>> notation;
  int64_t points = 0;  // filled by queries
  // Identifies the run across databases (merge skips a run whose uuid is already there).
  // begin_run generates one when empty; runs older than schema 3 get one derived from their
  // content when the database is migrated (so two copies of one old database agree).
  std::string uuid;
  // The devices of a run measured on several (schema 8; empty: the one of env.device).
  std::vector<RunDevice> devices;
  // Filled by queries from the run's options: "i/N" for a shard of a sweep (sweep --shard), and
  // for a run joined from shards (merge --join-shards) their count; "" otherwise.
  std::string shard, shards;
  // Filled by queries from the run's options: a side of a paired comparison (`opbench ab`):
  // "base" or "head", and the uuid of the run it is paired with; "" otherwise.
  std::string side, pair;
};

struct StoredPoint {
  int64_t id = 0, run_id = 0, seq = 0;
  std::string section;  // the report's heading for the point's table
  Point point;
  std::string stat;     // which statistic `value` is
  double value = 0;     // the shown statistic (-1 for an error)
  Result result;
  std::string created_at;
  DeviceState state;    // the GPU's state right after its table cell was measured
  std::string device;   // the device that measured it ("cuda:1", "cpu"; "" unknown: an import)
};

// A compiled baseline's package, built (or found cached) before a run measured its table.
struct CompileRecord {
  int64_t run_id = 0;
  std::string title, provider, key;
  double seconds = 0;
  bool cached = false;
  std::string error;
};

}  // namespace opbench

// A sweep config (YAML or JSON, one schema): what to run and how to time it. Torch-free.
#pragma once
#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/value.hpp"

namespace opbench {

// How the caches are emptied before each timed call: none; write (a memset of a buffer larger
// than the cache, as triton.testing.do_bench: the call pays the write-back of the dirty lines
// it evicts); read (a read of that buffer: the cache is cold and clean); device: what the
// device does when the config does not say (resolve_device_defaults: write on CUDA, none on
// the CPU), never seen by a measure.
enum class L2Flush { none, write, read, device };

// Limits of a config (docs/guarantees.md), far beyond any real one; they bound what a hostile
// file can cost. The tree: mappings and lists nested at most kMaxConfigDepth deep, at most
// kMaxConfigValues values with YAML aliases expanded. Timing: each of warmup_ms and rep_ms
// finite, above 0 and at most these (a point's measuring time, not counting its calls' setup).
constexpr int kMaxConfigDepth = 64;
constexpr size_t kMaxConfigValues = 1000000;
constexpr double kMaxWarmupMs = 60000;
constexpr double kMaxRepMs = 60000;

// When a speed point has been measured enough (measure/stop_rule.hpp): once its median is
// known precisely enough (noise), or after every round of the budget, as do_bench (budget).
enum class StopRule { noise, budget };

struct Timing {
  double warmup_ms = 25;
  double rep_ms = 100;
  std::string stat = "median";  // median | mean | min | max | p20 | p80
  L2Flush flush_l2 = L2Flush::device;
  // Speed points are measured in rounds, the providers of a table cell one after another in
  // each round, and each round on memory placed anew (flush buffer, inputs): a short call's
  // time depends on where its data and the flush's dirty lines lie (docs/measurement.md). Each
  // round takes warmup_ms / rounds and rep_ms / rounds; the samples are pooled, and each
  // round's count is kept (Result::rounds): the verdicts compare rounds, not samples. Under
  // stop: budget a point takes all `rounds` (default kBudgetRounds); under stop: noise at most
  // that many (default kNoiseRounds), at least min_rounds, ending once the 95% interval of its
  // median is narrower than noise_pct percent of it (with min_samples samples or more).
  static constexpr int kNoiseRounds = 16, kBudgetRounds = 8;
  StopRule stop_rule = StopRule::noise;
  int rounds = kNoiseRounds;
  double noise_pct = 0.5;
  // Four rounds a side let the verdicts' Mann-Whitney test on round medians decide (diff);
  // five samples let its sample tests run.
  int min_rounds = 4;
  int64_t min_samples = 5;
  // (Not a config key.) The point's estimate of one sample, in ms, from its first round: a
  // later round takes its counts from it instead of a first call and an estimate of its own.
  // 0: measure it.
  double estimate_ms = 0;
  // (Not a config key.) Whether this round checks its output against the op's truth: a cell's
  // first round does, once per provider; the later ones need not, whichever process measures
  // them (the same code on the same seeded inputs gives the same output).
  bool check = true;
  // How many consecutive table cells have their rounds interleaved: round 1 of each of them in
  // turn, then round 2, and so on, so that a burst of other work on the machine falls into one
  // round of several cells rather than every round of one (docs/measurement.md, interleaving).
  // The cells of such a block are stored when its last round ends. kDeviceDefault: 1 on CUDA
  // (each cell whole, as before), kCpuInterleave on the CPU.
  static constexpr int kDeviceDefault = -1;  // (interleave, processes, threads) the device decides
  static constexpr int kCpuInterleave = 64;
  int interleave = kDeviceDefault;
  // Over how many processes the rounds of a cell are spread: round r in process r mod N, this
  // one and N - 1 workers on the same device (sweep/round_processes.hpp). kDeviceDefault: 1 on
  // CUDA, kCpuProcesses on the CPU.
  static constexpr int kCpuProcesses = 4;
  int processes = kDeviceDefault;
  // LibTorch's intra- and inter-op threads (and the compiled packages' OpenMP) while timing:
  // kDeviceDefault leaves the choice to the device (1 on the CPU: a multi-threaded op on a
  // shared machine times the other tenants; LibTorch's own on CUDA), 0 is LibTorch's own
  // (every core), N pins N.
  int threads = kDeviceDefault;
  // The wall time one point may take, all its rounds together (a CPU call can take far longer
  // than rep_ms, and a call may never finish): past it the point is stored as failed and the
  // sweep goes on. A measure receives what is left of it.
  double max_point_s = 120;
};

struct Config {
  std::string path;  // where it was read from (for messages)
  std::string text;  // the file's text, stored with the run
  std::string hash;  // hex digest of text

  std::string op;
  std::string x_name;              // the table's index axis (n, m ...)
  std::vector<int64_t> x_values;
  // params: axis -> values (one value = fixed, several = swept), in file order.
  std::vector<std::pair<std::string, std::vector<Value>>> params;
  // variants: rows of axes that vary together, crossed with params. A row may also give its
  // own x values (the x axis name with a list): e.g. {md: 2, n: [16, 32, 64, 128]}.
  std::vector<std::vector<std::pair<std::string, Value>>> variants;
  std::vector<std::vector<int64_t>> variant_x;  // per variant row; empty: the config's x
  // provider name -> column label, in column order.
  std::vector<std::pair<std::string, std::string>> providers;
  std::string title;  // template; empty = the op's default
  Timing timing;
};

// The configs a command names (`opbench sweep A.yaml B.yaml`): each argument a config file, or
// a suite file standing for the configs it lists. A suite file is YAML or JSON (read as a
// config is) holding one key, `configs`: a non-empty list of config files, each relative to
// the suite's folder unless absolute. InputError naming the file and field for a bad list, a
// suite listed in a suite, or a config named twice (one run per config). Configs are not read
// here (load_config does).
std::vector<std::string> command_configs(const std::vector<std::string>& args);

// Reads and validates a config file; throws InputError naming the file and field. Configs are
// UTF-8 without control characters; a key given twice, an alias inside what it names, and a
// tree beyond the limits above are errors.
Config load_config(const std::string& path);
// Parses config text; `path` decides the syntax (.json or .yaml/.yml) and names errors.
Config parse_config(const std::string& text, const std::string& path);

// The timing block of a stored config's text, read leniently (nothing but `timing` is looked
// at, so the text of a config that no longer validates still gives its timing): the Timing
// and the keys the block spells out. nullopt when the text or its timing block does not parse.
struct StoredTiming {
  Timing timing;
  std::set<std::string> given;
};
std::optional<StoredTiming> stored_timing(const std::string& text, const std::string& path);

// The `timing` block of config text as the file writes it, as JSON text ("" when the config has
// none), to be read elsewhere by timing_from_block; throws InputError when the text does not parse.
std::string timing_block(const std::string& text, const std::string& path);
// A timing block as timing_block gives it, checked and read as a config's own ("": the
// defaults); errors name `path`.
Timing timing_from_block(const std::string& block, const std::string& path);

// The stats a table can show.
const std::vector<std::string>& stat_names();
// A flush's name in configs and messages: "none", "write" or "read" ("device" unresolved).
const char* l2_flush_name(L2Flush f);
// A stop rule's name in configs and the store: "noise" or "budget".
const char* stop_rule_name(StopRule r);

// Decides what the config left to the device (`device`: "cpu", "cuda", "cuda:N"): the flush
// (write on CUDA, as triton.testing.do_bench; none on the CPU, as torch.utils.benchmark and
// google/benchmark time), the interleaving and the round processes (1 and 1 on CUDA,
// Timing::kCpuInterleave and Timing::kCpuProcesses on the CPU) and LibTorch's threads (its
// own count on CUDA, 1 on the CPU).
// On a shared CPU a flushed call's time is set by the other tenants' memory traffic and moved
// by up to 1.8x between back-to-back sweeps (docs/findings/2026-11-26-cpu-timing.md).
void resolve_device_defaults(Timing& timing, const std::string& device);

}  // namespace opbench

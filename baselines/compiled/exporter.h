// The exporter process: scripts/export_aoti.py run by the python whose torch matches LibTorch,
// one process per package, given a request (JSON) the C++ side writes from the op's OpSpec.
// Also what that python can do here (probed once per process). Internal to baselines/compiled.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "baselines/compiled/compiled.h"
#include "baselines/compiled/package_name.h"

namespace opbench::compiled {

// What a python can do, from `python -c 'import torch ...'` (cached per python).
struct Probe {
  std::string error;                   // "" when python imports torch
  std::string torch_version;           // e.g. 2.11.0+cu130
  std::map<int, std::string> cuda_cc;  // device index -> "9.0"
  std::string cuda_error;              // why CUDA could not be queried, if it failed
};
const Probe& probe(const std::string& python);

// "cpu" | "cuda" | "cuda:N" -> (type, index); throws std::runtime_error for anything else.
std::pair<std::string, int> parse_device(const std::string& device);
// "cuda" -> "cuda:0"; "cpu" and "cuda:N" unchanged (throws for anything else).
std::string normalize_device(const std::string& device);
// The device part of a package key: "cpu <model>" or "cuda sm_90".
std::string device_signature(const std::string& device);
// A hash of the exporter and of the Python op definitions (read once per process).
std::string sources_hash();

// The eager form a compiled provider NAME_compile exports: NAME (torch_compile -> torch,
// torch_naive_compile -> torch_naive); "" for a provider name of another form.
std::string eager_variant(const std::string& provider);

// One export: the package at `output` serving x in [lo, hi] (lo == hi: static), over the
// tables' x values `xs`, and each shared axis over its values in `shared` (one value: static
// in it); `static_output` ("" for none) the fallback path with "{x}".
struct ExportJob {
  int64_t lo = 0, hi = 0;
  std::vector<int64_t> xs;
  std::map<std::string, std::vector<int64_t>> shared;
  std::string output, static_output;
};

// Every combination of the shared axes' values (one empty point when there are none).
std::vector<SharedPoint> combinations(const std::map<std::string, std::vector<int64_t>>& shared);

// The request document for scripts/export_aoti.py: the op's facts from its OpSpec (its
// function's variant, modes, every argument's dtype, fill and shape at each x and shared
// axes' combination, which dimensions change), the point's other axes and the job's paths.
std::string request_json(const CompileRequest& r, const std::string& key, const ExportJob& job);

// Starts the exporter on the request file, its output into `log_path`, in a process group of
// its own. pid -1 and `error` when it cannot start.
struct Started {
  pid_t pid = -1;
  std::string error;
};
Started start_export(const std::string& request_path, const std::string& log_path, int parallel_jobs);

// Why an ended exporter failed ("" when it succeeded): the "opbench-export: error:" line of
// its log, else the last line that is not a warning, else how it ended.
std::string export_error(int wait_status, const std::string& log_path);

// Where an export's time went (<package>.stages.json, written by the exporter beside the
// package), in seconds; several exports of one table add up.
struct ExportStages {
  double isa_s = 0, export_s = 0, inductor_s = 0, cpp_s = 0, triton_s = 0, check_s = 0;
  bool known = false;
  void add(const ExportStages& o);
  // "start 4.6 s, ISA checks 0.0 s, export 3.1 s, AOTInductor 45.2 s (C++ compile and link 20.1 s,
  // Triton compile and autotune 15.3 s, lowering, code generation and packaging 9.8 s), check
  // 1.0 s", start being what `wall_s` (the exports' wall time) leaves: the exporter's start, its
  // torch import; the ISA checks Inductor's vector ISA checks the exporter shares (0: answered
  // from their folder, or a package of an exporter that did not time them); "" when unknown.
  std::string words(double wall_s) const;
};
// The stages of the package at `package_path` (known = false when its file is missing or bad).
ExportStages read_stages(const std::string& package_path);

// Seconds an exporter may run before it is killed: $OPBENCH_EXPORT_TIMEOUT (0: no limit;
// default 1800).
double export_timeout();

}  // namespace opbench::compiled

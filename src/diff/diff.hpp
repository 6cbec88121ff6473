// opbench diff: two runs point by point, with a noise-aware verdict each (verdict.hpp), a
// summary per provider, and markdown / JSON renderings. Torch-free.
//
// Matching: a base point and a head point match when title and x are equal and the providers
// are equal, or, under a mapping "A=B" (--map), when the base point's label or provider is A
// and the head point's provider or label is B (a published "tr" column against our "cuda":
// --map tr=cuda). Each head point matches at most one base point; the rest are unmatched.
//
// opbench versus (versus_run): one run's provider against the best of other providers of the
// same run, point by point, through the same matching and verdicts (see versus_run below).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "diff/device_verdict.hpp"
#include "diff/provider_verdict.hpp"
#include "diff/threshold.hpp"
#include "diff/verdict.hpp"
#include "report/report.hpp"

namespace opbench {

struct DiffOptions {
  std::string metric;       // "" (every point), "speed" or "memory"
  double threshold = kDefaultThreshold;  // the smallest change that matters, as a fraction
  std::vector<std::pair<std::string, std::string>> map;  // base label/provider -> head provider/label
  // Set by versus_run: "cuda against the faster of torch, torch_compile". The renderings then
  // describe one run (base and head are the same run) and count SLOWER points as "slower".
  std::string versus;
  // Rule 8's passes by GPU UUID (calibrations_near), in place of each run's own when given.
  std::map<std::string, Calibration> calibrations;
  // --normalize peak: bandwidth-bound speed points judged on their use of each run's measured
  // peak, the others apart (normalize.hpp).
  bool normalize_peak = false;
};

// "tr=cuda,toc=torch_compile" -> pairs; throws InputError("--map", ...) when malformed.
std::vector<std::pair<std::string, std::string>> parse_label_map(const std::string& text);

struct DiffRow {
  std::string title, section, x_name, metric, unit;
  int64_t x = 0;
  std::string base_provider, base_label, head_provider, head_label;
  double base = 0, head = 0;  // the shown values (-1: error)
  std::string base_error, head_error;
  Judgement j;
  bool base_throttled = false, head_throttled = false;  // measured while the GPU throttled (power, heat)
  // % of the run's measured peak bandwidth (speed points, both runs with a peak; else NaN)
  double pct_base = 0, pct_head = 0, pct_ratio = 0;
  // --normalize peak: a speed point not judged on its use of the peak (latency-bound or
  // host-paced), judged on its time and reported apart.
  bool apart = false;
  std::string provider() const;  // "torch", or "tr -> cuda" where the two sides differ
};

struct Unmatched {
  std::string title;
  int64_t x = 0;
  std::string provider, label;
};

struct ProviderSummary {
  std::string provider;
  size_t points = 0;
  double geomean = 0;      // of head/base over points with a ratio (NaN when none)
  double geomean_pct = 0;  // of the %-of-peak ratios (NaN when none)
  std::map<Verdict, size_t> counts;
  size_t regressions = 0;
  double worst = 0;  // the largest ratio among its regressions (NaN when none)
  WholeVerdict whole;  // the provider judged as a whole against the control (provider_verdict.hpp)
};

struct DiffResult {
  RunInfo base, head;
  DiffOptions opt;
  bool peaks = false;  // both runs carry a peak bandwidth
  // The runs are the two sides of one paired comparison (opbench ab): each point judged round
  // against round (verdict.hpp, rule 7).
  bool paired = false;
  // The worker processes each side spread its rounds over (RunInfo::processes; 1 unless paired).
  int processes = 1;
  // What judge is told of the pairing (verdict.hpp): 0 unpaired, else the processes.
  int paired_processes() const { return paired ? processes : 0; }
  // The pairs of devices the matched points were measured on, where they are different
  // physical GPUs (rule 8: device_verdict.hpp), in the order first met.
  std::vector<DeviceShift> shifts;
  std::vector<DiffRow> rows;  // in base order
  std::vector<Unmatched> only_base, only_head;
  std::vector<ProviderSummary> summary;  // worst first
  size_t regressions = 0;  // SLOWER points and newly failing ones, and providers SLOWER as a whole
  // Why the two runs' numbers may not compare: timed with different L2 flushes, rounds,
  // budgets, thread counts or tuning variables, showing different statistics (what both runs
  // recorded), or points measured while the GPU throttled for power or heat.
  std::vector<std::string> warnings;
  // rows ordered for reading: regressions (worst ratio first), then ERROR, UNSURE, FASTER,
  // SAME, FIXED.
  std::vector<const DiffRow*> by_severity() const;
  size_t count(Verdict v) const;  // rows with this verdict
  // Per provider, up to `n` of the points judged on the peak whose use of the head's peak fell
  // most (the largest normalised head/base first), in the summary's order.
  std::vector<std::pair<std::string, std::vector<const DiffRow*>>> scaling_worst(size_t n) const;
};

// Throws InputError for a metric a run does not hold, a matched pair whose metrics (or units)
// differ, and when nothing matches.
DiffResult diff_runs(const RunRecord& base, const RunRecord& head, const DiffOptions& opt);

// opbench versus: within one run, `provider` against `against`. For every (title, x) with a
// point of the provider and at least one of the against providers, the base side is the
// against point with the lowest shown value (failed points, value -1 or an error, are skipped
// unless every against point failed) and the head side is the provider's point; each pair is
// judged as diff_runs judges it. A (title, x) with only one side is counted as unmatched:
// only_head (no against point), only_base (no provider point). Providers are named by
// provider or column label. Throws InputError naming --provider / --against / --metric when
// the run holds none of the provider's points, none of any against provider's, none of the
// metric, or no (title, x) where both sides were measured.
struct VersusOptions {
  std::string provider;
  std::vector<std::string> against;
  std::string metric = "speed";  // "speed", "memory" or "" (both)
  double threshold = 0;          // as a fraction: by default any confirmed slowdown counts
  bool normalize_peak = false;   // as DiffOptions's
};
DiffResult versus_run(const RunRecord& run, const VersusOptions& opt);

std::string diff_markdown(const DiffResult& d);
std::string diff_json(const DiffResult& d);

// Short description of a run for headers: "run 3 (label), H100, commit 0123abcd, 2025-01-02".
std::string run_brief(const RunInfo& r);

}  // namespace opbench

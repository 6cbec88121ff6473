// opbench diff: two runs point by point, with a noise-aware verdict each (verdict.hpp), a
// summary per provider, and markdown / JSON renderings. Torch-free.
//
// Matching: a base point and a head point match when title and x are equal and the providers
// are equal, or, under a mapping "A=B" (--map), when the base point's label or provider is A
// and the head point's provider or label is B (a published "tr" column against our "cuda":
// --map tr=cuda). Each head point matches at most one base point; the rest are unmatched.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "diff/verdict.hpp"
#include "report/report.hpp"

namespace opbench {

struct DiffOptions {
  std::string metric;       // "" (every point), "speed" or "memory"
  double threshold = 0.05;  // the smallest change that matters, as a fraction
  std::vector<std::pair<std::string, std::string>> map;  // base label/provider -> head provider/label
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
  // % of the run's measured peak bandwidth (speed points, both runs with a peak; else NaN)
  double pct_base = 0, pct_head = 0, pct_ratio = 0;
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
};

struct DiffResult {
  RunInfo base, head;
  DiffOptions opt;
  bool peaks = false;  // both runs carry a peak bandwidth
  std::vector<DiffRow> rows;  // in base order
  std::vector<Unmatched> only_base, only_head;
  std::vector<ProviderSummary> summary;  // worst first
  size_t regressions = 0;
  // rows ordered for reading: regressions (worst ratio first), then ERROR, UNSURE, FASTER,
  // SAME, FIXED.
  std::vector<const DiffRow*> by_severity() const;
};

// Throws InputError for a metric a run does not hold, a matched pair whose metrics (or units)
// differ, and when nothing matches.
DiffResult diff_runs(const ReportRun& base, const ReportRun& head, const DiffOptions& opt);

std::string diff_markdown(const DiffResult& d);
std::string diff_json(const DiffResult& d);

// Short description of a run for headers: "run 3 (label), H100, commit 0123abcd, 2025-01-02".
std::string run_brief(const RunInfo& r);

}  // namespace opbench

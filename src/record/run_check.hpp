// The one check of a run and its points before the store takes them, whoever made them: a
// sweep (its run at the start, each point as it is stored), `import` of a JSON export or of a
// markdown document, and `merge` (each source run). A run or point that passes prints back
// into a report and an export that read back as they were; one that does not is refused with
// the field and the reason. Torch-free.
//
// What is checked:
//   - names printed back into documents (labels, titles, sections, providers, GPU names,
//     axis names and words): core/text.hpp's name_problem (column labels: label_problem),
//     the words a run and a point are made of (status, source, stat, unit) from their lists;
//   - ops: a known op or none (a markdown table whose title is no op's); a swept point's
//     provider one of its op's providers;
//   - numbers: counts, samples, times, sizes and bandwidths never negative (a failed point's
//     value is -1; NaN where nothing is known), a point's rounds adding up to its samples,
//     its sample count matching them;
//   - a point's fields one by one, as their rows of record/point_fields.hpp say (names,
//     labels, ops, one-line text, counts and measures never negative); the rules that read
//     several fields at once and the words of a stat or unit are this file's own;
//   - a point once per run: two points with one title, x value and provider would be one
//     row of the store, the second replacing the first.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "record/run_record.hpp"

namespace opbench {

// A field that cannot be stored ("stats.count", "samples[3]", "environment.gpu") and why; no
// problem when `why` is empty.
struct Problem {
  std::string field, why;
  explicit operator bool() const { return !why.empty(); }
};

// The first problem of a run's own fields (not its points).
Problem run_problem(const RunInfo& run);

// The first problem of a point of a run made by `source` ("sweep" or "import").
Problem point_problem(const StoredPoint& p, const std::string& source);

// The places of the first two points that are one point (title, x value and provider), if any.
std::optional<std::pair<size_t, size_t>> repeated_point(const std::vector<StoredPoint>& points);

// A point as messages name it: "'TITLE' n=256 provider 'torch'".
std::string point_name(const StoredPoint& p);

// Checks a run, each of its points and that none is given twice. Throws InputError(where,
// prefix + "." + field, why) for the first problem: `prefix` names the run in the input
// ("runs[2]", "run 7"); a point is named "points[i]" within it.
void check_record(const RunRecord& rec, const std::string& where, const std::string& prefix);

// Throws InputError(where, "runs[j].uuid", ...) when two runs of one input share a uuid (the
// second would be taken for the first, already stored).
void check_distinct_uuids(const std::vector<RunRecord>& runs, const std::string& where);

}  // namespace opbench

// opbench history TITLE: one point (or every x / provider of a table) across the runs of a
// database, in time order, one series per (x, provider, GPU) so that two GPUs never mix, and
// the level shifts of each series found by a penalised piecewise-constant fit over the whole
// series (changepoints.hpp): a lasting change is one step, one outlier none. A step up is more
// time (or memory): worse. Torch-free.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "diff/changepoints.hpp"
#include "store/store.hpp"

namespace opbench {

struct HistoryEntry {
  RunInfo run;
  StoredPoint point;
  double level = 0;  // the fitted level of its segment (NaN for a failed point)
  // "up" / "down" on the first entry of a new level, "error" when it fails where the entry
  // before worked, "fixed" when it works where the entry before failed, else "".
  std::string step;
  double change = 0;  // at a step: the new level over the previous one, minus 1 (else NaN)
};

struct HistorySeries {
  std::string title, x_name, provider, label, gpu;
  int64_t x = 0;
  std::vector<HistoryEntry> entries;  // time order: run start, then run id
  std::vector<Segment> segments;      // over the entries that did not fail, in order
  size_t steps() const;               // entries with a step of any kind
  // The latest level is a regression: the last segment lies above the one before it (by more
  // than the threshold, as every kept step does), or the latest entry fails where an earlier
  // one worked.
  bool latest_regression() const;
};

struct HistoryQuery {
  std::string title;
  std::optional<int64_t> x;
  std::string provider;  // a point's provider or its label; "" for every provider
  std::string gpu;       // runs whose GPU name contains this (case-insensitive); "" for all
  double threshold = kDefaultThreshold;
};

// Throws InputError when the database holds no point with that title (with the closest
// title), or none matching x / provider / gpu (with the values it holds).
std::vector<HistorySeries> point_history(const Store& store, const HistoryQuery& q);

// The same over points already read (of any titles: only q.title's count), each with its run
// in `runs` (by id): the series the query matches, grouped, in time order and fitted; empty
// when none matches.
std::vector<HistorySeries> build_history(std::vector<StoredPoint> pts, const std::map<int64_t, RunInfo>& runs,
                                         const HistoryQuery& q);

std::string history_markdown(const std::vector<HistorySeries>& series, double threshold);
std::string history_json(const std::vector<HistorySeries>& series, double threshold);
// The data scripts/plot.py draws for `history --plot`: every series' values by run, its
// levels and steps.
std::string history_plot_json(const std::vector<HistorySeries>& series, double threshold);

}  // namespace opbench

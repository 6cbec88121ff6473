// opbench history TITLE: one point (or every x / provider of a table) across the runs of a
// database, in time order, each compared with the previous run that has it through the diff
// verdict (verdict.hpp): a SLOWER is a step up, a FASTER a step down. Torch-free.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "diff/verdict.hpp"
#include "store/store.hpp"

namespace opbench {

struct HistoryEntry {
  RunInfo run;
  StoredPoint point;
  bool has_prev = false;
  Judgement vs_prev;  // against the previous entry (when has_prev)
  std::string step() const;  // "up", "down", "error", "fixed" or ""
};

struct HistorySeries {
  std::string title, x_name, provider, label;
  int64_t x = 0;
  std::vector<HistoryEntry> entries;  // time order: run start, then run id
  size_t steps() const;
};

// Throws InputError when the database holds no point with that title (and x / provider).
// `provider` matches a point's provider or its label.
std::vector<HistorySeries> point_history(const Store& store, const std::string& title,
                                         std::optional<int64_t> x, const std::string& provider,
                                         double threshold);

std::string history_markdown(const std::vector<HistorySeries>& series, double threshold);
std::string history_json(const std::vector<HistorySeries>& series, double threshold);

}  // namespace opbench

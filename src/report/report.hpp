// A run (or several) as a markdown document: a Notation list, a heading per GPU, a section
// per variant, each table in a fenced block as its `title:` line and the table exactly as
// pandas prints it. Torch-free.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "record/run_record.hpp"
#include "report/table.hpp"
#include "store/store.hpp"

namespace opbench {

enum class Show { Value, GBps, PctPeak };  // what the cells hold

// The tables of one run, in stored order: section -> tables.
struct Section {
  std::string name;
  std::vector<Table> tables;
};
std::vector<Section> build_sections(const RunRecord& r, Show show = Show::Value);

std::string render_report(const std::vector<RunRecord>& runs, Show show = Show::Value);
// The same, each section followed by links to its tables' plots (title -> image path).
std::string render_report(const std::vector<RunRecord>& runs, Show show,
                          const std::map<std::string, std::string>& plots);

// What a cell shows for a point: its stored statistic, GB/s or % of peak; -1 for a failure.
double shown_value(const StoredPoint& p, Show show);

}  // namespace opbench

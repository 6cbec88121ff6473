// A run with everything the store keeps of it: its row, its points (samples and rounds
// included), the table work it recorded and the options that shaped it. The one shape of a
// run that export writes and import reads, that merge copies between databases, and that a
// report, a diff and the site are made from (each stage that knows more of a run adds it
// beside this: exchange/import.hpp's ImportedRun, site/input.hpp's SiteRun). Torch-free.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "record/run.hpp"

namespace opbench {

struct RunRecord {
  RunInfo run = {};
  std::vector<StoredPoint> points = {};
  std::vector<CompileRecord> compiles = {};
  std::vector<std::pair<std::string, std::string>> options = {};  // the options that shaped it (run_options)
};

}  // namespace opbench

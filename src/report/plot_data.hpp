// What `opbench plot` hands scripts/plot.py: one figure per table title over one or more
// runs, a line per (run, provider), and the op's bandwidth floor where a run measured its
// peak bandwidth. Torch-free.
//
// Lines: one per provider label in each run, named by the label alone when one run is
// plotted, else "label (run N label, GPU)". Failed points are left out.
// Floors (speed tables only, one per run with a peak): in the value view the time of the
// minimal bytes at the measured peak bandwidth (bytes / peak, in ms), in the gbps view the
// peak itself, in the pct view 100% (one line for all runs).
#pragma once
#include <set>
#include <string>
#include <vector>

#include "report/report.hpp"

namespace opbench {

struct PlotLine {
  std::string label;
  std::string run;  // the run it belongs to ("run 3 label, GPU")
  std::vector<double> x, y;
  bool floor = false;  // a bandwidth floor (drawn dashed)
};

struct PlotTable {
  std::string title, file, x_name, y_label;
  bool speed = true;
  std::vector<PlotLine> lines;
};

// The figures, in the order the titles first appear in the runs.
std::vector<PlotTable> plot_tables(const std::vector<RunRecord>& runs, Show show);

// The bandwidth floor of a point of `bytes` minimal bytes on a GPU of `peak_gbps`, as `show`
// shows it: the time at the peak (ms), the peak itself (GB/s), or 100 (% of peak).
double floor_value(double bytes, double peak_gbps, Show show);

// A file name from a table title: letters, digits, '.', '_', '-' kept, anything else '_'
// (title_file_stem), then ".png".
std::string title_file_stem(const std::string& title);
std::string plot_file_name(const std::string& title);

// File names unique within one folder (ignoring case, as some file systems do) and short
// enough for any file system: the title's stem (above), one over 100 bytes cut to 80 and its
// content hash added, then "-2", "-3", ... for a stem taken already.
class FileNames {
 public:
  std::string take(const std::string& name);  // the stem, without an extension

 private:
  std::set<std::string> used_;
};

// {"kind": "tables", "show": ..., "tables": [{title, file, x_name, y_label, speed,
// lines: [{label, run, x, y, floor}]}]}
std::string plot_tables_json(const std::vector<PlotTable>& tables, Show show);

}  // namespace opbench

// Runs as CSV (`opbench report --format csv`): one row per point, for spreadsheets and
// dataframes. Torch-free.
//
// Columns: run (id), gpu (of the device that measured the point), device, title, section, one
// column per axis any point has (its params, in first-seen order), then the point fields the
// table marks for the CSV (record/point_fields.hpp), in its order: x_name, x, provider, label,
// unit, stat, value, median, mean, min, max, p20, p80, stdev, count, rounds (the samples per
// round, ';'-separated), bytes, gbps, pct_peak, rel_err, max_err, ref_err, ref_max_err (the
// check's figures, -1 when not checked), check_failed (0|1), error, stop, precision,
// host_share. Numbers
// in the shortest form that reads back exactly; an empty cell for a value the store holds as
// NULL (NaN). Cells quoted as RFC 4180 says; lines end in \n.
#pragma once
#include <string>
#include <vector>

#include "report/report.hpp"

namespace opbench {

std::string render_csv(const std::vector<RunRecord>& runs);

}  // namespace opbench

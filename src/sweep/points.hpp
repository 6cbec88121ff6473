// Sweep expansion: a config becomes tables (one per combination of params x variants) and
// points (table x value x provider). Every combination is validated by the op here, so a
// shape the op rejects is a config error before anything runs. Torch-free.
#pragma once
#include <string>
#include <vector>

#include "config/config.hpp"
#include "core/title_filter.hpp"
#include "ops/op.hpp"
#include "sweep/point.hpp"

namespace opbench {

struct TableSpec {
  std::string title;
  std::string section;  // the variant's name ("act_silu", "act_softmax-dim_-1", "2d-l10" ...)
  Params params;        // every axis but x
  std::vector<int64_t> x_values;
};

struct Sweep {
  const OpSpec* op = nullptr;
  std::vector<TableSpec> tables;
  std::vector<Point> points;  // table-major, then x, then provider (column order)
};

// Throws InputError(config path, field, ...) for a combination the op rejects.
Sweep expand(const Config& cfg);

// Keeps the tables whose title the filter matches, and their points (sweep --filter);
// throws InputError naming `where` (the config) when none does.
void filter_tables(Sweep& sw, const TitleFilter& filter, const std::string& where);

// Fills a title template: {axis} is replaced by the axis value, {op} by the op name.
std::string render_title(const std::string& tmpl, const std::string& op, const Params& p,
                         const std::string& path);

}  // namespace opbench

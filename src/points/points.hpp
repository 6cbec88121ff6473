// Sweep expansion: a config becomes tables (one per combination of params x variants) and
// points (table x value x provider). Every combination is validated by the op here, so a
// shape the op rejects is a config error before anything runs. Torch-free.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "core/title_filter.hpp"
#include "ops/op.hpp"
#include "record/point.hpp"

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

// The default cap on the points of one sweep (docs/guarantees.md; --max-points raises it).
constexpr size_t kDefaultMaxPoints = 100000;
// The most points any sweep may have, whatever --max-points says: counted before the config
// is expanded, so a larger one is refused before memory is spent on it.
constexpr size_t kMaxPointsCeiling = 1000000;

// How many points a config expands to (tables x their x values x providers), counted from
// the config alone, without expanding it; saturates at SIZE_MAX.
size_t count_points(const Config& cfg);

// Throws InputError(config path, field, ...) for a combination the op rejects, and before
// expanding anything when the config has more than `max_points` points.
Sweep expand(const Config& cfg, size_t max_points = kDefaultMaxPoints);

// Keeps the tables whose title the filter matches, and their points (sweep --filter);
// throws InputError naming `where` (the config) when none does.
void filter_tables(Sweep& sw, const TitleFilter& filter, const std::string& where);

// Fills a title template (src/ops/title.hpp: {axis}, {op}, {?axis=value:text}); InputError
// naming `path` and "title" for a template that does not parse or names an axis `p` lacks.
std::string render_title(const std::string& tmpl, const std::string& op, const Params& p,
                         const std::string& path);

}  // namespace opbench

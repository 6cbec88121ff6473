#include "points/points.hpp"

#include <cstdint>
#include <set>

#include "core/error.hpp"
#include "ops/title.hpp"
#include "core/suggest.hpp"

namespace opbench {

std::string render_title(const std::string& tmpl, const std::string& op, const Params& p,
                         const std::string& path) {
  try {
    const TitleTemplate t(tmpl);
    for (const auto& axis : t.axes())
      if (!p.has(axis)) {
        std::vector<std::string> axes{"op"};
        for (const auto& kv : p.values()) axes.push_back(kv.first);
        throw InputError(path, "title", "unknown axis {" + axis + "} in the template" + suggest_names(axis, axes));
      }
    return t.render(op, p);
  } catch (const std::invalid_argument& e) {
    throw InputError(path, "title", e.what());
  }
}

namespace {

// The variant's name: the axes that vary across the sweep's tables, other than mode and
// metric (they make the tables inside a section).
std::string section_name(const Params& p, const std::vector<std::string>& varying) {
  std::string s;
  for (const auto& axis : varying) {
    if (axis == "mode" || axis == "metric" || axis == "act_dim") continue;
    if (!s.empty()) s += " ";
    if (axis == "act") {
      s += "act_" + p.s("act");
      if (p.s("act") == "softmax") s += "-dim_" + std::to_string(p.i("act_dim"));
    } else if (axis == "md") {
      s += std::to_string(p.i("md")) + "d";
    } else if (axis == "l") {
      s += "l" + std::to_string(p.i("l"));
    } else {
      s += axis + "_" + to_string(p.values().at(axis));
    }
  }
  // act_dim alone varying (act fixed to softmax)
  if (s.empty()) {
    for (const auto& axis : varying)
      if (axis == "act_dim") s = "dim_" + std::to_string(p.i("act_dim"));
  }
  return s.empty() ? "all" : s;
}

size_t mul_sat(size_t a, size_t b) {
  if (a != 0 && b > SIZE_MAX / a) return SIZE_MAX;
  return a * b;
}

size_t add_sat(size_t a, size_t b) { return b > SIZE_MAX - a ? SIZE_MAX : a + b; }

}  // namespace

size_t count_points(const Config& cfg) {
  size_t combos = 1;
  for (const auto& [axis, values] : cfg.params) combos = mul_sat(combos, values.size());
  size_t xs = cfg.variants.empty() ? cfg.x_values.size() : 0;  // x values per params combination
  for (size_t r = 0; r < cfg.variants.size(); ++r) {
    const bool own = r < cfg.variant_x.size() && !cfg.variant_x[r].empty();
    xs = add_sat(xs, own ? cfg.variant_x[r].size() : cfg.x_values.size());
  }
  return mul_sat(mul_sat(combos, xs), cfg.providers.size());
}

namespace {

// A table's axis values before defaults, and its x values.
struct Combo {
  Params p;
  std::vector<int64_t> xs;
};

// Refuses a sweep of more than `max_points` points before any is made.
void check_point_count(const Config& cfg, size_t max_points) {
  const size_t n = count_points(cfg);
  if (n <= max_points && n <= kMaxPointsCeiling) return;
  const std::string count = (n == SIZE_MAX ? std::string("more than ") + std::to_string(SIZE_MAX) : std::to_string(n)) +
                            " points (tables x values x providers), more than ";
  if (n > kMaxPointsCeiling && max_points >= kMaxPointsCeiling)
    throw InputError(cfg.path, "", count + "the " + std::to_string(kMaxPointsCeiling) + " any sweep may have (split the config)");
  throw InputError(cfg.path, "", count + "the limit of " + std::to_string(max_points) + " a sweep (--max-points raises it)");
}

// The Cartesian product of params (first listed varies slowest), crossed with the variants,
// each row with its own x values or the config's.
std::vector<Combo> table_combos(const Config& cfg) {
  std::vector<Params> combos{Params()};
  for (const auto& [axis, values] : cfg.params) {
    std::vector<Params> next;
    for (const auto& base : combos)
      for (const auto& v : values) {
        Params p = base;
        p.set(axis, v);
        next.push_back(p);
      }
    combos = std::move(next);
  }
  std::vector<Combo> rows;
  for (const auto& base : combos) {
    if (cfg.variants.empty()) rows.push_back({base, cfg.x_values});
    for (size_t r = 0; r < cfg.variants.size(); ++r) {
      Params p = base;
      for (const auto& [axis, v] : cfg.variants[r]) p.set(axis, v);
      const auto& own = cfg.variant_x.size() > r ? cfg.variant_x[r] : std::vector<int64_t>{};
      rows.push_back({p, own.empty() ? cfg.x_values : own});
    }
  }
  return rows;
}

// The axes that take more than one value, which name the sections: params with several
// values, then the variants' axes when there are several variants.
std::vector<std::string> varying_axes(const Config& cfg) {
  std::vector<std::string> varying;
  for (const auto& [axis, values] : cfg.params)
    if (values.size() > 1) varying.push_back(axis);
  std::set<std::string> in_variants;
  for (const auto& row : cfg.variants)
    for (const auto& kv : row) in_variants.insert(kv.first);
  if (cfg.variants.size() > 1)
    for (const auto& a : in_variants) varying.push_back(a);
  return varying;
}

// The op's defaults for the axes the row leaves unset (x excepted, which must come from x).
void fill_defaults(const Config& cfg, const OpSpec& op, Params& p) {
  for (const auto& a : op.axes) {
    if (a.name == cfg.x_name || p.has(a.name)) continue;
    if (!a.fallback) throw InputError(cfg.path, "params." + a.name, "missing (no default)");
    p.set(a.name, *a.fallback);
  }
}

// The row's mode is one of the op's, and the op accepts the row at every x value (it may
// reject a shape at one size only).
void validate_row(const Config& cfg, const OpSpec& op, const Params& p, const std::vector<int64_t>& xs) {
  bool mode_ok = false;
  for (const auto& m : op.modes) mode_ok = mode_ok || m == p.s("mode");
  if (!mode_ok) throw InputError(cfg.path, "params.mode", cfg.op + " has no mode '" + p.s("mode") + "'");
  for (int64_t xv : xs) {
    Params full = p;
    full.set(cfg.x_name, xv);
    try {
      op.validate(full);
    } catch (const AxisError& e) {
      std::string field = e.field == cfg.x_name ? "x." + e.field : "params." + e.field;
      throw InputError(cfg.path, field, e.what());
    }
  }
}

// A table of a full row: its title (the config's template, or the op's default title at its
// first x), unique among `titles`, and its section.
TableSpec make_table(const Config& cfg, const OpSpec& op, const Params& p, const std::vector<int64_t>& xs,
                     const std::vector<std::string>& varying, std::set<std::string>& titles) {
  TableSpec t;
  t.params = p;
  Params titled = p;
  titled.set(cfg.x_name, xs.front());
  t.title = cfg.title.empty() ? op.default_title(titled) : render_title(cfg.title, op.name, p, cfg.path);
  if (!titles.insert(t.title).second)
    throw InputError(cfg.path, cfg.title.empty() ? "params" : "title",
                     "two tables would share the title '" + t.title + "'");
  t.section = section_name(p, varying);
  t.x_values = xs;
  return t;
}

// A point for every x value of every table, for each provider in the config's order.
std::vector<Point> table_points(const Config& cfg, const std::vector<TableSpec>& tables) {
  std::vector<Point> points;
  for (const auto& t : tables)
    for (int64_t xv : t.x_values)
      for (const auto& [prov, label] : cfg.providers) {
        Point pt;
        pt.op = cfg.op;
        pt.title = t.title;
        pt.params = t.params;
        pt.params.set(cfg.x_name, xv);
        pt.x_name = cfg.x_name;
        pt.x_value = xv;
        pt.provider = prov;
        pt.label = label;
        points.push_back(pt);
      }
  return points;
}

}  // namespace

Sweep expand(const Config& cfg, size_t max_points) {
  Sweep sw;
  sw.op = find_op(cfg.op);
  if (!sw.op) throw InputError(cfg.path, "op", "unknown op '" + cfg.op + "'");
  check_point_count(cfg, max_points);
  const OpSpec& op = *sw.op;
  std::vector<Combo> rows = table_combos(cfg);
  const std::vector<std::string> varying = varying_axes(cfg);
  std::set<std::string> titles;
  for (auto& [p, xs] : rows) {
    fill_defaults(cfg, op, p);
    validate_row(cfg, op, p, xs);
    sw.tables.push_back(make_table(cfg, op, p, xs, varying, titles));
  }
  sw.points = table_points(cfg, sw.tables);
  return sw;
}

void filter_tables(Sweep& sw, const TitleFilter& filter, const std::string& where) {
  if (filter.empty()) return;
  std::vector<std::string> all;
  std::vector<TableSpec> tables;
  for (auto& t : sw.tables) {
    all.push_back(t.title);
    if (filter(t.title)) tables.push_back(t);
  }
  if (tables.empty()) filter.none_matched(where, all);
  std::vector<Point> points;
  for (auto& p : sw.points)
    if (filter(p.title)) points.push_back(p);
  sw.tables = std::move(tables);
  sw.points = std::move(points);
}

}  // namespace opbench

// The name of a package in its key's folder says the ranges it serves: x's, then each shared
// axis's (OpSpec::shared_axes, when sharing is on), e.g.
//   dyn-256-32768-by256.pt2            one table's package, dynamic over x, x a multiple of 256
//   dyn-300-600.pt2                    the same, any x in the range
//   static-256.pt2                     one x value
//   dyn-256-32768-by256.batch-8-32-by8.pt2  tables differing in batch alone, dynamic over both
//   static-{x}.batch-8-8.pt2           ...
// A dynamic range's step is the largest power of two dividing every value it was built for
// (step_of): the export declares its sizes multiples of it, which lets Inductor tile them
// evenly (docs/baselines.md, "What a dynamic size costs"). A package serves a point when its
// ranges hold the point's x and the point's value of every shared axis, and it names no other
// axis. Internal to baselines/compiled.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace opbench::compiled {

struct Range {
  int64_t lo = 0, hi = 0;
  int64_t step = 1;  // the values held are its multiples
  bool holds(int64_t v) const { return lo <= v && v <= hi && v % step == 0; }
  int64_t width() const { return hi - lo; }
};

// The largest power of two dividing every value (values > 0; 1 for fewer than two values).
int64_t step_of(const std::vector<int64_t>& values);
// The range of sorted, distinct values: their ends and step_of.
Range range_of(const std::vector<int64_t>& values);

// The shared axes' values of a point (axis -> value), or their ranges in a package.
using SharedPoint = std::map<std::string, int64_t>;
using SharedRanges = std::map<std::string, Range>;

struct PackageName {
  Range x;
  SharedRanges shared;
  bool serves(int64_t x_value, const SharedPoint& point) const;
  // Which of two packages serving a point is taken: one dynamic over x before a static one,
  // then the narrower (x's width first, then the shared axes'), then the one with the larger
  // step over x, then the lower x.
  bool narrower_than(const PackageName& o) const;
};

// "dyn-<lo>-<hi>" (or "static-<x>" when lo == hi), ".<axis>-<lo>-<hi>" per shared axis, each
// range followed by "-by<step>" when its step is above 1, ".pt2".
std::string package_name(const PackageName& p);
// The same with x's part given ("static-{x}": the exporter's static fallback path).
std::string package_name(const std::string& x_part, const SharedRanges& shared);
// The ranges a file name says; nullopt for a name of another form (logs, temporary files).
std::optional<PackageName> parse_package_name(const std::string& file_name);

}  // namespace opbench::compiled

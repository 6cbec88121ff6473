// The name of a package in its key's folder says the ranges it serves: x's, then each shared
// axis's (OpSpec::shared_axes, when sharing is on), e.g.
//   dyn-256-32768.pt2                one table's package, dynamic over x
//   static-256.pt2                   one x value
//   dyn-256-32768.batch-8-32.pt2     tables differing in batch alone, dynamic over both
//   static-{x}.batch-8-8.pt2         ...
// A package serves a point when its ranges hold the point's x and the point's value of every
// shared axis, and it names no other axis. Internal to baselines/compiled.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace opbench::compiled {

struct Range {
  int64_t lo = 0, hi = 0;
  bool holds(int64_t v) const { return lo <= v && v <= hi; }
  int64_t width() const { return hi - lo; }
};

// The shared axes' values of a point (axis -> value), or their ranges in a package.
using SharedPoint = std::map<std::string, int64_t>;
using SharedRanges = std::map<std::string, Range>;

struct PackageName {
  Range x;
  SharedRanges shared;
  bool serves(int64_t x_value, const SharedPoint& point) const;
  // Which of two packages serving a point is taken: one dynamic over x before a static one,
  // then the narrower (x's width first, then the shared axes'), then the lower x.
  bool narrower_than(const PackageName& o) const;
};

// "dyn-<lo>-<hi>" (or "static-<x>" when lo == hi), ".<axis>-<lo>-<hi>" per shared axis, ".pt2".
std::string package_name(const PackageName& p);
// The same with x's part given ("static-{x}": the exporter's static fallback path).
std::string package_name(const std::string& x_part, const SharedRanges& shared);
// The ranges a file name says; nullopt for a name of another form (logs, temporary files).
std::optional<PackageName> parse_package_name(const std::string& file_name);

}  // namespace opbench::compiled

// Package names and the ranges they serve (package_name.h).
#include "baselines/compiled/package_name.h"

#include <cctype>
#include <vector>

namespace opbench::compiled {

namespace {

const std::string kExt = ".pt2";

// A decimal integer >= 0, the whole of `s`.
std::optional<int64_t> number(const std::string& s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  return std::stoll(s);
}

bool identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t a = 0;
  for (size_t b; (b = s.find(sep, a)) != std::string::npos; a = b + 1) parts.push_back(s.substr(a, b - a));
  parts.push_back(s.substr(a));
  return parts;
}

// "<word>-<lo>-<hi>[-by<step>]" -> word and range (lo < hi, both multiples of a power-of-two
// step above 1 when one is given); false for anything else.
bool word_range(const std::string& part, std::string* word, Range* r) {
  const std::vector<std::string> f = split(part, '-');
  if (f.size() != 3 && f.size() != 4) return false;
  const auto lo = number(f[1]), hi = number(f[2]);
  if (!lo || !hi || *lo > *hi) return false;
  *word = f[0];
  *r = {*lo, *hi};
  if (f.size() == 3) return true;
  const auto step = f[3].rfind("by", 0) == 0 ? number(f[3].substr(2)) : std::nullopt;
  if (!step || *step < 2 || (*step & (*step - 1)) != 0 || *lo == *hi || *lo % *step || *hi % *step) return false;
  r->step = *step;
  return true;
}

std::string range_text(const Range& r) {
  return std::to_string(r.lo) + "-" + std::to_string(r.hi) + (r.step > 1 ? "-by" + std::to_string(r.step) : "");
}

// x's part: "dyn-<lo>-<hi>" (lo < hi) or "static-<x>".
bool x_part(const std::string& part, Range* r) {
  std::string word;
  if (word_range(part, &word, r)) return word == "dyn" && r->lo < r->hi;
  if (part.rfind("static-", 0) != 0) return false;
  const auto x = number(part.substr(7));
  if (!x) return false;
  *r = {*x, *x};
  return true;
}

}  // namespace

int64_t step_of(const std::vector<int64_t>& values) {
  if (values.size() < 2) return 1;
  int64_t all = 0;
  for (int64_t v : values) all |= v;
  return all > 0 ? all & -all : 1;
}

Range range_of(const std::vector<int64_t>& values) {
  return values.empty() ? Range{} : Range{values.front(), values.back(), step_of(values)};
}

bool PackageName::serves(int64_t x_value, const SharedPoint& point) const {
  if (!x.holds(x_value) || shared.size() != point.size()) return false;
  for (const auto& [axis, value] : point) {
    auto it = shared.find(axis);
    if (it == shared.end() || !it->second.holds(value)) return false;
  }
  return true;
}

bool PackageName::narrower_than(const PackageName& o) const {
  if ((x.width() == 0) != (o.x.width() == 0)) return x.width() != 0;  // dynamic over x first
  if (x.width() != o.x.width()) return x.width() < o.x.width();
  int64_t mine = 0, theirs = 0;
  for (const auto& [axis, r] : shared) mine += r.width();
  for (const auto& [axis, r] : o.shared) theirs += r.width();
  if (mine != theirs) return mine < theirs;
  if (x.step != o.x.step) return x.step > o.x.step;  // declared in steps: Inductor tiled it evenly
  return x.lo < o.x.lo;
}

std::string package_name(const std::string& x_part_text, const SharedRanges& shared) {
  std::string name = x_part_text;
  for (const auto& [axis, r] : shared) name += "." + axis + "-" + range_text(r);
  return name + kExt;
}

std::string package_name(const PackageName& p) {
  const std::string x = p.x.lo == p.x.hi ? "static-" + std::to_string(p.x.lo) : "dyn-" + range_text(p.x);
  return package_name(x, p.shared);
}

std::optional<PackageName> parse_package_name(const std::string& file_name) {
  if (file_name.size() <= kExt.size() || file_name.compare(file_name.size() - kExt.size(), kExt.size(), kExt) != 0)
    return std::nullopt;
  const std::vector<std::string> parts = split(file_name.substr(0, file_name.size() - kExt.size()), '.');
  PackageName p;
  if (!x_part(parts[0], &p.x)) return std::nullopt;
  for (size_t i = 1; i < parts.size(); ++i) {
    std::string axis;
    Range r;
    if (!word_range(parts[i], &axis, &r) || !identifier(axis) || !p.shared.emplace(axis, r).second)
      return std::nullopt;
  }
  return p;
}

}  // namespace opbench::compiled

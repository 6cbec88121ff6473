#include "sweep/shard.hpp"

#include <algorithm>
#include <numeric>

#include "core/error.hpp"

namespace opbench {

namespace {

// A whole number of at most six digits, or -1.
int small_number(const std::string& s) {
  if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoi(s);
}

std::vector<double> seconds_of(const Sweep& sw, const std::vector<Cell>& cells, const Timing& timing) {
  std::vector<double> out;
  for (const auto& c : cells) out.push_back(cell_seconds(sw, c, timing));
  return out;
}

}  // namespace

std::string Shard::text() const { return std::to_string(index) + "/" + std::to_string(count); }

Shard parse_shard(const std::string& text, const std::string& option) {
  const size_t slash = text.find('/');
  if (slash == std::string::npos)
    throw InputError(option, text, "expected i/N (the i-th of N shards, e.g. 2/4)");
  Shard s{small_number(text.substr(0, slash)), small_number(text.substr(slash + 1))};
  if (s.index < 0 || s.count < 0) throw InputError(option, text, "expected i/N with whole numbers (e.g. 2/4)");
  if (s.count < 1) throw InputError(option, text, "the number of shards N must be at least 1");
  if (s.index < 1 || s.index > s.count)
    throw InputError(option, text, "the shard i must be 1 to " + std::to_string(s.count));
  return s;
}

Shard shard_of(const RunOptions& options) { return options.shard.empty() ? Shard{} : parse_shard(options.shard); }

std::vector<int> slice_of_cells(const std::vector<double>& seconds, int n) {
  std::vector<size_t> order(seconds.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return seconds[a] > seconds[b]; });
  std::vector<double> load(size_t(std::max(n, 1)), 0.0);
  std::vector<int> out(seconds.size(), 0);
  for (size_t c : order) {
    const size_t least = size_t(std::min_element(load.begin(), load.end()) - load.begin());  // the first of equals
    out[c] = int(least);
    load[least] += seconds[c];
  }
  return out;
}

std::vector<Cell> shard_cells(const Sweep& sw, const Timing& timing, const Shard& shard) {
  std::vector<Cell> all = plan_cells(sw, {});
  if (!shard.on()) return all;
  const std::vector<int> slice = slice_of_cells(seconds_of(sw, all, timing), shard.count);
  std::vector<Cell> out;
  for (size_t c = 0; c < all.size(); ++c)
    if (slice[c] == shard.index - 1) out.push_back(all[c]);
  return out;
}

Sweep only_cells(const Sweep& sw, const std::vector<Cell>& cells) {
  Sweep out;
  out.op = sw.op;
  out.tables = sw.tables;
  for (const auto& c : cells)
    for (size_t i : c.points) out.points.push_back(sw.points[i]);
  return out;
}

std::vector<double> slice_seconds(const Sweep& sw, const std::vector<Cell>& cells, const Timing& timing, int n) {
  const std::vector<double> seconds = seconds_of(sw, cells, timing);
  const std::vector<int> slice = slice_of_cells(seconds, n);
  std::vector<double> load(size_t(std::max(n, 1)), 0.0);
  for (size_t c = 0; c < cells.size(); ++c) load[size_t(slice[c])] += seconds[c];
  return load;
}

}  // namespace opbench

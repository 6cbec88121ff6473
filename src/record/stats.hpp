// A point's summary statistics of its samples. Torch-free.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace opbench {

struct Stats {
  double median = 0, mean = 0, min = 0, max = 0, p20 = 0, p80 = 0, stdev = 0;
  int64_t count = 0;
  double get(const std::string& stat) const;  // by name, as in Timing::stat
};
Stats summarize(std::vector<double> samples);

}  // namespace opbench

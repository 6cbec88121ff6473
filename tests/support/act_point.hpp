// A point of the act op for the tests of how a cell's rounds are scheduled: its table
// "ACT-METRIC" at n = 256, of one provider.
#pragma once
#include <string>

#include "record/point.hpp"

namespace opbench {

inline Point act_point(const std::string& act, const std::string& metric, const std::string& provider) {
  Point p;
  p.op = "act";
  p.title = act + "-" + metric;
  p.params.set("act", Value(act));
  p.params.set("metric", Value(metric));
  p.x_name = "n";
  p.x_value = 256;
  p.provider = provider;
  return p;
}

}  // namespace opbench

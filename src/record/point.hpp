// One benchmark point: a table cell's worth of work (a title, an x value, a provider). Torch-free.
#pragma once
#include <string>
#include <vector>

#include "core/value.hpp"

namespace opbench {

struct Point {
  std::string op;
  std::string title;     // the table this point belongs to
  Params params;         // every axis value, x included (mode, metric, dtype too)
  std::string x_name;
  int64_t x_value = 0;
  std::string provider;  // provider name (torch, cuda, ...)
  std::string label;     // its column label (to, tr, ...)
  std::string mode() const { return params.s("mode"); }
  std::string metric() const { return params.s("metric"); }
  // Identifies the point inside a run: title, x and provider.
  std::string key() const;
};

}  // namespace opbench

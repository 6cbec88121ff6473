// --filter REGEX: which table titles a command works on (a title is kept when the regular
// expression, a subset of the ECMAScript syntax (core/pattern.hpp), matches some part of it, as
// in `grep -E`), matched without backtracking: its cost is bounded by the title's length times
// the expression's size. Torch-free.
#pragma once
#include <string>
#include <vector>

#include "core/pattern.hpp"

namespace opbench {

class TitleFilter {
 public:
  TitleFilter() = default;
  // Throws InputError("--filter", ...) for an invalid expression.
  explicit TitleFilter(const std::string& regex);
  bool empty() const { return text_.empty(); }
  const std::string& text() const { return text_; }
  bool operator()(const std::string& title) const;  // true for every title when empty
  // The InputError for a filter that left nothing: names the filter, how many titles there
  // were and the first few of them.
  [[noreturn]] void none_matched(const std::string& where, const std::vector<std::string>& titles) const;

 private:
  std::string text_;
  Pattern re_;
};

}  // namespace opbench

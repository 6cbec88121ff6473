#include "core/title_filter.hpp"

#include "core/error.hpp"
#include "core/suggest.hpp"

namespace opbench {

TitleFilter::TitleFilter(const std::string& regex) : text_(regex) {
  if (regex.empty()) return;
  try {
    re_ = Pattern(regex);
  } catch (const PatternError& e) {
    throw InputError("--filter", regex, std::string("not a valid regular expression: ") + e.what());
  }
}

bool TitleFilter::operator()(const std::string& title) const {
  return text_.empty() || re_.search(title);
}

void TitleFilter::none_matched(const std::string& where, const std::vector<std::string>& titles) const {
  constexpr size_t kShown = 3;
  std::vector<std::string> some(titles.begin(), titles.begin() + long(std::min(titles.size(), kShown)));
  std::string list = join_names(some) + (titles.size() > kShown ? ", ..." : "");
  throw InputError("--filter", text_,
                   "matches no table title of " + where + " (" + std::to_string(titles.size()) + " titles: " + list + ")");
}

}  // namespace opbench

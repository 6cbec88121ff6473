#include "store/selector.hpp"

#include "core/error.hpp"
#include "core/text.hpp"

namespace opbench {

namespace {

bool starts_with(const std::string& s, const std::string& pre) { return s.compare(0, pre.size(), pre) == 0; }

}  // namespace

std::string selector_problem(const std::string& text, RunSelector* out) {
  const std::string why = text_problem(text);
  if (!why.empty()) return "the selector " + why;
  RunSelector s;
  if (starts_with(text, "label:")) {
    s.kind = RunSelector::Label;
    s.text = text.substr(6);
  } else if (starts_with(text, "gpu:")) {
    s.kind = RunSelector::Gpu;
    s.text = text.substr(4);
    if (s.text.empty()) return "gpu: needs part of a GPU's name (e.g. gpu:H100)";
  } else if (text != "latest") {
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
      return "not a run selector (an id, latest, label:TEXT or gpu:TEXT)";
    const size_t first = text.find_first_not_of('0');
    const std::string digits = first == std::string::npos ? "0" : text.substr(first);
    const std::string max = std::to_string(INT64_MAX);
    if (digits.size() > max.size() || (digits.size() == max.size() && digits > max))
      return "run id out of range (ids are 1 to " + max + ")";
    s.kind = RunSelector::Id;
    s.id = std::stoll(digits);
    if (s.id == 0) return "run ids start at 1";
  }
  if (out) *out = s;
  return "";
}

RunSelector parse_selector(const std::string& text, const std::string& where) {
  RunSelector s;
  const std::string why = selector_problem(text, &s);
  if (!why.empty()) throw InputError(where, "run " + text, why);
  return s;
}

bool gpu_matches(const std::string& gpu, const std::string& text) {
  return !text.empty() && to_lower(gpu).find(to_lower(text)) != std::string::npos;
}

}  // namespace opbench

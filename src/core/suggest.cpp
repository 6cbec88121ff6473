#include "core/suggest.hpp"

#include <algorithm>
#include <cctype>

#include "core/text.hpp"

namespace opbench {

size_t edit_distance(const std::string& a, const std::string& b) {
  auto low = [](char c) { return char(std::tolower(static_cast<unsigned char>(c))); };
  const size_t n = a.size(), m = b.size();
  // d[i][j]: distance between a[0, i) and b[0, j) (optimal string alignment)
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1, 0));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i)
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = low(a[i - 1]) == low(b[j - 1]) ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && low(a[i - 1]) == low(b[j - 2]) && low(a[i - 2]) == low(b[j - 1]))
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

std::string closest_name(const std::string& word, const std::vector<std::string>& candidates) {
  if (word.empty()) return "";
  const std::string w = to_lower(word);
  std::string best;
  double best_score = 1e9;
  for (const auto& c : candidates) {
    if (c.empty() || c == word) continue;
    const std::string lc = to_lower(c);
    const size_t d = edit_distance(w, lc);
    const size_t limit = std::max<size_t>(1, std::min(w.size(), lc.size()) / 3);
    // a prefix (--provider for --providers, rep for rep_ms) counts as close, after any typo
    const bool prefix = w.size() >= 3 && (lc.rfind(w, 0) == 0 || w.rfind(lc, 0) == 0);
    double score = double(d);
    if (d > limit) {
      if (!prefix) continue;
      score = double(limit) + 0.5;
    }
    if (score < best_score) {
      best_score = score;
      best = c;
    }
  }
  return best;
}

std::string join_names(const std::vector<std::string>& names, const std::string& sep) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : sep) + n;
  return out;
}

std::string suggest_names(const std::string& word, const std::vector<std::string>& candidates,
                          const std::string& quote) {
  if (candidates.empty()) return "";
  const std::string near = closest_name(word, candidates);
  std::string out = " (";
  if (!near.empty()) out += "did you mean " + quote + near + quote + "? ";
  return out + "one of: " + join_names(candidates) + ")";
}

}  // namespace opbench

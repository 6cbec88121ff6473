// Helping a user who mistyped a name: the closest known name ("did you mean ...?") and the
// list of valid names, for error messages. Torch-free.
#pragma once
#include <string>
#include <vector>

namespace opbench {

// Edit distance (insertions, deletions, substitutions, adjacent swaps), case-insensitive.
size_t edit_distance(const std::string& a, const std::string& b);

// The candidate closest to `word` when it is close enough to be a likely typo (at most a third
// of the word's letters off, at least one; or one is a prefix of the other), else "".
std::string closest_name(const std::string& word, const std::vector<std::string>& candidates);

// "a, b, c"
std::string join_names(const std::vector<std::string>& names, const std::string& sep = ", ");

// " (did you mean 'X'? one of: a, b, c)", or " (one of: a, b, c)" when nothing is close; ""
// when there are no candidates.
// `quote` wraps the suggestion ("'" by default; "" for flags such as --providers).
std::string suggest_names(const std::string& word, const std::vector<std::string>& candidates,
                          const std::string& quote = "'");

}  // namespace opbench

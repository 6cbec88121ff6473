// A run selector (SEL on the command line): an id, latest, label:TEXT or gpu:TEXT. Parsed on
// its own, before any database is read, so a bad one is an input error naming it. Torch-free.
#pragma once
#include <cstdint>
#include <string>

namespace opbench {

struct RunSelector {
  enum Kind { Id, Latest, Label, Gpu };
  Kind kind = Latest;
  int64_t id = 0;    // Id: 1 .. 2^63-1
  std::string text;  // Label: the label (may be empty: runs without one); Gpu: part of a GPU's name
};

// Why `text` is no selector ("" when it is one, then stored in *out when given): an empty
// selector, an id of 0 or beyond 2^63-1, gpu: without a name, text that is not UTF-8 or
// holds a control character.
std::string selector_problem(const std::string& text, RunSelector* out = nullptr);

// The selector `text`; throws InputError(where, "run " + text, selector_problem(...)).
RunSelector parse_selector(const std::string& text, const std::string& where);

// Whether `gpu` names the GPU a selector's gpu:TEXT means (TEXT inside it, case-insensitive).
bool gpu_matches(const std::string& gpu, const std::string& text);

}  // namespace opbench

// A regular expression (a subset of the ECMAScript syntax) matched without backtracking: the
// expression is compiled to a small automaton that reads the text once, keeping every state it
// can be in, so a match costs at most (text length) x (automaton size) steps whatever the
// expression, and no text or expression can exhaust the stack. Torch-free.
//
// Supported: literals, `.`, classes `[a-z]` `[^...]`, `\d \D \w \W \s \S`, escaped
// punctuation, `\t \n \r \f \v \xHH`, anchors `^ $`, groups `( )` `(?: )`, alternation `|`,
// quantifiers `* + ? {m} {m,} {m,n}` (greedy or lazy: the same for whether it matches).
// Refused as not supported: back-references, look-around, `\b`.
#pragma once
#include <bitset>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace opbench {

// An expression that is not valid, or is larger than the limits below.
class PatternError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Pattern {
 public:
  static constexpr size_t kMaxLength = 1000;   // bytes of the expression
  static constexpr size_t kMaxProgram = 4000;  // automaton states, counted repeats expanded
  static constexpr int kMaxRepeat = 1000;      // the largest bound of {m,n}

  Pattern() = default;
  explicit Pattern(const std::string& expression);  // throws PatternError
  // True when the expression matches some part of `text`.
  bool search(const std::string& text) const;

  enum class Op : uint8_t { Set, Split, Jump, Begin, End, Match };
  struct Inst {
    Op op;
    int a = 0, b = 0;  // Split: both targets; Jump: a; Set: index into sets_
  };

 private:
  std::vector<Inst> prog_;
  std::vector<std::bitset<256>> sets_;
  friend class PatternCompiler;
};

}  // namespace opbench

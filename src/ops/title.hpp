// Table title templates: one declarative string per op (OpSpec::title) that renders a table's
// title from its axes and, inverted, reads the axes back from a title. Torch-free.
//
// Syntax:
//   {axis}            the axis value (an integer or a word); {op} is the op's name
//   {?axis=v:text}    `text` only when the axis equals v; {?axis!=v:text} when it does not;
//                     `text` may hold slots and further conditions
// Everything else is literal. E.g. "{op}-{metric}-batch{batch}-act_{act}{?act=softmax:-dim_{act_dim}}".
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "core/value.hpp"

namespace opbench {

struct AxisSpec;

class TitleTemplate {
 public:
  // Throws std::invalid_argument naming the problem for a template that does not parse
  // (an unclosed '{', an empty slot, a condition without ':').
  explicit TitleTemplate(const std::string& text);

  const std::string& text() const { return text_; }
  // The axes the template names ({op} excluded), in first-use order.
  std::vector<std::string> axes() const;

  // The title for these axis values; throws std::out_of_range naming an axis `p` lacks.
  std::string render(const std::string& op, const Params& p) const;

  // Reads the axis values a title was rendered from: the axes the title spells out, filled
  // into `out`, such that `accept(out)` holds (the caller renders back, fills defaults,
  // validates). `axis` describes each axis (kind, choices; nullptr: unknown axis, no match).
  // Returns false when no reading of the title is accepted.
  bool parse(const std::string& title, const std::string& op,
             const std::function<const AxisSpec*(const std::string&)>& axis,
             const std::function<bool(const Params&)>& accept, Params* out) const;

  // A parsed template: literal text, a slot, or a conditional part holding further nodes.
  struct Node {
    enum Kind { Literal, Slot, Cond } kind = Literal;
    std::string text;                // Literal: the text; Slot: the axis ("op" for {op})
    std::string cond_axis, cond_value;  // Cond: the axis compared and the value
    bool negate = false;                // Cond: {?axis!=v:...}
    std::vector<Node> body;             // Cond: what it renders
  };

 private:
  std::string text_;
  std::vector<Node> nodes_;
};

}  // namespace opbench

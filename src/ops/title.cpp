// Title templates: render and parse (title.hpp). Torch-free.
#include "ops/title.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "ops/op.hpp"

namespace opbench {

namespace {

using Node = TitleTemplate::Node;

class TemplateParser {
 public:
  explicit TemplateParser(const std::string& text) : t_(text) {}

  std::vector<Node> parse() {
    std::vector<Node> nodes = sequence(false);
    return nodes;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw std::invalid_argument("title template '" + t_ + "': " + why);
  }

  // Nodes up to the end (top level) or up to the '}' closing a condition (nested).
  std::vector<Node> sequence(bool nested) {
    std::vector<Node> out;
    std::string literal;
    auto flush = [&] {
      if (literal.empty()) return;
      Node n;
      n.text = literal;
      out.push_back(n);
      literal.clear();
    };
    while (pos_ < t_.size()) {
      const char c = t_[pos_];
      if (c == '}' && nested) break;
      if (c != '{') {
        literal += c;
        ++pos_;
        continue;
      }
      flush();
      out.push_back(t_.compare(pos_, 2, "{?") == 0 ? condition() : slot());
    }
    flush();
    if (nested && pos_ >= t_.size()) fail("a '{?' is never closed");
    return out;
  }

  Node slot() {
    const size_t close = t_.find('}', pos_);
    if (close == std::string::npos) fail("unclosed '{'");
    Node n;
    n.kind = Node::Slot;
    n.text = t_.substr(pos_ + 1, close - pos_ - 1);
    if (n.text.empty() || n.text.find_first_of("{?:=!") != std::string::npos)
      fail("'{" + n.text + "}' is not an axis name");
    pos_ = close + 1;
    return n;
  }

  // {?axis=value:body} or {?axis!=value:body}
  Node condition() {
    Node n;
    n.kind = Node::Cond;
    pos_ += 2;
    const size_t colon = t_.find(':', pos_);
    if (colon == std::string::npos) fail("a condition needs ':' before its text");
    const std::string test = t_.substr(pos_, colon - pos_);
    const size_t eq = test.find('=');
    if (eq == std::string::npos || eq == 0) fail("condition '" + test + "' must read axis=value or axis!=value");
    n.negate = test[eq - 1] == '!';
    n.cond_axis = test.substr(0, n.negate ? eq - 1 : eq);
    n.cond_value = test.substr(eq + 1);
    if (n.cond_axis.empty() || n.cond_value.empty()) fail("condition '" + test + "' lacks an axis or a value");
    pos_ = colon + 1;
    n.body = sequence(true);
    ++pos_;  // the closing '}'
    return n;
  }

  const std::string& t_;
  size_t pos_ = 0;
};

const Value& axis_value(const Params& p, const std::string& axis) {
  auto it = p.values().find(axis);
  if (it == p.values().end()) throw std::out_of_range("axis '" + axis + "' is not set");
  return it->second;
}

bool holds(const Node& cond, const Params& p) {
  return (to_string(axis_value(p, cond.cond_axis)) == cond.cond_value) != cond.negate;
}

void render_nodes(const std::vector<Node>& nodes, const std::string& op, const Params& p,
                  std::string& out) {
  for (const Node& n : nodes) {
    if (n.kind == Node::Literal) out += n.text;
    else if (n.kind == Node::Slot) out += n.text == "op" ? op : to_string(axis_value(p, n.text));
    else if (holds(n, p)) render_nodes(n.body, op, p, out);
  }
}

void collect_axes(const std::vector<Node>& nodes, std::vector<std::string>& out) {
  auto add = [&](const std::string& a) {
    if (a != "op" && std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
  };
  for (const Node& n : nodes) {
    if (n.kind == Node::Slot) add(n.text);
    if (n.kind == Node::Cond) {
      add(n.cond_axis);
      collect_axes(n.body, out);
    }
  }
}

// Backtracking match of a title against the nodes: every way a slot can read is tried, and
// a condition's text both present and absent (unless its axis is already known).
class Matcher {
 public:
  using Next = std::function<bool(size_t)>;
  Matcher(const std::string& title, const std::string& op,
          const std::function<const AxisSpec*(const std::string&)>& axis, Params& bound)
      : title_(title), op_(op), axis_(axis), bound_(bound) {}

  bool match(const std::vector<Node>& seq, size_t k, size_t pos, const Next& next) {
    if (k == seq.size()) return next(pos);
    const Node& n = seq[k];
    auto rest = [&](size_t p) { return match(seq, k + 1, p, next); };
    switch (n.kind) {
      case Node::Literal: return literal(n.text, pos, rest);
      case Node::Slot: return slot(n.text, pos, rest);
      case Node::Cond: {
        if (bound_.has(n.cond_axis)) {
          if (holds(n, bound_)) return match(n.body, 0, pos, rest);
          return rest(pos);
        }
        return match(n.body, 0, pos, rest) || rest(pos);
      }
    }
    return false;
  }

 private:
  bool literal(const std::string& text, size_t pos, const Next& next) {
    return title_.compare(pos, text.size(), text) == 0 && next(pos + text.size());
  }

  // Binds `axis` to `v` for the rest of the match; unbinds when that fails.
  bool bind(const std::string& axis, Value v, size_t end, const Next& next) {
    bound_.set(axis, std::move(v));
    if (next(end)) return true;
    bound_.erase(axis);
    return false;
  }

  bool slot(const std::string& name, size_t pos, const Next& next) {
    if (name == "op") return literal(op_, pos, next);
    if (bound_.has(name)) return literal(to_string(bound_.values().at(name)), pos, next);
    const AxisSpec* a = axis_(name);
    if (!a) return false;
    if (a->kind == AxisKind::Int) return integer(name, pos, next);
    if (!a->choices.empty()) {
      std::vector<std::string> choices = a->choices;  // longest first: "silu" before "si..."
      std::sort(choices.begin(), choices.end(), [](const std::string& x, const std::string& y) {
        return x.size() > y.size();
      });
      for (const auto& c : choices)
        if (title_.compare(pos, c.size(), c) == 0 && bind(name, c, pos + c.size(), next)) return true;
      return false;
    }
    size_t end = pos;
    while (end < title_.size() && (std::isalnum(static_cast<unsigned char>(title_[end])) || title_[end] == '_' ||
                                   title_[end] == '.'))
      ++end;
    for (; end > pos; --end)
      if (bind(name, title_.substr(pos, end - pos), end, next)) return true;
    return false;
  }

  bool integer(const std::string& name, size_t pos, const Next& next) {
    size_t digits = pos + (pos < title_.size() && title_[pos] == '-' ? 1 : 0);
    size_t end = digits;
    while (end < title_.size() && end - digits < 18 && std::isdigit(static_cast<unsigned char>(title_[end]))) ++end;
    for (; end > digits; --end)
      if (bind(name, Value(int64_t(std::stoll(title_.substr(pos, end - pos)))), end, next)) return true;
    return false;
  }

  const std::string& title_;
  const std::string& op_;
  const std::function<const AxisSpec*(const std::string&)>& axis_;
  Params& bound_;
};

}  // namespace

TitleTemplate::TitleTemplate(const std::string& text) : text_(text), nodes_(TemplateParser(text).parse()) {}

std::vector<std::string> TitleTemplate::axes() const {
  std::vector<std::string> out;
  collect_axes(nodes_, out);
  return out;
}

std::string TitleTemplate::render(const std::string& op, const Params& p) const {
  std::string out;
  render_nodes(nodes_, op, p, out);
  return out;
}

bool TitleTemplate::parse(const std::string& title, const std::string& op,
                          const std::function<const AxisSpec*(const std::string&)>& axis,
                          const std::function<bool(const Params&)>& accept, Params* out) const {
  Params bound;
  Matcher m(title, op, axis, bound);
  const bool ok = m.match(nodes_, 0, 0, [&](size_t pos) { return pos == title.size() && accept(bound); });
  if (ok) *out = bound;
  return ok;
}

}  // namespace opbench

#include "core/pattern.hpp"

#include <algorithm>
#include <memory>

namespace opbench {

namespace {

using Set = std::bitset<256>;

// The expression read into a tree: a set of bytes, an anchor, a sequence, a choice or a repeat.
struct Node {
  enum Kind { Bytes, Begin, End, Cat, Alt, Repeat } kind;
  Set set;
  std::vector<std::unique_ptr<Node>> kids;
  int min = 0, max = 0;  // Repeat; max -1: no bound
};
using NodePtr = std::unique_ptr<Node>;

NodePtr node(Node::Kind k) {
  auto n = std::make_unique<Node>();
  n->kind = k;
  return n;
}

Set class_of(char c) {  // \d \w \s and their complements
  Set s;
  const char lower = char(c | 0x20);
  for (int i = 0; i < 256; ++i) {
    const bool digit = i >= '0' && i <= '9';
    const bool word = digit || (i >= 'a' && i <= 'z') || (i >= 'A' && i <= 'Z') || i == '_';
    const bool space = i == ' ' || (i >= '\t' && i <= '\r');
    s[size_t(i)] = lower == 'd' ? digit : lower == 'w' ? word : space;
  }
  return c == lower ? s : ~s;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') return (c | 0x20) - 'a' + 10;
  return -1;
}

class Parser {
 public:
  explicit Parser(const std::string& s) : s_(s) {}

  NodePtr parse() {
    NodePtr n = alternation();
    if (i_ < s_.size()) fail("unmatched ')'");
    return n;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw PatternError(why + " at offset " + std::to_string(i_));
  }
  bool more() const { return i_ < s_.size(); }
  char peek() const { return s_[i_]; }

  NodePtr alternation() {
    if (++depth_ > 100) fail("groups nested more than 100 deep");
    NodePtr first = sequence();
    if (!more() || peek() != '|') {
      --depth_;
      return first;
    }
    NodePtr alt = node(Node::Alt);
    alt->kids.push_back(std::move(first));
    while (more() && peek() == '|') ++i_, alt->kids.push_back(sequence());
    --depth_;
    return alt;
  }

  NodePtr sequence() {
    NodePtr cat = node(Node::Cat);
    while (more() && peek() != '|' && peek() != ')') cat->kids.push_back(quantified(atom()));
    return cat;
  }

  NodePtr quantified(NodePtr a) {
    while (more()) {
      const char c = peek();
      int lo = 0, hi = -1;
      if (c == '*') lo = 0, hi = -1, ++i_;
      else if (c == '+') lo = 1, hi = -1, ++i_;
      else if (c == '?') lo = 0, hi = 1, ++i_;
      else if (c == '{') braces(&lo, &hi);
      else break;
      if (a->kind == Node::Begin || a->kind == Node::End) fail("nothing to repeat");
      if (more() && peek() == '?') ++i_;  // lazy: matches the same texts
      NodePtr r = node(Node::Repeat);
      r->min = lo, r->max = hi;
      r->kids.push_back(std::move(a));
      a = std::move(r);
    }
    return a;
  }

  int number() {
    const size_t start = i_;
    long v = 0;
    while (more() && peek() >= '0' && peek() <= '9') v = std::min<long>(v * 10 + (s_[i_++] - '0'), 1L << 20);
    if (i_ == start) fail("a number expected in {m,n}");
    if (v > Pattern::kMaxRepeat) fail("a repeat count over " + std::to_string(Pattern::kMaxRepeat));
    return int(v);
  }

  void braces(int* lo, int* hi) {
    ++i_;
    *lo = number();
    *hi = *lo;
    if (more() && peek() == ',') {
      ++i_;
      *hi = more() && peek() == '}' ? -1 : number();
    }
    if (!more() || peek() != '}') fail("'}' expected");
    ++i_;
    if (*hi >= 0 && *hi < *lo) fail("{m,n} with n less than m");
  }

  NodePtr atom() {
    const char c = s_[i_++];
    switch (c) {
      case '(': return group();
      case '[': return bytes(bracket());
      case '.': return bytes(~Set().set('\n').set('\r'));
      case '^': return node(Node::Begin);
      case '$': return node(Node::End);
      case '\\': return bytes(escape(false));
      case '*': case '+': case '?': case '{':
        --i_;
        fail("nothing to repeat");
      default: return bytes(Set().set(size_t(uint8_t(c))));
    }
  }

  static NodePtr bytes(const Set& s) {
    NodePtr n = node(Node::Bytes);
    n->set = s;
    return n;
  }

  NodePtr group() {
    if (more() && peek() == '?') {
      if (i_ + 1 < s_.size() && s_[i_ + 1] == ':') i_ += 2;
      else fail("look-around and named groups are not supported");
    }
    NodePtr n = alternation();
    if (!more() || peek() != ')') fail("missing ')'");
    ++i_;
    return n;
  }

  // After a backslash (inside a class when `in_class`): the bytes it stands for.
  Set escape(bool in_class) {
    if (!more()) fail("a trailing backslash");
    const char c = s_[i_++];
    const char lower = char(c | 0x20);
    if (lower == 'd' || lower == 'w' || lower == 's') return class_of(c);
    const std::string simple = "t\tn\nr\rf\fv\v";
    for (size_t k = 0; k < simple.size(); k += 2)
      if (c == simple[k]) return Set().set(size_t(uint8_t(simple[k + 1])));
    if (c == 'x') {
      const int h = i_ + 1 < s_.size() ? hex_digit(s_[i_]) : -1, l = h >= 0 ? hex_digit(s_[i_ + 1]) : -1;
      if (l < 0) fail("\\x needs two hex digits");
      i_ += 2;
      return Set().set(size_t(h * 16 + l));
    }
    if (c == 'b' && in_class) return Set().set('\b');
    if ((c >= '0' && c <= '9') || (lower >= 'a' && lower <= 'z'))
      fail(std::string("\\") + c + " is not supported");
    return Set().set(size_t(uint8_t(c)));
  }

  // After '[': the class up to its ']'.
  Set bracket() {
    Set s;
    const bool negate = more() && peek() == '^';
    if (negate) ++i_;
    while (true) {
      if (!more()) fail("missing ']'");
      if (peek() == ']') break;
      const bool esc = peek() == '\\';
      ++i_;
      Set lo = esc ? escape(true) : Set().set(size_t(uint8_t(s_[i_ - 1])));
      if (lo.count() == 1 && i_ + 1 < s_.size() && peek() == '-' && s_[i_ + 1] != ']') {
        ++i_;
        const bool esc2 = peek() == '\\';
        ++i_;
        Set hi = esc2 ? escape(true) : Set().set(size_t(uint8_t(s_[i_ - 1])));
        if (hi.count() != 1) fail("a range ends in a class");
        size_t a = 0, b = 0;
        while (!lo[a]) ++a;
        while (!hi[b]) ++b;
        if (b < a) fail("a range out of order");
        for (size_t k = a; k <= b; ++k) lo.set(k);
      }
      s |= lo;
    }
    ++i_;
    return negate ? ~s : s;
  }

  const std::string& s_;
  size_t i_ = 0;
  int depth_ = 0;
};

}  // namespace

// The tree compiled to the automaton's instructions.
class PatternCompiler {
 public:
  explicit PatternCompiler(Pattern* p) : p_(p) {}

  void emit(const Node& n) {
    switch (n.kind) {
      case Node::Bytes:
        p_->sets_.push_back(n.set);
        add({Pattern::Op::Set, int(p_->sets_.size() - 1), 0});
        break;
      case Node::Begin: add({Pattern::Op::Begin}); break;
      case Node::End: add({Pattern::Op::End}); break;
      case Node::Cat:
        for (const auto& k : n.kids) emit(*k);
        break;
      case Node::Alt: alternatives(n); break;
      case Node::Repeat: repeat(n); break;
    }
  }

  void finish() { add({Pattern::Op::Match}); }

 private:
  size_t add(Pattern::Inst in) {
    if (p_->prog_.size() >= Pattern::kMaxProgram)
      throw PatternError("the expression is too large (over " + std::to_string(Pattern::kMaxProgram) +
                         " states with its repeats counted out)");
    p_->prog_.push_back(in);
    return p_->prog_.size() - 1;
  }
  int here() const { return int(p_->prog_.size()); }

  void alternatives(const Node& n) {
    std::vector<size_t> jumps;
    for (size_t k = 0; k < n.kids.size(); ++k) {
      if (k + 1 == n.kids.size()) {
        emit(*n.kids[k]);
        break;
      }
      const size_t split = add({Pattern::Op::Split});
      p_->prog_[split].a = here();
      emit(*n.kids[k]);
      jumps.push_back(add({Pattern::Op::Jump}));
      p_->prog_[split].b = here();
    }
    for (size_t j : jumps) p_->prog_[j].a = here();
  }

  void repeat(const Node& n) {
    const Node& body = *n.kids[0];
    for (int k = 0; k < n.min; ++k) emit(body);
    if (n.max < 0) {
      const size_t split = add({Pattern::Op::Split});
      p_->prog_[split].a = here();
      emit(body);
      add({Pattern::Op::Jump, int(split), 0});
      p_->prog_[split].b = here();
      return;
    }
    std::vector<size_t> splits;
    for (int k = n.min; k < n.max; ++k) {
      splits.push_back(add({Pattern::Op::Split}));
      p_->prog_[splits.back()].a = here();
      emit(body);
    }
    for (size_t s : splits) p_->prog_[s].b = here();
  }

  Pattern* p_;
};

Pattern::Pattern(const std::string& expression) {
  if (expression.size() > kMaxLength)
    throw PatternError("longer than " + std::to_string(kMaxLength) + " characters");
  NodePtr tree = Parser(expression).parse();
  PatternCompiler c(this);
  c.emit(*tree);
  c.finish();
}

namespace {

// The states reachable from `pc` without reading a byte, added to `list` (each once per step:
// `mark[state] == step`); an explicit stack, so no expression can exhaust the call stack.
void follow(const std::vector<Pattern::Inst>& prog, int pc, size_t pos, size_t n, std::vector<int>* list,
            std::vector<size_t>* mark, size_t step, std::vector<int>* stack) {
  stack->push_back(pc);
  while (!stack->empty()) {
    const int s = stack->back();
    stack->pop_back();
    if ((*mark)[size_t(s)] == step) continue;
    (*mark)[size_t(s)] = step;
    const Pattern::Inst& in = prog[size_t(s)];
    switch (in.op) {
      case Pattern::Op::Split: stack->push_back(in.b), stack->push_back(in.a); break;
      case Pattern::Op::Jump: stack->push_back(in.a); break;
      case Pattern::Op::Begin: if (pos == 0) stack->push_back(s + 1); break;
      case Pattern::Op::End: if (pos == n) stack->push_back(s + 1); break;
      default: list->push_back(s);
    }
  }
}

}  // namespace

bool Pattern::search(const std::string& text) const {
  if (prog_.empty()) return true;
  const size_t n = text.size();
  std::vector<int> cur, next, stack;
  std::vector<size_t> mark(prog_.size(), 0);
  size_t step = 0;
  for (size_t pos = 0;; ++pos) {
    ++step;
    next.clear();
    // a match may start at any position: the first state joins every step
    for (int s : cur) {
      const Inst& in = prog_[size_t(s)];
      if (in.op == Op::Set && sets_[size_t(in.a)][uint8_t(text[pos - 1])]) follow(prog_, s + 1, pos, n, &next, &mark, step, &stack);
    }
    follow(prog_, 0, pos, n, &next, &mark, step, &stack);
    for (int s : next)
      if (prog_[size_t(s)].op == Op::Match) return true;
    if (pos == n) return false;
    cur.swap(next);
  }
}

}  // namespace opbench

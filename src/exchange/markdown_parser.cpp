// Parser of reference-format markdown documents. Torch-free.
#include "exchange/markdown_parser.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>
#include <string_view>
#include <unordered_set>

#include "core/error.hpp"
#include "core/text.hpp"

namespace opbench {
namespace {

// A line of the text: a view into it, without its line break (nor a '\r' before that).
struct Line {
  int no = 0;  // 1-based
  std::string_view text;
};

// A place in the text: the start of a line. Lines are read in turn without being copied
// (a document is read in time and memory linear in its size).
struct Cursor {
  size_t pos = 0;
  int no = 1;
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }
bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

std::string_view rtrim(std::string_view s) {
  size_t e = s.size();
  while (e > 0 && is_space(s[e - 1])) --e;
  return s.substr(0, e);
}

bool is_blank(std::string_view s) { return trim(s).empty(); }

// A title line: "TITLE:" at the start of its line (a row starts with its row label and ends
// in a number; a header starts with a space).
bool is_title(std::string_view s) {
  const std::string_view t = rtrim(s);
  return t.size() >= 2 && !is_space(t[0]) && t.back() == ':';
}

// The whitespace-separated words of `s`, as views into it, into `out`.
void split_ws(std::string_view s, std::vector<std::string_view>* out) {
  out->clear();
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && is_space(s[i])) ++i;
    size_t b = i;
    while (i < s.size() && !is_space(s[i])) ++i;
    if (i > b) out->push_back(s.substr(b, i - b));
  }
}

[[noreturn]] void fail(const std::string& path, int line, const std::string& message) {
  throw InputError(path + ":" + std::to_string(line), "", message);
}

// Up to three spaces of indentation, as CommonMark allows for headings and fences.
size_t indent_of(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && i < 4 && s[i] == ' ') ++i;
  return i;
}

// An ATX heading: level 1-6 and its text, or level 0.
int heading_of(std::string_view s, std::string* text) {
  size_t i = indent_of(s);
  if (i > 3) return 0;
  size_t b = i;
  while (i < s.size() && s[i] == '#') ++i;
  int level = static_cast<int>(i - b);
  if (level < 1 || level > 6) return 0;
  if (i < s.size() && !is_space(s[i])) return 0;
  std::string_view t = trim(s.substr(i));
  // An optional closing sequence of '#'s (preceded by a space) is not part of the text.
  size_t e = t.size();
  while (e > 0 && t[e - 1] == '#') --e;
  if (e < t.size() && (e == 0 || is_space(t[e - 1]))) t = trim(t.substr(0, e));
  *text = std::string(t);
  return level;
}

// A fence line: the fence character and run length (0 if not a fence) and the info string.
size_t fence_of(std::string_view s, char* ch, std::string* info) {
  size_t i = indent_of(s);
  if (i > 3 || i >= s.size() || (s[i] != '`' && s[i] != '~')) return 0;
  char c = s[i];
  size_t b = i;
  while (i < s.size() && s[i] == c) ++i;
  if (i - b < 3) return 0;
  *ch = c;
  *info = std::string(trim(s.substr(i)));
  return i - b;
}

// A line closing a fence of `run` characters `ch`.
bool closes_fence(std::string_view s, char ch, size_t run) {
  size_t i = indent_of(s);
  if (i > 3) return false;
  size_t b = i;
  while (i < s.size() && s[i] == ch) ++i;
  return i - b >= run && is_blank(s.substr(i));
}

bool parse_number(std::string_view tok, double* out) {
  if (tok == "NaN" || tok == "nan") {
    *out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (tok == "inf") {
    *out = std::numeric_limits<double>::infinity();
    return true;
  }
  if (tok == "-inf") {
    *out = -std::numeric_limits<double>::infinity();
    return true;
  }
  if (tok.empty()) return false;
  bool digit = false;
  for (char c : tok) {
    if (c >= '0' && c <= '9') {
      digit = true;
    } else if (c != '.' && c != '-' && c != '+' && c != 'e' && c != 'E') {
      return false;
    }
  }
  if (!digit) return false;
  const char* first = tok.data();
  const char* last = tok.data() + tok.size();
  double v = 0;
  auto res = std::from_chars(first, last, v, std::chars_format::general);
  if (res.ec != std::errc() || res.ptr != last) return false;
  *out = v;
  return true;
}

// Whether `tok` is the row label `row` (pandas' RangeIndex: 0, 1, 2 ...).
bool is_row_label(std::string_view tok, size_t row) {
  char buf[24];
  const auto res = std::to_chars(buf, buf + sizeof buf, row);
  return tok == std::string_view(buf, size_t(res.ptr - buf));
}

class Parser {
 public:
  Parser(const std::string& text, const std::string& path, DocumentVisitor& v) : text_(text), path_(path), v_(v) {}

  std::vector<std::string> run() {
    scan(false);  // the Notation list first, wherever it stands: every table's columns read against it
    v_.notation(notation_);
    scan(true);
    return gpus_;
  }

 private:
  // The line at `c` into `ln`, `c` moved past it; false at the end of the text.
  bool next(Cursor& c, Line* ln) const {
    if (c.pos > text_.size()) return false;
    const size_t nl = text_.find('\n', c.pos);
    if (nl == std::string::npos && c.pos == text_.size()) return false;
    const size_t end = nl == std::string::npos ? text_.size() : nl;
    std::string_view t(text_.data() + c.pos, end - c.pos);
    if (!t.empty() && t.back() == '\r') t.remove_suffix(1);
    *ln = {c.no++, t};
    c.pos = nl == std::string::npos ? text_.size() + 1 : nl + 1;
    return true;
  }

  // The line at `c` without moving past it, when it lies before `end`.
  bool peek(Cursor c, const Cursor& end, Line* ln) const { return c.pos < end.pos && next(c, ln); }

  // One pass over the document: headings and fences, and either the Notation list (`tables`
  // false) or the tables.
  void scan(bool tables) {
    headings_.clear();
    gpu_.clear();
    run_line_.clear();
    bool in_notation = false;
    Cursor c;
    Line ln;
    while (next(c, &ln)) {
      char ch = 0;
      std::string info, htext;
      if (size_t run = fence_of(ln.text, &ch, &info)) {
        in_notation = false;
        c = fenced_block(ln, c, ch, run, info, tables);
      } else if (int level = heading_of(ln.text, &htext)) {
        heading(level, htext, c, tables);
        in_notation = to_lower(htext) == "notation";
      } else if (in_notation && !tables && !is_blank(ln.text) && !notation_item(ln)) {
        // The Notation list is the run of list items after its heading: any other line (a
        // fence included, above) ends it.
        in_notation = false;
      }
    }
  }

  // A heading at level `level`; `after`: the line after it.
  void heading(int level, const std::string& htext, const Cursor& after, bool tables) {
    while (!headings_.empty() && headings_.back().first >= level) headings_.pop_back();
    headings_.emplace_back(level, htext);
    const std::string run = run_line_after(after);
    if (!run.empty() && htext.empty() && tables)
      fail(path_, after.no - 1, "the run heading above '" + run.substr(0, 40) + "' names no GPU");
    const std::string dev = run.empty() ? device_in_text(htext) : htext;
    if (dev.empty()) return;
    gpu_ = dev;
    run_line_ = run;
    if (tables && std::find(gpus_.begin(), gpus_.end(), dev) == gpus_.end()) gpus_.push_back(dev);
  }

  // The first non-blank line from `c` when it is an opbench run line ("run 3, ..." or
  // "run 3 (label), ..."), else "".
  std::string run_line_after(Cursor c) const {
    Line ln;
    bool found = false;
    while (!found && next(c, &ln)) found = !is_blank(ln.text);
    if (!found) return "";
    const std::string_view t = trim(ln.text);
    size_t k = 4;
    if (t.substr(0, 4) != "run " || k >= t.size() || !std::isdigit(static_cast<unsigned char>(t[k]))) return "";
    while (k < t.size() && std::isdigit(static_cast<unsigned char>(t[k]))) ++k;
    return k < t.size() && (t[k] == ',' || t[k] == ' ') ? std::string(t) : "";
  }

  // Reads a list item of the Notation list; false when the line is no list item.
  bool notation_item(const Line& ln) {
    const std::string t(trim(ln.text));
    if (t.size() < 2 || (t[0] != '-' && t[0] != '*' && t[0] != '+') || !is_space(t[1])) return false;
    const std::string item(trim(std::string_view(t).substr(2)));
    size_t colon = item.find(':');
    std::string label = colon == std::string::npos ? "" : std::string(trim(std::string_view(item).substr(0, colon)));
    std::string desc = colon == std::string::npos ? "" : std::string(trim(std::string_view(item).substr(colon + 1)));
    if (label.empty() || desc.empty())
      fail(path_, ln.no, "notation item must read '- label: description', got '" + t + "'");
    for (const std::string* name : {&label, &desc})
      if (!name_problem(*name).empty())
        fail(path_, ln.no, "notation item '" + t + "': '" + *name + "' " + name_problem(*name));
    if (!notation_labels_.insert(to_lower(label)).second)
      fail(path_, ln.no, "notation label '" + label + "' is defined twice");
    notation_.emplace_back(label, desc);
    return true;
  }

  // The fence opened by `open` (the body starts at `body`); returns the cursor past its
  // closing line. The tables in it are read when `tables`.
  Cursor fenced_block(const Line& open, const Cursor& body, char ch, size_t run, const std::string& info, bool tables) {
    Cursor c = body, close = body;
    Line ln;
    bool closed = false;
    while (!closed && next(c, &ln)) {
      closed = closes_fence(ln.text, ch, run);
      if (!closed) close = c;
    }
    if (!closed) {
      if (tables) fail(path_, open.no, "code fence opened here is never closed");
      return c;  // the rest of the document is in the fence: no notation there
    }
    const std::string lang = to_lower(info);
    if (!tables || (!lang.empty() && lang != "text" && lang != "txt")) return c;
    Cursor first = body;
    while (peek(first, close, &ln) && is_blank(ln.text)) next(first, &ln);
    if (peek(first, close, &ln) && rtrim(ln.text).back() == ':') tables_in(first, close);
    return c;
  }

  // Reads the tables in the lines from `c` up to `end`.
  void tables_in(Cursor c, const Cursor& end) {
    Line ln;
    while (peek(c, end, &ln)) {
      next(c, &ln);
      if (is_blank(ln.text)) continue;
      if (!is_title(ln.text))
        fail(path_, ln.no, "expected a table title line 'TITLE:', got '" + std::string(rtrim(ln.text)) + "'");
      c = table(ln, c, end);
    }
  }

  // A table whose title line is `title_ln` (its header at `c`); returns the cursor past it.
  Cursor table(const Line& title_ln, Cursor c, const Cursor& end) {
    TableHead h;
    const std::string_view title = rtrim(title_ln.text);
    h.title = std::string(title.substr(0, title.size() - 1));
    h.line = title_ln.no;
    h.gpu = gpu_;
    h.run_line = run_line_;
    for (const auto& hd : headings_) h.headings.push_back(hd.second);
    Line header, first;
    if (!peek(c, end, &header) || is_blank(header.text) || is_title(header.text))
      fail(path_, title_ln.no, "table '" + h.title + "' has no header line");
    next(c, &header);
    std::vector<std::string> names;
    h.empty = trim(header.text) == "Empty DataFrame";
    if (h.empty) {
      c = empty_frame(header, c, end, &names);
      if (peek(c, end, &first) && !is_blank(first.text) && !is_title(first.text))
        fail(path_, first.no, "unexpected line after an empty table: '" + std::string(first.text) + "'");
    } else {
      if (!is_space(header.text[0]))
        fail(path_, header.no,
             "expected the header of table '" + h.title + "' (column names after the blank index header), got '" +
                 std::string(header.text) + "'");
      const bool rows = peek(c, end, &first) && !is_blank(first.text) && !is_title(first.text);
      if (!rows) fail(path_, header.no, "table '" + h.title + "' has no rows");
      names = header_names(h.title, header, first);
    }
    if (names.size() > kMaxTableColumns + 1)  // an empty frame's list
      fail(path_, header.no,
           "table '" + h.title + "' has " + std::to_string(names.size() - 1) + " columns, more than the " +
               std::to_string(kMaxTableColumns) + " a table may have");
    std::unordered_set<std::string_view> seen;
    for (const auto& n : names)
      if (!seen.insert(n).second) fail(path_, header.no, "table '" + h.title + "' has column '" + n + "' twice");
    h.index_name = names[0];
    h.columns.assign(std::make_move_iterator(names.begin() + 1), std::make_move_iterator(names.end()));
    v_.table(h);
    if (!h.empty) c = rows(h, c, end);
    v_.end_table(h);
    return c;
  }

  // The rows of table `h` from `c` to the first blank line, title line or `end`.
  Cursor rows(const TableHead& h, Cursor c, const Cursor& end) {
    const size_t n = h.columns.size() + 1;  // the x axis and the columns
    std::vector<std::string_view> tok;
    std::vector<double> vals(n), cells(h.columns.size());
    Line ln;
    for (size_t row = 0; peek(c, end, &ln) && !is_blank(ln.text) && !is_title(ln.text); ++row) {
      next(c, &ln);
      split_ws(ln.text, &tok);
      if (tok.size() != n + 1)
        fail(path_, ln.no,
             "table '" + h.title + "' row " + std::to_string(row) + " has " + std::to_string(tok.size()) +
                 " cells, expected " + std::to_string(n + 1) + " (row label and " + std::to_string(n) + " columns)");
      if (!is_row_label(tok[0], row))
        fail(path_, ln.no,
             "table '" + h.title + "': row label '" + std::string(tok[0]) + "', expected '" + std::to_string(row) + "'");
      for (size_t k = 0; k < n; ++k)
        if (!parse_number(tok[k + 1], &vals[k]))
          fail(path_, ln.no,
               "table '" + h.title + "': cannot parse '" + std::string(tok[k + 1]) + "' in column '" +
                   (k ? h.columns[k - 1] : h.index_name) + "' as a number");
      std::copy(vals.begin() + 1, vals.end(), cells.begin());
      v_.row(h, ln.no, vals[0], cells);
    }
    return c;
  }

  // The column names of a table's header (the x axis first). Its words, unless there are more
  // of them than the first row has columns (names with spaces): then the header cut at the
  // columns' right edges (the ends of the first row's cells, where pandas right-aligns each
  // name), every name with a space in it checked against the Notation list.
  std::vector<std::string> header_names(const std::string& title, const Line& header, const Line& first_row) const {
    std::vector<std::string_view> word_views;
    split_ws(header.text, &word_views);
    if (word_views.size() > kMaxTableColumns + 1)
      fail(path_, header.no,
           "table '" + title + "' has " + std::to_string(word_views.size() - 1) + " columns, more than the " +
               std::to_string(kMaxTableColumns) + " a table may have");
    std::vector<std::string> words(word_views.begin(), word_views.end());
    std::vector<size_t> edges;  // the end of each cell of the first row
    const std::string_view first = first_row.text;
    for (size_t k = 0; k < first.size();) {
      while (k < first.size() && is_space(first[k])) ++k;
      while (k < first.size() && !is_space(first[k])) ++k;
      if (k > 0 && !is_space(first[k - 1])) edges.push_back(k);
    }
    if (edges.size() < 2 || words.size() + 1 <= edges.size()) return words;  // no name with a space
    const std::string_view h = rtrim(header.text);
    std::vector<std::string> names;
    for (size_t c = 1; c < edges.size(); ++c) {
      const size_t from = edges[c - 1], to = std::min(edges[c], h.size());
      const std::string name(from < to ? trim(h.substr(from, to - from)) : std::string_view());
      if (name.empty() || h.size() != edges.back())
        fail(path_, header.no,
             "table '" + title + "': the header '" + std::string(h) + "' has " + std::to_string(words.size()) +
                 " words for " + std::to_string(edges.size() - 1) +
                 " columns and its names do not end where the columns do");
      if (name.find(' ') != std::string::npos && !notation_labels_.count(to_lower(name)))
        fail(path_, header.no,
             "table '" + title + "': column '" + name +
                 "' (read from the columns' right edges) is not a label of the Notation list");
      names.push_back(name);
    }
    return names;
  }

  // pandas' "Empty DataFrame\nColumns: [a, b]\nIndex: []" whose first line is `first` (the
  // rest at `c`); returns the cursor past it.
  Cursor empty_frame(const Line& first, Cursor c, const Cursor& end, std::vector<std::string>* names) const {
    Line cols_ln, index_ln;
    if (!peek(c, end, &cols_ln) || !next(c, &cols_ln) || !peek(c, end, &index_ln))
      fail(path_, first.no, "incomplete 'Empty DataFrame' table");
    next(c, &index_ln);
    const std::string cols(trim(cols_ln.text));
    const std::string pre = "Columns: [";
    if (cols.compare(0, pre.size(), pre) != 0 || cols.back() != ']')
      fail(path_, cols_ln.no, "expected 'Columns: [...]', got '" + cols + "'");
    const std::string inner = cols.substr(pre.size(), cols.size() - pre.size() - 1);
    size_t start = 0;
    while (true) {
      size_t comma = inner.find(", ", start);
      const std::string name(
          trim(std::string_view(inner).substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
      if (name.empty()) fail(path_, cols_ln.no, "bad column name '" + name + "' in '" + cols + "'");
      names->push_back(name);
      if (comma == std::string::npos) break;
      start = comma + 2;
    }
    if (trim(index_ln.text) != "Index: []")
      fail(path_, index_ln.no, "expected 'Index: []', got '" + std::string(index_ln.text) + "'");
    return c;
  }

  const std::string& text_;
  const std::string& path_;
  DocumentVisitor& v_;
  std::vector<std::pair<int, std::string>> headings_;
  std::string gpu_;
  std::string run_line_;  // the run line of the current opbench report run, or ""
  std::vector<std::pair<std::string, std::string>> notation_;
  std::set<std::string> notation_labels_;  // lower case
  std::vector<std::string> gpus_;
};

// Keeps every table of a document (parse_document).
class Collector final : public DocumentVisitor {
 public:
  ParsedDocument doc;
  void notation(const std::vector<std::pair<std::string, std::string>>& items) override { doc.notation = items; }
  void table(const TableHead& h) override {
    ParsedTable pt;
    pt.table.title = h.title;
    pt.table.index_name = h.index_name;
    pt.table.columns = h.columns;
    pt.line = h.line;
    pt.gpu = h.gpu;
    pt.headings = h.headings;
    pt.run_line = h.run_line;
    doc.tables.push_back(std::move(pt));
  }
  void row(const TableHead&, int, double x, const std::vector<double>& cells) override {
    doc.tables.back().table.index.push_back(x);
    doc.tables.back().table.cells.push_back(cells);
  }
};

// Device names matched case-insensitively; a space matches any run of spaces or '-', or
// nothing ("RTX4090"). Longer names first where one is a prefix of another.
const char* const kKnownDevices[] = {
    "RTX 6000 Ada", "RTX A6000", "RTX A5000", "RTX 4090", "RTX 4080", "RTX 3090", "RTX 3080",
    "GH200",        "GB200",     "MI300X",    "MI325X",   "MI300A",   "MI250X",   "MI250",
    "MI210",        "MI100",     "A10G",      "V100",     "P100",     "T4",       "L4"};

// Length of the match of `name` at text[pos], or 0.
size_t match_known(const std::string& text, size_t pos, const std::string& name) {
  size_t i = pos;
  for (size_t k = 0; k < name.size(); ++k) {
    if (name[k] == ' ') {
      while (i < text.size() && (text[i] == ' ' || text[i] == '-')) ++i;
      continue;
    }
    if (i >= text.size() || lower(text[i]) != lower(name[k])) return 0;
    ++i;
  }
  if (i < text.size() && is_alnum(text[i])) return 0;
  return i - pos;
}

// [ABHL]\d{2,3}S? as a whole word at text[pos]; length or 0.
size_t match_pattern(const std::string& text, size_t pos) {
  char c = text[pos];
  if (c != 'A' && c != 'B' && c != 'H' && c != 'L') return 0;
  size_t i = pos + 1;
  while (i < text.size() && i - pos <= 3 && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  size_t digits = i - pos - 1;
  if (digits < 2 || digits > 3) return 0;
  if (i < text.size() && text[i] == 'S') ++i;
  if (i < text.size() && is_alnum(text[i])) return 0;
  return i - pos;
}

}  // namespace

std::string device_in_text(const std::string& text) {
  for (size_t pos = 0; pos < text.size(); ++pos) {
    if (pos > 0 && is_alnum(text[pos - 1])) continue;
    if (!is_alnum(text[pos])) continue;
    for (const char* name : kKnownDevices) {
      if (match_known(text, pos, name)) return name;
    }
    if (size_t n = match_pattern(text, pos)) return text.substr(pos, n);
  }
  return "";
}

const std::string* notation_for(const ParsedDocument& doc, const std::string& column) {
  const std::string key = to_lower(column);
  for (const auto& kv : doc.notation) {
    if (to_lower(kv.first) == key) return &kv.second;
  }
  return nullptr;
}

std::vector<std::string> read_document_tables(const std::string& text, const std::string& path,
                                              DocumentVisitor& visitor) {
  return Parser(text, path, visitor).run();
}

ParsedDocument parse_document(const std::string& text, const std::string& path) {
  Collector c;
  c.doc.gpus = read_document_tables(text, path, c);
  return std::move(c.doc);
}

}  // namespace opbench

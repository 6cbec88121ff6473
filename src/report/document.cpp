// Parser of reference-format markdown documents. Torch-free.
#include "report/document.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>

#include "core/error.hpp"
#include "core/text.hpp"

namespace opbench {
namespace {

struct Line {
  int no;            // 1-based
  std::string text;  // without the line break (and without a trailing '\r')
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }
bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && is_space(s[b])) ++b;
  while (e > b && is_space(s[e - 1])) --e;
  return s.substr(b, e - b);
}

std::string rtrim(const std::string& s) {
  size_t e = s.size();
  while (e > 0 && is_space(s[e - 1])) --e;
  return s.substr(0, e);
}

bool is_blank(const std::string& s) { return trim(s).empty(); }

std::vector<std::string> split_ws(const std::string& s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && is_space(s[i])) ++i;
    size_t b = i;
    while (i < s.size() && !is_space(s[i])) ++i;
    if (i > b) out.push_back(s.substr(b, i - b));
  }
  return out;
}

[[noreturn]] void fail(const std::string& path, int line, const std::string& message) {
  throw InputError(path + ":" + std::to_string(line), "", message);
}

// Up to three spaces of indentation, as CommonMark allows for headings and fences.
size_t indent_of(const std::string& s) {
  size_t i = 0;
  while (i < s.size() && i < 4 && s[i] == ' ') ++i;
  return i;
}

// An ATX heading: level 1-6 and its text, or level 0.
int heading_of(const std::string& s, std::string* text) {
  size_t i = indent_of(s);
  if (i > 3) return 0;
  size_t b = i;
  while (i < s.size() && s[i] == '#') ++i;
  int level = static_cast<int>(i - b);
  if (level < 1 || level > 6) return 0;
  if (i < s.size() && !is_space(s[i])) return 0;
  std::string t = trim(s.substr(i));
  // An optional closing sequence of '#'s (preceded by a space) is not part of the text.
  size_t e = t.size();
  while (e > 0 && t[e - 1] == '#') --e;
  if (e < t.size() && (e == 0 || is_space(t[e - 1]))) t = trim(t.substr(0, e));
  *text = t;
  return level;
}

// A fence line: the fence character and run length (0 if not a fence) and the info string.
size_t fence_of(const std::string& s, char* ch, std::string* info) {
  size_t i = indent_of(s);
  if (i > 3 || i >= s.size() || (s[i] != '`' && s[i] != '~')) return 0;
  char c = s[i];
  size_t b = i;
  while (i < s.size() && s[i] == c) ++i;
  if (i - b < 3) return 0;
  *ch = c;
  *info = trim(s.substr(i));
  return i - b;
}

bool parse_number(const std::string& tok, double* out) {
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

class Parser {
 public:
  Parser(const std::string& text, const std::string& path) : path_(path) {
    size_t start = 0;
    int no = 1;
    while (start <= text.size()) {
      size_t nl = text.find('\n', start);
      std::string l = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
      if (!l.empty() && l.back() == '\r') l.pop_back();
      if (nl == std::string::npos) {
        if (!l.empty()) lines_.push_back({no, l});
        break;
      }
      lines_.push_back({no++, l});
      start = nl + 1;
    }
  }

  ParsedDocument run() {
    bool in_notation = false;
    std::set<std::string> labels;
    for (size_t i = 0; i < lines_.size(); ++i) {
      const Line& ln = lines_[i];
      char ch = 0;
      std::string info;
      size_t run = fence_of(ln.text, &ch, &info);
      if (run) {
        in_notation = false;
        i = fenced_block(i, ch, run, info);
        continue;
      }
      std::string htext;
      if (int level = heading_of(ln.text, &htext)) {
        while (!headings_.empty() && headings_.back().first >= level) headings_.pop_back();
        headings_.emplace_back(level, htext);
        in_notation = to_lower(htext) == "notation";
        const std::string run = run_line_after(i);
        const std::string dev = run.empty() ? device_in_text(htext) : htext;
        if (!dev.empty()) {
          gpu_ = dev;
          run_line_ = run;
          bool seen = false;
          for (const auto& g : doc_.gpus) seen = seen || g == dev;
          if (!seen) doc_.gpus.push_back(dev);
        }
        continue;
      }
      // The Notation list is the run of list items after its heading: any other line (a
      // fence included, above) ends it.
      if (in_notation && !is_blank(ln.text) && !notation_item(ln, &labels)) in_notation = false;
    }
    return std::move(doc_);
  }

 private:
  // The line after the heading at lines_[i] when it is an opbench run line ("run 3, ..." or
  // "run 3 (label), ..."), else "".
  std::string run_line_after(size_t i) const {
    size_t j = i + 1;
    while (j < lines_.size() && is_blank(lines_[j].text)) ++j;
    if (j >= lines_.size()) return "";
    const std::string t = trim(lines_[j].text);
    size_t k = 4;
    if (t.compare(0, 4, "run ") != 0 || k >= t.size() || !std::isdigit(static_cast<unsigned char>(t[k]))) return "";
    while (k < t.size() && std::isdigit(static_cast<unsigned char>(t[k]))) ++k;
    return k < t.size() && (t[k] == ',' || t[k] == ' ') ? t : "";
  }

  // Reads a list item of the Notation list; false when the line is no list item.
  bool notation_item(const Line& ln, std::set<std::string>* labels) {
    std::string t = trim(ln.text);
    if (t.size() < 2 || (t[0] != '-' && t[0] != '*' && t[0] != '+') || !is_space(t[1])) return false;
    std::string item = trim(t.substr(2));
    size_t colon = item.find(':');
    std::string label = colon == std::string::npos ? "" : trim(item.substr(0, colon));
    std::string desc = colon == std::string::npos ? "" : trim(item.substr(colon + 1));
    if (label.empty() || desc.empty())
      fail(path_, ln.no, "notation item must read '- label: description', got '" + t + "'");
    for (const std::string* name : {&label, &desc})
      if (!name_problem(*name).empty())
        fail(path_, ln.no, "notation item '" + t + "': '" + *name + "' " + name_problem(*name));
    if (!labels->insert(to_lower(label)).second)
      fail(path_, ln.no, "notation label '" + label + "' is defined twice");
    doc_.notation.emplace_back(label, desc);
    return true;
  }

  // Handles the fence opened at lines_[open]; returns the index of its closing line.
  size_t fenced_block(size_t open, char ch, size_t run, const std::string& info) {
    size_t close = open + 1;
    for (; close < lines_.size(); ++close) {
      const std::string& s = lines_[close].text;
      size_t i = indent_of(s);
      if (i > 3) continue;
      size_t b = i;
      while (i < s.size() && s[i] == ch) ++i;
      if (i - b >= run && is_blank(s.substr(i))) break;
    }
    if (close >= lines_.size())
      fail(path_, lines_[open].no, "code fence opened here is never closed");
    std::string lang = to_lower(info);
    if (!lang.empty() && lang != "text" && lang != "txt") return close;
    size_t first = open + 1;
    while (first < close && is_blank(lines_[first].text)) ++first;
    if (first == close || rtrim(lines_[first].text).back() != ':') return close;
    tables_in(first, close);
    return close;
  }

  // Parses the tables held in lines_[begin, end).
  void tables_in(size_t begin, size_t end) {
    size_t i = begin;
    while (i < end) {
      if (is_blank(lines_[i].text)) {
        ++i;
        continue;
      }
      const Line& title_ln = lines_[i];
      std::string title = rtrim(title_ln.text);
      if (is_space(title[0]) || title.back() != ':' || title.size() < 2)
        fail(path_, title_ln.no, "expected a table title line 'TITLE:', got '" + title + "'");
      ParsedTable pt;
      pt.line = title_ln.no;
      pt.gpu = gpu_;
      pt.run_line = run_line_;
      for (const auto& h : headings_) pt.headings.push_back(h.second);
      Table& t = pt.table;
      t.title = title.substr(0, title.size() - 1);
      ++i;
      if (i >= end || is_blank(lines_[i].text))
        fail(path_, title_ln.no, "table '" + t.title + "' has no header line");

      const Line& header_ln = lines_[i];
      std::vector<std::string> names;
      const bool empty_form = trim(header_ln.text) == "Empty DataFrame";
      size_t rows_end = i + 1;
      while (rows_end < end && !is_blank(lines_[rows_end].text)) ++rows_end;
      if (empty_form) {
        i = empty_frame(i, end, &names);
        if (i < rows_end)
          fail(path_, lines_[i].no, "unexpected line after an empty table: '" + lines_[i].text + "'");
      } else {
        if (!is_space(header_ln.text[0]))
          fail(path_, header_ln.no,
               "expected the header of table '" + t.title +
                   "' (column names after the blank index header), got '" + header_ln.text + "'");
        names = header_names(t.title, header_ln, i + 1, rows_end);
        ++i;
      }
      std::set<std::string> seen;
      for (const auto& n : names) {
        if (!seen.insert(n).second)
          fail(path_, header_ln.no, "table '" + t.title + "' has column '" + n + "' twice");
      }
      t.index_name = names[0];
      t.columns.assign(names.begin() + 1, names.end());

      for (; i < rows_end; ++i) {
        const Line& row_ln = lines_[i];
        std::vector<std::string> tok = split_ws(row_ln.text);
        const size_t row = t.index.size();
        if (tok.size() != names.size() + 1)
          fail(path_, row_ln.no,
               "table '" + t.title + "' row " + std::to_string(row) + " has " +
                   std::to_string(tok.size()) + " cells, expected " +
                   std::to_string(names.size() + 1) + " (row label and " +
                   std::to_string(names.size()) + " columns)");
        if (tok[0] != std::to_string(row))
          fail(path_, row_ln.no,
               "table '" + t.title + "': row label '" + tok[0] + "', expected '" +
                   std::to_string(row) + "'");
        std::vector<double> vals(names.size());
        for (size_t c = 0; c < names.size(); ++c) {
          if (!parse_number(tok[c + 1], &vals[c]))
            fail(path_, row_ln.no,
                 "table '" + t.title + "': cannot parse '" + tok[c + 1] + "' in column '" +
                     names[c] + "' as a number");
        }
        t.index.push_back(vals[0]);
        t.cells.emplace_back(vals.begin() + 1, vals.end());
      }
      if (t.index.empty() && !empty_form)
        fail(path_, header_ln.no, "table '" + t.title + "' has no rows");
      doc_.tables.push_back(std::move(pt));
    }
  }

  // The column names of a table's header (the x axis first). Its words, unless there are more
  // of them than the first row has columns (names with spaces): then the header cut at the
  // columns' right edges (the ends of the first row's cells, where pandas right-aligns each
  // name), every name with a space in it checked against the Notation list.
  std::vector<std::string> header_names(const std::string& title, const Line& header, size_t rows,
                                        size_t rows_end) const {
    std::vector<std::string> words = split_ws(header.text);
    if (rows >= rows_end) return words;  // no rows: reported by the caller
    std::vector<size_t> edges;           // the end of each cell of the first row
    const std::string& first = lines_[rows].text;
    for (size_t k = 0; k < first.size();) {
      while (k < first.size() && is_space(first[k])) ++k;
      while (k < first.size() && !is_space(first[k])) ++k;
      if (k > 0 && !is_space(first[k - 1])) edges.push_back(k);
    }
    if (edges.size() < 2 || words.size() + 1 <= edges.size()) return words;  // no name with a space
    const std::string h = rtrim(header.text);
    std::vector<std::string> names;
    for (size_t c = 1; c < edges.size(); ++c) {
      const size_t from = edges[c - 1], to = std::min(edges[c], h.size());
      const std::string name = from < to ? trim(h.substr(from, to - from)) : "";
      if (name.empty() || h.size() != edges.back())
        fail(path_, header.no,
             "table '" + title + "': the header '" + h + "' has " + std::to_string(words.size()) +
                 " words for " + std::to_string(edges.size() - 1) +
                 " columns and its names do not end where the columns do");
      if (name.find(' ') != std::string::npos && !notation_label(name))
        fail(path_, header.no,
             "table '" + title + "': column '" + name +
                 "' (read from the columns' right edges) is not a label of the Notation list");
      names.push_back(name);
    }
    return names;
  }

  bool notation_label(const std::string& name) const {
    for (const auto& kv : doc_.notation)
      if (to_lower(kv.first) == to_lower(name)) return true;
    return false;
  }

  // pandas' "Empty DataFrame\nColumns: [a, b]\nIndex: []" starting at lines_[i].
  size_t empty_frame(size_t i, size_t end, std::vector<std::string>* names) {
    const int at = lines_[i].no;
    if (i + 2 >= end) fail(path_, at, "incomplete 'Empty DataFrame' table");
    std::string cols = trim(lines_[i + 1].text);
    const std::string pre = "Columns: [";
    if (cols.compare(0, pre.size(), pre) != 0 || cols.back() != ']')
      fail(path_, lines_[i + 1].no, "expected 'Columns: [...]', got '" + cols + "'");
    std::string inner = cols.substr(pre.size(), cols.size() - pre.size() - 1);
    size_t start = 0;
    while (true) {
      size_t comma = inner.find(", ", start);
      std::string name = trim(inner.substr(start, comma == std::string::npos ? std::string::npos
                                                                             : comma - start));
      if (name.empty())
        fail(path_, lines_[i + 1].no, "bad column name '" + name + "' in '" + cols + "'");
      names->push_back(name);
      if (comma == std::string::npos) break;
      start = comma + 2;
    }
    if (trim(lines_[i + 2].text) != "Index: []")
      fail(path_, lines_[i + 2].no, "expected 'Index: []', got '" + lines_[i + 2].text + "'");
    return i + 3;
  }

  std::string path_;
  std::vector<Line> lines_;
  std::vector<std::pair<int, std::string>> headings_;
  std::string gpu_;
  std::string run_line_;  // the run line of the current opbench report run, or ""
  ParsedDocument doc_;
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

ParsedDocument parse_document(const std::string& text, const std::string& path) {
  return Parser(text, path).run();
}

}  // namespace opbench

// pandas-compatible rendering of result tables. Torch-free.
#include "report/table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace opbench {
namespace {

// pandas' display.precision default.
constexpr int kDigits = 6;

// Width of a string as pandas measures it (Python len(): code points). UTF-8 continuation
// bytes are not counted.
size_t text_width(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) ++n;
  }
  return n;
}

std::string pad_left(const std::string& s, size_t width) {
  size_t w = text_width(s);
  return w >= width ? s : std::string(width - w, ' ') + s;
}

std::string pad_right(const std::string& s, size_t width) {
  size_t w = text_width(s);
  return w >= width ? s : s + std::string(width - w, ' ');
}

// "% .6f" / "% .6e" of one value. Python's format() and C's printf both round the exact
// binary value correctly (ties to even), so the digits agree; infinities print as
// " inf" / "-inf" in both.
std::string format_one(double v, char conv) {
  char fmt[8] = {'%', ' ', '.', static_cast<char>('0' + kDigits), conv, '\0'};
  char buf[512];
  int n = std::snprintf(buf, sizeof buf, fmt, v);
  if (n < 0) throw std::runtime_error("format_float_column: snprintf failed");
  if (static_cast<size_t>(n) < sizeof buf) return std::string(buf, static_cast<size_t>(n));
  std::string big(static_cast<size_t>(n) + 1, '\0');
  std::snprintf(&big[0], big.size(), fmt, v);
  big.resize(static_cast<size_t>(n));
  return big;
}

// pandas' _NUMBER_WITH_DECIMAL_RE: ^\s*[+-]?[0-9]+\.[0-9]*$
bool is_number_with_decimal(const std::string& s) {
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' ||
                          s[i] == '\f' || s[i] == '\v'))
    ++i;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  size_t digits = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++digits;
  if (digits == 0 || i >= s.size() || s[i] != '.') return false;
  ++i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  return i == s.size();
}

// pandas' _trim_zeros_float: drop trailing zeros shared by every decimal number, keeping
// one digit after the point.
void trim_zeros(std::vector<std::string>& strs) {
  std::vector<bool> is_num(strs.size());
  bool any = false;
  for (size_t i = 0; i < strs.size(); ++i) {
    is_num[i] = is_number_with_decimal(strs[i]);
    any = any || is_num[i];
  }
  if (!any) return;
  for (;;) {
    bool all_zero = true;
    for (size_t i = 0; i < strs.size() && all_zero; ++i) {
      if (is_num[i] && (strs[i].empty() || strs[i].back() != '0')) all_zero = false;
    }
    if (!all_zero) break;
    for (size_t i = 0; i < strs.size(); ++i) {
      if (is_num[i]) strs[i].pop_back();
    }
  }
  for (size_t i = 0; i < strs.size(); ++i) {
    if (is_num[i] && !strs[i].empty() && strs[i].back() == '.') strs[i] += '0';
  }
}

std::vector<std::string> format_with(const std::vector<double>& values, char conv) {
  std::vector<std::string> out;
  out.reserve(values.size());
  for (double v : values) out.push_back(std::isnan(v) ? std::string("NaN") : format_one(v, conv));
  trim_zeros(out);
  return out;
}

}  // namespace

std::vector<std::string> format_float_column(const std::vector<double>& values) {
  std::vector<std::string> out = format_with(values, 'f');
  size_t maxlen = 0;
  for (const auto& s : out) maxlen = std::max(maxlen, s.size());
  const bool too_long = maxlen > static_cast<size_t>(kDigits + 6);
  bool has_large = false, has_small = false;
  const double small = std::pow(10.0, -kDigits);  // Python: 10 ** (-6) == 1e-06
  for (double v : values) {
    double a = std::fabs(v);  // NaN compares false below, as in numpy
    if (a > 1e6) has_large = true;
    if (a < small && a > 0) has_small = true;
  }
  if (has_small || (too_long && has_large)) out = format_with(values, 'e');
  return out;
}

namespace {

// A rendered column: its header line, then one line per row, all of one width.
using TextColumn = std::vector<std::string>;

// Every row has a cell per column, and there is a row per index value.
void check_table_shape(const Table& t) {
  const size_t nrows = t.index.size();
  if (t.cells.size() != nrows)
    throw std::invalid_argument("table '" + t.title + "': " + std::to_string(t.cells.size()) +
                                " cell rows for " + std::to_string(nrows) + " index values");
  for (size_t r = 0; r < nrows; ++r) {
    if (t.cells[r].size() != t.columns.size())
      throw std::invalid_argument("table '" + t.title + "': row " + std::to_string(r) + " has " +
                                  std::to_string(t.cells[r].size()) + " cells for " +
                                  std::to_string(t.columns.size()) + " columns");
  }
}

// pandas' "Empty DataFrame" form of a table without rows.
std::string empty_frame(const std::vector<std::string>& names) {
  std::string cols;
  for (size_t i = 0; i < names.size(); ++i) cols += (i ? ", " : "") + names[i];
  return "Empty DataFrame\nColumns: [" + cols + "]\nIndex: []";
}

// The RangeIndex: labels 0..nrows-1 left-justified; the header cell is empty.
TextColumn range_index_column(size_t nrows) {
  std::vector<std::string> idx;
  size_t w = 0;
  for (size_t r = 0; r < nrows; ++r) {
    idx.push_back(std::to_string(r));
    w = std::max(w, idx.back().size());
  }
  TextColumn col{std::string()};
  for (auto& s : idx) col.push_back(pad_right(s, w));
  return col;
}

// A numeric column: its name after a leading space, and its values, right-justified.
TextColumn value_column(const std::string& name, const std::vector<double>& values) {
  std::vector<std::string> fmt = format_float_column(values);
  const std::string header = " " + name;
  size_t w = text_width(header);
  for (const auto& s : fmt) w = std::max(w, text_width(s));
  TextColumn col{pad_left(header, w)};
  for (auto& s : fmt) col.push_back(pad_left(s, w));
  return col;
}

// pandas' adjoin(1, ...): every column but the last left-justified to its width + 1.
std::string adjoin(const std::vector<TextColumn>& columns, size_t nrows) {
  std::vector<size_t> widths(columns.size(), 0);
  for (size_t c = 0; c < columns.size(); ++c)
    for (const auto& s : columns[c]) widths[c] = std::max(widths[c], text_width(s));
  std::string out;
  for (size_t line = 0; line <= nrows; ++line) {
    if (line) out += '\n';
    for (size_t c = 0; c < columns.size(); ++c) {
      const std::string& s = columns[c][line];
      out += c + 1 < columns.size() ? pad_right(s, widths[c] + 1) : s;
    }
  }
  return out;
}

}  // namespace

std::string format_pandas(const Table& t) {
  check_table_shape(t);
  const size_t nrows = t.index.size();
  std::vector<std::string> names;
  names.push_back(t.index_name);
  names.insert(names.end(), t.columns.begin(), t.columns.end());
  if (nrows == 0) return empty_frame(names);

  std::vector<TextColumn> columns{range_index_column(nrows)};
  for (size_t c = 0; c < names.size(); ++c) {
    std::vector<double> values(nrows);
    for (size_t r = 0; r < nrows; ++r) values[r] = c == 0 ? t.index[r] : t.cells[r][c - 1];
    columns.push_back(value_column(names[c], values));
  }
  return adjoin(columns, nrows);
}

std::string format_block(const Table& table) { return table.title + ":\n" + format_pandas(table) + "\n"; }

}  // namespace opbench

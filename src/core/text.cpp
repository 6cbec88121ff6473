#include "core/text.hpp"

#include <cctype>
#include <cstdio>

namespace opbench {

namespace {

// The length of the UTF-8 sequence starting at s[i], or 0 when it is malformed.
size_t utf8_sequence(const std::string& s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xbf;  // the allowed range of the second byte
  if (c >= 0xc2 && c <= 0xdf) n = 2;
  else if (c == 0xe0) n = 3, lo = 0xa0;
  else if (c == 0xed) n = 3, hi = 0x9f;  // no UTF-16 surrogates
  else if (c >= 0xe1 && c <= 0xef) n = 3;
  else if (c == 0xf0) n = 4, lo = 0x90;
  else if (c == 0xf4) n = 4, hi = 0x8f;  // nothing past U+10FFFF
  else if (c >= 0xf1 && c <= 0xf3) n = 4;
  else return 0;
  if (i + n > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if (byte(i + k) < 0x80 || byte(i + k) > 0xbf) return 0;
  return n;
}

bool is_control(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7f;
}

}  // namespace

bool valid_utf8(const std::string& s, size_t* bad_at) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_sequence(s, i);
    if (n == 0) {
      if (bad_at) *bad_at = i;
      return false;
    }
    i += n;
  }
  return true;
}

int line_of(const std::string& text, size_t offset) {
  int line = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) line += text[i] == '\n';
  return line;
}

std::string text_problem(const std::string& s) {
  if (!valid_utf8(s)) return "is not valid UTF-8";
  for (char c : s)
    if (is_control(c)) return "holds a control character (byte " + std::to_string(int(c)) + ")";
  return "";
}

std::string name_problem(const std::string& s) {
  std::string why = text_problem(s);
  if (!why.empty()) return why;
  if (s.find("```") != std::string::npos || s.find("~~~") != std::string::npos)
    return "holds a code fence (``` or ~~~)";
  return "";
}

std::string run_label_problem(const std::string& s) {
  if (s.size() > kMaxRunLabel)
    return std::to_string(s.size()) + " bytes long, more than the " + std::to_string(kMaxRunLabel) + " a run label may hold";
  return name_problem(s);
}

std::string label_problem(const std::string& s) {
  if (s.empty()) return "is empty";
  std::string why = name_problem(s);
  if (!why.empty()) return why;
  if (s.front() == ' ' || s.back() == ' ' || s.find("  ") != std::string::npos)
    return "has a leading, trailing or double space (a table header separates columns by spaces)";
  if (s.find(':') != std::string::npos) return "holds ':' (the Notation list reads 'label: provider')";
  return "";
}

std::string to_lower(std::string s) {
  for (auto& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string md_cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else out += is_control(c) ? ' ' : c;
  }
  return out;
}

std::string_view trim(std::string_view s) {
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; };
  size_t b = 0, e = s.size();
  while (b < e && blank(s[b])) ++b;
  while (e > b && blank(s[e - 1])) --e;
  return s.substr(b, e - b);
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

std::string one_line(const std::string& s) {
  std::string out = s;
  for (char& c : out)
    if (is_control(c)) c = ' ';
  return out;
}

std::string number_text(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string pad_right(const std::string& s, size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

std::string join_list(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ",") + s;
  return out;
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s + ",") {
    if (c == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
  }
  return out;
}

}  // namespace opbench

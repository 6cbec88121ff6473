// Checks and escapes for text that opbench stores and prints back: labels, titles, config
// strings, document lines. Torch-free.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace opbench {

// Whether `s` is well-formed UTF-8 (no overlong forms, surrogates or code points past
// U+10FFFF). When it is not and `bad_at` is given, *bad_at is the offset of the first bad byte.
bool valid_utf8(const std::string& s, size_t* bad_at = nullptr);

// The 1-based line of byte `offset` in `text`.
int line_of(const std::string& text, size_t offset);

// Why `s` cannot be stored and printed back on one line (a file name, a message), or "" when
// it can: it must be valid UTF-8 and hold no control character (NUL, tab, line breaks ...).
std::string text_problem(const std::string& s);

// Why `s` cannot be a one-line name that documents print back (a run label, a column label,
// a table title, a section or GPU name), or "" when it can: it must be valid UTF-8 and hold
// no control character (NUL, tab, line breaks, escape ...) and no code fence (``` or ~~~),
// any of which would truncate the name or break the markdown it is printed into.
std::string name_problem(const std::string& s);

// The longest run label (--label, a JSON export's run label): bytes.
constexpr size_t kMaxRunLabel = 4096;
// "" for a run label that name_problem accepts and is at most kMaxRunLabel bytes long.
std::string run_label_problem(const std::string& s);

// Why `s` cannot be a column label, or "" when it can: a name (above) without ':' (the
// Notation list of a report reads "- label: provider"), its words apart by single spaces
// ("Tri Sp"; a table header is read at its columns' right edges against the labels).
std::string label_problem(const std::string& s);

// `s` with ASCII letters in lower case (labels and GPU names are matched ignoring case).
std::string to_lower(std::string s);

// `s` as one markdown table cell: '|' escaped, control characters (line breaks included)
// shown as spaces.
std::string md_cell(const std::string& s);

// `s` on one line: control characters shown as spaces (for names printed outside tables).
std::string one_line(const std::string& s);

// `s` followed by spaces up to `width` bytes (printf's %-*s), never cut.
std::string pad_right(const std::string& s, size_t width);

// `s` without the blanks at either end: spaces, tabs, '\r', '\f' and '\v' (a view into it).
std::string_view trim(std::string_view s);
// One number as printf's `format` (one conversion of a double: "%g", "%.1f") writes it.
std::string number_text(const char* format, double v);

// `s` up to its first newline (a message's headline).
std::string first_line(const std::string& s);

// "a,b, c" -> {a, b, c} (spaces dropped, empty items skipped).
std::vector<std::string> split_list(const std::string& s);
// {a, b} -> "a,b".
std::string join_list(const std::vector<std::string>& v);

}  // namespace opbench

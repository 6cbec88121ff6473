// Parser of reference-format markdown documents (published benchmark documents, opbench reports;
// tests/data/reference/ holds examples). Torch-free.
//
// The format:
//   - ATX headings ("# A800", "## Speed", "#### Speed(fwd)"); the nearest heading above a
//     table that names a device (A800, H100, L40S, RTX 4090, ...) gives the table's GPU;
//   - a "Notation" heading followed by a list "- tr: Triton" (label, then the provider's
//     description); labels may be any case there ("Tr") and are lower case in tables, and may
//     hold spaces ("- Tri Sp: Triton Split");
//   - fenced blocks (``` or ~~~, no info string or "text"/"txt") holding one or more tables,
//     separated by blank lines; each table is a "TITLE:" line followed by the text of
//     pandas' DataFrame.to_string() (see report/table.hpp), or pandas' three-line
//     "Empty DataFrame" form. A header whose words outnumber the columns holds labels with
//     spaces: it is cut at the columns' right edges (pandas right-aligns every name over its
//     values), and each name with a space in it must be a label of the Notation list;
//   - opbench's own reports head each run with its device's full name, followed by the run
//     line ("run 3, 2026-11-22, cuda:0, commit ..., torch 2.11.0, measured peak bandwidth
//     2941 GB/s, ..."): such a heading names the tables' GPU as written.
// Fenced blocks with another info string, or whose first non-blank line does not end with
// ':', are not tables and are skipped.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "report/table.hpp"

namespace opbench {

struct ParsedTable {
  Table table;
  int line = 0;                       // 1-based line of the "TITLE:" line
  std::string gpu;                    // device named by the nearest heading above; "" if none
  std::vector<std::string> headings;  // enclosing headings, outermost first (text, no '#')
  std::string run_line;               // the run line under an opbench report's run heading, or ""
};

struct ParsedDocument {
  // label -> provider description, in document order; labels as written (e.g. "Tr").
  std::vector<std::pair<std::string, std::string>> notation;
  std::vector<ParsedTable> tables;  // in document order
  std::vector<std::string> gpus;    // distinct devices named by headings, in document order
};

// Parses a whole document. `path` is only used in error locations.
// Throws opbench::InputError(path + ":" + line, "", message) for bad input: a table row
// with the wrong number of cells or a wrong RangeIndex label, an unparsable number, a
// missing title or header, a duplicate column, a malformed or duplicate notation item (or
// one whose label or description is not a printable name: core/text.hpp), a fence that is
// never closed.
ParsedDocument parse_document(const std::string& text, const std::string& path);

// The first device a heading (or any text) names, or "" if it names none. Known names
// (RTX 4090, V100, T4, MI300X, ...) match case-insensitively, a space in them also matching
// '-' or nothing, and come back in their canonical spelling ("rtx-4090" -> "RTX 4090");
// otherwise an upper-case A/B/H/L followed by 2-3 digits and an optional 'S' (A800, H100,
// H20, L40S, B200) comes back as written. Matches must stand as whole words.
std::string device_in_text(const std::string& text);

// The description of a table column in the notation (case-insensitive label match), or
// nullptr if the notation has no such label.
const std::string* notation_for(const ParsedDocument& doc, const std::string& column);

}  // namespace opbench

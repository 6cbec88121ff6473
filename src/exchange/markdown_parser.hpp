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
//     separated by blank lines or none (a title line, "TITLE:" alone at the start of its
//     line, ends the table before it: rows never end in ':'); each table is that line followed
//     by the text of
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

// The most columns a table may have (the x axis not counted): a wider one is refused, so
// that what a table's reader keeps per column stays small beside the text.
constexpr size_t kMaxTableColumns = 100000;

// What a reader of a document learns of a table before its rows.
struct TableHead {
  std::string title;                  // the "TITLE:" line without the ':'
  std::string index_name;             // the x axis's column
  std::vector<std::string> columns;   // the other columns' labels
  bool empty = false;                 // pandas' "Empty DataFrame" form: no rows follow
  int line = 0;                       // 1-based line of the "TITLE:" line
  std::string gpu;                    // device named by the nearest heading above; "" if none
  std::vector<std::string> headings;  // enclosing headings, outermost first (text, no '#')
  std::string run_line;               // the run line under an opbench report's run heading, or ""
};

// A document read as it is parsed (read_document_tables): one call per table and per row,
// in document order; nothing of the document is kept beyond the table being read.
class DocumentVisitor {
 public:
  virtual ~DocumentVisitor() = default;
  // Once, before the first table: the whole Notation list (wherever it stands).
  virtual void notation(const std::vector<std::pair<std::string, std::string>>& /*items*/) {}
  virtual void table(const TableHead& head) = 0;
  // A row at `line`: its x (index) value and one value per column (NaN for "NaN").
  virtual void row(const TableHead& head, int line, double x, const std::vector<double>& cells) = 0;
  virtual void end_table(const TableHead& /*head*/) {}
};

// Reads a whole document through `visitor`, in linear time, holding no more than the table
// being read; returns the devices named by headings, in document order. `path` is only used
// in error locations. Throws opbench::InputError(path + ":" + line, "", message) for bad
// input: a table row with the wrong number of cells or a wrong RangeIndex label, an
// unparsable number, a missing title or header, a duplicate column, more than
// kMaxTableColumns columns, a malformed or duplicate
// notation item (or one whose label or description is not a printable name: core/text.hpp),
// a fence that is never closed.
std::vector<std::string> read_document_tables(const std::string& text, const std::string& path,
                                              DocumentVisitor& visitor);

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

// Parses a whole document into memory (read_document_tables, every table kept). `path` is
// only used in error locations; errors as read_document_tables's.
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

// Result tables and their pandas-compatible text rendering. Torch-free.
//
// The reference documents (tests/data/reference/*.md) hold tables exactly as Triton's
// benchmark harness prints them: a "TITLE:" line, then `DataFrame.to_string()` of a frame
// whose columns are the x axis (e.g. `n`, values 256.0 ...) followed by one float column per
// provider, with the default RangeIndex 0..N-1. format_pandas() reproduces that text
// byte for byte (pandas defaults: display.precision = 6, float_format None, na_rep "NaN").
#pragma once
#include <string>
#include <vector>

namespace opbench {

struct Table {
  std::string title;                     // the line before the table, without the ':'
  std::string index_name;                // name of the x-axis column (first DataFrame column)
  std::vector<double> index;             // x-axis values, one per row
  std::vector<std::string> columns;      // provider labels (e.g. "tr", "to", "toc")
  std::vector<std::vector<double>> cells;  // cells[row][col]; NaN = missing
};

// One float column formatted the way pandas' FloatArrayFormatter does for a DataFrame
// column (leading space, precision 6): every value as "% .6f", then trailing zeros that
// all decimal numbers of the column share are trimmed (keeping at least one decimal);
// if any value is non-zero with |v| < 1e-6, or the widest string is longer than 12
// characters while some |v| > 1e6, the whole column is rendered as "% .6e" instead.
// NaN becomes "NaN". The strings are not padded.
std::vector<std::string> format_float_column(const std::vector<double>& values);

// Exactly what pandas' `DataFrame.to_string()` returns (no trailing newline) for the frame
// with columns [index_name, columns...] (all float64) and a RangeIndex: the index column
// left-justified, every other column right-justified under its header (numeric headers
// carry a leading space), columns joined by one space. A table with no rows renders as
// pandas' "Empty DataFrame\nColumns: [...]\nIndex: []".
// Throws std::invalid_argument when cells does not have index.size() rows of
// columns.size() values.
std::string format_pandas(const Table& table);

// The block Triton prints for one table: "TITLE:\n" + format_pandas(table) + "\n".
std::string format_block(const Table& table);

}  // namespace opbench

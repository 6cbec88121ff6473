// opbench import: a reference-format markdown document (a published benchmark document, or a
// report opbench wrote) becomes runs in the store, one per GPU the document names. Torch-free.
//
// Mapping (document -> store):
//   - each table's GPU is the nearest heading above it that names a device (document.hpp);
//     tables of one GPU form one run (source 'import', config_path = the file, config_text =
//     its text). Should a title come back for a GPU whose current run already holds it (a
//     report of several runs on one GPU), a further run for that GPU starts there;
//   - under a run heading of opbench's own report the GPU is the heading's full name, and its
//     run line gives the run's device, commit, torch version, peak bandwidth (so imported
//     speed points get their % of peak) and statistic;
//   - a run's uuid derives from the document's content, its GPU and its place in the document:
//     importing the same document again adds nothing (store_import reports it);
//   - the run's notation is the document's Notation list, labels spelled as the tables spell
//     them (the list may write "Tr" for the column "tr"); a column's provider is its notation
//     description ("Triton"; opbench's own reports list provider names: "torch") or, for a
//     label the list does not give, the label itself;
//   - a title that is the default title of an op (src/ops/*.cpp) gives the point's op and
//     axes (checked by rendering the title back); any other title is kept with op '' (its
//     metric still read from a "-speed-" / "-memory-" word when it has one);
//   - every cell is a point: x = the row's index value (an integer), value = the parsed double
//     (so format_pandas prints it back byte for byte), -1 = a failed point with error
//     "imported as -1", NaN = a point with no value; section = the nearest heading above.
#pragma once
#include <string>
#include <vector>

#include "core/value.hpp"
#include "exchange/run_record.hpp"
#include "store/store.hpp"

namespace opbench {

// The op and axes a table title encodes, when it is an op's default title.
struct TitleInfo {
  std::string op;  // "" when the title follows no known pattern
  Params params;   // the axes the title names (metric, mode, dtype, batch, ...)
};
TitleInfo parse_title(const std::string& title);

struct ImportedRun {
  RunInfo run;
  std::vector<StoredPoint> points;
  size_t tables = 0;
};

struct ImportResult {
  std::vector<ImportedRun> runs;
  std::vector<std::string> warnings;  // tables with nothing to store (no rows, or an index column alone)
};

// Builds the runs of a document without touching a store. `path` names the file in errors
// and in each run's config_path. Throws InputError("path:line", ...) for unreadable input:
// text that is not UTF-8, what parse_document rejects, a title, column or section heading
// that is not a printable name (core/text.hpp: a report of it could not be read back), two
// columns of one table standing for one provider, a non-integer x value, an x value twice
// in one table, a document with no tables.
ImportResult import_document(const std::string& text, const std::string& path,
                             const std::string& label);

// The text of a document; a missing or unreadable file is an InputError.
std::string read_document(const std::string& path);

// The imported runs as records to store.
std::vector<RunRecord> import_records(const ImportResult& res);

// Stores the runs the store does not hold yet (by uuid) in one transaction (nothing is stored
// when any part fails); sets every run's id (a run already there: its id). Returns, per run,
// whether it was added.
std::vector<bool> store_import(Store& store, ImportResult& res);

// read_document + import_document + store_import.
ImportResult import_file(Store& store, const std::string& path, const std::string& label);

}  // namespace opbench

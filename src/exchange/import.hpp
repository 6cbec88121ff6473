// opbench import: a reference-format markdown document (a published benchmark document, or a
// report opbench wrote) becomes runs in the store, one per GPU the document names. Torch-free.
//
// Mapping (document -> store):
//   - each table's GPU is the nearest heading above it that names a device (markdown_parser.hpp);
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
//     "imported as -1", NaN = a point with no value; section = the nearest heading above;
//   - a table no heading above names a GPU for is refused (a run is measured on one device),
//     as is a run heading (one followed by a run line) with no name;
//   - each run and point is checked as every one the store takes (record/run_check.hpp).
//
// A document is read as it is parsed (exchange/markdown_parser.hpp): no more than the table
// being read is held beside the text, and points go to the store in batches as they are read,
// so memory stays within a small multiple of the file and time linear in it. `opbench import`
// reads a document twice: once to check all of it and count its points (nothing stored, no
// database made), then once more storing it in one transaction. Limits: kMaxDocumentBytes a
// file, --max-points points a document.
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "core/value.hpp"
#include "record/run_record.hpp"
#include "store/store.hpp"

namespace opbench {

// The op and axes a table title encodes, when it is an op's default title.
struct TitleInfo {
  std::string op;  // "" when the title follows no known pattern
  Params params;   // the axes the title names (metric, mode, dtype, batch, ...)
};
TitleInfo parse_title(const std::string& title);

// The largest file `opbench import` reads (markdown or JSON): 256 MiB.
constexpr long long kMaxDocumentBytes = 256ll << 20;
// The points a document may hold unless --max-points says otherwise.
constexpr size_t kDefaultMaxImportPoints = 10000000;
// Points written to the store at a time while a document is stored.
constexpr size_t kImportBatch = 4096;

// A run read from a document (its points empty when they went to a sink), and what the reading
// counted of it.
struct ImportedRun : RunRecord {
  size_t tables = 0;
  size_t count = 0;    // the points read into the run
  bool added = false;  // stored by store_document / store_import (false: the run was there)
};

struct ImportResult {
  std::vector<ImportedRun> runs;
  std::vector<std::string> warnings;  // tables with nothing to store (no rows, or an index column alone)
};

// Receives each point of a document as it is read, with the index of its run in
// ImportResult::runs.
using PointSink = std::function<void(size_t run, StoredPoint&& point)>;

// Reads the runs of a document without touching a store, each point handed to `sink` (when
// set) as it is read; the runs come back without their points (config_text empty), each with
// its count. `path` names the file in errors and in each run's config_path; `now` (empty:
// the current time) the runs' times. Throws InputError("path:line", ...) for unreadable input:
// text that is not UTF-8, what the document parser rejects, a title, column or section
// heading that is not a printable name (core/text.hpp: a report of it could not be read back),
// two columns of one table standing for one provider, a non-integer x value, an x value twice
// in one table, a table whose GPU no heading names, a run or point the store must not take
// (record/run_check.hpp), a document with no tables.
ImportResult import_document(const std::string& text, const std::string& path, const std::string& label,
                             const PointSink& sink, const std::string& now = "");

// The same with every run's points (and config_text) kept in memory: for small documents.
ImportResult import_document(const std::string& text, const std::string& path,
                             const std::string& label);

// The text of a document; a missing or unreadable file, or one over kMaxDocumentBytes, is an
// InputError.
std::string read_document(const std::string& path);

// InputError naming `path` when the runs read hold more than `max_points` points together.
void check_point_limit(const ImportResult& res, const std::string& path, size_t max_points);

// Stores the runs `plan` read (import_document without a sink, from the same text, path and
// label) in one transaction, reading the document again and writing its points in batches:
// each run the store does not hold yet (by uuid) is added; every run's id and `added` are set.

// The imported runs as records to store.
std::vector<RunRecord> import_records(const ImportResult& res);

// Stores the runs the store does not hold yet (by uuid) in one transaction (nothing is stored
// when any part fails); sets every run's id (a run already there: its id). Returns, per run,
// whether it was added.
std::vector<bool> store_import(Store& store, ImportResult& res);

void store_document(Store& store, const std::string& text, const std::string& path, const std::string& label,
                    ImportResult& plan);

// read_document + import_document + store_document.
ImportResult import_file(Store& store, const std::string& path, const std::string& label);

}  // namespace opbench

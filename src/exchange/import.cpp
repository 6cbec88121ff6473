// opbench import: reference-format markdown -> runs and points. Torch-free.
#include "exchange/import.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/hash.hpp"
#include "core/text.hpp"
#include "ops/op.hpp"
#include "report/document.hpp"

namespace opbench {

TitleInfo parse_title(const std::string& title) {
  // An op's title, read by inverting its template (OpSpec::title).
  for (const OpSpec* op : all_ops()) {
    TitleInfo t;
    if (op->parse_title(title, &t.params)) {
      t.op = op->name;
      return t;
    }
  }
  TitleInfo t;
  std::stringstream ss(title);
  for (std::string w; std::getline(ss, w, '-');)
    if (w == "speed" || w == "memory") {
      t.params.set("metric", w);
      break;
    }
  return t;
}

namespace {

// A name the document gives (title, column, heading, notation) must print back as it reads:
// InputError at `where` otherwise.
void check_name(const std::string& name, const std::string& where, const std::string& what) {
  const std::string why = name_problem(name);
  if (!why.empty()) throw InputError(where, "", what + " '" + name + "' " + why);
}

// Each column's provider (its notation description, else the label). Two columns of one
// table standing for one provider would be one point twice, and two labels differing only in
// case one Notation entry: an InputError naming both.
std::vector<std::string> column_providers(const ParsedDocument& doc, const ParsedTable& pt, const std::string& path) {
  std::vector<std::string> out;
  std::map<std::string, std::string> first, spelled;  // provider / lower-case label -> the column
  for (const auto& c : pt.table.columns) {
    auto [s, new_label] = spelled.emplace(to_lower(c), c);
    if (!new_label)
      throw InputError(path + ":" + std::to_string(pt.line + 1), "",
                       "table '" + pt.table.title + "': columns '" + s->second + "' and '" + c +
                           "' differ only in case (the Notation list does not tell them apart)");
    const std::string* desc = notation_for(doc, c);
    out.push_back(desc ? *desc : c);
    auto [it, fresh] = first.emplace(out.back(), c);
    if (!fresh)
      throw InputError(path + ":" + std::to_string(pt.line + 1), "",
                       "table '" + pt.table.title + "': columns '" + it->second + "' and '" + c +
                           "' both stand for provider '" + out.back() +
                           "' (by the Notation list or by name): a run holds one point per provider");
  }
  return out;
}

// What an opbench report's run line says of its run: "run 3 (label), 2026-11-22, cuda:0,
// commit 1a2b3c4d5e6f, torch 2.11.0, measured peak bandwidth 2941 GB/s, median of each
// point's samples". Each field is looked for on its own, so a line with more or fewer fields
// still gives those it has.
struct RunLine {
  std::string device, commit, torch, stat;
  double peak_gbps = 0;
};

RunLine parse_run_line(const std::string& line) {
  RunLine r;
  std::smatch m;
  if (std::regex_search(line, m, std::regex(R"(, (cpu|cuda(?::\d+)?),)"))) r.device = m[1];
  if (std::regex_search(line, m, std::regex(R"(, commit ([0-9a-f]+(?:-dirty)?))"))) r.commit = m[1];
  if (std::regex_search(line, m, std::regex(R"(, torch ([^,\s]+))"))) r.torch = m[1];
  if (std::regex_search(line, m, std::regex(R"(, measured peak bandwidth ([0-9.]+) GB/s)")))
    r.peak_gbps = std::stod(m[1]);
  if (std::regex_search(line, m, std::regex(R"(, (median|mean|min|max|p20|p80) of each point's samples)")))
    r.stat = m[1];
  return r;
}

struct Building {
  ImportedRun r;
  std::set<std::string> titles;
  std::vector<std::string> labels;  // column labels in first-seen order
  std::set<std::string> ops;
};

// A new run for the tables of `pt`'s GPU: identified by the document's content, the GPU and
// the run's place in the document (importing the same document again gives the same uuids);
// an opbench report's run line gives the run's device, commit, torch and peak bandwidth.
ImportedRun new_run(const std::string& text, const std::string& path, const std::string& label,
                    const ParsedTable& pt, size_t index, const std::string& now) {
  ImportedRun ir;
  RunInfo& r = ir.run;
  r.label = label;
  r.source = "import";
  r.env.gpu = pt.gpu;
  r.config_path = path;
  r.config_text = text;
  r.config_hash = content_hash(text);
  r.stat = "median";
  r.status = "done";
  r.started_at = now;
  r.finished_at = now;
  r.uuid = content_uuid("opbench-import\x1f" + r.config_hash + "\x1f" + pt.gpu + "\x1f" + std::to_string(index));
  if (!pt.run_line.empty()) {
    const RunLine line = parse_run_line(pt.run_line);
    r.env.device = line.device;
    r.git_commit = line.commit;
    r.env.torch_version = line.torch;
    r.env.peak_gbps = line.peak_gbps;
    if (!line.stat.empty()) r.stat = line.stat;
  }
  return ir;
}

// The minimal bytes of a point the op accepts, else 0.
double point_bytes(const OpSpec* op, const Params& params) {
  if (!op) return 0;
  try {
    const Params full = op->with_defaults(params);
    op->validate(full);
    return op->min_bytes(full);
  } catch (const std::exception&) {
    return 0;
  }
}

// The x value of a table row: an integer, once per table.
int64_t row_x(const ParsedTable& pt, size_t row, std::set<int64_t>& xs, const std::string& path) {
  const Table& t = pt.table;
  const int line = pt.line + 2 + int(row);  // title line, header line, then one line per row
  const double xv = t.index[row];
  if (!std::isfinite(xv) || xv != std::floor(xv) || std::fabs(xv) > 9.0e15)
    throw InputError(path + ":" + std::to_string(line), "",
                     "table '" + t.title + "': " + t.index_name + " value " + format_float_column({xv})[0] +
                         " is not an integer (the store keeps the x axis as integers)");
  const int64_t x = int64_t(xv);
  if (!xs.insert(x).second)
    throw InputError(path + ":" + std::to_string(line), "",
                     "table '" + t.title + "': " + t.index_name + " = " + std::to_string(x) + " appears twice");
  return x;
}

// Every cell of a table as a point of run `b`.
void add_table(Building& b, const ParsedDocument& doc, const ParsedTable& pt, const std::string& path,
               const std::string& now, int64_t& seq) {
  const Table& t = pt.table;
  b.titles.insert(t.title);
  b.r.tables++;
  const TitleInfo info = parse_title(t.title);
  b.ops.insert(info.op);
  const OpSpec* op = info.op.empty() ? nullptr : find_op(info.op);
  const std::string metric = info.params.s_or("metric", "");
  const std::string section = pt.headings.empty() ? "" : pt.headings.back();
  const double peak = b.r.run.env.peak_gbps;
  const std::vector<std::string> providers = column_providers(doc, pt, path);
  for (const auto& c : t.columns)
    if (std::find(b.labels.begin(), b.labels.end(), c) == b.labels.end()) b.labels.push_back(c);

  std::set<int64_t> xs;
  for (size_t row = 0; row < t.index.size(); ++row) {
    const int64_t x = row_x(pt, row, xs, path);
    Params params = info.params;
    if (!params.has(t.index_name)) params.set(t.index_name, x);
    const double bytes = point_bytes(op, params);
    for (size_t col = 0; col < t.columns.size(); ++col) {
      const double v = t.cells[row][col];
      StoredPoint sp;
      sp.seq = seq++;
      sp.section = section;
      sp.point.op = info.op;
      sp.point.title = t.title;
      sp.point.params = params;
      sp.point.x_name = t.index_name;
      sp.point.x_value = x;
      sp.point.label = t.columns[col];
      sp.point.provider = providers[col];
      sp.stat = metric == "memory" ? "max" : b.r.run.stat;
      sp.value = v;
      sp.created_at = now;
      Result& r = sp.result;
      r.unit = metric == "memory" ? "MiB" : metric == "speed" ? "ms" : "";
      // No samples: the document holds one statistic per cell, nothing else is known.
      const double nan = std::nan("");
      r.stats = Stats{nan, nan, nan, nan, nan, nan, nan, 0};
      r.bytes = bytes;
      if (v == -1) {
        r.error = "imported as -1";
      } else if (metric == "speed" && bytes > 0 && v > 0) {
        r.gbps = bytes / (v * 1e-3) / 1e9;
        if (peak > 0) r.pct_peak = 100.0 * r.gbps / peak;
      }
      b.r.points.push_back(std::move(sp));
    }
  }
}

// The document's Notation list in its order, each label spelled as the run's tables spell it,
// limited to the labels they use; then the labels the list does not give.
std::vector<std::pair<std::string, std::string>> run_notation(const ParsedDocument& doc,
                                                              const std::vector<std::string>& labels) {
  std::vector<std::pair<std::string, std::string>> notation;
  std::set<std::string> listed;
  for (const auto& [doc_label, desc] : doc.notation)
    for (const auto& l : labels)
      if (to_lower(l) == to_lower(doc_label) && listed.insert(l).second) notation.emplace_back(l, desc);
  for (const auto& l : labels)
    if (listed.insert(l).second) notation.emplace_back(l, l);
  return notation;
}

}  // namespace

ImportResult import_document(const std::string& text, const std::string& path,
                             const std::string& label) {
  size_t bad = 0;
  if (!valid_utf8(text, &bad))
    throw InputError(path + ":" + std::to_string(line_of(text, bad)), "", "not valid UTF-8");
  const ParsedDocument doc = parse_document(text, path);
  ImportResult res;
  if (doc.tables.empty())
    throw InputError(path + ":1", "", "no tables found (fenced blocks of 'TITLE:' lines, each followed by a pandas table)");

  const std::string now = now_iso();
  std::vector<Building> runs;
  std::map<std::string, size_t> current;  // gpu and run line -> its run being filled
  int64_t seq = 0;
  for (const ParsedTable& pt : doc.tables) {
    const Table& t = pt.table;
    const std::string at = path + ":" + std::to_string(pt.line);
    check_name(t.title, at, "title");
    check_name(t.index_name, at, "index column");
    for (const auto& c : t.columns)
      if (!label_problem(c).empty()) throw InputError(at, "", "column '" + c + "' " + label_problem(c));
    if (!pt.headings.empty()) check_name(pt.headings.back(), at, "heading");
    if (t.index.empty() || t.columns.empty()) {  // no cell: no point, and no run for it
      res.warnings.push_back(at + ": table '" + t.title + "' has no " +
                             (t.index.empty() ? "rows" : "columns besides " + t.index_name) + ": nothing to import");
      continue;
    }
    const std::string key = pt.gpu + "\x1f" + pt.run_line;
    auto cur = current.find(key);
    if (cur == current.end() || runs[cur->second].titles.count(pt.table.title)) {
      runs.push_back({new_run(text, path, label, pt, runs.size(), now), {}, {}, {}});
      cur = current.insert_or_assign(key, runs.size() - 1).first;
    }
    add_table(runs[cur->second], doc, pt, path, now, seq);
  }
  if (runs.empty())
    throw InputError(path + ":1", "", "every table is empty: nothing to import");
  for (auto& b : runs) {
    b.r.run.notation = run_notation(doc, b.labels);
    b.r.run.op = b.ops.size() == 1 ? *b.ops.begin() : "";
    res.runs.push_back(std::move(b.r));
  }
  return res;
}

std::string read_document(const std::string& path) {
  const std::string why = text_problem(path);  // stored as the runs' config_path
  if (!why.empty()) throw InputError(one_line(path), "", "the file name " + why);
  if (!fs::is_regular_file(path))
    throw InputError(path, "", fs::exists(path) ? "not a regular file" : "no such file");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  if (!in) throw InputError(path, "", "cannot read the file");
  return ss.str();
}

std::vector<RunRecord> import_records(const ImportResult& res) {
  std::vector<RunRecord> out;
  for (const auto& ir : res.runs) out.push_back({ir.run, ir.points, {}, {}});
  return out;
}

std::vector<bool> store_import(Store& store, ImportResult& res) {
  std::vector<RunRecord> records = import_records(res);
  const std::vector<bool> added = insert_new_runs(store, records);
  for (size_t i = 0; i < records.size(); ++i) {
    res.runs[i].run.id = records[i].run.id;
    for (auto& p : res.runs[i].points) p.run_id = records[i].run.id;
  }
  return added;
}

ImportResult import_file(Store& store, const std::string& path, const std::string& label) {
  ImportResult res = import_document(read_document(path), path, label);
  store_import(store, res);
  return res;
}

}  // namespace opbench

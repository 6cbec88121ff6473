// opbench import: reference-format markdown -> runs and points. Torch-free.
#include "exchange/import.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/hash.hpp"
#include "core/text.hpp"
#include "exchange/markdown_parser.hpp"
#include "record/run_check.hpp"
#include "ops/op.hpp"
#include "store/whole_run.hpp"

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

// The Notation list by lower-case label: a column's provider is its description.
using NotationIndex = std::unordered_map<std::string, std::string>;

// Each column's provider (its notation description, else the label). Two columns of one
// table standing for one provider would be one point twice, and two labels differing only in
// case one Notation entry: an InputError naming both.
std::vector<std::string> column_providers(const NotationIndex& notation, const TableHead& h, const std::string& at) {
  std::vector<std::string> out;
  std::unordered_map<std::string, std::string> first, spelled;  // provider / lower-case label -> the column
  for (const auto& c : h.columns) {
    const std::string key = to_lower(c);
    auto [s, new_label] = spelled.emplace(key, c);
    if (!new_label)
      throw InputError(at, "",
                       "table '" + h.title + "': columns '" + s->second + "' and '" + c +
                           "' differ only in case (the Notation list does not tell them apart)");
    const auto desc = notation.find(key);
    out.push_back(desc != notation.end() ? desc->second : c);
    auto [it, fresh] = first.emplace(out.back(), c);
    if (!fresh)
      throw InputError(at, "",
                       "table '" + h.title + "': columns '" + it->second + "' and '" + c + "' both stand for provider '" +
                           out.back() + "' (by the Notation list or by name): a run holds one point per provider");
  }
  return out;
}

// What an opbench report's run line says of its run: "run 3 (label), 2026-11-22, cuda:0,
// commit 1a2b3c4d5e6f, torch 2.11.0, measured peak bandwidth 2941 GB/s, median of each
// point's samples". The label (each ')' and backslash in it escaped by a backslash) is skipped whatever it
// holds; then each field is read at its place: the date, the device, then the optional fields
// by their names, the statistic last. A line with fewer fields gives those it has; the line of
// an imported run ("run 3, imported from PATH") gives none.
struct RunLine {
  std::string device, commit, torch, stat;
  double peak_gbps = 0;
};

// The line after "run N (label)": ", 2026-11-22, ...".
std::string_view after_label(std::string_view line) {
  size_t k = 4;
  while (k < line.size() && std::isdigit(static_cast<unsigned char>(line[k]))) ++k;
  if (line.substr(k, 2) == " (") {
    for (k += 2; k < line.size() && line[k] != ')'; ++k)
      if (line[k] == '\\') ++k;
    ++k;
  }
  return k < line.size() ? line.substr(k) : std::string_view();
}

bool all_of_chars(std::string_view s, const char* allowed) {
  return !s.empty() && s.find_first_not_of(allowed) == std::string_view::npos;
}

// One ", "-separated field after the date and device.
void run_line_field(std::string_view f, RunLine* r) {
  const std::string_view samples = " of each point's samples";
  if (f.substr(0, 7) == "commit ") {
    std::string_view c = f.substr(7);
    const bool dirty = c.size() > 6 && c.substr(c.size() - 6) == "-dirty";
    if (all_of_chars(dirty ? c.substr(0, c.size() - 6) : c, "0123456789abcdef")) r->commit = std::string(c);
  } else if (f.substr(0, 6) == "torch " && f.find(' ', 6) == std::string_view::npos) {
    r->torch = std::string(f.substr(6));
  } else if (f.substr(0, 24) == "measured peak bandwidth " && f.size() > 29 && f.substr(f.size() - 5) == " GB/s") {
    const std::string_view v = f.substr(24, f.size() - 29);
    if (all_of_chars(v, "0123456789.") && v.size() < 30) r->peak_gbps = std::strtod(std::string(v).c_str(), nullptr);
  } else if (const size_t at = f.find(samples); at != std::string_view::npos) {
    const std::string stat(f.substr(0, at));
    const std::string_view tail = f.substr(at + samples.size());
    if (tail.empty() || tail.substr(0, 2) == " (")
      for (const char* s : {"median", "mean", "min", "max", "p20", "p80"})
        if (stat == s) r->stat = stat;
  }
}

RunLine parse_run_line(const std::string& line) {
  RunLine r;
  std::string_view rest = after_label(line);
  if (rest.substr(0, 2) != ", " || rest.substr(0, 16) == ", imported from ") return r;
  std::vector<std::string_view> fields;
  for (size_t at = 2; at <= rest.size();) {
    size_t end = rest.find(", ", at);
    if (end == std::string_view::npos) end = rest.size();
    fields.push_back(rest.substr(at, end - at));
    at = end + 2;
  }
  if (fields.size() > 1) {
    const std::string_view d = fields[1];
    if (d == "cpu" || d == "cuda" || (d.substr(0, 5) == "cuda:" && all_of_chars(d.substr(5), "0123456789")))
      r.device = std::string(d);
  }
  for (size_t i = 2; i < fields.size(); ++i) run_line_field(fields[i], &r);
  return r;
}

struct Building {
  ImportedRun r;
  std::unordered_set<std::string> titles;
  std::vector<std::string> labels;  // column labels in first-seen order
  std::unordered_set<std::string> label_set;
  std::set<std::string> ops;
  std::string at;  // where its first table is ("path:line")
};

// A new run for the tables of `h`'s GPU: identified by the document's content (`hash`), the
// GPU and the run's place in the document (importing the same document again gives the same
// uuids); an opbench report's run line gives the run's device, commit, torch and peak
// bandwidth. Its config_text is left to whoever stores it (the document, once per run).
ImportedRun new_run(const std::string& hash, const std::string& path, const std::string& label, const TableHead& h,
                    size_t index, const std::string& now) {
  ImportedRun ir;
  RunInfo& r = ir.run;
  r.label = label;
  r.source = "import";
  r.env.gpu = h.gpu;
  r.env.device = "";  // not known unless the run line says
  r.config_path = path;
  r.config_hash = hash;
  r.stat = "median";
  r.status = "done";
  r.started_at = now;
  r.finished_at = now;
  r.uuid = content_uuid("opbench-import\x1f" + hash + "\x1f" + h.gpu + "\x1f" + std::to_string(index));
  if (!h.run_line.empty()) {
    const RunLine line = parse_run_line(h.run_line);
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

// The document's Notation list in its order, each label spelled as the run's tables spell it,
// limited to the labels they use; then the labels the list does not give.
std::vector<std::pair<std::string, std::string>> run_notation(
    const std::vector<std::pair<std::string, std::string>>& doc_notation, const std::vector<std::string>& labels) {
  std::unordered_map<std::string, std::vector<std::string>> spelled;  // lower case -> the labels, in order
  for (const auto& l : labels) spelled[to_lower(l)].push_back(l);
  std::vector<std::pair<std::string, std::string>> notation;
  std::unordered_set<std::string> listed;
  for (const auto& [doc_label, desc] : doc_notation) {
    const auto it = spelled.find(to_lower(doc_label));
    if (it != spelled.end())
      for (const auto& l : it->second)
        if (listed.insert(l).second) notation.emplace_back(l, desc);
  }
  for (const auto& l : labels)
    if (listed.insert(l).second) notation.emplace_back(l, l);
  return notation;
}

// The document read table by table (exchange/markdown_parser.hpp): each table goes to the run of its
// GPU, each cell becomes a point handed to the sink as it is read; what a run is made of (its
// titles, labels, ops) is kept, its points are not.
class Importer final : public DocumentVisitor {
 public:
  Importer(const std::string& text, const std::string& path, const std::string& label, const PointSink& sink,
           const std::string& now)
      : path_(path), label_(label), sink_(sink), now_(now.empty() ? now_iso() : now), hash_(content_hash(text)) {}

  void notation(const std::vector<std::pair<std::string, std::string>>& items) override {
    notation_ = items;
    for (const auto& [label, desc] : items) index_.emplace(to_lower(label), desc);
  }

  void table(const TableHead& h) override {
    ++tables_;
    const std::string at = path_ + ":" + std::to_string(h.line);
    check_head(h, at);
    skip_ = h.empty || h.columns.empty();
    if (skip_) {  // no cell: no point, and no run for it
      res_.warnings.push_back(at + ": table '" + h.title + "' has no " +
                              (h.empty ? "rows" : "columns besides " + h.index_name) + ": nothing to import");
      return;
    }
    run_ = run_for(h, at);
    Building& b = runs_[run_];
    b.titles.insert(h.title);
    b.r.tables++;
    info_ = parse_title(h.title);
    b.ops.insert(info_.op);
    op_ = info_.op.empty() ? nullptr : find_op(info_.op);
    providers_ = column_providers(index_, h, path_ + ":" + std::to_string(h.line + 1));  // the header's line
    for (const auto& c : h.columns)
      if (b.label_set.insert(c).second) b.labels.push_back(c);
    cell_ = first_cell(h, b.r.run);
    xs_.clear();
  }

  void row(const TableHead& h, int line, double xv, const std::vector<double>& cells) override {
    if (skip_) return;
    const std::string at = path_ + ":" + std::to_string(line);
    if (!std::isfinite(xv) || xv != std::floor(xv) || std::fabs(xv) > 9.0e15)
      throw InputError(at, "",
                       "table '" + h.title + "': " + h.index_name + " value " + format_float_column({xv})[0] +
                           " is not an integer (the store keeps the x axis as integers)");
    const int64_t x = int64_t(xv);
    xs_.emplace_back(x, line);
    Params params = info_.params;
    if (!params.has(h.index_name)) params.set(h.index_name, x);
    cell_.point.params = std::move(params);
    cell_.point.x_value = x;
    cell_.result.bytes = point_bytes(op_, cell_.point.params);
    for (size_t col = 0; col < cells.size(); ++col) emit(h, col, cells[col], at);
  }

  void end_table(const TableHead& h) override {
    if (skip_) return;
    // An x value twice: named at the first row that repeats one.
    std::sort(xs_.begin(), xs_.end());
    int repeat = 0;
    int64_t x = 0;
    for (size_t i = 1; i < xs_.size(); ++i)
      if (xs_[i].first == xs_[i - 1].first && (!repeat || xs_[i].second < repeat)) repeat = xs_[i].second, x = xs_[i].first;
    if (repeat)
      throw InputError(path_ + ":" + std::to_string(repeat), "",
                       "table '" + h.title + "': " + h.index_name + " = " + std::to_string(x) + " appears twice");
  }

  ImportResult result() {
    if (!tables_)
      throw InputError(path_ + ":1", "", "no tables found (fenced blocks of 'TITLE:' lines, each followed by a pandas table)");
    if (runs_.empty()) throw InputError(path_ + ":1", "", "every table is empty: nothing to import");
    for (auto& b : runs_) {
      b.r.run.notation = run_notation(notation_, b.labels);
      b.r.run.op = b.ops.size() == 1 ? *b.ops.begin() : "";
      if (const Problem p = run_problem(b.r.run)) throw InputError(b.at, p.field, p.why);
      res_.runs.push_back(std::move(b.r));
    }
    return std::move(res_);
  }

 private:
  // The names a table gives must print back; its GPU must be named by a heading above it.
  void check_head(const TableHead& h, const std::string& at) const {
    check_name(h.title, at, "title");
    check_name(h.index_name, at, "index column");
    for (const auto& c : h.columns)
      if (!label_problem(c).empty()) throw InputError(at, "", "column '" + c + "' " + label_problem(c));
    if (!h.headings.empty()) check_name(h.headings.back(), at, "heading");
    if (h.gpu.empty())
      throw InputError(at, "",
                       "table '" + h.title + "': no heading above it names its GPU (such as '# H100'): "
                       "a run is measured on one device");
  }

  // The run of the table's GPU (and run line): the current one, or a new one when there is
  // none or it holds this title already (a report of several runs on one GPU).
  size_t run_for(const TableHead& h, const std::string& at) {
    const std::string key = h.gpu + "\x1f" + h.run_line;
    auto cur = current_.find(key);
    if (cur == current_.end() || runs_[cur->second].titles.count(h.title)) {
      runs_.push_back({new_run(hash_, path_, label_, h, runs_.size(), now_), {}, {}, {}, {}, at});
      cur = current_.insert_or_assign(key, runs_.size() - 1).first;
    }
    return cur->second;
  }

  // What every cell of the table shares: its title, op, section, statistic and unit.
  StoredPoint first_cell(const TableHead& h, const RunInfo& run) const {
    StoredPoint sp;
    const std::string metric = info_.params.s_or("metric", "");
    sp.section = h.headings.empty() ? "" : h.headings.back();
    sp.point.op = info_.op;
    sp.point.title = h.title;
    sp.point.x_name = h.index_name;
    sp.stat = metric == "memory" ? "max" : run.stat;
    sp.created_at = now_;
    Result& r = sp.result;
    r.unit = metric == "memory" ? "MiB" : metric == "speed" ? "ms" : "";
    // No samples: the document holds one statistic per cell, nothing else is known.
    const double nan = std::nan("");
    r.stats = Stats{nan, nan, nan, nan, nan, nan, nan, 0};
    return sp;
  }

  // The point of one cell: -1 a failed point, NaN one with no value; checked as every point
  // the store takes is (record/run_check.hpp), then handed on.
  void emit(const TableHead& h, size_t col, double v, const std::string& at) {
    StoredPoint sp = cell_;
    sp.seq = seq_++;
    sp.point.label = h.columns[col];
    sp.point.provider = providers_[col];
    sp.value = v;
    Result& r = sp.result;
    const double peak = runs_[run_].r.run.env.peak_gbps;
    if (v == -1) {
      r.error = "imported as -1";
    } else if (r.unit == "ms" && r.bytes > 0 && v > 0) {
      r.gbps = r.bytes / (v * 1e-3) / 1e9;
      if (peak > 0) r.pct_peak = 100.0 * r.gbps / peak;
    }
    if (const Problem p = point_problem(sp, "import"))
      throw InputError(at, "", "table '" + h.title + "' column '" + h.columns[col] + "': " + p.field + " " + p.why);
    runs_[run_].r.count++;
    if (sink_) sink_(run_, std::move(sp));
  }

  const std::string& path_;
  const std::string& label_;
  const PointSink& sink_;
  const std::string now_, hash_;
  std::vector<std::pair<std::string, std::string>> notation_;
  NotationIndex index_;
  ImportResult res_;
  std::vector<Building> runs_;
  std::unordered_map<std::string, size_t> current_;  // gpu and run line -> its run being filled
  size_t tables_ = 0;
  int64_t seq_ = 0;
  // The table being read.
  bool skip_ = false;
  size_t run_ = 0;
  TitleInfo info_;
  const OpSpec* op_ = nullptr;
  std::vector<std::string> providers_;
  StoredPoint cell_;
  std::vector<std::pair<int64_t, int>> xs_;  // x value and line of each row
};

}  // namespace

ImportResult import_document(const std::string& text, const std::string& path, const std::string& label,
                             const PointSink& sink, const std::string& now) {
  size_t bad = 0;
  if (!valid_utf8(text, &bad))
    throw InputError(path + ":" + std::to_string(line_of(text, bad)), "", "not valid UTF-8");
  Importer importer(text, path, label, sink, now);
  read_document_tables(text, path, importer);
  return importer.result();
}

ImportResult import_document(const std::string& text, const std::string& path, const std::string& label) {
  std::vector<std::vector<StoredPoint>> points;
  ImportResult res = import_document(text, path, label, [&](size_t run, StoredPoint&& p) {
    if (run >= points.size()) points.resize(run + 1);
    points[run].push_back(std::move(p));
  });
  for (size_t i = 0; i < res.runs.size(); ++i) {
    if (i < points.size()) res.runs[i].points = std::move(points[i]);
    res.runs[i].run.config_text = text;
  }
  return res;
}

std::string read_document(const std::string& path) {
  const std::string why = text_problem(path);  // stored as the runs' config_path
  if (!why.empty()) throw InputError(one_line(path), "", "the file name " + why);
  if (!fs::is_regular_file(path))
    throw InputError(path, "", fs::exists(path) ? "not a regular file" : "no such file");
  const long long size = fs::file_size(path);
  if (size > kMaxDocumentBytes)
    throw InputError(path, "",
                     std::to_string(size >> 20) + " MiB, more than the " + std::to_string(kMaxDocumentBytes >> 20) +
                         " MiB an imported file may hold (split it, or raise kMaxDocumentBytes in exchange/import.hpp)");
  std::string text;
  if (!fs::read_file(path, &text)) throw InputError(path, "", "cannot read the file");
  return text;
}

std::vector<RunRecord> import_records(const ImportResult& res) {
  std::vector<RunRecord> out;
  for (const RunRecord& ir : res.runs) out.push_back(ir);
  return out;
}

std::vector<bool> store_import(Store& store, ImportResult& res) {
  std::vector<RunRecord> records = import_records(res);
  const std::vector<bool> added = insert_new_runs(store, records);
  for (size_t i = 0; i < records.size(); ++i) {
    res.runs[i].run.id = records[i].run.id;
    res.runs[i].added = added[i];
    for (auto& p : res.runs[i].points) p.run_id = records[i].run.id;
  }
  return added;
}

void check_point_limit(const ImportResult& res, const std::string& path, size_t max_points) {
  size_t points = 0;
  for (const auto& ir : res.runs) points += ir.count;
  if (points > max_points)
    throw InputError(path, "",
                     std::to_string(points) + " points, more than the limit of " + std::to_string(max_points) +
                         " (--max-points raises it)");
}

void store_document(Store& store, const std::string& text, const std::string& path, const std::string& label,
                    ImportResult& plan) {
  store.transaction([&] {
    for (auto& ir : plan.runs) {
      if (auto there = store.run_by_uuid(ir.run.uuid)) {
        ir.run.id = there->id;
        ir.added = false;
        continue;
      }
      RunInfo run = ir.run;
      run.config_text = text;
      store.begin_run(run);
      ir.run.id = run.id;
      ir.added = true;
    }
    std::vector<StoredPoint> batch;
    const std::string now = plan.runs.empty() ? "" : plan.runs.front().run.started_at;
    import_document(text, path, label, [&](size_t run, StoredPoint&& p) {
      if (!plan.runs[run].added) return;
      p.run_id = plan.runs[run].run.id;
      batch.push_back(std::move(p));
      if (batch.size() >= kImportBatch) store.insert_points(batch), batch.clear();
    }, now);
    store.insert_points(batch);
  });
}

ImportResult import_file(Store& store, const std::string& path, const std::string& label) {
  const std::string text = read_document(path);
  ImportResult res = import_document(text, path, label, PointSink(), "");
  store_document(store, text, path, label, res);
  return res;
}

}  // namespace opbench

// opbench import: reference-format markdown -> runs and points. Torch-free.
#include "exchange/import.hpp"

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/hash.hpp"
#include "ops/op.hpp"
#include "report/document.hpp"

namespace opbench {

namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

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

ImportResult import_document(const std::string& text, const std::string& path,
                             const std::string& label) {
  const ParsedDocument doc = parse_document(text, path);
  ImportResult res;
  if (doc.tables.empty())
    throw InputError(path + ":1", "", "no tables found (fenced blocks of 'TITLE:' lines, each followed by a pandas table)");

  const std::string now = now_iso();
  struct Building {
    ImportedRun r;
    std::set<std::string> titles;
    std::vector<std::string> labels;  // column labels in first-seen order
    std::set<std::string> ops;
  };
  std::vector<Building> runs;
  std::map<std::string, size_t> current;  // gpu -> its run being filled
  int64_t seq = 0;

  for (const ParsedTable& pt : doc.tables) {
    const Table& t = pt.table;
    if (t.index.empty()) {
      res.warnings.push_back(path + ":" + std::to_string(pt.line) + ": table '" + t.title +
                             "' has no rows: nothing to import");
      continue;
    }
    auto cur = current.find(pt.gpu);
    if (cur == current.end() || runs[cur->second].titles.count(t.title)) {
      Building b;
      b.r.run.label = label;
      b.r.run.source = "import";
      b.r.run.env.device = "";
      b.r.run.env.gpu = pt.gpu;
      b.r.run.config_path = path;
      b.r.run.config_text = text;
      b.r.run.config_hash = content_hash(text);
      b.r.run.stat = "median";
      b.r.run.status = "done";
      b.r.run.started_at = now;
      b.r.run.finished_at = now;
      runs.push_back(std::move(b));
      current[pt.gpu] = runs.size() - 1;
      cur = current.find(pt.gpu);
    }
    Building& b = runs[cur->second];
    b.titles.insert(t.title);
    b.r.tables++;

    const TitleInfo info = parse_title(t.title);
    b.ops.insert(info.op);
    const OpSpec* op = info.op.empty() ? nullptr : find_op(info.op);
    const std::string metric = info.params.s_or("metric", "");
    const std::string section = pt.headings.empty() ? "" : pt.headings.back();

    for (const auto& c : t.columns) {
      bool seen = false;
      for (const auto& l : b.labels) seen = seen || l == c;
      if (!seen) b.labels.push_back(c);
    }

    std::set<int64_t> xs;
    for (size_t row = 0; row < t.index.size(); ++row) {
      const int line = pt.line + 2 + int(row);  // title line, header line, then one line per row
      const double xv = t.index[row];
      if (!std::isfinite(xv) || xv != std::floor(xv) || std::fabs(xv) > 9.0e15)
        throw InputError(path + ":" + std::to_string(line), "",
                         "table '" + t.title + "': " + t.index_name + " value " +
                             format_float_column({xv})[0] +
                             " is not an integer (the store keeps the x axis as integers)");
      const int64_t x = int64_t(xv);
      if (!xs.insert(x).second)
        throw InputError(path + ":" + std::to_string(line), "",
                         "table '" + t.title + "': " + t.index_name + " = " + std::to_string(x) +
                             " appears twice");
      Params params = info.params;
      if (!params.has(t.index_name)) params.set(t.index_name, x);
      double bytes = 0;
      if (op) {
        try {
          Params full = op->with_defaults(params);
          op->validate(full);
          bytes = op->min_bytes(full);
        } catch (const std::exception&) {
          bytes = 0;
        }
      }
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
        const std::string* desc = notation_for(doc, t.columns[col]);
        sp.point.provider = desc ? *desc : t.columns[col];
        sp.stat = metric == "memory" ? "max" : "median";
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
        }
        b.r.points.push_back(std::move(sp));
      }
    }
  }
  if (runs.empty())
    throw InputError(path + ":1", "", "every table is empty: nothing to import");

  for (auto& b : runs) {
    // Notation: the document's list in its order, each label spelled as the tables spell it,
    // limited to the labels this run's tables use; then labels the list does not give.
    std::vector<std::pair<std::string, std::string>> notation;
    std::set<std::string> listed;
    for (const auto& [doc_label, desc] : doc.notation)
      for (const auto& l : b.labels)
        if (lower(l) == lower(doc_label) && listed.insert(l).second) notation.emplace_back(l, desc);
    for (const auto& l : b.labels)
      if (listed.insert(l).second) notation.emplace_back(l, l);
    b.r.run.notation = notation;
    b.r.run.op = b.ops.size() == 1 ? *b.ops.begin() : "";
    res.runs.push_back(std::move(b.r));
  }
  return res;
}

std::string read_document(const std::string& path) {
  if (!fs::is_regular_file(path))
    throw InputError(path, "", fs::exists(path) ? "not a regular file" : "no such file");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  if (!in) throw InputError(path, "", "cannot read the file");
  return ss.str();
}

void store_import(Store& store, ImportResult& res) {
  store.transaction([&] {
    for (auto& ir : res.runs) {
      store.begin_run(ir.run);
      for (auto& p : ir.points) p.run_id = ir.run.id;
      store.insert_points(ir.points);
    }
  });
}

ImportResult import_file(Store& store, const std::string& path, const std::string& label) {
  ImportResult res = import_document(read_document(path), path, label);
  store_import(store, res);
  return res;
}

}  // namespace opbench

// opbench import: reference-format markdown -> runs and points. Torch-free.
#include "diff/import.hpp"

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

namespace {

// A word axis value the op accepts.
bool word_ok(const OpSpec& op, const std::string& axis, const std::string& v) {
  const AxisSpec* a = op.axis(axis);
  if (!a) return false;
  if (a->choices.empty()) return true;
  for (const auto& c : a->choices)
    if (c == v) return true;
  return false;
}

// The op's axes with their fallbacks filled in where `p` leaves them unset.
Params with_fallbacks(const OpSpec& op, Params p) {
  for (const auto& a : op.axes)
    if (!p.has(a.name) && a.fallback) p.set(a.name, *a.fallback);
  return p;
}

// One title pattern: a regex and the axis each group gives (an empty name skips the group;
// a group that did not take part leaves its axis unset).
struct Pattern {
  std::regex re;
  std::vector<std::pair<std::string, AxisKind>> groups;  // group 1.. -> axis
};

const std::vector<Pattern>& patterns() {
  using K = AxisKind;
  static const std::vector<Pattern> ps = [] {
    const std::string num = R"((\d{1,9}))", snum = R"((-?\d{1,9}))", word = R"(([a-z0-9]+))";
    const std::string head = "-" + word + "-" + word + "-batch" + num + "-head" + num + "-dim" + num;
    std::vector<Pattern> v;
    // act, lrpe_cosine, lrpe_rotate: OP-metric-mode-batchB-headH-dimD-act_A[-dim_K]-dtype
    v.push_back({std::regex("^(act|lrpe_cosine|lrpe_rotate)" + head + "-act_" + word +
                            "(?:-dim_" + snum + ")?-" + word + "$"),
                 {{"", K::Word}, {"metric", K::Word}, {"mode", K::Word}, {"batch", K::Int},
                  {"head", K::Int}, {"dim", K::Int}, {"act", K::Word}, {"act_dim", K::Int},
                  {"dtype", K::Word}}});
    // md_lrpe_cosine: ...-dimD[-act_A[-dim_K]]-dtype-MDd-lL
    v.push_back({std::regex("^(md_lrpe_cosine)" + head + "(?:-act_" + word + "(?:-dim_" + snum +
                            ")?)?-" + word + "-" + num + "d-l" + num + "$"),
                 {{"", K::Word}, {"metric", K::Word}, {"mode", K::Word}, {"batch", K::Int},
                  {"head", K::Int}, {"dim", K::Int}, {"act", K::Word}, {"act_dim", K::Int},
                  {"dtype", K::Word}, {"md", K::Int}, {"l", K::Int}}});
    // tpa_decode: ...-dimD-rankR-dtype
    v.push_back({std::regex("^(tpa_decode)" + head + "-rank" + num + "-" + word + "$"),
                 {{"", K::Word}, {"metric", K::Word}, {"mode", K::Word}, {"batch", K::Int},
                  {"head", K::Int}, {"dim", K::Int}, {"rank", K::Int}, {"dtype", K::Word}}});
    return v;
  }();
  return ps;
}

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

}  // namespace

TitleInfo parse_title(const std::string& title) {
  for (const auto& pat : patterns()) {
    std::smatch m;
    if (!std::regex_match(title, m, pat.re)) continue;
    std::string name = m[1].str();
    if (name == "md_lrpe_cosine") name = "lrpe_cosine_md";  // the op whose default title this is
    const OpSpec* op = find_op(name);
    if (!op) continue;
    Params p;
    bool ok = true;
    for (size_t g = 1; g < pat.groups.size() && ok; ++g) {
      const auto& [axis, kind] = pat.groups[g];
      if (!m[g + 1].matched) continue;
      const std::string v = m[g + 1].str();
      if (kind == AxisKind::Int) {
        p.set(axis, int64_t(std::stoll(v)));
      } else {
        ok = word_ok(*op, axis, v);
        p.set(axis, v);
      }
    }
    if (!ok) continue;
    // The title must be exactly what the op would print for these axes (this rejects e.g.
    // "-act_relu-dim_1", which no op writes), and the axes must be ones the op accepts.
    try {
      Params full = with_fallbacks(*op, p);
      if (op->default_title(full) != title) continue;
      for (const auto& x : op->x_axes)
        if (!full.has(x)) full.set(x, int64_t(1));
      op->validate(full);
    } catch (const std::exception&) {
      continue;
    }
    return {op->name, p};
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
  size_t bad = 0;
  if (!valid_utf8(text, &bad))
    throw InputError(path + ":" + std::to_string(line_of(text, bad)), "", "not valid UTF-8");
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
    const std::string at = path + ":" + std::to_string(pt.line);
    check_name(t.title, at, "title");
    check_name(t.index_name, at, "index column");
    for (const auto& c : t.columns)
      if (!label_problem(c).empty()) throw InputError(at, "", "column '" + c + "' " + label_problem(c));
    if (!pt.headings.empty()) check_name(pt.headings.back(), at, "heading");
    const std::vector<std::string> providers = column_providers(doc, pt, path);
    if (t.index.empty() || t.columns.empty()) {  // no cell: no point, and no run for it
      res.warnings.push_back(path + ":" + std::to_string(pt.line) + ": table '" + t.title + "' has no " +
                             (t.index.empty() ? "rows" : "columns besides " + t.index_name) + ": nothing to import");
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
          Params full = with_fallbacks(*op, params);
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
        sp.point.provider = providers[col];
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
        if (to_lower(l) == to_lower(doc_label) && listed.insert(l).second) notation.emplace_back(l, desc);
    for (const auto& l : b.labels)
      if (listed.insert(l).second) notation.emplace_back(l, l);
    b.r.run.notation = notation;
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

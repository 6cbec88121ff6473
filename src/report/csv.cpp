#include "report/csv.hpp"

#include <charconv>
#include <cmath>
#include <set>
#include <stdexcept>
#include <variant>

#include "record/point_fields.hpp"

namespace opbench {

namespace {

std::string cell(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// Text from a title, a label, a GPU name or an imported file: one that a spreadsheet would read
// as a formula (it begins with =, +, -, @, a tab or a carriage return) gets a ' before it, as
// spreadsheets expect of text. Numbers are written as numbers.
std::string text(const std::string& s) {
  if (!s.empty() && std::string("=+-@\t\r").find(s[0]) != std::string::npos) return "'" + s;
  return s;
}

std::string number(double v) {
  if (std::isnan(v)) return "";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string rounds_cell(const std::vector<int64_t>& rounds) {
  std::string s;
  for (int64_t n : rounds) s += (s.empty() ? "" : ";") + std::to_string(n);
  return s;
}

void row(std::string& out, const std::vector<std::string>& cells) {
  for (size_t i = 0; i < cells.size(); ++i) out += (i ? "," : "") + cell(cells[i]);
  out += "\n";
}

// The GPU of the device that measured `p` (a run on several devices lists each), else the run's.
std::string point_gpu(const RunInfo& run, const StoredPoint& p) {
  for (const auto& d : run.devices)
    if (d.device == p.device) return d.gpu;
  return run.env.gpu;
}

// A point's cell in a column of the point field table, by the row's kind.
std::string field_cell(const PointField& f, const StoredPoint& p) {
  switch (f.kind) {
    case PointKind::text: return text(f.text_of(p));
    case PointKind::integer: return std::to_string(f.integer_of(p));
    case PointKind::real: return number(f.real_of(p));
    case PointKind::flag: return f.flag_of(p) ? "1" : "0";
    case PointKind::counts: return rounds_cell(f.counts_of(p));
    default: throw std::logic_error(std::string("csv: no cell for the point field ") + f.name);
  }
}

// The axes of every point's params, in the order first seen.
std::vector<std::string> param_axes(const std::vector<RunRecord>& runs) {
  std::vector<std::string> axes;
  std::set<std::string> seen;
  for (const auto& r : runs)
    for (const auto& p : r.points)
      for (const auto& [axis, v] : p.point.params.values())
        if (seen.insert(axis).second) axes.push_back(axis);
  return axes;
}

}  // namespace

std::string render_csv(const std::vector<RunRecord>& runs) {
  const std::vector<std::string> axes = param_axes(runs);
  std::vector<const PointField*> columns;
  for (const PointField& f : point_fields())
    if (*f.csv) columns.push_back(&f);
  std::string out;
  std::vector<std::string> header = {"run", "gpu", "device", "title", "section"};
  for (const auto& a : axes) header.push_back(text(a));
  for (const PointField* f : columns) header.push_back(f->csv);
  row(out, header);
  for (const auto& r : runs)
    for (const auto& p : r.points) {
      std::vector<std::string> cells = {std::to_string(r.run.id), text(point_gpu(r.run, p)), text(p.device),
                                        text(p.point.title), text(p.section)};
      for (const auto& a : axes) {
        const Value* v = p.point.params.has(a) ? &p.point.params.values().at(a) : nullptr;
        cells.push_back(!v ? "" : std::holds_alternative<int64_t>(*v) ? to_string(*v) : text(to_string(*v)));
      }
      for (const PointField* f : columns) cells.push_back(field_cell(*f, p));
      row(out, cells);
    }
  return out;
}

}  // namespace opbench

#include "record/run_check.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "core/error.hpp"
#include "core/text.hpp"
#include "ops/op.hpp"
#include "record/point_fields.hpp"

namespace opbench {

namespace {

// The statistics a value can be ("" in runs older opbench versions stored: the median).
const std::vector<std::string> kStats = {"median", "mean", "min", "max", "p20", "p80", ""};

bool one_of(const std::string& s, const std::vector<std::string>& words) {
  return std::find(words.begin(), words.end(), s) != words.end();
}

std::string listed(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words)
    if (!w.empty()) out += (out.empty() ? "" : ", ") + w;
  return out;
}

// Collects the first problem met: each check is one line, the rest skipped once one failed.
class Checker {
 public:
  Problem problem;

  void fail(const std::string& field, const std::string& why) {
    if (!problem) problem = {field, why};
  }
  // A name printed back into documents; `optional`: may be empty.
  void name(const std::string& field, const std::string& s, bool optional = true) {
    if (s.empty()) {
      if (!optional) fail(field, "must not be empty");
      return;
    }
    const std::string why = name_problem(s);
    if (!why.empty()) fail(field, "'" + s + "' " + why);
  }
  void label(const std::string& field, const std::string& s) {
    const std::string why = s.empty() ? "must not be empty" : label_problem(s);
    if (!why.empty()) fail(field, "'" + s + "' " + why);
  }
  // Text kept on one line (a path, a time, a host).
  void text(const std::string& field, const std::string& s) {
    const std::string why = text_problem(s);
    if (!why.empty()) fail(field, why);
  }
  void word(const std::string& field, const std::string& s, const std::vector<std::string>& words) {
    if (!one_of(s, words)) fail(field, "'" + one_line(s) + "' is none of " + listed(words));
  }
  // A count or size: at least `lo`.
  void at_least(const std::string& field, int64_t v, int64_t lo) {
    if (v < lo) fail(field, std::to_string(v) + " is below " + std::to_string(lo));
  }
  // A measured quantity: not negative (NaN: not known).
  void not_negative(const std::string& field, double v) {
    if (v < 0) fail(field, "is negative (" + format_number(v) + ")");
  }
  void op(const std::string& field, const std::string& name) {
    if (!name.empty() && !find_op(name)) fail(field, "'" + name + "' is no op this opbench knows");
  }

  static std::string format_number(double v) {
    std::string s = std::to_string(v);
    while (s.size() > 1 && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }
};

void check_environment(Checker& c, const Environment& e) {
  c.text("environment.device", e.device);
  c.name("environment.gpu", e.gpu);
  c.at_least("environment.sm_count", e.sm_count, 0);
  c.at_least("environment.memory_bytes", e.memory_bytes, 0);
  c.text("environment.driver", e.driver);
  c.text("environment.cuda_runtime", e.cuda_runtime);
  c.text("environment.torch_version", e.torch_version);
  c.text("environment.compute_capability", e.compute_capability);
  c.not_negative("environment.peak_gbps", e.peak_gbps);
}

void check_timing(Checker& c, const RunInfo& r) {
  c.text("timing.flush_l2", r.flush_l2);
  c.at_least("timing.rounds", r.rounds, 0);
  c.at_least("timing.interleave", r.interleave, 0);
  c.at_least("timing.processes", r.processes, 0);
  c.at_least("timing.threads", r.threads, RunInfo::kThreadsUnknown);
  c.not_negative("timing.warmup_ms", r.warmup_ms);
  c.not_negative("timing.rep_ms", r.rep_ms);
}

void check_params(Checker& c, const Params& params) {
  for (const auto& [axis, v] : params.values()) {
    c.name("params", axis, false);
    if (const auto* w = std::get_if<std::string>(&v)) c.name("params." + axis, *w);
  }
}

// What a point's fields ask by themselves (their rows of point_fields), each named by its place
// in the document.
void check_fields(Checker& c, const StoredPoint& p) {
  for (const auto& f : point_fields()) {
    switch (f.check) {
      case PointCheck::none: break;
      case PointCheck::name: c.name(f.path(), f.text_of(p)); break;
      case PointCheck::required_name: c.name(f.path(), f.text_of(p), false); break;
      case PointCheck::label:
        if (!f.text_of(p).empty()) c.label(f.path(), f.text_of(p));
        break;
      case PointCheck::op: c.op(f.path(), f.text_of(p)); break;
      case PointCheck::one_line: c.text(f.path(), f.text_of(p)); break;
      case PointCheck::not_negative:
        if (f.kind == PointKind::integer) c.at_least(f.path(), f.integer_of(p), 0);
        else c.not_negative(f.path(), f.real_of(p));
        break;
    }
  }
}

// What a point's numbers ask of each other and of its unit.
void check_numbers(Checker& c, const StoredPoint& p) {
  const Result& r = p.result;
  const bool measure = r.unit == "ms" || r.unit == "MiB";  // a time or a size: -1 failed, else >= 0
  if (measure && p.value != -1) c.not_negative("value", p.value);
  for (size_t i = 0; i < r.samples.size(); ++i)
    if (!(r.samples[i] >= 0) || std::isinf(r.samples[i]))
      c.fail("samples[" + std::to_string(i) + "]", "is not a time or size (" + Checker::format_number(r.samples[i]) + ")");
  if (!r.samples.empty() && r.stats.count != int64_t(r.samples.size()))
    c.fail("stats.count", std::to_string(r.stats.count) + " for " + std::to_string(r.samples.size()) + " samples");
  int64_t in_rounds = 0;
  for (size_t i = 0; i < r.rounds.size(); ++i) {
    c.at_least("rounds[" + std::to_string(i) + "]", r.rounds[i], 0);
    in_rounds += std::max<int64_t>(0, r.rounds[i]);
  }
  if (!r.rounds.empty() && in_rounds != int64_t(r.samples.size()))
    c.fail("rounds", "hold " + std::to_string(in_rounds) + " samples, the point " + std::to_string(r.samples.size()));
  if (r.rel_err != -1) c.not_negative("rel_err", r.rel_err);
}

}  // namespace

Problem run_problem(const RunInfo& r) {
  Checker c;
  c.name("label", r.label);
  if (r.label.size() > kMaxRunLabel) c.fail("label", run_label_problem(r.label));
  c.word("source", r.source, {"sweep", "import"});
  c.word("status", r.status, {"running", "done", "interrupted"});
  c.word("stat", r.stat, kStats);
  c.op("op", r.op);
  c.text("uuid", r.uuid);
  c.text("host", r.host);
  c.text("git_commit", r.git_commit);
  c.text("started_at", r.started_at);
  c.text("finished_at", r.finished_at);
  c.text("config.path", r.config_path);
  check_environment(c, r.env);
  check_timing(c, r);
  for (size_t i = 0; i < r.notation.size(); ++i) {
    c.label("notation[" + std::to_string(i) + "].label", r.notation[i].first);
    c.name("notation[" + std::to_string(i) + "].provider", r.notation[i].second, false);
  }
  for (size_t i = 0; i < r.devices.size(); ++i) {
    const std::string at = "devices[" + std::to_string(i) + "]";
    c.text(at + ".device", r.devices[i].device);
    c.name(at + ".gpu", r.devices[i].gpu);
    c.not_negative(at + ".peak_gbps", r.devices[i].peak_gbps);
  }
  return c.problem;
}

Problem point_problem(const StoredPoint& p, const std::string& source) {
  Checker c;
  const Point& pt = p.point;
  check_fields(c, p);
  if (source == "sweep" && !pt.op.empty() && !c.problem) {  // (older opbench versions stored no op)
    const OpSpec* op = find_op(pt.op);
    if (std::none_of(op->providers.begin(), op->providers.end(), [&](const auto& e) { return e.first == pt.provider; }))
      c.fail("provider", "'" + pt.provider + "' is no provider of " + pt.op);
  }
  check_params(c, pt.params);
  c.word("stat", p.stat, kStats);
  c.word("unit", p.result.unit, {"", "ms", "MiB"});
  check_numbers(c, p);
  return c.problem;
}

std::string point_name(const StoredPoint& p) {
  return "'" + p.point.title + "' " + p.point.x_name + "=" + std::to_string(p.point.x_value) + " provider '" +
         p.point.provider + "'";
}

std::optional<std::pair<size_t, size_t>> repeated_point(const std::vector<StoredPoint>& points) {
  std::unordered_map<std::string, size_t> first;
  first.reserve(points.size());
  for (size_t i = 0; i < points.size(); ++i) {
    auto [it, fresh] = first.emplace(points[i].point.key(), i);
    if (!fresh) return std::make_pair(it->second, i);
  }
  return std::nullopt;
}

void check_record(const RunRecord& rec, const std::string& where, const std::string& prefix) {
  if (const Problem p = run_problem(rec.run)) throw InputError(where, prefix + "." + p.field, p.why);
  for (size_t i = 0; i < rec.points.size(); ++i)
    if (const Problem p = point_problem(rec.points[i], rec.run.source))
      throw InputError(where, prefix + ".points[" + std::to_string(i) + "]." + p.field, p.why);
  if (const auto twice = repeated_point(rec.points))
    throw InputError(where, prefix + ".points[" + std::to_string(twice->second) + "]",
                     "is " + prefix + ".points[" + std::to_string(twice->first) + "] again (" +
                         point_name(rec.points[twice->first]) + "): a run holds each point once");
}

void check_distinct_uuids(const std::vector<RunRecord>& runs, const std::string& where) {
  std::unordered_map<std::string, size_t> first;
  for (size_t i = 0; i < runs.size(); ++i) {
    auto [it, fresh] = first.emplace(runs[i].run.uuid, i);
    if (!fresh)
      throw InputError(where, "runs[" + std::to_string(i) + "].uuid",
                       "is the uuid of runs[" + std::to_string(it->second) + "] (" + runs[i].run.uuid +
                           "): one input holds each run once");
  }
}

}  // namespace opbench

// The fields of a run, one row each (run_fields.hpp). Torch-free.
#include "record/run_fields.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "core/text.hpp"

namespace opbench {

namespace {

// A field of the run, or of its environment, reached by its member.
template <auto M>
auto& of_run(RunInfo& r) {
  return member<M>(r);
}
template <auto M>
auto& of_env(RunInfo& r) {
  return member<M>(r.env);
}

// A row, filled in by the chained calls below (and the field table's).
struct Row : FieldRow<Row, RunField> {
  Row(const char* n, FieldKind k) {
    name = n;
    kind = k;
    known_above = true;
  }
  // Filled by queries: read by `expr` ("" its column) and never written.
  Row& queried(const char* c, const char* expr = "") {
    select = expr;
    return filled(c);
  }
  Row& in_listing() {
    listed = true;
    return *this;
  }
  Row& timing(int place, std::string (*words)(const RunInfo&)) {
    timing_place = place;
    phrase = words;
    return *this;
  }
  Row& warns(int place, const char* what, const char* reason, std::string (*as)(const RunInfo&) = nullptr) {
    warning_place = place;
    differs = what;
    why = reason;
    compared = as;
    return *this;
  }
};

Row text(const char* name, std::string& (*get)(RunInfo&)) { return Row(name, FieldKind::text).reaching(get); }
Row integer(const char* name, int64_t& (*get)(RunInfo&)) { return Row(name, FieldKind::integer).reaching(get); }
Row real(const char* name, double& (*get)(RunInfo&)) { return Row(name, FieldKind::real).reaching(get); }

// --- phrases of the timing line and values diff compares
std::string flush_phrase(const RunInfo& r) { return r.flush_l2.empty() ? "" : "L2 flush " + r.flush_l2; }
std::string rounds_phrase(const RunInfo& r) {
  return stop_rule_text(r.stop_rule, r.noise_pct, r.min_rounds, r.min_samples, r.rounds);
}
std::string interleave_phrase(const RunInfo& r) {
  return r.interleave > 1 ? "interleaved over " + std::to_string(r.interleave) + " table cells" : "";
}
std::string processes_phrase(const RunInfo& r) {
  return r.processes > 1 ? "spread over " + std::to_string(r.processes) + " processes" : "";
}
std::string budgets_phrase(const RunInfo& r) {
  if (!(r.warmup_ms > 0 && r.rep_ms > 0)) return "";
  return "warm-up " + number_text("%g", r.warmup_ms) + " ms and repeat " + number_text("%g", r.rep_ms) + " ms a point";
}
std::string budgets_compared(const RunInfo& r) {
  if (!(r.warmup_ms > 0 && r.rep_ms > 0)) return "";
  return "warm-up " + number_text("%g", r.warmup_ms) + " ms, repeat " + number_text("%g", r.rep_ms) + " ms";
}
std::string threads_of(const RunInfo& r) { return threads_text(r.threads); }
std::string identity_uuid(const RunInfo& r) { return r.env.identity.uuid; }
std::string stop_compared(const RunInfo& r) { return r.stop_rule == "noise" ? "noise " + number_text("%g", r.noise_pct) + "%" : r.stop_rule; }

const char* const kPointsCount = "(SELECT COUNT(*) FROM points WHERE points.run_id = runs.id)";
const char* const kShard = "COALESCE((SELECT value FROM run_options WHERE run_id = runs.id AND name = 'shard'), '')";
const char* const kShards = "COALESCE((SELECT value FROM run_options WHERE run_id = runs.id AND name = 'shards'), '')";
const char* const kSide = "COALESCE((SELECT value FROM run_options WHERE run_id = runs.id AND name = 'side'), '')";
const char* const kPair = "COALESCE((SELECT value FROM run_options WHERE run_id = runs.id AND name = 'pair'), '')";

// The run itself and its config.
std::vector<RunField> identity_rows() {
  return {
      integer("id", of_run<&RunInfo::id>).queried("id"),
      text("uuid", of_run<&RunInfo::uuid>).stored("uuid").exported("", "uuid"),
      text("label", of_run<&RunInfo::label>).stored("label").exported("", "label"),
      text("source", of_run<&RunInfo::source>).stored("source").exported("", "source"),
      text("status", of_run<&RunInfo::status>).stored("status").exported("", "status"),
      text("started_at", of_run<&RunInfo::started_at>).stored("started_at").exported("", "started_at"),
      text("finished_at", of_run<&RunInfo::finished_at>).stored("finished_at").exported("", "finished_at"),
      text("host", of_run<&RunInfo::host>).stored("host").exported("", "host"),
      text("git_commit", of_run<&RunInfo::git_commit>).stored("git_commit").exported("", "git_commit"),
      text("op", of_run<&RunInfo::op>).stored("op").exported("", "op"),
      text("stat", of_run<&RunInfo::stat>).stored("stat").exported("", "stat")
          .warns(2, "the runs show different statistics", ""),
      text("config_path", of_run<&RunInfo::config_path>).stored("config_path").exported("config", "path"),
      text("config_hash", of_run<&RunInfo::config_hash>).stored("config_hash").exported("config", "hash"),
      text("config_text", of_run<&RunInfo::config_text>).stored("config_text").exported("config", "text"),
  };
}

// How it was timed, and where its time went.
std::vector<RunField> timing_rows() {
  return {
      text("flush_l2", of_run<&RunInfo::flush_l2>).stored("flush_l2", true).exported("timing", "flush_l2", 2)
          .in_listing().timing(1, flush_phrase)
          .warns(1, "the runs flushed L2 differently before each sample", ": speed ratios include the flush's own cost"),
      integer("rounds", of_run<&RunInfo::rounds>).stored("rounds", true).exported("timing", "rounds", 2).in_listing()
          .warns(5, "the runs measured in different numbers of rounds", ": the rounds' evidence differs in strength"),
      integer("interleave", of_run<&RunInfo::interleave>).stored("interleave", true).exported("timing", "interleave", 4)
          .in_listing().timing(3, interleave_phrase)
          .warns(6, "the runs interleaved the rounds of different numbers of table cells",
                 ": a burst of other work hits their rounds differently"),
      integer("processes", of_run<&RunInfo::processes>).stored("processes", true).exported("timing", "processes", 4)
          .in_listing().timing(4, processes_phrase)
          .warns(7, "the runs spread their rounds over different numbers of processes",
                 ": what lasts a process weighs differently"),
      integer("threads", of_run<&RunInfo::threads>).stored("threads", true).exported("timing", "threads", 2)
          .unknown_at(double(RunInfo::kThreadsUnknown)).in_listing().timing(6, threads_of)
          .warns(4, "the runs ran LibTorch on different thread counts", ": CPU times depend on them", threads_of),
      real("warmup_ms", of_run<&RunInfo::warmup_ms>).stored("warmup_ms", true).exported("timing", "warmup_ms", 2)
          .timing(5, budgets_phrase).warns(8, "the runs had different timing budgets", "", budgets_compared),
      real("rep_ms", of_run<&RunInfo::rep_ms>).stored("rep_ms", true).exported("timing", "rep_ms", 2),
      text("stop", of_run<&RunInfo::stop_rule>).stored("stop", true).exported("timing", "stop", 5).in_listing()
          .timing(2, rounds_phrase)
          .warns(3, "the runs stopped their speed points by different rules",
                 ": one took every round of its budget, or they aimed at different precisions", stop_compared),
      real("noise_pct", of_run<&RunInfo::noise_pct>).stored("noise_pct", true).exported("timing", "noise_pct", 5)
          .in_listing(),
      integer("min_rounds", of_run<&RunInfo::min_rounds>).stored("min_rounds", true).exported("timing", "min_rounds", 5),
      integer("min_samples", of_run<&RunInfo::min_samples>).stored("min_samples", true)
          .exported("timing", "min_samples", 5),
      Row("stages", FieldKind::stages).stored("stages").exported("stages", "", 5),
  };
}

// What it measured on, its columns, and what queries add.
std::vector<RunField> environment_rows() {
  return {
      text("device", of_env<&Environment::device>).stored("device").exported("environment", "device"),
      text("gpu", of_env<&Environment::gpu>).stored("gpu").exported("environment", "gpu"),
      integer("sm_count", of_env<&Environment::sm_count>).stored("sm_count").exported("environment", "sm_count"),
      integer("memory_bytes", of_env<&Environment::memory_bytes>).stored("memory_bytes")
          .exported("environment", "memory_bytes"),
      text("driver", of_env<&Environment::driver>).stored("driver").exported("environment", "driver"),
      text("cuda_runtime", of_env<&Environment::cuda_runtime>).stored("cuda_runtime")
          .exported("environment", "cuda_runtime"),
      text("torch_version", of_env<&Environment::torch_version>).stored("torch_version")
          .exported("environment", "torch_version"),
      text("compute_capability", of_env<&Environment::compute_capability>).stored("compute_capability")
          .exported("environment", "compute_capability"),
      real("peak_gbps", of_env<&Environment::peak_gbps>).stored("peak_gbps").exported("environment", "peak_gbps"),
      Row("tuning", FieldKind::tuning).stored("tuning").exported("environment", "tuning", 2)
          .warns(9, "the runs set different tuning variables", ": the kernels ran differently", tuning_list),
      Row("state", FieldKind::state).exported("environment", "state", 2),
      Row("identity", FieldKind::identity).stored("identity").exported("environment", "identity", 9).in_listing()
          .warns(10, "the runs were measured on different physical GPUs",
                 ": a change can be the chip's (see the device calibration)", identity_uuid),
      Row("notation", FieldKind::notation).stored("notation").exported("notation", ""),
      integer("points", of_run<&RunInfo::points>).queried("points", kPointsCount),
      text("shard", of_run<&RunInfo::shard>).queried("shard", kShard),
      text("shards", of_run<&RunInfo::shards>).queried("shards", kShards),
      text("side", of_run<&RunInfo::side>).queried("side", kSide).in_listing(),
      text("pair", of_run<&RunInfo::pair>).queried("pair", kPair).in_listing(),
  };
}

std::vector<RunField> run_rows() {
  std::vector<RunField> out = identity_rows();
  for (auto rows : {timing_rows, environment_rows}) {
    const std::vector<RunField> more = rows();
    out.insert(out.end(), more.begin(), more.end());
  }
  return out;
}

std::vector<const RunField*> placed(int RunField::*place) {
  std::vector<const RunField*> out;
  for (const auto& f : run_fields())
    if (f.*place > 0) out.push_back(&f);
  std::stable_sort(out.begin(), out.end(), [&](const RunField* a, const RunField* b) { return a->*place < b->*place; });
  return out;
}

}  // namespace

bool RunField::known(const RunInfo& r) const {
  if (scalar()) return scalar_known(r);
  switch (kind) {
    case FieldKind::tuning: return r.env.tuning.has_value();
    case FieldKind::state: return r.env.state.known;
    case FieldKind::stages: return !r.stages.empty();
    case FieldKind::notation: return !r.notation.empty();
    case FieldKind::identity: return r.env.identity.known();
    default: break;  // a scalar: above
  }
  return false;
}

std::string RunField::value_text(const RunInfo& r) const {
  if (!known(r)) return "";
  switch (kind) {
    case FieldKind::text: return text_of(r);
    case FieldKind::integer: return std::to_string(integer_of(r));
    case FieldKind::real: return number_text("%g", real_of(r));
    case FieldKind::tuning: return tuning_list(r);
    case FieldKind::state: return "known";
    case FieldKind::stages: return stages_text(r.stages);
    case FieldKind::notation: return std::to_string(r.notation.size()) + " columns";
    case FieldKind::identity: return identity_text(r.env.identity);
  }
  return "";
}

std::string RunField::comparable(const RunInfo& r) const { return compared ? compared(r) : value_text(r); }

const std::vector<RunField>& run_fields() {
  static const std::vector<RunField> rows = run_rows();
  return rows;
}

const RunField& run_field(const std::string& name) {
  for (const auto& f : run_fields())
    if (name == f.name) return f;
  throw std::out_of_range("no run field " + name);
}

std::vector<const RunField*> timing_fields() { return placed(&RunField::timing_place); }
std::vector<const RunField*> warning_fields() { return placed(&RunField::warning_place); }

std::string threads_text(int64_t threads) {
  if (threads < 0) return "";
  if (threads == 0) return "LibTorch's own threads";
  return std::to_string(threads) + (threads == 1 ? " thread" : " threads");
}

std::string stop_rule_text(const std::string& stop, double noise_pct, int64_t min_rounds, int64_t min_samples,
                           int64_t rounds) {
  if (rounds <= 0) return "";
  const std::string most = std::to_string(rounds) + (rounds == 1 ? " round" : " rounds");
  if (stop == "budget") return most + ", all of them (do_bench's fixed budget)";
  if (stop != "noise") return most;
  const int64_t least = std::min(std::max<int64_t>(min_rounds, 1), rounds);
  char buf[200];
  std::snprintf(buf, sizeof buf, "stopping once the 95%% interval of a median is under %g%% (at least %lld samples; ",
                noise_pct, (long long)min_samples);
  return (least < rounds ? std::to_string(least) + " to " : "") + most + ", " + buf + "at most the repeat budget)";
}

std::string tuning_list(const RunInfo& r) {
  if (!r.env.tuning) return "";
  std::string out;
  for (const auto& [name, value] : *r.env.tuning) out += (out.empty() ? "" : ", ") + name + "=" + value;
  return out.empty() ? "none" : out;
}

}  // namespace opbench

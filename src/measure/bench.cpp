#include "measure/bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include "measure/stages.hpp"

namespace opbench {

double Clock::host_ms() const {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

BenchCounts bench_counts(double estimate_ms, const Timing& t) {
  // As do_bench: max(1, int(warmup / estimate)), max(1, int(rep / estimate)); a call measured
  // as taking no time (a CPU clock's resolution) counts as 1 microsecond.
  double est = std::max(estimate_ms, 1e-3);
  auto count = [&](double budget) {
    double n = std::floor(budget / est);
    return size_t(std::clamp(n, 1.0, 1e6));
  };
  return {count(t.warmup_ms), count(t.rep_ms)};
}

namespace {

// The wall-time limit of one measure: checked after every call.
class Deadline {
 public:
  explicit Deadline(double seconds)
      : start_(std::chrono::steady_clock::now()),
        end_(start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                          std::chrono::duration<double>(std::min(seconds, 1e9)))) {}
  void check(const char* phase, size_t done, size_t planned) const {
    const auto now = std::chrono::steady_clock::now();
    if (now < end_) return;
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "over its wall-time budget (timing.max_point_s) in the %s, after %zu of %zu calls (%.1f s)", phase,
                  done, planned, std::chrono::duration<double>(now - start_).count());
    throw BudgetSpent(buf);
  }

 private:
  std::chrono::steady_clock::time_point start_, end_;
};

// The first call (lazy work done), synchronised; its time on the clock when `timed`, else 0.
double first_call(Clock& clock, const std::function<void()>& fn, const Deadline& deadline, bool timed) {
  if (timed) {
    clock.reserve(1);
    clock.start(0);
  }
  fn();
  if (timed) clock.end(0);
  clock.sync();
  deadline.check("first call", 1, 1);
  return timed ? clock.elapsed_ms(0) : 0;
}

// do_bench's estimate: 5 calls, each after a flush, between two marks (the flush inside, as in
// do_bench), or each call timed alone where the clock's flush costs more than a call.
double estimate(Clock& clock, const std::function<void()>& fn, const Deadline& deadline, int calls = 5) {
  double estimate_ms = 0;
  if (clock.estimate_includes_flush()) {
    clock.reserve(1);
    clock.start(0);
    for (int i = 0; i < calls; ++i) {
      clock.flush();
      fn();
    }
    clock.end(0);
    clock.sync();
    deadline.check("estimate", size_t(calls), size_t(calls));
    return clock.elapsed_ms(0) / calls;
  }
  clock.reserve(size_t(calls));
  for (size_t i = 0; i < size_t(calls); ++i) {
    clock.flush();
    clock.start(i);
    fn();
    clock.end(i);
    deadline.check("estimate", i + 1, size_t(calls));
  }
  clock.sync();
  for (size_t i = 0; i < size_t(calls); ++i) estimate_ms += clock.elapsed_ms(i) / calls;
  return estimate_ms;
}

BenchCounts counts_of(const Clock& clock, double estimate_ms, const Timing& t) {
  BenchCounts n = bench_counts(estimate_ms, t);
  n.repeat = std::max(n.repeat, clock.min_repeat());
  return n;
}

// What the warm-up and the samples measured besides the samples: the warm-up's own time on the
// clock, and the host's share of the GPU's time per sample (BenchRound::host_share).
struct Spans {
  double warmup_ms = 0;
  double host_share = std::nan("");
};

// The warm-up calls, then the samples (each after a flush), queued back to back and read after
// one synchronisation. The first warm-up call is also timed on the host: the queue is empty
// then (the round started after a synchronisation), so no launch waits for room in it.
std::vector<double> warm_up_and_repeat(Clock& clock, const std::function<void()>& fn, const BenchCounts& n,
                                       const Deadline& deadline, Spans& spans) {
  clock.reserve(n.repeat + 2);
  const size_t warm = n.repeat, all = n.repeat + 1;  // the warm-up's span, the samples' span
  double host_call_ms = 0;
  clock.start(warm);
  for (size_t i = 0; i < n.warmup; ++i) {
    const double h0 = i == 0 ? clock.host_ms() : 0;
    fn();
    if (i == 0) host_call_ms = clock.host_ms() - h0;
    deadline.check("warm-up", i + 1, n.warmup);
  }
  clock.end(warm);
  clock.start(all);
  for (size_t i = 0; i < n.repeat; ++i) {
    clock.flush();
    clock.start(i);
    fn();
    clock.end(i);
    deadline.check("repetitions", i + 1, n.repeat);
  }
  clock.end(all);
  clock.sync();
  std::vector<double> out(n.repeat);
  for (size_t i = 0; i < n.repeat; ++i) out[i] = clock.elapsed_ms(i);
  spans.warmup_ms = clock.elapsed_ms(warm);
  const double per_sample = clock.elapsed_ms(all) / double(n.repeat);
  if (clock.queued() && per_sample > 0) spans.host_share = host_call_ms / per_sample;
  return out;
}

// A point's estimate in its first round. A call that outlasts both budgets of the round gets
// counts of 1 and 1 from any estimate: one call after the first (a flush before it, as the
// estimate's) confirms it, in place of five. A warm call (`warm`: it has run on this placement,
// its lazy work is done) needs no first call: its first estimate call is the confirmation, and
// a shorter one takes the other four.
double first_round_estimate(Clock& clock, const std::function<void()>& fn, const Timing& t, const Deadline& deadline,
                            bool warm) {
  StageScope stage(Stage::estimate);
  const double budget = std::max(t.warmup_ms, t.rep_ms);
  if (warm) {
    const double one = estimate(clock, fn, deadline, 1);
    return one >= budget ? one : (one + 4 * estimate(clock, fn, deadline, 4)) / 5;
  }
  if (first_call(clock, fn, deadline, true) < budget) return estimate(clock, fn, deadline);
  const double second = estimate(clock, fn, deadline, 1);
  return second >= budget ? second : estimate(clock, fn, deadline);
}

}  // namespace

std::vector<double> do_bench(Clock& clock, const std::function<void()>& fn, const Timing& t) {
  const Deadline deadline(t.max_point_s);
  first_call(clock, fn, deadline, false);
  const BenchCounts n = counts_of(clock, estimate(clock, fn, deadline), t);
  Spans spans;
  return warm_up_and_repeat(clock, fn, n, deadline, spans);
}

BenchRound bench_round(Clock& clock, const std::function<void()>& fn, const Timing& t, bool warm) {
  const Deadline deadline(t.max_point_s);
  BenchRound out;
  out.estimate_ms = t.estimate_ms > 0 ? t.estimate_ms : first_round_estimate(clock, fn, t, deadline, warm);
  const BenchCounts n = counts_of(clock, out.estimate_ms, t);
  // The warm-up and the samples as one span, split afterwards by what the clock measured:
  // warm-up, the samples' own time, and the rest (the flushes, the gaps) as flushes.
  StageScope stage(Stage::timed);
  const auto t0 = std::chrono::steady_clock::now();
  Spans spans;
  out.samples = warm_up_and_repeat(clock, fn, n, deadline, spans);
  out.host_share = spans.host_share;
  const double warmup_ms = spans.warmup_ms;
  const double span = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double samples_s = 0;
  for (double v : out.samples) samples_s += v / 1e3;
  StageLedger& ledger = StageLedger::process();
  ledger.move(Stage::timed, Stage::warmup, std::min(warmup_ms / 1e3, span));
  ledger.move(Stage::timed, Stage::flush, span - warmup_ms / 1e3 - samples_s);
  return out;
}

}  // namespace opbench

#include "measure/bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

namespace opbench {

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

}  // namespace

std::vector<double> do_bench(Clock& clock, const std::function<void()>& fn, const Timing& t) {
  const Deadline deadline(t.max_point_s);
  fn();
  clock.sync();
  deadline.check("first call", 1, 1);
  // Estimate: 5 calls, each after a flush, between two marks (the flush is inside, as in do_bench).
  double estimate_ms = 0;
  if (clock.estimate_includes_flush()) {
    clock.reserve(1);
    clock.start(0);
    for (int i = 0; i < 5; ++i) {
      clock.flush();
      fn();
    }
    clock.stop(0);
    clock.sync();
    deadline.check("estimate", 5, 5);
    estimate_ms = clock.elapsed_ms(0) / 5.0;
  } else {
    clock.reserve(5);
    for (size_t i = 0; i < 5; ++i) {
      clock.flush();
      clock.start(i);
      fn();
      clock.stop(i);
      deadline.check("estimate", i + 1, 5);
    }
    clock.sync();
    for (size_t i = 0; i < 5; ++i) estimate_ms += clock.elapsed_ms(i) / 5.0;
  }
  BenchCounts n = bench_counts(estimate_ms, t);
  n.repeat = std::max(n.repeat, clock.min_repeat());
  for (size_t i = 0; i < n.warmup; ++i) {
    fn();
    deadline.check("warm-up", i + 1, n.warmup);
  }
  clock.reserve(n.repeat);
  for (size_t i = 0; i < n.repeat; ++i) {
    clock.flush();
    clock.start(i);
    fn();
    clock.stop(i);
    deadline.check("repetitions", i + 1, n.repeat);
  }
  clock.sync();
  std::vector<double> out(n.repeat);
  for (size_t i = 0; i < n.repeat; ++i) out[i] = clock.elapsed_ms(i);
  return out;
}

}  // namespace opbench

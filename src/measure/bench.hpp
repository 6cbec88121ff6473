// The timing protocol (the product): triton.testing.do_bench's, on CUDA events or a steady
// clock. One call first (so lazy work is done), an estimate over 5 calls, warm-up and repeat
// counts derived from warmup_ms and rep_ms, then one sample per call, each preceded by an L2
// flush (a write of a buffer larger than the cache, outside the timed region). The sweep runs
// it once per round of a point (Timing::rounds, sweep/cell.cpp) with that round's budgets; the
// first call and the estimate belong to the point's first round, the later rounds take their
// counts from its estimate (Timing::estimate_ms).
#pragma once
#include <cmath>
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <vector>

#include "config/config.hpp"

namespace opbench {

// A device's clock: start/end mark sample i; elapsed_ms reads it after sync().
class Clock {
 public:
  virtual ~Clock() = default;
  virtual void reserve(size_t n) = 0;
  virtual void start(size_t i) = 0;
  virtual void end(size_t i) = 0;
  virtual void sync() = 0;
  virtual double elapsed_ms(size_t i) = 0;
  virtual void flush() = 0;  // evict the caches (no-op when disabled)
  // do_bench counts the flush inside its 5-call estimate, which is right where a flush costs
  // ~0.1 ms (a GPU memset) and wrong where it costs more than the call (a CPU memset of
  // twice the last-level cache): such a clock times the 5 estimate calls alone and asks for
  // at least `min_repeat` samples.
  virtual bool estimate_includes_flush() const { return true; }
  virtual size_t min_repeat() const { return 1; }
  // Whether the marks are queued with the calls (a GPU stream), so that the host runs ahead of
  // what they time; a clock that waits for every call (a CPU's) does not.
  virtual bool queued() const { return false; }
  // The host's clock, in ms (a steady clock; a test's clock may simulate it).
  virtual double host_ms() const;
};

// do_bench's protocol as one episode (its first call and estimate always), every sample in
// milliseconds; charges no stage. Throws BudgetSpent when the calls run past t.max_point_s
// seconds (checked between calls: a CPU call can take far longer than rep_ms).
std::vector<double> do_bench(Clock& clock, const std::function<void()>& fn, const Timing& t);

// One round of a speed point, its time charged to the process's stages (measure/stages.hpp):
// the first call and the estimate, unless t.estimate_ms gives the point's (a later round: the
// warm-up, at least one call, does the lazy work); then warm-up and samples. A call that
// outlasts both of the round's budgets is confirmed by one more call instead of five (its
// counts are 1 and 1 whatever the five calls would show), and a `warm` call (run on this
// placement already, as the check runs it) skips the first call. Throws BudgetSpent as do_bench.
struct BenchRound {
  std::vector<double> samples;
  double estimate_ms = 0;  // what the counts came from: measured here, or t.estimate_ms
  // On a queued clock: the host's time to queue one call (the first warm-up call, the queue
  // empty) over the GPU's time per sample; NaN otherwise (Result::host_share).
  double host_share = std::nan("");
};
BenchRound bench_round(Clock& clock, const std::function<void()>& fn, const Timing& t, bool warm = false);

class BudgetSpent : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Iteration counts as do_bench derives them from one estimate.
struct BenchCounts {
  size_t warmup, repeat;
};
BenchCounts bench_counts(double estimate_ms, const Timing& t);

}  // namespace opbench

// The timing protocol (the product): triton.testing.do_bench's, on CUDA events or a steady
// clock. One call first (so lazy work is done), an estimate over 5 calls, warm-up and repeat
// counts derived from warmup_ms and rep_ms, then one sample per call, each preceded by an L2
// flush (a write of a buffer larger than the cache, outside the timed region). The sweep runs
// it once per round of a point (Timing::rounds, sweep/runner.cpp) with that round's budgets.
#pragma once
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <vector>

#include "config/config.hpp"

namespace opbench {

// A device's clock: start/stop mark sample i; elapsed_ms reads it after sync().
class Clock {
 public:
  virtual ~Clock() = default;
  virtual void reserve(size_t n) = 0;
  virtual void start(size_t i) = 0;
  virtual void stop(size_t i) = 0;
  virtual void sync() = 0;
  virtual double elapsed_ms(size_t i) = 0;
  virtual void flush() = 0;  // evict the caches (no-op when disabled)
  // do_bench counts the flush inside its 5-call estimate, which is right where a flush costs
  // ~0.1 ms (a GPU memset) and wrong where it costs more than the call (a CPU memset of
  // twice the last-level cache): such a clock times the 5 estimate calls alone and asks for
  // at least `min_repeat` samples.
  virtual bool estimate_includes_flush() const { return true; }
  virtual size_t min_repeat() const { return 1; }
};

// Returns every sample in milliseconds. Throws BudgetSpent when the calls run past
// t.max_point_s seconds (checked between calls: a CPU call can take far longer than rep_ms).
std::vector<double> do_bench(Clock& clock, const std::function<void()>& fn, const Timing& t);

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

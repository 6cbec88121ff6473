// A clock on virtual time for the torch-free tests of the timing protocol: a call advances it
// by what the test says the call takes, a flush by the flush's cost; marks read it. So the
// real protocol (bench_round) runs on known times, and its counts and samples are exact.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "measure/bench.hpp"
#include "measure/executor.hpp"

namespace opbench {

class VirtualClock : public Clock {
 public:
  explicit VirtualClock(double flush_ms) : flush_ms_(flush_ms) {}
  double now = 0;  // ms
  size_t flushes = 0;
  void reserve(size_t n) override {
    if (marks_.size() < 2 * n) marks_.resize(2 * n);
  }
  void start(size_t i) override { marks_[2 * i] = now; }
  void end(size_t i) override { marks_[2 * i + 1] = now; }
  void sync() override {}
  double elapsed_ms(size_t i) override { return marks_[2 * i + 1] - marks_[2 * i]; }
  void flush() override {
    now += flush_ms_;
    ++flushes;
  }

 private:
  double flush_ms_;
  std::vector<double> marks_;
};

// Measures speed points with bench_round on a VirtualClock: call `i` of round `round` of a
// point takes call_ms(point, round, i). Memory points give one value. Counts every call.
class SyntheticExecutor : public Executor {
 public:
  using CallTime = std::function<double(const Point& p, int round, size_t call)>;
  SyntheticExecutor(CallTime call_ms, double flush_ms) : call_ms_(std::move(call_ms)), flush_ms_(flush_ms) {}
  Environment environment() override { return Environment(); }
  std::string unavailable(const std::string&, const std::string&) override { return ""; }
  Result measure(const Point& p, const Timing& t) override {
    Result r;
    r.unit = p.metric() == "memory" ? "MiB" : "ms";
    if (p.metric() == "memory") {
      r.samples = {1.0};
    } else {
      VirtualClock clock(flush_ms_);
      const int round = rounds_[p.key()]++;
      size_t i = 0;
      const size_t before = calls;
      BenchRound b = bench_round(clock, [&] {
        clock.now += call_ms_(p, round, i++);
        ++calls;
      }, t);
      r.samples = std::move(b.samples);
      r.estimate_ms = b.estimate_ms;
      calls_by_round.push_back(calls - before);
    }
    r.stats = summarize(r.samples);
    return r;
  }
  size_t calls = 0;
  std::vector<size_t> calls_by_round;  // in the order measured

 private:
  CallTime call_ms_;
  double flush_ms_;
  std::map<std::string, int> rounds_;
};

}  // namespace opbench

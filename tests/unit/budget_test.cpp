// The timing protocol's wall-time budget: do_bench stops between calls once a measure has
// spent Timing::max_point_s (a CPU call can take far longer than rep_ms), and never cuts a
// measure that fits.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "measure/bench.hpp"

using namespace opbench;

namespace {

// A clock that times nothing: the five estimate calls take 5 ms (1 ms a call), as does every sample.
class CountingClock : public Clock {
 public:
  void reserve(size_t) override {}
  void start(size_t) override {}
  void end(size_t) override {}
  void sync() override {}
  double elapsed_ms(size_t) override { return 5.0; }
  void flush() override {}
};

}  // namespace

TEST(Budget, StopsACallSequenceThatOutrunsIt) {
  CountingClock clock;
  Timing t;
  t.warmup_ms = 10;
  t.rep_ms = 1000;  // 1000 calls by the clock's estimate; each really takes 5 ms
  t.max_point_s = 0.1;
  int calls = 0;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    do_bench(clock, [&] {
      ++calls;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }, t);
    ADD_FAILURE() << "no budget error";
  } catch (const BudgetSpent& e) {
    EXPECT_NE(std::string(e.what()).find("over its wall-time budget (timing.max_point_s)"), std::string::npos)
        << e.what();
  }
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(calls, 1000);
  EXPECT_LT(took, 1.0);
}

TEST(Budget, AMeasureThatFitsIsUntouched) {
  CountingClock clock;
  Timing t;
  t.warmup_ms = 3;
  t.rep_ms = 7;
  t.max_point_s = 60;
  int calls = 0;
  auto samples = do_bench(clock, [&] { ++calls; }, t);
  EXPECT_EQ(samples.size(), 7u);
  EXPECT_EQ(calls, 1 + 5 + 3 + 7);  // first call, estimate, warm-up, repetitions
}

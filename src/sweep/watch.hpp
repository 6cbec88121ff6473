// A thread beside the sweep: a periodic tick (the run's heartbeat) and a deadline on the
// measure in progress, whose handler runs if the measure has not returned in time (a call
// that never finishes). Torch-free.
#pragma once
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace opbench {

class Watch {
 public:
  // `tick` (may be empty) runs every `tick_s` seconds on the watch's thread.
  Watch(double tick_s, std::function<void()> tick);
  ~Watch();
  Watch(const Watch&) = delete;
  Watch& operator=(const Watch&) = delete;

  // Runs `fn`. If it has not returned after `seconds`, `expired` runs on the watch's thread
  // while `fn` goes on; once fn returns, `within` waits for `expired` to finish and returns
  // false (what fn produced is late). True when fn returned in time.
  bool within(double seconds, const std::function<void()>& fn, const std::function<void()>& expired);

 private:
  void loop();
  using Clock = std::chrono::steady_clock;
  double tick_s_;
  std::function<void()> tick_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool armed_ = false, fired_ = false, quit_ = false;
  Clock::time_point deadline_;
  const std::function<void()>* expired_ = nullptr;
  std::thread thread_;
};

}  // namespace opbench

#include "sweep/watch.hpp"

namespace opbench {

Watch::Watch(double tick_s, std::function<void()> tick) : tick_s_(tick_s), tick_(std::move(tick)) {
  thread_ = std::thread([this] { loop(); });
}

Watch::~Watch() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    quit_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

bool Watch::within(double seconds, const std::function<void()>& fn, const std::function<void()>& expired) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    armed_ = true;
    fired_ = false;
    expired_ = &expired;
    deadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  }
  cv_.notify_all();
  try {
    fn();
  } catch (...) {
    std::lock_guard<std::mutex> lock(mu_);
    armed_ = false;
    throw;
  }
  // Taken after `expired` finished, if it started: the mutex is held while it runs.
  std::lock_guard<std::mutex> lock(mu_);
  armed_ = false;
  return !fired_;
}

void Watch::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  auto next_tick = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(tick_s_));
  while (!quit_) {
    auto wake = tick_ ? next_tick : Clock::time_point::max();
    if (armed_ && !fired_ && deadline_ < wake) wake = deadline_;
    if (wake == Clock::time_point::max()) cv_.wait(lock);
    else cv_.wait_until(lock, wake);
    if (quit_) break;
    const auto now = Clock::now();
    if (armed_ && !fired_ && now >= deadline_) {
      fired_ = true;
      (*expired_)();  // under the lock: within() waits for it
    }
    if (tick_ && now >= next_tick) {
      lock.unlock();
      tick_();
      lock.lock();
      next_tick = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(tick_s_));
    }
  }
}

}  // namespace opbench

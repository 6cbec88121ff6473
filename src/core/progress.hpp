// Live progress of a long command (a sweep's table cells, compile's packages) on stderr:
// `bar` redraws one line in place (a terminal), `lines` prints one line per finished step
// with the elapsed time and an ETA (CI logs, pipes), `none` prints nothing but the messages.
// Torch-free.
#pragma once
#include <chrono>
#include <cstddef>
#include <iosfwd>
#include <string>

namespace opbench {

enum class ProgressMode { none, bar, lines };

// "auto" (bar when `terminal`, else lines), "bar", "lines" or "none"; InputError otherwise.
ProgressMode parse_progress(const std::string& name, bool terminal);

// 0.4s, 42s, 3m07s, 2h05m.
std::string format_duration(double seconds);

class Progress {
 public:
  // `total` items (points, packages), of which `done` are done before this command started.
  Progress(ProgressMode mode, std::ostream& log, size_t total, size_t done, std::string unit);
  // The step now under way (the bar shows it); `position` is how far through `total` it ends.
  void begin(const std::string& what, size_t position);
  // A step finished with `items` items: lines prints "[position/total unit] what; elapsed
  // E, ETA T", the bar moves.
  void end(const std::string& what, size_t position, size_t items);
  // A line of its own (a failed point), never lost in the bar.
  void note(const std::string& line);
  // Clears the bar.
  void finish();

  double elapsed() const;
  // Seconds left by the rate so far ("?" before the first step ended).
  std::string eta() const;

 private:
  void draw(const std::string& what, size_t position);
  ProgressMode mode_;
  std::ostream& log_;
  size_t total_, todo_, items_ = 0;
  std::string unit_;
  std::chrono::steady_clock::time_point start_;
  bool drawn_ = false;
};

}  // namespace opbench

#include "core/progress.hpp"

#include <algorithm>
#include <cstdio>
#include <ostream>

#include "core/error.hpp"

namespace opbench {

ProgressMode parse_progress(const std::string& name, bool terminal) {
  if (name == "auto") return terminal ? ProgressMode::bar : ProgressMode::lines;
  if (name == "bar") return ProgressMode::bar;
  if (name == "lines") return ProgressMode::lines;
  if (name == "none") return ProgressMode::none;
  throw InputError("--progress", name, "must be auto, bar, lines or none");
}

std::string format_duration(double s) {
  char buf[32];
  if (s < 9.95) std::snprintf(buf, sizeof buf, "%.1fs", s);
  else if (s < 60) std::snprintf(buf, sizeof buf, "%.0fs", s);
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%dm%02ds", int(s) / 60, int(s) % 60);
  else std::snprintf(buf, sizeof buf, "%dh%02dm", int(s) / 3600, (int(s) % 3600) / 60);
  return buf;
}

Progress::Progress(ProgressMode mode, std::ostream& log, size_t total, size_t done, std::string unit)
    : mode_(mode), log_(log), total_(total), todo_(total - std::min(done, total)), unit_(std::move(unit)),
      start_(std::chrono::steady_clock::now()) {}

double Progress::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

std::string Progress::eta() const {
  if (items_ == 0) return "?";
  const size_t left = todo_ > items_ ? todo_ - items_ : 0;
  return format_duration(elapsed() / double(items_) * double(left));
}

void Progress::draw(const std::string& what, size_t position) {
  constexpr int kWidth = 20;
  const int filled = total_ ? int(double(kWidth) * double(position) / double(total_)) : kWidth;
  std::string bar(size_t(std::min(filled, kWidth)), '#');
  bar.resize(kWidth, '.');
  log_ << "\r\033[K[" << bar << "] " << position << "/" << total_ << " " << what << "  ETA " << eta() << std::flush;
  drawn_ = true;
}

void Progress::begin(const std::string& what, size_t position) {
  if (mode_ == ProgressMode::bar) draw(what, position);
}

void Progress::end(const std::string& what, size_t position, size_t items) {
  items_ += items;
  if (mode_ != ProgressMode::lines) return;
  log_ << "[" << position << "/" << total_ << " " << unit_ << "] " << what << "; elapsed " << format_duration(elapsed())
       << ", ETA " << eta() << "\n"
       << std::flush;
}

void Progress::note(const std::string& line) {
  if (drawn_) log_ << "\r\033[K";
  drawn_ = false;
  log_ << line << "\n" << std::flush;
}

void Progress::finish() {
  if (drawn_) log_ << "\r\033[K" << std::flush;
  drawn_ = false;
}

}  // namespace opbench

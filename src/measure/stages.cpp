// The stage ledger (stages.hpp). Torch-free.
#include "measure/stages.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace opbench {

namespace {

// When this process started, on the steady clock: its age from /proc (clock ticks since boot,
// against the uptime); now where that cannot be read.
StageLedger::Clock::time_point process_start() {
  const auto now = StageLedger::Clock::now();
  std::ifstream stat("/proc/self/stat"), up("/proc/uptime");
  std::string text;
  double uptime = 0;
  if (!std::getline(stat, text) || !(up >> uptime)) return now;
  // The fields after the command name (which may hold spaces) ends with ')'.
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return now;
  std::istringstream rest(text.substr(close + 2));
  std::string field;
  unsigned long long start_ticks = 0;
  for (int i = 3; i <= 22 && rest >> field; ++i)
    if (i == 22) start_ticks = std::stoull(field);
  const long hz = sysconf(_SC_CLK_TCK);
  if (!start_ticks || hz <= 0) return now;
  const double age = uptime - double(start_ticks) / double(hz);
  if (!(age > 0) || age > 3600) return now;
  return now - std::chrono::duration_cast<StageLedger::Clock::duration>(std::chrono::duration<double>(age));
}

}  // namespace

StageLedger& StageLedger::process() {
  static StageLedger ledger(process_start());
  return ledger;
}

StageLedger::StageLedger(Clock::time_point epoch, Stage base) : last_(epoch), current_(base), base_(base) {}

void StageLedger::charge_until(Clock::time_point now) {
  if (now > last_) acc_[current_] += std::chrono::duration<double>(now - last_).count();
  last_ = std::max(last_, now);
}

void StageLedger::set_base(Stage s) {
  std::lock_guard<std::mutex> lock(mu_);
  charge_until(Clock::now());
  if (open_.empty()) current_ = s;
  base_ = s;
}

void StageLedger::move(Stage from, Stage to, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  charge_until(Clock::now());
  const double moved = std::clamp(seconds, 0.0, acc_[from]);
  acc_[from] -= moved;
  acc_[to] += moved;
}

void StageLedger::attribute(Stage from, double waited, const StageTimes& remote) {
  const double total = remote.wall();
  if (!(total > 0) || !(waited > 0)) return;
  const double scale = std::min(1.0, waited / total);
  for (int i = 0; i < kStageCount; ++i)
    if (Stage(i) != from) move(from, Stage(i), remote[Stage(i)] * scale);
}

StageTimes StageLedger::take() {
  std::lock_guard<std::mutex> lock(mu_);
  charge_until(Clock::now());
  StageTimes out = acc_;
  acc_ = StageTimes();
  return out;
}

StageScope::StageScope(Stage s, StageLedger& ledger) : ledger_(ledger) {
  std::lock_guard<std::mutex> lock(ledger_.mu_);
  ledger_.charge_until(StageLedger::Clock::now());
  previous_ = ledger_.current_;
  ledger_.current_ = s;
  ledger_.open_.push_back(s);
}

StageScope::~StageScope() {
  std::lock_guard<std::mutex> lock(ledger_.mu_);
  ledger_.charge_until(StageLedger::Clock::now());
  ledger_.open_.pop_back();
  // The enclosing scope's stage, or the base (which may have changed while this was open).
  ledger_.current_ = ledger_.open_.empty() ? ledger_.base_ : previous_;
}

}  // namespace opbench

#include "sweep/outcome_lines.hpp"

#include <cstdio>

#include "core/placement.hpp"
#include "core/progress.hpp"

namespace opbench {

void print_outcome(const SweepOutcome& r, const std::string& db, std::ostream& log) {
  log << "run " << r.run_id << ": " << r.measured << " points measured";
  if (r.skipped) log << ", " << r.skipped << " already stored";
  if (r.failed) log << ", " << r.failed << " failed";
  if (r.lost) log << ", " << r.lost << " lost (their process ended while measuring them)";
  if (r.check_failed) log << ", " << r.check_failed << " over the check's tolerance";
  log << " (" << db << ")\n";
}

void print_summary(const std::vector<SweepOutcome>& runs, const std::vector<RunDevice>& shares, double seconds,
                   std::ostream& log) {
  size_t measured = 0, failed = 0;
  std::string ids;
  for (const auto& r : runs) measured += r.measured, failed += r.failed, ids += (ids.empty() ? "" : ", ") + std::to_string(r.run_id);
  log << runs.size() << (runs.size() == 1 ? " run (" : " runs (") << ids << "): " << measured << " points measured"
      << (failed ? ", " + std::to_string(failed) + " failed" : "") << " in " << format_duration(seconds) << "\n";
  for (const auto& d : shares) {
    char busy[32];
    std::snprintf(busy, sizeof busy, "%.1f s", d.busy_s);
    const std::string where = placement_text(d.cpus, d.memory, int(d.threads), d.pinned);
    log << "  " << d.device << ": " << d.cells << " cells, " << d.points << " points, " << busy << " busy"
        << (where.empty() ? "" : "; " + where) << "\n";
  }
}

}  // namespace opbench

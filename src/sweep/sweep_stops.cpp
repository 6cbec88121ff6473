#include "sweep/sweep_stops.hpp"

#include <unistd.h>

#include <iostream>

#include "core/process_identity.hpp"
#include "sweep/reexec.hpp"
#include "sweep/resume.hpp"
#include "sweep/stop_signals.hpp"

namespace opbench {

void SweepStops::set_suite_command(const std::string& command) {
  std::lock_guard<std::mutex> lock(suite_mu_);
  suite_command_ = command;
}

std::string SweepStops::continuation(const Store& store, int64_t id) {
  std::string suite;
  {
    std::lock_guard<std::mutex> lock(suite_mu_);
    if (!suite_command_.empty()) suite = suite_command_ + " --resume " + std::to_string(id);
  }
  return suite.empty() ? resume_command(stored_options(store, *store.run(id)), db_, id) : suite;
}

void SweepStops::stop_now() {
  const int64_t id = run_.load();
  if (!id) {
    std::cerr << "\nstopped\n" << std::flush;
    return;
  }
  try {
    Store store(db_);
    if (!store.end_run(id, "interrupted", this_process())) {  // it had just ended
      std::cerr << "\nstopped\n" << std::flush;
      return;
    }
    std::cerr << "\nstopped: run " << id << " interrupted; continue with `" << continuation(store, id) << "`\n"
              << std::flush;
  } catch (const std::exception& e) {
    std::cerr << "\nstopped: run " << id << " not marked interrupted (" << e.what() << ")\n" << std::flush;
  }
}

void SweepStops::hung(int64_t run_id) {
  if (!interrupt_requested().load()) reexec_resuming(run_id);
  stop_now();
  _exit(130);
}

}  // namespace opbench

// What a stop does to the runs of one sweep command: a second signal marks the run under way
// interrupted and says how to continue it; a call that never returned has the command go on in
// a new process (sweep/reexec.hpp). It holds what the signal thread needs to know: the run
// being measured, whether any run began, and for a suite the command that sweeps it again.
// Torch-free.
#pragma once
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "store/store.hpp"

namespace opbench {

class SweepStops {
 public:
  // The database the command's runs are stored in.
  void set_db(const std::string& db) { db_ = db; }
  // A suite: the command that sweeps it again (its configs and options as given); with
  // --resume ID it continues from run ID on. Empty for one config.
  void set_suite_command(const std::string& command);
  // A run is held: a stop from here on ends it interrupted.
  void began(int64_t run_id) {
    run_ = run_id;
    began_ = true;
  }
  // The run under way is over (0 when none was); a stop no longer touches it.
  int64_t ended() { return run_.exchange(0); }
  // Whether a run of this command has started: a stop before that ends the command with
  // nothing stored.
  bool any_began() const { return began_.load(); }
  // How to continue run `id` of this command: the suite's command from it on, else the run's
  // own resume command.
  std::string continuation(const Store& store, int64_t id);
  // A second signal: the run is marked interrupted (by a connection of this thread's own), a
  // line says how to continue it.
  void stop_now();
  // A call of run `run_id` that never returned: its point is stored as failed; the run goes on
  // in a new process (or, after a first signal, ends interrupted). Exits 130 when it cannot go on.
  [[noreturn]] void hung(int64_t run_id);

 private:
  std::string db_;
  std::atomic<int64_t> run_{0};  // the run being measured (0 until it exists and after it ended)
  std::atomic<bool> began_{false};
  std::mutex suite_mu_;
  std::string suite_command_;
};

}  // namespace opbench

// Who measures a run: a live holder refuses a second writer and names itself; a holder that
// died (killed, rebooted, its pid reused) leaves the run abandoned and takeable; a holder on
// another host counts by its heartbeat; only the holder ends the run.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "core/error.hpp"
#include "store/store.hpp"
#include "temp_db.hpp"

using namespace opbench;

namespace {

std::string temp_db(const std::string& name) { return fresh_db_path("lock", name); }

int64_t new_run(Store& s, const ProcessIdentity& who) {
  return s.take_run(who, [&] {
    RunInfo r;
    r.label = "r";
    s.begin_run(r);
    return r.id;
  });
}

void set_lock(Store& s, int64_t run, const std::string& sql_set) {
  std::string sql = "UPDATE run_locks SET " + sql_set + " WHERE run_id=" + std::to_string(run);
  ASSERT_EQ(sqlite3_exec(s.handle(), sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
}

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

TEST(RunLock, ALiveHolderRefusesASecondWriterUntilItDies) {
  const std::string path = temp_db("live.db");
  int64_t run = 0;
  {
    Store s(path);
    RunInfo r;
    s.begin_run(r);
    run = r.id;
  }
  int ready[2], hold[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(hold), 0);
  const pid_t child = fork();
  if (child == 0) {  // takes the run, says so, and holds it until killed
    Store s(path);
    s.take_run(this_process(), [&] { return run; });
    char c = 1;
    (void)!write(ready[1], &c, 1);
    (void)!read(hold[0], &c, 1);
    _exit(0);
  }
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  Store s(path);
  EXPECT_EQ(effective_status(s, *s.run(run)), "running");
  try {
    s.take_run(this_process(), [&] { return run; });
    ADD_FAILURE() << "a second writer took a held run";
  } catch (const RunBusy& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("run " + std::to_string(run) + " is being measured by pid " + std::to_string(child) + " on host " +
                       host_name()),
              std::string::npos)
        << msg;
    EXPECT_EQ(e.lock.holder.pid, int64_t(child));
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_EQ(effective_status(s, *s.run(run)), "abandoned");
  EXPECT_EQ(s.take_run(this_process(), [&] { return run; }), run);
  EXPECT_EQ(s.run_lock(run)->holder.pid, int64_t(getpid()));
  EXPECT_EQ(effective_status(s, *s.run(run)), "running");
}

TEST(RunLock, ABusyRunWritesNothing) {
  Store s(temp_db("busy.db"));
  const int64_t run = new_run(s, this_process());
  ProcessIdentity other = this_process();
  other.pid = getppid();  // a live process that is not this one
  other.start = 0;
  EXPECT_THROW(s.take_run(other, [&] {
    s.finish_run(run, "changed");
    return run;
  }),
               RunBusy);
  EXPECT_EQ(s.run(run)->status, "running");  // the body was rolled back
}

TEST(RunLock, DeadHoldersAreReplaced) {
  Store s(temp_db("dead.db"));
  const ProcessIdentity me = this_process();
  const int64_t run = new_run(s, me);
  // After a reboot: another boot id.
  set_lock(s, run, "boot_id='another-boot', pid=1");
  EXPECT_EQ(effective_status(s, *s.run(run)), "abandoned");
  // The pid lives but is another process: it started at another time.
  set_lock(s, run, "boot_id='" + me.boot_id + "', pid=" + std::to_string(me.pid) + ", proc_start=" +
                       std::to_string(me.start + 1));
  EXPECT_EQ(effective_status(s, *s.run(run)), "abandoned");
  ProcessIdentity other = me;
  other.pid = getppid();
  other.start = 0;
  EXPECT_EQ(s.take_run(other, [&] { return run; }), run);
  EXPECT_EQ(s.run_lock(run)->holder.pid, int64_t(getppid()));
}

TEST(RunLock, AHolderOnAnotherHostCountsByItsHeartbeat) {
  Store s(temp_db("remote.db"));
  const int64_t run = new_run(s, this_process());
  set_lock(s, run, "host='elsewhere', pid=4242, heartbeat=" + std::to_string(unix_now()));
  EXPECT_EQ(effective_status(s, *s.run(run)), "running");
  EXPECT_THROW(s.take_run(this_process(), [&] { return run; }), RunBusy);
  set_lock(s, run, "heartbeat=" + std::to_string(unix_now() - kHeartbeatStaleSeconds - 1));
  EXPECT_EQ(effective_status(s, *s.run(run)), "abandoned");
  EXPECT_NO_THROW(s.take_run(this_process(), [&] { return run; }));
}

TEST(RunLock, OnlyTheHolderEndsTheRunAndTheSameProcessTakesItAgain) {
  Store s(temp_db("end.db"));
  const ProcessIdentity me = this_process();
  const int64_t run = new_run(s, me);
  const double beat = s.run_lock(run)->heartbeat;
  EXPECT_EQ(s.take_run(me, [&] { return run; }), run);  // a sweep that re-executed itself
  ProcessIdentity other = me;
  other.pid = getppid();
  EXPECT_FALSE(s.heartbeat(run, other));
  EXPECT_FALSE(s.end_run(run, "done", other));
  EXPECT_EQ(s.run(run)->status, "running");
  EXPECT_TRUE(s.heartbeat(run, me));
  EXPECT_GE(s.run_lock(run)->heartbeat, beat);
  EXPECT_TRUE(s.end_run(run, "interrupted", me));
  EXPECT_EQ(s.run(run)->status, "interrupted");
  EXPECT_FALSE(s.run_lock(run).has_value());
  EXPECT_EQ(effective_status(s, *s.run(run)), "interrupted");
}

TEST(RunLock, ARunningRunWithoutAHolderIsAbandoned) {
  // As an older opbench left it: status running, no lock table row.
  Store s(temp_db("old.db"));
  RunInfo r;
  s.begin_run(r);
  EXPECT_EQ(r.status, "running");
  EXPECT_EQ(effective_status(s, r), "abandoned");
  r.source = "import";
  EXPECT_EQ(effective_status(s, r), "running");  // only sweeps are held
}

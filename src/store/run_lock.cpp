// Who measures a run: the lock a sweep holds on its run, its heartbeat, and the options that
// shaped the run (store.hpp). Torch-free.
#include <sqlite3.h>

#include <chrono>

#include "store/statement.hpp"
#include "store/store.hpp"

namespace opbench {

namespace {

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string describe_holder(const RunLock& l) {
  return "run " + std::to_string(l.run_id) + " is being measured by pid " + std::to_string(l.holder.pid) +
         " on host " + l.holder.host + " (since " + l.since + ")";
}

bool same_process(const ProcessIdentity& a, const ProcessIdentity& b) {
  return a.host == b.host && a.boot_id == b.boot_id && a.pid == b.pid && a.start == b.start;
}

}  // namespace

RunBusy::RunBusy(const RunLock& l)
    : InputError("--resume", std::to_string(l.run_id), describe_holder(l) + "; wait for it to finish or stop it"),
      lock(l) {}

bool holder_alive(const RunLock& l) {
  switch (liveness(l.holder)) {
    case Liveness::alive: return true;
    case Liveness::dead: return false;
    case Liveness::unknown: break;
  }
  return unix_now() - l.heartbeat < kHeartbeatStaleSeconds;
}

std::optional<RunLock> Store::run_lock(int64_t run_id) const {
  Stmt s(db_, "SELECT host, boot_id, pid, proc_start, since, heartbeat FROM run_locks WHERE run_id=:run_id");
  s.bind(":run_id", run_id);
  if (!s.step()) return std::nullopt;
  RunLock l;
  l.run_id = run_id;
  l.holder.host = s.text("host");
  l.holder.boot_id = s.text("boot_id");
  l.holder.pid = s.i64("pid");
  l.holder.start = s.i64("proc_start");
  l.since = s.text("since");
  l.heartbeat = s.f64("heartbeat");
  return l;
}

int64_t Store::take_run(const ProcessIdentity& me, const std::function<int64_t()>& body) {
  int64_t run_id = 0;
  transaction([&] {
    run_id = body();
    if (auto held = run_lock(run_id); held && !same_process(held->holder, me) && holder_alive(*held))
      throw RunBusy(*held);
    Stmt s(db_,
           "INSERT OR REPLACE INTO run_locks(run_id, host, boot_id, pid, proc_start, since, heartbeat)"
           " VALUES(:run_id, :host, :boot_id, :pid, :proc_start, :since, :heartbeat)");
    s.bind(":run_id", run_id).bind(":host", me.host).bind(":boot_id", me.boot_id).bind(":pid", me.pid)
        .bind(":proc_start", me.start).bind(":since", now_iso()).bind(":heartbeat", unix_now());
    s.step();
  });
  return run_id;
}

bool Store::heartbeat(int64_t run_id, const ProcessIdentity& me) {
  Stmt s(db_, "UPDATE run_locks SET heartbeat=:heartbeat WHERE run_id=:run_id AND host=:host AND pid=:pid");
  s.bind(":heartbeat", unix_now()).bind(":run_id", run_id).bind(":host", me.host).bind(":pid", me.pid);
  s.step();
  return sqlite3_changes(db_) > 0;
}

bool Store::end_run(int64_t run_id, const std::string& status, const ProcessIdentity& me) {
  bool held = false;
  transaction([&] {
    Stmt s(db_, "DELETE FROM run_locks WHERE run_id=:run_id AND host=:host AND pid=:pid");
    s.bind(":run_id", run_id).bind(":host", me.host).bind(":pid", me.pid);
    s.step();
    held = sqlite3_changes(db_) > 0;
    if (held) finish_run(run_id, status);
  });
  return held;
}

void Store::set_run_options(int64_t run_id, const std::vector<std::pair<std::string, std::string>>& options) {
  for (const auto& [name, value] : options) {
    Stmt s(db_, "INSERT OR REPLACE INTO run_options(run_id, name, value) VALUES(:run_id, :name, :value)");
    s.bind(":run_id", run_id).bind(":name", name).bind(":value", value);
    s.step();
  }
}

std::vector<std::pair<std::string, std::string>> Store::run_options(int64_t run_id) const {
  std::vector<std::pair<std::string, std::string>> out;
  Stmt s(db_, "SELECT name, value FROM run_options WHERE run_id=:run_id ORDER BY name");
  s.bind(":run_id", run_id);
  while (s.step()) out.emplace_back(s.text("name"), s.text("value"));
  return out;
}

std::string effective_status(const Store& store, const RunInfo& run) {
  if (run.status != "running" || run.source != "sweep") return run.status;
  auto lock = store.run_lock(run.id);
  return lock && holder_alive(*lock) ? "running" : "abandoned";
}

}  // namespace opbench

// Who a process is, in a form another process (perhaps on another host, perhaps after a
// reboot) can test for life: host name, boot id, pid and the pid's start time. A sweep
// stores its own with the run it measures, so that a run whose process died is told apart
// from a live one. Torch-free.
#pragma once
#include <cstdint>
#include <string>

namespace opbench {

struct ProcessIdentity {
  std::string host;     // gethostname()
  std::string boot_id;  // /proc/sys/kernel/random/boot_id ("" where there is none)
  int64_t pid = 0;
  int64_t start = 0;    // the process's start time in clock ticks since boot (0: unknown)
};

// This process.
ProcessIdentity this_process();

enum class Liveness {
  alive,    // the process runs (on this host, same boot, same pid and start time)
  dead,     // it does not: exited, killed, or the host rebooted since
  unknown,  // on another host: only a heartbeat can tell
};
Liveness liveness(const ProcessIdentity& p);

std::string host_name();

}  // namespace opbench

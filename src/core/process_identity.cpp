#include "core/process_identity.hpp"

#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace opbench {

namespace {

std::string first_line_of(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return line;
}

// Field 22 of /proc/PID/stat (starttime), read after the command name's closing parenthesis
// (the name may hold spaces and parentheses of its own).
int64_t start_ticks(int64_t pid) {
  const std::string stat = first_line_of("/proc/" + std::to_string(pid) + "/stat");
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(stat.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22 && (rest >> field); ++i)
    if (i == 22) return std::stoll(field);
  return 0;
}

}  // namespace

std::string host_name() {
  char buf[256] = {0};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

ProcessIdentity this_process() {
  ProcessIdentity p;
  p.host = host_name();
  p.boot_id = first_line_of("/proc/sys/kernel/random/boot_id");
  p.pid = int64_t(getpid());
  p.start = start_ticks(p.pid);
  return p;
}

Liveness liveness(const ProcessIdentity& p) {
  const ProcessIdentity me = this_process();
  if (p.host != me.host) return Liveness::unknown;
  if (!p.boot_id.empty() && !me.boot_id.empty() && p.boot_id != me.boot_id) return Liveness::dead;
  if (p.pid <= 0) return Liveness::dead;
  if (kill(pid_t(p.pid), 0) != 0 && errno == ESRCH) return Liveness::dead;
  // The pid lives; it is the same process only if it started when the stored one did.
  if (p.start != 0 && me.start != 0) return start_ticks(p.pid) == p.start ? Liveness::alive : Liveness::dead;
  return Liveness::alive;
}

}  // namespace opbench

// Child processes: start one with its output in a log file, wait for it, say how it ended.
// POSIX (posix_spawn), torch-free.
#pragma once
#include <sys/types.h>

#include <string>
#include <vector>

namespace opbench::process {

struct Spawned {
  pid_t pid = -1;
  std::string error;  // why it could not start ("" when pid is valid)
};

// Runs argv (argv[0] looked up on PATH) with stdin from /dev/null and stdout and stderr into
// `log_path` (truncated). `extra_env` entries ("NAME=value") are added to, or replace, this
// process's environment. `own_group`: the child leads a process group of its own, so that
// kill_group() ends whatever it started too.
Spawned spawn(const std::vector<std::string>& argv, const std::string& log_path,
              const std::vector<std::string>& extra_env = {}, bool own_group = false);

// A child spoken to through pipes: `to` its stdin, `from` its stdout (both close on exec).
struct Piped {
  pid_t pid = -1;
  int to = -1, from = -1;
  std::string error;  // why it could not start ("" when pid is valid)
};

// Runs argv (argv[0] a path, not looked up) with its stdin and stdout on pipes to this process
// and its stderr this process's; `extra_env` as for spawn(). With `cpus`, the child and every
// thread it starts may run only on those of them this process may use (none of them: it is
// not pinned).
Piped spawn_piped(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env = {},
                  const std::vector<int>& cpus = {});

// The wait status poll() reports for a child that cannot be waited for any more.
constexpr int kLost = -1;

// How a child ended, as a phrase ("" for exit status 0): "exited with status 2",
// "killed by signal 9", ...
std::string exit_reason(int status);

// Waits for the child (retrying on EINTR); returns its wait status.
int wait_for(pid_t pid);

// True, with its wait status, once the child has ended (kLost when it cannot be waited for);
// false while it runs. Never blocks.
bool poll(pid_t pid, int* status);

// Ends a piped child: closes its input (a worker reading it then ends), waits up to `wait_s`
// for it, SIGKILLs it if it still runs, closes its output. Returns its wait status; `p` is left
// empty (pid -1).
int close_piped(Piped& p, double wait_s);

// SIGKILL to the child's process group, then waits for the child.
void kill_group(pid_t pid);

// Runs argv to completion; `output` gets its stdout and stderr. Returns exit_reason() of its
// end, or why it could not start.
std::string run_capture(const std::vector<std::string>& argv, std::string& output);

}  // namespace opbench::process

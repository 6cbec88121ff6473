#include "core/process.hpp"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "core/fs.hpp"
#include "core/placement.hpp"

extern char** environ;

namespace opbench::process {

namespace {

// This process's environment with `extra` added (an entry of the same name replaced).
std::vector<std::string> environment_with(const std::vector<std::string>& extra) {
  auto name_of = [](const std::string& kv) { return kv.substr(0, kv.find('=')); };
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) {
    const std::string kv(*e);
    bool replaced = false;
    for (const auto& x : extra) replaced = replaced || name_of(x) == name_of(kv);
    if (!replaced) out.push_back(kv);
  }
  out.insert(out.end(), extra.begin(), extra.end());
  return out;
}

std::vector<char*> c_strings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

Spawned spawn(const std::vector<std::string>& argv_in, const std::string& log_path,
              const std::vector<std::string>& extra_env, bool own_group) {
  Spawned s;
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // no signal blocked in the child (a command that handles its signals in a thread of its own
  // blocks them in its others)
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, short(POSIX_SPAWN_SETSIGMASK | (own_group ? POSIX_SPAWN_SETPGROUP : 0)));
  if (own_group) posix_spawnattr_setpgroup(&attr, 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);

  std::vector<std::string> argv = argv_in, envs = environment_with(extra_env);
  std::vector<char*> args = c_strings(argv), envp = c_strings(envs);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, args[0], &fa, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) s.error = "cannot run '" + argv_in[0] + "': " + std::strerror(rc);
  else s.pid = pid;
  return s;
}

namespace {

// The calling thread on `cpus` while it lives (a child spawned meanwhile inherits the set), its
// own set back after; nothing when `cpus` is empty or the thread cannot be moved.
class PinnedThread {
 public:
  explicit PinnedThread(const std::vector<int>& cpus) {
    const std::vector<int> allowed = allowed_cpus(cpus);
    if (allowed.empty() || ::sched_getaffinity(0, sizeof old_, &old_) != 0) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : allowed) CPU_SET(c, &set);
    pinned_ = ::sched_setaffinity(0, sizeof set, &set) == 0;
  }
  ~PinnedThread() {
    if (pinned_) ::sched_setaffinity(0, sizeof old_, &old_);
  }
  PinnedThread(const PinnedThread&) = delete;
  PinnedThread& operator=(const PinnedThread&) = delete;

 private:
  cpu_set_t old_;
  bool pinned_ = false;
};

}  // namespace

Piped spawn_piped(const std::vector<std::string>& argv_in, const std::vector<std::string>& extra_env,
                  const std::vector<int>& cpus) {
  Piped p;
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0) {
    p.error = std::string("cannot make a pipe: ") + std::strerror(errno);
    return p;
  }
  if (::pipe2(out, O_CLOEXEC) != 0) {
    p.error = std::string("cannot make a pipe: ") + std::strerror(errno);
    ::close(in[0]), ::close(in[1]);
    return p;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);  // dup2 clears close-on-exec on 0 and 1
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  std::vector<std::string> argv = argv_in, envs = environment_with(extra_env);
  std::vector<char*> args = c_strings(argv), envp = c_strings(envs);
  pid_t pid = -1;
  int rc = 0;
  {
    const PinnedThread pinned(cpus);
    rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), envp.data());
  }
  posix_spawn_file_actions_destroy(&fa);
  ::close(in[0]);
  ::close(out[1]);
  if (rc != 0) {
    p.error = "cannot run '" + argv_in[0] + "': " + std::strerror(rc);
    ::close(in[1]), ::close(out[0]);
    return p;
  }
  p.pid = pid;
  p.to = in[1];
  p.from = out[0];
  return p;
}

std::string exit_reason(int status) {
  if (status == kLost) return "was lost (waitpid failed)";
  if (WIFEXITED(status)) {
    const int code = WEXITSTATUS(status);
    if (code == 0) return "";
    if (code == 127) return "exited with status 127 (command not found)";
    return "exited with status " + std::to_string(code);
  }
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "ended abnormally";
}

int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

bool poll(pid_t pid, int* status) {
  pid_t r;
  while ((r = ::waitpid(pid, status, WNOHANG)) < 0 && errno == EINTR) {
  }
  if (r < 0) {  // not our child any more
    *status = kLost;
    return true;
  }
  return r == pid;
}

int close_piped(Piped& p, double wait_s) {
  int status = kLost;
  if (p.to >= 0) ::close(p.to);
  if (p.pid >= 0) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
    while (!poll(p.pid, &status)) {
      if (std::chrono::steady_clock::now() >= until) {
        ::kill(p.pid, SIGKILL);
        status = wait_for(p.pid);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  if (p.from >= 0) ::close(p.from);
  p = Piped();
  return status;
}

void kill_group(pid_t pid) {
  ::kill(-pid, SIGKILL);
  wait_for(pid);
}

std::string run_capture(const std::vector<std::string>& argv, std::string& output) {
  char tmpl[] = "/tmp/opbench-run-XXXXXX";
  const int fd = ::mkstemp(tmpl);
  if (fd < 0) return "cannot create a temporary file";
  ::close(fd);
  const Spawned s = spawn(argv, tmpl);
  if (s.pid < 0) {
    ::unlink(tmpl);
    return s.error;
  }
  const int status = wait_for(s.pid);
  output.clear();
  fs::read_file(tmpl, &output);
  ::unlink(tmpl);
  return exit_reason(status);
}

}  // namespace opbench::process

#include "core/cleanup.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/fs.hpp"

namespace opbench {

namespace {

std::recursive_mutex g_mutex;
std::set<std::string> g_paths;

// Held from here to the process's end: no thread creates a file or folder after this.
void remove_named() {
  g_mutex.lock();
  // a file another thread had open may still be written: again until it is gone
  for (const auto& p : g_paths)
    for (int attempt = 0; attempt < 100 && fs::exists(p); ++attempt) {
      try {
        fs::remove_tree(p);
      } catch (...) {
      }
    }
}

bool is_digits(const std::string& s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos; }

}  // namespace

void install_cleanup_signals() {
  static bool installed = false;
  if (installed) return;
  installed = true;
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction now {};
    if (sigaction(s, nullptr, &now) == 0 && now.sa_handler == SIG_IGN) continue;  // ignored (nohup): left so
    sigaddset(&set, s);
  }
  if (pthread_sigmask(SIG_BLOCK, &set, nullptr) != 0) return;
  std::thread([set] {
    int signo = 0;
    while (sigwait(&set, &signo) != 0) {
    }
    remove_named();
    _exit(130);
  }).detach();
}

void remove_on_stop(const std::string& path) {
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  g_paths.insert(path);
}

void keep_on_stop(const std::string& path) {
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  g_paths.erase(path);
}

std::unique_lock<std::recursive_mutex> hold_creation() { return std::unique_lock<std::recursive_mutex>(g_mutex); }

void remove_stale(const std::string& prefix) {
  const size_t slash = prefix.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : prefix.substr(0, slash);
  const std::string start = slash == std::string::npos ? prefix : prefix.substr(slash + 1);
  std::vector<std::string> names;
  try {
    names = fs::list_dir(dir);
  } catch (...) {
    return;
  }
  for (const auto& name : names) {
    if (name.size() <= start.size() || name.compare(0, start.size(), start) != 0) continue;
    const std::string pid = name.substr(start.size());
    if (!is_digits(pid) || pid.size() > 9) continue;
    if (::kill(pid_t(std::stol(pid)), 0) == 0 || errno != ESRCH) continue;  // still running (or not ours to know)
    try {
      fs::remove_tree((slash == std::string::npos ? "" : dir + "/") + name);
    } catch (...) {
    }
  }
}

}  // namespace opbench

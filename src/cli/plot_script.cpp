// Drawing through scripts/plot.py: the data goes to the script as a JSON file, the script
// writes the PNGs (matplotlib) and prints one line per file.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"

extern char** environ;

namespace opbench {

namespace {

// $OPBENCH_PYTHON, else the source tree's .venv (scripts/bootstrap puts matplotlib there),
// else python3 on PATH.
std::string plot_python() {
  if (const char* p = std::getenv("OPBENCH_PYTHON"); p && *p) return p;
  const std::string venv = std::string(OPBENCH_SOURCE_DIR) + "/.venv/bin/python";
  if (access(venv.c_str(), X_OK) == 0) return venv;
  return "python3";
}

std::string plot_script() {
  if (const char* p = std::getenv("OPBENCH_PLOT_SCRIPT"); p && *p) return p;
  return std::string(OPBENCH_SOURCE_DIR) + "/scripts/plot.py";
}

// A temporary file, removed when it goes out of scope.
struct TempFile {
  std::string path;
  explicit TempFile(const char* tag) {
    std::string tmpl = fs::temp_folder() + "/opbench-" + tag + "-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    int fd = mkstemp(buf.data());
    if (fd < 0) throw RuntimeFailure("cannot create a temporary file in " + tmpl + ": " + std::strerror(errno));
    close(fd);
    path = buf.data();
  }
  ~TempFile() { unlink(path.c_str()); }
  std::string read() const {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
};

std::string last_line(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  size_t nl = s.rfind('\n');
  return nl == std::string::npos ? s : s.substr(nl + 1);
}

}  // namespace

std::string run_plot_script(const std::string& data_json, const std::string& out) {
  TempFile data("plot-data"), sout("plot-out"), serr("plot-err");
  {
    std::ofstream f(data.path);
    f << data_json;
    if (!f) throw RuntimeFailure("cannot write " + data.path);
  }
  const std::string python = plot_python(), script = plot_script();
  if (!fs::is_regular_file(script)) throw RuntimeFailure("plot: no plotting script at " + script + " (set OPBENCH_PLOT_SCRIPT)");
  posix_spawn_file_actions_t act;
  posix_spawn_file_actions_init(&act);
  posix_spawn_file_actions_addopen(&act, STDOUT_FILENO, sout.path.c_str(), O_WRONLY | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&act, STDERR_FILENO, serr.path.c_str(), O_WRONLY | O_TRUNC, 0600);
  std::vector<std::string> args = {python, script, data.path, out};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  posix_spawnattr_t attr;  // no signal blocked in python (opbench handles its own in a thread)
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  int rc = posix_spawnp(&pid, python.c_str(), &act, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&act);
  if (rc != 0)
    throw RuntimeFailure("plot: cannot run python '" + python + "': " + std::strerror(rc) +
                         " (set OPBENCH_PYTHON to a python with matplotlib)");
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string why = last_line(serr.read());
    if (why.empty()) why = WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status)) : "killed by a signal";
    throw RuntimeFailure("plot: " + why);
  }
  return sout.read();
}

std::map<std::string, std::string> make_plots(const std::vector<RunRecord>& runs, Show show, const std::string& dir,
                                              std::ostream& log, const std::string& option,
                                              const std::vector<std::string>& databases) {
  auto tables = plot_tables(runs, show);
  std::vector<std::string> files = {"plots.json"};
  for (const auto& t : tables) files.push_back(t.file);
  check_out_dir(dir, option, files, databases);
  log << run_plot_script(plot_tables_json(tables, show), dir);
  std::map<std::string, std::string> out;
  for (const auto& t : tables) out[t.title] = dir + "/" + t.file;
  return out;
}

}  // namespace opbench

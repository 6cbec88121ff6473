// opbench: benchmark GPU operator kernels against LibTorch baselines, store every sample in
// SQLite, report markdown tables, and track regressions. Built twice (CMakeLists.txt): as
// `opbench` (OPBENCH_FRONT), torch-free, which runs the commands that read and write the store
// and hands sweep, compile and list to `opbench-measure` beside it, built with every command.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "cli/cli.hpp"
#include "core/cleanup.hpp"
#include "core/error.hpp"
#include "core/suggest.hpp"

namespace {

#ifdef OPBENCH_FRONT
// The first word of the command line that is not an option: the command ("" when none).
std::string command_word(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (argv[i][0] != '-') return argv[i];
  return "";
}

// Runs the command line in opbench-measure, the binary beside this one (exit 3 when it cannot;
// exit 2 in a current folder that was deleted, where LibTorch's libraries cannot load).
[[noreturn]] void run_measuring(char** argv) {
  char cwd[4096];
  if (!::getcwd(cwd, sizeof cwd) && errno == ENOENT) {
    std::cerr << "opbench: the current folder no longer exists (it was deleted): change to a folder that does\n";
    _exit(opbench::kExitUsage);
  }
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  std::string path = n > 0 ? std::string(self, size_t(n)) : std::string(argv[0]);
  path = path.substr(0, path.rfind('/') + 1) + "opbench-measure";
  argv[0] = const_cast<char*>(path.c_str());
  ::execv(path.c_str(), argv);
  std::cerr << "opbench: cannot run " << path << ": " << std::strerror(errno) << "\n";
  _exit(opbench::kExitRuntime);
}

// The commands opbench-measure runs, listed here with their help (never parsed here).
void add_measuring_stub(CLI::App& app, const char* name, const char* help) { app.add_subcommand(name, help); }
#endif

// The names a command line may use at the level of `cmd`: its long and short flags.
std::vector<std::string> flag_names(const CLI::App* cmd) {
  std::vector<std::string> out;
  for (const CLI::Option* opt : cmd->get_options()) {
    for (const auto& l : opt->get_lnames()) out.push_back("--" + l);
    for (const auto& s : opt->get_snames()) out.push_back("-" + s);
  }
  return out;
}

// A parse error in words that help, as one line: an unknown subcommand or flag gets the closest valid
// name; anything else CLI11's own message. Names the command whose --help to read.
std::string usage_message(CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  std::vector<std::string> commands;
  for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) commands.push_back(sub->get_name());
  CLI::App* cmd = nullptr;
  int first = 1;
  for (; first < argc; ++first) {
    std::string a = argv[first];
    if (a.empty() || a[0] == '-') continue;
    for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
      if (sub->get_name() == a) cmd = sub;
    if (!cmd)
      return "opbench: unknown command '" + a + "'" + opbench::suggest_names(a, commands) + " (see opbench --help)";
    break;
  }
  if (!cmd) return std::string("opbench: ") + e.what() + " (see opbench --help)";
  const std::string where = "opbench " + cmd->get_name();
  const auto known = flag_names(cmd);
  for (int i = first + 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.size() < 2 || a[0] != '-' || (a[1] >= '0' && a[1] <= '9') || a[1] == '.') continue;  // values: -1, -.5
    if (a == "--") break;
    std::string name = a.substr(0, a.find('='));
    bool ok = false;
    for (const auto& k : known) ok = ok || k == name;
    for (const auto& k : flag_names(&app)) ok = ok || k == name;
    if (ok) continue;
    const std::string near = opbench::closest_name(name, known);
    return where + ": unknown option " + name + (near.empty() ? "" : "; did you mean " + near + "?") + " (see " +
           where + " --help)";
  }
  return where + ": " + e.what() + " (see " + where + " --help)";
}

// A stream buffer that takes nothing: standard output when it was closed, so that what a
// command writes to it fails (exit 3) as a write to a closed descriptor would.
class ClosedOutput : public std::streambuf {
 protected:
  int overflow(int) override { return traits_type::eof(); }
};

// The standard descriptors that were closed when the process started (held on /dev/null).
std::vector<int> g_closed_standard;

// Standard descriptors that are closed are opened on /dev/null, so that no file or pipe the
// command opens takes their numbers (a pipe on descriptor 2 would read every message as a
// byte); true when standard output was closed.
bool hold_standard_descriptors() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int got = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (got >= 0 && got != fd) ::dup2(got, fd), ::close(got);
    g_closed_standard.push_back(fd);
  }
  return std::find(g_closed_standard.begin(), g_closed_standard.end(), 1) != g_closed_standard.end();
}

// Before the measuring binary takes over: the descriptors closed again, as it was started
// (it holds them itself, and a closed standard output is its failure to report, exit 3).
void release_standard_descriptors() {
  for (int fd : g_closed_standard) ::close(fd);
}

// The command's status, or 3 when what it wrote to standard output did not all get there
// (a full disk, a closed descriptor).
int checked_output(int status) {
  errno = 0;
  std::cout.flush();
  const bool lost = !std::cout.good() || std::fflush(stdout) != 0 || std::ferror(stdout);
  if (!lost) return status;
  std::cerr << "opbench: " << opbench::output_lost(errno) << "\n";
  return status == 0 ? opbench::kExitRuntime : status;
}

int run_cli(int argc, char** argv);

}  // namespace

int main(int argc, char** argv) {
  static ClosedOutput closed;
  if (hold_standard_descriptors()) std::cout.rdbuf(&closed);
  return checked_output(run_cli(argc, argv));
}

namespace {

int run_cli(int argc, char** argv) {
  using namespace opbench;
#ifdef OPBENCH_FRONT
  const std::string word = command_word(argc, argv);
  if (word == "sweep" || word == "compile" || word == "list" || word == "ab") {
    release_standard_descriptors();
    run_measuring(argv);
  }
  install_cleanup_signals();  // SIGINT, SIGTERM, SIGHUP: temporaries removed, exit 130
#endif
  CLI::App app{"opbench: a benchmarking harness and regression tracker for GPU operator kernels", "opbench"};
  app.set_version_flag("--version", std::string("opbench ") + OPBENCH_VERSION);
  app.require_subcommand(1);
  Cli cli;
#ifdef OPBENCH_FRONT
  add_measuring_stub(app, "sweep", kSweepHelp);
  add_report_command(app, cli);
  add_runs_command(app, cli);
  add_measuring_stub(app, "list", kListHelp);
  add_measuring_stub(app, "compile", kCompileHelp);
  add_measuring_stub(app, "ab", kAbHelp);
#else
  add_sweep_command(app, cli);
  add_report_command(app, cli);
  add_runs_command(app, cli);
  add_list_command(app, cli);
  add_compile_command(app, cli);
  add_ab_command(app, cli);
#endif
  add_import_command(app, cli);
  add_diff_command(app, cli);
  add_versus_command(app, cli);
  add_merge_command(app, cli);
  add_history_command(app, cli);
  add_export_command(app, cli);
  add_plot_command(app, cli);
  add_site_command(app, cli);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << usage_message(app, e, argc, argv) << "\n";
    return kExitUsage;
  } catch (const InputError& e) {
    std::cerr << "opbench: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "opbench: " << e.what() << "\n";
    return kExitRuntime;
  }
  return cli.status;
}

}  // namespace

#include "sweep/builds.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <ostream>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/hash.hpp"
#include "core/process.hpp"
#include "core/text.hpp"
#include "sweep/worker_protocol.hpp"

namespace opbench {

namespace {

constexpr const char* kSettingsFile = "opbench-build.json";
constexpr const char* kPublished = "published";  // written last: the build is whole

// Runs argv; its output (stdout and stderr) in `output`, trailing newlines dropped; whether it
// exited 0.
bool run_git(const std::vector<std::string>& argv, std::string* output) {
  const std::string why = process::run_capture(argv, *output);
  while (!output->empty() && (output->back() == '\n' || output->back() == '\r')) output->pop_back();
  return why.empty();
}

// The last `n` lines of a file, joined by " | " (what a one-line message can show of a log).
std::string last_lines(const std::string& path, size_t n) {
  std::string text;
  if (!fs::read_file(path, &text)) return "";
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i)
    if (i == text.size() || text[i] == '\n') {
      if (i > start) lines.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  std::string out;
  for (size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i)
    out += (out.empty() ? "" : " | ") + std::string(trim(lines[i]));
  return out;
}

// An exclusive lock on a file (flock), held while it lives: one builder of a commit at a time.
class FileLock {
 public:
  explicit FileLock(const std::string& path) : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ < 0) throw RuntimeFailure("cannot open the lock " + path);
    while (::flock(fd_, LOCK_EX) != 0)
      if (errno != EINTR) throw RuntimeFailure("cannot lock " + path);
  }
  ~FileLock() { ::close(fd_); }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

// One step of a build, its output into `log`; the reason it failed ("" when it did not).
std::string build_step(const std::vector<std::string>& argv, const std::string& log) {
  const process::Spawned s = process::spawn(argv, log);
  if (s.pid < 0) return s.error;
  return process::exit_reason(process::wait_for(s.pid));
}

// The cmake configure command of `dir` with the running build's settings.
std::vector<std::string> configure_command(const std::string& dir, const BuildSettings& settings) {
  const auto j = nlohmann::json::parse(settings.text);
  std::vector<std::string> argv = {"cmake", "-S", dir + "/src", "-B", dir + "/build"};
  if (j.contains("generator") && j["generator"].is_string()) argv.insert(argv.end(), {"-G", j["generator"]});
  if (j.contains("cache") && j["cache"].is_object())
    for (const auto& [name, value] : j["cache"].items())
      if (value.is_string()) argv.push_back("-D" + name + "=" + value.get<std::string>());
  return argv;
}

// The commit's files into dir/src, configured and built into dir/build: the first step that
// fails, with where its output is ("" when all passed).
std::string build_commit(const Revision& rev, const std::string& dir, const BuildCacheOptions& opt) {
  fs::remove_tree(dir);
  fs::make_dirs(dir + "/src");
  const int jobs = opt.jobs > 0 ? opt.jobs : int(std::max(1u, std::thread::hardware_concurrency()));
  struct Step {
    const char* name;
    std::vector<std::string> argv;
  };
  const std::vector<Step> steps = {
      {"extract", {"sh", "-c", "git -C \"$1\" archive --format=tar \"$2\" | tar -x -C \"$3\"", "sh", opt.source_dir,
                   rev.commit, dir + "/src"}},
      {"configure", configure_command(dir, opt.settings)},
      {"build", {"cmake", "--build", dir + "/build", "--target", "opbench-measure", "-j", std::to_string(jobs)}},
  };
  for (const Step& step : steps) {
    const std::string log = dir + "/" + step.name + ".log";
    const std::string why = build_step(step.argv, log);
    if (!why.empty())
      return std::string("its ") + step.name + " " + why + " (" + log + ": " + last_lines(log, 3) + ")";
  }
  return "";
}

std::string published_binary(const std::string& dir) {
  const std::string binary = dir + "/build/opbench-measure";
  return fs::exists(dir + "/" + kPublished) && fs::is_regular_file(binary) ? binary : "";
}

}  // namespace

BuildSettings build_settings(const std::string& binary_dir) {
  BuildSettings s;
  s.path = binary_dir + "/" + kSettingsFile;
  if (!fs::read_file(s.path, &s.text))
    throw InputError(s.path, "", "missing: this opbench was not built by its CMake project, which writes the settings "
                                 "`opbench ab` builds other revisions with");
  const auto j = nlohmann::json::parse(s.text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) throw InputError(s.path, "", "not a JSON object");
  s.key = content_hash(j.dump());
  return s;
}

Revision resolve_revision(const std::string& source_dir, const std::string& given, const std::string& option) {
  if (given.empty() || given[0] == '-') throw InputError(option, given, "expected a revision of the tree (a commit, branch or tag)");
  std::string out;
  if (!run_git({"git", "-C", source_dir, "rev-parse", "--verify", "--quiet", given + "^{commit}"}, &out) ||
      out.size() != 40)
    throw InputError(option, given, "names no commit of the tree at " + source_dir + " (git rev-parse)");
  return {given, out};
}

std::string tree_commit(const std::string& source_dir) {
  if (const char* c = std::getenv("OPBENCH_GIT_COMMIT")) return c;
  std::string head, dirty;
  if (!run_git({"git", "-C", source_dir, "rev-parse", "HEAD"}, &head) || head.size() != 40) return "";
  run_git({"git", "-C", source_dir, "status", "--porcelain", "--untracked-files=no"}, &dirty);
  return dirty.empty() ? head : head + "-dirty";
}

std::string default_build_cache(const std::string& source_dir) {
  if (const char* d = std::getenv("OPBENCH_BUILDS"); d && *d) return d;
  return source_dir + "/build-ab";
}

std::string side_binary_text(const SideBinary& b) {
  switch (b.how) {
    case SideBinary::running: return "this build";
    case SideBinary::cached: return "a cached build";
    case SideBinary::built: return "built in " + number_text("%.0f", b.build_seconds) + " s";
    case SideBinary::given: return "the binary given";
  }
  return "";
}

int worker_protocol_of(const std::string& binary) {
  std::string output;
  if (!process::run_capture({binary, "sweep", "-", "--print-worker-protocol"}, output).empty()) return kConfigReadingProtocol;
  while (!output.empty() && (output.back() == '\n' || output.back() == '\r')) output.pop_back();
  const size_t newline = output.find_last_of('\n');
  const std::string last(trim(output.substr(newline == std::string::npos ? 0 : newline + 1)));  // its last line
  if (last.empty() || last.size() > 3 || last.find_first_not_of("0123456789") != std::string::npos)
    return kConfigReadingProtocol;
  return std::max(kConfigReadingProtocol, std::stoi(last));
}

SideBinary side_binary(const Revision& rev, const std::string& option, const BuildCacheOptions& opt, std::ostream& log) {
  // The running build is the commit's only when the tree holds nothing else (a tree with
  // uncommitted changes built them in: the commit itself is built from git).
  if (opt.running_commit == rev.commit) return {opt.running, rev.commit, SideBinary::running, 0};
  const std::string dir = opt.cache_dir + "/" + rev.commit.substr(0, 12) + "-" + opt.settings.key;
  if (const std::string b = published_binary(dir); !b.empty()) return {b, rev.commit, SideBinary::cached, 0};
  fs::make_dirs(opt.cache_dir);
  FileLock lock(dir + ".lock");
  if (const std::string b = published_binary(dir); !b.empty()) return {b, rev.commit, SideBinary::cached, 0};
  log << "building " << option << " " << rev.given << " (" << rev.commit.substr(0, 12) << ") into " << dir << "\n"
      << std::flush;
  const auto t0 = std::chrono::steady_clock::now();
  const std::string failed = build_commit(rev, dir, opt);
  if (!failed.empty())
    throw InputError(option, rev.given, "commit " + rev.commit.substr(0, 12) + " does not build with this build's "
                                        "settings (" + opt.settings.path + "): " + failed);
  fs::write_file(dir + "/" + kPublished, rev.commit + "\n");
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return {dir + "/build/opbench-measure", rev.commit, SideBinary::built, took};
}

}  // namespace opbench

// The torch_compile baselines: AOTInductor packages exported by scripts/export_aoti.py, cached
// on disk, loaded with torch::inductor::AOTIModelPackageLoader (see compiled.h).
#include "compiled.h"

#include <dirent.h>
#include <fcntl.h>
#include <spawn.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#include <torch/version.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

extern char** environ;

#ifndef OPBENCH_SOURCE_DIR
#define OPBENCH_SOURCE_DIR ""
#endif

namespace opbench {
namespace compiled {
namespace {

using Clock = std::chrono::steady_clock;

const char* const kExporter = "scripts/export_aoti.py";
const char* const kOps = "baselines/python/opbench_ops.py";

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// First line of a (possibly multi-line) message, trimmed.
std::string first_line(const std::string& s) {
  std::istringstream in(s);
  std::string line;
  while (std::getline(in, line)) {
    size_t a = line.find_first_not_of(" \t\r");
    if (a == std::string::npos) continue;
    size_t b = line.find_last_not_of(" \t\r");
    return line.substr(a, b - a + 1);
  }
  return s;
}

// POSIX rather than std::filesystem: libtorch.so (torch 2.11 wheels) exports its own copies of
// std::filesystem functions, which then take the place of libstdc++'s in anything linking
// LibTorch (its remove_all crashes there).
bool is_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// mkdir -p; throws when a component cannot be made.
void make_dirs(const std::string& path) {
  for (size_t pos = 1; pos <= path.size(); ++pos) {
    if (pos != path.size() && path[pos] != '/') continue;
    const std::string part = path.substr(0, pos);
    if (::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST)
      throw std::runtime_error("cannot create " + part + ": " + std::strerror(errno));
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw std::runtime_error("cannot create " + path + ": not a folder");
}

// The names in a folder (empty when it cannot be read).
std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return names;
  while (struct dirent* e = ::readdir(d)) names.push_back(e->d_name);
  ::closedir(d);
  return names;
}

std::string base_name(const std::string& path) {
  const size_t p = path.find_last_of('/');
  return p == std::string::npos ? path : path.substr(p + 1);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Writes `text` to `path` atomically (temp file + rename).
void write_file_atomic(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + tmp);
    out << text;
    if (!out.flush()) throw std::runtime_error("cannot write " + tmp);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot write " + path);
  }
}

uint64_t fnv1a(const std::string& s, uint64_t h = 1469598103934665603ULL) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string json_value(const Value& v) {
  if (auto p = std::get_if<int64_t>(&v)) return std::to_string(*p);
  return json_string(std::get<std::string>(v));
}

// ------------------------------------------------------------------------- child processes

struct Spawned {
  pid_t pid = -1;
  std::string error;  // why it could not start
};

// Runs argv with stdin from /dev/null and stdout + stderr to `log_path`; extra_env entries
// ("NAME=value") are added to (or replace) the environment.
Spawned spawn(const std::vector<std::string>& argv, const std::string& log_path,
              const std::vector<std::string>& extra_env, bool own_group = false) {
  Spawned s;
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  if (own_group) {  // its own process group, so that a timeout can end its children too
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);

  std::vector<std::string> envs;
  for (char** e = environ; e && *e; ++e) {
    std::string kv(*e);
    std::string name = kv.substr(0, kv.find('='));
    bool replaced = false;
    for (const auto& x : extra_env)
      if (x.substr(0, x.find('=')) == name) replaced = true;
    if (!replaced) envs.push_back(kv);
  }
  for (const auto& x : extra_env) envs.push_back(x);
  std::vector<char*> envp, args;
  for (auto& e : envs) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  pid_t pid = -1;
  int rc = posix_spawnp(&pid, args[0], &fa, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    s.error = "cannot run '" + argv[0] + "': " + std::strerror(rc);
    return s;
  }
  s.pid = pid;
  return s;
}

// A finished child's status as a sentence ("" for exit status 0).
std::string exit_reason(int status) {
  if (WIFEXITED(status)) {
    int code = WEXITSTATUS(status);
    if (code == 0) return "";
    if (code == 127) return "exited with status 127 (command not found)";
    return "exited with status " + std::to_string(code);
  }
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "ended abnormally";
}

// Runs argv to completion, returning its exit reason ("" on success) and its output.
std::string run_capture(const std::vector<std::string>& argv, std::string& output) {
  char tmpl[] = "/tmp/opbench-probe-XXXXXX";
  int fd = ::mkstemp(tmpl);
  if (fd < 0) return "cannot create a temporary file";
  ::close(fd);
  Spawned s = spawn(argv, tmpl, {});
  if (s.pid < 0) {
    ::unlink(tmpl);
    return s.error;
  }
  int status = 0;
  while (::waitpid(s.pid, &status, 0) < 0 && errno == EINTR) {
  }
  output = read_file(tmpl);
  ::unlink(tmpl);
  return exit_reason(status);
}

// The line of an exporter log that says why it failed: its "opbench-export: error:" line,
// else the last line that is not a warning.
std::string log_reason(const std::string& log) {
  static const std::string kErr = "opbench-export: error: ";
  std::istringstream in(log);
  std::string line, err, last;
  while (std::getline(in, line)) {
    const std::string t = first_line(line);
    if (t.empty()) continue;
    const size_t p = t.find(kErr);
    if (p != std::string::npos) err = t.substr(p + kErr.size());
    const bool warning =
        t.find("Warning") != std::string::npos || t.find("warn(") != std::string::npos ||
        t.rfind("return cls.__new__", 0) == 0 ||
        (t.size() > 5 && t[0] == 'W' && std::isdigit(static_cast<unsigned char>(t[1])));
    if (!warning) last = t;
  }
  return !err.empty() ? err : last;
}

// ------------------------------------------------------------------------- environment

struct Probe {
  std::string error;          // "" when python imports torch
  std::string torch_version;  // e.g. 2.11.0+cu130
  std::map<int, std::string> cuda_cc;  // device index -> "9.0"
  std::string cuda_error;              // why CUDA could not be queried, if it failed
};

const char* const kProbeScript =
    "import sys\n"
    "try:\n"
    "    import torch\n"
    "except Exception as e:\n"
    "    print('opbench-probe: error: cannot import torch: %s: %s' % (type(e).__name__, "
    "(str(e).splitlines() or [''])[0]))\n"
    "    sys.exit(1)\n"
    "print('torch', torch.__version__)\n"
    "try:\n"
    "    if torch.cuda.is_available():\n"
    "        for i in range(torch.cuda.device_count()):\n"
    "            print('cuda', i, '%d.%d' % torch.cuda.get_device_capability(i))\n"
    "except Exception as e:\n"
    "    print('cuda-error %s: %s' % (type(e).__name__, (str(e).splitlines() or [''])[0]))\n";

const Probe& probe(const std::string& python) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<Probe>> probes;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = probes[python];
  if (slot) return *slot;
  slot = std::make_unique<Probe>();
  std::string out;
  std::string why = run_capture({python, "-c", kProbeScript}, out);
  std::istringstream in(out);
  std::string line;
  std::string probe_error;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string word;
    ls >> word;
    if (word == "torch") {
      ls >> slot->torch_version;
    } else if (word == "cuda") {
      int idx = -1;
      std::string cc;
      ls >> idx >> cc;
      slot->cuda_cc[idx] = cc;
    } else if (word == "cuda-error") {
      slot->cuda_error = first_line(line.substr(word.size()));
    } else if (line.rfind("opbench-probe: error: ", 0) == 0) {
      probe_error = line.substr(std::string("opbench-probe: error: ").size());
    }
  }
  if (!why.empty() || slot->torch_version.empty()) {
    std::string detail = !probe_error.empty() ? probe_error : why;
    if (detail.empty()) detail = "printed no torch version";
    if (why.find("cannot run") == 0 || why.find("status 127") != std::string::npos)
      detail = why + (out.empty() ? "" : ": " + first_line(out));
    slot->error = "python '" + python + "' is not usable for torch_compile: " + detail;
  }
  return *slot;
}

std::string strip_local(const std::string& version) {  // 2.11.0+cu130 -> 2.11.0
  return version.substr(0, version.find('+'));
}

// "cpu" | "cuda" | "cuda:N" -> (type, index); throws for anything else.
std::pair<std::string, int> parse_device(const std::string& device) {
  if (device == "cpu") return {"cpu", -1};
  if (device == "cuda") return {"cuda", 0};
  if (device.rfind("cuda:", 0) == 0) {
    const std::string idx = device.substr(5);
    if (!idx.empty() && std::all_of(idx.begin(), idx.end(), ::isdigit))
      return {"cuda", std::stoi(idx)};
  }
  throw std::runtime_error("torch_compile: unsupported device '" + device + "' (cpu, cuda, cuda:N)");
}

// "cuda" -> "cuda:0"; "cpu" and "cuda:N" unchanged (throws for anything else).
std::string normalize_device(const std::string& device) {
  auto [type, index] = parse_device(device);
  return type == "cpu" ? type : type + ":" + std::to_string(index);
}

std::string cpu_model() {
  static const std::string model = [] {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("model name", 0) == 0) {
        size_t p = line.find(':');
        if (p != std::string::npos) return first_line(line.substr(p + 1));
      }
    }
    struct utsname u;
    return ::uname(&u) == 0 ? std::string(u.machine) : std::string("unknown");
  }();
  return model;
}

// Hash of the exporter and the op definitions (read once per process).
std::string sources_hash() {
  static std::once_flag once;
  static std::string hash;
  std::call_once(once, [] {
    uint64_t h = fnv1a("opbench-aoti-v1");
    for (const char* f : {kExporter, kOps}) {
      h = fnv1a(f, h);
      h = fnv1a(read_file(source_dir() + "/" + f), h);
    }
    hash = hex64(h);
  });
  return hash;
}

// The device part of the key: "cpu <model>" or "cuda sm_90".
std::string device_signature(const std::string& device, const Probe& pr) {
  auto [type, index] = parse_device(device);
  if (type == "cpu") return "cpu " + cpu_model();
  auto it = pr.cuda_cc.find(index);
  if (it == pr.cuda_cc.end())
    throw std::runtime_error("torch_compile: python torch sees no CUDA device " +
                             std::to_string(index));
  std::string cc = it->second;
  cc.erase(std::remove(cc.begin(), cc.end(), '.'), cc.end());
  return "cuda sm_" + cc;
}

bool is_compiled_provider(const std::string& op, const std::string& provider) {
  static const std::set<std::string> ops = {"act", "lrpe_cosine", "lrpe_rotate", "lrpe_cosine_md",
                                            "tpa_decode"};
  if (provider == "torch_compile") return ops.count(op) != 0;
  if (provider == "torch_naive_compile") return op == "tpa_decode";
  return false;
}

// Every axis but x and metric, in a stable order: "name=value;..."
std::string params_signature(const Params& p, const std::string& x_name) {
  std::string s;
  for (const auto& [name, value] : p.values()) {
    if (name == x_name || name == "metric") continue;
    s += name + "=" + to_string(value) + ";";
  }
  return s;
}

struct KeyInfo {
  std::string key, canonical;
};

KeyInfo make_key(const CompileRequest& r) {
  if (!is_compiled_provider(r.op, r.provider))
    throw std::runtime_error("no compiled provider '" + r.provider + "' for op '" + r.op + "'");
  std::string why = unavailable(r.device);
  if (!why.empty()) throw std::runtime_error(why);
  const Probe& pr = probe(python());
  KeyInfo k;
  k.canonical = "op=" + r.op + "\nprovider=" + r.provider + "\nx=" + r.x_name +
                "\nparams=" + params_signature(r.params, r.x_name) +
                "\ndevice=" + device_signature(r.device, pr) + "\ntorch=" + pr.torch_version +
                "\nlibtorch=" + TORCH_VERSION + "\nsources=" + sources_hash() + "\n";
  k.key = r.op + "-" + r.provider + "-" + r.params.s_or("mode", "fwd") + "-" +
          r.params.s_or("dtype", "fp32") + "-" + hex64(fnv1a(k.canonical));
  return k;
}

// ------------------------------------------------------------------------- the package cache

std::string dyn_name(int64_t lo, int64_t hi) {
  return "dyn-" + std::to_string(lo) + "-" + std::to_string(hi) + ".pt2";
}
std::string static_name(int64_t x) { return "static-" + std::to_string(x) + ".pt2"; }

// The package in `dir` serving x: the narrowest dyn-<lo>-<hi>.pt2 with lo <= x <= hi, else
// static-<x>.pt2; "" when none.
std::string find_package(const std::string& dir, int64_t x) {
  std::string best;
  int64_t best_width = -1, best_lo = 0;
  for (const std::string& name : list_dir(dir)) {
    long long lo = 0, hi = 0;
    char tail[8] = {0};
    if (std::sscanf(name.c_str(), "dyn-%lld-%lld%7s", &lo, &hi, tail) == 3 &&
        std::string(tail) == ".pt2" && lo <= x && x <= hi) {
      const int64_t width = hi - lo;
      if (best_width < 0 || width < best_width || (width == best_width && lo < best_lo)) {
        best = dir + "/" + name;
        best_width = width;
        best_lo = lo;
      }
    }
  }
  if (!best.empty()) return best;
  const std::string st = dir + "/" + static_name(x);
  return is_file(st) ? st : "";
}

// The packages in `dir` serving every x of `xs` (sorted): one for the whole range, else one per
// x value; empty when some x has none.
std::map<int64_t, std::string> packages_on_disk(const std::string& dir, const std::vector<int64_t>& xs) {
  std::map<int64_t, std::string> served;
  const int64_t lo = xs.front(), hi = xs.back();
  const std::string whole = find_package(dir, lo);
  bool covered = !whole.empty();
  if (covered) {
    long long a = 0, b = 0;
    const std::string name = base_name(whole);
    covered = std::sscanf(name.c_str(), "dyn-%lld-%lld", &a, &b) == 2 ? b >= hi : lo == hi;
  }
  for (int64_t x : xs) {
    const std::string p = covered ? whole : find_package(dir, x);
    if (p.empty()) return {};
    served[x] = p;
  }
  return served;
}

// Process-wide memory: which package each point uses (set by compile_packages, so that a table
// runs on the package built for it), and the exports that failed (not retried in-process).
struct Memory {
  std::mutex mu;
  std::map<std::string, std::string> point_package;  // point signature -> package path
  std::map<std::string, std::string> failed;         // point signature -> error
};
Memory& memory() {
  static Memory m;
  return m;
}

// A point, whatever its table's x axis: every axis but metric (x set to `x`).
std::string point_signature(const std::string& op, const std::string& provider, Params p,
                            const std::string& x_name, int64_t x, const std::string& device) {
  p.set(x_name, x);
  return op + "|" + provider + "|" + device + "|" + params_signature(p, "");
}

std::string request_json(const CompileRequest& r, const KeyInfo& k, int64_t lo, int64_t hi,
                         const std::vector<int64_t>& xs, const std::string& output,
                         const std::string& static_output) {
  std::string j = "{\n";
  j += "  \"op\": " + json_string(r.op) + ",\n";
  j += "  \"provider\": " + json_string(r.provider) + ",\n";
  j += "  \"mode\": " + json_string(r.params.s_or("mode", "fwd")) + ",\n";
  j += "  \"dtype\": " + json_string(r.params.s_or("dtype", "fp32")) + ",\n";
  j += "  \"device\": " + json_string(r.device) + ",\n";
  j += "  \"params\": {";
  bool first = true;
  for (const auto& [name, value] : r.params.values()) {
    if (name == r.x_name || name == "metric") continue;
    j += std::string(first ? "" : ", ") + json_string(name) + ": " + json_value(value);
    first = false;
  }
  j += "},\n";
  j += "  \"x_name\": " + json_string(r.x_name) + ",\n";
  j += "  \"x_min\": " + std::to_string(lo) + ",\n";
  j += "  \"x_max\": " + std::to_string(hi) + ",\n";
  j += "  \"x_values\": [";
  for (size_t i = 0; i < xs.size(); ++i) j += (i ? ", " : "") + std::to_string(xs[i]);
  j += "],\n";
  j += "  \"output\": " + json_string(output) + ",\n";
  if (!static_output.empty()) j += "  \"static_output\": " + json_string(static_output) + ",\n";
  j += "  \"metadata\": {\"opbench_key\": " + json_string(k.key) + "}\n}\n";
  return j;
}

// ------------------------------------------------------------------------- loading

// Loaders by package path, shared while some Call holds one.
std::shared_ptr<torch::inductor::AOTIModelPackageLoader> load(const std::string& path,
                                                              int device_index) {
  static std::mutex mu;
  static std::map<std::pair<std::string, int>,
                  std::weak_ptr<torch::inductor::AOTIModelPackageLoader>>
      loaders;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = loaders[{path, device_index}];
  if (auto alive = slot.lock()) return alive;
  std::shared_ptr<torch::inductor::AOTIModelPackageLoader> loader;
  try {
    loader = std::make_shared<torch::inductor::AOTIModelPackageLoader>(
        path, "model", /*run_single_threaded=*/false, /*num_runners=*/1,
        static_cast<c10::DeviceIndex>(device_index));
  } catch (const std::exception& e) {
    throw std::runtime_error("torch_compile: cannot load " + path + ": " + first_line(e.what()));
  }
  slot = loader;
  return loader;
}

}  // namespace

// ------------------------------------------------------------------------- public helpers

std::string source_dir() {
  std::string s = env("OPBENCH_SOURCE_DIR");
  return s.empty() ? std::string(OPBENCH_SOURCE_DIR) : s;
}

std::string cache_dir() {
  std::string s = env("OPBENCH_CACHE_DIR");
  if (!s.empty()) return s;
  s = env("XDG_CACHE_HOME");
  if (!s.empty()) return s + "/opbench/aoti";
  s = env("HOME");
  if (s.empty()) s = "/tmp";
  return s + "/.cache/opbench/aoti";
}

std::string python() {
  std::string s = env("OPBENCH_PYTHON");
  if (!s.empty()) return s;
  std::string venv = source_dir() + "/.venv/bin/python";
  if (!source_dir().empty() && ::access(venv.c_str(), X_OK) == 0) return venv;
  return "python3";
}

std::string default_x_name(const std::string& op) { return op == "tpa_decode" ? "m" : "n"; }

std::string unavailable(const std::string& device) {
  std::pair<std::string, int> dev;
  try {
    dev = parse_device(device);
  } catch (const std::exception& e) {
    return e.what();
  }
  if (source_dir().empty())
    return "torch_compile: opbench was built without OPBENCH_SOURCE_DIR (set $OPBENCH_SOURCE_DIR)";
  for (const char* f : {kExporter, kOps}) {
    std::string path = source_dir() + "/" + f;
    if (::access(path.c_str(), R_OK) != 0) return "torch_compile: " + path + " is missing";
  }
  const Probe& pr = probe(python());
  if (!pr.error.empty()) return pr.error;
  if (strip_local(pr.torch_version) != strip_local(TORCH_VERSION))
    return "torch_compile: python '" + python() + "' has torch " + pr.torch_version +
           " but opbench links LibTorch " + TORCH_VERSION;
  if (dev.first == "cuda" && pr.cuda_cc.count(dev.second) == 0)
    return "torch_compile: python '" + python() + "' (torch " + pr.torch_version +
           ") sees no CUDA device " + std::to_string(dev.second) +
           (pr.cuda_error.empty() ? "" : " (" + pr.cuda_error + ")");
  return "";
}

std::string package_key(const CompileRequest& request) { return make_key(request).key; }

bool is_cached(const CompileRequest& request) {
  CompileRequest r = request;
  r.device = normalize_device(r.device);
  std::vector<int64_t> xs = r.x_values;
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  return !xs.empty() && !packages_on_disk(cache_dir() + "/" + make_key(r).key, xs).empty();
}

}  // namespace compiled

// ------------------------------------------------------------------------- compile_packages

namespace {

using namespace compiled;

struct Job {
  size_t request = 0;
  int64_t lo = 0, hi = 0;  // x range (lo == hi: static)
  std::vector<int64_t> xs;
  std::string output;      // package path
  bool dynamic = false;
  pid_t pid = -1;
  Clock::time_point started;
};

struct RequestState {
  KeyInfo key;
  std::string dir;
  std::vector<int64_t> xs;                // sorted, unique
  std::map<int64_t, std::string> served;  // x -> package
  std::string error;
  bool export_failed = false;  // the exporter failed (remembered for the process)
  int pending = 0;             // jobs queued or running
  Clock::time_point first_start;
  bool started = false, finished = false, cached = false;
  double seconds = 0;
  size_t owner = SIZE_MAX;     // another request building the same package
};

// Seconds an exporter may run before it is killed: $OPBENCH_EXPORT_TIMEOUT (0: no limit).
double export_timeout() {
  const std::string s = env("OPBENCH_EXPORT_TIMEOUT");
  if (s.empty()) return 1800;
  try {
    return std::stod(s);
  } catch (const std::exception&) {
    return 1800;
  }
}

}  // namespace

std::vector<CompileOutcome> compile_packages(
    const std::vector<CompileRequest>& requests_in, int jobs,
    const std::function<void(size_t, size_t, const CompileOutcome&)>& progress) {
  const size_t total = requests_in.size();
  std::vector<CompileRequest> requests = requests_in;
  std::vector<CompileOutcome> outcomes(total);
  std::vector<RequestState> st(total);
  std::deque<Job> queue;
  std::map<std::string, size_t> job_owner;  // output path -> request (dedupe within a batch)
  size_t done = 0;
  jobs = std::max(1, jobs);
  Memory& mem = memory();

  std::function<void(size_t)> finish = [&](size_t i) {
    RequestState& s = st[i];
    if (s.finished) return;
    s.finished = true;
    CompileOutcome& o = outcomes[i];
    const CompileRequest& r = requests[i];
    o.key = s.key.key;
    o.error = s.error;
    o.cached = s.error.empty() && s.cached;
    o.seconds = s.seconds;
    {
      std::lock_guard<std::mutex> lock(mem.mu);
      if (s.error.empty()) {
        std::set<std::string> paths;
        for (const auto& [x, p] : s.served) paths.insert(p);
        o.path = paths.size() == 1 ? *paths.begin() : s.dir;
        for (const auto& [x, p] : s.served)
          mem.point_package[point_signature(r.op, r.provider, r.params, r.x_name, x, r.device)] = p;
      } else if (s.export_failed) {
        for (int64_t x : s.xs)
          if (!s.served.count(x))
            mem.failed[point_signature(r.op, r.provider, r.params, r.x_name, x, r.device)] = s.error;
      }
    }
    ++done;
    if (progress) progress(done, total, o);
    // Requests waiting on this one's package share its result.
    for (size_t f = 0; f < total; ++f) {
      if (st[f].owner != i || st[f].finished) continue;
      st[f].served = s.served;
      st[f].error = s.error;
      st[f].export_failed = s.export_failed;
      st[f].seconds = s.seconds;
      finish(f);
    }
  };

  // Plan: what is cached, what must be exported.
  for (size_t i = 0; i < total; ++i) {
    CompileRequest& r = requests[i];
    RequestState& s = st[i];
    try {
      r.device = normalize_device(r.device);
      if (r.x_values.empty()) throw std::runtime_error("no " + r.x_name + " values to compile");
      s.key = make_key(r);
      s.dir = cache_dir() + "/" + s.key.key;
      s.xs = r.x_values;
      std::sort(s.xs.begin(), s.xs.end());
      s.xs.erase(std::unique(s.xs.begin(), s.xs.end()), s.xs.end());
      if (s.xs.front() < 1) throw std::runtime_error(r.x_name + " values must be >= 1");
      const int64_t lo = s.xs.front(), hi = s.xs.back();
      s.served = packages_on_disk(s.dir, s.xs);
      if (!s.served.empty()) {
        s.cached = true;
        continue;
      }
      {
        std::lock_guard<std::mutex> lock(mem.mu);
        for (int64_t x : s.xs) {
          auto it = mem.failed.find(point_signature(r.op, r.provider, r.params, r.x_name, x, r.device));
          if (it != mem.failed.end()) throw std::runtime_error(it->second);
        }
      }
      make_dirs(s.dir);
      const std::string key_file = s.dir + "/key.txt";
      if (!is_file(key_file)) write_file_atomic(key_file, s.key.canonical);
      Job job;
      job.request = i;
      job.lo = lo;
      job.hi = hi;
      job.xs = s.xs;
      job.dynamic = lo != hi;
      job.output = s.dir + "/" + (job.dynamic ? dyn_name(lo, hi) : static_name(lo));
      auto owner = job_owner.find(job.output);
      if (owner != job_owner.end()) {
        s.owner = owner->second;
        continue;
      }
      job_owner[job.output] = i;
      s.pending = 1;
      queue.push_back(job);
    } catch (const std::exception& e) {
      s.error = first_line(e.what());
    }
  }
  for (size_t i = 0; i < total; ++i)
    if (st[i].pending == 0 && st[i].owner == SIZE_MAX) finish(i);

  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::string> extra_env = {"PYTHONUNBUFFERED=1"};
  if (env("TORCHINDUCTOR_COMPILE_THREADS").empty())
    extra_env.push_back("TORCHINDUCTOR_COMPILE_THREADS=" +
                        std::to_string(std::max(1u, hw / static_cast<unsigned>(jobs))));
  const std::string py = python();
  const std::string script = source_dir() + "/" + kExporter;
  const double timeout = export_timeout();

  std::vector<Job> running;
  auto job_done = [&](const Job& job, const std::string& error) {
    RequestState& s = st[job.request];
    s.seconds = std::chrono::duration<double>(Clock::now() - s.first_start).count();
    if (!error.empty()) {
      if (s.error.empty()) s.error = error;
      s.export_failed = true;
    } else if (job.dynamic && is_file(job.output)) {
      for (int64_t x : job.xs) s.served[x] = job.output;
    } else if (job.dynamic) {
      // The exporter fell back to a static package at its example x: one per x value.
      for (int64_t x : job.xs) {
        const std::string p = s.dir + "/" + static_name(x);
        if (is_file(p)) {
          s.served[x] = p;
          continue;
        }
        Job sj;
        sj.request = job.request;
        sj.lo = sj.hi = x;
        sj.xs = {x};
        sj.output = p;
        ++s.pending;
        queue.push_back(sj);
      }
    } else if (is_file(job.output)) {
      s.served[job.lo] = job.output;
    } else if (s.error.empty()) {
      s.error = "the exporter succeeded but wrote no " + job.output;
      s.export_failed = true;
    }
    if (--s.pending == 0) finish(job.request);
  };

  while (!queue.empty() || !running.empty()) {
    while (!queue.empty() && static_cast<int>(running.size()) < jobs) {
      Job job = queue.front();
      queue.pop_front();
      RequestState& s = st[job.request];
      if (!s.error.empty()) {  // a sibling job already failed: start no more for it
        if (--s.pending == 0) finish(job.request);
        continue;
      }
      const CompileRequest& r = requests[job.request];
      const std::string base = job.output.substr(0, job.output.size() - 4);  // drop .pt2
      const std::string req_path = base + ".request.json";
      const std::string log_path = base + ".log";
      try {
        write_file_atomic(req_path, request_json(r, s.key, job.lo, job.hi, job.xs, job.output,
                                                 job.dynamic ? s.dir + "/static-{x}.pt2" : ""));
      } catch (const std::exception& e) {
        job_done(job, first_line(e.what()));
        continue;
      }
      if (!s.started) {
        s.started = true;
        s.first_start = Clock::now();
      }
      Spawned sp = spawn({py, script, req_path}, log_path, extra_env, /*own_group=*/true);
      if (sp.pid < 0) {
        job_done(job, sp.error);
        continue;
      }
      job.pid = sp.pid;
      job.started = Clock::now();
      running.push_back(job);
    }
    bool reaped = false;
    for (size_t k = 0; k < running.size();) {
      Job& job = running[k];
      int status = 0;
      pid_t r = ::waitpid(job.pid, &status, WNOHANG);
      if (r == 0 || (r < 0 && errno == EINTR)) {
        const double age = std::chrono::duration<double>(Clock::now() - job.started).count();
        if (r == 0 && timeout > 0 && age > timeout) {
          ::kill(-job.pid, SIGKILL);  // the exporter's process group (its compile workers)
          while (::waitpid(job.pid, &status, 0) < 0 && errno == EINTR) {
          }
          Job j = job;
          running.erase(running.begin() + static_cast<long>(k));
          reaped = true;
          char buf[64];
          std::snprintf(buf, sizeof buf, "%.0f", timeout);
          job_done(j, "export_aoti.py ran past $OPBENCH_EXPORT_TIMEOUT (" + std::string(buf) +
                          " s) and was killed");
          continue;
        }
        ++k;
        continue;
      }
      Job j = job;
      running.erase(running.begin() + static_cast<long>(k));
      reaped = true;
      std::string error;
      if (r < 0) {
        error = "lost the exporter process: " + std::string(std::strerror(errno));
      } else {
        const std::string why = exit_reason(status);
        if (!why.empty()) {
          const std::string base = j.output.substr(0, j.output.size() - 4);
          const std::string line = log_reason(read_file(base + ".log"));
          error = line.empty() ? "export_aoti.py " + why : line;
        }
      }
      job_done(j, error);
    }
    if (!reaped && !running.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return outcomes;
}

// ------------------------------------------------------------------------- providers

namespace {

std::string device_string(const at::Device& d) {
  if (d.is_cpu()) return "cpu";
  if (d.is_cuda()) return "cuda:" + std::to_string(d.has_index() ? d.index() : 0);
  return d.str();
}

// The package for one point: the one compile_packages assigned, else one on disk covering x,
// else a static export for this x (tens of seconds).
std::string package_for(const std::string& op, const std::string& provider, const Params& p,
                        const std::string& device) {
  Memory& mem = memory();
  const std::string x_name = default_x_name(op);
  const int64_t x = p.i(x_name);
  const std::string sig = point_signature(op, provider, p, x_name, x, device);
  {
    std::lock_guard<std::mutex> lock(mem.mu);
    auto it = mem.point_package.find(sig);
    if (it != mem.point_package.end() && is_file(it->second)) return it->second;
  }
  CompileRequest r{op, provider, p, x_name, {x}, device};
  const KeyInfo k = make_key(r);
  std::string path = find_package(cache_dir() + "/" + k.key, x);
  if (!path.empty()) return path;
  {
    std::lock_guard<std::mutex> lock(mem.mu);
    auto it = mem.failed.find(sig);
    if (it != mem.failed.end()) throw std::runtime_error(it->second);
  }
  std::vector<CompileOutcome> out = compile_packages({r}, 1, nullptr);
  if (!out.at(0).error.empty()) throw std::runtime_error(out[0].error);
  path = find_package(cache_dir() + "/" + k.key, x);
  if (path.empty()) throw std::runtime_error("torch_compile: no package for " + x_name + "=" +
                                             std::to_string(x) + " after the export");
  return path;
}

Provider make_provider(const std::string& op, const std::string& name, const std::string& help) {
  Provider pr;
  pr.op = op;
  pr.name = name;
  pr.help = help;
  pr.unavailable = [](const at::Device& d) { return compiled::unavailable(device_string(d)); };
  pr.prepare = [op, name](const Params& p, const Inputs& in) -> Call {
    const std::string mode = p.s("mode");
    if (mode != "fwd" && !(mode == "bwd" && op != "tpa_decode"))
      throw std::invalid_argument(op + ": " + name + " has no mode '" + mode + "'");
    if (in.tensors.empty()) throw std::invalid_argument(op + ": no inputs");
    // The package is compiled for the point's dtype and runs whatever it is given: check.
    const std::string& dtype = p.s("dtype");
    const at::ScalarType want = dtype == "bf16"   ? at::kBFloat16
                                : dtype == "fp16" ? at::kHalf
                                : dtype == "fp32" ? at::kFloat
                                                  : at::ScalarType::Undefined;
    if (in.tensors[0].scalar_type() != want)
      throw std::invalid_argument(op + ": " + name + " compiled for dtype " + dtype + " but got " +
                                  std::string(c10::toString(in.tensors[0].scalar_type())));
    const at::Device dev = in.tensors[0].device();
    const std::string device = device_string(dev);
    const std::string why = compiled::unavailable(device);
    if (!why.empty()) throw std::runtime_error(why);
    std::vector<at::Tensor> args;
    for (const at::Tensor& t : in.tensors) args.push_back(t.is_contiguous() ? t : t.contiguous());
    if (mode == "bwd") {
      if (!in.grad_out.defined()) throw std::invalid_argument(op + ": bwd needs grad_out");
      args.push_back(in.grad_out.is_contiguous() ? in.grad_out : in.grad_out.contiguous());
    }
    const std::string path = package_for(op, name, p, device);
    auto loader = load(path, dev.is_cuda() ? dev.index() : -1);
    return [loader, args]() -> std::vector<at::Tensor> {
      std::vector<at::Tensor> out = loader->run(args);
      if (out.size() != 1)
        throw std::runtime_error("torch_compile: the package returned " +
                                 std::to_string(out.size()) + " outputs, expected 1");
      return out;
    };
  };
  return pr;
}

}  // namespace

std::vector<Provider> compiled_providers() {
  const std::string aot = " (torch.export + AOTInductor package, run from C++)";
  return {
      make_provider("act", "torch_compile", "TorchInductor: the torch reference compiled" + aot),
      make_provider("lrpe_cosine", "torch_compile",
                    "TorchInductor: the torch reference compiled" + aot),
      make_provider("lrpe_rotate", "torch_compile",
                    "TorchInductor: the torch reference compiled" + aot),
      make_provider("lrpe_cosine_md", "torch_compile",
                    "TorchInductor: the torch reference compiled, dynamic over the tokens" + aot),
      make_provider("tpa_decode", "torch_compile",
                    "TorchInductor: the factorised torch reference compiled" + aot),
      make_provider("tpa_decode", "torch_naive_compile",
                    "TorchInductor: the naive form (materialises q, k, v) compiled" + aot),
  };
}

}  // namespace opbench

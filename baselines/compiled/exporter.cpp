// The exporter process and what its python can do (exporter.h).
#include "baselines/compiled/exporter.h"

#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <ATen/Parallel.h>
#include <torch/version.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "core/fs.hpp"
#include "core/hash.hpp"
#include "core/process.hpp"
#include "core/value_json.hpp"
#include "ops/op.hpp"

#ifndef OPBENCH_SOURCE_DIR
#define OPBENCH_SOURCE_DIR ""
#endif

namespace opbench::compiled {

namespace {

const char* const kExporter = "scripts/export_aoti.py";
const char* const kOps = "baselines/python/opbench_ops.py";

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// First non-blank line of a message, trimmed.
std::string first_text_line(const std::string& s) {
  std::istringstream in(s);
  std::string line;
  while (std::getline(in, line)) {
    const size_t a = line.find_first_not_of(" \t\r");
    if (a == std::string::npos) continue;
    return line.substr(a, line.find_last_not_of(" \t\r") - a + 1);
  }
  return s;
}

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

// Reads the probe script's output into `p`; returns its own error line, if any.
std::string read_probe(const std::string& out, Probe& p) {
  static const std::string kError = "opbench-probe: error: ";
  std::istringstream in(out);
  std::string line, error;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string word;
    ls >> word;
    if (word == "torch") {
      ls >> p.torch_version;
    } else if (word == "cuda") {
      int idx = -1;
      std::string cc;
      ls >> idx >> cc;
      p.cuda_cc[idx] = cc;
    } else if (word == "cuda-error") {
      p.cuda_error = first_text_line(line.substr(word.size()));
    } else if (line.rfind(kError, 0) == 0) {
      error = line.substr(kError.size());
    }
  }
  return error;
}

std::string strip_local(const std::string& version) {  // 2.11.0+cu130 -> 2.11.0
  return version.substr(0, version.find('+'));
}

std::string cpu_model() {
  static const std::string model = [] {
    std::string info;
    if (fs::read_file("/proc/cpuinfo", &info)) {
      std::istringstream in(info);
      for (std::string line; std::getline(in, line);)
        if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos)
          return first_text_line(line.substr(line.find(':') + 1));
    }
    struct utsname u;
    return ::uname(&u) == 0 ? std::string(u.machine) : std::string("unknown");
  }();
  return model;
}

// ------------------------------------------------------------------ the request

using json = nlohmann::ordered_json;

using Shapes = std::vector<std::pair<std::string, std::vector<int64_t>>>;  // point label -> shape

// One argument of the exported function: its shape at each point and the dimensions that change.
json argument(const std::string& name, const std::string& dtype, const char* fill, const Shapes& shapes) {
  json at = json::object();
  for (const auto& [label, shape] : shapes) at[label] = shape;
  json dynamic = json::array();
  const std::vector<int64_t>& first = shapes.front().second;
  for (size_t d = 0; d < first.size(); ++d)
    for (const auto& s : shapes)
      if (s.second.size() != first.size() || s.second[d] != first[d]) {
        dynamic.push_back(d);
        break;
      }
  return {{"name", name}, {"dtype", dtype}, {"fill", fill}, {"shapes", at}, {"dynamic", dynamic}};
}

// A point's label in the request: x, then each shared axis's value ("256", "256,8").
std::string label(int64_t x, const SharedPoint& point) {
  std::string s = std::to_string(x);
  for (const auto& [axis, v] : point) s += "," + std::to_string(v);
  return s;
}

// The function's arguments from the OpSpec: its inputs, then grad_out for bwd.
json arguments(const OpSpec& op, const CompileRequest& r, const ExportJob& job) {
  const std::string dtype = r.params.s("dtype"), mode = r.params.s("mode");
  std::vector<Shapes> shapes;
  std::vector<TensorSpec> specs;
  Shapes out_shapes;
  for (const SharedPoint& point : combinations(job.shared))
    for (int64_t x : job.xs) {
      Params p = r.params;
      p.set(r.x_name, x);
      for (const auto& [axis, v] : point) p.set(axis, v);
      p = op.with_defaults(p);
      specs = op.inputs(p);
      shapes.resize(specs.size());
      for (size_t i = 0; i < specs.size(); ++i) shapes[i].emplace_back(label(x, point), specs[i].shape);
      if (mode == "bwd") out_shapes.emplace_back(label(x, point), op.output_shape(p));
    }
  json args = json::array();
  for (size_t i = 0; i < specs.size(); ++i)
    args.push_back(argument(specs[i].name, specs[i].storage_dtype ? dtype : "fp32", fill_name(specs[i].fill), shapes[i]));
  if (mode == "bwd") args.push_back(argument("grad_out", dtype, fill_name(Fill::Normal), out_shapes));
  return args;
}

// The shared axes of a job: [{name, min, max, values}].
json shared_json(const ExportJob& job) {
  json out = json::array();
  for (const auto& [axis, values] : job.shared)
    out.push_back({{"name", axis}, {"min", values.front()}, {"max", values.back()}, {"step", step_of(values)},
                   {"values", values}});
  return out;
}

}  // namespace

// ------------------------------------------------------------------ environment

std::string source_dir() {
  std::string s = env("OPBENCH_SOURCE_DIR");
  return s.empty() ? std::string(OPBENCH_SOURCE_DIR) : s;
}

std::string python() {
  std::string s = env("OPBENCH_PYTHON");
  if (!s.empty()) return s;
  std::string venv = source_dir() + "/.venv/bin/python";
  if (!source_dir().empty() && ::access(venv.c_str(), X_OK) == 0) return venv;
  return "python3";
}

namespace {

const char* const kFindTorch =
    "import importlib.util as u\n"
    "s = u.find_spec('torch')\n"
    "print(s.origin if s and s.origin else '')\n";

// "size mtime inode" of a file, "" when it cannot be read.
std::string stat_text(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "";
  return std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec) + " " + std::to_string(st.st_ino);
}

// The torch package a python imports, found without importing it: a virtual environment's
// own, else where the python's import system finds it. "" when it has none.
std::string torch_dir(const std::string& python) {
  const size_t slash = python.rfind('/');
  const std::string prefix = slash == std::string::npos ? "" : python.substr(0, slash) + "/..";
  if (!prefix.empty() && fs::exists(prefix + "/pyvenv.cfg"))
    for (const auto& name : fs::list_dir(prefix + "/lib"))
      if (name.rfind("python", 0) == 0 && fs::exists(prefix + "/lib/" + name + "/site-packages/torch/version.py"))
        return fs::resolved(prefix + "/lib/" + name + "/site-packages/torch");
  std::string out;
  if (!process::run_capture({python, "-c", kFindTorch}, out).empty()) return "";
  const std::string init = first_text_line(out);
  return init.size() > 12 ? init.substr(0, init.size() - 12) : "";  // less "/__init__.py"
}

// What the probe's answer depends on, hashed: the python, the torch it imports, the devices it
// may see (the environment that picks them, the driver, this boot). "" when that cannot be
// told (the probe then runs, and is not kept).
std::string probe_key(const std::string& python) {
  const std::string torch = torch_dir(python);
  if (torch.empty()) return "";
  std::string key = std::string("opbench-probe-v1\n") + kProbeScript + "\npython=" + python + " " +
                    fs::resolved(python) + " " + stat_text(fs::resolved(python)) + "\ntorch=" + torch + " " +
                    stat_text(torch + "/__init__.py") + " " + stat_text(torch + "/version.py");
  for (const char* v : {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "PYTHONPATH", "PYTHONHOME", "LD_LIBRARY_PATH"})
    key += std::string("\n") + v + "=" + env(v);
  std::string boot, driver;
  fs::read_file("/proc/sys/kernel/random/boot_id", &boot);
  fs::read_file("/proc/driver/nvidia/version", &driver);
  return content_hash(key + "\nboot=" + boot + "\ndriver=" + driver);
}

const char* const kStatus = "opbench-probe-status: ";

// The probe's output and how it ended, from the cache; false when it holds none.
bool cached_probe(const std::string& file, std::string& out, std::string& why) {
  std::string text;
  if (file.empty() || !fs::read_file(file, &text)) return false;
  const size_t at = text.rfind(kStatus);
  if (at == std::string::npos) return false;
  out = text.substr(0, at);
  why = first_text_line(text.substr(at + std::strlen(kStatus)));
  if (why == "ok") why.clear();
  return true;
}

// Runs the probe; its answer is kept unless a signal ended it (an interrupted start-up).
void run_probe(const std::string& python, const std::string& file, std::string& out, std::string& why) {
  why = process::run_capture({python, "-c", kProbeScript}, out);
  if (file.empty() || why.find("signal") != std::string::npos) return;
  try {
    fs::make_dirs(cache_dir());
    fs::write_file(file, out + kStatus + (why.empty() ? "ok" : why) + "\n");
  } catch (const std::exception&) {
    // an unwritable cache: the next process asks python again
  }
}

}  // namespace

const Probe& probe(const std::string& python) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<Probe>> probes;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = probes[python];
  if (slot) return *slot;
  slot = std::make_unique<Probe>();
  const std::string key = probe_key(python);
  const std::string file = key.empty() ? "" : cache_dir() + "/probe-" + key + ".txt";
  std::string out, why;
  if (!cached_probe(file, out, why)) run_probe(python, file, out, why);
  const std::string probe_error = read_probe(out, *slot);
  if (!why.empty() || slot->torch_version.empty()) {
    std::string detail = !probe_error.empty() ? probe_error : why;
    if (detail.empty()) detail = "printed no torch version";
    if (why.find("cannot run") == 0 || why.find("status 127") != std::string::npos)
      detail = why + (out.empty() ? "" : ": " + first_text_line(out));
    slot->error = "python '" + python + "' is not usable for torch_compile: " + detail;
  }
  return *slot;
}

std::pair<std::string, int> parse_device(const std::string& device) {
  if (device == "cpu") return {"cpu", -1};
  if (device == "cuda") return {"cuda", 0};
  if (device.rfind("cuda:", 0) == 0) {
    const std::string idx = device.substr(5);
    if (!idx.empty() && std::all_of(idx.begin(), idx.end(), ::isdigit)) return {"cuda", std::stoi(idx)};
  }
  throw std::runtime_error("torch_compile: unsupported device '" + device + "' (cpu, cuda, cuda:N)");
}

std::string normalize_device(const std::string& device) {
  auto [type, index] = parse_device(device);
  return type == "cpu" ? type : type + ":" + std::to_string(index);
}

std::string device_signature(const std::string& device) {
  auto [type, index] = parse_device(device);
  // A CPU package runs with the thread count it was exported with (Inductor writes it in).
  if (type == "cpu") return "cpu " + cpu_model() + " threads " + std::to_string(at::get_num_threads());
  const Probe& pr = probe(python());
  auto it = pr.cuda_cc.find(index);
  if (it == pr.cuda_cc.end())
    throw std::runtime_error("torch_compile: python torch sees no CUDA device " + std::to_string(index));
  std::string cc = it->second;
  cc.erase(std::remove(cc.begin(), cc.end(), '.'), cc.end());
  return "cuda sm_" + cc;
}

std::string sources_hash() {
  static std::once_flag once;
  static std::string hash;
  std::call_once(once, [] {
    std::string all = "opbench-aoti-v1";
    for (const char* f : {kExporter, kOps}) {
      std::string text;
      fs::read_file(source_dir() + "/" + f, &text);
      all += f + text;
    }
    hash = content_hash(all);
  });
  return hash;
}

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
    const std::string path = source_dir() + "/" + f;
    if (::access(path.c_str(), R_OK) != 0) return "torch_compile: " + path + " is missing";
  }
  const Probe& pr = probe(python());
  if (!pr.error.empty()) return pr.error;
  if (strip_local(pr.torch_version) != strip_local(TORCH_VERSION))
    return "torch_compile: python '" + python() + "' has torch " + pr.torch_version +
           " but opbench links LibTorch " + TORCH_VERSION;
  if (dev.first == "cuda" && pr.cuda_cc.count(dev.second) == 0)
    return "torch_compile: python '" + python() + "' (torch " + pr.torch_version + ") sees no CUDA device " +
           std::to_string(dev.second) + (pr.cuda_error.empty() ? "" : " (" + pr.cuda_error + ")");
  return "";
}

// ------------------------------------------------------------------ one export

std::string eager_variant(const std::string& provider) {
  static const std::string kSuffix = "_compile";
  if (provider.size() <= kSuffix.size() || provider.compare(provider.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0)
    return "";
  return provider.substr(0, provider.size() - kSuffix.size());
}

std::vector<SharedPoint> combinations(const std::map<std::string, std::vector<int64_t>>& shared) {
  std::vector<SharedPoint> out(1);
  for (const auto& [axis, values] : shared) {
    std::vector<SharedPoint> next;
    for (const SharedPoint& p : out)
      for (int64_t v : values) {
        next.push_back(p);
        next.back()[axis] = v;
      }
    out = std::move(next);
  }
  return out;
}

std::string request_json(const CompileRequest& r, const std::string& key, const ExportJob& job) {
  const OpSpec* op = find_op(r.op);
  if (!op) throw std::runtime_error("unknown op '" + r.op + "'");
  if (eager_variant(r.provider).empty()) throw std::runtime_error("'" + r.provider + "' is not a compiled provider");
  json params = json::object();
  for (const auto& [name, value] : r.params.values())
    if (name != r.x_name && name != "metric" && !job.shared.count(name)) params[name] = value_json(value);
  json j = {{"op", r.op},
            {"variant", eager_variant(r.provider)},
            {"provider", r.provider},
            {"mode", r.params.s("mode")},
            {"modes", op->modes},
            {"dtype", r.params.s("dtype")},
            {"device", r.device},
            {"params", params},
            {"x_name", r.x_name},
            {"x_min", job.lo},
            {"x_max", job.hi},
            {"x_step", step_of(job.xs)},
            {"x_values", job.xs},
            {"shared", shared_json(job)},
            {"args", arguments(*op, r, job)},
            {"output", job.output}};
  if (!job.static_output.empty()) j["static_output"] = job.static_output;
  j["metadata"] = {{"opbench_key", key}};
  return j.dump(2) + "\n";
}

Started start_export(const std::string& request_path, const std::string& log_path, int parallel_jobs) {
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::string> extra_env = {"PYTHONUNBUFFERED=1"};
  if (env("TORCHINDUCTOR_COMPILE_THREADS").empty())
    extra_env.push_back("TORCHINDUCTOR_COMPILE_THREADS=" +
                        std::to_string(std::max(1u, hw / static_cast<unsigned>(std::max(1, parallel_jobs)))));
  const process::Spawned s = process::spawn({python(), source_dir() + "/" + kExporter, request_path}, log_path,
                                            extra_env, /*own_group=*/true);
  return {s.pid, s.error};
}

std::string export_error(int wait_status, const std::string& log_path) {
  const std::string how = process::exit_reason(wait_status);
  if (how.empty()) return "";
  static const std::string kErr = "opbench-export: error: ";
  std::string log, err, last;
  fs::read_file(log_path, &log);
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    const std::string t = first_text_line(line);
    if (t.empty()) continue;
    const size_t p = t.find(kErr);
    if (p != std::string::npos) err = t.substr(p + kErr.size());
    const bool warning = t.find("Warning") != std::string::npos || t.find("warn(") != std::string::npos ||
                         t.rfind("return cls.__new__", 0) == 0 ||
                         (t.size() > 5 && t[0] == 'W' && std::isdigit(static_cast<unsigned char>(t[1])));
    if (!warning) last = t;
  }
  if (!err.empty()) return err;
  return last.empty() ? "export_aoti.py " + how : last;
}

double export_timeout() {
  const std::string s = env("OPBENCH_EXPORT_TIMEOUT");
  if (s.empty()) return 1800;
  try {
    return std::stod(s);
  } catch (const std::exception&) {
    return 1800;
  }
}

void ExportStages::add(const ExportStages& o) {
  if (!o.known) return;
  isa_s += o.isa_s, export_s += o.export_s, inductor_s += o.inductor_s, cpp_s += o.cpp_s, triton_s += o.triton_s;
  check_s += o.check_s;
  known = true;
}

std::string ExportStages::words(double wall_s) const {
  if (!known) return "";
  char buf[360];
  const double rest = std::max(0.0, inductor_s - cpp_s - triton_s);
  const double start = std::max(0.0, wall_s - isa_s - export_s - inductor_s - check_s);
  std::snprintf(buf, sizeof buf,
                "start %.1f s, ISA checks %.1f s, export %.1f s, AOTInductor %.1f s (C++ compile and link %.1f s, "
                "Triton compile and autotune %.1f s, lowering, code generation and packaging %.1f s), check %.1f s",
                start, isa_s, export_s, inductor_s, cpp_s, triton_s, rest, check_s);
  return buf;
}

ExportStages read_stages(const std::string& package_path) {
  ExportStages st;
  std::string text;
  const std::string path = package_path.substr(0, package_path.size() - 4) + ".stages.json";  // drop .pt2
  if (!fs::is_regular_file(path) || !fs::read_file(path, &text)) return st;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return st;
  auto field = [&](const char* k) { return j.contains(k) && j[k].is_number() ? j[k].get<double>() : 0.0; };
  st.isa_s = field("isa_s"), st.export_s = field("export_s"), st.inductor_s = field("inductor_s");
  st.cpp_s = field("cpp_s");
  st.triton_s = field("triton_s"), st.check_s = field("check_s");
  st.known = j.contains("inductor_s");
  return st;
}

}  // namespace opbench::compiled

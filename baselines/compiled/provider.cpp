// The compiled providers: for every op whose OpSpec declares a provider NAME_compile, the
// op's NAME function (baselines/python/opbench_ops.py) exported and compiled ahead of time,
// loaded with AOTIModelPackageLoader and run from C++. Registered here; their table work
// builds each table's package before timing (compile_packages).
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "baselines/compiled/compiled.h"
#include "baselines/compiled/exporter.h"
#include "baselines/compiled/package_cache.h"
#include "core/fs.hpp"
#include "core/text.hpp"
#include "ops/op.hpp"

namespace opbench {

namespace {

using namespace compiled;
using Loader = torch::inductor::AOTIModelPackageLoader;


std::string device_string(const at::Device& d) {
  if (d.is_cpu()) return "cpu";
  if (d.is_cuda()) return "cuda:" + std::to_string(d.has_index() ? d.index() : 0);
  return d.str();
}

// Loaders by package path. A package serves every round of its table, and loading it (unzip,
// dlopen, the runner) costs more than a short call's whole round: the last kKeptLoaders used stay
// loaded for the process, beside those some Call still holds.
constexpr size_t kKeptLoaders = 16;

std::shared_ptr<Loader> load(const std::string& path, int device_index) {
  static std::mutex mu;
  static std::map<std::pair<std::string, int>, std::weak_ptr<Loader>> loaders;
  static std::deque<std::shared_ptr<Loader>> kept;  // most recently used last
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = loaders[{path, device_index}];
  std::shared_ptr<Loader> loader = slot.lock();
  if (!loader) {
    try {
      loader = std::make_shared<Loader>(path, "model", /*run_single_threaded=*/false, /*num_runners=*/1,
                                        static_cast<c10::DeviceIndex>(device_index));
    } catch (const std::exception& e) {
      throw std::runtime_error("torch_compile: cannot load " + path + ": " + first_line(e.what()));
    }
    slot = loader;
  }
  kept.erase(std::remove(kept.begin(), kept.end(), loader), kept.end());
  kept.push_back(loader);
  if (kept.size() > kKeptLoaders) kept.pop_front();
  return loader;
}

// The package for one point (x, and `point` its shared axes' values): the one its table's
// build assigned, else one on disk covering both, else a static export for this x (tens of
// seconds).
std::string package_for(const CompileRequest& r, int64_t x, const SharedPoint& point) {
  const std::string sig = point_signature(r, x);
  const std::string assigned = PackageMemory::get().package_of(sig);
  if (!assigned.empty() && fs::is_regular_file(assigned)) return assigned;
  const std::string dir = package_dir(make_key(r));
  std::string path = find_package(dir, x, point);
  if (!path.empty()) return path;
  const std::string failure = PackageMemory::get().failure_of(sig);
  if (!failure.empty()) throw std::runtime_error(failure);
  const std::vector<CompileOutcome> out = compile_packages({r}, 1, nullptr);
  if (!out.at(0).error.empty()) throw std::runtime_error(out[0].error);
  path = find_package(dir, x, point);
  if (path.empty())
    throw std::runtime_error(r.provider + ": no package for " + r.x_name + "=" + std::to_string(x) + " after the export");
  return path;
}

// The loader of the package for one point, its metadata checked to cover the point.
std::shared_ptr<Loader> loader_for(const OpSpec& op, const std::string& provider, const Params& p,
                                   const std::string& device, int device_index) {
  CompileRequest r{op.name, provider, p, op.x_axes.front(), {}, device};
  const int64_t x = p.i(r.x_name);
  r.x_values = {x};
  const SharedPoint point = shared_point(r);
  const std::string path = package_for(r, x, point);
  auto loader = load(path, device_index);
  std::map<std::string, std::string> meta;
  for (const auto& [k, v] : loader->get_metadata()) meta[k] = v;
  const std::string why = serve_error(meta, path, p, point);
  if (!why.empty()) throw std::runtime_error(provider + ": " + why);
  return loader;
}

at::Tensor contiguous(const at::Tensor& t) { return t.is_contiguous() ? t : t.contiguous(); }

// The package's arguments for a point: the inputs, then grad_out for bwd; checked against
// what the package was compiled for.
std::vector<at::Tensor> arguments(const OpSpec& op, const std::string& name, const Params& p, const Inputs& in) {
  const std::string mode = p.s("mode");
  if (std::find(op.modes.begin(), op.modes.end(), mode) == op.modes.end())
    throw std::invalid_argument(op.name + ": " + name + " has no mode '" + mode + "'");
  if (in.tensors.empty()) throw std::invalid_argument(op.name + ": no inputs");
  const std::string& dtype = p.s("dtype");
  const at::ScalarType want = dtype == "bf16" ? at::kBFloat16 : dtype == "fp16" ? at::kHalf
                              : dtype == "fp32" ? at::kFloat : at::ScalarType::Undefined;
  if (in.tensors[0].scalar_type() != want)
    throw std::invalid_argument(op.name + ": " + name + " compiled for dtype " + dtype + " but got " +
                                std::string(c10::toString(in.tensors[0].scalar_type())));
  std::vector<at::Tensor> args;
  for (const at::Tensor& t : in.tensors) args.push_back(contiguous(t));
  if (mode == "bwd") {
    if (!in.grad_out.defined()) throw std::invalid_argument(op.name + ": bwd needs grad_out");
    args.push_back(contiguous(in.grad_out));
  }
  return args;
}

Provider make_provider(const OpSpec& op, const std::string& name, const std::string& help,
                       const std::shared_ptr<TableWork>& work) {
  Provider pr;
  pr.op = op.name;
  pr.name = name;
  pr.help = help;
  pr.unavailable = [](const at::Device& d) { return compiled::unavailable(device_string(d)); };
  pr.table_work = work;
  pr.prepare = [&op, name](const Params& p, const Inputs& in) -> Call {
    std::vector<at::Tensor> args = arguments(op, name, p, in);
    const at::Device dev = in.tensors[0].device();
    const std::string why = compiled::unavailable(device_string(dev));
    if (!why.empty()) throw std::runtime_error(why);
    auto loader = loader_for(op, name, p, device_string(dev), dev.is_cuda() ? dev.index() : -1);
    return [loader, args, name]() -> std::vector<at::Tensor> {
      std::vector<at::Tensor> out = loader->run(args);
      if (out.size() != 1)
        throw std::runtime_error(name + ": the package returned " + std::to_string(out.size()) + " outputs, expected 1");
      return out;
    };
  };
  return pr;
}

// The table work of every compiled provider: its tables' packages, built in parallel.
class PackageWork final : public TableWork {
 public:
  std::string what() const override { return "AOTInductor packages"; }
  std::string unavailable(const std::string& device) override { return compiled::unavailable(device); }
  bool ready(const TableTask& t) override {
    if (!compiled::unavailable(t.device).empty()) return false;
    CompileRequest r = request(t);
    r.device = normalize_device(r.device);
    const std::vector<int64_t> xs = distinct_sorted(r.x_values);
    return !xs.empty() && !cached_packages(package_dir(make_key(r)), xs, shared_point(r)).empty();
  }
  std::vector<TableOutcome> run(const std::vector<TableTask>& tasks, int jobs, const TableProgress& progress) override {
    std::vector<CompileRequest> requests;
    for (const auto& t : tasks) requests.push_back(request(t));
    return compile_packages(requests, jobs, progress);
  }

 private:
  static CompileRequest request(const TableTask& t) {
    return {t.op, t.provider, t.params, t.x_name, t.x_values, t.device};
  }
};

// Every NAME_compile an OpSpec declares.
std::vector<Provider> compiled_providers() {
  auto work = std::make_shared<PackageWork>();
  std::vector<Provider> out;
  for (const OpSpec* op : all_ops())
    for (const auto& [name, help] : op->providers) {
      if (!eager_variant(name).empty()) out.push_back(make_provider(*op, name, help, work));
    }
  return out;
}

const ProviderRegistration registration(compiled_providers);

}  // namespace

}  // namespace opbench

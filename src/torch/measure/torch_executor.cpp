#include "torch/measure/torch_executor.hpp"

#include <c10/util/Exception.h>
#include <fcntl.h>
#include <sys/file.h>
#include <torch/headeronly/version.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/hash.hpp"
#include "measure/stages.hpp"
#include "ops/op.hpp"

#ifdef OPBENCH_TORCH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime_api.h>
#endif

namespace opbench {

at::ScalarType scalar_type(const std::string& dtype) {
  if (dtype == "bf16") return at::kBFloat16;
  if (dtype == "fp16") return at::kHalf;
  if (dtype == "fp32") return at::kFloat;
  throw std::invalid_argument("unknown dtype '" + dtype + "'");
}

TorchExecutor::TorchExecutor(const std::string& device)
    : device_(open_device(device)), spacer_rng_(std::random_device()()), plants_(plants_from_environment()) {}

// The tuning variables the built providers declare, and the plants (torch_plant.hpp), that are
// set in the environment, by name.
static std::vector<std::pair<std::string, std::string>> tuning_settings() {
  std::set<std::string> names = {kPlantVariable};
  for (const auto& p : all_providers()) names.insert(p.tuning_env.begin(), p.tuning_env.end());
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& n : names)
    if (const char* v = std::getenv(n.c_str())) out.emplace_back(n, v);
  return out;
}

namespace {

// The device's bandwidth probe, one process of this host at a time (an exclusive lock on a
// file named for the device, in $TMPDIR or /tmp): workers that start side by side (ab's four a
// side on one GPU, a sweep's round processes) would otherwise copy at once and each measure a
// share of the peak. Without the lock (the file cannot be opened) it probes all the same.
double bandwidth_alone(Device& device, const Environment& env) {
  std::string name = env.identity.uuid.empty() ? env.device : env.identity.uuid;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') c = '_';
  const std::string path = fs::temp_folder() + "/opbench-bandwidth-" + name + ".lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd >= 0)
    while (::flock(fd, LOCK_EX) != 0 && errno == EINTR) {
    }
  const double gbps = device.measure_bandwidth();
  if (fd >= 0) ::close(fd);  // and the lock with it
  return gbps;
}

}  // namespace

Environment TorchExecutor::environment() {
  if (!env_) {
    env_ = device_->describe();
    env_->torch_version = TORCH_VERSION;
    {
      StageScope probing(Stage::bandwidth);
      env_->peak_gbps = bandwidth_alone(*device_, *env_);
    }
    env_->state = device_state();  // right after the copy: the clocks under load
    env_->tuning = tuning_settings();
  }
  return *env_;
}

// How often the calibration's micro-suite runs between measures: about 5 ms every 2 s, a
// quarter of a percent of a run's time, and dozens of passes over a suite of a minute.
constexpr double kCalibrateEverySeconds = 2.0;

void TorchExecutor::calibrate_when_due() {
  if (!calibrates_) return;
  const auto now = std::chrono::steady_clock::now();
  if (calibrated_at_ && std::chrono::duration<double>(now - *calibrated_at_).count() < kCalibrateEverySeconds) return;
  StageScope calibrating(Stage::calibration);
  calibrated_at_ = now;
  if (const auto pass = device_->calibrate()) calibration_.push_back(*pass);
}

std::vector<CalibrationSample> TorchExecutor::take_calibration() {
  std::vector<CalibrationSample> out;
  out.swap(calibration_);
  return out;
}

DeviceState TorchExecutor::device_state() {
  StageScope reading(Stage::gpu_state);
  return device_->state();
}

std::string TorchExecutor::unavailable(const std::string& op, const std::string& provider) {
  const Provider* p = find_provider(op, provider);
  if (!p) {
    if (provider.rfind("cuda", 0) == 0)
      return "not built (our CUDA kernels need nvcc and a CUDA LibTorch at configure time: -DOPBENCH_CUDA=ON)";
    return "not built into this opbench";
  }
  return p->unavailable ? p->unavailable(device_->torch_device()) : "";
}

static void fill(at::Tensor& t, Fill how) {
  if (how == Fill::Theta) {
    // Rotary-style frequencies 10000^(-k / K) along the last dim, the same for every head.
    int64_t K = t.size(-1);
    at::Tensor k = at::arange(K, t.options().dtype(at::kFloat));
    t.copy_(at::pow(10000.0, -k / double(std::max<int64_t>(K, 1))).expand_as(t));
  } else if (how == Fill::Uniform01) {
    t.uniform_(0, 1);
  } else {
    t.normal_();
  }
}

static void release_cached_memory() {
#ifdef OPBENCH_TORCH_CUDA
  c10::cuda::CUDACachingAllocator::emptyCache();
#endif
}

// The caching allocator's idle blocks go back to the device when less than this part of it is
// free: eight processes taking turns on one H200 each kept what their largest point had needed
// and the memory points of the last config ran out of memory.
constexpr size_t kYieldWhenFreeBelow = 2;  // a half

void TorchExecutor::yield_memory() {
#ifdef OPBENCH_TORCH_CUDA
  if (!device_->torch_device().is_cuda()) return;
  size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) != cudaSuccess) return;
  if (free < total / kYieldWhenFreeBelow) release_cached_memory();
#endif
}

// The table cell a point belongs to, as its inputs know it: the op and every parameter but the
// metric (a cell's speed and memory points share their inputs' values).
static std::string cell_key(const Point& point) {
  Params key_params = point.params;
  key_params.erase("metric");
  std::string key = point.op;
  for (const auto& [k, v] : key_params.values()) key += "|" + k + "=" + to_string(v);
  return key;
}

const Inputs& TorchExecutor::inputs_for(const Point& point) {
  const std::string key = cell_key(point);
  if (key != inputs_key_) kept_.clear();  // the calls kept belong to the cell of the inputs held
  if (key == inputs_key_ && !new_inputs_) return inputs_;
  // A new round of the same cell: the copies are made while the old tensors still hold their
  // memory, so they land elsewhere (same seed, same values); if that runs out of memory, the
  // old ones go first. Otherwise the last point's tensors are freed first.
  Inputs old;
  if (key == inputs_key_) old = std::move(inputs_);
  inputs_ = Inputs();
  inputs_key_.clear();
  new_inputs_ = false;
  const OpSpec* op = find_op(point.op);
  auto opts = at::TensorOptions().device(device_->torch_device());
  at::ScalarType st = scalar_type(point.params.s("dtype"));
  auto make = [&] {
    inputs_ = Inputs();
    at::manual_seed(std::stoull(content_hash(key), nullptr, 16) & 0x7fffffffffffull);
    for (const auto& spec : op->inputs(point.params)) {
      at::Tensor t = at::empty(spec.shape, opts.dtype(spec.storage_dtype ? st : at::kFloat));
      fill(t, spec.fill);
      inputs_.tensors.push_back(t);
    }
    if (point.params.s("mode") == "bwd") {
      inputs_.grad_out = at::empty(op->output_shape(point.params), opts.dtype(st));
      inputs_.grad_out.normal_();
    }
  };
  try {
    make();
  } catch (const c10::OutOfMemoryError&) {
    if (old.tensors.empty()) throw;
    old = Inputs();
    release_cached_memory();
    make();
  }
  device_->synchronize();
  inputs_key_ = key;
  return inputs_;
}

void TorchExecutor::new_round() {
  StageScope placing(Stage::placement);
  try {
    device_->new_flush_buffer();
  } catch (const std::exception&) {
    // A device that cannot free its old buffer fails the next measures with the reason.
  }
  new_inputs_ = true;
}

// A spacer held on the device while a speed point is prepared and measured: 0 to 62 MiB in
// 2 MiB steps, drawn anew for every measure, so what the provider allocates (torch's saved
// forward output, each call's output) moves between rounds. Without it the caching allocator
// gave a provider the same relative places in every round of a cell, and a placement that
// favoured one provider counted as often as there were rounds: one ATen kernel on two tensor
// pairs differed by 0.3-1.0 us in seven of eight rounds of a cell (act sigmoid backward,
// n = 512, H100; docs/findings/2026-11-25-round-evidence-h100.md).
static at::Tensor placement_spacer(std::mt19937_64& rng, const at::TensorOptions& opts) {
  const int64_t steps = int64_t(rng() % 32);
  return at::empty({steps << 21}, opts.dtype(at::kByte));
}

ControlWorkload& TorchExecutor::control_for(double bytes) {
  if (!control_ || control_->elements() != ControlWorkload::elements_for(bytes)) control_.emplace(bytes);
  return *control_;
}

TorchExecutor::Placed TorchExecutor::place(const Point& point, const Provider& provider) {
  StageScope placing(Stage::placement);
  Placed placed;
  placed.inputs = &inputs_for(point);
  // (speed points only: a memory point's peak counts every allocation)
  if (point.metric() == "speed")
    placed.spacer = placement_spacer(spacer_rng_, at::TensorOptions().device(device_->torch_device()));
  placed.call = planted(plants_, point.provider, provider.prepare(point.params, *placed.inputs),
                        !device_->torch_device().is_cpu());
  device_->synchronize();  // what prepare queued (a backward's forward pass) is placement's time
  return placed;
}

// A point is placed anew in every round, unless its call takes kKeepPlacedMs or more: such a
// call keeps its placed call (its inputs, a backward's forward pass) from its first round to its
// last. Placement moves a call by tenths of a microsecond (docs/measurement.md, the round as the
// unit of evidence), under a tenth of the noise target at a millisecond, while placing anew costs
// a long backward a forward pass as long as the call in every round.
static constexpr double kKeepPlacedMs = 1.0;

const Call* TorchExecutor::kept_call(const Point& point, const Timing& timing) const {
  if (point.metric() != "speed" || !(timing.estimate_ms >= kKeepPlacedMs) || inputs_key_ != cell_key(point))
    return nullptr;
  const auto it = kept_.find(point.provider);
  return it == kept_.end() ? nullptr : &it->second;
}

// (Right after the point was placed: the inputs held are its cell's.)
void TorchExecutor::keep(const Point& point, const Call& call, const Result& r) {
  if (point.metric() == "speed" && r.estimate_ms >= kKeepPlacedMs) kept_[point.provider] = call;
}

TorchExecutor::Placed TorchExecutor::place_or_free(const Point& point, const Provider& provider) {
  try {
    return place(point, provider);
  } catch (const c10::OutOfMemoryError&) {
    if (kept_.empty()) throw;
    kept_.clear();  // the calls kept by the cell's other providers go first
    release_cached_memory();
    return place(point, provider);
  }
}

bool TorchExecutor::check_against_truth(const Point& point, const Placed& placed, bool check, Result& r) {
  // Speed points; once per cell and provider (a cell's first round: Timing::check): a later
  // round's inputs hold the same values.
  bool called = false;
  if (check) {
    StageScope checking(Stage::check);
    called = check_.check(point, inputs_key_, *placed.inputs, device_->torch_device(), placed.call,
                          !alters_output(plants_, point.provider), r);
  }
  device_->synchronize();
  return called;
}

void TorchExecutor::measure_peak_memory(const Call& call, Result& r) {
  StageScope measuring(Stage::memory);
  int64_t peak = device_->peak_bytes([&] { call(); });
  r.samples = {double(peak) / double(1 << 20)};
}

void TorchExecutor::measure_time(const Point& point, const Call& call, const Timing& timing, bool warm, Result& r) {
  auto clock = device_->clock(timing.flush_l2);
  auto bench = [&] {
    BenchRound round = bench_round(*clock, [&] { call(); }, timing, warm);
    r.samples = std::move(round.samples);
    r.estimate_ms = round.estimate_ms;
    r.host_share = round.host_share;
  };
  if (device_->torch_device().is_cpu()) {
    r.control = {control_for(r.bytes).around(*clock, bench)};
    return;
  }
  bench();
  const double stretch = planted_stretch(plants_, point.provider);  // a GPU's slow plant
  if (stretch != 1)
    for (double& s : r.samples) s *= stretch;
}

// A speed point's bandwidth from its median, and its share of the device's peak.
static void add_bandwidth(double peak_gbps, Result& r) {
  r.gbps = r.bytes / (r.stats.median * 1e-3) / 1e9;
  r.pct_peak = peak_gbps > 0 ? 100.0 * r.gbps / peak_gbps : 0;
}

// Nothing held on the device but what outlives points (the flush buffer), and the caching
// allocator's idle blocks given back.
void TorchExecutor::hold_nothing() {
  inputs_ = Inputs();
  inputs_key_.clear();
  kept_.clear();
  check_.release();
  control_.reset();
  release_cached_memory();
}

void TorchExecutor::forget_failed_point(Result& r) {
  r.samples.clear();
  r.control.clear();
  r.stats = Stats();
  hold_nothing();
}

void TorchExecutor::measure_placed(const Point& point, const Provider& provider, const Timing& timing, Result& r) {
  if (point.metric() == "memory") {
    // A memory point's peak counts everything held (so not the truth of a check, nor the
    // control workload's tensor), each block at the size the caching allocator handed out: a
    // request it serves from an idle block at most 1 MiB larger keeps the whole block, so what
    // earlier points left idle moved one call's peak by 1 MiB (9.4 MB of inputs read 10 MiB).
    // From an empty cache, with the point's inputs made anew, its blocks are what a fresh
    // process gets. (Memory points are not checked: their cell's speed points are.)
    hold_nothing();
    measure_peak_memory(place(point, provider).call, r);
  } else if (const Call* kept = kept_call(point, timing)) {
    const Call call = *kept;
    measure_time(point, call, timing, /*warm=*/true, r);
  } else {
    const Placed placed = place_or_free(point, provider);
    const bool warm = check_against_truth(point, placed, timing.check, r);  // the check ran the call or its code
    measure_time(point, placed.call, timing, warm, r);
    keep(point, placed.call, r);
  }
}

Result TorchExecutor::measure(const Point& point, const Timing& timing) {
  Result r;
  r.unit = point.metric() == "memory" ? "MiB" : "ms";
  const OpSpec* op = find_op(point.op);
  const Provider* provider = find_provider(point.op, point.provider);
  if (!op || !provider) {
    r.error = "provider " + point.provider + " is not built into this opbench";
    return r;
  }
  r.bytes = op->min_bytes(point.params);
  try {
    calibrate_when_due();
    measure_placed(point, *provider, timing, r);
    r.stats = summarize(r.samples);
    if (point.metric() == "speed" && r.stats.median > 0) add_bandwidth(environment().peak_gbps, r);
  } catch (const c10::OutOfMemoryError& e) {
    r.error = "out of memory: " + first_line(e.what_without_backtrace());
  } catch (const c10::Error& e) {
    r.error = first_line(e.what_without_backtrace());
  } catch (const std::exception& e) {
    r.error = first_line(e.what());
  }
  if (!r.ok()) forget_failed_point(r);
  return r;
}

}  // namespace opbench

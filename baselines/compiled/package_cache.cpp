// The package cache (package_cache.h).
#include "baselines/compiled/package_cache.h"

#include <torch/version.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <set>
#include <stdexcept>

#include "baselines/compiled/exporter.h"
#include "core/fs.hpp"
#include "core/hash.hpp"
#include "core/text.hpp"
#include "ops/op.hpp"

namespace opbench::compiled {

namespace {

// Every axis but x, metric and `left_out`, in a stable order: "name=value;..."
std::string params_signature(const Params& p, const std::string& x_name,
                             const std::vector<std::string>& left_out = {}) {
  std::string s;
  for (const auto& [name, value] : p.values()) {
    if (name == x_name || name == "metric") continue;
    if (std::find(left_out.begin(), left_out.end(), name) != left_out.end()) continue;
    s += name + "=" + to_string(value) + ";";
  }
  return s;
}

// Whether the op declares the compiled provider (OpSpec::providers).
bool declared(const std::string& op_name, const std::string& provider) {
  const OpSpec* op = find_op(op_name);
  if (!op) return false;
  for (const auto& [name, help] : op->providers)
    if (name == provider) return true;
  return false;
}

}  // namespace

std::string cache_dir() {
  auto env = [](const char* n) { const char* v = std::getenv(n); return v ? std::string(v) : std::string(); };
  std::string s = env("OPBENCH_CACHE_DIR");
  if (!s.empty()) return s;
  s = env("XDG_CACHE_HOME");
  if (!s.empty()) return s + "/opbench/aoti";
  s = env("HOME");
  return (s.empty() ? std::string("/tmp") : s) + "/.cache/opbench/aoti";
}

std::string package_dir(const PackageKey& k) { return cache_dir() + "/" + k.key; }

std::vector<int64_t> distinct_sorted(std::vector<int64_t> xs) {
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  return xs;
}

bool sharing() {
  const char* v = std::getenv("OPBENCH_AOTI_SHARE");
  const std::string s = v ? v : "";
  if (s.empty() || s == "1") return true;
  if (s == "0") return false;
  throw std::runtime_error("OPBENCH_AOTI_SHARE must be 0 or 1, not '" + s + "'");
}

std::vector<std::string> shared_axes(const CompileRequest& r) {
  const OpSpec* op = find_op(r.op);
  if (!op || !sharing()) return {};
  std::vector<std::string> out;
  for (const std::string& name : op->shared_axes) {
    const AxisSpec* axis = op->axis(name);
    if (!axis || axis->kind != AxisKind::Int)
      throw std::runtime_error("op '" + r.op + "': shared axis '" + name + "' is not one of its int axes");
    if (name != r.x_name) out.push_back(name);
  }
  return out;
}

SharedPoint shared_point(const CompileRequest& r) {
  const std::vector<std::string> axes = shared_axes(r);
  if (axes.empty()) return {};
  const Params p = find_op(r.op)->with_defaults(r.params);
  SharedPoint point;
  for (const std::string& a : axes) point[a] = p.i(a);
  return point;
}

PackageKey make_key(const CompileRequest& r) {
  if (!declared(r.op, r.provider))
    throw std::runtime_error("no compiled provider '" + r.provider + "' for op '" + r.op + "'");
  const std::string why = unavailable(r.device);
  if (!why.empty()) throw std::runtime_error(why);
  PackageKey k;
  const std::vector<std::string> shared = shared_axes(r);
  k.canonical = "op=" + r.op + "\nprovider=" + r.provider + "\nx=" + r.x_name +
                "\nparams=" + params_signature(r.params, r.x_name, shared) +
                (shared.empty() ? "" : "\nshared=" + join_list(shared)) + "\ndevice=" + device_signature(r.device) +
                "\ntorch=" + probe(python()).torch_version + "\nlibtorch=" + TORCH_VERSION +
                "\nsources=" + sources_hash() + "\n";
  // Inductor settings set for an experiment (scripts/export_aoti.py) make other packages; unset
  // or empty, the key is as before.
  const char* settings = std::getenv("OPBENCH_AOTI_CONFIGS");
  if (settings && *settings) k.canonical += std::string("inductor=") + settings + "\n";
  k.key = r.op + "-" + r.provider + "-" + r.params.s_or("mode", "fwd") + "-" + r.params.s_or("dtype", "fp32") +
          "-" + content_hash(k.canonical);
  return k;
}

std::string package_key(const CompileRequest& request) { return make_key(request).key; }

namespace {

uint32_t le32(const unsigned char* p) { return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24; }

// A package that is not whole, once per path and process: warned of, and left to be rebuilt.
bool usable(const std::string& path) {
  if (whole_package(path)) return true;
  static std::mutex mu;
  static std::set<std::string> warned;
  std::lock_guard<std::mutex> lock(mu);
  if (warned.insert(path).second)
    std::cerr << "opbench: warning: " << path << " is not a whole package (cut short?): it is built again\n";
  return false;
}

}  // namespace

bool whole_package(const std::string& path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) return false;
  const std::streamoff size = f.tellg();
  constexpr std::streamoff kRecord = 22, kMaxComment = 65535;
  if (size < kRecord) return false;
  const std::streamoff tail = std::min(size, kRecord + kMaxComment);
  std::vector<unsigned char> buf(static_cast<size_t>(tail));
  f.seekg(size - tail);
  if (!f.read(reinterpret_cast<char*>(buf.data()), tail)) return false;
  for (std::streamoff i = tail - kRecord; i >= 0; --i) {
    const unsigned char* p = buf.data() + i;
    if (le32(p) != 0x06054b50) continue;  // "PK\5\6": the end of the central directory
    const uint32_t dir_size = le32(p + 12), dir_offset = le32(p + 16);
    if (dir_size == 0xffffffffu || dir_offset == 0xffffffffu) return true;  // zip64: its own record, past 4 GB
    return std::streamoff(dir_offset) + std::streamoff(dir_size) <= size - tail + i;
  }
  return false;
}

namespace {

// The whole packages in `dir` serving `point` at some x, by name.
std::vector<std::pair<PackageName, std::string>> packages_for(const std::string& dir, const SharedPoint& point) {
  std::vector<std::pair<PackageName, std::string>> out;
  for (const std::string& file : fs::list_dir(dir)) {
    const std::optional<PackageName> name = parse_package_name(file);
    if (name && name->serves(name->x.lo, point) && usable(dir + "/" + file)) out.emplace_back(*name, dir + "/" + file);
  }
  return out;
}

// The narrowest of `packages` serving every x from x to x_hi at `point` ("" when none).
std::string narrowest(const std::vector<std::pair<PackageName, std::string>>& packages, int64_t x, int64_t x_hi,
                      const SharedPoint& point) {
  const std::pair<PackageName, std::string>* best = nullptr;
  for (const auto& p : packages)
    if (p.first.serves(x, point) && p.first.x.holds(x_hi) && (!best || p.first.narrower_than(best->first)))
      best = &p;
  return best ? best->second : "";
}

}  // namespace

std::string find_package(const std::string& dir, int64_t x, const SharedPoint& point) {
  return narrowest(packages_for(dir, point), x, x, point);
}

std::map<int64_t, std::string> cached_packages(const std::string& dir, const std::vector<int64_t>& xs,
                                               const SharedPoint& point) {
  const auto packages = packages_for(dir, point);
  std::map<int64_t, std::string> served;
  const std::string whole = narrowest(packages, xs.front(), xs.back(), point);  // one for the whole range?
  for (int64_t x : xs) {
    const std::string p = whole.empty() ? narrowest(packages, x, x, point) : whole;
    if (p.empty()) return {};
    served[x] = p;
  }
  return served;
}

namespace {

// "name in [lo, hi]" (and its step, where given) from a package's metadata; false when it
// lacks them or holds no number.
bool meta_range(const std::map<std::string, std::string>& meta, const std::string& prefix, Range* r) {
  auto lo = meta.find(prefix + "_min"), hi = meta.find(prefix + "_max"), step = meta.find(prefix + "_step");
  if (lo == meta.end() || hi == meta.end()) return false;
  try {
    *r = {std::stoll(lo->second), std::stoll(hi->second), step == meta.end() ? 1 : std::stoll(step->second)};
  } catch (const std::exception&) {
    return false;
  }
  return r->step >= 1;
}

std::string range_words(const std::string& axis, const Range& r) {
  return axis + " in [" + std::to_string(r.lo) + ", " + std::to_string(r.hi) + "]" +
         (r.step > 1 ? " (multiples of " + std::to_string(r.step) + ")" : "");
}

}  // namespace

std::string serve_error(const std::map<std::string, std::string>& meta, const std::string& package, const Params& p,
                        const SharedPoint& shared) {
  Range r;
  const std::string head = "package " + package + " ";
  auto x_name = meta.find("opbench_x_name");
  if (x_name != meta.end() && p.has(x_name->second) && meta_range(meta, "opbench_x", &r)) {
    const int64_t x = p.i(x_name->second);
    if (!r.holds(x)) return head + "serves " + range_words(x_name->second, r) + ", not " + x_name->second + "=" + std::to_string(x);
  }
  for (const auto& [axis, value] : shared) {
    if (!meta_range(meta, "opbench_shared_" + axis, &r))
      return head + "was built for one table: it names no range of " + axis;
    if (!r.holds(value)) return head + "serves " + range_words(axis, r) + ", not " + axis + "=" + std::to_string(value);
  }
  return "";
}

std::string point_signature(const CompileRequest& r, int64_t x) {
  Params p = r.params;
  p.set(r.x_name, x);
  return r.op + "|" + r.provider + "|" + r.device + "|" + params_signature(p, "");
}

PackageMemory& PackageMemory::get() {
  static PackageMemory m;
  return m;
}

void PackageMemory::served(const std::string& signature, const std::string& package) {
  std::lock_guard<std::mutex> lock(mu_);
  package_[signature] = package;
}

void PackageMemory::failed(const std::string& signature, const std::string& error) {
  std::lock_guard<std::mutex> lock(mu_);
  failure_[signature] = error;
}

std::string PackageMemory::package_of(const std::string& signature) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = package_.find(signature);
  return it == package_.end() ? "" : it->second;
}

std::string PackageMemory::failure_of(const std::string& signature) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = failure_.find(signature);
  return it == failure_.end() ? "" : it->second;
}

}  // namespace opbench::compiled

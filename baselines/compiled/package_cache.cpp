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
#include "ops/op.hpp"

namespace opbench::compiled {

namespace {

// Every axis but x and metric, in a stable order: "name=value;..."
std::string params_signature(const Params& p, const std::string& x_name) {
  std::string s;
  for (const auto& [name, value] : p.values()) {
    if (name == x_name || name == "metric") continue;
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

PackageKey make_key(const CompileRequest& r) {
  if (!declared(r.op, r.provider))
    throw std::runtime_error("no compiled provider '" + r.provider + "' for op '" + r.op + "'");
  const std::string why = unavailable(r.device);
  if (!why.empty()) throw std::runtime_error(why);
  PackageKey k;
  k.canonical = "op=" + r.op + "\nprovider=" + r.provider + "\nx=" + r.x_name +
                "\nparams=" + params_signature(r.params, r.x_name) + "\ndevice=" + device_signature(r.device) +
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

std::string dyn_name(int64_t lo, int64_t hi) {
  return "dyn-" + std::to_string(lo) + "-" + std::to_string(hi) + ".pt2";
}

std::string static_name(int64_t x) { return "static-" + std::to_string(x) + ".pt2"; }

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

std::string find_package(const std::string& dir, int64_t x) {
  std::string best;
  int64_t best_width = -1, best_lo = 0;
  for (const std::string& name : fs::list_dir(dir)) {
    long long lo = 0, hi = 0;
    char tail[8] = {0};
    if (std::sscanf(name.c_str(), "dyn-%lld-%lld%7s", &lo, &hi, tail) != 3 || std::string(tail) != ".pt2" ||
        x < lo || x > hi || !usable(dir + "/" + name))
      continue;
    const int64_t width = hi - lo;
    if (best_width < 0 || width < best_width || (width == best_width && lo < best_lo)) {
      best = dir + "/" + name;
      best_width = width;
      best_lo = lo;
    }
  }
  if (!best.empty()) return best;
  const std::string st = dir + "/" + static_name(x);
  return fs::is_regular_file(st) && usable(st) ? st : "";
}

std::map<int64_t, std::string> cached_packages(const std::string& dir, const std::vector<int64_t>& xs) {
  std::map<int64_t, std::string> served;
  const int64_t lo = xs.front(), hi = xs.back();
  // One package on disk for the whole range?
  const std::string whole = find_package(dir, lo);
  long long a = 0, b = 0;
  if (!whole.empty() &&
      (std::sscanf(fs::base_name(whole).c_str(), "dyn-%lld-%lld", &a, &b) == 2 ? b >= hi : lo == hi)) {
    for (int64_t x : xs) served[x] = whole;
    return served;
  }
  for (int64_t x : xs) {
    const std::string p = find_package(dir, x);
    if (p.empty()) return {};
    served[x] = p;
  }
  return served;
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

// The on-disk package cache (layout in compiled.h) and the process's memory of it: which
// package serves each point (set when a table's packages are built, so that its points run on
// them) and which exports failed (not retried in this process). Internal to baselines/compiled.
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "baselines/compiled/compiled.h"

namespace opbench::compiled {

struct PackageKey {
  std::string key;        // the folder's name: op-provider-mode-dtype-<hash>
  std::string canonical;  // what the hash covers, written to key.txt
};

// The key of a request: op, provider, x axis, every axis but x and metric, the device, the
// exporting torch, LibTorch, the exporter's sources. Throws std::runtime_error when the
// provider is not the op's or the exporter is unavailable for the device.
PackageKey make_key(const CompileRequest& r);
// The folder of the packages a key names: cache_dir()/<key>.
std::string package_dir(const PackageKey& k);
// x values sorted, each once: what a table's packages must serve.
std::vector<int64_t> distinct_sorted(std::vector<int64_t> xs);

std::string dyn_name(int64_t lo, int64_t hi);  // dyn-<lo>-<hi>.pt2
std::string static_name(int64_t x);             // static-<x>.pt2

// The package in `dir` serving x: the narrowest dyn-<lo>-<hi>.pt2 with lo <= x <= hi, else
// static-<x>.pt2; "" when none. A file that is no whole package (whole_package) serves
// nothing: it is left to be rebuilt, with a warning on stderr (once per file and process).
std::string find_package(const std::string& dir, int64_t x);

// Whether `path` holds a whole .pt2 package: a zip archive whose end-of-central-directory
// record is there and whose central directory lies inside the file (what a copy cut short, a
// full disk or a writer killed outside the exporter's atomic publish would lose).
bool whole_package(const std::string& path);

// The packages already in `dir` serving every x of `xs` (sorted), one dynamic package for the
// whole range or one per x; empty when some x has none.
std::map<int64_t, std::string> cached_packages(const std::string& dir, const std::vector<int64_t>& xs);

// A point whatever its table's x axis: op, provider, device and every axis but metric.
std::string point_signature(const CompileRequest& r, int64_t x);

// What this process knows of packages (thread-safe).
class PackageMemory {
 public:
  static PackageMemory& get();
  void served(const std::string& signature, const std::string& package);
  void failed(const std::string& signature, const std::string& error);
  std::string package_of(const std::string& signature);  // "" when unknown
  std::string failure_of(const std::string& signature);  // "" when none

 private:
  std::mutex mu_;
  std::map<std::string, std::string> package_, failure_;
};

}  // namespace opbench::compiled

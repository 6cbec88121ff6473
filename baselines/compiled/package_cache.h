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
#include "baselines/compiled/package_name.h"

namespace opbench::compiled {

struct PackageKey {
  std::string key;        // the folder's name: op-provider-mode-dtype-<hash>
  std::string canonical;  // what the hash covers, written to key.txt
};

// Whether tables differing only in an op's shared axes share one package: on unless
// $OPBENCH_AOTI_SHARE is 0 (throws std::runtime_error for a value other than 0 or 1).
bool sharing();
// The axes request r's package may leave dynamic besides x: its op's OpSpec::shared_axes (less
// x) when sharing() is on, else none. Throws std::runtime_error naming the op for a shared
// axis that is not one of its Int axes.
std::vector<std::string> shared_axes(const CompileRequest& r);
// The request's value of each shared axis (the op's default where the request lacks it).
SharedPoint shared_point(const CompileRequest& r);

// The key of a request: op, provider, x axis, every axis but x, metric and the shared axes (the
// shared axes named instead: another key than a package of one table), the device, the
// exporting torch, LibTorch, the exporter's sources. Throws std::runtime_error when the
// provider is not the op's or the exporter is unavailable for the device.
PackageKey make_key(const CompileRequest& r);
// The folder of the packages a key names: cache_dir()/<key>.
std::string package_dir(const PackageKey& k);
// x values sorted, each once: what a table's packages must serve.
std::vector<int64_t> distinct_sorted(std::vector<int64_t> xs);

// The package in `dir` serving x and the shared axes' values `point` (package_name.h): the
// narrowest dynamic one, else static-<x>; "" when none. A file that is no whole package
// (whole_package) serves nothing: it is left to be rebuilt, with a warning on stderr (once per
// file and process).
std::string find_package(const std::string& dir, int64_t x, const SharedPoint& point);

// Whether `path` holds a whole .pt2 package: a zip archive whose end-of-central-directory
// record is there and whose central directory lies inside the file (what a copy cut short, a
// full disk or a writer killed outside the exporter's atomic publish would lose).
bool whole_package(const std::string& path);

// The packages already in `dir` serving every x of `xs` (sorted) at `point`, one package for
// the whole range or one per x; empty when some x has none.
std::map<int64_t, std::string> cached_packages(const std::string& dir, const std::vector<int64_t>& xs,
                                               const SharedPoint& point);

// Why a package whose metadata is `meta` (opbench_x_name, opbench_x_min/max,
// opbench_shared_<axis>_min/max) cannot serve the point `p` (its table's x axis being the one
// the package names) whose shared axes' values are `shared`, naming `package`; "" when it can.
std::string serve_error(const std::map<std::string, std::string>& meta, const std::string& package, const Params& p,
                        const SharedPoint& shared);

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

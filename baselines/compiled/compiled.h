// The torch_compile baselines: each op's torch reference (baselines/python/opbench_ops.py)
// exported with torch.export and compiled ahead of time by AOTInductor into a .pt2 package
// (scripts/export_aoti.py, run in a Python process), then loaded and run from C++ through
// torch::inductor::AOTIModelPackageLoader.
//
// Providers: torch_compile for every op, torch_naive_compile for tpa_decode (the naive form,
// which materialises q, k, v).
//
// Packages are cached on disk under cache_dir()/<key>/, the key naming everything that changes
// the generated code: op, provider, every axis of the point but the swept x axis (act, act_dim,
// offset, md, l, mode, dtype, batch, head, dim ...; metric excluded), the device type and its
// compute capability (CPU: its model), the versions of the exporting torch and of LibTorch,
// and a hash of opbench_ops.py and export_aoti.py. Inside a key's folder:
//   dyn-<min>-<max>.pt2   one package for every x in [min, max] (a torch.export.Dim)
//   static-<x>.pt2        one x only (the fallback when the dynamic export fails, or a point
//                         prepared without compile_packages having run for its table first)
// each with <package>.log (the exporter's output) and <package>.request.json beside it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/value.hpp"
#include "providers/provider.hpp"

namespace opbench {

// torch_compile for act, lrpe_cosine, lrpe_rotate, lrpe_cosine_md, tpa_decode;
// torch_naive_compile for tpa_decode. prepare() finds or builds the package for the point
// (outside timing: the export takes tens of seconds), loads it and returns a Call running it:
// fwd (inputs...) -> {o}; bwd (inputs..., grad_out) -> {dx}. A failed export throws
// std::runtime_error with the exporter's one-line reason.
std::vector<Provider> compiled_providers();

// One table's worth of points of one compiled provider: everything but x is fixed.
struct CompileRequest {
  std::string op, provider;   // provider: torch_compile | torch_naive_compile
  opbench::Params params;     // every axis (mode and dtype included); x's own value is ignored
  std::string x_name;         // the swept axis (n; m for tpa_decode)
  std::vector<int64_t> x_values;
  std::string device;         // "cpu", "cuda" or "cuda:N"
};

struct CompileOutcome {
  std::string key;    // the cache key (the package folder's name)
  std::string path;   // the package serving every x value; the key's folder when the export
                      // fell back to one static package per x value
  std::string error;  // "" on success, else one line
  double seconds = 0; // wall time spent exporting (0 when cached)
  bool cached = false;  // every x value was served by packages already on disk
};

// Builds the packages of `requests`, up to `jobs` exporter processes at a time. Each request
// gets one dynamic package over [min(x_values), max(x_values)] (one static package when it has
// one x value; one per x value when the dynamic export fails). `progress` (may be empty) is
// called once per request as it completes, cached ones first. Never throws for a failing
// export: the outcome carries the error. Returns one outcome per request, in order.
std::vector<CompileOutcome> compile_packages(
    const std::vector<CompileRequest>& requests, int jobs,
    const std::function<void(size_t done, size_t total, const CompileOutcome&)>& progress);

namespace compiled {

// $OPBENCH_CACHE_DIR, else $XDG_CACHE_HOME/opbench/aoti, else ~/.cache/opbench/aoti.
std::string cache_dir();
// $OPBENCH_PYTHON, else <source dir>/.venv/bin/python when it exists, else python3.
std::string python();
// The opbench source folder: $OPBENCH_SOURCE_DIR, else the OPBENCH_SOURCE_DIR the build set.
std::string source_dir();
// "" when the exporter can run for `device` ("cpu", "cuda", "cuda:N"), else the one-line
// reason (no python, no torch in it, its torch differs from LibTorch, no GPU it can see ...).
// Probes each python once per process (`python -c 'import torch ...'`), cached.
std::string unavailable(const std::string& device);
// The cache key of a request (throws std::runtime_error when unavailable()).
std::string package_key(const CompileRequest& request);
// Whether packages serving every x value of the request are in the cache already (throws
// std::runtime_error when unavailable()).
bool is_cached(const CompileRequest& request);
// The swept axis a compiled op's packages are dynamic over when prepare() builds them:
// m for tpa_decode, n otherwise.
std::string default_x_name(const std::string& op);

}  // namespace compiled
}  // namespace opbench

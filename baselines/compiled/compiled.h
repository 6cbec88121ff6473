// The compiled baselines: an op's torch reference (its function in
// baselines/python/opbench_ops.py) exported with torch.export and compiled ahead of time by
// AOTInductor into a .pt2 package (scripts/export_aoti.py, run in a Python process), then
// loaded and run from C++ through torch::inductor::AOTIModelPackageLoader.
//
// Providers (provider.cpp): every NAME_compile an op's OpSpec declares, compiling the op's
// NAME function (torch_compile: the torch reference; torch_naive_compile: a naive form). What
// the exporter needs of the op (its inputs' shapes and dtypes at each x, its x axis, its
// modes) comes from the OpSpec, in the request the C++ side writes (exporter.h).
//
// Packages are cached on disk under cache_dir()/<key>/ (package_cache.h), the key naming
// everything that changes the generated code: op, provider, every axis of the point but the
// swept x axis, metric and the op's shared axes (OpSpec::shared_axes: sizes alone, such as
// tpa_decode's batch; named in the key instead, so that one table's package is never taken
// for a shared one), the device type and its compute capability (CPU: its model and the
// thread count), the versions of the exporting torch and of LibTorch, and a hash of
// opbench_ops.py and export_aoti.py. Tables that differ only in shared axes have one key, and
// are built as one export dynamic over x and over each shared axis (a torch.export.Dim each);
// $OPBENCH_AOTI_SHARE=0 turns that off (one key, one package, per table, as for an op without
// shared axes). Inside a key's folder, each name saying the ranges it serves (package_name.h):
//   dyn-<min>-<max>.pt2   one package for every x in [min, max] (a torch.export.Dim)
//   static-<x>.pt2        one x only (the fallback when the dynamic export fails, or a point
//                         prepared without its table's packages built first)
//   dyn-<min>-<max>.batch-<lo>-<hi>.pt2, static-<x>.batch-<lo>-<hi>.pt2
//                         the same in a shared key's folder, for batch in [lo, hi] too (lo ==
//                         hi: one table's, the fallback when the export dynamic over batch fails)
// each with <package>.log (the exporter's output) and <package>.request.json beside it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/value.hpp"
#include "torch/providers/provider.hpp"

namespace opbench {

// One table's worth of points of one compiled provider: everything but x is fixed.
struct CompileRequest {
  std::string op, provider;   // provider: NAME_compile
  opbench::Params params;     // every axis (mode and dtype included); x's own value is ignored
  std::string x_name;         // the swept axis
  std::vector<int64_t> x_values;
  std::string device;         // "cpu", "cuda" or "cuda:N"
};

// key: the cache key (the package folder's name); path: the package serving every x value, or
// the key's folder when the export fell back to one static package per x value; seconds: wall
// time spent exporting (0 when cached); cached: every x value was served by packages on disk.
using CompileOutcome = TableOutcome;

// Builds the packages of `requests` (compile.cpp), up to `jobs` exporter processes at a time.
// Each request gets one dynamic package over [min(x_values), max(x_values)] (one static
// package when it has one x value; one per x value when the dynamic export fails), shared
// with the requests of its key (differing only in shared axes: one package over their x
// values and shared axes' values; one per value of the shared axes, with a warning on stderr,
// when that export fails). `progress`
// (may be empty) is called once per request as it completes, cached ones first. Never throws
// for a failing export: the outcome carries the error. One outcome per request, in order.
std::vector<CompileOutcome> compile_packages(const std::vector<CompileRequest>& requests, int jobs,
                                             const TableProgress& progress);

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
// The cache key of a request (throws std::runtime_error when unavailable(), or when the op
// declares no such provider).
std::string package_key(const CompileRequest& request);

}  // namespace compiled
}  // namespace opbench

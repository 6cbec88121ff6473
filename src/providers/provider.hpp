// A provider: one implementation of one op (torch eager, our CUDA kernels, AOTInductor ...).
// Links LibTorch. Providers are listed in src/providers/registry.cpp, one line each.
#pragma once
#include <ATen/ATen.h>

#include <functional>
#include <string>
#include <vector>

#include "core/value.hpp"

namespace opbench {

// The tensors of one point, built by the harness from OpSpec::inputs (seeded), on the device.
struct Inputs {
  std::vector<at::Tensor> tensors;  // in OpSpec::inputs order
  at::Tensor grad_out;              // bwd: the upstream gradient, shaped as the output
  const at::Tensor& operator[](size_t i) const { return tensors.at(i); }
};

// One call of the measured work. fwd returns {output}; bwd returns the gradients of the
// differentiable inputs, in OpSpec::inputs order. Everything that is not the call itself
// (graph building, compilation, caches) happens in Provider::prepare, outside timing.
using Call = std::function<std::vector<at::Tensor>()>;

struct Provider {
  std::string op;
  std::string name;  // torch, torch_naive, cuda, cuda_cache, torch_compile, ...
  std::string help;
  // "" when the provider can run on `device`; otherwise the one-line reason.
  std::function<std::string(const at::Device& device)> unavailable;
  // Builds the call for one point (params hold every axis, mode included).
  std::function<Call(const Params& params, const Inputs& inputs)> prepare;
  // Environment variables that change what this provider runs (e.g. a kernel's tuning): a run
  // records the ones that are set, and diff warns when two runs set them differently.
  std::vector<std::string> tuning_env;
};

// Registry (src/providers/registry.cpp).
const std::vector<Provider>& all_providers();
const Provider* find_provider(const std::string& op, const std::string& name);
// Every provider name any op has (for config validation without LibTorch, see
// src/ops/registry.cpp's provider_names()).

}  // namespace opbench

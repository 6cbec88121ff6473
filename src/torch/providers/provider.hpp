// A provider: one implementation of one op (torch eager, our CUDA kernels, AOTInductor ...).
// Links LibTorch. Providers register themselves from their own files (ProviderRegistration);
// the harness finds them by op and name. Nothing here names a provider family.
#pragma once
#include <ATen/ATen.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/value.hpp"
#include "torch/providers/table_work.hpp"

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
  // Work done once per table before any point is timed (building a compiled package), or
  // null. `opbench compile` runs it alone; `sweep` runs it before measuring.
  std::shared_ptr<TableWork> table_work;
  // Environment variables that change what this provider runs (e.g. a kernel's tuning): a run
  // records the ones that are set, and diff warns when two runs set them differently.
  std::vector<std::string> tuning_env;
  // The op's reference computation (one provider per op: its eager baseline). Run on the
  // inputs upcast to a wider dtype, its code gives the truth every provider's output is
  // checked against (torch/measure/torch_check.hpp), so it must compute in its inputs' dtype, or a
  // wider one, never casting down to a fixed one.
  bool reference = false;
  // Another form of the op's reference code, as a PyTorch user may also write it (tpa_decode's
  // naive form). The reference code's own error, which the check's tolerance scales from, is
  // the largest of the reference's and these forms' (each run in the storage dtype).
  bool reference_form = false;
};

// Registers providers: one static instance in the providers' own file,
//   static const ProviderRegistration registration([] { return std::vector<Provider>{...}; });
// `make` runs once, on the registry's first use (after every op has registered).
class ProviderRegistration {
 public:
  explicit ProviderRegistration(std::function<std::vector<Provider>()> make);
};

// The registered providers, in (op, name) order (src/torch/providers/registry.cpp).
const std::vector<Provider>& all_providers();
const Provider* find_provider(const std::string& op, const std::string& name);
// The op's reference provider (Provider::reference), or null.
const Provider* find_reference(const std::string& op);

}  // namespace opbench

// What the providers of our CUDA kernels share when they bind ATen tensors to the torch-free
// launch APIs: one-line argument errors, dtype mapping, tensor checks, the device check, the
// current stream and workspace buffers. Included by kernels/providers_*.cpp only.
#pragma once
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "core/value.hpp"
#include "kernels/common.h"

namespace opbench::binding {

namespace K = opbench::kernels;

[[noreturn]] inline void fail(const std::string& op, const std::string& msg) {
  throw std::invalid_argument(op + ": " + msg);
}

inline std::string shape_str(at::IntArrayRef s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + ")";
}

inline const char* dtype_word(at::ScalarType t) {
  return t == at::kBFloat16 ? "bf16" : t == at::kHalf ? "fp16" : t == at::kFloat ? "fp32" : "?";
}

// The kernels' dtype of a storage tensor (bf16, fp16, fp32).
inline K::DType kernel_dtype(const std::string& op, const at::Tensor& t, const char* name) {
  switch (t.scalar_type()) {
    case at::kBFloat16: return K::DType::bf16;
    case at::kHalf: return K::DType::f16;
    case at::kFloat: return K::DType::f32;
    default:
      fail(op, std::string(name) + " has dtype " + std::string(c10::toString(t.scalar_type())) +
                   ", expected bf16, fp16 or fp32");
  }
}

// The inputs' dtype must be the point's.
inline void check_dtype_param(const std::string& op, const Params& p, const at::Tensor& t) {
  if (p.has("dtype") && p.s("dtype") != dtype_word(t.scalar_type()))
    fail(op, "inputs are " + std::string(dtype_word(t.scalar_type())) + " but the point's dtype is " +
                 p.s("dtype"));
}

// Defined, on a CUDA device, contiguous, of dtype `st` and shape `shape`.
inline void check_tensor(const std::string& op, const at::Tensor& t, const char* name, at::ScalarType st,
                         const std::vector<int64_t>& shape) {
  if (!t.defined()) fail(op, std::string(name) + " is missing");
  if (!t.is_cuda()) fail(op, std::string(name) + " must be on a CUDA device, is on " + t.device().str());
  if (t.scalar_type() != st)
    fail(op, std::string(name) + " has dtype " + std::string(c10::toString(t.scalar_type())) +
                 ", expected " + std::string(c10::toString(st)));
  if (t.sizes() != at::IntArrayRef(shape))
    fail(op, std::string(name) + " has shape " + shape_str(t.sizes()) + ", expected " + shape_str(shape));
  if (!t.is_contiguous()) fail(op, std::string(name) + " must be contiguous");
}

inline bool backward_mode(const std::string& op, const Params& p) {
  const std::string mode = p.s("mode");
  if (mode != "fwd" && mode != "bwd") fail(op, "unknown mode '" + mode + "' (fwd, bwd)");
  return mode == "bwd";
}

inline K::Act parse_act(const std::string& op, const std::string& a) {
  if (a == "none") return K::Act::none;
  if (a == "relu") return K::Act::relu;
  if (a == "sigmoid") return K::Act::sigmoid;
  if (a == "silu") return K::Act::silu;
  if (a == "softmax") return K::Act::softmax;
  fail(op, "unknown act '" + a + "' (none, relu, sigmoid, silu, softmax)");
}

// Provider::unavailable of every kernel provider.
inline std::string needs_cuda(const at::Device& d) {
  if (!d.is_cuda()) return "our CUDA kernels need a CUDA device";
  const auto* prop = at::cuda::getDeviceProperties(d.has_index() ? d.index() : at::cuda::current_device());
  if (prop->major < 8)
    return "our CUDA kernels need compute capability 8.0 or newer (this device has " +
           std::to_string(prop->major) + "." + std::to_string(prop->minor) + ")";
  return "";
}

inline cudaStream_t current_stream() { return at::cuda::getCurrentCUDAStream().stream(); }

// A byte buffer on `like`'s device (undefined when n is 0).
inline at::Tensor workspace_on(const at::Tensor& like, size_t n) {
  if (n == 0) return at::Tensor();
  return at::empty({static_cast<int64_t>(n)}, like.options().dtype(at::kByte));
}

}  // namespace opbench::binding

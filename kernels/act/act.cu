// act: o = f(x) for x (b, h, n, d), f one of
//   none     o = x                          dx = do
//   relu     o = x > 0 ? x : 0              dx = x > 0 ? do : 0
//   sigmoid  o = s(x) = 1 / (1 + e^-x)      dx = do s (1 - s)
//   silu     o = x s(x)                     dx = do s (1 + x (1 - s))
//   softmax  o = exp(x - max) / sum exp(x - max) along act_dim,   dx = o (do - sum(o do))
// float32 math, storage bf16 / fp16 / fp32.
//
// Minimal bytes (OPS.md): forward 2|x| (read x, write o), backward 3|x| (read x and do, write
// dx); none moves nothing (the caller returns x, or do). Softmax over the sequence: its column
// statistics need all n rows first, so it reads x (and do) twice: fwd 3|x|, bwd 5|x|.
//
// Kernels: relu / sigmoid / silu run a flat kernel over all elements (flat_kernel.cuh: 16-byte
// units, a launch shape and load path per call size: flat_shape); softmax over the features
// runs act_feat_kernel (feat_kernel.cuh: a lane group per row of d, one row per group, shuffle
// reductions, few registers) when d is a power-of-two number of 16-byte units, else the row
// kernel of rows1d/row_kernel.cuh; softmax over the sequence the column statistics strategies
// of rows1d/softmax_seq.cuh. This file: the act op in the row machinery (ActOp), the launch
// shapes and the entry points of act.h.
#include <cstdint>

#include "kernels/act.h"
#include "kernels/act/feat_kernel.cuh"
#include "kernels/act/flat_kernel.cuh"
#include "kernels/rows1d/launch.cuh"

namespace opbench::kernels {
namespace {

using act::act_feat_kernel;
using act::act_flat_kernel;

// The act op in the row machinery: one piece per unit, the output is xa itself.
struct ActOp {
  // (kRptBR*: batch rows are an lrpe mode; named only because rows_per_step reads them.)
  static constexpr int P = 1, Q = 1, kRptF = 4, kRptB = 4, kRptBRF = 4, kRptBRB = 4;
  static constexpr bool kAngle = false;
  static constexpr bool kElemRows = false;  // elementwise acts use act_flat_kernel
  // Row-kernel settings per variant from the measurements (docs/kernels.md, act): on large
  // calls feature softmax runs short tiles (1 step forward, 4 backward) with the prefetch;
  // otherwise (and softmax over n) 16-step tiles, the prefetch only backward. Softmax over n
  // runs the resident strategy from n = 1024 (backward up to 16384).
  static rows1d::RowChoice choose(bool bwd, Act, bool seq, bool large) {
    if (seq) return {16, false, bwd, 512, bwd ? 16384 : INT64_MAX};
    if (large) return {bwd ? 4 : 1, false, true};
    return {16, false, bwd};
  }
  template <int V>
  __device__ static __forceinline__ void fwd(const float (&xa)[1][V], const float (&)[V],
                                             const float (&)[V], float (&o)[1][V]) {
#pragma unroll
    for (int e = 0; e < V; ++e) o[0][e] = xa[0][e];
  }
  template <int V>
  __device__ static __forceinline__ void bwd(const float (&d)[1][V], const float (&)[V],
                                             const float (&)[V], float (&g)[1][V]) {
#pragma unroll
    for (int e = 0; e < V; ++e) g[0][e] = d[0][e];
  }
};

// The flat kernel's launch shape for a call of nunits 16-byte units (Tuning1d's flat_*,
// stream_stores and plain_loads fields override it). Measured in the harness itself (every
// shape a provider of the same table cell, so all share each round's placement, against
// torch; b = 12, h = 12, d = 128, n = 256 .. 32768; docs/kernels.md, act): below 2^24 units
// forward runs 512 x 1 with plain loads and stores (over 45 cells of three runs 0.22 us under
// torch on average, at most 0.13 over, where 256 x 2 is at most 0.87 over); backward
// below 2^23 units 512 x 1 with read-only loads and plain stores (every one-unit shape within
// 0.1 us of torch on average), from 2^23 units four units a thread with streaming stores
// (n = 4096: 0.25-0.8 us faster than 512 x 1, which was 0.6% behind torch's silu backward);
// forward from 2^24 units 512 x 1 with streaming stores (n = 32768: 797.5 us).
struct FlatShape {
  int threads, units;
  bool cs, plain;  // streaming stores; plain (not read-only) loads
};
FlatShape flat_shape(int64_t nunits, bool bwd) {
  FlatShape f{512, bwd ? 4 : 1, true, false};
  if (nunits < (int64_t{1} << (bwd ? 23 : 24))) f = {512, 1, false, !bwd};
  const Tuning1d& t = tuning_1d();
  if (t.flat_threads == 128 || t.flat_threads == 256 || t.flat_threads == 512) f.threads = t.flat_threads;
  if (t.flat_units >= 1) f.units = t.flat_units >= 4 ? 4 : t.flat_units >= 2 ? 2 : 1;
  if (t.stream_stores >= 0) f.cs = t.stream_stores != 0;
  if (t.plain_loads >= 0) f.plain = t.plain_loads != 0;
  return f;
}

template <typename T, int V, bool BWD, int kFlatRpt, bool kPlain>
void launch_flat_r(const ActArgs& a, int64_t nunits, const FlatShape& f) {
  const int nt = f.threads;
  const int64_t per = int64_t(nt) * kFlatRpt;
  const unsigned grid = rows1d::grid_of((nunits + per - 1) / per, "act");
  const T* x = static_cast<const T*>(a.x);
  const T* d = static_cast<const T*>(a.dout);
  T* o = static_cast<T*>(a.out);
  switch (a.act) {
    case Act::relu:
      act_flat_kernel<T, V, Act::relu, BWD, kFlatRpt, kPlain><<<grid, nt, 0, a.stream>>>(x, d, o, nunits, f.cs);
      break;
    case Act::sigmoid:
      act_flat_kernel<T, V, Act::sigmoid, BWD, kFlatRpt, kPlain><<<grid, nt, 0, a.stream>>>(x, d, o, nunits, f.cs);
      break;
    case Act::silu:
      act_flat_kernel<T, V, Act::silu, BWD, kFlatRpt, kPlain><<<grid, nt, 0, a.stream>>>(x, d, o, nunits, f.cs);
      break;
    default:
      throw KernelError("act: not an elementwise activation");
  }
  OPBENCH_LAUNCH_CHECK();
}

template <typename T, int V, bool BWD, int kFlatRpt>
void launch_flat_u(const ActArgs& a, int64_t nunits, const FlatShape& f) {
  if (f.plain) launch_flat_r<T, V, BWD, kFlatRpt, true>(a, nunits, f);
  else launch_flat_r<T, V, BWD, kFlatRpt, false>(a, nunits, f);
}

template <typename T, int V, bool BWD>
void launch_flat(const ActArgs& a, int64_t nunits) {
  const FlatShape f = flat_shape(nunits, BWD);
  if (f.units == 4) launch_flat_u<T, V, BWD, 4>(a, nunits, f);
  else if (f.units == 2) launch_flat_u<T, V, BWD, 2>(a, nunits, f);
  else launch_flat_u<T, V, BWD, 1>(a, nunits, f);
}

template <typename T>
void flat_t(const ActArgs& a, bool bwd, int64_t numel) {
  constexpr int kVec = 16 / sizeof(T);
  const bool vec = numel % kVec == 0 && rows1d::aligned16(a.x) && rows1d::aligned16(a.out) &&
                   (!bwd || rows1d::aligned16(a.dout));
  if (vec) {
    if (bwd) launch_flat<T, kVec, true>(a, numel / kVec);
    else launch_flat<T, kVec, false>(a, numel / kVec);
  } else {
    if (bwd) launch_flat<T, 1, true>(a, numel);
    else launch_flat<T, 1, false>(a, numel);
  }
}


// The feature-softmax kernel when d is a power-of-two number (<= 32) of 16-byte units and the
// pointers are aligned (unless Tuning1d::feat_kernel is 0); false leaves the call to the row
// machinery.
template <typename T>
bool feat_t(const ActArgs& a, bool bwd) {
  constexpr int kVec = 16 / sizeof(T);
  const int64_t units = a.d / kVec;
  if (tuning_1d().feat_kernel == 0 || a.d % kVec != 0 || units > 32 || (units & (units - 1)) != 0)
    return false;
  if (!rows1d::aligned16(a.x) || !rows1d::aligned16(a.out) || (bwd && !rows1d::aligned16(a.dout)))
    return false;
  const int G = static_cast<int>(units);
  const int64_t rows = a.b * a.h * a.n;
  const unsigned grid = rows1d::grid_of((rows * G + rows1d::kThreads - 1) / rows1d::kThreads, "act");
  const T* x = static_cast<const T*>(a.x);
  const T* d = static_cast<const T*>(a.dout);
  T* o = static_cast<T*>(a.out);
  if (bwd) act_feat_kernel<T, kVec, true><<<grid, rows1d::kThreads, 0, a.stream>>>(x, d, o, rows, G, stream_stores());
  else act_feat_kernel<T, kVec, false><<<grid, rows1d::kThreads, 0, a.stream>>>(x, d, o, rows, G, stream_stores());
  OPBENCH_LAUNCH_CHECK();
  return true;
}

bool feat_softmax(const ActArgs& a, bool bwd) {
  switch (a.dtype) {
    case DType::f32: return feat_t<float>(a, bwd);
    case DType::f16: return feat_t<__half>(a, bwd);
    case DType::bf16: return feat_t<__nv_bfloat16>(a, bwd);
  }
  return false;
}

// act_dim of a softmax: true for the sequence (n), false for the features (d).
bool seq_dim(const ActArgs& a) {
  if (a.act_dim == -1 || a.act_dim == 3) return false;
  if (a.act_dim == -2 || a.act_dim == 2) return true;
  throw KernelError("act: act_dim must be -1 (features) or -2 (sequence) for softmax, got " +
                    std::to_string(a.act_dim));
}

// Sizes and act_dim; with `pointers`, also the tensors (a workspace query has none yet).
void check(const ActArgs& a, bool bwd, bool pointers = true) {
  if (a.b < 1 || a.h < 1 || a.n < 1 || a.d < 1)
    throw KernelError("act: b, h, n, d must be >= 1 (got " + std::to_string(a.b) + ", " +
                      std::to_string(a.h) + ", " + std::to_string(a.n) + ", " +
                      std::to_string(a.d) + ")");
  if (pointers && (a.x == nullptr || a.out == nullptr || (bwd && a.dout == nullptr)))
    throw KernelError("act: null tensor pointer");
  if (a.act == Act::softmax) {
    seq_dim(a);
    if (a.d > 256) throw KernelError("act: softmax needs d <= 256, got " + std::to_string(a.d));
  }
}

rows1d::Call softmax_call(const ActArgs& a, bool bwd) {
  rows1d::Call c;
  c.op = "act";
  c.dtype = a.dtype;
  c.act = Act::softmax;
  c.seq = seq_dim(a);
  c.bwd = bwd;
  c.x = a.x;
  c.dout = a.dout;
  c.out = a.out;
  c.B = a.b, c.H = a.h, c.N = a.n, c.D = int(a.d);
  c.lrpe_layout = false;
  c.piece = int(a.d);
  c.xhalf = 0, c.ohalf = 0;
  c.orow_len = int(a.d);
  c.ws = a.workspace;
  c.ws_bytes = a.workspace_bytes;
  c.strategy = a.strategy;
  c.stream = a.stream;
  return c;
}

void run(const ActArgs& a, bool bwd) {
  check(a, bwd);
  const int64_t numel = a.b * a.h * a.n * a.d;
  if (a.act == Act::none) {
    const void* src = bwd ? a.dout : a.x;
    if (src != a.out)
      OPBENCH_CUDA_CHECK(cudaMemcpyAsync(a.out, src, size_t(numel) * dtype_size(a.dtype),
                                         cudaMemcpyDeviceToDevice, a.stream));
    return;
  }
  if (a.act != Act::softmax) {
    switch (a.dtype) {
      case DType::f32: flat_t<float>(a, bwd, numel); break;
      case DType::f16: flat_t<__half>(a, bwd, numel); break;
      case DType::bf16: flat_t<__nv_bfloat16>(a, bwd, numel); break;
    }
    return;
  }
  if (!seq_dim(a) && feat_softmax(a, bwd)) return;
  rows1d::launch<ActOp>(softmax_call(a, bwd));
}

}  // namespace

size_t act_workspace_bytes(const ActArgs& a, bool backward) {
  check(a, backward, /*pointers=*/false);
  if (a.act != Act::softmax) return 0;
  return rows1d::workspace_bytes<ActOp>(softmax_call(a, backward));
}

void act_forward(const ActArgs& a) { run(a, false); }
void act_backward(const ActArgs& a) { run(a, true); }

}  // namespace opbench::kernels
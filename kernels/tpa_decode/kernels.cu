// tpa_decode kernels: one decoding step of tensor product attention. Math and API: tpa_decode.h.
// This file instantiates every kernel (and holds the trace buffer of -DOPBENCH_TPA_TRACE
// builds); the plan picks one (plan.cu) and the launch runs it (launch.cu).
//
//   q[h]        = scale_q * sum_r aq[h, r] bq[r]                      (h x d, float32)
//   s[h, t]     = scale * scale_k * ak[t, h] * <q[h], bk[t]>
//   o[h]        = scale_v * sum_t softmax_t(s)[h, t] av[t, h] bv[t]
// Bytes (the floor): |ak| + |av| + |bk| + |bv| (+ aq, bq, out: tiny). FLOPs: 2 m h (d + e) per
// batch element, about 13 flops a byte at h = 32, d = e = 128 in bf16: over what float32 FMAs
// deliver per byte of HBM bandwidth on an H100 (~11), hence the tensor cores for bf16/fp16.
//
// Every kernel works in the log2 domain: q is pre-multiplied by scale * scale_k * scale_q *
// log2(e), so p = exp2(s - max).
//
// Families:
//   tpa_tc_kernel<T, TT, STAGES>  (bf16/fp16; strategies b and bn)         tc_kernel.cuh
//   tpa_cc_kernel<T>  (any dtype; strategy bh with one head a block, and    cc_kernel.cuh
//                     fp32 b/bn)
//   tpa_reduce_kernel<T, V>  (bn without the fused merge)                   reduce_kernel.cuh
// Both main kernels start with the q inputs (aq rows, bq) copied asynchronously together with
// the first tile, then build q in shared memory (aq as a transposed float table; q.cuh).
// Device helpers: ptx.cuh (PTX wrappers), mma.cuh (tensor-core traits), copy.cuh (tile copies),
// merge.cuh (bn's merge of the partials), trace.cuh (timeline stamps). Measured:
// docs/kernels.md, tpa_decode.
#include <vector>

#include "kernels/common.cuh"
#include "kernels/tpa_decode/cc_kernel.cuh"
#include "kernels/tpa_decode/kernels.h"
#include "kernels/tpa_decode/reduce_kernel.cuh"
#include "kernels/tpa_decode/tc_kernel.cuh"
#include "kernels/tpa_decode/trace.cuh"

namespace opbench::kernels {
namespace tpa {
namespace {

template <typename T>
KernelFn tc_kernel_of(int tt, int stages) {
  if (tt == 64 && stages == 2) return tpa_tc_kernel<T, 64, 2>;
  if (tt == 64 && stages == 3) return tpa_tc_kernel<T, 64, 3>;
  if (tt == 64 && stages == 4) return tpa_tc_kernel<T, 64, 4>;
  if (tt == 32 && stages == 2) return tpa_tc_kernel<T, 32, 2>;
  if (tt == 32 && stages == 4) return tpa_tc_kernel<T, 32, 4>;
  return nullptr;
}

template <typename T>
KernelFn reduce_kernel_of(int V) {
  return V == 4 ? tpa_reduce_kernel<T, 4> : tpa_reduce_kernel<T, 1>;
}

}  // namespace

KernelFn tc_kernel_for(DType dt, int tt, int stages) {
  return dt == DType::bf16 ? tc_kernel_of<__nv_bfloat16>(tt, stages)
                           : tc_kernel_of<__half>(tt, stages);
}

KernelFn cc_kernel_for(DType dt) {
  switch (dt) {
    case DType::f32: return tpa_cc_kernel<float>;
    case DType::f16: return tpa_cc_kernel<__half>;
    case DType::bf16: return tpa_cc_kernel<__nv_bfloat16>;
  }
  return nullptr;
}

KernelFn reduce_kernel_for(DType dt, int V) {
  return dt == DType::f32   ? reduce_kernel_of<float>(V)
         : dt == DType::f16 ? reduce_kernel_of<__half>(V)
                            : reduce_kernel_of<__nv_bfloat16>(V);
}

}  // namespace tpa

#ifdef OPBENCH_TPA_TRACE
void tpa_trace_take(std::vector<unsigned long long>& out) {
  out.assign(static_cast<size_t>(kTpaTraceSlots) * kTpaTraceFields, 0);
  OPBENCH_CUDA_CHECK(cudaDeviceSynchronize());
  OPBENCH_CUDA_CHECK(cudaMemcpyFromSymbol(out.data(), tpa::g_tpa_trace, out.size() * sizeof(out[0])));
  void* p = nullptr;
  OPBENCH_CUDA_CHECK(cudaGetSymbolAddress(&p, tpa::g_tpa_trace));
  OPBENCH_CUDA_CHECK(cudaMemset(p, 0, out.size() * sizeof(out[0])));
  OPBENCH_CUDA_CHECK(cudaDeviceSynchronize());
}
#endif

}  // namespace opbench::kernels

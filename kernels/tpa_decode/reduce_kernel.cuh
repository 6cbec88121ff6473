// tpa_decode: tpa_reduce_kernel<T, V>, bn without the fused merge: merges the chunk partials,
// M = max m_c, L = sum l_c 2^(m_c - M), o = scale_v sum o_c 2^(m_c - M) / L, every load in
// flight at once; launched with programmatic dependent launch on sm_90; it zeroes the tile
// counters for the next call.
#pragma once
#include "kernels/tpa_decode/args.h"
#include "kernels/tpa_decode/merge.cuh"
#include "kernels/tpa_decode/ptx.cuh"
#include "kernels/tpa_decode/trace.cuh"

namespace opbench::kernels::tpa {

// The reduction kernel: a block per (b, h), launched after the main kernel (programmatic
// dependent launch on sm_90). Block 0 zeroes the tile counters (a.ctr) for the next call:
// every main block is done by then (PDL wait, or stream order).
template <typename T, int V>
__global__ void __launch_bounds__(kRedThreads) tpa_reduce_kernel(TpaArgs a) {
  extern __shared__ __align__(16) float sh[];
  tpa_stamp(kTpaTraceReduce + blockIdx.x, kTrRedEntry);
  pdl_wait();  // the partials of the main kernel (PDL) are complete and visible
  tpa_stamp(kTpaTraceReduce + blockIdx.x, kTrRedWaited);
  if (a.ctr != nullptr && blockIdx.x == 0)
    for (int i = threadIdx.x; i < a.b * a.ngroups; i += blockDim.x) a.ctr[i] = 0u;
  merge_partials<T, V>(a, blockIdx.x / a.h, blockIdx.x % a.h, 1, sh);
  tpa_stamp(kTpaTraceReduce + blockIdx.x, kTrRedEnd);
}

}  // namespace opbench::kernels::tpa

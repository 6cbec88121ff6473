// tpa_decode device side of bn's merge of the chunk partials (merge_partials), shared by the
// reduction kernel and the tensor-core kernel's fused merge.
#pragma once
#include <cmath>
#include <cstdint>

#include "kernels/common.cuh"
#include "kernels/tpa_decode/args.h"
#include "kernels/tpa_decode/ptx.cuh"

namespace opbench::kernels::tpa {

// bn: merging the chunk partials of `nh` consecutive heads of batch element bi with a whole
// block: M = max_c m_c, w_c = 2^(m_c - M), L = sum_c l_c w_c, out = scale_v sum_c w_c o_c / L.
// A partial row holds o_c (e floats) and then l_c (the row's last group: (l_c, 0, 0, 0) for
// V = 4), so L is summed like an o column and no load waits for another: the m_c become weights
// while every o and l load is in flight (l_c loaded after the weights cost a round trip).
// Thread (slice, head, column group) loads the groups of chunks slice, slice + S, ... (the first
// kRedBatch before anything waits); a warp per head turns the m_c into weights in shared
// memory, and the slices are summed there. Partials are read through L2 (ld.global.cg): in the
// fused merge other multiprocessors wrote them during this kernel. V = 4: float4 columns
// (e % 4 == 0), else 1. Used by the reduction kernel (a block per (b, h)) and by the
// tensor-core kernel's fused merge (a group's heads shared among its blocks). (A warp-per-head
// version without barriers measured 5.6 us against 2.6 us at b = 8, 32 chunks: its loads went 8
// at a time. l_c loaded with m_c, from an array of its own, made the tensor-core kernels spill in
// their main loop.)
template <int V> struct RedVec { float v[V]; };

template <int V>
__device__ __forceinline__ RedVec<V> ld_red(const float* p) {
  RedVec<V> r;
  if constexpr (V == 4) {
    const float4 t = __ldcg(reinterpret_cast<const float4*>(p));
    r.v[0] = t.x; r.v[1] = t.y; r.v[2] = t.z; r.v[3] = t.w;
  } else {
    r.v[0] = __ldcg(p);
  }
  return r;
}

template <typename T, int V>
__device__ void merge_partials(const TpaArgs& a, int bi, int head0, int nh, float* sh) {
  const int tid = threadIdx.x, nthr = blockDim.x, lane = tid & 31, warp = tid >> 5;
  const int nc = a.nchunks;
  const int ngrp = (a.e + V - 1) / V, grps = ngrp + 1, items = nh * grps;  // + l's group
  const int S = max(1, nthr / items);
  const int er = partial_row(a.e);
  float* wts = sh;              // [nh][nc]: m_c, then the weights
  float* part = sh + nh * nc;   // [S][items][V]
  const int64_t cstride = static_cast<int64_t>(a.h) * er;
  const int64_t base = static_cast<int64_t>(bi) * nc * a.h + head0;  // (bi, c, head0 + j): base + c h + j
  auto o_ptr = [&](int it) { return a.po + (base + it / grps) * er + (it % grps) * V; };

  RedVec<V> pv[kRedBatch];  // this thread's first (slice, item): its first chunks, loaded now
  if (tid < S * items) {
    const float* po = o_ptr(tid % items);
#pragma unroll
    for (int k = 0; k < kRedBatch; ++k) {
      const int c = tid / items + k * S;
      if (c < nc) pv[k] = ld_red<V>(po + c * cstride);
    }
  }
  for (int i = tid; i < nh * nc; i += nthr)
    wts[i] = __ldcg(a.pm + base + static_cast<int64_t>(i % nc) * a.h + i / nc);
  __syncthreads();
  for (int j = warp; j < nh; j += nthr / 32) {
    float M = -INFINITY;
    for (int c = lane; c < nc; c += 32) M = fmaxf(M, wts[j * nc + c]);
    M = warp_max(M);  // finite: some chunk holds tokens
    for (int c = lane; c < nc; c += 32)
      wts[j * nc + c] = ex2(wts[j * nc + c] - M);  // 0 for a chunk without tokens (m_c = -inf)
  }
  __syncthreads();
  for (int idx = tid; idx < S * items; idx += nthr) {
    const int slice = idx / items, it = idx % items;
    const float* po = o_ptr(it);
    const float* w = wts + (it / grps) * nc;
    float acc[V];
#pragma unroll
    for (int k = 0; k < V; ++k) acc[k] = 0.f;
    int c = slice;
    if (idx == tid) {
#pragma unroll
      for (int k = 0; k < kRedBatch; ++k, c += S)
        if (c < nc)
#pragma unroll
          for (int v = 0; v < V; ++v) acc[v] = fmaf(pv[k].v[v], w[c], acc[v]);
    }
    for (; c < nc; c += S) {  // more chunks than the first batch
      const RedVec<V> t = ld_red<V>(po + c * cstride);
#pragma unroll
      for (int v = 0; v < V; ++v) acc[v] = fmaf(t.v[v], w[c], acc[v]);
    }
#pragma unroll
    for (int v = 0; v < V; ++v) part[idx * V + v] = acc[v];
  }
  __syncthreads();
  T* out = static_cast<T*>(a.out) + (static_cast<int64_t>(bi) * a.h + head0) * a.e;
  for (int i = tid; i < nh * a.e; i += nthr) {
    const int j = i / a.e, col = i % a.e, it = j * grps + col / V, il = j * grps + ngrp;
    float o = 0.f, L = 0.f;
    for (int sl = 0; sl < S; ++sl) {
      o += part[(sl * items + it) * V + col % V];
      L += part[(sl * items + il) * V];
    }
    out[i] = Storage<T>::from_f(o * (a.vscale / L));
  }
}

}  // namespace opbench::kernels::tpa

// The 1d row machinery: a Lane's loads of a step's rows into registers, its prefetch of a
// later step's rows into L2, and the staging of a step's rows in shared memory.
#pragma once
#include <cstdint>

#include "kernels/rows1d/lane.cuh"

namespace opbench::kernels::rows1d {

// The RPT rows of a step from s0 (rows past n or past B with batch rows, and units past the
// row, read as zeros).
template <class OP, typename T, int V>
template <int RPT, bool NEEDX, bool NEEDD, bool BR>
__device__ __forceinline__ void Lane<OP, T, V>::load(int64_t s0, Raw<T, V> (&xr)[RPT][UPT][P],
                                                    Raw<T, V> (&dr)[RPT][UPT][Q]) const {
  const T* X = static_cast<const T*>(a.x);
  const T* G = static_cast<const T*>(a.dout);
#pragma unroll
  for (int j = 0; j < RPT; ++j) {
    const int64_t s = row_s<BR>(s0, j);
    const bool ok = row_ok<BR>(s, j);
    const int64_t rx = row_x<BR>(s, j), ro = row_o<BR>(s, j);
#pragma unroll
    for (int i = 0; i < UPT; ++i) {
      if constexpr (NEEDX) {
#pragma unroll
        for (int p = 0; p < P; ++p)
          xr[j][i][p] = (ok && uv[i]) ? ld<T, V>(X + rx + u[i] * V + p * a.xhalf)
                                      : zero_raw<T, V>();
      }
      if constexpr (NEEDD) {
#pragma unroll
        for (int q = 0; q < Q; ++q)
          dr[j][i][q] = (ok && uv[i]) ? ld<T, V>(G + ro + u[i] * V + q * a.ohalf)
                                      : zero_raw<T, V>();
      }
    }
  }
}

// Prefetch into L2 the rows a later step will load (no registers held; the loads of that
// step then hit L2, and DRAM stays busy while this step computes).
template <class OP, typename T, int V>
template <int RPT, bool NEEDX, bool NEEDD, bool BR>
__device__ __forceinline__ void Lane<OP, T, V>::prefetch(int64_t s0) const {
  const T* X = static_cast<const T*>(a.x);
  const T* G = static_cast<const T*>(a.dout);
#pragma unroll
  for (int j = 0; j < RPT; ++j) {
    const int64_t s = row_s<BR>(s0, j);
    if (!row_ok<BR>(s, j)) continue;
    const int64_t rx = row_x<BR>(s, j), ro = row_o<BR>(s, j);
#pragma unroll
    for (int i = 0; i < UPT; ++i) {
      if (!uv[i]) continue;
      if constexpr (NEEDX) {
#pragma unroll
        for (int p = 0; p < P; ++p) prefetch_l2(X + rx + u[i] * V + p * a.xhalf);
      }
      if constexpr (NEEDD) {
#pragma unroll
        for (int q = 0; q < Q; ++q) prefetch_l2(G + ro + u[i] * V + q * a.ohalf);
      }
    }
  }
}

// Copy the RPT rows of a step from s0 into this thread's shared-memory slots (cp.async, 16-byte
// units only; rows past n and units past the row are written as zeros). The caller commits and
// waits for the copies.
template <class OP, typename T, int V>
template <int RPT, bool NEEDD>
__device__ __forceinline__ void Lane<OP, T, V>::stage(int64_t s0, uint4* slot, int stride) const {
  static_assert(sizeof(T) * V == 16, "staging moves 16-byte units");
  constexpr int NP = kNP<NEEDD>;
  const T* X = static_cast<const T*>(a.x);
  const T* G = static_cast<const T*>(a.dout);
#pragma unroll
  for (int j = 0; j < RPT; ++j) {
    const int64_t s = s0 + int64_t(j) * ds;
    const bool ok = s < a.N;
    const int64_t rx = row_x<false>(s, j), ro = row_o<false>(s, j);
#pragma unroll
    for (int i = 0; i < UPT; ++i) {
      const bool v = ok && uv[i];
#pragma unroll
      for (int p = 0; p < P; ++p)
        cp_async16(slot + ((j * UPT + i) * NP + p) * stride, v ? X + rx + u[i] * V + p * a.xhalf : X, v);
      if constexpr (NEEDD) {
#pragma unroll
        for (int q = 0; q < Q; ++q)
          cp_async16(slot + ((j * UPT + i) * NP + P + q) * stride,
                     v ? G + ro + u[i] * V + q * a.ohalf : G, v);
      }
    }
  }
}

// The rows stage() copied, from this thread's slots into registers.
template <class OP, typename T, int V>
template <int RPT, bool NEEDD>
__device__ __forceinline__ void Lane<OP, T, V>::load_staged(const uint4* slot, int stride,
                                                           Raw<T, V> (&xr)[RPT][UPT][P],
                                                           Raw<T, V> (&dr)[RPT][UPT][Q]) const {
  constexpr int NP = kNP<NEEDD>;
#pragma unroll
  for (int j = 0; j < RPT; ++j)
#pragma unroll
    for (int i = 0; i < UPT; ++i) {
#pragma unroll
      for (int p = 0; p < P; ++p)
        *reinterpret_cast<uint4*>(&xr[j][i][p]) = slot[((j * UPT + i) * NP + p) * stride];
      if constexpr (NEEDD) {
#pragma unroll
        for (int q = 0; q < Q; ++q)
          *reinterpret_cast<uint4*>(&dr[j][i][q]) = slot[((j * UPT + i) * NP + P + q) * stride];
      }
    }
}

}  // namespace opbench::kernels::rows1d

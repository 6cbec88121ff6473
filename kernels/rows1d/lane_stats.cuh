// The 1d row machinery: a Lane's online column statistics over a step's rows, the first pass of
// softmax over the sequence (softmax_seq.cuh).
#pragma once
#include <cmath>
#include <cstdint>

#include "kernels/rows1d/lane.cuh"
#include "kernels/rows1d/lane_io.cuh"

namespace opbench::kernels::rows1d {

// Online column statistics over RPT rows (softmax over the sequence, first pass):
// m = max x, l = sum exp(x - m), and (backward) t = sum exp(x - m) * g with g = dxa.
template <class OP, typename T, int V>
template <bool BWD, int RPT>
__device__ __forceinline__ void Lane<OP, T, V>::accumulate(int64_t s0, Vals& m, Vals& l, Vals& t) const {
  Raw<T, V> xr[RPT][UPT][P];
  Raw<T, V> dr[RPT][UPT][Q];
  load<RPT, true, BWD>(s0, xr, dr);
  accumulate_rows<BWD, RPT>(s0, xr, dr, m, l, t);
}

// The same over rows already loaded (xr, dr: the rows s0 + j * ds).
template <class OP, typename T, int V>
template <bool BWD, int RPT>
__device__ __forceinline__ void Lane<OP, T, V>::accumulate_rows(int64_t s0,
                                                               const Raw<T, V> (&xr)[RPT][UPT][P],
                                                               const Raw<T, V> (&dr)[RPT][UPT][Q],
                                                               Vals& m, Vals& l, Vals& t) const {
  float xv[RPT][UPT][P][V];
#pragma unroll
  for (int j = 0; j < RPT; ++j) {
    const bool ok = s0 + int64_t(j) * ds < a.N;
#pragma unroll
    for (int i = 0; i < UPT; ++i)
#pragma unroll
      for (int p = 0; p < P; ++p) {
        unpack<T, V>(xr[j][i][p], xv[j][i][p]);
#pragma unroll
        for (int e = 0; e < V; ++e)
          if (!ok) xv[j][i][p][e] = -INFINITY;  // exp(-inf - m) = 0: no contribution
      }
  }
  float mn[UPT][P][V];
  each([&](int i, int p, int e) {
    float v = m[i][p][e];
#pragma unroll
    for (int j = 0; j < RPT; ++j) v = fmaxf(v, xv[j][i][p][e]);
    mn[i][p][e] = v;
    const float scale = __expf(m[i][p][e] - v);
    l[i][p][e] *= scale;
    if constexpr (BWD) t[i][p][e] *= scale;
    m[i][p][e] = v;
  });
#pragma unroll
  for (int j = 0; j < RPT; ++j) {
    float g[UPT][P][V];
    if constexpr (BWD) {
      float c[UPT][V], s[UPT][V];
      angles(s0 + int64_t(j) * ds, c, s);
#pragma unroll
      for (int i = 0; i < UPT; ++i) {
        float dv[Q][V];
#pragma unroll
        for (int q = 0; q < Q; ++q) unpack<T, V>(dr[j][i][q], dv[q]);
        OP::template bwd<V>(dv, c[i], s[i], g[i]);
      }
    }
    each([&](int i, int p, int e) {
      const float ex = __expf(xv[j][i][p][e] - mn[i][p][e]);
      l[i][p][e] += ex;
      if constexpr (BWD) t[i][p][e] = fmaf(ex, g[i][p][e], t[i][p][e]);
    });
  }
}

}  // namespace opbench::kernels::rows1d

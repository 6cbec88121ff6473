// The 1d row machinery: one step of a Lane, its rows loaded and turned into outputs: the
// activation (elementwise, softmax over the row's features, or softmax over the sequence from
// column statistics), the op's math (OP::fwd, OP::bwd) and the stores.
#pragma once
#include <cfloat>
#include <cstdint>

#include "kernels/rows1d/lane.cuh"
#include "kernels/rows1d/lane_io.cuh"

namespace opbench::kernels::rows1d {

// Softmax of one row (feature softmax): o = exp(x - max) / sum, over the whole row group.
template <class OP, typename T, int V>
__device__ __forceinline__ void Lane<OP, T, V>::row_softmax(const Vals& x, Vals& o) const {
  float mx = -FLT_MAX;
  each([&](int i, int p, int e) {
    if (uv[i]) mx = fmaxf(mx, x[i][p][e]);
  });
  mx = group_max(mx, tprc);
  float sum = 0.f;
  each([&](int i, int p, int e) {
    o[i][p][e] = uv[i] ? __expf(x[i][p][e] - mx) : 0.f;
    sum += o[i][p][e];
  });
  const float inv = 1.f / group_sum(sum, tprc);
  each([&](int i, int p, int e) { o[i][p][e] *= inv; });
}

// One step: RPT rows s0 + j * ds, forward (o from x) or backward (dx from x and dout).
// S == seq: Mp = m + log(l) per column, R = sum over n of o * g (backward).
template <class OP, typename T, int V>
template <Act A, Soft S, bool BWD, int RPT, bool BR>
__device__ __forceinline__ void Lane<OP, T, V>::apply(int64_t s0, const Vals& Mp, const Vals& R) const {
  Raw<T, V> xr[RPT][UPT][P];
  Raw<T, V> dr[RPT][UPT][Q];
  load<RPT, kNeedX<A, S, BWD>, BWD, BR>(s0, xr, dr);
  process<A, S, BWD, RPT, BR>(s0, xr, dr, Mp, R);
}

// The compute and the stores of one step whose rows are already loaded (xr, dr). With batch
// rows (BR) the step's rows share s, so their angles are evaluated once.
template <class OP, typename T, int V>
template <Act A, Soft S, bool BWD, int RPT, bool BR>
__device__ __forceinline__ void Lane<OP, T, V>::process(int64_t s0, const Raw<T, V> (&xr)[RPT][UPT][P],
                                                       const Raw<T, V> (&dr)[RPT][UPT][Q],
                                                       const Vals& Mp, const Vals& R) const {
  constexpr bool needx = Lane::kNeedX<A, S, BWD>;
  T* O = static_cast<T*>(a.out);
  float c[UPT][V], s[UPT][V];
  if constexpr (BR) angles(s0, c, s);
#pragma unroll
  for (int j = 0; j < RPT; ++j) {
    const int64_t sj = row_s<BR>(s0, j);
    const bool ok = row_ok<BR>(sj, j);
    if constexpr (!BR) angles(sj, c, s);
    float xv[UPT][P][V];
#pragma unroll
    for (int i = 0; i < UPT; ++i)
#pragma unroll
      for (int p = 0; p < P; ++p) {
        if constexpr (needx) unpack<T, V>(xr[j][i][p], xv[i][p]);
        else
#pragma unroll
          for (int e = 0; e < V; ++e) xv[i][p][e] = 0.f;
      }
    if constexpr (!BWD) {
      float xa[UPT][P][V];
      if constexpr (S == Soft::feat) {
        row_softmax(xv, xa);
      } else {
        each([&](int i, int p, int e) {
          if constexpr (S == Soft::seq) xa[i][p][e] = __expf(xv[i][p][e] - Mp[i][p][e]);
          else xa[i][p][e] = fact_fwd<A>(xv[i][p][e]);
        });
      }
#pragma unroll
      for (int i = 0; i < UPT; ++i) {
        float o[Q][V];
        OP::template fwd<V>(xa[i], c[i], s[i], o);
        if (ok && uv[i]) {
#pragma unroll
          for (int q = 0; q < Q; ++q)
            st<T, V>(O + row_o<BR>(sj, j) + u[i] * V + q * a.ohalf, pack<T, V>(o[q]), a.cs);
        }
      }
    } else {
      float g[UPT][P][V];
#pragma unroll
      for (int i = 0; i < UPT; ++i) {
        float dv[Q][V];
#pragma unroll
        for (int q = 0; q < Q; ++q) unpack<T, V>(dr[j][i][q], dv[q]);
        OP::template bwd<V>(dv, c[i], s[i], g[i]);
      }
      float dx[UPT][P][V];
      if constexpr (S == Soft::elem) {
        each([&](int i, int p, int e) { dx[i][p][e] = fact_bwd<A>(xv[i][p][e], g[i][p][e]); });
      } else if constexpr (S == Soft::feat) {
        float o[UPT][P][V];
        row_softmax(xv, o);
        float dot = 0.f;
        each([&](int i, int p, int e) { dot += o[i][p][e] * g[i][p][e]; });  // o = 0 off the row
        dot = group_sum(dot, tprc);
        each([&](int i, int p, int e) { dx[i][p][e] = o[i][p][e] * (g[i][p][e] - dot); });
      } else {
        each([&](int i, int p, int e) {
          const float o = __expf(xv[i][p][e] - Mp[i][p][e]);
          dx[i][p][e] = o * (g[i][p][e] - R[i][p][e]);
        });
      }
#pragma unroll
      for (int i = 0; i < UPT; ++i)
        if (ok && uv[i]) {
#pragma unroll
          for (int p = 0; p < P; ++p)
            st<T, V>(O + row_x<BR>(sj, j) + u[i] * V + p * a.xhalf, pack<T, V>(dx[i][p]), a.cs);
        }
    }
  }
}

}  // namespace opbench::kernels::rows1d

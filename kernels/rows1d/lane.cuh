// The 1d row machinery's Lane: one thread's view of a tile, its head, its units, its angle
// constants and the rows of a step; Lane::each runs a function for every (unit, piece, element)
// of a thread's values, the loops unrolled. Its operations are defined by idea: loads and prefetch
// (lane_io.cuh), the math and stores of a step (lane_step.cuh), column statistics
// (lane_stats.cuh).
#pragma once
#include <cstdint>

#include "kernels/common.cuh"
#include "kernels/rows1d/args.h"
#include "kernels/rows1d/math.cuh"
#include "kernels/rows1d/units.cuh"

namespace opbench::kernels::rows1d {

// One thread's view: its head, its units, its angle constants, and the rows of a step.
template <class OP, typename T, int V>
struct Lane {
  static constexpr int UPT = 8 / V;  // units per thread: 8 elements per piece
  static constexpr int P = OP::P, Q = OP::Q, kV = V;
  using Vals = float[UPT][P][V];

  // f(i, p, e) for every value of a Vals, the three loops unrolled, in the order i, p, e (e
  // innermost): a reduction over the values through it keeps the loops' order.
  template <class F>
  static __device__ __forceinline__ void each(F f) {
#pragma unroll
    for (int i = 0; i < UPT; ++i)
#pragma unroll
      for (int p = 0; p < P; ++p)
#pragma unroll
        for (int e = 0; e < V; ++e) f(i, p, e);
  }

  const Args& a;
  const float* tab;            // theta table in shared memory (kAngle)
  int64_t xrow = 0, orow = 0;  // element offsets of row s = 0 of (b, h)
  int tprc = 1;                // lanes of the row group (for feature softmax: the whole row)
  int ds = 1;                  // rows between this thread's consecutive rows
  int tab0 = 0;                // this thread's head in the table: hl * U
  int64_t nbr = 0;             // batch rows (BR): batches from this tile's first one to B
  int u[UPT];
  bool uv[UPT];

  __device__ __forceinline__ Lane(const Args& args, const float* table, int hl, int64_t b,
                                  int64_t h, int ubase, int tpr, int tprc_, int ds_)
      : a(args), tab(table), tprc(tprc_), ds(ds_) {
    xrow = b * a.xsb + h * a.xsh;
    orow = b * a.osb + h * a.osh;
    tab0 = hl * a.U;
#pragma unroll
    for (int i = 0; i < UPT; ++i) {
      u[i] = ubase + i * tpr;
      uv[i] = u[i] < a.U;
    }
  }

  // Statistics per column of this thread, used by softmax over the sequence.
  __device__ __forceinline__ int64_t col(int64_t bh, int i, int p, int e) const {
    return bh * a.D + u[i] * V + e + p * a.xhalf;
  }

  // cos and sin of the angles of row s for this thread's units (theta from the table; invalid
  // units read a valid entry, unused).
  __device__ __forceinline__ void angles(int64_t s_row, float (&c)[UPT][V], float (&s)[UPT][V]) const {
    if constexpr (OP::kAngle) {
      const int64_t pos = a.offset + s_row;
#pragma unroll
      for (int i = 0; i < UPT; ++i) {
        const float* t = tab + (tab0 + (uv[i] ? u[i] : 0)) * V;
        float th[V];
        if constexpr (V % 4 == 0) {
#pragma unroll
          for (int e = 0; e < V; e += 4) {
            const float4 v = *reinterpret_cast<const float4*>(t + e);
            th[e] = v.x, th[e + 1] = v.y, th[e + 2] = v.z, th[e + 3] = v.w;
          }
        } else {
#pragma unroll
          for (int e = 0; e < V; ++e) th[e] = t[e];
        }
#pragma unroll
        for (int e = 0; e < V; ++e) sincos_angle(angle_of(pos, th[e]), s[i][e], c[i][e]);
      }
    }
  }

  // Row j of a step: the row s0 + j * ds of this (b, h), or with batch rows (BR) the row s0
  // of batch b + j. Its sequence index, whether it exists, and its offsets in x and in o.
  template <bool BR>
  __device__ __forceinline__ int64_t row_s(int64_t s0, int j) const {
    return BR ? s0 : s0 + int64_t(j) * ds;
  }
  template <bool BR>
  __device__ __forceinline__ bool row_ok(int64_t s, int j) const {
    return BR ? (s < a.N && j < nbr) : s < a.N;
  }
  template <bool BR>
  __device__ __forceinline__ int64_t row_x(int64_t s, int j) const {
    return xrow + (BR ? int64_t(j) * a.xsb : 0) + s * a.xss;
  }
  template <bool BR>
  __device__ __forceinline__ int64_t row_o(int64_t s, int j) const {
    return orow + (BR ? int64_t(j) * a.osb : 0) + s * a.oss;
  }

  // Loads and L2 prefetch of a step's rows (lane_io.cuh).
  template <int RPT, bool NEEDX, bool NEEDD, bool BR = false>
  __device__ __forceinline__ void load(int64_t s0, Raw<T, V> (&xr)[RPT][UPT][P],
                                       Raw<T, V> (&dr)[RPT][UPT][Q]) const;
  template <int RPT, bool NEEDX, bool NEEDD, bool BR = false>
  __device__ __forceinline__ void prefetch(int64_t s0) const;

  // One step: its rows loaded (apply) or given (process), the activation, OP's math and the
  // stores; row_softmax is the feature softmax of one row (lane_step.cuh). A step needs x
  // unless it is the backward of an elementwise act none.
  template <Act A, Soft S, bool BWD>
  static constexpr bool kNeedX = !BWD || S != Soft::elem || A != Act::none;
  template <Act A, Soft S, bool BWD, int RPT, bool BR = false>
  __device__ __forceinline__ void apply(int64_t s0, const Vals& Mp, const Vals& R) const;
  template <Act A, Soft S, bool BWD, int RPT, bool BR = false>
  __device__ __forceinline__ void process(int64_t s0, const Raw<T, V> (&xr)[RPT][UPT][P],
                                          const Raw<T, V> (&dr)[RPT][UPT][Q], const Vals& Mp,
                                          const Vals& R) const;
  __device__ __forceinline__ void row_softmax(const Vals& x, Vals& o) const;

  // A step's rows staged in shared memory (softmax over the sequence, resident strategy;
  // lane_io.cuh): the units load() reads, copied without registers (cp.async) into this thread's
  // own slots, piece k of unit i of row j at slot[((j * UPT + i) * NP + k) * stride] (NP = P
  // pieces of x, then Q of dout when NEEDD), and read back from there.
  template <bool NEEDD>
  static constexpr int kNP = P + (NEEDD ? Q : 0);
  template <int RPT, bool NEEDD>
  __device__ __forceinline__ void stage(int64_t s0, uint4* slot, int stride) const;
  template <int RPT, bool NEEDD>
  __device__ __forceinline__ void load_staged(const uint4* slot, int stride,
                                              Raw<T, V> (&xr)[RPT][UPT][P],
                                              Raw<T, V> (&dr)[RPT][UPT][Q]) const;

  // Online column statistics over a step's rows, softmax over the sequence (lane_stats.cuh):
  // loaded here (accumulate) or already loaded (accumulate_rows).
  template <bool BWD, int RPT>
  __device__ __forceinline__ void accumulate(int64_t s0, Vals& m, Vals& l, Vals& t) const;
  template <bool BWD, int RPT>
  __device__ __forceinline__ void accumulate_rows(int64_t s0, const Raw<T, V> (&xr)[RPT][UPT][P],
                                                  const Raw<T, V> (&dr)[RPT][UPT][Q], Vals& m,
                                                  Vals& l, Vals& t) const;
};

}  // namespace opbench::kernels::rows1d

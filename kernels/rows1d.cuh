// Row machinery shared by the 1d kernels (act, lrpe_cosine, lrpe_rotate): one pass over rows of
// d features, the activation fused in front of the positional encoding, no intermediate tensor.
//
// A row is the d-vector of one (b, s, h): x[b*xsb + h*xsh + s*xss + k]; act's x is (b, h, n, d)
// and lrpe's (b, n, h, d), so only the strides differ. A row is cut into "units" of V elements
// (16 bytes: 8 bf16/fp16 or 4 fp32; V = 1 on the scalar path for d that is not a multiple of V
// or unaligned pointers). Each op says how many pieces a unit has in x (P: rotate reads the two
// halves x1, x2 of the pair) and in the output-shaped tensor (Q: cosine writes cos and sin halves):
//   act     P = 1, Q = 1   o = xa
//   cosine  P = 1, Q = 2   o = [xa cos, xa sin]                       dxa = do_c cos + do_s sin
//   rotate  P = 2, Q = 2   o = [xa1 c - xa2 s, xa1 s + xa2 c]         dxa1 = do1 c + do2 s,
//                                                                      dxa2 = do2 c - do1 s
// Threads: a block of 256 threads is RG row groups of TPR threads (TPR a power of two covering
// the row's units, UPT = 8 / V units per thread, so every thread holds 8 elements per piece).
// A tile is (b, HB heads, a range of s); row group g takes head g % HB and rows
// s = s_tile + g / HB + j * ds (ds = RG / HB), RPT rows loaded per step (16-byte loads all
// issued before the first use), `steps` steps per tile, and before each step the next step's
// rows are prefetched into L2 (prefetch.global.L2: no registers held, DRAM kept busy while a
// step computes). For lrpe, HB heads side by side make each load instruction of a block cover
// HB whole contiguous rows.
//
// Angles: angle = (offset + s) * theta[h, k] in float32, as OPS.md states and the torch
// baseline computes it (the product rounded to float32: at s = 32768 that rounding moves the
// angle by up to 2e-3 rad, so it is part of the op's definition). sin and cos of that float
// are evaluated accurately at any size: a three-term Cody-Waite reduction mod pi/2 with FMAs,
// then the fast sin/cos on |r| <= pi/4 (absolute error 2^-21.4 ~ 4e-7); __sinf on the raw
// angle would be off by ~1e-3 at 32768. Softmax over features is a shuffle reduction inside
// the row group; softmax over the sequence uses column statistics (softmax_seq.cuh).
#pragma once
#include <cfloat>
#include <cstdint>
#include <string>
#include <type_traits>

#include "args1d.h"
#include "common.cuh"

namespace opbench::kernels::rows1d {

constexpr int kThreads = 256;
// theta table entries in shared memory: HB heads x U units x V (tiles of HB heads), or one
// piece of <= 256 entries (block strategy).
constexpr int kTab = 1024;
constexpr int kTabPiece = 256;

// How the activation is applied: elementwise, softmax over the row's features, or softmax
// over the sequence with precomputed column statistics.
enum class Soft { elem, feat, seq };

// Kernel arguments, passed by value.
struct Args {
  const void* x = nullptr;
  const void* dout = nullptr;  // bwd: gradient of the output (output-shaped)
  void* out = nullptr;         // fwd: o (output-shaped); bwd: dx (x-shaped)
  const float* theta = nullptr;
  int64_t th_sh = 0, th_sk = 0;
  int64_t offset = 0;
  const float* stats = nullptr;  // softmax over n: per column m + log(l) [, sum(o * g)]
  float* partial = nullptr;      // split strategy: per (b, h, chunk, k) partial statistics
  int64_t B = 0, H = 0, N = 0;
  int D = 0;       // features of a row of x
  int U = 0;       // units per piece
  int xhalf = 0;   // element offset of piece 1 in a row of x (rotate: d / 2)
  int ohalf = 0;   // element offset of piece 1 in a row of the output (cosine: d, rotate: d / 2)
  int64_t xsb = 0, xsh = 0, xss = 0;  // row strides of x and dx
  int64_t osb = 0, osh = 0, oss = 0;  // row strides of o and dout
  int tpr_shift = 0;   // log2 threads covering a whole row
  int tprc_shift = 0;  // log2 threads of a row group (block strategy: a column group)
  int hb_shift = 0;    // log2 heads per tile
  int steps = 1;       // steps of RPT rows per tile
  int64_t tiles_s = 1; // tiles along s
  int h_fast = 0;      // tile order: heads fastest (lrpe) or s fastest (act)
  int64_t ncols = 0;   // B * H * D
  int nchunks = 1;     // split strategy: chunks along s
  bool cs = true;      // streaming stores (st.global.cs) for the outputs
};

// ---------------------------------------------------------------------------------------------
// Units of V storage elements: 16-byte vectors, or single elements on the scalar path.

template <typename T, int V>
struct alignas(sizeof(T) * V) Raw {
  T v[V];
};

template <typename T, int V>
__device__ __forceinline__ Raw<T, V> zero_raw() {
  Raw<T, V> r;
  if constexpr (sizeof(T) * V == 16) {
    *reinterpret_cast<int4*>(&r) = make_int4(0, 0, 0, 0);
  } else {
#pragma unroll
    for (int i = 0; i < V; ++i) r.v[i] = Storage<T>::from_f(0.f);
  }
  return r;
}

// One unit from global memory: through the read-only path (ld.global.nc), or with kPlain a
// plain ld.global (what ATen's elementwise kernels use; act's small forward calls measured
// faster with it, act.cu flat_shape).
template <typename T, int V, bool kPlain = false>
__device__ __forceinline__ Raw<T, V> ld(const T* p) {
  Raw<T, V> r;
  if constexpr (sizeof(T) * V == 16) {
    if constexpr (kPlain) {
      int4 v;
      asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                   : "l"(p));
      *reinterpret_cast<int4*>(&r) = v;
    } else {
      *reinterpret_cast<int4*>(&r) = __ldg(reinterpret_cast<const int4*>(p));
    }
  } else {
    static_assert(V == 1, "a unit is 16 bytes or one element");
    r.v[0] = kPlain ? *p : __ldg(p);
  }
  return r;
}

__device__ __forceinline__ void prefetch_l2(const void* p) {
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}

// cs: a streaming store (st.global.cs, evict-first), else a plain write-back store.
template <typename T, int V>
__device__ __forceinline__ void st(T* p, const Raw<T, V>& r, bool cs) {
  if constexpr (sizeof(T) * V == 16) {
    if (cs) __stcs(reinterpret_cast<int4*>(p), *reinterpret_cast<const int4*>(&r));
    else *reinterpret_cast<int4*>(p) = *reinterpret_cast<const int4*>(&r);
  } else {
    static_assert(V == 1, "a unit is 16 bytes or one element");
    *p = r.v[0];
  }
}

template <typename T, int V>
__device__ __forceinline__ void unpack(const Raw<T, V>& r, float (&f)[V]) {
  if constexpr (std::is_same_v<T, float>) {
#pragma unroll
    for (int i = 0; i < V; ++i) f[i] = r.v[i];
  } else if constexpr (V == 1) {
    f[0] = Storage<T>::to_f(r.v[0]);
  } else if constexpr (std::is_same_v<T, __half>) {
#pragma unroll
    for (int i = 0; i < V / 2; ++i) {
      const float2 t = __half22float2(*reinterpret_cast<const __half2*>(&r.v[2 * i]));
      f[2 * i] = t.x;
      f[2 * i + 1] = t.y;
    }
  } else {
#pragma unroll
    for (int i = 0; i < V / 2; ++i) {
      const float2 t = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&r.v[2 * i]));
      f[2 * i] = t.x;
      f[2 * i + 1] = t.y;
    }
  }
}

template <typename T, int V>
__device__ __forceinline__ Raw<T, V> pack(const float (&f)[V]) {
  Raw<T, V> r;
  if constexpr (std::is_same_v<T, float>) {
#pragma unroll
    for (int i = 0; i < V; ++i) r.v[i] = f[i];
  } else if constexpr (V == 1) {
    r.v[0] = Storage<T>::from_f(f[0]);
  } else if constexpr (std::is_same_v<T, __half>) {
#pragma unroll
    for (int i = 0; i < V / 2; ++i)
      *reinterpret_cast<__half2*>(&r.v[2 * i]) = __floats2half2_rn(f[2 * i], f[2 * i + 1]);
  } else {
#pragma unroll
    for (int i = 0; i < V / 2; ++i)
      *reinterpret_cast<__nv_bfloat162*>(&r.v[2 * i]) =
          __floats2bfloat162_rn(f[2 * i], f[2 * i + 1]);
  }
  return r;
}

// ---------------------------------------------------------------------------------------------
// The float32 angle of position pos (exact integer below 2^24) and frequency th.
__device__ __forceinline__ float angle_of(int64_t pos, float th) {
  return __fmul_rn(static_cast<float>(pos), th);
}

// sin and cos of a float32 angle p, absolute error ~5e-7 for |p| < 4e6 (the reduction's
// roundings grow as |p| * 2^-47 beyond). k = nearest multiple of pi/2; r = p - k pi/2 with
// pi/2 = C1 + C2 + C3 (FMAs, so k * C1 needs no exact split); q = k mod 4 picks the quadrant.
__device__ __forceinline__ void sincos_angle(float p, float& s, float& c) {
  const float k = rintf(p * 0x1.45f306p-1f);  // p * 2/pi
  float r = fmaf(k, -0x1.921fb6p+0f, p);      // C1 = 0x1.921fb6p+0
  r = fmaf(k, 0x1.777a5cp-25f, r);            // C2 = -0x1.777a5cp-25
  r = fmaf(k, 0x1.ee59dap-50f, r);            // C3 = -0x1.ee59dap-50
  const float q = k - 4.f * floorf(0.25f * k);  // k mod 4, exact for any float k
  float sr, cr;
  __sincosf(r, &sr, &cr);
  const bool odd = q == 1.f || q == 3.f, neg = q >= 2.f;
  const float s1 = odd ? cr : sr, c1 = odd ? -sr : cr;
  s = neg ? -s1 : s1;
  c = neg ? -c1 : c1;
}

// Elementwise activations in float32 with the fast reciprocal (MUFU.RCP, 2 ulp) instead of an
// IEEE division: s(x) = 1 / (1 + e^-x); e^-x = inf for x < -88 gives s = 0, as it should.
__device__ __forceinline__ float fsig(float x) { return __fdividef(1.f, 1.f + __expf(-x)); }
template <Act A>
__device__ __forceinline__ float fact_fwd(float x) {
  if constexpr (A == Act::relu) return x >= 0.f ? x : 0.f;
  else if constexpr (A == Act::sigmoid) return fsig(x);
  else if constexpr (A == Act::silu) return __fdividef(x, 1.f + __expf(-x));
  else return x;
}
template <Act A>
__device__ __forceinline__ float fact_bwd(float x, float g) {
  if constexpr (A == Act::relu) return x >= 0.f ? g : 0.f;
  else if constexpr (A == Act::sigmoid) { const float s = fsig(x); return g * s * (1.f - s); }
  else if constexpr (A == Act::silu) { const float s = fsig(x); return g * s * fmaf(x, 1.f - s, 1.f); }
  else return g;
}

// Reductions inside a row group of `width` lanes (a power of two <= 32, aligned in the warp).
// Every lane of the warp must call these (no divergence around them).
__device__ __forceinline__ float group_max(float v, int width) {
  for (int off = width >> 1; off > 0; off >>= 1)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
  return v;
}
__device__ __forceinline__ float group_sum(float v, int width) {
  for (int off = width >> 1; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}

// Merge of online-softmax statistics (max m, sum of exp(x - m) l, sum of exp(x - m) g t).
// Empty statistics are (-FLT_MAX, 0, 0): finite, so no inf - inf appears.
__device__ __forceinline__ void merge_stats(float& m, float& l, float& t, float m2, float l2,
                                            float t2) {
  const float mm = fmaxf(m, m2);
  const float a1 = __expf(m - mm), a2 = __expf(m2 - mm);
  m = mm;
  l = l * a1 + l2 * a2;
  t = t * a1 + t2 * a2;
}

// ---------------------------------------------------------------------------------------------
// One thread's view: its head, its units, its angle constants, and the two row operations.

template <class OP, typename T, int V>
struct Lane {
  static constexpr int UPT = 8 / V;  // units per thread: 8 elements per piece
  static constexpr int P = OP::P, Q = OP::Q, kV = V;
  using Vals = float[UPT][P][V];

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

  template <int RPT, bool NEEDX, bool NEEDD, bool BR = false>
  __device__ __forceinline__ void load(int64_t s0, Raw<T, V> (&xr)[RPT][UPT][P],
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
  template <int RPT, bool NEEDX, bool NEEDD, bool BR = false>
  __device__ __forceinline__ void prefetch(int64_t s0) const {
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

  // Softmax of one row (feature softmax): o = exp(x - max) / sum, over the whole row group.
  __device__ __forceinline__ void row_softmax(const Vals& x, Vals& o) const {
    float mx = -FLT_MAX;
#pragma unroll
    for (int i = 0; i < UPT; ++i)
#pragma unroll
      for (int p = 0; p < P; ++p)
#pragma unroll
        for (int e = 0; e < V; ++e)
          if (uv[i]) mx = fmaxf(mx, x[i][p][e]);
    mx = group_max(mx, tprc);
    float sum = 0.f;
#pragma unroll
    for (int i = 0; i < UPT; ++i)
#pragma unroll
      for (int p = 0; p < P; ++p)
#pragma unroll
        for (int e = 0; e < V; ++e) {
          o[i][p][e] = uv[i] ? __expf(x[i][p][e] - mx) : 0.f;
          sum += o[i][p][e];
        }
    const float inv = 1.f / group_sum(sum, tprc);
#pragma unroll
    for (int i = 0; i < UPT; ++i)
#pragma unroll
      for (int p = 0; p < P; ++p)
#pragma unroll
        for (int e = 0; e < V; ++e) o[i][p][e] *= inv;
  }

  // One step: RPT rows s0 + j * ds, forward (o from x) or backward (dx from x and dout).
  // S == seq: Mp = m + log(l) per column, R = sum over n of o * g (backward).
  template <Act A, Soft S, bool BWD>
  static constexpr bool kNeedX = !BWD || S != Soft::elem || A != Act::none;

  template <Act A, Soft S, bool BWD, int RPT, bool BR = false>
  __device__ __forceinline__ void apply(int64_t s0, const Vals& Mp, const Vals& R) const {
    Raw<T, V> xr[RPT][UPT][P];
    Raw<T, V> dr[RPT][UPT][Q];
    load<RPT, kNeedX<A, S, BWD>, BWD, BR>(s0, xr, dr);
    process<A, S, BWD, RPT, BR>(s0, xr, dr, Mp, R);
  }

  // The compute and the stores of one step whose rows are already loaded (xr, dr). With batch
  // rows (BR) the step's rows share s, so their angles are evaluated once.
  template <Act A, Soft S, bool BWD, int RPT, bool BR = false>
  __device__ __forceinline__ void process(int64_t s0, const Raw<T, V> (&xr)[RPT][UPT][P],
                                          const Raw<T, V> (&dr)[RPT][UPT][Q], const Vals& Mp,
                                          const Vals& R) const {
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
#pragma unroll
          for (int i = 0; i < UPT; ++i)
#pragma unroll
            for (int p = 0; p < P; ++p)
#pragma unroll
              for (int e = 0; e < V; ++e) {
                if constexpr (S == Soft::seq) xa[i][p][e] = __expf(xv[i][p][e] - Mp[i][p][e]);
                else xa[i][p][e] = fact_fwd<A>(xv[i][p][e]);
              }
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
#pragma unroll
          for (int i = 0; i < UPT; ++i)
#pragma unroll
            for (int p = 0; p < P; ++p)
#pragma unroll
              for (int e = 0; e < V; ++e) dx[i][p][e] = fact_bwd<A>(xv[i][p][e], g[i][p][e]);
        } else if constexpr (S == Soft::feat) {
          float o[UPT][P][V];
          row_softmax(xv, o);
          float dot = 0.f;
#pragma unroll
          for (int i = 0; i < UPT; ++i)
#pragma unroll
            for (int p = 0; p < P; ++p)
#pragma unroll
              for (int e = 0; e < V; ++e) dot += o[i][p][e] * g[i][p][e];  // o = 0 off the row
          dot = group_sum(dot, tprc);
#pragma unroll
          for (int i = 0; i < UPT; ++i)
#pragma unroll
            for (int p = 0; p < P; ++p)
#pragma unroll
              for (int e = 0; e < V; ++e) dx[i][p][e] = o[i][p][e] * (g[i][p][e] - dot);
        } else {
#pragma unroll
          for (int i = 0; i < UPT; ++i)
#pragma unroll
            for (int p = 0; p < P; ++p)
#pragma unroll
              for (int e = 0; e < V; ++e) {
                const float o = __expf(xv[i][p][e] - Mp[i][p][e]);
                dx[i][p][e] = o * (g[i][p][e] - R[i][p][e]);
              }
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

  // Online column statistics over RPT rows (softmax over the sequence, first pass):
  // m = max x, l = sum exp(x - m), and (backward) t = sum exp(x - m) * g with g = dxa.
  template <bool BWD, int RPT>
  __device__ __forceinline__ void accumulate(int64_t s0, Vals& m, Vals& l, Vals& t) const {
    Raw<T, V> xr[RPT][UPT][P];
    Raw<T, V> dr[RPT][UPT][Q];
    load<RPT, true, BWD>(s0, xr, dr);
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
#pragma unroll
    for (int i = 0; i < UPT; ++i)
#pragma unroll
      for (int p = 0; p < P; ++p)
#pragma unroll
        for (int e = 0; e < V; ++e) {
          float v = m[i][p][e];
#pragma unroll
          for (int j = 0; j < RPT; ++j) v = fmaxf(v, xv[j][i][p][e]);
          mn[i][p][e] = v;
          const float scale = __expf(m[i][p][e] - v);
          l[i][p][e] *= scale;
          if constexpr (BWD) t[i][p][e] *= scale;
          m[i][p][e] = v;
        }
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
#pragma unroll
      for (int i = 0; i < UPT; ++i)
#pragma unroll
        for (int p = 0; p < P; ++p)
#pragma unroll
          for (int e = 0; e < V; ++e) {
            const float ex = __expf(xv[j][i][p][e] - mn[i][p][e]);
            l[i][p][e] += ex;
            if constexpr (BWD) t[i][p][e] = fmaf(ex, g[i][p][e], t[i][p][e]);
          }
    }
  }
};

// ---------------------------------------------------------------------------------------------
// The row kernel: one tile per block (b, HB heads, tiles of s), `steps` steps of RPT rows.

// Rows per step of an op's row kernel: along s, or with batch rows (BR) across batches (two
// for feature softmax and for float32's two units per thread: four of those spill registers).
template <class OP>
__host__ __device__ constexpr int rows_per_step(bool bwd, bool br, bool feat, bool f32) {
  return br ? (feat || f32 ? 2 : bwd ? OP::kRptBRB : OP::kRptBRF) : (bwd ? OP::kRptB : OP::kRptF);
}

struct Tile {
  int64_t b, h, s0;  // s0: this row group's first row
  int t, sl, hl, ds;
};

__device__ __forceinline__ Tile decode_tile(const Args& a, int64_t tile, int steps, int rpt,
                                            int64_t tiles_s) {
  const int HB = 1 << a.hb_shift;
  const int64_t hblks = a.H >> a.hb_shift;
  int64_t hblk, sc, b;
  if (a.h_fast) {
    hblk = tile % hblks;
    const int64_t r = tile / hblks;
    sc = r % tiles_s;
    b = r / tiles_s;
  } else {
    sc = tile % tiles_s;
    const int64_t r = tile / tiles_s;
    hblk = r % hblks;
    b = r / hblks;
  }
  Tile T;
  const int g = threadIdx.x >> a.tprc_shift;
  T.t = threadIdx.x & ((1 << a.tprc_shift) - 1);
  T.hl = g & (HB - 1);
  T.sl = g >> a.hb_shift;
  T.ds = (kThreads >> a.tprc_shift) >> a.hb_shift;
  T.b = b;
  T.h = hblk * HB + T.hl;
  T.s0 = sc * (int64_t(T.ds) * rpt * steps);  // the tile's first row (uniform in the block)
  return T;
}

// Fill the block's theta table for heads h0 .. h0 + nh - 1. Ends with a barrier.
template <class OP, int V>
__device__ __forceinline__ void fill_table(const Args& a, float* tab, int64_t h0, int nh) {
  if constexpr (OP::kAngle) {
    const int per = a.U * V;  // entries per head: the whole piece
    for (int idx = threadIdx.x; idx < nh * per; idx += kThreads) {
      const int hl = idx / per, k = idx - hl * per;
      tab[idx] = __ldg(a.theta + (h0 + hl) * a.th_sh + int64_t(k) * a.th_sk);
    }
    __syncthreads();
  }
}

// PF: before each step, prefetch the next step's rows into L2 (see Lane::prefetch).
// BR (batch rows): a step's RPT rows are RPT batches at one s (angles evaluated once per step),
// and the tile's "b" counts groups of RPT batches; otherwise RPT rows along s of one batch.
template <class OP, typename T, int V, Act A, Soft S, bool BWD, bool PF, bool BR = false>
__global__ void __launch_bounds__(kThreads, (BWD || S == Soft::seq) ? 2 : 3) rows_kernel(const Args a) {
  constexpr int RPT = rows_per_step<OP>(BWD, BR, S == Soft::feat, sizeof(T) == 4);
  using L = Lane<OP, T, V>;
  constexpr bool kNeedX = L::template kNeedX<A, S, BWD>;
  const Tile tl = decode_tile(a, blockIdx.x, a.steps, BR ? 1 : RPT, a.tiles_s);
  __shared__ __align__(16) float tab[OP::kAngle ? kTab : 1];
  const int64_t b0 = BR ? tl.b * RPT : tl.b;
  L lane(a, tab, tl.hl, b0, tl.h, tl.t, 1 << a.tpr_shift, 1 << a.tprc_shift, tl.ds);
  lane.nbr = a.B - b0;
  // The first step's rows start coming while the theta table is filled.
  if constexpr (PF) lane.template prefetch<RPT, kNeedX, BWD, BR>(tl.s0 + tl.sl);
  fill_table<OP, V>(a, tab, tl.h - tl.hl, 1 << a.hb_shift);
  typename L::Vals Mp, R;
  if constexpr (S == Soft::seq) {
    const int64_t bh = tl.b * a.H + tl.h;
#pragma unroll
    for (int i = 0; i < L::UPT; ++i)
#pragma unroll
      for (int p = 0; p < L::P; ++p)
#pragma unroll
        for (int e = 0; e < V; ++e) {
          const int64_t c = lane.col(bh, i, p, e);
          Mp[i][p][e] = lane.uv[i] ? a.stats[c] : 0.f;
          R[i][p][e] = (BWD && lane.uv[i]) ? a.stats[a.ncols + c] : 0.f;
        }
  }
  const int64_t stride = int64_t(tl.ds) * (BR ? 1 : RPT);
  int64_t s0 = tl.s0;  // uniform in the block: so is the loop condition (shuffles inside)
  for (int step = 0; step < a.steps && s0 < a.N; ++step, s0 += stride) {
    if constexpr (PF)
      if (step + 1 < a.steps) lane.template prefetch<RPT, kNeedX, BWD, BR>(s0 + stride + tl.sl);
    lane.template apply<A, S, BWD, RPT, BR>(s0 + tl.sl, Mp, R);
  }
}

// ---------------------------------------------------------------------------------------------
// Host side: geometry of a call, shared by the three ops.

// One launch, described op-independently (the op files fill it from their public arguments).
struct Call {
  const char* op = "";
  DType dtype = DType::bf16;
  Act act = Act::none;
  bool seq = false;  // softmax over the sequence
  bool bwd = false;
  const void* x = nullptr;
  const void* dout = nullptr;
  void* out = nullptr;
  const float* theta = nullptr;
  int64_t th_sh = 0, th_sk = 0, offset = 0;
  int64_t B = 0, H = 0, N = 0;
  int D = 0;
  bool lrpe_layout = false;  // (b, n, h, d) rows; else (b, h, n, d)
  int piece = 0;             // elements per piece: d, or d / 2 for rotate
  int xhalf = 0, ohalf = 0;
  int orow_len = 0;          // elements per row of the output-shaped tensor
  void* ws = nullptr;
  size_t ws_bytes = 0;
  SeqStrategy strategy = SeqStrategy::automatic;
  cudaStream_t stream = nullptr;
};

inline int ilog2(int v) {
  int s = 0;
  while ((1 << s) < v) ++s;
  return s;
}

// Multiprocessors of the current device (cached per device).
inline int sm_count() {
  int dev = 0;
  OPBENCH_CUDA_CHECK(cudaGetDevice(&dev));
  static int cache[64] = {};
  if (dev >= 0 && dev < 64 && cache[dev] > 0) return cache[dev];
  int n = 0;
  OPBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev));
  if (dev >= 0 && dev < 64) cache[dev] = n;
  return n;
}

inline bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

struct Plan {
  int V = 1, U = 0, tpr_shift = 0, hb_shift = 0, ds = 1;
  bool br = false;      // row kernel: batch rows (a step's rows are batches at one s)
  int64_t bt = 1;       // row kernel: tiles along b (B, or groups of rpt batches with br)
  int64_t base = 1;     // tiles along s of one step each
  int steps = 1;        // row kernel: steps per tile
  int64_t tiles_s = 1;  // row kernel: tiles along s
  SeqStrategy strat = SeqStrategy::automatic;  // resolved to block or split when c.seq
  int cg_max_shift = 0; // block strategy: most column groups per row (>= 64 contiguous bytes)
  int cg_shift = 0;     // block strategy: column groups per row (set at launch, occupancy)
  int stats_steps = 1;  // split strategy: steps per chunk
  int nchunks = 1;      // split strategy: chunks along s
  size_t ws_floats = 0; // split strategy: statistics + partials
};

// Split strategy: chunks of n for the statistics pass: about `waves` x `slots` blocks (short
// blocks, so the last partial wave costs little), at most 64 chunks per column, >= 4 steps each.
inline void split_chunks(const Call& c, Plan& p, int64_t slots, int waves) {
  const int64_t hblks = c.H >> p.hb_shift;
  int64_t chunks = (slots * (waves < 1 ? 1 : waves)) / (c.B * hblks);
  const int64_t most = (p.base + 3) / 4 < 64 ? (p.base + 3) / 4 : 64;
  chunks = chunks > most ? most : chunks;
  chunks = chunks < 1 ? 1 : chunks;
  const int64_t ss = (p.base + chunks - 1) / chunks;
  p.stats_steps = int(ss);
  p.nchunks = int((p.base + ss - 1) / ss);
  const int nstat = c.bwd ? 2 : 1, nplane = c.bwd ? 3 : 2;
  p.ws_floats = size_t(nstat) * c.B * c.H * c.D + size_t(nplane) * c.B * c.H * size_t(p.nchunks) * c.D;
}

// Block strategy: the most column groups (a power of two <= the maximum) whose blocks are all
// resident at once (`slots` = blocks per SM x SMs); a second partial wave would double the time.
inline void block_groups(const Call& c, Plan& p, int64_t slots) {
  int cg = 1;
  while (cg * 2 <= (1 << p.cg_max_shift) && c.B * c.H * cg * 2 <= slots) cg *= 2;
  p.cg_shift = ilog2(cg);
}

// Whether a call takes 16-byte units (the piece a multiple of them, every tensor aligned).
inline bool vector_plan(const Call& c) {
  const int vec = 16 / dtype_size(c.dtype);
  return c.piece % vec == 0 && aligned16(c.x) && aligned16(c.out) && (!c.bwd || aligned16(c.dout));
}

// How an op runs its row kernel for one call: the most steps per tile, batch rows, and the L2
// prefetch of the next step. Each op chooses per variant from the measurements
// (docs/kernels.md); Tuning1d overrides any of the three.
struct RowChoice {
  int max_steps = 16;
  bool batch_rows = true;
  bool prefetch = false;
};

// A call is "large" when x holds at least 64 MiB: there the short tiles with prefetch pay;
// below, launch and tile start-up costs dominate and the long-tile settings stay.
inline bool large_call(const Call& c) {
  return double(c.B) * c.H * c.N * c.D * dtype_size(c.dtype) >= double(64 << 20);
}

// Geometry of a call. rpt: rows per step of the op's kernels; br: batch rows (rpt batches at
// one s per step) for the row kernel; max_steps: the most steps per tile.
inline Plan make_plan(const Call& c, int rpt, bool br, int max_steps) {
  Plan p;
  p.br = br;
  const int esz = dtype_size(c.dtype);
  const int vec = 16 / esz;
  p.V = vector_plan(c) ? vec : 1;
  p.U = c.piece / p.V;
  const int upt = 8 / p.V;
  const int per = (p.U + upt - 1) / upt;
  p.tpr_shift = ilog2(per);  // <= 5 for d <= 256
  const int rg = kThreads >> p.tpr_shift;
  const int sms = sm_count();
  if (c.lrpe_layout) {
    int hb = 1;
    while (hb * 2 <= rg && c.H % (hb * 2) == 0 && hb * 2 * c.piece <= kTab) hb *= 2;
    p.hb_shift = ilog2(hb);
  }
  p.ds = rg >> p.hb_shift;
  const int64_t hblks = c.H >> p.hb_shift;
  const int rpt_s = br ? 1 : rpt;  // rows per step along s
  p.bt = br ? (c.B + rpt - 1) / rpt : c.B;
  p.base = (c.N + int64_t(p.ds) * rpt_s - 1) / (int64_t(p.ds) * rpt_s);
  // Row kernel: up to max_steps steps per tile while keeping >= tile_blocks_per_sm (48)
  // blocks per SM, about 16 waves: the last partial wave costs little, longer tiles amortize
  // the theta table and give the prefetch a longer run.
  const Tuning1d& tu = tuning_1d();
  const int64_t per_sm = tu.tile_blocks_per_sm > 0 ? tu.tile_blocks_per_sm : 1;
  int64_t steps = (p.bt * hblks * p.base) / (per_sm * sms);
  const int64_t most = max_steps > 0 ? max_steps : 1;
  steps = steps < 1 ? 1 : (steps > most ? most : steps);
  p.steps = int(steps);
  p.tiles_s = (p.base + steps - 1) / steps;
  if (c.seq) {
    const int tpr = 1 << p.tpr_shift;
    int tprc_min = 1;
    while (tprc_min < tpr && tprc_min * p.V * esz < 64) tprc_min *= 2;
    p.cg_max_shift = ilog2(tpr / tprc_min);
    p.strat = c.strategy;
    if (p.strat == SeqStrategy::automatic) {
      // block: one launch and no buffer, when b * h * groups fills the SMs and n is short;
      // split: full occupancy in both passes otherwise. Measured (H100, b 12, h 12, d 128,
      // bf16): block wins at n = 256 by ~8 us (2 launches fewer), split at n = 4096 by 5-25%;
      // the crossover lies at n ~ 500-800 (act forward ~2000).
      const bool fills = (c.B * c.H) << p.cg_max_shift >= sms;
      p.strat = fills && c.N <= 512 ? SeqStrategy::block : SeqStrategy::split;
    }
  }
  return p;
}

inline Args make_args(const Call& c, const Plan& p) {
  Args a;
  a.x = c.x;
  a.dout = c.dout;
  a.out = c.out;
  a.theta = c.theta;
  a.th_sh = c.th_sh;
  a.th_sk = c.th_sk;
  a.offset = c.offset;
  a.B = c.B;
  a.H = c.H;
  a.N = c.N;
  a.D = c.D;
  a.U = p.U;
  a.xhalf = c.xhalf;
  a.ohalf = c.ohalf;
  if (c.lrpe_layout) {
    a.xsb = c.N * c.H * c.D, a.xss = c.H * c.D, a.xsh = c.D;
    a.osb = c.N * c.H * c.orow_len, a.oss = c.H * c.orow_len, a.osh = c.orow_len;
  } else {
    a.xsb = c.H * c.N * c.D, a.xsh = c.N * c.D, a.xss = c.D;
    a.osb = c.H * c.N * c.orow_len, a.osh = c.N * c.orow_len, a.oss = c.orow_len;
  }
  a.tpr_shift = p.tpr_shift;
  a.tprc_shift = p.tpr_shift;
  a.hb_shift = p.hb_shift;
  a.steps = p.steps;
  a.tiles_s = p.tiles_s;
  a.h_fast = c.lrpe_layout ? 1 : 0;
  a.ncols = c.B * c.H * c.D;
  a.nchunks = p.nchunks;
  a.cs = stream_stores();
  return a;
}

// Shared validation of the sizes every 1d op takes (throws KernelError with a one-line reason).
inline void check_common(const Call& c) {
  const std::string op = c.op;
  if (c.B < 1 || c.H < 1 || c.N < 1)
    throw KernelError(op + ": b, h and n must be >= 1 (got b=" + std::to_string(c.B) +
                      ", h=" + std::to_string(c.H) + ", n=" + std::to_string(c.N) + ")");
  if (c.x == nullptr || c.out == nullptr || (c.bwd && c.dout == nullptr))
    throw KernelError(op + ": null tensor pointer");
  if (c.B * c.H * c.N > (int64_t(1) << 40))
    throw KernelError(op + ": too many rows (b * h * n > 2^40)");
}

}  // namespace opbench::kernels::rows1d

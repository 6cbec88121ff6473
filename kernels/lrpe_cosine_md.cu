// lrpe_cosine_md kernels: cosine LRPE over a 1d/2d/3d token grid with extra tokens, every act
// fused into the same pass. Math and API: lrpe_cosine_md.h.
//
//   o[b, h, s, j]     = xa[b, h, s, j] * cos(angle[s, h, j])
//   o[b, h, s, d + j] = xa[b, h, s, j] * sin(angle[s, h, j])
//   angle[s, h, j] = float(c_{j / e}(s - l)) * theta[h, j % e] for s >= l, 0 for s < l
//
// Bytes per call (storage dtype; |x| = b h L d elements):
//   fwd, act elementwise or none, or softmax over features: read x, write o        = 3|x|
//   bwd: read do (2|x|), write dx (|x|), + read x when the act needs it            = 3|x| or 4|x|
//   softmax over the sequence: one more read of x (fwd: 4|x|) or of x and do (bwd: 7|x|),
//   plus per-column statistics (b h d floats, a few planes).
//   cuda_cache adds the (N, h, d) cos and sin tables: 8 N h d bytes read once per call
//   (each thread reuses its cos/sin across the batches it walks).
//
// Kernel families (one per pass shape):
//   md_elem_kernel   one thread per (head, token, 16-byte feature vector); it computes (or reads)
//                    cos/sin once and walks `bpt` batches. Acts none/relu/sigmoid/silu, and the
//                    apply pass of softmax over the sequence (from finished column statistics).
//   md_row_kernel    softmax over the d features: a group of G threads (a power of two <= 32)
//                    per (head, token) row, K vectors each, shuffles for max/sum/dot.
//   md_seq_stats_kernel + md_seq_merge_kernel
//                    softmax over the sequence: per (b, h, feature) column online max / sum
//                    (and, backward, sum of exp * dxa) over a split of the tokens, then merged.
//   md_cache_kernel  the cos/sin table of cuda_cache.
//
// sin/cos: the repo builds kernels with --use_fast_math, which would turn sincosf into the
// approximate __sinf/__cosf (absolute error ~1e-6 * |angle|, too coarse at angle ~ 3e4), so
// md_sincos reduces the argument itself (three-part Cody-Waite with FMA, |angle| <= 65536;
// double precision beyond) and evaluates minimax polynomials on [-pi/4, pi/4].
#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/common.cuh"
#include "kernels/lrpe_cosine_md.h"

namespace opbench::kernels {

int64_t LrpeMdShape::grid_tokens() const {
  int64_t N = 1;
  for (int i = 0; i < md && i < 3; ++i) N *= n[i];
  return N;
}

namespace {

constexpr int kThreads = 256;

// ---------------------------------------------------------------------------------------------
// sin and cos of a float32 angle, ~1 ulp, independent of --use_fast_math.
__device__ __forceinline__ void md_sincos(float x, float& s, float& c) {
  if (fabsf(x) > 65536.f) {  // rare: exact reduction in double
    double sd, cd;
    sincos(static_cast<double>(x), &sd, &cd);
    s = static_cast<float>(sd);
    c = static_cast<float>(cd);
    return;
  }
  const float k = rintf(x * 0.636619746685028076f);  // x / (pi / 2), nearest quadrant
  float r = fmaf(-k, 1.5707963705062866f, x);         // pi/2 = P1 + P2 + P3
  r = fmaf(-k, -4.3711388286737929e-08f, r);
  r = fmaf(-k, -1.7151245100058819e-15f, r);
  const float z = r * r;
  // Minimax polynomials on [-pi/4, pi/4] (Cephes sinf/cosf coefficients).
  float ps = fmaf(z, -1.9515295891e-4f, 8.3321608736e-3f);
  ps = fmaf(z, ps, -1.6666654611e-1f);
  const float sr = fmaf(r * z, ps, r);
  float pc = fmaf(z, 2.443315711809948e-5f, -1.388731625493765e-3f);
  pc = fmaf(z, pc, 4.166664568298827e-2f);
  const float cr = fmaf(z * z, pc, fmaf(-0.5f, z, 1.f));
  const int q = static_cast<int>(k) & 3;
  const float ss = (q & 1) ? cr : sr;
  const float cc = (q & 1) ? sr : cr;
  s = (q & 2) ? -ss : ss;
  c = ((q + 1) & 2) ? -cc : cc;
}

// ---------------------------------------------------------------------------------------------
// V consecutive storage elements: one 16-byte access when V * sizeof(T) == 16, else scalars.
template <typename T, int V>
struct alignas(V * sizeof(T) == 16 ? 16 : alignof(T)) Pack {
  T v[V];
};

template <typename T, int V>
__device__ __forceinline__ Pack<T, V> ld_stream(const T* p) {
  Pack<T, V> r;
  if constexpr (V * sizeof(T) == 16) {
    *reinterpret_cast<int4*>(&r) = __ldcs(reinterpret_cast<const int4*>(p));
  } else {
#pragma unroll
    for (int k = 0; k < V; ++k) r.v[k] = p[k];
  }
  return r;
}

template <typename T, int V>
__device__ __forceinline__ void st_stream(T* p, const Pack<T, V>& v) {
  if constexpr (V * sizeof(T) == 16) {
    __stcs(reinterpret_cast<int4*>(p), *reinterpret_cast<const int4*>(&v));
  } else {
#pragma unroll
    for (int k = 0; k < V; ++k) p[k] = v.v[k];
  }
}

// V floats; 16-byte loads when V is a multiple of 4 (callers guarantee the alignment then).
template <int V>
__device__ __forceinline__ void ld_floats(const float* __restrict__ p, float (&out)[V]) {
  if constexpr (V % 4 == 0) {
#pragma unroll
    for (int k = 0; k < V; k += 4) {
      const float4 t = __ldg(reinterpret_cast<const float4*>(p + k));
      out[k] = t.x; out[k + 1] = t.y; out[k + 2] = t.z; out[k + 3] = t.w;
    }
  } else {
#pragma unroll
    for (int k = 0; k < V; ++k) out[k] = __ldg(p + k);
  }
}

__device__ __forceinline__ void prefetch_l2(const void* p) {
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}

// ---------------------------------------------------------------------------------------------
struct MdArgs {
  const void* x;      // (b, h, L, d)
  const void* dout;   // (b, h, L, 2d), backward
  void* out;          // fwd: o (b, h, L, 2d); bwd: dx (b, h, L, d)
  const float* theta; // (h, e)
  const float* cos_t; // (N, h, d) or null (then computed from theta)
  const float* sin_t;
  // softmax over the sequence, finished statistics per (b*h, d) column:
  const float* st_m;  // column max
  const float* st_a;  // 1 / sum exp(x - max)
  const float* st_c;  // bwd: sum(o * dxa)
  int64_t b, h, L, l;
  int md;
  int64_t n1, n2;     // sizes of grid axes 1 and 2 (for the coordinate split)
  int d, e, nvec;     // nvec = d / V
  int bpt;            // batches per thread
  bool prefetch;      // md_elem_kernel: the next round's rows into L2 before each round
};

// Angles of the V features j0 .. j0+V-1 of token s, head hh.
template <int V>
__device__ __forceinline__ void md_angles(const MdArgs& a, int64_t hh, int64_t s, int j0,
                                          float (&cs)[V], float (&sn)[V]) {
  if (s < a.l) {
#pragma unroll
    for (int k = 0; k < V; ++k) { cs[k] = 1.f; sn[k] = 0.f; }
    return;
  }
  const int64_t g = s - a.l;
  if (a.cos_t != nullptr) {
    const int64_t off = (g * a.h + hh) * a.d + j0;
    ld_floats<V>(a.cos_t + off, cs);
    ld_floats<V>(a.sin_t + off, sn);
    return;
  }
  int c0, c1 = 0, c2 = 0;
  if (a.md == 1) {
    c0 = static_cast<int>(g);
  } else if (a.md == 2) {
    c0 = static_cast<int>(g / a.n1);
    c1 = static_cast<int>(g % a.n1);
  } else {
    const int64_t plane = a.n1 * a.n2;
    c0 = static_cast<int>(g / plane);
    const int64_t rem = g % plane;
    c1 = static_cast<int>(rem / a.n2);
    c2 = static_cast<int>(rem % a.n2);
  }
  int axis = j0 / a.e, base = j0 % a.e;
  const float* th = a.theta + hh * a.e;
#pragma unroll
  for (int k = 0; k < V; ++k) {
    const int c = axis == 0 ? c0 : (axis == 1 ? c1 : c2);
    const float ang = static_cast<float>(c) * __ldg(th + base);
    md_sincos(ang, sn[k], cs[k]);
    if (++base == a.e) { base = 0; ++axis; }
  }
}

// ---------------------------------------------------------------------------------------------
// Elementwise acts (and the apply pass of softmax over the sequence when A == softmax).
template <typename T, int V, Act A, bool BWD>
__global__ void __launch_bounds__(kThreads) md_elem_kernel(MdArgs a) {
  using S = Storage<T>;
  constexpr int U = 4;  // batches whose loads are in flight together
  const int64_t items = a.h * a.L * a.nvec;
  const int64_t item = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (item >= items) return;
  const int vj = static_cast<int>(item % a.nvec);
  const int64_t row = item / a.nvec;  // hh * L + s
  const int64_t s = row % a.L, hh = row / a.L;
  const int j0 = vj * V;

  float cs[V], sn[V];
  md_angles<V>(a, hh, s, j0, cs, sn);

  const int64_t b0 = static_cast<int64_t>(blockIdx.y) * a.bpt;
  const int64_t b1 = b0 + a.bpt < a.b ? b0 + a.bpt : a.b;
  const T* __restrict__ x = static_cast<const T*>(a.x);
  const T* __restrict__ dout = static_cast<const T*>(a.dout);
  T* __restrict__ out = static_cast<T*>(a.out);
  constexpr bool kNeedX = !BWD || A != Act::none;

  for (int64_t bi = b0; bi < b1; bi += U) {
    if constexpr (!BWD) {  // forward only: backward measured slower with it (docs/kernels.md)
      if (a.prefetch) {
#pragma unroll
        for (int u = 0; u < U; ++u)
          if (bi + U + u < b1) prefetch_l2(x + ((bi + U + u) * a.h * a.L + row) * a.d + j0);
      }
    }
    Pack<T, V> xv[U], dc[U], ds[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (bi + u < b1) {
        const int64_t xo = ((bi + u) * a.h * a.L + row) * a.d + j0;
        if constexpr (kNeedX) xv[u] = ld_stream<T, V>(x + xo);
        if constexpr (BWD) {
          const int64_t oo = ((bi + u) * a.h * a.L + row) * 2 * a.d + j0;
          dc[u] = ld_stream<T, V>(dout + oo);
          ds[u] = ld_stream<T, V>(dout + oo + a.d);
        }
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (bi + u >= b1) continue;
      const int64_t bh = (bi + u) * a.h + hh;
      float sm[V], sa[V], sc[V];
      if constexpr (A == Act::softmax) {
        ld_floats<V>(a.st_m + bh * a.d + j0, sm);
        ld_floats<V>(a.st_a + bh * a.d + j0, sa);
        if constexpr (BWD) ld_floats<V>(a.st_c + bh * a.d + j0, sc);
      }
      if constexpr (!BWD) {
        Pack<T, V> oc, os;
#pragma unroll
        for (int k = 0; k < V; ++k) {
          const float xf = S::to_f(xv[u].v[k]);
          float xa;
          if constexpr (A == Act::softmax) xa = __expf(xf - sm[k]) * sa[k];
          else xa = act_fwd<A>(xf);
          oc.v[k] = S::from_f(xa * cs[k]);
          os.v[k] = S::from_f(xa * sn[k]);
        }
        const int64_t oo = (bh * a.L + s) * 2 * a.d + j0;
        st_stream<T, V>(out + oo, oc);
        st_stream<T, V>(out + oo + a.d, os);
      } else {
        Pack<T, V> dx;
#pragma unroll
        for (int k = 0; k < V; ++k) {
          const float g = S::to_f(dc[u].v[k]) * cs[k] + S::to_f(ds[u].v[k]) * sn[k];
          float r;
          if constexpr (A == Act::none) {
            r = g;
          } else if constexpr (A == Act::softmax) {
            const float o = __expf(S::to_f(xv[u].v[k]) - sm[k]) * sa[k];
            r = o * (g - sc[k]);
          } else {
            r = act_bwd<A>(S::to_f(xv[u].v[k]), g);
          }
          dx.v[k] = S::from_f(r);
        }
        st_stream<T, V>(out + (bh * a.L + s) * a.d + j0, dx);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Softmax over the d features of each (b, h, token) row.
__device__ __forceinline__ float group_max(float v, int G) {
  for (int off = G >> 1; off > 0; off >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
  return v;
}
__device__ __forceinline__ float group_sum(float v, int G) {
  for (int off = G >> 1; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}

template <typename T, int V, int K, bool BWD>
__global__ void __launch_bounds__(kThreads) md_row_kernel(MdArgs a, int G) {
  using S = Storage<T>;
  const int lg = threadIdx.x & (G - 1);
  const int64_t rows = a.h * a.L;
  int64_t row = (static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x) / G;
  const bool active = row < rows;  // inactive lanes still join the shuffles
  if (!active) row = 0;
  const int64_t s = row % a.L, hh = row / a.L;

  float cs[K][V], sn[K][V];
  bool ok[K];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int vj = lg + k * G;
    ok[k] = active && vj < a.nvec;
    if (ok[k]) md_angles<V>(a, hh, s, vj * V, cs[k], sn[k]);
  }

  const int64_t b0 = static_cast<int64_t>(blockIdx.y) * a.bpt;
  const int64_t b1 = b0 + a.bpt < a.b ? b0 + a.bpt : a.b;
  const T* __restrict__ x = static_cast<const T*>(a.x);
  const T* __restrict__ dout = static_cast<const T*>(a.dout);
  T* __restrict__ out = static_cast<T*>(a.out);

  for (int64_t bi = b0; bi < b1; ++bi) {
    const int64_t r = bi * rows + row;  // (b, h, s) row index
    Pack<T, V> xv[K], dc[K], ds[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {
      if (!ok[k]) continue;
      const int j0 = (lg + k * G) * V;
      xv[k] = ld_stream<T, V>(x + r * a.d + j0);
      if constexpr (BWD) {
        dc[k] = ld_stream<T, V>(dout + r * 2 * a.d + j0);
        ds[k] = ld_stream<T, V>(dout + r * 2 * a.d + a.d + j0);
      }
    }
    float mx = -INFINITY;
#pragma unroll
    for (int k = 0; k < K; ++k)
#pragma unroll
      for (int v = 0; v < V; ++v)
        if (ok[k]) mx = fmaxf(mx, S::to_f(xv[k].v[v]));
    mx = group_max(mx, G);
    float ex[K][V], sum = 0.f;
#pragma unroll
    for (int k = 0; k < K; ++k)
#pragma unroll
      for (int v = 0; v < V; ++v) {
        ex[k][v] = ok[k] ? __expf(S::to_f(xv[k].v[v]) - mx) : 0.f;
        sum += ex[k][v];
      }
    sum = group_sum(sum, G);
    const float inv = 1.f / sum;
    if constexpr (!BWD) {
#pragma unroll
      for (int k = 0; k < K; ++k) {
        if (!ok[k]) continue;
        const int j0 = (lg + k * G) * V;
        Pack<T, V> oc, os;
#pragma unroll
        for (int v = 0; v < V; ++v) {
          const float o = ex[k][v] * inv;
          oc.v[v] = S::from_f(o * cs[k][v]);
          os.v[v] = S::from_f(o * sn[k][v]);
        }
        st_stream<T, V>(out + r * 2 * a.d + j0, oc);
        st_stream<T, V>(out + r * 2 * a.d + a.d + j0, os);
      }
    } else {
      float g[K][V], dot = 0.f;
#pragma unroll
      for (int k = 0; k < K; ++k)
#pragma unroll
        for (int v = 0; v < V; ++v) {
          g[k][v] = ok[k] ? S::to_f(dc[k].v[v]) * cs[k][v] + S::to_f(ds[k].v[v]) * sn[k][v] : 0.f;
          ex[k][v] *= inv;  // o
          dot += ex[k][v] * g[k][v];
        }
      dot = group_sum(dot, G);
#pragma unroll
      for (int k = 0; k < K; ++k) {
        if (!ok[k]) continue;
        Pack<T, V> dx;
#pragma unroll
        for (int v = 0; v < V; ++v) dx.v[v] = S::from_f(ex[k][v] * (g[k][v] - dot));
        st_stream<T, V>(out + r * a.d + (lg + k * G) * V, dx);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Softmax over the sequence, pass 1: per (b, h, feature) column and token split, the online
// max m, sum S = sum exp(x - m) and (backward) T = sum exp(x - m) * dxa.
// Grid (b * h, nsplit); the block's threads are (R token rows) x (CV feature vectors).
struct SeqPartials {
  float* m;  // [b*h][nsplit][d]
  float* s;
  float* t;  // backward only
  int nsplit;
  int64_t split_len;
};

template <typename T, int V, bool BWD>
__global__ void __launch_bounds__(kThreads) md_seq_stats_kernel(MdArgs a, SeqPartials p) {
  using S = Storage<T>;
  __shared__ float sh_m[kThreads * V], sh_s[kThreads * V], sh_t[BWD ? kThreads * V : 1];
  const int64_t bh = blockIdx.x;
  const int64_t hh = bh % a.h;
  const int split = blockIdx.y;
  const int64_t s_begin = split * p.split_len;
  const int64_t s_end = s_begin + p.split_len < a.L ? s_begin + p.split_len : a.L;
  const int CV = a.nvec < kThreads ? a.nvec : kThreads;
  const int R = kThreads / CV;
  const int r = threadIdx.x / CV, c = threadIdx.x % CV;
  const T* __restrict__ x = static_cast<const T*>(a.x);
  const T* __restrict__ dout = static_cast<const T*>(a.dout);

  for (int vj0 = 0; vj0 < a.nvec; vj0 += CV) {
    const int vj = vj0 + c;
    const bool ok = r < R && vj < a.nvec;
    float m[V], sum[V], tt[V];
#pragma unroll
    for (int v = 0; v < V; ++v) { m[v] = -INFINITY; sum[v] = 0.f; tt[v] = 0.f; }
    if (ok) {
      const int j0 = vj * V;
      for (int64_t s = s_begin + r; s < s_end; s += R) {
        const Pack<T, V> xv = ld_stream<T, V>(x + (bh * a.L + s) * a.d + j0);
        float g[V];
        if constexpr (BWD) {
          float cs[V], sn[V];
          md_angles<V>(a, hh, s, j0, cs, sn);
          const Pack<T, V> dc = ld_stream<T, V>(dout + (bh * a.L + s) * 2 * a.d + j0);
          const Pack<T, V> ds = ld_stream<T, V>(dout + (bh * a.L + s) * 2 * a.d + a.d + j0);
#pragma unroll
          for (int v = 0; v < V; ++v) g[v] = S::to_f(dc.v[v]) * cs[v] + S::to_f(ds.v[v]) * sn[v];
        }
#pragma unroll
        for (int v = 0; v < V; ++v) {
          const float xf = S::to_f(xv.v[v]);
          const float dl = xf - m[v];  // +inf for the first token
          const float w = __expf(-fabsf(dl));
          if (dl > 0.f) {  // new max: rescale what was summed so far
            sum[v] = fmaf(sum[v], w, 1.f);
            if constexpr (BWD) tt[v] = fmaf(tt[v], w, g[v]);
            m[v] = xf;
          } else {
            sum[v] += w;
            if constexpr (BWD) tt[v] = fmaf(w, g[v], tt[v]);
          }
        }
      }
    }
#pragma unroll
    for (int v = 0; v < V; ++v) {
      sh_m[threadIdx.x * V + v] = m[v];
      sh_s[threadIdx.x * V + v] = sum[v];
      if constexpr (BWD) sh_t[threadIdx.x * V + v] = tt[v];
    }
    __syncthreads();
    if (r == 0 && vj < a.nvec) {
#pragma unroll
      for (int v = 0; v < V; ++v) {
        float M = -INFINITY;
        for (int rr = 0; rr < R; ++rr) M = fmaxf(M, sh_m[(rr * CV + c) * V + v]);
        float Ssum = 0.f, Tsum = 0.f;
        if (M != -INFINITY) {
          for (int rr = 0; rr < R; ++rr) {
            const int i = (rr * CV + c) * V + v;
            const float w = __expf(sh_m[i] - M);  // 0 for rows that saw no token
            Ssum = fmaf(sh_s[i], w, Ssum);
            if constexpr (BWD) Tsum = fmaf(sh_t[i], w, Tsum);
          }
        }
        const int64_t o = (bh * p.nsplit + split) * a.d + vj * V + v;
        p.m[o] = M;
        p.s[o] = Ssum;
        if constexpr (BWD) p.t[o] = Tsum;
      }
    }
    __syncthreads();
  }
}

// Pass 2: merge the splits of each column into (max, 1/sum[, sum(o * dxa)]).
__global__ void __launch_bounds__(kThreads) md_seq_merge_kernel(SeqPartials p, int64_t columns,
                                                                  int d, float* fm, float* fa,
                                                                  float* fc) {
  const int64_t col = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (col >= columns) return;
  const int64_t bh = col / d, j = col % d;
  float M = -INFINITY;
  for (int i = 0; i < p.nsplit; ++i) M = fmaxf(M, p.m[(bh * p.nsplit + i) * d + j]);
  float Ssum = 0.f, Tsum = 0.f;
  for (int i = 0; i < p.nsplit; ++i) {
    const int64_t o = (bh * p.nsplit + i) * d + j;
    const float w = __expf(p.m[o] - M);
    Ssum = fmaf(p.s[o], w, Ssum);
    if (fc != nullptr) Tsum = fmaf(p.t[o], w, Tsum);
  }
  fm[col] = M;
  fa[col] = 1.f / Ssum;
  if (fc != nullptr) fc[col] = Tsum / Ssum;
}

// ---------------------------------------------------------------------------------------------
__global__ void __launch_bounds__(kThreads) md_cache_kernel(MdArgs a, int64_t total, float* cos_t,
                                                              float* sin_t) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * kThreads) {
    const int j = static_cast<int>(i % a.d);
    const int64_t gh = i / a.d;
    const int64_t hh = gh % a.h, g = gh / a.h;
    float cs[1], sn[1];
    md_angles<1>(a, hh, a.l + g, j, cs, sn);
    cos_t[i] = cs[0];
    sin_t[i] = sn[0];
  }
}

// ---------------------------------------------------------------------------------------------
// Host side.
int sm_count() {
  int dev = 0, n = 0;
  OPBENCH_CUDA_CHECK(cudaGetDevice(&dev));
  OPBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev));
  return n;
}

int vec_width(DType t) { return 16 / dtype_size(t); }

bool aligned16(const void* p) { return p == nullptr || reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// Row softmax: threads per row G (power of two <= 32) and vectors per thread K.
struct RowPlan {
  int G = 1, K = 1;
};
RowPlan row_plan(int nvec, int kmax) {
  RowPlan p;
  int need = nvec;
  p.K = 1;
  while ((need + p.K - 1) / p.K > 32) p.K *= 2;
  const int per = (need + p.K - 1) / p.K;
  p.G = 1;
  while (p.G < per) p.G *= 2;
  if (p.K > kmax) p.K = 0;  // too wide
  return p;
}

// Seq softmax token splits.
struct SeqPlan {
  int nsplit = 1;
  int64_t split_len = 1;
};
SeqPlan seq_plan(const LrpeMdShape& s) {
  SeqPlan p;
  const int64_t L = s.tokens();
  const int64_t bh = s.b * s.h;
  int64_t want = (4LL * sm_count() + bh - 1) / bh;  // blocks to fill the chip
  const int64_t cap = std::max<int64_t>(1, (L + 63) / 64);  // at least ~64 tokens a split
  want = std::max<int64_t>(1, std::min<int64_t>({want, cap, 1024}));
  p.split_len = (L + want - 1) / want;
  p.nsplit = static_cast<int>((L + p.split_len - 1) / p.split_len);
  return p;
}

bool seq_softmax(Act act, int act_dim) { return act == Act::softmax && act_dim == -2; }

std::string shape_str(const LrpeMdShape& s) {
  std::string g;
  for (int i = 0; i < s.md && i < 3; ++i) g += (i ? "x" : "") + std::to_string(s.n[i]);
  return "b=" + std::to_string(s.b) + " h=" + std::to_string(s.h) + " l=" + std::to_string(s.l) +
         " grid=" + g + " d=" + std::to_string(s.d) + " e=" + std::to_string(s.e);
}

MdArgs make_args(const LrpeMdShape& s, int V) {
  MdArgs a{};
  a.b = s.b; a.h = s.h; a.L = s.tokens(); a.l = s.l; a.md = s.md;
  a.n1 = s.md >= 2 ? s.n[1] : 1;
  a.n2 = s.md >= 3 ? s.n[2] : 1;
  a.d = static_cast<int>(s.d); a.e = static_cast<int>(s.e);
  a.nvec = static_cast<int>(s.d / V);
  return a;
}

// Batches per thread: walk all of b (each thread's angles serve every batch) unless the grid
// would then hold less than one block per multiprocessor. Measured at the reference sweeps'
// small sizes (docs/kernels.md, lrpe_cosine_md): all 12 batches 16.1 us at 1d n = 256 forward
// against 21.3 us for the earlier rule (two waves of 2048 threads per SM: 2 batches a thread);
// 3d n = 4 (64 tokens): 4 batches a thread 9.1 us, 12: 9.4, 1: 13.7.
int batches_per_thread(const LrpeMdShape& s, int64_t threads_per_batch, const LrpeMdOptions& opt) {
  if (opt.batch_per_thread > 0) return static_cast<int>(std::min<int64_t>(opt.batch_per_thread, s.b));
  const int64_t want = int64_t{kThreads} * sm_count();  // a block per multiprocessor
  int64_t chunks = (want + threads_per_batch - 1) / threads_per_batch;
  chunks = std::max<int64_t>(1, std::min<int64_t>(chunks, s.b));
  return static_cast<int>((s.b + chunks - 1) / chunks);
}

dim3 grid_of(int64_t threads, int64_t b, int bpt) {
  const int64_t gx = (threads + kThreads - 1) / kThreads;
  const int64_t gy = (b + bpt - 1) / bpt;
  if (gx > 0x7fffffffLL || gy > 65535)
    throw KernelError("lrpe_cosine_md: problem too large for one launch (" + std::to_string(gx) +
                      " x " + std::to_string(gy) + " blocks)");
  return dim3(static_cast<unsigned>(gx), static_cast<unsigned>(gy));
}

template <typename T, int V, bool BWD>
void launch_elem(MdArgs a, Act act, const LrpeMdShape& s, const LrpeMdOptions& opt,
                 cudaStream_t st) {
  const int64_t items = s.h * s.tokens() * a.nvec;
  a.bpt = batches_per_thread(s, items, opt);
  a.prefetch = opt.prefetch != 0;  // default on (forward: measured +0.8 to +1.2%)
  const dim3 grid = grid_of(items, s.b, a.bpt);
  switch (act) {
    case Act::none: md_elem_kernel<T, V, Act::none, BWD><<<grid, kThreads, 0, st>>>(a); break;
    case Act::relu: md_elem_kernel<T, V, Act::relu, BWD><<<grid, kThreads, 0, st>>>(a); break;
    case Act::sigmoid: md_elem_kernel<T, V, Act::sigmoid, BWD><<<grid, kThreads, 0, st>>>(a); break;
    case Act::silu: md_elem_kernel<T, V, Act::silu, BWD><<<grid, kThreads, 0, st>>>(a); break;
    case Act::softmax: md_elem_kernel<T, V, Act::softmax, BWD><<<grid, kThreads, 0, st>>>(a); break;
  }
  OPBENCH_LAUNCH_CHECK();
}

template <typename T, int V, bool BWD>
void launch_row(MdArgs a, const LrpeMdShape& s, const LrpeMdOptions& opt, cudaStream_t st) {
  constexpr int kmax = V == 1 ? 8 : 2;
  const RowPlan rp = row_plan(a.nvec, kmax);
  if (rp.K == 0)
    throw KernelError("lrpe_cosine_md: softmax over " + std::to_string(s.d) +
                      " features is wider than one row group takes");
  const int64_t threads = s.h * s.tokens() * rp.G;
  a.bpt = batches_per_thread(s, threads, opt);
  const dim3 grid = grid_of(threads, s.b, a.bpt);
  if constexpr (V == 1) {
    md_row_kernel<T, 1, 8, BWD><<<grid, kThreads, 0, st>>>(a, rp.G);
  } else {
    if (rp.K == 1) md_row_kernel<T, V, 1, BWD><<<grid, kThreads, 0, st>>>(a, rp.G);
    else md_row_kernel<T, V, 2, BWD><<<grid, kThreads, 0, st>>>(a, rp.G);
  }
  OPBENCH_LAUNCH_CHECK();
}

// Workspace layout of softmax over the sequence: partial planes then finished planes.
struct SeqWorkspace {
  SeqPartials part{};
  float *fm = nullptr, *fa = nullptr, *fc = nullptr;
};
size_t seq_ws_floats(const LrpeMdShape& s, bool bwd, const SeqPlan& p) {
  const size_t planes = bwd ? 3 : 2;
  const size_t cols = static_cast<size_t>(s.b * s.h * s.d);
  return planes * cols * (static_cast<size_t>(p.nsplit) + 1);
}
SeqWorkspace seq_ws(const LrpeMdShape& s, bool bwd, const SeqPlan& p, void* ws) {
  SeqWorkspace w;
  float* f = static_cast<float*>(ws);
  const size_t cols = static_cast<size_t>(s.b * s.h * s.d);
  const size_t pc = cols * p.nsplit;
  w.part.m = f; f += pc;
  w.part.s = f; f += pc;
  if (bwd) { w.part.t = f; f += pc; }
  w.fm = f; f += cols;
  w.fa = f; f += cols;
  if (bwd) { w.fc = f; f += cols; }
  w.part.nsplit = p.nsplit;
  w.part.split_len = p.split_len;
  return w;
}

template <typename T, int V, bool BWD>
void run_typed(const void* x, const void* dout, const float* theta, const float* cos_t,
               const float* sin_t, void* out, void* ws, const LrpeMdShape& s, Act act,
               int act_dim, cudaStream_t st, const LrpeMdOptions& opt) {
  MdArgs a = make_args(s, V);
  a.x = x; a.dout = dout; a.out = out; a.theta = theta; a.cos_t = cos_t; a.sin_t = sin_t;
  if (act == Act::softmax && act_dim == -1) {
    launch_row<T, V, BWD>(a, s, opt, st);
    return;
  }
  if (act == Act::softmax) {  // over the sequence: statistics, merge, then the elementwise pass
    const SeqPlan sp = seq_plan(s);
    const SeqWorkspace w = seq_ws(s, BWD, sp, ws);
    const dim3 sg(static_cast<unsigned>(s.b * s.h), static_cast<unsigned>(sp.nsplit));
    md_seq_stats_kernel<T, V, BWD><<<sg, kThreads, 0, st>>>(a, w.part);
    OPBENCH_LAUNCH_CHECK();
    const int64_t cols = s.b * s.h * s.d;
    md_seq_merge_kernel<<<static_cast<unsigned>((cols + kThreads - 1) / kThreads), kThreads, 0,
                          st>>>(w.part, cols, a.d, w.fm, w.fa, w.fc);
    OPBENCH_LAUNCH_CHECK();
    a.st_m = w.fm; a.st_a = w.fa; a.st_c = w.fc;
  }
  launch_elem<T, V, BWD>(a, act, s, opt, st);
}

template <bool BWD>
void run(const void* x, const void* dout, const float* theta, const float* cos_t,
         const float* sin_t, void* out, void* ws, size_t ws_bytes, const LrpeMdShape& s,
         DType dt, Act act, int act_dim, cudaStream_t st, const LrpeMdOptions& opt) {
  lrpe_cosine_md_check(s, act, act_dim);
  const char* name = BWD ? "lrpe_cosine_md_bwd" : "lrpe_cosine_md_fwd";
  if ((cos_t == nullptr) != (sin_t == nullptr))
    throw KernelError(std::string(name) + ": give both cos and sin caches or neither");
  if (cos_t == nullptr && theta == nullptr) throw KernelError(std::string(name) + ": theta is null");
  if (x == nullptr || out == nullptr || (BWD && dout == nullptr))
    throw KernelError(std::string(name) + ": null tensor pointer");
  const size_t need = lrpe_cosine_md_workspace_bytes(s, act, act_dim, BWD);
  if (need > 0 && (ws == nullptr || ws_bytes < need))
    throw KernelError(std::string(name) + ": workspace of " + std::to_string(ws_bytes) +
                      " bytes, needs " + std::to_string(need));
  const int VV = vec_width(dt);
  const bool vec = s.d % VV == 0 && aligned16(x) && aligned16(out) && aligned16(dout) &&
                   aligned16(cos_t) && aligned16(sin_t) && aligned16(ws);
  switch (dt) {
    case DType::f32:
      if (vec) run_typed<float, 4, BWD>(x, dout, theta, cos_t, sin_t, out, ws, s, act, act_dim, st, opt);
      else run_typed<float, 1, BWD>(x, dout, theta, cos_t, sin_t, out, ws, s, act, act_dim, st, opt);
      break;
    case DType::f16:
      if (vec) run_typed<__half, 8, BWD>(x, dout, theta, cos_t, sin_t, out, ws, s, act, act_dim, st, opt);
      else run_typed<__half, 1, BWD>(x, dout, theta, cos_t, sin_t, out, ws, s, act, act_dim, st, opt);
      break;
    case DType::bf16:
      if (vec) run_typed<__nv_bfloat16, 8, BWD>(x, dout, theta, cos_t, sin_t, out, ws, s, act, act_dim, st, opt);
      else run_typed<__nv_bfloat16, 1, BWD>(x, dout, theta, cos_t, sin_t, out, ws, s, act, act_dim, st, opt);
      break;
  }
}

}  // namespace

void lrpe_cosine_md_check(const LrpeMdShape& s, Act act, int act_dim) {
  const std::string where = "lrpe_cosine_md (" + shape_str(s) + "): ";
  if (s.md < 1 || s.md > 3) throw KernelError(where + "md must be 1, 2 or 3, got " + std::to_string(s.md));
  for (int i = 0; i < s.md; ++i)
    if (s.n[i] < 1) throw KernelError(where + "grid sizes must be >= 1");
  if (s.b < 1 || s.h < 1) throw KernelError(where + "b and h must be >= 1");
  if (s.l < 0) throw KernelError(where + "l must be >= 0");
  if (s.d < 1 || s.e < 1) throw KernelError(where + "d and e must be >= 1");
  if (s.e * s.md < s.d) throw KernelError(where + "theta too narrow: e * md must be >= d");
  if (s.grid_tokens() > (int64_t{1} << 31) - 1) throw KernelError(where + "grid has more than 2^31 tokens");
  if (act == Act::softmax && act_dim != -1 && act_dim != -2)
    throw KernelError(where + "softmax act_dim must be -1 (features) or -2 (sequence), got " +
                      std::to_string(act_dim));
  if (act == Act::softmax && act_dim == -1 && s.d > 256)
    throw KernelError(where + "softmax over the features takes d <= 256");
}

size_t lrpe_cosine_md_workspace_bytes(const LrpeMdShape& s, Act act, int act_dim, bool backward) {
  if (!seq_softmax(act, act_dim)) return 0;
  return seq_ws_floats(s, backward, seq_plan(s)) * sizeof(float);
}

void lrpe_cosine_md_fwd(const void* x, const float* theta, const float* cos_cache,
                        const float* sin_cache, void* out, void* workspace, size_t workspace_bytes,
                        const LrpeMdShape& s, DType dtype, Act act, int act_dim, cudaStream_t stream,
                        const LrpeMdOptions& opt) {
  run<false>(x, nullptr, theta, cos_cache, sin_cache, out, workspace, workspace_bytes, s, dtype,
             act, act_dim, stream, opt);
}

void lrpe_cosine_md_bwd(const void* x, const void* grad_out, const float* theta,
                        const float* cos_cache, const float* sin_cache, void* grad_x,
                        void* workspace, size_t workspace_bytes, const LrpeMdShape& s, DType dtype,
                        Act act, int act_dim, cudaStream_t stream, const LrpeMdOptions& opt) {
  run<true>(x, grad_out, theta, cos_cache, sin_cache, grad_x, workspace, workspace_bytes, s, dtype,
            act, act_dim, stream, opt);
}

void lrpe_cosine_md_build_cache(const float* theta, float* cos_t, float* sin_t,
                                const LrpeMdShape& s, cudaStream_t stream) {
  lrpe_cosine_md_check(s, Act::none, -1);
  if (theta == nullptr || cos_t == nullptr || sin_t == nullptr)
    throw KernelError("lrpe_cosine_md_build_cache: null pointer");
  MdArgs a = make_args(s, 1);
  a.theta = theta;
  const int64_t total = s.grid_tokens() * s.h * s.d;
  const int64_t blocks = std::min<int64_t>((total + kThreads - 1) / kThreads, 65535LL * 16);
  md_cache_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(a, total, cos_t, sin_t);
  OPBENCH_LAUNCH_CHECK();
}

}  // namespace opbench::kernels

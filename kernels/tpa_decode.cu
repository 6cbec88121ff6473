// tpa_decode kernels: one decoding step of tensor product attention. Math and API: tpa_decode.h.
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
//   tpa_tc_kernel<T, TT, STAGES>  (bf16/fp16; strategies b and bn)
//     block = (chunk of m, group of HG = 16 * MTB heads, batch); warps = MTB x NS, warp (mi, ns)
//     owns heads mi*16 .. +16 and output columns ns*64 .. +64. Per tile of TT tokens (cp.async,
//     STAGES deep): S = Q BK^T by mma.sync (Q 16 x d from shared memory, BK via ldmatrix), times
//     ak, online softmax per head row in registers, W = p * av packed straight into A fragments,
//     O += W BV (BV via ldmatrix.trans). bk and bv are read once per (batch, head group).
//   tpa_cc_kernel<T>  (any dtype; strategy bh with one head a block, and fp32 b/bn)
//     the same tiling on float32 FMAs: scores by (token, head) pairs, softmax a warp per head,
//     O += W BV with float4 accumulators in registers (token slices when few heads).
//   tpa_reduce_kernel  (bn) merges the chunk partials: M = max m_c, L = sum l_c 2^(m_c - M),
//     o = scale_v sum o_c 2^(m_c - M) / L; launched with programmatic dependent launch on sm_90.
// Both main kernels build q first (aq transposed and bq staged in shared memory, all loads in
// flight at once), then stream the tiles. Measured: notes/perf-md-tpa.md.
#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "kernels/common.cuh"
#include "kernels/tpa_decode.h"

namespace opbench::kernels {

TpaScales TpaScales::defaults(const TpaShape& s) {
  TpaScales c;
  c.scale = 1.f / std::sqrt(static_cast<float>(s.d));
  c.scale_q = 1.f / static_cast<float>(s.r);
  c.scale_k = 1.f;
  c.scale_v = 1.f;
  return c;
}

const char* tpa_strategy_name(TpaStrategy s) {
  switch (s) {
    case TpaStrategy::b: return "b";
    case TpaStrategy::bh: return "bh";
    case TpaStrategy::bn: return "bn";
  }
  return "?";
}

namespace {

constexpr float kLog2e = 1.4426950408889634f;
constexpr int kEW = 64;          // output columns per warp (tensor-core kernel)
constexpr int kMaxWarpsTc = 8;   // warps per tensor-core block
constexpr int kCcThreads = 256;  // threads per CUDA-core block
constexpr int kCcMaxQuads = 8;   // float4 accumulators per thread (CUDA-core kernel)
constexpr int kMaxChunks = 4096; // bn: chunks of m at most (reduction weights in shared memory)

// ---------------------------------------------------------------------------------------------
// PTX helpers.
__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ int64_t min64(int64_t x, int64_t y) { return x < y ? x : y; }

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Copy `w` bytes (16, 8 or 4) global -> shared; nbytes 0 writes zeros.
__device__ __forceinline__ void cp_async(void* dst, const void* src, int w, int nbytes) {
  const uint32_t d = smem_u32(dst);
  if (w == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(nbytes));
  else if (w == 8)
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(d), "l"(src), "r"(nbytes));
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(d), "l"(src), "r"(nbytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_u32(p)));
}
__device__ __forceinline__ void ldsm_x4_t(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_u32(p)));
}

template <typename T> struct MmaOp;
template <> struct MmaOp<__nv_bfloat16> {
  static __device__ __forceinline__ void run(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                             uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
  static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&v);
  }
};
template <> struct MmaOp<__half> {
  static __device__ __forceinline__ void run(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                             uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
  static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
    __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&v);
  }
};

// ---------------------------------------------------------------------------------------------
struct TpaArgs {
  const void *aq, *ak, *av, *bq, *bk, *bv;
  void* out;                 // (b, 1, h, e)
  float *pm, *pl, *po;       // bn partials: [b][nchunks][h] (m, l), [b][nchunks][h][e] (o)
  int b, h, r, d, e;
  int64_t m;
  int64_t chunk_len;
  int nchunks;
  int HG;                    // heads per block
  int tt;                    // tokens per tile
  bool a_full;               // ak/av tiles hold every head (bh), else the block's heads
  int w_bk, w_bv, w_a;       // cp.async widths in bytes (16, 8, 4; 0 = plain loads)
  // shared-memory geometry (elements)
  int q_stride, bk_stride, bv_stride, a_stride, d_pad, e_pad;
  // tc: warps split e in NS parts
  int NS;
  float qscale;              // scale * scale_k * scale_q * log2(e)
  float vscale;              // scale_v
};

// Rows [0, rows) x columns [0, cols) of a tile, global (row stride ss) -> shared (row stride
// ds); rows >= valid are written as zeros. Asynchronous unless w == 0.
template <typename T>
__device__ __forceinline__ void load_rows(T* dst, int ds, const T* src, int64_t ss, int valid,
                                          int rows, int cols, int w, int tid, int nthr) {
  if (w == 0) {
    const int n = rows * cols;
    for (int i = tid; i < n; i += nthr) {
      const int rr = i / cols, c = i % cols;
      dst[rr * ds + c] = rr < valid ? src[rr * ss + c] : Storage<T>::from_f(0.f);
    }
    return;
  }
  const int epc = w / static_cast<int>(sizeof(T));
  const int cpr = cols / epc;
  if (nthr % cpr == 0) {  // common case: each thread keeps one column chunk, rows stride by nthr/cpr
    const int c = (tid % cpr) * epc, rstep = nthr / cpr;
    for (int rr = tid / cpr; rr < rows; rr += rstep) {
      const bool ok = rr < valid;
      cp_async(dst + rr * ds + c, src + (ok ? rr : 0) * ss + c, w, ok ? w : 0);
    }
    return;
  }
  const int n = rows * cpr;
  for (int i = tid; i < n; i += nthr) {
    const int rr = i / cpr, c = (i % cpr) * epc;
    const bool ok = rr < valid;
    cp_async(dst + rr * ds + c, src + (ok ? rr : 0) * ss + c, w, ok ? w : 0);
  }
}

// q (HG x q_cols) for heads head0 .. head0+HG-1 of batch bi, pre-scaled; rows >= hv and columns
// >= d are zero. aq_t: r * HG8 floats (aq transposed, HG8 = HG rounded up to 8). scratch: a free
// pipeline stage; bq (r x d) is staged there as float when it fits (all loads in flight at
// once), else read from global memory.
template <typename T, typename QT>
__device__ __forceinline__ void build_q(const TpaArgs& a, int bi, int head0, int hv, float* aq_t,
                                        void* scratch, size_t scratch_bytes, QT* Qs, int q_stride,
                                        int q_cols, int tid, int nthr) {
  using S = Storage<T>;
  const T* aq = static_cast<const T*>(a.aq) + (static_cast<int64_t>(bi) * a.h + head0) * a.r;
  const T* bq = static_cast<const T*>(a.bq) + static_cast<int64_t>(bi) * a.r * a.d;
  const int HG8 = (a.HG + 7) & ~7;
  for (int i = tid; i < HG8 * a.r; i += nthr) {
    const int hh = i / a.r, rr = i % a.r;
    aq_t[rr * HG8 + hh] = hh < hv ? S::to_f(aq[i]) : 0.f;
  }
  float* bq_s = static_cast<float*>(scratch);
  const bool staged = static_cast<size_t>(a.r) * a.d * sizeof(float) <= scratch_bytes;
  if (staged)
    for (int i = tid; i < a.r * a.d; i += nthr) bq_s[i] = S::to_f(bq[i]);
  __syncthreads();
  const int groups = HG8 / 8;
  for (int i = tid; i < groups * q_cols; i += nthr) {
    const int hc = i / q_cols, k = i % q_cols;
    float acc[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
    if (k < a.d) {
      for (int rr = 0; rr < a.r; ++rr) {
        const float bv = staged ? bq_s[rr * a.d + k] : S::to_f(bq[rr * a.d + k]);
        const float4 a0 = *reinterpret_cast<const float4*>(aq_t + rr * HG8 + hc * 8);
        const float4 a1 = *reinterpret_cast<const float4*>(aq_t + rr * HG8 + hc * 8 + 4);
        acc[0] = fmaf(a0.x, bv, acc[0]); acc[1] = fmaf(a0.y, bv, acc[1]);
        acc[2] = fmaf(a0.z, bv, acc[2]); acc[3] = fmaf(a0.w, bv, acc[3]);
        acc[4] = fmaf(a1.x, bv, acc[4]); acc[5] = fmaf(a1.y, bv, acc[5]);
        acc[6] = fmaf(a1.z, bv, acc[6]); acc[7] = fmaf(a1.w, bv, acc[7]);
      }
    }
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int row = hc * 8 + j;
      if (row < a.HG) {
        if constexpr (sizeof(QT) == 4) Qs[row * q_stride + k] = acc[j] * a.qscale;
        else Qs[row * q_stride + k] = Storage<QT>::from_f(acc[j] * a.qscale);
      }
    }
  }
}

// Programmatic dependent launch (Hopper): let the reduction kernel start launching early and
// wait for this grid's results. No-ops elsewhere.
__device__ __forceinline__ void pdl_trigger() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

// ---------------------------------------------------------------------------------------------
// Tensor-core kernel (bf16 / fp16).
template <typename T, int TT, int STAGES>
__global__ void __launch_bounds__(kMaxWarpsTc * 32) tpa_tc_kernel(TpaArgs a) {
  using S = Storage<T>;
  using M = MmaOp<T>;
  extern __shared__ __align__(16) unsigned char smem[];
  const int tid = threadIdx.x, nthr = blockDim.x;
  const int lane = tid & 31, warp = tid >> 5;
  const int chunk = blockIdx.x, bi = blockIdx.z;
  const int head0 = blockIdx.y * a.HG;
  const int hv = min(a.HG, a.h - head0);
  const int64_t t_begin = chunk * a.chunk_len;
  const int64_t t_end = min64(a.m, t_begin + a.chunk_len);
  const int ntiles = static_cast<int>((t_end - t_begin + TT - 1) / TT);

  // shared memory: Qs | aq_s | STAGES x (BK | BV | AK | AV)
  T* Qs = reinterpret_cast<T*>(smem);
  size_t off = (static_cast<size_t>(a.HG) * a.q_stride * sizeof(T) + 15) & ~size_t(15);
  float* aq_s = reinterpret_cast<float*>(smem + off);
  off += (static_cast<size_t>((a.HG + 7) & ~7) * a.r * sizeof(float) + 15) & ~size_t(15);
  const int bk_elems = TT * a.bk_stride, bv_elems = TT * a.bv_stride, a_elems = TT * a.a_stride;
  const int stage_elems = bk_elems + bv_elems + 2 * a_elems;
  T* stages = reinterpret_cast<T*>(smem + off);

  const T* bk = static_cast<const T*>(a.bk) + static_cast<int64_t>(bi) * a.m * a.d;
  const T* bv = static_cast<const T*>(a.bv) + static_cast<int64_t>(bi) * a.m * a.e;
  const T* ak = static_cast<const T*>(a.ak) + static_cast<int64_t>(bi) * a.m * a.h + head0;
  const T* av = static_cast<const T*>(a.av) + static_cast<int64_t>(bi) * a.m * a.h + head0;

  auto issue = [&](int tile) {
    T* base = stages + (tile % STAGES) * stage_elems;
    const int64_t t0 = t_begin + static_cast<int64_t>(tile) * TT;
    const int valid = static_cast<int>(min64(TT, t_end - t0));
    load_rows<T>(base, a.bk_stride, bk + t0 * a.d, a.d, valid, TT, a.d, a.w_bk, tid, nthr);
    load_rows<T>(base + bk_elems, a.bv_stride, bv + t0 * a.e, a.e, valid, TT, a.e, a.w_bv, tid, nthr);
    load_rows<T>(base + bk_elems + bv_elems, a.a_stride, ak + t0 * a.h, a.h, valid, TT, hv, a.w_a,
                 tid, nthr);
    load_rows<T>(base + bk_elems + bv_elems + a_elems, a.a_stride, av + t0 * a.h, a.h, valid, TT,
                 hv, a.w_a, tid, nthr);
  };
#pragma unroll
  for (int st = 0; st < STAGES - 1; ++st) {
    if (st < ntiles) issue(st);
    cp_async_commit();
  }

  // the last stage is free until the first iteration issues into it
  build_q<T, T>(a, bi, head0, hv, aq_s, stages + (STAGES - 1) * stage_elems,
                sizeof(T) * stage_elems, Qs, a.q_stride, a.d_pad, tid, nthr);
  pdl_trigger();
  __syncthreads();  // build_q's scratch (the last stage) is read; its padding is rewritten below

  // Zero the padding columns once (cp.async never writes them; the loop's first barrier
  // orders these stores before any read).
  for (int st = 0; st < STAGES; ++st) {
    T* base = stages + st * stage_elems;
    const T z = S::from_f(0.f);
    for (int i = tid; i < TT * (a.d_pad - a.d); i += nthr)
      base[(i / (a.d_pad - a.d)) * a.bk_stride + a.d + i % (a.d_pad - a.d)] = z;
    for (int i = tid; i < TT * (a.e_pad - a.e); i += nthr)
      base[bk_elems + (i / (a.e_pad - a.e)) * a.bv_stride + a.e + i % (a.e_pad - a.e)] = z;
    for (int i = tid; i < TT * (a.HG - hv); i += nthr) {
      const int rr = i / (a.HG - hv), c = hv + i % (a.HG - hv);
      base[bk_elems + bv_elems + rr * a.a_stride + c] = z;
      base[bk_elems + bv_elems + a_elems + rr * a.a_stride + c] = z;
    }
  }


  const int mi = warp / a.NS, ns = warp % a.NS;
  const int g = lane >> 2, c4 = lane & 3;
  float o[kEW / 8][4];
#pragma unroll
  for (int n = 0; n < kEW / 8; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
  float mrow[2] = {-INFINITY, -INFINITY}, lrow[2] = {0.f, 0.f};
  const int ksteps = a.d_pad / 16;

  for (int kt = 0; kt < ntiles; ++kt) {
    cp_async_wait<STAGES - 2>();
    __syncthreads();
    if (kt + STAGES - 1 < ntiles) issue(kt + STAGES - 1);
    cp_async_commit();

    const T* BK = stages + (kt % STAGES) * stage_elems;
    const T* BV = BK + bk_elems;
    const T* AK = BV + bv_elems;
    const T* AV = AK + a_elems;
    const int valid = static_cast<int>(min64(TT, t_end - (t_begin + static_cast<int64_t>(kt) * TT)));

    // S = Q BK^T for this warp's 16 heads and the TT tokens.
    float s[TT / 8][4];
#pragma unroll
    for (int n = 0; n < TT / 8; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
    for (int ks = 0; ks < ksteps; ++ks) {
      uint32_t qa[4];
      ldsm_x4(qa, Qs + (mi * 16 + (lane & 15)) * a.q_stride + ks * 16 + (lane >> 4) * 8);
#pragma unroll
      for (int np = 0; np < TT / 16; ++np) {
        uint32_t kb[4];
        ldsm_x4(kb, BK + (np * 16 + (lane & 7) + (lane >> 4) * 8) * a.bk_stride + ks * 16 +
                        ((lane >> 3) & 1) * 8);
        M::run(s[2 * np], qa, kb[0], kb[1]);
        M::run(s[2 * np + 1], qa, kb[2], kb[3]);
      }
    }

    // Scores times ak, masked; online softmax per head row (rows g and g + 8 of the tile).
    float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int n = 0; n < TT / 8; ++n)
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int t = n * 8 + 2 * c4 + (q & 1);
        const int row = mi * 16 + g + (q >> 1) * 8;
        const float v = s[n][q] * S::to_f(AK[t * a.a_stride + row]);
        s[n][q] = t < valid ? v : -INFINITY;
        mx[q >> 1] = fmaxf(mx[q >> 1], s[n][q]);
      }
    float alpha[2];
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      mx[i] = fmaxf(mx[i], __shfl_xor_sync(0xffffffffu, mx[i], 1));
      mx[i] = fmaxf(mx[i], __shfl_xor_sync(0xffffffffu, mx[i], 2));
      const float mnew = fmaxf(mrow[i], mx[i]);  // finite: every tile has a valid token
      alpha[i] = ex2(mrow[i] - mnew);
      mrow[i] = mnew;
    }
    float rs[2] = {0.f, 0.f};
#pragma unroll
    for (int n = 0; n < TT / 8; ++n)
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int t = n * 8 + 2 * c4 + (q & 1);
        const int row = mi * 16 + g + (q >> 1) * 8;
        const float p = ex2(s[n][q] - mrow[q >> 1]);
        rs[q >> 1] += p;
        s[n][q] = p * S::to_f(AV[t * a.a_stride + row]);
      }
#pragma unroll
    for (int i = 0; i < 2; ++i) lrow[i] = lrow[i] * alpha[i] + rs[i];
#pragma unroll
    for (int n = 0; n < kEW / 8; ++n) {
      o[n][0] *= alpha[0]; o[n][1] *= alpha[0];
      o[n][2] *= alpha[1]; o[n][3] *= alpha[1];
    }

    // O += W BV for this warp's 64 columns.
#pragma unroll
    for (int k2 = 0; k2 < TT / 16; ++k2) {
      uint32_t pa[4];
      pa[0] = M::pack(s[2 * k2][0], s[2 * k2][1]);
      pa[1] = M::pack(s[2 * k2][2], s[2 * k2][3]);
      pa[2] = M::pack(s[2 * k2 + 1][0], s[2 * k2 + 1][1]);
      pa[3] = M::pack(s[2 * k2 + 1][2], s[2 * k2 + 1][3]);
#pragma unroll
      for (int cp = 0; cp < kEW / 16; ++cp) {
        const int col0 = ns * kEW + cp * 16;
        if (col0 < a.e_pad) {
          uint32_t vb[4];
          ldsm_x4_t(vb, BV + (k2 * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * a.bv_stride + col0 +
                            (lane >> 4) * 8);
          M::run(o[2 * cp], pa, vb[0], vb[1]);
          M::run(o[2 * cp + 1], pa, vb[2], vb[3]);
        }
      }
    }
  }
  cp_async_wait<0>();

#pragma unroll
  for (int i = 0; i < 2; ++i) {
    lrow[i] += __shfl_xor_sync(0xffffffffu, lrow[i], 1);
    lrow[i] += __shfl_xor_sync(0xffffffffu, lrow[i], 2);
  }
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int hl = mi * 16 + g + i * 8;
    if (hl >= hv) continue;
    const int head = head0 + hl;
    if (a.nchunks == 1) {
      T* out = static_cast<T*>(a.out) + (static_cast<int64_t>(bi) * a.h + head) * a.e;
      const float inv = a.vscale / lrow[i];
#pragma unroll
      for (int n = 0; n < kEW / 8; ++n) {
        const int col = ns * kEW + n * 8 + 2 * c4;
        if (col < a.e) out[col] = S::from_f(o[n][2 * i] * inv);
        if (col + 1 < a.e) out[col + 1] = S::from_f(o[n][2 * i + 1] * inv);
      }
    } else {
      const int64_t pidx = (static_cast<int64_t>(bi) * a.nchunks + chunk) * a.h + head;
      float* po = a.po + pidx * a.e;
#pragma unroll
      for (int n = 0; n < kEW / 8; ++n) {
        const int col = ns * kEW + n * 8 + 2 * c4;
        if (col < a.e) po[col] = o[n][2 * i];
        if (col + 1 < a.e) po[col + 1] = o[n][2 * i + 1];
      }
      if (ns == 0 && c4 == 0) {
        a.pm[pidx] = mrow[i];
        a.pl[pidx] = lrow[i];
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// CUDA-core kernel (any dtype). 256 threads.
template <typename T>
__device__ __forceinline__ float4 ld4(const T* p) {  // 4 consecutive elements as float
  if constexpr (sizeof(T) == 4) {
    return *reinterpret_cast<const float4*>(p);
  } else {
    const uint2 raw = *reinterpret_cast<const uint2*>(p);
    const T* e = reinterpret_cast<const T*>(&raw);
    return make_float4(Storage<T>::to_f(e[0]), Storage<T>::to_f(e[1]), Storage<T>::to_f(e[2]),
                       Storage<T>::to_f(e[3]));
  }
}

template <typename T>
__global__ void __launch_bounds__(kCcThreads) tpa_cc_kernel(TpaArgs a) {
  using S = Storage<T>;
  extern __shared__ __align__(16) unsigned char smem[];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int chunk = blockIdx.x, bi = blockIdx.z;
  const int head0 = blockIdx.y * a.HG;
  const int hv = min(a.HG, a.h - head0);
  const int TT = a.tt;
  const int64_t t_begin = chunk * a.chunk_len;
  const int64_t t_end = min64(a.m, t_begin + a.chunk_len);
  const int ntiles = static_cast<int>((t_end - t_begin + TT - 1) / TT);
  const int acol0 = a.a_full ? 0 : head0;     // first head column held in the ak/av tiles
  const int acols = a.a_full ? a.h : hv;
  const int aoff = head0 - acol0;             // tile column of the block's head 0
  const int d4 = (a.d + 3) / 4, e4 = (a.e + 3) / 4;

  // shared memory: Qs (float) | aq_s | Ps | m_s l_s al_s | 2 x (BK | BV | AK | AV)
  size_t off = 0;
  auto carve = [&](size_t bytes) {
    unsigned char* p = smem + off;
    off += (bytes + 15) & ~size_t(15);
    return p;
  };
  float* Qs = reinterpret_cast<float*>(carve(sizeof(float) * a.HG * a.q_stride));
  float* aq_s = reinterpret_cast<float*>(carve(sizeof(float) * ((a.HG + 7) & ~7) * a.r));
  const int ps_stride = a.HG + 1;
  float* Ps = reinterpret_cast<float*>(carve(sizeof(float) * TT * ps_stride));
  float* m_s = reinterpret_cast<float*>(carve(sizeof(float) * a.HG));
  float* l_s = reinterpret_cast<float*>(carve(sizeof(float) * a.HG));
  float* al_s = reinterpret_cast<float*>(carve(sizeof(float) * a.HG));
  const int bk_elems = TT * a.bk_stride, bv_elems = TT * a.bv_stride, a_elems = TT * a.a_stride;
  const int stage_elems = bk_elems + bv_elems + 2 * a_elems;
  T* stages = reinterpret_cast<T*>(carve(sizeof(T) * 2 * stage_elems));

  const T* bk = static_cast<const T*>(a.bk) + static_cast<int64_t>(bi) * a.m * a.d;
  const T* bv = static_cast<const T*>(a.bv) + static_cast<int64_t>(bi) * a.m * a.e;
  const T* ak = static_cast<const T*>(a.ak) + static_cast<int64_t>(bi) * a.m * a.h + acol0;
  const T* av = static_cast<const T*>(a.av) + static_cast<int64_t>(bi) * a.m * a.h + acol0;

  auto issue = [&](int tile) {
    T* base = stages + (tile & 1) * stage_elems;
    const int64_t t0 = t_begin + static_cast<int64_t>(tile) * TT;
    const int valid = static_cast<int>(min64(TT, t_end - t0));
    load_rows<T>(base, a.bk_stride, bk + t0 * a.d, a.d, valid, TT, a.d, a.w_bk, tid, kCcThreads);
    load_rows<T>(base + bk_elems, a.bv_stride, bv + t0 * a.e, a.e, valid, TT, a.e, a.w_bv, tid,
                 kCcThreads);
    load_rows<T>(base + bk_elems + bv_elems, a.a_stride, ak + t0 * a.h, a.h, valid, TT, acols,
                 a.w_a, tid, kCcThreads);
    load_rows<T>(base + bk_elems + bv_elems + a_elems, a.a_stride, av + t0 * a.h, a.h, valid, TT,
                 acols, a.w_a, tid, kCcThreads);
  };
  if (ntiles > 0) issue(0);
  cp_async_commit();

  build_q<T, float>(a, bi, head0, hv, aq_s, stages + stage_elems, sizeof(T) * stage_elems, Qs,
                    a.q_stride, d4 * 4, tid, kCcThreads);  // stage 1 is free until iteration 0
  pdl_trigger();
  __syncthreads();  // build_q's scratch (stage 1) is read; its padding is rewritten below
  {  // zero the padding columns of both stages (never written by the copies)
    const T z = S::from_f(0.f);
    for (int st = 0; st < 2; ++st) {
      T* base = stages + st * stage_elems;
      const int pk = d4 * 4 - a.d, pv = e4 * 4 - a.e;
      for (int i = tid; i < TT * pk; i += kCcThreads) base[(i / pk) * a.bk_stride + a.d + i % pk] = z;
      for (int i = tid; i < TT * pv; i += kCcThreads)
        base[bk_elems + (i / pv) * a.bv_stride + a.e + i % pv] = z;
    }
    for (int i = tid; i < a.HG; i += kCcThreads) { m_s[i] = -INFINITY; l_s[i] = 0.f; }
  }


  // Score phase: TPP threads per (token, head) pair.
  const int npairs = TT * hv;
  int tpp = 1;
  while (tpp < 8 && npairs * tpp * 2 <= kCcThreads) tpp *= 2;
  const int part = tid & (tpp - 1);
  const unsigned gmask = (tpp == 32 ? 0xffffffffu : ((1u << tpp) - 1u)) << (lane & ~(tpp - 1));

  // Output phase: items (head, column quad), SL token slices when items are few.
  const int items = hv * e4;
  const int SL = items >= kCcThreads ? 1 : kCcThreads / items;
  const int slice = tid / items;                // < SL for the threads in use
  const int nq = items >= kCcThreads ? (items + kCcThreads - 1) / kCcThreads : 1;
  float4 acc[kCcMaxQuads];
#pragma unroll
  for (int q = 0; q < kCcMaxQuads; ++q) acc[q] = make_float4(0.f, 0.f, 0.f, 0.f);

  for (int kt = 0; kt < ntiles; ++kt) {
    cp_async_wait<0>();
    __syncthreads();
    if (kt + 1 < ntiles) issue(kt + 1);
    cp_async_commit();
    const T* BK = stages + (kt & 1) * stage_elems;
    const T* BV = BK + bk_elems;
    const T* AK = BV + bv_elems;
    const T* AV = AK + a_elems;
    const int valid = static_cast<int>(min64(TT, t_end - (t_begin + static_cast<int64_t>(kt) * TT)));

    for (int pp = tid / tpp; pp < npairs; pp += kCcThreads / tpp) {
      const int t = pp / hv, hh = pp % hv;
      float dot = 0.f;
      const float* qrow = Qs + hh * a.q_stride;
      const T* krow = BK + t * a.bk_stride;
      for (int k4 = part; k4 < d4; k4 += tpp) {
        const float4 q = *reinterpret_cast<const float4*>(qrow + 4 * k4);
        const float4 kk = ld4<T>(krow + 4 * k4);
        dot = fmaf(q.x, kk.x, dot); dot = fmaf(q.y, kk.y, dot);
        dot = fmaf(q.z, kk.z, dot); dot = fmaf(q.w, kk.w, dot);
      }
      for (int o2 = tpp >> 1; o2 > 0; o2 >>= 1) dot += __shfl_xor_sync(gmask, dot, o2);
      if (part == 0)
        Ps[t * ps_stride + hh] =
            t < valid ? dot * S::to_f(AK[t * a.a_stride + aoff + hh]) : -INFINITY;
    }
    __syncthreads();

    for (int hh = warp; hh < hv; hh += kCcThreads / 32) {  // softmax: a warp per head
      float mx = -INFINITY;
      for (int t = lane; t < TT; t += 32) mx = fmaxf(mx, Ps[t * ps_stride + hh]);
      for (int o2 = 16; o2 > 0; o2 >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o2));
      const float mold = m_s[hh];
      const float mnew = fmaxf(mold, mx);
      float sum = 0.f;
      for (int t = lane; t < TT; t += 32) {
        const float p = ex2(Ps[t * ps_stride + hh] - mnew);
        sum += p;
        Ps[t * ps_stride + hh] = p * S::to_f(AV[t * a.a_stride + aoff + hh]);
      }
      for (int o2 = 16; o2 > 0; o2 >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o2);
      __syncwarp();
      if (lane == 0) {
        const float al = ex2(mold - mnew);
        al_s[hh] = al;
        l_s[hh] = l_s[hh] * al + sum;
        m_s[hh] = mnew;
      }
    }
    __syncthreads();

#pragma unroll
    for (int q = 0; q < kCcMaxQuads; ++q) {
      if (q >= nq) break;
      const int item = SL > 1 ? tid % items : tid + q * kCcThreads;
      if (item >= items || slice >= SL) continue;
      const int hh = item / e4, c = (item % e4) * 4;
      const float al = al_s[hh];
      float4 v = acc[q];
      v.x *= al; v.y *= al; v.z *= al; v.w *= al;
      for (int t = (SL > 1 ? slice : 0); t < valid; t += SL) {
        const float w = Ps[t * ps_stride + hh];
        const float4 b4 = ld4<T>(BV + t * a.bv_stride + c);
        v.x = fmaf(w, b4.x, v.x); v.y = fmaf(w, b4.y, v.y);
        v.z = fmaf(w, b4.z, v.z); v.w = fmaf(w, b4.w, v.w);
      }
      acc[q] = v;
    }
  }
  cp_async_wait<0>();
  __syncthreads();

  // Sum the token slices (SL > 1) through shared memory (the stage buffers are free now).
  float4* red = reinterpret_cast<float4*>(stages);
  if (SL > 1) {
    if (slice < SL && tid < items * SL) red[tid] = acc[0];
    __syncthreads();
    if (tid < items) {
      float4 v = red[tid];
      for (int sl = 1; sl < SL; ++sl) {
        const float4 w = red[sl * items + tid];
        v.x += w.x; v.y += w.y; v.z += w.z; v.w += w.w;
      }
      acc[0] = v;
    }
  }
#pragma unroll
  for (int q = 0; q < kCcMaxQuads; ++q) {
    if (q >= nq) break;
    const int item = SL > 1 ? tid : tid + q * kCcThreads;
    if (item >= items) continue;
    const int hh = item / e4, c = (item % e4) * 4;
    const int head = head0 + hh;
    const float vals[4] = {acc[q].x, acc[q].y, acc[q].z, acc[q].w};
    if (a.nchunks == 1) {
      T* out = static_cast<T*>(a.out) + (static_cast<int64_t>(bi) * a.h + head) * a.e;
      const float inv = a.vscale / l_s[hh];
      for (int j = 0; j < 4 && c + j < a.e; ++j) out[c + j] = S::from_f(vals[j] * inv);
    } else {
      const int64_t pidx = (static_cast<int64_t>(bi) * a.nchunks + chunk) * a.h + head;
      for (int j = 0; j < 4 && c + j < a.e; ++j) a.po[pidx * a.e + c + j] = vals[j];
      if (c == 0) {
        a.pm[pidx] = m_s[hh];
        a.pl[pidx] = l_s[hh];
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// bn: merge the chunk partials. Block per (b, h): the chunk weights 2^(m_c - M) once, in shared
// memory (dynamic: nchunks floats), then a thread per output column with 8 loads in flight.
__device__ __forceinline__ float block_reduce(float v, bool is_max, float* red) {
  for (int o = 16; o > 0; o >>= 1) {
    const float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = is_max ? fmaxf(v, w) : v + w;
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
  __syncthreads();  // red is reused between calls
  if (lane == 0) red[warp] = v;
  __syncthreads();
  v = is_max ? -INFINITY : 0.f;
  for (int i = 0; i < nw; ++i) v = is_max ? fmaxf(v, red[i]) : v + red[i];
  return v;
}

template <typename T>
__global__ void __launch_bounds__(256) tpa_reduce_kernel(TpaArgs a) {
  extern __shared__ float wts[];
  __shared__ float red[32];
  pdl_wait();  // the partials of the main kernel (PDL) are complete and visible
  const int64_t bh = blockIdx.x;
  const int64_t bi = bh / a.h, head = bh % a.h;
  const int64_t base = bi * a.nchunks * a.h + head;  // partial (bi, c, head) = base + c * h
  float M = -INFINITY;
  for (int c = threadIdx.x; c < a.nchunks; c += blockDim.x) M = fmaxf(M, a.pm[base + c * a.h]);
  M = block_reduce(M, true, red);
  float L = 0.f;
  for (int c = threadIdx.x; c < a.nchunks; c += blockDim.x) {
    const float w = ex2(a.pm[base + c * a.h] - M);
    wts[c] = w;
    L = fmaf(a.pl[base + c * a.h], w, L);
  }
  L = block_reduce(L, false, red);  // its barriers also publish wts
  const float inv = a.vscale / L;
  T* out = static_cast<T*>(a.out) + bh * a.e;
  const float* po = a.po + base * a.e;
  const int64_t cstride = static_cast<int64_t>(a.h) * a.e;
  for (int col = threadIdx.x; col < a.e; col += blockDim.x) {
    float acc[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
    int c = 0;
    for (; c + 8 <= a.nchunks; c += 8) {
#pragma unroll
      for (int j = 0; j < 8; ++j) acc[j] = fmaf(po[(c + j) * cstride + col], wts[c + j], acc[j]);
    }
    for (; c < a.nchunks; ++c) acc[0] = fmaf(po[c * cstride + col], wts[c], acc[0]);
    const float o = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    out[col] = Storage<T>::from_f(o * inv);
  }
}

// ---------------------------------------------------------------------------------------------
// Host side: plans.
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

int device_attr(cudaDeviceAttr attr) {
  int dev = 0, v = 0;
  OPBENCH_CUDA_CHECK(cudaGetDevice(&dev));
  OPBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&v, attr, dev));
  return v;
}

struct Plan {
  bool tc = false;
  int tt = 64, stages = 2;
  int HG = 1, ngroups = 1, NS = 1, threads = 256;
  bool a_full = false;
  int q_stride = 0, bk_stride = 0, bv_stride = 0, a_stride = 0, d_pad = 0, e_pad = 0;
  size_t smem = 0;
  int64_t chunk_len = 1;
  int nchunks = 1;
  const void* kernel = nullptr;
};

using KernelFn = void (*)(TpaArgs);

template <typename T>
KernelFn tc_kernel_for(int tt, int stages) {
  if (tt == 64 && stages == 2) return tpa_tc_kernel<T, 64, 2>;
  if (tt == 64 && stages == 3) return tpa_tc_kernel<T, 64, 3>;
  if (tt == 64 && stages == 4) return tpa_tc_kernel<T, 64, 4>;
  if (tt == 32 && stages == 2) return tpa_tc_kernel<T, 32, 2>;
  if (tt == 32 && stages == 4) return tpa_tc_kernel<T, 32, 4>;
  return nullptr;
}

KernelFn kernel_for(const Plan& p, DType dt) {
  if (p.tc) return dt == DType::bf16 ? tc_kernel_for<__nv_bfloat16>(p.tt, p.stages)
                                     : tc_kernel_for<__half>(p.tt, p.stages);
  switch (dt) {
    case DType::f32: return tpa_cc_kernel<float>;
    case DType::f16: return tpa_cc_kernel<__half>;
    case DType::bf16: return tpa_cc_kernel<__nv_bfloat16>;
  }
  return nullptr;
}

// Lets `fn` use the device's whole opt-in shared memory (once per kernel and device).
void allow_max_smem(KernelFn fn) {
  static std::mutex mu;
  static std::map<std::pair<const void*, int>, bool> done;
  int dev = 0;
  OPBENCH_CUDA_CHECK(cudaGetDevice(&dev));
  std::lock_guard<std::mutex> lock(mu);
  const auto key = std::make_pair(reinterpret_cast<const void*>(fn), dev);
  if (done.count(key)) return;
  OPBENCH_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(fn),
                                          cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          device_attr(cudaDevAttrMaxSharedMemoryPerBlockOptin)));
  done[key] = true;
}

// Blocks of `fn` resident on one multiprocessor (cached: the query costs microseconds).
int blocks_per_sm(KernelFn fn, int threads, size_t smem) {
  allow_max_smem(fn);
  static std::mutex mu;
  static std::map<std::tuple<const void*, int, size_t, int>, int> cache;
  int dev = 0;
  OPBENCH_CUDA_CHECK(cudaGetDevice(&dev));
  const auto key = std::make_tuple(reinterpret_cast<const void*>(fn), threads, smem, dev);
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  int n = 0;
  OPBENCH_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, fn, threads, smem));
  cache[key] = n;
  return n;
}

size_t tc_smem(const Plan& p, int64_t r, int sz) {
  const size_t q = round_up(static_cast<int64_t>(p.HG) * p.q_stride * sz, 16);
  const size_t aq = round_up(round_up(p.HG, 8) * r * 4, 16);
  const size_t stage = static_cast<size_t>(p.tt) * (p.bk_stride + p.bv_stride + 2 * p.a_stride) * sz;
  return q + aq + p.stages * stage;
}

size_t cc_smem(const Plan& p, int64_t r, int sz) {
  auto r16 = [](size_t b) { return (b + 15) & ~size_t(15); };
  size_t s = r16(4ull * p.HG * p.q_stride) + r16(4ull * round_up(p.HG, 8) * r) + r16(4ull * p.tt * (p.HG + 1)) +
             3 * r16(4ull * p.HG);
  const size_t stage = static_cast<size_t>(p.tt) * (p.bk_stride + p.bv_stride + 2 * p.a_stride) * sz;
  s += r16(2 * stage);
  // the slice reduction reuses the stage buffers: 256 float4
  return std::max(s, s - r16(2 * stage) + 256 * 16);
}

Plan make_plan(const TpaShape& s, DType dt, TpaStrategy strat, const TpaOptions& opt) {
  Plan p;
  const int sz = dtype_size(dt);
  const int max_smem = device_attr(cudaDevAttrMaxSharedMemoryPerBlockOptin);
  p.tc = dt != DType::f32 && strat != TpaStrategy::bh;
  if (p.tc) {
    p.d_pad = static_cast<int>(round_up(s.d, 16));
    p.e_pad = static_cast<int>(round_up(s.e, 16));
    p.NS = static_cast<int>(ceil_div(p.e_pad, kEW));
    const int mtb = static_cast<int>(std::min<int64_t>(ceil_div(s.h, 16), kMaxWarpsTc / p.NS));
    p.HG = 16 * mtb;
    p.threads = 32 * mtb * p.NS;
    p.q_stride = p.d_pad + 8;
    p.bk_stride = p.d_pad + 8;
    p.bv_stride = p.e_pad + 8;
    p.a_stride = p.HG + 8;
    // Tile x stages: the option, else the first that fits of the strategy's list. b runs few
    // blocks (one per batch element), so it wants a deep pipeline per block (64x4 measured 16%
    // faster than 64x2 at b = 8, m = 32768); bn fills the chip with blocks: 64x2 measured best
    // (2 blocks of ~98 KB per multiprocessor; notes/perf-md-tpa.md).
    std::vector<std::pair<int, int>> cands;
    if (opt.tile || opt.stages) cands = {{opt.tile ? opt.tile : 64, opt.stages ? opt.stages : 2}};
    else if (strat == TpaStrategy::b) cands = {{64, 4}, {64, 3}, {64, 2}, {32, 2}};
    else cands = {{64, 2}, {32, 2}};
    for (const auto& c : cands) {
      p.tt = c.first;
      p.stages = c.second;
      if (!tc_kernel_for<__half>(p.tt, p.stages))
        throw KernelError("tpa_decode: no tensor-core kernel for tile " + std::to_string(p.tt) +
                          " with " + std::to_string(p.stages) +
                          " stages (have 64x2, 64x3, 64x4, 32x2, 32x4)");
      p.smem = tc_smem(p, s.r, sz);
      if (p.smem <= static_cast<size_t>(max_smem)) break;
    }
  } else {
    p.HG = strat == TpaStrategy::bh ? 1 : static_cast<int>(std::min<int64_t>(s.h, 32));
    p.a_full = strat == TpaStrategy::bh && s.h <= 128;
    p.tt = strat == TpaStrategy::bh ? 64 : 32;
    p.threads = kCcThreads;
    const int64_t d4 = ceil_div(s.d, 4) * 4, e4 = ceil_div(s.e, 4) * 4;
    const int64_t pad = 16 / sz;  // one 16-byte step between rows: fewer bank conflicts
    p.q_stride = static_cast<int>(d4 + 4);
    p.bk_stride = static_cast<int>(round_up(d4, pad) + pad);
    p.bv_stride = static_cast<int>(round_up(e4, pad) + pad);
    p.a_stride = static_cast<int>(round_up(p.a_full ? s.h : p.HG, 8) + 8);
    p.smem = cc_smem(p, s.r, sz);
    if (p.smem > static_cast<size_t>(max_smem)) {
      p.tt = 16;
      p.smem = cc_smem(p, s.r, sz);
    }
  }
  if (p.smem > static_cast<size_t>(max_smem))
    throw KernelError("tpa_decode: d=" + std::to_string(s.d) + " e=" + std::to_string(s.e) +
                      " r=" + std::to_string(s.r) + " needs " + std::to_string(p.smem) +
                      " bytes of shared memory, the device has " + std::to_string(max_smem));
  p.ngroups = static_cast<int>(ceil_div(s.h, p.HG));
  p.kernel = reinterpret_cast<const void*>(kernel_for(p, dt));

  p.chunk_len = s.m;
  p.nchunks = 1;
  if (strat == TpaStrategy::bn) {
    int64_t len;
    if (opt.chunk_len > 0) {
      len = opt.chunk_len;
    } else {
      const int per_sm = std::max(1, blocks_per_sm(kernel_for(p, dt), p.threads, p.smem));
      const int64_t slots = static_cast<int64_t>(per_sm) * device_attr(cudaDevAttrMultiProcessorCount);
      const int64_t want = std::max<int64_t>(1, slots / (s.b * p.ngroups));
      len = ceil_div(s.m, want);
    }
    len = std::max<int64_t>(len, ceil_div(s.m, kMaxChunks));  // the reduction's weights fit
    p.chunk_len = round_up(std::max<int64_t>(len, 1), p.tt);
    p.nchunks = static_cast<int>(ceil_div(s.m, p.chunk_len));
    if (p.nchunks == 1) p.chunk_len = s.m;
  }
  return p;
}

// Largest of 16/8/4 bytes that divides the pointer and every row offset; 0 = plain loads.
int copy_width(const void* base, int64_t row_bytes, int64_t col_step_bytes) {
  const uintptr_t b = reinterpret_cast<uintptr_t>(base);
  for (int w : {16, 8, 4})
    if (b % w == 0 && row_bytes % w == 0 && col_step_bytes % w == 0) return w;
  return 0;
}

}  // namespace

void tpa_decode_check(const TpaShape& s, DType dtype) {
  (void)dtype;
  const std::string where = "tpa_decode (b=" + std::to_string(s.b) + " h=" + std::to_string(s.h) +
                            " r=" + std::to_string(s.r) + " d=" + std::to_string(s.d) +
                            " e=" + std::to_string(s.e) + " m=" + std::to_string(s.m) + "): ";
  if (s.b < 1 || s.h < 1 || s.r < 1 || s.d < 1 || s.e < 1 || s.m < 1)
    throw KernelError(where + "every size must be >= 1");
  if (s.r > 64) throw KernelError(where + "rank r must be <= 64");
  if (s.d > 256 || s.e > 256) throw KernelError(where + "d and e must be <= 256");
  if (s.b > 65535) throw KernelError(where + "b must be <= 65535");
  if (s.h > 65535) throw KernelError(where + "h must be <= 65535");
  if (s.m > (int64_t{1} << 40)) throw KernelError(where + "m too large");
}

int64_t tpa_decode_chunks(const TpaShape& s, DType dtype, TpaStrategy strategy,
                          const TpaOptions& opt) {
  tpa_decode_check(s, dtype);
  return make_plan(s, dtype, strategy, opt).nchunks;
}

size_t tpa_decode_workspace_bytes(const TpaShape& s, DType dtype, TpaStrategy strategy,
                                  const TpaOptions& opt) {
  const int64_t n = tpa_decode_chunks(s, dtype, strategy, opt);
  if (n <= 1) return 0;
  return static_cast<size_t>(s.b * n * s.h * (s.e + 2)) * sizeof(float);
}

void tpa_decode(const void* aq, const void* ak, const void* av, const void* bq, const void* bk,
                const void* bv, void* out, void* workspace, size_t workspace_bytes,
                const TpaShape& s, const TpaScales& sc, DType dtype, TpaStrategy strategy,
                cudaStream_t stream, const TpaOptions& opt) {
  tpa_decode_check(s, dtype);
  if (!aq || !ak || !av || !bq || !bk || !bv || !out)
    throw KernelError("tpa_decode: null tensor pointer");
  const Plan p = make_plan(s, dtype, strategy, opt);
  const int sz = dtype_size(dtype);

  TpaArgs a{};
  a.aq = aq; a.ak = ak; a.av = av; a.bq = bq; a.bk = bk; a.bv = bv; a.out = out;
  a.b = static_cast<int>(s.b); a.h = static_cast<int>(s.h); a.r = static_cast<int>(s.r);
  a.d = static_cast<int>(s.d); a.e = static_cast<int>(s.e); a.m = s.m;
  a.chunk_len = p.chunk_len; a.nchunks = p.nchunks;
  a.HG = p.HG; a.tt = p.tt; a.a_full = p.a_full; a.NS = p.NS;
  a.q_stride = p.q_stride; a.bk_stride = p.bk_stride; a.bv_stride = p.bv_stride;
  a.a_stride = p.a_stride; a.d_pad = p.d_pad; a.e_pad = p.e_pad;
  a.qscale = sc.scale * sc.scale_k * sc.scale_q * kLog2e;
  a.vscale = sc.scale_v;
  // cp.async widths: every row start and the group's first head must be aligned to the width.
  a.w_bk = copy_width(bk, s.d * sz, 0);
  a.w_bv = copy_width(bv, s.e * sz, 0);
  const int64_t head_step = p.a_full ? 0 : int64_t{p.HG} * sz;
  a.w_a = std::min(copy_width(ak, s.h * sz, head_step), copy_width(av, s.h * sz, head_step));

  if (p.nchunks > 1) {
    const size_t need = static_cast<size_t>(s.b * p.nchunks * s.h * (s.e + 2)) * sizeof(float);
    if (workspace == nullptr || workspace_bytes < need)
      throw KernelError("tpa_decode: workspace of " + std::to_string(workspace_bytes) +
                        " bytes, needs " + std::to_string(need));
    if (reinterpret_cast<uintptr_t>(workspace) % 16 != 0)
      throw KernelError("tpa_decode: workspace must be 16-byte aligned");
    float* w = static_cast<float*>(workspace);
    a.po = w;
    a.pm = w + s.b * p.nchunks * s.h * s.e;
    a.pl = a.pm + s.b * p.nchunks * s.h;
  }

  const KernelFn fn = kernel_for(p, dtype);
  allow_max_smem(fn);
  const dim3 grid(static_cast<unsigned>(p.nchunks), static_cast<unsigned>(p.ngroups),
                  static_cast<unsigned>(s.b));
  fn<<<grid, p.threads, p.smem, stream>>>(a);
  OPBENCH_LAUNCH_CHECK();
  if (p.nchunks > 1) {
    const int threads = static_cast<int>(std::min<int64_t>(256, round_up(s.e, 32)));
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(static_cast<unsigned>(s.b * s.h));
    cfg.blockDim = dim3(static_cast<unsigned>(threads));
    // chunk weights, padded to whole 16-byte groups (the compiler may merge guarded loads)
    cfg.dynamicSmemBytes = sizeof(float) * (round_up(p.nchunks, 4) + 4);
    cfg.stream = stream;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    const bool pdl = opt.pdl && device_attr(cudaDevAttrComputeCapabilityMajor) >= 9;
    cfg.attrs = attr;
    cfg.numAttrs = pdl ? 1 : 0;
    switch (dtype) {
      case DType::f32: OPBENCH_CUDA_CHECK(cudaLaunchKernelEx(&cfg, tpa_reduce_kernel<float>, a)); break;
      case DType::f16: OPBENCH_CUDA_CHECK(cudaLaunchKernelEx(&cfg, tpa_reduce_kernel<__half>, a)); break;
      case DType::bf16:
        OPBENCH_CUDA_CHECK(cudaLaunchKernelEx(&cfg, tpa_reduce_kernel<__nv_bfloat16>, a));
        break;
    }
    OPBENCH_LAUNCH_CHECK();
  }
}

}  // namespace opbench::kernels

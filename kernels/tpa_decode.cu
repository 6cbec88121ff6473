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
//     block = (chunk of m, group of HG = 16 * MH heads, batch); warp = (mi, ns, tq): heads
//     mi*16 .. +16, output columns ns*128 .. +128, tokens tq*16 .. +16 of every tile of TT
//     tokens (TT/16 token slices; cp.async, STAGES deep). Per tile a warp does S = Q BK^T on its
//     16 x 16 (mma.sync m16n8k16, Q and BK by ldmatrix), times ak, an online softmax over its own
//     token slice (ak and av fragments by ldmatrix.trans straight into the accumulator layout),
//     W = p * av packed into A fragments, O += W BV (ldmatrix.trans); no warp repeats another's
//     scores. The slices merge (m, l, O) through shared memory at the end. bk and bv are read
//     once per (batch, head group). With bn the blocks of a (batch, head group) take their tiles
//     from a counter in the workspace after STAGES fixed ones, so they finish together, and when
//     every block is resident (cooperative launch) they merge the partials themselves: each
//     waits for its group's blocks and merges a share of the group's heads (merge_partials).
//   tpa_cc_kernel<T>  (any dtype; strategy bh with one head a block, and fp32 b/bn)
//     the same tiling on float32 FMAs: scores by (token, head) pairs, softmax a warp per head,
//     O += W BV with float4 accumulators in registers (token slices when few heads).
//   tpa_reduce_kernel<T, V>  (bn without the fused merge) merges the chunk partials: M = max m_c,
//     L = sum l_c 2^(m_c - M), o = scale_v sum o_c 2^(m_c - M) / L, every load in flight at
//     once; launched with programmatic dependent launch on sm_90; it zeroes the tile counters
//     for the next call.
// Both main kernels start with the q inputs (aq rows, bq) copied asynchronously together with
// the first tile, then build q in shared memory (aq as a transposed float table). Measured:
// docs/kernels.md, tpa_decode.
#include <algorithm>
#include <climits>
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
constexpr int kEW = 128;         // output columns per warp (tensor-core kernel)
constexpr int kMaxWarpsTc = 8;   // warps per tensor-core block
constexpr int kCcThreads = 256;  // threads per CUDA-core block
constexpr int kCcMaxQuads = 8;   // float4 accumulators per thread (CUDA-core kernel)
constexpr int kMaxChunks = 4096; // bn: chunks of m at most (reduction weights in shared memory)
constexpr int kTileRing = 8;     // tensor-core kernel: tile indices published ahead of use
constexpr int kJitRounds = 3;    // tensor-core kernel: the counter's last rounds drawn just in time
constexpr int kRedPad = 8;       // tensor-core kernel: pad of the slice merge's rows (floats)

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
  static __device__ __forceinline__ float2 unpack(uint32_t r) {
    return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&r));
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
  static __device__ __forceinline__ float2 unpack(uint32_t r) {
    return __half22float2(*reinterpret_cast<const __half2*>(&r));
  }
};

// ---------------------------------------------------------------------------------------------
struct TpaArgs {
  const void *aq, *ak, *av, *bq, *bk, *bv;
  void* out;                 // (b, 1, h, e)
  float *pm, *po;            // bn partials: [b][nchunks][h] m, [b][nchunks][h][partial_row(e)] o and l
  unsigned* ctr;             // bn, tensor cores: [b * ngroups] tiles handed out, then (fused
                             // merge) [b * ngroups] barrier words; or null
  bool fused;                // bn, tensor cores: the main kernel merges the partials itself
                             // (cooperative launch: every block resident)
  int ngroups;               // head groups (gridDim.y of the main kernel)
  int b, h, r, d, e;
  int64_t m;
  int64_t chunk_len;
  int nchunks;
  int HG;                    // heads per block
  int tt;                    // tokens per tile
  bool a_full;               // ak/av tiles hold every head (bh), else the block's heads
  int w_bk, w_bv, w_a;       // cp.async widths in bytes (16, 8, 4; 0 = plain loads)
  int lg_bk, lg_bv, lg_a;    // log2 of the chunks per row when a power of two dividing the
                             // block's threads, else -1 (load_rows)
  // shared-memory geometry (elements; offsets in bytes)
  int q_stride, bk_stride, bv_stride, a_stride, d_pad, e_pad;
  int stage_off, qin_off;    // the pipeline stages; the raw q inputs (aq rows, bq)
  int aqt_off;               // tc: aq as a transposed float table (r x HG rounded to 8)
  // tc: warps split e in NS parts of kEW columns
  int NS;
  float qscale;              // scale * scale_k * scale_q * log2(e)
  float vscale;              // scale_v
};

// Rows [0, rows) of a tile whose rows are 2^lg_cpr 16-byte chunks (2^lg_cpr divides nthr),
// global (row stride ss) -> shared (row stride ds), asynchronously: a thread keeps one column
// and its rows step by nthr >> lg_cpr.
template <typename T>
__device__ __forceinline__ void copy_rows16(T* dst, int ds, const T* src, int64_t ss, int rows,
                                            int lg_cpr, int tid, int nthr) {
  const int c = (tid & ((1 << lg_cpr) - 1)) * (16 / static_cast<int>(sizeof(T)));
  const int rstep = nthr >> lg_cpr;
  int r = tid >> lg_cpr;
  const T* sp = src + r * ss + c;
  const int64_t sstep = rstep * ss;
  uint32_t d = smem_u32(dst + r * ds + c);
  const uint32_t dstep = static_cast<uint32_t>(rstep * ds * sizeof(T));
  for (; r < rows; r += rstep, sp += sstep, d += dstep)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(sp));
}

// Rows [0, rows) x columns [0, cols) of a tile, global (row stride ss) -> shared (row stride
// ds); rows >= valid are written as zeros. Asynchronous unless w == 0. lg_cpr >= 0 (chunks_log2):
// a full-width row is 2^lg_cpr chunks of w bytes and 2^lg_cpr divides nthr; when this row is
// that wide (a block's last head group may be narrower) a thread keeps one column and its rows
// step by nthr >> lg_cpr (shifts only: this runs once per tile and stream).
template <typename T>
__device__ __forceinline__ void load_rows(T* dst, int ds, const T* src, int64_t ss, int valid,
                                          int rows, int cols, int w, int lg_cpr, int tid,
                                          int nthr) {
  if (lg_cpr >= 0 && cols * static_cast<int>(sizeof(T)) == w << lg_cpr) {
    if (w == 16 && valid >= rows) {  // the common case: whole tiles of 16-byte chunks
      copy_rows16(dst, ds, src, ss, rows, lg_cpr, tid, nthr);
      return;
    }
    const int c = (tid & ((1 << lg_cpr) - 1)) * (w / static_cast<int>(sizeof(T)));
    const int rstep = nthr >> lg_cpr;
    int r = tid >> lg_cpr;
    const T* sp = src + r * ss + c;
    const int64_t sstep = rstep * ss;
    for (; r < rows; r += rstep, sp += sstep) {
      const bool ok = r < valid;
      cp_async(dst + r * ds + c, ok ? sp : src, w, ok ? w : 0);
    }
    return;
  }
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
  const int n = rows * cpr;
  for (int i = tid; i < n; i += nthr) {
    const int rr = i / cpr, c = (i % cpr) * epc;
    const bool ok = rr < valid;
    cp_async(dst + rr * ds + c, src + (ok ? rr : 0) * ss + c, w, ok ? w : 0);
  }
}

// The q inputs of a block, raw: aq rows of its heads (hv x r) and bq (r x d), copied into shared
// memory asynchronously (every copy in flight at once; the caller commits the group). `dst` is
// 16-byte aligned; the widest cp.async that the source and size allow, plain copies otherwise.
__device__ __forceinline__ void copy_flat_async(void* dst, const void* src, int nbytes, int tid,
                                                int nthr) {
  const uintptr_t bits = reinterpret_cast<uintptr_t>(src) | static_cast<uintptr_t>(nbytes);
  const int w = bits % 16 == 0 ? 16 : bits % 8 == 0 ? 8 : bits % 4 == 0 ? 4 : 0;
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  if (w == 0) {  // 2-byte elements at odd offsets: plain copies (rare shapes only)
    for (int i = tid; i < nbytes / 2; i += nthr)
      reinterpret_cast<uint16_t*>(d)[i] = reinterpret_cast<const uint16_t*>(s)[i];
    return;
  }
  for (int i = tid * w; i < nbytes; i += nthr * w) cp_async(d + i, s + i, w, w);
}

template <typename T>
__device__ __forceinline__ const T* stage_q_inputs(const TpaArgs& a, int bi, int head0, int hv,
                                                   T* qin, int tid, int nthr) {
  const T* aq = static_cast<const T*>(a.aq) + (static_cast<int64_t>(bi) * a.h + head0) * a.r;
  const T* bq = static_cast<const T*>(a.bq) + static_cast<int64_t>(bi) * a.r * a.d;
  T* bq_s = qin + ((hv * a.r + 7) & ~7);
  copy_flat_async(qin, aq, hv * a.r * static_cast<int>(sizeof(T)), tid, nthr);
  copy_flat_async(bq_s, bq, a.r * a.d * static_cast<int>(sizeof(T)), tid, nthr);
  return bq_s;
}

// q (HG x q_cols) for the block's heads from the staged inputs, pre-scaled by qscale; rows >= hv
// and columns >= d are zero. aq goes first into a transposed float table aq_t (r x HG8, zero
// past hv: the caller gives r * HG8 floats), then a thread per (8 heads, column) reads 8 heads
// with two 16-byte broadcasts per rank.
template <typename T, typename QT>
__device__ __forceinline__ void compute_q(const TpaArgs& a, const T* aq_s, const T* bq_s, int hv,
                                          float* aq_t, QT* Qs, int q_stride, int q_cols, int tid,
                                          int nthr) {
  using S = Storage<T>;
  const int HG8 = (a.HG + 7) & ~7;
  for (int i = tid; i < HG8 * a.r; i += nthr) {
    const int hh = i / a.r, rr = i % a.r;
    aq_t[rr * HG8 + hh] = hh < hv ? S::to_f(aq_s[i]) : 0.f;
  }
  __syncthreads();
  const int groups = HG8 / 8;
  for (int i = tid; i < groups * q_cols; i += nthr) {
    const int hc = i / q_cols, k = i % q_cols;
    float acc[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
    if (k < a.d) {
      for (int rr = 0; rr < a.r; ++rr) {
        const float bv = S::to_f(bq_s[rr * a.d + k]);
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

// Timeline trace (builds with -DOPBENCH_TPA_TRACE only; kernels_md_tpa_bench --trace): thread 0
// of each block stamps %globaltimer (ns) at fixed points into g_tpa_trace, slot = (batch, head
// group) x chunks + chunk (the tensor-core kernel) or kTpaTraceReduce + block (reduction).
#ifdef OPBENCH_TPA_TRACE
__device__ unsigned long long g_tpa_trace[kTpaTraceSlots * kTpaTraceFields];
__device__ __forceinline__ void tpa_stamp(int slot, int k) {
  if (threadIdx.x != 0 || slot >= kTpaTraceSlots) return;
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  g_tpa_trace[static_cast<size_t>(slot) * kTpaTraceFields + k] = t;
}
#else
__device__ __forceinline__ void tpa_stamp(int, int) {}
#endif

// ---------------------------------------------------------------------------------------------
// bn: merging the chunk partials of `nh` consecutive heads of batch element bi with a whole
// block: M = max_c m_c, w_c = 2^(m_c - M), L = sum_c l_c w_c, out = scale_v sum_c w_c o_c / L.
// A partial row holds o_c (e floats) and then l_c (the row's last group: (l_c, 0, 0, 0) for
// V = 4), so L is summed like an o column and no load waits for another: the m_c become weights
// while every o and l load is in flight (l_c loaded after the weights cost a round trip).
// Thread (slice, head, column group) loads the groups of chunks slice, slice + S, ... (the first
// kRedBatch before anything waits); a warp per head turns the m_c into weights in shared memory, and the slices are summed
// there. Partials are read through L2 (ld.global.cg): in the fused merge other multiprocessors
// wrote them during this kernel. V = 4: float4 columns (e % 4 == 0), else 1. Used by the
// reduction kernel (a block per (b, h)) and by the tensor-core kernel's fused merge (a group's
// heads shared among its blocks). (A warp-per-head version without barriers measured 5.6 us
// against 2.6 us at b = 8, 32 chunks: its loads went 8 at a time. l_c loaded with m_c, from an
// array of its own, made the tensor-core kernels spill in their main loop.)
constexpr int kRedThreads = 256;
constexpr int kRedBatch = 8;

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

__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// A partial row: o (e floats), then l (and zeros to the next 16 bytes when e % 4 == 0).
__host__ __device__ constexpr int partial_row(int e) { return e % 4 == 0 ? e + 4 : e + 1; }

// Shared memory of merge_partials in floats: weights [nh][nchunks], then the slice sums (S x nh x
// (column groups + 1) x V, at most max(threads, nh x (groups + 1)) x V).
__host__ __device__ constexpr int64_t merge_smem_floats(int nh, int nchunks, int e, int threads, int V) {
  return int64_t{nh} * nchunks + int64_t{V} * (threads > nh * ((e + V - 1) / V + 1)
                                                   ? threads : nh * ((e + V - 1) / V + 1));
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

__device__ __forceinline__ unsigned atom_add_acq_rel(unsigned* p, unsigned v) {
  unsigned old;
  asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
  return old;
}
__device__ __forceinline__ unsigned ld_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// ---------------------------------------------------------------------------------------------
// Tensor-core kernel (bf16 / fp16). Warp w = (mi, ns, tq): heads mi*16 .. +16 of the block's
// group, output columns ns*kEW .. +kEW, and tokens tq*16 .. +16 of every tile (TQ = TT / 16
// slices). Each warp runs its own online softmax over its token slice; the slices are merged
// through shared memory at the end. No warp repeats another's scores.
//
// Tiles: a block's k-th tile is, with one chunk per block, tile k of its chunk (strategy b and
// bn with static chunks); with the bn work counters (a.ctr), tile chunk + k * nchunks for the
// first STAGES (no wait at the start), then whatever the (batch, group)'s counter hands out, so
// blocks that DRAM serves faster take more tiles and all finish together (measured: with equal
// chunks the blocks' loops ended between 49 and 65 us at b = 8, m = 32768). A block's partial
// covers any set of tokens; the fused merge or the reduction kernel merges them and zeroes the
// counters for the next call.
// Pipeline: the prologue fills every stage (tile 0 with the q inputs, the others once q is
// built); then per tile: wait for tile k, barrier, issue tile k + STAGES - 1 into the stage
// computed last (from k = 1), compute tile k. Thread 0 asks the counter for tile k + STAGES
// during tile k and publishes it at the next barrier (tile_ring); in the counter's last
// kJitRounds rounds it draws each tile just before the barrier that publishes it for issue.
template <typename T, int TT, int STAGES>
__global__ void __launch_bounds__(kMaxWarpsTc * 32, 2) tpa_tc_kernel(TpaArgs a) {
  using S = Storage<T>;
  using M = MmaOp<T>;
  constexpr int TQ = TT / 16;
  static_assert(TQ >= 2, "tiles of 32 or 64 tokens: at least two token slices to merge");
  static_assert(STAGES + 1 < kTileRing, "the tile ring holds the tiles in flight and the next");
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ int tile_ring[kTileRing];
  const int tid = threadIdx.x, nthr = blockDim.x;
  const int lane = tid & 31, warp = tid >> 5;
  // Block -> (batch, head group, chunk), groups interleaved: consecutive blocks (which the
  // hardware places side by side) belong to different groups, so every group's blocks spread
  // over the whole chip and see its average bandwidth. (Measured at m = 32768: the groups' last
  // tiles ended 4.7 us apart at b = 8 and 13 us at b = 32 with chunk fastest; 1.5 and 8.7 us so.)
  const int ngrid = gridDim.y * gridDim.z;
  const int lin = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const int grp = lin % ngrid, chunk = lin / ngrid;
  const int bi = grp / gridDim.y, head0 = (grp % gridDim.y) * a.HG;
  const int hv = min(a.HG, a.h - head0);
  const bool dyn = a.ctr != nullptr;
  const int64_t t_begin = dyn ? 0 : chunk * a.chunk_len;
  const int64_t t_end = dyn ? a.m : min64(a.m, t_begin + a.chunk_len);
  const int tile0 = static_cast<int>(t_begin / TT);                 // chunks are whole tiles
  const int tile_end = static_cast<int>((t_end + TT - 1) / TT);
  unsigned* ctr = dyn ? a.ctr + grp : nullptr;
  // The block's k-th tile (absolute index) for k < STAGES, or -1 past its last.
  auto tile_of = [&](int k) -> int {
    const int t = dyn ? chunk + k * a.nchunks : tile0 + k;
    return t < tile_end ? t : -1;
  };
  // Thread 0 alone, for k >= STAGES: request(k) asks for the block's k-th tile (with counters an
  // atomicAdd), answer() reads the reply. The reply is read only at the end of a tile's compute:
  // comparing it at once stalled warp 0 for the atomic's round trip (+3.6 us to q at b = 8).
  unsigned ticket = 0u;
  int asked = -1;
  auto request = [&](int k) {
    asked = k;
    if (dyn) ticket = atomicAdd(ctr, 1u);
  };
  auto answer = [&]() -> int {
    if (asked < 0) return -1;
    const int t = dyn ? STAGES * a.nchunks + static_cast<int>(ticket) : tile0 + asked;
    return t < tile_end ? t : -1;
  };
  // The last kJitRounds rounds of the counter (tiles >= jit_from): thread 0 draws each tile just
  // before the barrier that publishes it for issue, once this tile's copies have landed, instead
  // of two tiles ahead, so the last tiles go to the blocks ready to load them; each such tile
  // waits for the atomic's round trip. (jit: 0 asking ahead, 1 the last tile asked ahead is in
  // the ring, 2 drawing just in time.) Measured at b = 8, m = 32768: 1 round no faster, 2, 3, 4
  // and 6 rounds 0.2-0.4 us faster; b = 32 unchanged.
  const int jit_from = dyn ? tile_end - kJitRounds * a.nchunks : INT_MAX;
  int jit = 0;
  auto draw_now = [&]() -> int {
    const int t = STAGES * a.nchunks + static_cast<int>(atomicAdd(ctr, 1u));
    return t < tile_end ? t : -1;
  };
  const int slot = grp * gridDim.x + chunk;  // trace slot: a group's blocks side by side
  tpa_stamp(slot, kTrEntry);

  // shared memory: Qs | aq_t | STAGES x (BK | BV | AK | AV) | q inputs (tc_layout); after the
  // loop the stages hold the merge buffers.
  T* Qs = reinterpret_cast<T*>(smem);
  float* aq_t = reinterpret_cast<float*>(smem + a.aqt_off);
  T* stages = reinterpret_cast<T*>(smem + a.stage_off);
  const int bk_elems = TT * a.bk_stride, bv_elems = TT * a.bv_stride, a_elems = TT * a.a_stride;
  const int stage_elems = bk_elems + bv_elems + 2 * a_elems;

  // Every stream of this block's tiles in whole 16-byte chunks on load_rows' shift path.
  const bool fast = a.w_bk == 16 && a.w_bv == 16 && a.w_a == 16 && a.lg_bk >= 0 &&
                    a.lg_bv >= 0 && a.lg_a >= 0 && a.d * static_cast<int>(sizeof(T)) == 16 << a.lg_bk &&
                    a.e * static_cast<int>(sizeof(T)) == 16 << a.lg_bv &&
                    hv * static_cast<int>(sizeof(T)) == 16 << a.lg_a;
  // A tile's rows, addressed from the kernel's parameters at each issue (four pointers kept in
  // registers across the loop pushed the fp16 kernels past 128 registers).
  auto issue = [&](int tile, int k) {
    T* base = stages + (k % STAGES) * stage_elems;
    const int64_t t0 = static_cast<int64_t>(tile) * TT;
    const int64_t row = static_cast<int64_t>(bi) * a.m + t0;  // of the (b * m)-row inputs
    const int valid = static_cast<int>(min64(TT, t_end - t0));
    if (fast && valid == TT) {  // the hot path alone, compact (ncu: instruction-fetch stalls)
      copy_rows16(base, a.bk_stride, static_cast<const T*>(a.bk) + row * a.d, a.d, TT, a.lg_bk,
                  tid, nthr);
      copy_rows16(base + bk_elems, a.bv_stride, static_cast<const T*>(a.bv) + row * a.e, a.e, TT,
                  a.lg_bv, tid, nthr);
      copy_rows16(base + bk_elems + bv_elems, a.a_stride,
                  static_cast<const T*>(a.ak) + row * a.h + head0, a.h, TT, a.lg_a, tid, nthr);
      copy_rows16(base + bk_elems + bv_elems + a_elems, a.a_stride,
                  static_cast<const T*>(a.av) + row * a.h + head0, a.h, TT, a.lg_a, tid, nthr);
      return;
    }
    load_rows<T>(base, a.bk_stride, static_cast<const T*>(a.bk) + row * a.d, a.d, valid, TT, a.d,
                 a.w_bk, a.lg_bk, tid, nthr);
    load_rows<T>(base + bk_elems, a.bv_stride, static_cast<const T*>(a.bv) + row * a.e, a.e, valid,
                 TT, a.e, a.w_bv, a.lg_bv, tid, nthr);
    load_rows<T>(base + bk_elems + bv_elems, a.a_stride, static_cast<const T*>(a.ak) + row * a.h + head0,
                 a.h, valid, TT, hv, a.w_a, a.lg_a, tid, nthr);
    load_rows<T>(base + bk_elems + bv_elems + a_elems, a.a_stride,
                 static_cast<const T*>(a.av) + row * a.h + head0, a.h, valid, TT, hv, a.w_a, a.lg_a,
                 tid, nthr);
  };

  // q inputs and tile 0 first; once q is built, the other stages' tiles (issued with the first
  // ones, they delayed q to +10 us at b = 8, m = 32768, against +5.6 us this way).
  T* qin = reinterpret_cast<T*>(smem + a.qin_off);
  // The first counter request goes out before any load (answer read at the end of tile 0).
  if (tid == 0 && tile_of(STAGES - 1) >= 0) request(STAGES);
  const T* bq_s = stage_q_inputs<T>(a, bi, head0, hv, qin, tid, nthr);
  cp_async_commit();
  {
    const int t = tile_of(0);
    if (t >= 0) issue(t, 0);
    cp_async_commit();
    if (tid == 0) tile_ring[0] = t;
  }
  cp_async_wait<1>();
  __syncthreads();
  tpa_stamp(slot, kTrQInputs);
  compute_q<T, T>(a, qin, bq_s, hv, aq_t, Qs, a.q_stride, a.d_pad, tid, nthr);
  tpa_stamp(slot, kTrQBuilt);
  pdl_trigger();
  // The other stages once q is built. (Issued before q is built, once its inputs landed, they
  // stalled the threads at the copies while tile 0's were outstanding: q at +8.2 us, not +5.6,
  // and 1.8 us slower at b = 8, m = 32768.)
#pragma unroll
  for (int k = 1; k < STAGES; ++k) {
    const int t = tile_of(k);
    if (t >= 0) issue(t, k);
    cp_async_commit();
    if (tid == 0) tile_ring[k] = t;
  }
  tpa_stamp(slot, kTrQReady);

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

  const int tq = warp % TQ, ns = (warp / TQ) % a.NS, mi = warp / (TQ * a.NS);
  const int g = lane >> 2, c4 = lane & 3;
  const int trow = tq * 16;  // the warp's first token row of a tile
  float o[kEW / 8][4];
#pragma unroll
  for (int n = 0; n < kEW / 8; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
  float mrow[2] = {-INFINITY, -INFINITY}, lrow[2] = {0.f, 0.f};
  const int ksteps = a.d_pad / 16;

  for (int kt = 0;; ++kt) {
    // Wait for tile kt's group. Groups committed after it: at kt = 0 the prologue's tiles
    // 1 .. STAGES - 1; from kt = 1 on, tiles kt + 1 .. kt + STAGES - 2 (one per iteration).
    if (kt == 0) cp_async_wait<STAGES - 1>();
    else cp_async_wait<STAGES - 2>();
    if (tid == 0 && jit == 2 && tile_ring[(kt + STAGES - 2) % kTileRing] >= 0)
      tile_ring[(kt + STAGES - 1) % kTileRing] = draw_now();  // the tile issued below
    __syncthreads();
    const int tile = tile_ring[kt % kTileRing];
    if (tile < 0) break;
    if (kt > 0) {
      const int nt = tile_ring[(kt + STAGES - 1) % kTileRing];
      if (nt >= 0) issue(nt, kt + STAGES - 1);
      cp_async_commit();
      if (tid == 0) {
        asked = -1;
        if (nt >= 0 && jit == 0) request(kt + STAGES);  // answered during the tile
      }
    }
    if (kt == 0) tpa_stamp(slot, kTrFirstTile);

    const T* BK = stages + (kt % STAGES) * stage_elems;
    const T* BV = BK + bk_elems;
    const T* AK = BV + bv_elems;
    const T* AV = AK + a_elems;
    const int valid = static_cast<int>(min64(TT, t_end - static_cast<int64_t>(tile) * TT));

    // S = Q BK^T: this warp's 16 heads x 16 tokens.
    float s[2][4] = {{0.f, 0.f, 0.f, 0.f}, {0.f, 0.f, 0.f, 0.f}};
    for (int ks = 0; ks < ksteps; ++ks) {
      uint32_t qa[4], kb[4];
      ldsm_x4(qa, Qs + (mi * 16 + (lane & 15)) * a.q_stride + ks * 16 + (lane >> 4) * 8);
      ldsm_x4(kb, BK + (trow + (lane & 7) + (lane >> 4) * 8) * a.bk_stride + ks * 16 +
                      ((lane >> 3) & 1) * 8);
      M::run(s[0], qa, kb[0], kb[1]);
      M::run(s[1], qa, kb[2], kb[3]);
    }

    // ak and av in the scores' accumulator layout, one ldmatrix.trans each: matrix j holds
    // tokens trow + (j >> 1) * 8 .. +8 of heads mi * 16 + (j & 1) * 8 .. +8, so register j is
    // (n = j >> 1, rows g or g + 8 as j & 1) and its halves are tokens 2 c4 and 2 c4 + 1.
    uint32_t akf[4], avf[4];
    {
      const int off = (trow + ((lane >> 4) << 3) + (lane & 7)) * a.a_stride + mi * 16 +
                      (((lane >> 3) & 1) << 3);
      ldsm_x4_t(akf, AK + off);
      ldsm_x4_t(avf, AV + off);
    }
    // Scores times ak, masked; online softmax per head row (rows g and g + 8 of the 16).
    float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int n = 0; n < 2; ++n)
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const float2 k2 = M::unpack(akf[2 * n + i]);
        const int t = trow + n * 8 + 2 * c4;
        s[n][2 * i] = t < valid ? s[n][2 * i] * k2.x : -INFINITY;
        s[n][2 * i + 1] = t + 1 < valid ? s[n][2 * i + 1] * k2.y : -INFINITY;
        mx[i] = fmaxf(mx[i], fmaxf(s[n][2 * i], s[n][2 * i + 1]));
      }
    float alpha[2], mref[2];
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      mx[i] = fmaxf(mx[i], __shfl_xor_sync(0xffffffffu, mx[i], 1));
      mx[i] = fmaxf(mx[i], __shfl_xor_sync(0xffffffffu, mx[i], 2));
      const float mnew = fmaxf(mrow[i], mx[i]);
      mref[i] = mnew == -INFINITY ? 0.f : mnew;  // a slice may not have met a valid token yet
      alpha[i] = ex2(mrow[i] - mref[i]);
      mrow[i] = mnew;
    }
    float rs[2] = {0.f, 0.f};
#pragma unroll
    for (int n = 0; n < 2; ++n)
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const float2 v2 = M::unpack(avf[2 * n + i]);
        const float p0 = ex2(s[n][2 * i] - mref[i]), p1 = ex2(s[n][2 * i + 1] - mref[i]);
        rs[i] += p0 + p1;
        s[n][2 * i] = p0 * v2.x;
        s[n][2 * i + 1] = p1 * v2.y;
      }
#pragma unroll
    for (int i = 0; i < 2; ++i) lrow[i] = lrow[i] * alpha[i] + rs[i];
    // Rescale the accumulators only when some row's max moved (rare after the first tiles).
    if (__any_sync(0xffffffffu, alpha[0] != 1.f || alpha[1] != 1.f)) {
#pragma unroll
      for (int n = 0; n < kEW / 8; ++n) {
        o[n][0] *= alpha[0]; o[n][1] *= alpha[0];
        o[n][2] *= alpha[1]; o[n][3] *= alpha[1];
      }
    }

    // O += W BV: the scores' accumulator layout is the A operand's (16 heads x 16 tokens).
    uint32_t pa[4];
    pa[0] = M::pack(s[0][0], s[0][1]);
    pa[1] = M::pack(s[0][2], s[0][3]);
    pa[2] = M::pack(s[1][0], s[1][1]);
    pa[3] = M::pack(s[1][2], s[1][3]);
#pragma unroll
    for (int cp = 0; cp < kEW / 16; ++cp) {
      const int col0 = ns * kEW + cp * 16;
      if (col0 < a.e_pad) {
        uint32_t vb[4];
        ldsm_x4_t(vb, BV + (trow + (lane & 7) + ((lane >> 3) & 1) * 8) * a.bv_stride + col0 +
                          (lane >> 4) * 8);
        M::run(o[2 * cp], pa, vb[0], vb[1]);
        M::run(o[2 * cp + 1], pa, vb[2], vb[3]);
      }
    }
    if (tid == 0) {
      if (jit == 0) {
        const int t = answer();
        tile_ring[(kt + STAGES) % kTileRing] = t;  // read after the next barrier
        if (t >= jit_from) jit = 1;
      } else {
        jit = 2;
      }
    }
  }
  cp_async_wait<0>();
  tpa_stamp(slot, kTrLoopDone);

#pragma unroll
  for (int i = 0; i < 2; ++i) {
    lrow[i] += __shfl_xor_sync(0xffffffffu, lrow[i], 1);
    lrow[i] += __shfl_xor_sync(0xffffffffu, lrow[i], 2);
  }

  // Merge the TQ token slices, every warp at once: each publishes its rows' m, all read the
  // common max M and scale their l and o by 2^(m - M) into the slice buffers, and then every
  // thread sums the slices of a share of the (head, column) outputs with 16-byte accesses.
  // Floats per head row of a slice. The pad makes rows 8 banks apart, so a half warp's float2
  // stores of four rows (lanes (g, c4): row g, columns 2 c4 ..) fill the 32 banks once (with
  // +4 rows g and g + 1 shared four banks: twice the store wavefronts).
  const int ostride = a.NS * kEW + kRedPad;
  float* red_m = reinterpret_cast<float*>(stages);   // [TQ][HG]
  float* red_l = red_m + TQ * a.HG;                  // [TQ][HG]
  float* red_o = red_l + TQ * a.HG;                  // [TQ][HG][ostride]
  __syncthreads();  // every warp is done with the stages
#pragma unroll
  for (int i = 0; i < 2; ++i)
    if (ns == 0 && c4 == 0) red_m[tq * a.HG + mi * 16 + g + i * 8] = mrow[i];
  __syncthreads();
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int row = mi * 16 + g + i * 8;
    float mall = -INFINITY;
#pragma unroll
    for (int q = 0; q < TQ; ++q) mall = fmaxf(mall, red_m[q * a.HG + row]);
    const float w = ex2(mrow[i] - (mall == -INFINITY ? 0.f : mall));  // 0 for an empty slice
    if (ns == 0 && c4 == 0) red_l[tq * a.HG + row] = lrow[i] * w;
    float* dst = red_o + static_cast<int64_t>(tq * a.HG + row) * ostride + ns * kEW + 2 * c4;
#pragma unroll
    for (int n = 0; n < kEW / 8; ++n)
      *reinterpret_cast<float2*>(dst + n * 8) = make_float2(o[n][2 * i] * w, o[n][2 * i + 1] * w);
  }
  __syncthreads();
  tpa_stamp(slot, kTrSlicesMerged);
  const int cols4 = (a.e + 3) / 4;
  for (int item = tid; item < hv * cols4; item += nthr) {
    const int hl = item / cols4, c = (item % cols4) * 4;
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
    float mall = -INFINITY, lall = 0.f;
#pragma unroll
    for (int q = 0; q < TQ; ++q) {
      const float4 v = *reinterpret_cast<const float4*>(red_o + static_cast<int64_t>(q * a.HG + hl) * ostride + c);
      acc.x += v.x; acc.y += v.y; acc.z += v.z; acc.w += v.w;
      mall = fmaxf(mall, red_m[q * a.HG + hl]);
      lall += red_l[q * a.HG + hl];
    }
    const int head = head0 + hl;
    const float vals[4] = {acc.x, acc.y, acc.z, acc.w};
    if (a.nchunks == 1) {
      T* out = static_cast<T*>(a.out) + (static_cast<int64_t>(bi) * a.h + head) * a.e;
      const float inv = a.vscale / lall;
#pragma unroll
      for (int j = 0; j < 4; ++j)
        if (c + j < a.e) out[c + j] = S::from_f(vals[j] * inv);
    } else {
      const int64_t pidx = (static_cast<int64_t>(bi) * a.nchunks + chunk) * a.h + head;
      float* row = a.po + pidx * partial_row(a.e);
      if (a.e % 4 == 0) {
        *reinterpret_cast<float4*>(row + c) = acc;
        if (c == 0) *reinterpret_cast<float4*>(row + a.e) = make_float4(lall, 0.f, 0.f, 0.f);
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (c + j < a.e) row[c + j] = vals[j];
        if (c == 0) row[a.e] = lall;
      }
      if (c == 0) a.pm[pidx] = mall;
    }
  }
  if (a.fused) {
    // Fused merge: arrive at the group's barrier word once the partial is out, wait for the
    // group's other blocks (all resident), then merge a share of the group's heads. The word
    // needs no reset: every block adds 1 but chunk 0, which adds 2^31 - (nchunks - 1), so its
    // top bit flips at the last arrival and its low bits come back to zero. The block whose
    // arrival flips it knows the group is done with its tile counter and zeroes it for the next
    // call. (Was: a second counter of blocks merging, whose atomic round trip every block
    // waited for before merging.) Ordering: every thread's partial stores come before the
    // barrier, which synchronizes them with thread 0's release (the acq_rel add), and a
    // merging block reads the partials after its thread 0's acquire and a barrier: no fence per
    // thread (a __threadfence in every thread here measured 0.3-0.4 us slower at b = 8).
    unsigned* bar = a.ctr + a.b * a.ngroups + grp;
    tpa_stamp(slot, kTrPartialWritten);
    __syncthreads();
    tpa_stamp(slot, kTrArrive);
    if (tid == 0) {
      const unsigned inc = chunk == 0 ? 0x80000000u - static_cast<unsigned>(a.nchunks - 1) : 1u;
      const unsigned old = atom_add_acq_rel(bar, inc);
      if (((old + inc) ^ old) & 0x80000000u) *ctr = 0u;
      else
        while (((ld_acquire(bar) ^ old) & 0x80000000u) == 0u) __nanosleep(32);
    }
    __syncthreads();
    tpa_stamp(slot, kTrGroupComplete);
    const int per = (hv + a.nchunks - 1) / a.nchunks, h_lo = chunk * per;
    const int nh = min(hv, h_lo + per) - h_lo;
    float* sh = reinterpret_cast<float*>(stages);  // the merge buffers are read
    if (nh > 0) {
      if (a.e % 4 == 0) merge_partials<T, 4>(a, bi, head0 + h_lo, nh, sh);
      else merge_partials<T, 1>(a, bi, head0 + h_lo, nh, sh);
    }
  }
  tpa_stamp(slot, kTrEnd);
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

  // shared memory: Qs (float) | aq_t | Ps | m_s l_s al_s | 2 x (BK | BV | AK | AV) from stage_off (the
  // plan's cc_layout); the raw q inputs at qin_off (stage 1 when they fit there)
  size_t off = 0;
  auto carve = [&](size_t bytes) {
    unsigned char* p = smem + off;
    off += (bytes + 15) & ~size_t(15);
    return p;
  };
  float* Qs = reinterpret_cast<float*>(carve(sizeof(float) * a.HG * a.q_stride));
  float* aq_t = reinterpret_cast<float*>(carve(sizeof(float) * a.r * ((a.HG + 7) & ~7)));
  const int ps_stride = a.HG + 1;
  float* Ps = reinterpret_cast<float*>(carve(sizeof(float) * TT * ps_stride));
  float* m_s = reinterpret_cast<float*>(carve(sizeof(float) * a.HG));
  float* l_s = reinterpret_cast<float*>(carve(sizeof(float) * a.HG));
  float* al_s = reinterpret_cast<float*>(carve(sizeof(float) * a.HG));
  const int bk_elems = TT * a.bk_stride, bv_elems = TT * a.bv_stride, a_elems = TT * a.a_stride;
  const int stage_elems = bk_elems + bv_elems + 2 * a_elems;
  T* stages = reinterpret_cast<T*>(smem + a.stage_off);

  const T* bk = static_cast<const T*>(a.bk) + static_cast<int64_t>(bi) * a.m * a.d;
  const T* bv = static_cast<const T*>(a.bv) + static_cast<int64_t>(bi) * a.m * a.e;
  const T* ak = static_cast<const T*>(a.ak) + static_cast<int64_t>(bi) * a.m * a.h + acol0;
  const T* av = static_cast<const T*>(a.av) + static_cast<int64_t>(bi) * a.m * a.h + acol0;

  auto issue = [&](int tile) {
    T* base = stages + (tile & 1) * stage_elems;
    const int64_t t0 = t_begin + static_cast<int64_t>(tile) * TT;
    const int valid = static_cast<int>(min64(TT, t_end - t0));
    load_rows<T>(base, a.bk_stride, bk + t0 * a.d, a.d, valid, TT, a.d, a.w_bk, a.lg_bk, tid,
                 kCcThreads);
    load_rows<T>(base + bk_elems, a.bv_stride, bv + t0 * a.e, a.e, valid, TT, a.e, a.w_bv, a.lg_bv,
                 tid, kCcThreads);
    load_rows<T>(base + bk_elems + bv_elems, a.a_stride, ak + t0 * a.h, a.h, valid, TT, acols,
                 a.w_a, a.lg_a, tid, kCcThreads);
    load_rows<T>(base + bk_elems + bv_elems + a_elems, a.a_stride, av + t0 * a.h, a.h, valid, TT,
                 acols, a.w_a, a.lg_a, tid, kCcThreads);
  };
  // q inputs first, then tile 0: both in flight at once
  T* qin = reinterpret_cast<T*>(smem + a.qin_off);
  const T* bq_s = stage_q_inputs<T>(a, bi, head0, hv, qin, tid, kCcThreads);
  cp_async_commit();
  if (ntiles > 0) issue(0);
  cp_async_commit();
  cp_async_wait<1>();
  __syncthreads();
  compute_q<T, float>(a, qin, bq_s, hv, aq_t, Qs, a.q_stride, d4 * 4, tid, kCcThreads);
  pdl_trigger();
  __syncthreads();  // the q inputs (maybe in stage 1) are read; padding is written below
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
      float* row = a.po + pidx * partial_row(a.e);
      for (int j = 0; j < 4 && c + j < a.e; ++j) row[c + j] = vals[j];
      if (c == 0) {
        a.pm[pidx] = m_s[hh];
        row[a.e] = l_s[hh];
        if (a.e % 4 == 0) row[a.e + 1] = row[a.e + 2] = row[a.e + 3] = 0.f;
      }
    }
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
  size_t aqt_off = 0, stage_off = 0, qin_off = 0, smem = 0;  // shared-memory layout (bytes)
  int64_t chunk_len = 1;
  int nchunks = 1;
  bool fused = false;  // bn, tensor cores: the main kernel merges the partials (cooperative)
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
// The dynamic shared memory a block of `fn` may use: the device's opt-in limit less fn's static
// shared memory (the tensor-core kernel's tile ring).
int max_dynamic_smem(KernelFn fn) {
  cudaFuncAttributes fa{};
  OPBENCH_CUDA_CHECK(cudaFuncGetAttributes(&fa, reinterpret_cast<const void*>(fn)));
  return device_attr(cudaDevAttrMaxSharedMemoryPerBlockOptin) - static_cast<int>(fa.sharedSizeBytes);
}

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
                                          max_dynamic_smem(fn)));
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

size_t r16(size_t b) { return (b + 15) & ~size_t(15); }

// The raw q inputs (aq rows of the block's heads, bq) go into the last stage when they fit
// there and the prologue leaves it free (CUDA cores), else past the stages (tensor cores: the
// prologue fills every stage).
void place_q_inputs(Plan& p, const TpaShape& s, int sz, size_t stage_bytes, size_t stages_end) {
  const size_t qin = r16(static_cast<size_t>(round_up(p.HG * s.r, 8)) * sz) + r16(static_cast<size_t>(s.r * s.d) * sz);
  if (qin <= stage_bytes && !p.tc) {
    p.qin_off = stages_end - stage_bytes;
    p.smem = stages_end;
  } else {
    p.qin_off = stages_end;
    p.smem = stages_end + qin;
  }
}

// Tensor cores: Qs | aq_t | stages; after the loop the stages hold the token slices' merge
// buffers.
void tc_layout(Plan& p, const TpaShape& s, int sz) {
  p.aqt_off = r16(static_cast<size_t>(p.HG) * p.q_stride * sz);
  p.stage_off = p.aqt_off + r16(4ull * s.r * round_up(p.HG, 8));
  const size_t stage = static_cast<size_t>(p.tt) * (p.bk_stride + p.bv_stride + 2 * p.a_stride) * sz;
  place_q_inputs(p, s, sz, stage, p.stage_off + p.stages * stage);
  const size_t merge = 4ull * (p.tt / 16) * p.HG * (2 + p.NS * kEW + kRedPad);  // tpa_tc_kernel's
  p.smem = std::max(p.smem, p.stage_off + merge);
}

// CUDA cores: Qs | aq_t | Ps | m_s l_s al_s | 2 stages (the kernel carves the same order); the
// token slices' reduction reuses the stages (256 float4).
void cc_layout(Plan& p, const TpaShape& s, int sz) {
  p.stage_off = r16(4ull * p.HG * p.q_stride) + r16(4ull * s.r * round_up(p.HG, 8)) +
                r16(4ull * p.tt * (p.HG + 1)) + 3 * r16(4ull * p.HG);
  const size_t stage = static_cast<size_t>(p.tt) * (p.bk_stride + p.bv_stride + 2 * p.a_stride) * sz;
  place_q_inputs(p, s, sz, stage, p.stage_off + 2 * stage);
  p.smem = std::max(p.smem, p.stage_off + 256 * 16);
}

Plan make_plan(const TpaShape& s, DType dt, TpaStrategy strat, const TpaOptions& opt) {
  Plan p;
  const int sz = dtype_size(dt);
  p.tc = dt != DType::f32 && strat != TpaStrategy::bh;
  if (p.tc) {
    p.d_pad = static_cast<int>(round_up(s.d, 16));
    p.e_pad = static_cast<int>(round_up(s.e, 16));
    p.NS = static_cast<int>(ceil_div(p.e_pad, kEW));
    p.q_stride = p.d_pad + 8;
    p.bk_stride = p.d_pad + 8;
    p.bv_stride = p.e_pad + 8;
    // Tile x stages: the option, else the first that fits of the strategy's list. b runs few
    // blocks (one per batch element), so it wants a deep pipeline per block (64x4 measured 16%
    // faster than 64x2 at b = 8, m = 32768); bn fills the chip with blocks: 64x2 measured best
    // (2 blocks of ~98 KB per multiprocessor; docs/kernels.md).
    std::vector<std::pair<int, int>> cands;
    if (opt.tile || opt.stages) cands = {{opt.tile ? opt.tile : 64, opt.stages ? opt.stages : 2}};
    else if (strat == TpaStrategy::b) cands = {{64, 4}, {64, 3}, {64, 2}, {32, 2}};
    else cands = {{64, 2}, {32, 2}};
    for (const auto& c : cands) {
      p.tt = c.first;
      p.stages = c.second;
      const KernelFn fn = tc_kernel_for<__half>(p.tt, p.stages);
      if (!fn)
        throw KernelError("tpa_decode: no tensor-core kernel for tile " + std::to_string(p.tt) +
                          " with " + std::to_string(p.stages) +
                          " stages (have 64x2, 64x3, 64x4, 32x2, 32x4)");
      // warps: 16-head groups x NS column parts x TT/16 token slices, at most kMaxWarpsTc
      const int slices = p.tt / 16;
      const int mh = static_cast<int>(
          std::min<int64_t>(ceil_div(s.h, 16), std::max(1, kMaxWarpsTc / (p.NS * slices))));
      p.HG = 16 * mh;
      p.threads = 32 * mh * p.NS * slices;
      p.a_stride = p.HG + 8;
      tc_layout(p, s, sz);
      if (p.smem <= static_cast<size_t>(max_dynamic_smem(fn))) break;
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
    cc_layout(p, s, sz);
    if (p.smem > static_cast<size_t>(max_dynamic_smem(kernel_for(p, dt)))) {
      p.tt = 16;
      cc_layout(p, s, sz);
    }
  }
  const int limit = max_dynamic_smem(kernel_for(p, dt));
  if (p.smem > static_cast<size_t>(limit))
    throw KernelError("tpa_decode: d=" + std::to_string(s.d) + " e=" + std::to_string(s.e) +
                      " r=" + std::to_string(s.r) + " needs " + std::to_string(p.smem) +
                      " bytes of shared memory, a block can have " + std::to_string(limit));
  p.ngroups = static_cast<int>(ceil_div(s.h, p.HG));

  p.chunk_len = s.m;
  p.nchunks = 1;
  if (strat != TpaStrategy::bn) return p;
  // Blocks of the main kernel resident on the device at once: the default chunks fill them.
  const int per_sm = std::max(1, blocks_per_sm(kernel_for(p, dt), p.threads, p.smem));
  const int64_t slots = static_cast<int64_t>(per_sm) * device_attr(cudaDevAttrMultiProcessorCount);
  int64_t len = opt.chunk_len > 0 ? opt.chunk_len
                                  : ceil_div(s.m, std::max<int64_t>(1, slots / (s.b * p.ngroups)));
  len = std::max<int64_t>(len, ceil_div(s.m, kMaxChunks));  // the reduction's weights fit
  p.chunk_len = round_up(std::max<int64_t>(len, 1), p.tt);
  p.nchunks = static_cast<int>(ceil_div(s.m, p.chunk_len));
  if (p.nchunks == 1) p.chunk_len = s.m;
  // The fused merge needs the tile counters, every block resident at once (a cooperative
  // launch checks it) and its buffers inside the stages' shared memory.
  if (p.tc && opt.dynamic_tiles && opt.fused_merge && p.nchunks > 1 &&
      device_attr(cudaDevAttrCooperativeLaunch)) {
    const int per = static_cast<int>(ceil_div(p.HG, p.nchunks));
    const int64_t need = 4 * merge_smem_floats(per, p.nchunks, static_cast<int>(s.e), p.threads,
                                               s.e % 4 == 0 ? 4 : 1);
    p.fused = s.b * p.ngroups * p.nchunks <= slots && p.stage_off + need <= static_cast<int64_t>(p.smem);
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

// log2 of the w-byte chunks in a row of `cols` elements when that is a power of two dividing the
// block's threads (load_rows' shift path), else -1.
int chunks_log2(int64_t cols, int w, int sz, int threads) {
  if (w == 0 || (cols * sz) % w != 0) return -1;
  const int64_t cpr = cols * sz / w;
  if ((cpr & (cpr - 1)) != 0 || cpr > threads || threads % cpr != 0) return -1;
  int lg = 0;
  while ((int64_t{1} << lg) < cpr) ++lg;
  return lg;
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

namespace {
// bn's workspace: the work counters first (tensor cores with dynamic tiles: one per batch and
// head group, 256-byte aligned: every call finds them at the same place), then the float32
// partials: o and l [b][chunks][h][partial_row(e)], m [b][chunks][h].
struct WorkspaceLayout {
  size_t ctr_bytes = 0, total = 0;
};
WorkspaceLayout workspace_layout(const Plan& p, const TpaShape& s, const TpaOptions& opt) {
  WorkspaceLayout w;
  if (p.nchunks <= 1) return w;
  if (p.tc && opt.dynamic_tiles)
    w.ctr_bytes = static_cast<size_t>(round_up((p.fused ? 2 : 1) * s.b * p.ngroups * 4, 256));
  w.total = w.ctr_bytes + static_cast<size_t>(s.b * p.nchunks * s.h * (partial_row(static_cast<int>(s.e)) + 1)) *
                                 sizeof(float);
  return w;
}
}  // namespace

// Everything a launch needs that depends on the shape and the device alone.
struct TpaPlan::Detail {
  TpaShape s;
  DType dtype;
  Plan p;
  WorkspaceLayout ws;
  TpaArgs args{};           // the kernels' arguments but pointers, copy widths and scales
  KernelFn fn;              // the main kernel
  KernelFn reduce = nullptr;  // bn's reduction kernel (none when fused or with one chunk)
  size_t reduce_smem = 0;
  bool pdl;    // the reduction by programmatic dependent launch (sm_90 and the option)
  int device;  // the device the plan was made for
};

namespace {
template <typename T>
KernelFn reduce_kernel_for(int V) {
  return V == 4 ? tpa_reduce_kernel<T, 4> : tpa_reduce_kernel<T, 1>;
}

// Launches fn(a) through cudaLaunchKernelEx with at most one launch attribute.
void launch_ex(KernelFn fn, dim3 grid, int threads, size_t smem, cudaStream_t stream,
               const TpaArgs& a, const cudaLaunchAttribute* attr) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = dim3(static_cast<unsigned>(threads));
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute at[1];
  if (attr) {
    at[0] = *attr;
    cfg.attrs = at;
    cfg.numAttrs = 1;
  }
  OPBENCH_CUDA_CHECK(cudaLaunchKernelEx(&cfg, fn, a));
}
}  // namespace

TpaPlan::TpaPlan(const TpaShape& s, DType dtype, TpaStrategy strategy, const TpaOptions& opt) {
  tpa_decode_check(s, dtype);
  auto d = std::make_shared<Detail>();
  d->s = s;
  d->dtype = dtype;
  d->p = make_plan(s, dtype, strategy, opt);
  d->ws = workspace_layout(d->p, s, opt);
  d->fn = kernel_for(d->p, dtype);
  allow_max_smem(d->fn);
  d->pdl = opt.pdl && device_attr(cudaDevAttrComputeCapabilityMajor) >= 9;
  OPBENCH_CUDA_CHECK(cudaGetDevice(&d->device));
  const Plan& p = d->p;
  TpaArgs& a = d->args;
  a.b = static_cast<int>(s.b); a.h = static_cast<int>(s.h); a.r = static_cast<int>(s.r);
  a.d = static_cast<int>(s.d); a.e = static_cast<int>(s.e); a.m = s.m;
  a.chunk_len = p.chunk_len; a.nchunks = p.nchunks; a.ngroups = p.ngroups; a.fused = p.fused;
  a.HG = p.HG; a.tt = p.tt; a.a_full = p.a_full; a.NS = p.NS;
  a.q_stride = p.q_stride; a.bk_stride = p.bk_stride; a.bv_stride = p.bv_stride;
  a.a_stride = p.a_stride; a.d_pad = p.d_pad; a.e_pad = p.e_pad;
  a.stage_off = static_cast<int>(p.stage_off); a.qin_off = static_cast<int>(p.qin_off);
  a.aqt_off = static_cast<int>(p.aqt_off);
  if (p.nchunks > 1 && !p.fused) {
    const int V = s.e % 4 == 0 ? 4 : 1;
    d->reduce = dtype == DType::f32   ? reduce_kernel_for<float>(V)
                : dtype == DType::f16 ? reduce_kernel_for<__half>(V)
                                      : reduce_kernel_for<__nv_bfloat16>(V);
    d->reduce_smem = 4 * merge_smem_floats(1, p.nchunks, static_cast<int>(s.e), kRedThreads, V);
  }
  d_ = std::move(d);
}

int64_t TpaPlan::chunks() const { return d_->p.nchunks; }
size_t TpaPlan::workspace_bytes() const { return d_->ws.total; }
size_t TpaPlan::counter_bytes() const { return d_->ws.ctr_bytes; }
bool TpaPlan::fused() const { return d_->p.fused; }

void TpaPlan::run(const void* aq, const void* ak, const void* av, const void* bq, const void* bk,
                  const void* bv, void* out, void* workspace, size_t workspace_bytes,
                  const TpaScales& sc, cudaStream_t stream) const {
  const Detail& dt = *d_;
  const Plan& p = dt.p;
  const TpaShape& s = dt.s;
  if (!aq || !ak || !av || !bq || !bk || !bv || !out)
    throw KernelError("tpa_decode: null tensor pointer");
  int dev = 0;
  OPBENCH_CUDA_CHECK(cudaGetDevice(&dev));
  if (dev != dt.device)
    throw KernelError("tpa_decode: the plan was made for device " + std::to_string(dt.device) +
                      ", the current device is " + std::to_string(dev));
  const int sz = dtype_size(dt.dtype);

  TpaArgs a = dt.args;
  a.aq = aq; a.ak = ak; a.av = av; a.bq = bq; a.bk = bk; a.bv = bv; a.out = out;
  a.qscale = sc.scale * sc.scale_k * sc.scale_q * kLog2e;
  a.vscale = sc.scale_v;
  // cp.async widths: every row start and the group's first head must be aligned to the width.
  a.w_bk = copy_width(bk, s.d * sz, 0);
  a.w_bv = copy_width(bv, s.e * sz, 0);
  const int64_t head_step = p.a_full ? 0 : int64_t{p.HG} * sz;
  a.w_a = std::min(copy_width(ak, s.h * sz, head_step), copy_width(av, s.h * sz, head_step));
  a.lg_bk = chunks_log2(s.d, a.w_bk, sz, p.threads);
  a.lg_bv = chunks_log2(s.e, a.w_bv, sz, p.threads);
  a.lg_a = chunks_log2(p.a_full ? s.h : std::min<int64_t>(p.HG, s.h), a.w_a, sz, p.threads);
  if (p.nchunks > 1) {
    const WorkspaceLayout& wl = dt.ws;
    if (workspace == nullptr || workspace_bytes < wl.total)
      throw KernelError("tpa_decode: workspace of " + std::to_string(workspace_bytes) +
                        " bytes, needs " + std::to_string(wl.total));
    if (reinterpret_cast<uintptr_t>(workspace) % 16 != 0)
      throw KernelError("tpa_decode: workspace must be 16-byte aligned");
    a.ctr = wl.ctr_bytes ? static_cast<unsigned*>(workspace) : nullptr;
    float* w = reinterpret_cast<float*>(static_cast<char*>(workspace) + wl.ctr_bytes);
    a.po = w;
    a.pm = w + s.b * p.nchunks * s.h * partial_row(static_cast<int>(s.e));
  }

  const dim3 grid(static_cast<unsigned>(p.nchunks), static_cast<unsigned>(p.ngroups),
                  static_cast<unsigned>(s.b));
  cudaLaunchAttribute coop{};  // the fused merge: every block resident, or the launch fails
  coop.id = cudaLaunchAttributeCooperative;
  coop.val.cooperative = 1;
  launch_ex(dt.fn, grid, p.threads, p.smem, stream, a, p.fused ? &coop : nullptr);
  if (dt.reduce) {  // none when fused
    cudaLaunchAttribute pdl{};
    pdl.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    pdl.val.programmaticStreamSerializationAllowed = 1;
    launch_ex(dt.reduce, dim3(static_cast<unsigned>(s.b * s.h)), kRedThreads, dt.reduce_smem,
              stream, a, dt.pdl ? &pdl : nullptr);
  }
}

int64_t tpa_decode_chunks(const TpaShape& s, DType dtype, TpaStrategy strategy,
                          const TpaOptions& opt) {
  return TpaPlan(s, dtype, strategy, opt).chunks();
}

size_t tpa_decode_workspace_bytes(const TpaShape& s, DType dtype, TpaStrategy strategy,
                                  const TpaOptions& opt) {
  return TpaPlan(s, dtype, strategy, opt).workspace_bytes();
}

size_t tpa_decode_counter_bytes(const TpaShape& s, DType dtype, TpaStrategy strategy,
                                const TpaOptions& opt) {
  return TpaPlan(s, dtype, strategy, opt).counter_bytes();
}

void tpa_decode(const void* aq, const void* ak, const void* av, const void* bq, const void* bk,
                const void* bv, void* out, void* workspace, size_t workspace_bytes,
                const TpaShape& s, const TpaScales& sc, DType dtype, TpaStrategy strategy,
                cudaStream_t stream, const TpaOptions& opt) {
  TpaPlan(s, dtype, strategy, opt).run(aq, ak, av, bq, bk, bv, out, workspace, workspace_bytes, sc, stream);
}

#ifdef OPBENCH_TPA_TRACE
void tpa_trace_take(std::vector<unsigned long long>& out) {
  out.assign(static_cast<size_t>(kTpaTraceSlots) * kTpaTraceFields, 0);
  OPBENCH_CUDA_CHECK(cudaDeviceSynchronize());
  OPBENCH_CUDA_CHECK(cudaMemcpyFromSymbol(out.data(), g_tpa_trace, out.size() * sizeof(out[0])));
  void* p = nullptr;
  OPBENCH_CUDA_CHECK(cudaGetSymbolAddress(&p, g_tpa_trace));
  OPBENCH_CUDA_CHECK(cudaMemset(p, 0, out.size() * sizeof(out[0])));
  OPBENCH_CUDA_CHECK(cudaDeviceSynchronize());
}
#endif

}  // namespace opbench::kernels

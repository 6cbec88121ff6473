// tpa_decode: tpa_cc_kernel<T>, the CUDA-core kernel (any dtype; strategy bh with one head a
// block, and fp32 b/bn): the tensor-core kernel's tiling on float32 FMAs. Scores by (token,
// head) pairs, softmax a warp per head, O += W BV with float4 accumulators in registers (token
// slices when few heads). 256 threads.
#pragma once
#include <cmath>
#include <cstdint>

#include "kernels/common.cuh"
#include "kernels/tpa_decode/args.h"
#include "kernels/tpa_decode/copy.cuh"
#include "kernels/tpa_decode/ptx.cuh"
#include "kernels/tpa_decode/q.cuh"

namespace opbench::kernels::tpa {

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

}  // namespace opbench::kernels::tpa

// tpa_decode: tpa_tc_kernel<T, TT, STAGES>, the tensor-core kernel (bf16/fp16; strategies b and
// bn).
//   block = (chunk of m, group of HG = 16 * MH heads, batch); warp = (mi, ns, tq): heads
//   mi*16 .. +16, output columns ns*128 .. +128, tokens tq*16 .. +16 of every tile of TT
//   tokens (TT/16 token slices; cp.async, STAGES deep). Per tile a warp does S = Q BK^T on its
//   16 x 16 (mma.sync m16n8k16, Q and BK by ldmatrix), times ak, an online softmax over its own
//   token slice (ak and av fragments by ldmatrix.trans straight into the accumulator layout),
//   W = p * av packed into A fragments, O += W BV (ldmatrix.trans); no warp repeats another's
//   scores. The slices merge (m, l, O) through shared memory at the end. bk and bv are read
//   once per (batch, head group). With bn the blocks of a (batch, head group) take their tiles
//   from a counter in the workspace after STAGES fixed ones, so they finish together, and when
//   every block is resident (cooperative launch) they merge the partials themselves: each
//   waits for its group's blocks and merges a share of the group's heads (merge_partials).
#pragma once
#include <climits>
#include <cmath>
#include <cstdint>

#include "kernels/common.cuh"
#include "kernels/tpa_decode/args.h"
#include "kernels/tpa_decode/copy.cuh"
#include "kernels/tpa_decode/merge.cuh"
#include "kernels/tpa_decode/mma.cuh"
#include "kernels/tpa_decode/ptx.cuh"
#include "kernels/tpa_decode/q.cuh"
#include "kernels/tpa_decode/trace.cuh"

namespace opbench::kernels::tpa {

// Tensor-core kernel (bf16 / fp16). Warp w = (mi, ns, tq): heads mi*16 .. +16 of the block's
// group, output columns ns*kEW .. +kEW, and tokens tq*16 .. +16 of every tile (TQ = TT / 16
// slices). Each warp runs its own online softmax over its token slice; the slices are merged
// through shared memory at the end. No warp repeats another's scores.
//
// Tiles: a block's k-th tile is, with one chunk per block, tile k of its chunk (strategy b and
// bn with static chunks); with the bn work counters (a.ctr), tile chunk + k * nchunks for the
// first a.fixed (at least STAGES: no wait at the start), then whatever the (batch, group)'s
// counter hands out from tile a.fixed * nchunks on, so
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
  // The block's k-th tile (absolute index) where it is fixed (with the counters, k < a.fixed, at
  // least the STAGES of the prologue; else every k), or -1 past its last.
  auto tile_of = [&](int k) -> int {
    const int t = dyn ? chunk + k * a.nchunks : tile0 + k;
    return t < tile_end ? t : -1;
  };
  // The tile of the counter's answer i (after every block's fixed tiles), or -1 past the last.
  auto counter_tile = [&](unsigned i) -> int {
    const int t = a.fixed * a.nchunks + static_cast<int>(i);
    return t < tile_end ? t : -1;
  };
  // Thread 0 alone, for k >= STAGES: request(k) asks for the block's k-th tile (with counters an
  // atomicAdd), answer() reads the reply. The reply is read only at the end of a tile's compute:
  // comparing it at once stalled warp 0 for the atomic's round trip (+3.6 us to q at b = 8).
  unsigned ticket = 0u;
  int asked = -1;
  auto request = [&](int k) {
    asked = k;
    if (dyn && k >= a.fixed) ticket = atomicAdd(ctr, 1u);
  };
  auto answer = [&]() -> int {
    if (asked < 0) return -1;
    return dyn && asked >= a.fixed ? counter_tile(ticket) : tile_of(asked);
  };
  // The last kJitRounds rounds of the counter (tiles >= jit_from): thread 0 draws each tile just
  // before the barrier that publishes it for issue, once this tile's copies have landed, instead
  // of two tiles ahead, so the last tiles go to the blocks ready to load them; each such tile
  // waits for the atomic's round trip. (jit: 0 asking ahead, 1 the last tile asked ahead is in
  // the ring, 2 drawing just in time.) Measured at b = 8, m = 32768: 1 round no faster, 2, 3, 4
  // and 6 rounds 0.2-0.4 us faster; b = 32 unchanged.
  const int jit_from = dyn ? max(tile_end - kJitRounds * a.nchunks, a.fixed * a.nchunks) : INT_MAX;
  int jit = 0;
  auto draw_now = [&]() -> int { return counter_tile(atomicAdd(ctr, 1u)); };
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
    // call. (A second counter of blocks merging costs every block an atomic round trip before
    // it merges.) Ordering: every thread's partial stores come before the
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

}  // namespace opbench::kernels::tpa

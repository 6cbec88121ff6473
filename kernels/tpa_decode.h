// tpa_decode: tensor product attention, one decoding step. Torch-free launch API.
//
//   aq (b, 1, h, r)   ak (b, m, h)   av (b, m, h)   bq (b, 1, r, d)   bk (b, m, d)   bv (b, m, e)
//   q[h, :]    = scale_q * sum_r aq[h, r] bq[r, :]                       (float32, once per (b, h))
//   score[h, t] = scale * scale_k * ak[t, h] * <q[h], bk[t]>             (k never materialised)
//   p[h, :]    = softmax_t(score[h, :])
//   o[h, :]    = scale_v * sum_t p[h, t] av[t, h] bv[t, :]               -> out (b, 1, h, e)
//
// Bytes (the floor): |ak| + |av| + |bk| + |bv| read once (+ the tiny aq, bq, out), storage dtype.
//
// Strategies (the kernels, plan and launch: kernels/tpa_decode/):
//   b   one block per batch element (and head group), all of m, all heads at once: bk and bv are
//       read once per batch element.
//   bh  one block per (batch, head): each block reads all of bk and bv for its batch (from L2
//       after the first head), so bk/bv are read h times from L2.
//   bn  blocks per (batch, head group) that fill the device, each writing (max, sum, o) partials
//       of its tokens to a float32 workspace, then a reduction kernel (split-k /
//       flash-decoding). With the tensor cores the blocks take 64-token tiles from a counter, so
//       each finishes when the batch's tiles run out, and (when all blocks fit on the device at
//       once) merge the partials themselves: each waits for its group and merges a share of
//       its heads, no second kernel. Otherwise each block has an equal chunk of m.
// bf16/fp16 use the tensor cores (mma.sync m16n8k16, float32 accumulation; q and the weights
// p * av are rounded to the storage dtype for the products); fp32 uses float32 FMAs only.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

#include "kernels/common.h"

namespace opbench::kernels {

struct TpaShape {
  int64_t b = 1, h = 1, r = 1, d = 16, e = 16, m = 1;
};

struct TpaScales {
  float scale = 1.f, scale_q = 1.f, scale_k = 1.f, scale_v = 1.f;
  // OPS.md defaults: scale = d^-0.5, scale_q = 1/r, scale_k = scale_v = 1.
  static TpaScales defaults(const TpaShape& s);
};

enum class TpaStrategy { b, bh, bn };

struct TpaOptions {
  int64_t chunk_len = 0;  // bn: tokens per chunk (rounded up to the tile); 0 = fill the chip
  int tile = 0;           // tokens per tile (bf16/fp16 b, bn: 32 or 64); 0 = default
  int stages = 0;         // shared-memory pipeline depth (64: 2..4, 32: 2 or 4); 0 = default
  bool pdl = true;        // bn: launch the reduction with programmatic dependent launch (sm_90)
  bool dynamic_tiles = true;  // bn, bf16/fp16: blocks take tiles from a per-(batch, head group)
                              // counter in the workspace (false: equal chunks of tiles)
  bool fused_merge = true;    // bn with dynamic tiles: when every block fits on the device at
                              // once, the main kernel merges the partials itself (cooperative
                              // launch) instead of a second, reduction kernel
  double fixed_share = 0.9;   // bn with dynamic tiles: the share (0..1) of a block's even part
                              // of the tiles that it takes in fixed order before the counter
                              // (at least the pipeline's stages; below 1 the last round is
                              // left to the counter; 0: only the stages, 1: no tile from it)
};

// Throws KernelError (one line) for sizes the kernels do not take.
void tpa_decode_check(const TpaShape& s, DType dtype);

// Chunks of m that a call uses (1 for b and bh; for bn the blocks per batch element and head
// group), and the workspace it needs (bn with more than one chunk: the work counters, then
// float32 partials b * chunks * h * (e + 2 .. 5); otherwise 0). Both depend on the current device
// (multiprocessor count, occupancy). Its counters must be zero before the first call
// (tpa_decode_counter_bytes); each call leaves them ready again (zero but for the fused merge's
// barrier words, whose top bit flips every call), so the workspace is reused as it
// is for the same shape (one call at a time per workspace). A workspace that served another
// shape or options holds that plan's partials where this one keeps its counters: zero them
// again before its first call.
int64_t tpa_decode_chunks(const TpaShape& s, DType dtype, TpaStrategy strategy,
                          const TpaOptions& opt = {});
size_t tpa_decode_workspace_bytes(const TpaShape& s, DType dtype, TpaStrategy strategy,
                                  const TpaOptions& opt = {});
// The leading bytes of that workspace that hold the work counters (0 when none): zero them once
// (the whole workspace may be zeroed instead); the rest needs no initial value.
size_t tpa_decode_counter_bytes(const TpaShape& s, DType dtype, TpaStrategy strategy,
                                const TpaOptions& opt = {});

// All pointers on the current device, contiguous in the layouts above; out (b, 1, h, e).
// Makes a TpaPlan for the call (below); a caller that launches one shape many times keeps one.
void tpa_decode(const void* aq, const void* ak, const void* av, const void* bq, const void* bk,
                const void* bv, void* out, void* workspace, size_t workspace_bytes,
                const TpaShape& s, const TpaScales& scales, DType dtype, TpaStrategy strategy,
                cudaStream_t stream, const TpaOptions& opt = {});

// A call's launch plan for one shape, dtype, strategy and options on the current device (tile,
// chunks, shared memory, workspace layout, the kernels): made once, it validates the sizes
// (KernelError) and queries the device; run() then only fills the kernels' arguments and
// launches. The functions above make one per call.
class TpaPlan {
 public:
  TpaPlan(const TpaShape& s, DType dtype, TpaStrategy strategy, const TpaOptions& opt = {});
  int64_t chunks() const;
  size_t workspace_bytes() const;
  size_t counter_bytes() const;  // see tpa_decode_counter_bytes
  bool fused() const;            // bn: the main kernel merges the partials (no reduction kernel)
  // As tpa_decode, on the device the plan was made for (KernelError otherwise).
  void run(const void* aq, const void* ak, const void* av, const void* bq, const void* bk,
           const void* bv, void* out, void* workspace, size_t workspace_bytes,
           const TpaScales& scales, cudaStream_t stream) const;

 private:
  struct Detail;
  std::shared_ptr<const Detail> d_;
};

const char* tpa_strategy_name(TpaStrategy s);

}  // namespace opbench::kernels

// tpa_decode: the kernels' arguments (TpaArgs) and the constants and sizes that the host plan
// and the kernels must agree on (warp and block shapes, the partial rows of bn, the merge's
// shared memory). Plain C++: included by the kernels and by the host plan and launch.
#pragma once
#include <cstdint>

#include "kernels/common.h"

namespace opbench::kernels::tpa {

constexpr int kEW = 128;         // output columns per warp (tensor-core kernel)
constexpr int kMaxWarpsTc = 8;   // warps per tensor-core block
constexpr int kCcThreads = 256;  // threads per CUDA-core block
constexpr int kCcMaxQuads = 8;   // float4 accumulators per thread (CUDA-core kernel)
constexpr int kMaxChunks = 4096; // bn: chunks of m at most (reduction weights in shared memory)
constexpr int kTileRing = 8;     // tensor-core kernel: tile indices published ahead of use
constexpr int kJitRounds = 3;    // tensor-core kernel: the counter's last rounds drawn just in time
constexpr int kRedPad = 8;       // tensor-core kernel: pad of the slice merge's rows (floats)
constexpr int kRedThreads = 256;  // threads per reduction block (and per merge of the partials)
constexpr int kRedBatch = 8;      // merge_partials: chunks each thread loads before any wait

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
  int fixed;                 // bn with counters: tiles each block takes in fixed order first
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

// A partial row: o (e floats), then l (and zeros to the next 16 bytes when e % 4 == 0).
__host__ __device__ constexpr int partial_row(int e) { return e % 4 == 0 ? e + 4 : e + 1; }

// Shared memory of merge_partials in floats: weights [nh][nchunks], then the slice sums (S x nh x
// (column groups + 1) x V, at most max(threads, nh x (groups + 1)) x V).
__host__ __device__ constexpr int64_t merge_smem_floats(int nh, int nchunks, int e, int threads, int V) {
  return int64_t{nh} * nchunks + int64_t{V} * (threads > nh * ((e + V - 1) / V + 1)
                                                   ? threads : nh * ((e + V - 1) / V + 1));
}

}  // namespace opbench::kernels::tpa

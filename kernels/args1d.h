// Host-side arguments of the 1d kernels (act, lrpe_cosine, lrpe_rotate): raw device pointers,
// sizes, the activation and where softmax runs, and the strategy for softmax over the
// sequence. Torch-free; included by act.h, lrpe_cosine.h and lrpe_rotate.h.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "common.h"

namespace opbench::kernels {

// How softmax over the sequence (act_dim = the n axis) is computed. Its column statistics
// (max and sum of exp over n) need the whole column before the first output, and at
// n = 32768 a (b, h) slab does not fit on chip: every strategy reads the input twice.
enum class SeqStrategy {
  automatic,  // block for n <= 512 when b * h * column groups fills the device, else split
  block,      // one block per (batch, head, column group): both passes in one launch, no buffer
  split,      // n split in chunks: partial statistics, combine, apply (3 launches, stats buffer)
};
inline const char* seq_strategy_name(SeqStrategy s) {
  return s == SeqStrategy::block ? "block" : s == SeqStrategy::split ? "split" : "automatic";
}

// Process-wide tuning of the 1d kernels, for benchmarks and tests (the defaults are the
// measured best; see notes/perf-1d.md). Not thread-safe: set it before launching.
struct Tuning1d {
  int prefetch = -1;      // L2 prefetch of the next step's rows: -1 per variant (the op's
                          // measured choice, rows1d::RowChoice), 0 never, 1 always
  int split_waves = 8;    // softmax over n, split: statistics blocks ~ waves x resident slots
  int tile_blocks_per_sm = 48;  // row kernels: tiles of up to max_steps steps, keeping at least
  int max_steps = -1;           // this many blocks per SM (-1: the op's choice per variant)
  int stream_stores = 1;  // outputs stored with st.global.cs (evict-first) or plain stores (0)
  int flat_units = -1;    // act's flat kernel: 16-byte units per thread (-1 or 1: one, the
                          // measured best at every size; 4 for comparison)
  int batch_rows = -1;    // lrpe row kernels: a step's rows are batches at one s, so each angle
                          // is evaluated once per step: -1 the op's choice (when b >= 2), 0 never,
                          // 1 always
};
inline Tuning1d& tuning_1d() {
  static Tuning1d t;
  return t;
}

// act: x and dout (b, h, n, d); out (b, h, n, d). act_dim: -1 or 3 (features), -2 or 2 (n).
struct ActArgs {
  DType dtype = DType::bf16;
  Act act = Act::none;
  int act_dim = -1;
  int64_t b = 0, h = 0, n = 0, d = 0;
  const void* x = nullptr;     // (b, h, n, d)
  const void* dout = nullptr;  // backward: gradient of the output, (b, h, n, d)
  void* out = nullptr;         // forward: o; backward: dx
  void* workspace = nullptr;   // softmax over n, split strategy: *_workspace_bytes() bytes
  size_t workspace_bytes = 0;
  SeqStrategy strategy = SeqStrategy::automatic;
  cudaStream_t stream = nullptr;
};

// lrpe_cosine / lrpe_rotate (1d): x (b, n, h, d); theta float32 indexed theta[h * theta_sh +
// k * theta_sk] (strides in elements; 0 broadcasts: (1, d) has theta_sh = 0, (h, 1) theta_sk = 0).
// act_dim: -1 or 3 (features), 1 or -3 (n). Output (b, n, h, 2d) for cosine, (b, n, h, d) rotate.
struct LrpeArgs {
  DType dtype = DType::bf16;
  Act act = Act::none;
  int act_dim = -1;
  int64_t b = 0, n = 0, h = 0, d = 0;
  int64_t offset = 0;
  const void* x = nullptr;
  const float* theta = nullptr;
  int64_t theta_sh = 0, theta_sk = 1;
  const void* dout = nullptr;  // backward: gradient of the output (output's shape)
  void* out = nullptr;         // forward: o; backward: dx (x's shape)
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
  SeqStrategy strategy = SeqStrategy::automatic;
  cudaStream_t stream = nullptr;
};

}  // namespace opbench::kernels

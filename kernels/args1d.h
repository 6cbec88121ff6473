// Host-side arguments of the 1d kernels (act, lrpe_cosine, lrpe_rotate): raw device pointers,
// sizes, the activation and where softmax runs, and the strategy for softmax over the
// sequence. Torch-free; included by act.h, lrpe_cosine.h and lrpe_rotate.h.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "common.h"

namespace opbench::kernels {

// How softmax over the sequence (act_dim = the n axis) is computed. Its column statistics
// (max and sum of exp over n) need the whole column before the first output. block and split
// read the input twice; resident keeps each column group of a (b, h) slab in the shared memory
// of the blocks that read it until its statistics are known, and reads it once.
enum class SeqStrategy {
  automatic,  // the measured choice per call (rows1d/plan.h, make_plan)
  block,      // one block per (batch, head, column group): both passes in one launch, no buffer
  split,      // n split in chunks: partial statistics, combine, apply (3 launches, stats buffer)
  resident,   // one persistent launch: chunks of a column group staged in shared memory, their
              // statistics merged through L2 behind a counter per group, applied from shared memory
};
inline const char* seq_strategy_name(SeqStrategy s) {
  return s == SeqStrategy::block      ? "block"
         : s == SeqStrategy::split    ? "split"
         : s == SeqStrategy::resident ? "resident"
                                      : "automatic";
}

// Process-wide tuning of the 1d kernels, for benchmarks and tests (the defaults are the
// measured best; see docs/kernels.md). Not thread-safe: set it before launching.
struct Tuning1d {
  int prefetch = -1;      // L2 prefetch of the next step's rows: -1 per variant (the op's
                          // measured choice, rows1d::RowChoice), 0 never, 1 always
  int split_waves = 8;    // softmax over n, split: statistics blocks ~ waves x resident slots
  int tile_blocks_per_sm = 48;  // row kernels: tiles of up to max_steps steps, keeping at least
  int max_steps = -1;           // this many blocks per SM (-1: the op's choice per variant)
  int stream_stores = -1;  // outputs stored with st.global.cs (1, evict-first) or plain stores
                           // (0); -1 each kernel's choice (cs, but act's flat kernel below 2^24
                           // units: plain)
  int flat_units = -1;    // act's flat kernel: 16-byte units per thread (1, 2 or 4; -1 by call
                          // size, act/act.cu flat_shape)
  int flat_threads = -1;  // act's flat kernel: threads per block (128, 256 or 512; -1 by size)
  int batch_rows = -1;    // lrpe row kernels: a step's rows are batches at one s, so each angle
                          // is evaluated once per step: -1 the op's choice (when b >= 2), 0 never,
                          // 1 always
  int feat_kernel = -1;   // act softmax over d: act's own lane-group kernel (-1, the measured
                          // choice, or 1), 0 the rows1d row kernel
  int plain_loads = -1;   // act's flat kernel: inputs by plain ld.global (1) or the read-only path
                          // ld.global.nc (0); -1 by call size (act/act.cu flat_shape)
  int flat_lrpe = -1;     // lrpe_cosine backward, elementwise acts: the flat kernel (1), the row
                          // kernel (0), or -1 by call size (lrpe_cosine.cu)
  // Softmax over n, resident strategy (rows1d/plan.h, resident_plan); -1: the planned value.
  int res_threads = -1;   // threads per block (256 or 512)
  int res_stages = -1;    // shared-memory stages per block (2 .. 4): chunks in flight
  int res_stage_kb = -1;  // KiB of inputs per stage (one chunk of a column group)
  int res_cg = -1;        // column groups a row is cut into (a power of two)
  int res_teams = -1;     // two warp teams (statistics; copies and outputs) side by side (1), or
                          // the whole block doing each step in turn (0)
};
inline Tuning1d& tuning_1d() {
  static Tuning1d t;
  return t;
}
inline bool stream_stores() { return tuning_1d().stream_stores != 0; }

// Applies "key=value,key=value" (keys: the Tuning1d field names) to t. Returns "" or a one-line
// reason. The providers and the 1d GPU test read it from $OPBENCH_TUNING_1D, so a sweep can time
// a variant and the test can check one.
inline std::string apply_tuning_1d(const std::string& spec, Tuning1d& t) {
  struct Field { const char* name; int Tuning1d::*field; };
  static const Field fields[] = {
      {"prefetch", &Tuning1d::prefetch},         {"split_waves", &Tuning1d::split_waves},
      {"tile_blocks_per_sm", &Tuning1d::tile_blocks_per_sm},
      {"max_steps", &Tuning1d::max_steps},       {"stream_stores", &Tuning1d::stream_stores},
      {"flat_units", &Tuning1d::flat_units},     {"flat_threads", &Tuning1d::flat_threads},
      {"batch_rows", &Tuning1d::batch_rows},
      {"feat_kernel", &Tuning1d::feat_kernel},   {"flat_lrpe", &Tuning1d::flat_lrpe},
      {"plain_loads", &Tuning1d::plain_loads},
      {"res_threads", &Tuning1d::res_threads},   {"res_stages", &Tuning1d::res_stages},
      {"res_stage_kb", &Tuning1d::res_stage_kb}, {"res_cg", &Tuning1d::res_cg},
      {"res_teams", &Tuning1d::res_teams},
  };
  size_t pos = 0;
  while (pos < spec.size()) {
    size_t end = spec.find(',', pos);
    if (end == std::string::npos) end = spec.size();
    const std::string item = spec.substr(pos, end - pos);
    pos = end + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    const Field* f = nullptr;
    for (const Field& c : fields)
      if (key == c.name) f = &c;
    if (f == nullptr) return "unknown key '" + key + "' in '" + item + "'";
    if (eq == std::string::npos) return "'" + item + "' has no value (key=integer)";
    const std::string v = item.substr(eq + 1);
    char* rest = nullptr;
    const long n = std::strtol(v.c_str(), &rest, 10);
    if (v.empty() || *rest != '\0') return "'" + item + "': the value must be an integer";
    t.*(f->field) = static_cast<int>(n);
  }
  return "";
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
  void* workspace = nullptr;   // softmax over n, split or resident: *_workspace_bytes() bytes
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

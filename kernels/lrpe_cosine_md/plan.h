// lrpe_cosine_md host: how a call runs: the vector width, the row softmax's threads per row,
// the sequence softmax's token splits and workspace layout, batches per thread, the grid, and
// the kernels' arguments from the shape.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/common.h"
#include "kernels/lrpe_cosine_md.h"
#include "kernels/lrpe_cosine_md/args.h"

namespace opbench::kernels::lrpe_cosine_md {

inline int sm_count() {
  int dev = 0, n = 0;
  OPBENCH_CUDA_CHECK(cudaGetDevice(&dev));
  OPBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev));
  return n;
}

inline int vec_width(DType t) { return 16 / dtype_size(t); }

inline bool aligned16(const void* p) {
  return p == nullptr || reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

// Row softmax: threads per row G (power of two <= 32) and vectors per thread K.
struct RowPlan {
  int G = 1, K = 1;
};
inline RowPlan row_plan(int nvec, int kmax) {
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
inline SeqPlan seq_plan(const LrpeMdShape& s) {
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

inline bool seq_softmax(Act act, int act_dim) { return act == Act::softmax && act_dim == -2; }

inline std::string shape_str(const LrpeMdShape& s) {
  std::string g;
  for (int i = 0; i < s.md && i < 3; ++i) g += (i ? "x" : "") + std::to_string(s.n[i]);
  return "b=" + std::to_string(s.b) + " h=" + std::to_string(s.h) + " l=" + std::to_string(s.l) +
         " grid=" + g + " d=" + std::to_string(s.d) + " e=" + std::to_string(s.e);
}

inline MdArgs make_args(const LrpeMdShape& s, int V) {
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
// against 21.3 us for two waves of 2048 threads per SM (2 batches a thread);
// 3d n = 4 (64 tokens): 4 batches a thread 9.1 us, 12: 9.4, 1: 13.7.
inline int batches_per_thread(const LrpeMdShape& s, int64_t threads_per_batch,
                              const LrpeMdOptions& opt) {
  if (opt.batch_per_thread > 0) return static_cast<int>(std::min<int64_t>(opt.batch_per_thread, s.b));
  const int64_t want = int64_t{kThreads} * sm_count();  // a block per multiprocessor
  int64_t chunks = (want + threads_per_batch - 1) / threads_per_batch;
  chunks = std::max<int64_t>(1, std::min<int64_t>(chunks, s.b));
  return static_cast<int>((s.b + chunks - 1) / chunks);
}

inline dim3 grid_of(int64_t threads, int64_t b, int bpt) {
  const int64_t gx = (threads + kThreads - 1) / kThreads;
  const int64_t gy = (b + bpt - 1) / bpt;
  if (gx > 0x7fffffffLL || gy > 65535)
    throw KernelError("lrpe_cosine_md: problem too large for one launch (" + std::to_string(gx) +
                      " x " + std::to_string(gy) + " blocks)");
  return dim3(static_cast<unsigned>(gx), static_cast<unsigned>(gy));
}

// Workspace layout of softmax over the sequence: partial planes then finished planes.
struct SeqWorkspace {
  SeqPartials part{};
  float *fm = nullptr, *fa = nullptr, *fc = nullptr;
};
inline size_t seq_ws_floats(const LrpeMdShape& s, bool bwd, const SeqPlan& p) {
  const size_t planes = bwd ? 3 : 2;
  const size_t cols = static_cast<size_t>(s.b * s.h * s.d);
  return planes * cols * (static_cast<size_t>(p.nsplit) + 1);
}
inline SeqWorkspace seq_ws(const LrpeMdShape& s, bool bwd, const SeqPlan& p, void* ws) {
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

}  // namespace opbench::kernels::lrpe_cosine_md

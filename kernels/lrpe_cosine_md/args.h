// lrpe_cosine_md: the kernels' arguments (MdArgs, and SeqPartials for softmax over the sequence)
// and their block size. Plain C++: included by the kernels and by the host plan.
#pragma once
#include <cstdint>

namespace opbench::kernels::lrpe_cosine_md {

constexpr int kThreads = 256;

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

// Softmax over the sequence, the statistics pass's partials: per (b, h, feature) column and
// token split, the online max m, sum S = sum exp(x - m) and (backward) T = sum exp(x - m) * dxa.
struct SeqPartials {
  float* m;  // [b*h][nsplit][d]
  float* s;
  float* t;  // backward only
  int nsplit;
  int64_t split_len;
};

}  // namespace opbench::kernels::lrpe_cosine_md

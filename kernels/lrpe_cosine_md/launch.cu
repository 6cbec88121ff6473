// lrpe_cosine_md kernels: cosine LRPE over a 1d/2d/3d token grid with extra tokens, every act
// fused into the same pass. Math and API: lrpe_cosine_md.h.
//
//   o[b, h, s, j]     = xa[b, h, s, j] * cos(angle[s, h, j])
//   o[b, h, s, d + j] = xa[b, h, s, j] * sin(angle[s, h, j])
//   angle[s, h, j] = float(c_{j / e}(s - l)) * theta[h, j % e] for s >= l, 0 for s < l
//
// Bytes per call (storage dtype; |x| = b h L d elements):
//   fwd, act elementwise or none, or softmax over features: read x, write o        = 3|x|
//   bwd: read do (2|x|), write dx (|x|), + read x when the act needs it            = 3|x| or 4|x|
//   softmax over the sequence: one more read of x (fwd: 4|x|) or of x and do (bwd: 7|x|),
//   plus per-column statistics (b h d floats, a few planes).
//   cuda_cache adds the (N, h, d) cos and sin tables: 8 N h d bytes read once per call
//   (each thread reuses its cos/sin across the batches it walks).
//
// Kernel families (one per pass shape):
//   md_elem_kernel   elementwise acts, and softmax over the sequence's apply pass  elem_kernel.cuh
//   md_row_kernel    softmax over the d features                                   row_kernel.cuh
//   md_seq_stats_kernel + md_seq_merge_kernel
//                    softmax over the sequence: column statistics                  seq_kernels.cuh
//   md_cache_kernel  the cos/sin table of cuda_cache                              cache_kernel.cuh
// The angles: angles.cuh and sincos.cuh (accurate whatever the fast-math flags). This file: the
// launches (plan.h says how a call runs) and the entry points of lrpe_cosine_md.h.
#include <algorithm>
#include <cstdint>
#include <string>

#include "kernels/common.cuh"
#include "kernels/lrpe_cosine_md.h"
#include "kernels/lrpe_cosine_md/args.h"
#include "kernels/lrpe_cosine_md/cache_kernel.cuh"
#include "kernels/lrpe_cosine_md/elem_kernel.cuh"
#include "kernels/lrpe_cosine_md/plan.h"
#include "kernels/lrpe_cosine_md/row_kernel.cuh"
#include "kernels/lrpe_cosine_md/seq_kernels.cuh"

namespace opbench::kernels {

int64_t LrpeMdShape::grid_tokens() const {
  int64_t N = 1;
  for (int i = 0; i < md && i < 3; ++i) N *= n[i];
  return N;
}

namespace {

using namespace lrpe_cosine_md;

template <typename T, int V, bool BWD>
void launch_elem(MdArgs a, Act act, const LrpeMdShape& s, const LrpeMdOptions& opt,
                 cudaStream_t st) {
  const int64_t items = s.h * s.tokens() * a.nvec;
  a.bpt = batches_per_thread(s, items, opt);
  a.prefetch = opt.prefetch != 0;  // default on (forward: measured +0.8 to +1.2%)
  const dim3 grid = grid_of(items, s.b, a.bpt);
  switch (act) {
    case Act::none: md_elem_kernel<T, V, Act::none, BWD><<<grid, kThreads, 0, st>>>(a); break;
    case Act::relu: md_elem_kernel<T, V, Act::relu, BWD><<<grid, kThreads, 0, st>>>(a); break;
    case Act::sigmoid: md_elem_kernel<T, V, Act::sigmoid, BWD><<<grid, kThreads, 0, st>>>(a); break;
    case Act::silu: md_elem_kernel<T, V, Act::silu, BWD><<<grid, kThreads, 0, st>>>(a); break;
    case Act::softmax: md_elem_kernel<T, V, Act::softmax, BWD><<<grid, kThreads, 0, st>>>(a); break;
  }
  OPBENCH_LAUNCH_CHECK();
}

template <typename T, int V, bool BWD>
void launch_row(MdArgs a, const LrpeMdShape& s, const LrpeMdOptions& opt, cudaStream_t st) {
  constexpr int kmax = V == 1 ? 8 : 2;
  const RowPlan rp = row_plan(a.nvec, kmax);
  if (rp.K == 0)
    throw KernelError("lrpe_cosine_md: softmax over " + std::to_string(s.d) +
                      " features is wider than one row group takes");
  const int64_t threads = s.h * s.tokens() * rp.G;
  a.bpt = batches_per_thread(s, threads, opt);
  const dim3 grid = grid_of(threads, s.b, a.bpt);
  if constexpr (V == 1) {
    md_row_kernel<T, 1, 8, BWD><<<grid, kThreads, 0, st>>>(a, rp.G);
  } else {
    if (rp.K == 1) md_row_kernel<T, V, 1, BWD><<<grid, kThreads, 0, st>>>(a, rp.G);
    else md_row_kernel<T, V, 2, BWD><<<grid, kThreads, 0, st>>>(a, rp.G);
  }
  OPBENCH_LAUNCH_CHECK();
}

template <typename T, int V, bool BWD>
void run_typed(const void* x, const void* dout, const float* theta, const float* cos_t,
               const float* sin_t, void* out, void* ws, const LrpeMdShape& s, Act act,
               int act_dim, cudaStream_t st, const LrpeMdOptions& opt) {
  MdArgs a = make_args(s, V);
  a.x = x; a.dout = dout; a.out = out; a.theta = theta; a.cos_t = cos_t; a.sin_t = sin_t;
  if (act == Act::softmax && act_dim == -1) {
    launch_row<T, V, BWD>(a, s, opt, st);
    return;
  }
  if (act == Act::softmax) {  // over the sequence: statistics, merge, then the elementwise pass
    const SeqPlan sp = seq_plan(s);
    const SeqWorkspace w = seq_ws(s, BWD, sp, ws);
    const dim3 sg(static_cast<unsigned>(s.b * s.h), static_cast<unsigned>(sp.nsplit));
    md_seq_stats_kernel<T, V, BWD><<<sg, kThreads, 0, st>>>(a, w.part);
    OPBENCH_LAUNCH_CHECK();
    const int64_t cols = s.b * s.h * s.d;
    md_seq_merge_kernel<<<static_cast<unsigned>((cols + kThreads - 1) / kThreads), kThreads, 0,
                          st>>>(w.part, cols, a.d, w.fm, w.fa, w.fc);
    OPBENCH_LAUNCH_CHECK();
    a.st_m = w.fm; a.st_a = w.fa; a.st_c = w.fc;
  }
  launch_elem<T, V, BWD>(a, act, s, opt, st);
}

template <bool BWD>
void run(const void* x, const void* dout, const float* theta, const float* cos_t,
         const float* sin_t, void* out, void* ws, size_t ws_bytes, const LrpeMdShape& s,
         DType dt, Act act, int act_dim, cudaStream_t st, const LrpeMdOptions& opt) {
  lrpe_cosine_md_check(s, act, act_dim);
  const char* name = BWD ? "lrpe_cosine_md_bwd" : "lrpe_cosine_md_fwd";
  if ((cos_t == nullptr) != (sin_t == nullptr))
    throw KernelError(std::string(name) + ": give both cos and sin caches or neither");
  if (cos_t == nullptr && theta == nullptr) throw KernelError(std::string(name) + ": theta is null");
  if (x == nullptr || out == nullptr || (BWD && dout == nullptr))
    throw KernelError(std::string(name) + ": null tensor pointer");
  const size_t need = lrpe_cosine_md_workspace_bytes(s, act, act_dim, BWD);
  if (need > 0 && (ws == nullptr || ws_bytes < need))
    throw KernelError(std::string(name) + ": workspace of " + std::to_string(ws_bytes) +
                      " bytes, needs " + std::to_string(need));
  const int VV = vec_width(dt);
  const bool vec = s.d % VV == 0 && aligned16(x) && aligned16(out) && aligned16(dout) &&
                   aligned16(cos_t) && aligned16(sin_t) && aligned16(ws);
  switch (dt) {
    case DType::f32:
      if (vec) run_typed<float, 4, BWD>(x, dout, theta, cos_t, sin_t, out, ws, s, act, act_dim, st, opt);
      else run_typed<float, 1, BWD>(x, dout, theta, cos_t, sin_t, out, ws, s, act, act_dim, st, opt);
      break;
    case DType::f16:
      if (vec) run_typed<__half, 8, BWD>(x, dout, theta, cos_t, sin_t, out, ws, s, act, act_dim, st, opt);
      else run_typed<__half, 1, BWD>(x, dout, theta, cos_t, sin_t, out, ws, s, act, act_dim, st, opt);
      break;
    case DType::bf16:
      if (vec) run_typed<__nv_bfloat16, 8, BWD>(x, dout, theta, cos_t, sin_t, out, ws, s, act, act_dim, st, opt);
      else run_typed<__nv_bfloat16, 1, BWD>(x, dout, theta, cos_t, sin_t, out, ws, s, act, act_dim, st, opt);
      break;
  }
}

}  // namespace

void lrpe_cosine_md_check(const LrpeMdShape& s, Act act, int act_dim) {
  const std::string where = "lrpe_cosine_md (" + shape_str(s) + "): ";
  if (s.md < 1 || s.md > 3) throw KernelError(where + "md must be 1, 2 or 3, got " + std::to_string(s.md));
  for (int i = 0; i < s.md; ++i)
    if (s.n[i] < 1) throw KernelError(where + "grid sizes must be >= 1");
  if (s.b < 1 || s.h < 1) throw KernelError(where + "b and h must be >= 1");
  if (s.l < 0) throw KernelError(where + "l must be >= 0");
  if (s.d < 1 || s.e < 1) throw KernelError(where + "d and e must be >= 1");
  if (s.e * s.md < s.d) throw KernelError(where + "theta too narrow: e * md must be >= d");
  if (s.grid_tokens() > (int64_t{1} << 31) - 1) throw KernelError(where + "grid has more than 2^31 tokens");
  if (act == Act::softmax && act_dim != -1 && act_dim != -2)
    throw KernelError(where + "softmax act_dim must be -1 (features) or -2 (sequence), got " +
                      std::to_string(act_dim));
  if (act == Act::softmax && act_dim == -1 && s.d > 256)
    throw KernelError(where + "softmax over the features takes d <= 256");
}

size_t lrpe_cosine_md_workspace_bytes(const LrpeMdShape& s, Act act, int act_dim, bool backward) {
  if (!seq_softmax(act, act_dim)) return 0;
  return seq_ws_floats(s, backward, seq_plan(s)) * sizeof(float);
}

void lrpe_cosine_md_fwd(const void* x, const float* theta, const float* cos_cache,
                        const float* sin_cache, void* out, void* workspace, size_t workspace_bytes,
                        const LrpeMdShape& s, DType dtype, Act act, int act_dim, cudaStream_t stream,
                        const LrpeMdOptions& opt) {
  run<false>(x, nullptr, theta, cos_cache, sin_cache, out, workspace, workspace_bytes, s, dtype,
             act, act_dim, stream, opt);
}

void lrpe_cosine_md_bwd(const void* x, const void* grad_out, const float* theta,
                        const float* cos_cache, const float* sin_cache, void* grad_x,
                        void* workspace, size_t workspace_bytes, const LrpeMdShape& s, DType dtype,
                        Act act, int act_dim, cudaStream_t stream, const LrpeMdOptions& opt) {
  run<true>(x, grad_out, theta, cos_cache, sin_cache, grad_x, workspace, workspace_bytes, s, dtype,
            act, act_dim, stream, opt);
}

void lrpe_cosine_md_build_cache(const float* theta, float* cos_t, float* sin_t,
                                const LrpeMdShape& s, cudaStream_t stream) {
  lrpe_cosine_md_check(s, Act::none, -1);
  if (theta == nullptr || cos_t == nullptr || sin_t == nullptr)
    throw KernelError("lrpe_cosine_md_build_cache: null pointer");
  MdArgs a = make_args(s, 1);
  a.theta = theta;
  const int64_t total = s.grid_tokens() * s.h * s.d;
  const int64_t blocks = std::min<int64_t>((total + kThreads - 1) / kThreads, 65535LL * 16);
  md_cache_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(a, total, cos_t, sin_t);
  OPBENCH_LAUNCH_CHECK();
}

}  // namespace opbench::kernels

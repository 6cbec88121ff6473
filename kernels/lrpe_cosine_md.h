// lrpe_cosine_md: cosine LRPE over a 1d, 2d or 3d grid of tokens, with l extra tokens in front.
// Torch-free launch API (raw device pointers, sizes, DType, Act, stream).
//
//   x: (b, h, L, d), L = l + N, N = n1 * ... * nk (k = md in 1..3; the grid is flattened
//      row-major, the last axis fastest); theta: (h, e) float32 with e * md >= d.
//   token s >= l has grid index g = s - l with coordinates (c1, .., ck); feature j in [0, d):
//      axis = j / e, base = j % e, angle = float(c_axis) * theta[h, base]   (float32 product)
//   tokens s < l (extra tokens): angle = 0.
//   xa = act(x, act_dim)  (none | relu | sigmoid | silu | softmax over the d features (-1)
//                          or over all L tokens of a (b, h, feature) column (-2))
//   o  = concat(xa * cos(angle), xa * sin(angle))  -> (b, h, L, 2d), storage dtype.
// Backward, do = concat(do_c, do_s): dxa = do_c cos + do_s sin, dx = act backward of dxa.
//
// Bytes (the floor, storage dtype): fwd read x + write o = 3|x|; bwd read do (2|x|) + write dx
// (|x|), + |x| when the act needs x (relu, sigmoid, silu, softmax). Softmax over the sequence
// needs a second pass over x (and do): see the .cu for what each pass reads.
//
// Angles come either from theta (computed per element, accurate sin/cos of the float32 angle)
// or from a cos/sin cache (N, h, d) float32 built once by lrpe_cosine_md_build_cache.
#pragma once
#include <cstddef>
#include <cstdint>

#include "kernels/common.h"

namespace opbench::kernels {

struct LrpeMdShape {
  int64_t b = 1, h = 1;
  int64_t l = 0;            // extra tokens (angle 0) before the grid
  int md = 1;               // grid dimensions, 1..3
  int64_t n[3] = {1, 1, 1}; // grid sizes; n[i] for i < md are used
  int64_t d = 16;           // feature dim
  int64_t e = 16;           // theta's second dim, e * md >= d
  int64_t grid_tokens() const;        // N
  int64_t tokens() const { return l + grid_tokens(); }  // L
};

struct LrpeMdOptions {
  // Batches each thread walks for one (head, token, feature vector), reusing its cos/sin:
  // 0 = automatic (all of b when the grid stays full), otherwise clamped to [1, b].
  int batch_per_thread = 0;
  // Elementwise kernel, forward: before each round of batch loads, ask L2 for the next round's
  // rows of x (prefetch.global.L2, no registers held): -1 = the default (on), 0 = off, 1 = on.
  int prefetch = -1;
};

// act_dim: -1 (features) or -2 (sequence); only read when act == softmax.
// Throws KernelError (one line) for a shape or act the kernels do not take.
void lrpe_cosine_md_check(const LrpeMdShape& s, Act act, int act_dim);

// Device workspace the call needs (softmax over the sequence: per-column statistics; 0 bytes
// otherwise). Depends on the current device's multiprocessor count.
size_t lrpe_cosine_md_workspace_bytes(const LrpeMdShape& s, Act act, int act_dim, bool backward);

// cos_cache/sin_cache: (N, h, d) float32 from lrpe_cosine_md_build_cache, or both null to
// compute the angles from theta. workspace: lrpe_cosine_md_workspace_bytes bytes (may be
// null when that is 0). All pointers on the current device; 16-byte aligned base pointers get
// the vector path.
void lrpe_cosine_md_fwd(const void* x, const float* theta, const float* cos_cache,
                        const float* sin_cache, void* out, void* workspace, size_t workspace_bytes,
                        const LrpeMdShape& s, DType dtype, Act act, int act_dim, cudaStream_t stream,
                        const LrpeMdOptions& opt = {});

void lrpe_cosine_md_bwd(const void* x, const void* grad_out, const float* theta,
                        const float* cos_cache, const float* sin_cache, void* grad_x,
                        void* workspace, size_t workspace_bytes, const LrpeMdShape& s, DType dtype,
                        Act act, int act_dim, cudaStream_t stream, const LrpeMdOptions& opt = {});

// cos_t[g, h, j] = cos(angle(g, h, j)), sin_t likewise, for the N grid tokens (g = s - l).
void lrpe_cosine_md_build_cache(const float* theta, float* cos_t, float* sin_t,
                                const LrpeMdShape& s, cudaStream_t stream);

}  // namespace opbench::kernels

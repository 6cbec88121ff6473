// tpa_decode host: the launch. TpaPlan (a plan made once: the sizes checked, the device
// queried, the kernels' arguments but pointers filled) and its run (the call's pointers, copy
// widths and scales, then the main kernel and bn's reduction kernel), and the one-call
// functions of tpa_decode.h that make a TpaPlan each.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "kernels/tpa_decode.h"
#include "kernels/tpa_decode/args.h"
#include "kernels/tpa_decode/device.h"
#include "kernels/tpa_decode/kernels.h"
#include "kernels/tpa_decode/plan.h"

namespace opbench::kernels {

TpaScales TpaScales::defaults(const TpaShape& s) {
  TpaScales c;
  c.scale = 1.f / std::sqrt(static_cast<float>(s.d));
  c.scale_q = 1.f / static_cast<float>(s.r);
  c.scale_k = 1.f;
  c.scale_v = 1.f;
  return c;
}

const char* tpa_strategy_name(TpaStrategy s) {
  switch (s) {
    case TpaStrategy::b: return "b";
    case TpaStrategy::bh: return "bh";
    case TpaStrategy::bn: return "bn";
  }
  return "?";
}

namespace {

using tpa::KernelFn;
using tpa::kRedThreads;
using tpa::Plan;
using tpa::TpaArgs;
using tpa::WorkspaceLayout;
using tpa::allow_max_smem;
using tpa::device_attr;
using tpa::kernel_for;
using tpa::make_plan;
using tpa::merge_smem_floats;
using tpa::partial_row;
using tpa::reduce_kernel_for;
using tpa::workspace_layout;

constexpr float kLog2e = 1.4426950408889634f;

// Largest of 16/8/4 bytes that divides the pointer and every row offset; 0 = plain loads.
int copy_width(const void* base, int64_t row_bytes, int64_t col_step_bytes) {
  const uintptr_t b = reinterpret_cast<uintptr_t>(base);
  for (int w : {16, 8, 4})
    if (b % w == 0 && row_bytes % w == 0 && col_step_bytes % w == 0) return w;
  return 0;
}

// log2 of the w-byte chunks in a row of `cols` elements when that is a power of two dividing the
// block's threads (load_rows' shift path), else -1.
int chunks_log2(int64_t cols, int w, int sz, int threads) {
  if (w == 0 || (cols * sz) % w != 0) return -1;
  const int64_t cpr = cols * sz / w;
  if ((cpr & (cpr - 1)) != 0 || cpr > threads || threads % cpr != 0) return -1;
  int lg = 0;
  while ((int64_t{1} << lg) < cpr) ++lg;
  return lg;
}

// Launches fn(a) through cudaLaunchKernelEx with at most one launch attribute.
void launch_ex(KernelFn fn, dim3 grid, int threads, size_t smem, cudaStream_t stream,
               const TpaArgs& a, const cudaLaunchAttribute* attr) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = dim3(static_cast<unsigned>(threads));
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute at[1];
  if (attr) {
    at[0] = *attr;
    cfg.attrs = at;
    cfg.numAttrs = 1;
  }
  OPBENCH_CUDA_CHECK(cudaLaunchKernelEx(&cfg, fn, a));
}

}  // namespace

// Everything a launch needs that depends on the shape and the device alone.
struct TpaPlan::Detail {
  TpaShape s;
  DType dtype;
  Plan p;
  WorkspaceLayout ws;
  TpaArgs args{};           // the kernels' arguments but pointers, copy widths and scales
  KernelFn fn;              // the main kernel
  KernelFn reduce = nullptr;  // bn's reduction kernel (none when fused or with one chunk)
  size_t reduce_smem = 0;
  bool pdl;    // the reduction by programmatic dependent launch (sm_90 and the option)
  int device;  // the device the plan was made for
};

TpaPlan::TpaPlan(const TpaShape& s, DType dtype, TpaStrategy strategy, const TpaOptions& opt) {
  tpa_decode_check(s, dtype);
  auto d = std::make_shared<Detail>();
  d->s = s;
  d->dtype = dtype;
  d->p = make_plan(s, dtype, strategy, opt);
  d->ws = workspace_layout(d->p, s, opt);
  d->fn = kernel_for(d->p, dtype);
  allow_max_smem(d->fn);
  d->pdl = opt.pdl && device_attr(cudaDevAttrComputeCapabilityMajor) >= 9;
  OPBENCH_CUDA_CHECK(cudaGetDevice(&d->device));
  const Plan& p = d->p;
  TpaArgs& a = d->args;
  a.b = static_cast<int>(s.b); a.h = static_cast<int>(s.h); a.r = static_cast<int>(s.r);
  a.d = static_cast<int>(s.d); a.e = static_cast<int>(s.e); a.m = s.m;
  a.chunk_len = p.chunk_len; a.nchunks = p.nchunks; a.fixed = p.fixed; a.ngroups = p.ngroups; a.fused = p.fused;
  a.HG = p.HG; a.tt = p.tt; a.a_full = p.a_full; a.NS = p.NS;
  a.q_stride = p.q_stride; a.bk_stride = p.bk_stride; a.bv_stride = p.bv_stride;
  a.a_stride = p.a_stride; a.d_pad = p.d_pad; a.e_pad = p.e_pad;
  a.stage_off = static_cast<int>(p.stage_off); a.qin_off = static_cast<int>(p.qin_off);
  a.aqt_off = static_cast<int>(p.aqt_off);
  if (p.nchunks > 1 && !p.fused) {
    const int V = s.e % 4 == 0 ? 4 : 1;
    d->reduce = reduce_kernel_for(dtype, V);
    d->reduce_smem = 4 * merge_smem_floats(1, p.nchunks, static_cast<int>(s.e), kRedThreads, V);
  }
  d_ = std::move(d);
}

int64_t TpaPlan::chunks() const { return d_->p.nchunks; }
size_t TpaPlan::workspace_bytes() const { return d_->ws.total; }
size_t TpaPlan::counter_bytes() const { return d_->ws.ctr_bytes; }
bool TpaPlan::fused() const { return d_->p.fused; }

void TpaPlan::run(const void* aq, const void* ak, const void* av, const void* bq, const void* bk,
                  const void* bv, void* out, void* workspace, size_t workspace_bytes,
                  const TpaScales& sc, cudaStream_t stream) const {
  const Detail& dt = *d_;
  const Plan& p = dt.p;
  const TpaShape& s = dt.s;
  if (!aq || !ak || !av || !bq || !bk || !bv || !out)
    throw KernelError("tpa_decode: null tensor pointer");
  int dev = 0;
  OPBENCH_CUDA_CHECK(cudaGetDevice(&dev));
  if (dev != dt.device)
    throw KernelError("tpa_decode: the plan was made for device " + std::to_string(dt.device) +
                      ", the current device is " + std::to_string(dev));
  const int sz = dtype_size(dt.dtype);

  TpaArgs a = dt.args;
  a.aq = aq; a.ak = ak; a.av = av; a.bq = bq; a.bk = bk; a.bv = bv; a.out = out;
  a.qscale = sc.scale * sc.scale_k * sc.scale_q * kLog2e;
  a.vscale = sc.scale_v;
  // cp.async widths: every row start and the group's first head must be aligned to the width.
  a.w_bk = copy_width(bk, s.d * sz, 0);
  a.w_bv = copy_width(bv, s.e * sz, 0);
  const int64_t head_step = p.a_full ? 0 : int64_t{p.HG} * sz;
  a.w_a = std::min(copy_width(ak, s.h * sz, head_step), copy_width(av, s.h * sz, head_step));
  a.lg_bk = chunks_log2(s.d, a.w_bk, sz, p.threads);
  a.lg_bv = chunks_log2(s.e, a.w_bv, sz, p.threads);
  a.lg_a = chunks_log2(p.a_full ? s.h : std::min<int64_t>(p.HG, s.h), a.w_a, sz, p.threads);
  if (p.nchunks > 1) {
    const WorkspaceLayout& wl = dt.ws;
    if (workspace == nullptr || workspace_bytes < wl.total)
      throw KernelError("tpa_decode: workspace of " + std::to_string(workspace_bytes) +
                        " bytes, needs " + std::to_string(wl.total));
    if (reinterpret_cast<uintptr_t>(workspace) % 16 != 0)
      throw KernelError("tpa_decode: workspace must be 16-byte aligned");
    a.ctr = wl.ctr_bytes ? static_cast<unsigned*>(workspace) : nullptr;
    float* w = reinterpret_cast<float*>(static_cast<char*>(workspace) + wl.ctr_bytes);
    a.po = w;
    a.pm = w + s.b * p.nchunks * s.h * partial_row(static_cast<int>(s.e));
  }

  const dim3 grid(static_cast<unsigned>(p.nchunks), static_cast<unsigned>(p.ngroups),
                  static_cast<unsigned>(s.b));
  cudaLaunchAttribute coop{};  // the fused merge: every block resident, or the launch fails
  coop.id = cudaLaunchAttributeCooperative;
  coop.val.cooperative = 1;
  launch_ex(dt.fn, grid, p.threads, p.smem, stream, a, p.fused ? &coop : nullptr);
  if (dt.reduce) {  // none when fused
    cudaLaunchAttribute pdl{};
    pdl.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    pdl.val.programmaticStreamSerializationAllowed = 1;
    launch_ex(dt.reduce, dim3(static_cast<unsigned>(s.b * s.h)), kRedThreads, dt.reduce_smem,
              stream, a, dt.pdl ? &pdl : nullptr);
  }
}

int64_t tpa_decode_chunks(const TpaShape& s, DType dtype, TpaStrategy strategy,
                          const TpaOptions& opt) {
  return TpaPlan(s, dtype, strategy, opt).chunks();
}

size_t tpa_decode_workspace_bytes(const TpaShape& s, DType dtype, TpaStrategy strategy,
                                  const TpaOptions& opt) {
  return TpaPlan(s, dtype, strategy, opt).workspace_bytes();
}

size_t tpa_decode_counter_bytes(const TpaShape& s, DType dtype, TpaStrategy strategy,
                                const TpaOptions& opt) {
  return TpaPlan(s, dtype, strategy, opt).counter_bytes();
}

void tpa_decode(const void* aq, const void* ak, const void* av, const void* bq, const void* bk,
                const void* bv, void* out, void* workspace, size_t workspace_bytes,
                const TpaShape& s, const TpaScales& sc, DType dtype, TpaStrategy strategy,
                cudaStream_t stream, const TpaOptions& opt) {
  TpaPlan(s, dtype, strategy, opt).run(aq, ak, av, bq, bk, bv, out, workspace, workspace_bytes, sc, stream);
}

}  // namespace opbench::kernels

// tpa_decode host: the planner (plan.h): tile and stages, head groups and warps, the kernels'
// shared-memory layouts, chunks of m, the fused merge's conditions, bn's workspace layout; and
// the size checks of tpa_decode_check.
#include "kernels/tpa_decode/plan.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "kernels/tpa_decode/args.h"
#include "kernels/tpa_decode/device.h"

namespace opbench::kernels {
namespace tpa {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

size_t r16(size_t b) { return (b + 15) & ~size_t(15); }

// The raw q inputs (aq rows of the block's heads, bq) go into the last stage when they fit
// there and the prologue leaves it free (CUDA cores), else past the stages (tensor cores: the
// prologue fills every stage).
void place_q_inputs(Plan& p, const TpaShape& s, int sz, size_t stage_bytes, size_t stages_end) {
  const size_t qin = r16(static_cast<size_t>(round_up(p.HG * s.r, 8)) * sz) + r16(static_cast<size_t>(s.r * s.d) * sz);
  if (qin <= stage_bytes && !p.tc) {
    p.qin_off = stages_end - stage_bytes;
    p.smem = stages_end;
  } else {
    p.qin_off = stages_end;
    p.smem = stages_end + qin;
  }
}

// Tensor cores: Qs | aq_t | stages; after the loop the stages hold the token slices' merge
// buffers.
void tc_layout(Plan& p, const TpaShape& s, int sz) {
  p.aqt_off = r16(static_cast<size_t>(p.HG) * p.q_stride * sz);
  p.stage_off = p.aqt_off + r16(4ull * s.r * round_up(p.HG, 8));
  const size_t stage = static_cast<size_t>(p.tt) * (p.bk_stride + p.bv_stride + 2 * p.a_stride) * sz;
  place_q_inputs(p, s, sz, stage, p.stage_off + p.stages * stage);
  const size_t merge = 4ull * (p.tt / 16) * p.HG * (2 + p.NS * kEW + kRedPad);  // tpa_tc_kernel's
  p.smem = std::max(p.smem, p.stage_off + merge);
}

// CUDA cores: Qs | aq_t | Ps | m_s l_s al_s | 2 stages (the kernel carves the same order); the
// token slices' reduction reuses the stages (256 float4).
void cc_layout(Plan& p, const TpaShape& s, int sz) {
  p.stage_off = r16(4ull * p.HG * p.q_stride) + r16(4ull * s.r * round_up(p.HG, 8)) +
                r16(4ull * p.tt * (p.HG + 1)) + 3 * r16(4ull * p.HG);
  const size_t stage = static_cast<size_t>(p.tt) * (p.bk_stride + p.bv_stride + 2 * p.a_stride) * sz;
  place_q_inputs(p, s, sz, stage, p.stage_off + 2 * stage);
  p.smem = std::max(p.smem, p.stage_off + 256 * 16);
}

}  // namespace

KernelFn kernel_for(const Plan& p, DType dt) {
  return p.tc ? tc_kernel_for(dt, p.tt, p.stages) : cc_kernel_for(dt);
}

namespace {

// The tensor-core kernels' plan: padded sizes, strides, and the tile x stages of the option,
// else the first of the strategy's list whose shared memory fits.
void plan_tensor_cores(Plan& p, const TpaShape& s, TpaStrategy strat, const TpaOptions& opt, int sz) {
  p.d_pad = static_cast<int>(round_up(s.d, 16));
  p.e_pad = static_cast<int>(round_up(s.e, 16));
  p.NS = static_cast<int>(ceil_div(p.e_pad, kEW));
  p.q_stride = p.d_pad + 8;
  p.bk_stride = p.d_pad + 8;
  p.bv_stride = p.e_pad + 8;
  // b runs few blocks (one per batch element), so it wants a deep pipeline per block (64x4
  // measured 16% faster than 64x2 at b = 8, m = 32768); bn fills the chip with blocks: 64x2
  // measured best (2 blocks of ~98 KB per multiprocessor; docs/kernels.md, tpa_decode).
  std::vector<std::pair<int, int>> cands;
  if (opt.tile || opt.stages) cands = {{opt.tile ? opt.tile : 64, opt.stages ? opt.stages : 2}};
  else if (strat == TpaStrategy::b) cands = {{64, 4}, {64, 3}, {64, 2}, {32, 2}};
  else cands = {{64, 2}, {32, 2}};
  for (const auto& c : cands) {
    p.tt = c.first;
    p.stages = c.second;
    const KernelFn fn = tc_kernel_for(DType::f16, p.tt, p.stages);
    if (!fn)
      throw KernelError("tpa_decode: no tensor-core kernel for tile " + std::to_string(p.tt) +
                        " with " + std::to_string(p.stages) +
                        " stages (have 64x2, 64x3, 64x4, 32x2, 32x4)");
    // warps: 16-head groups x NS column parts x TT/16 token slices, at most kMaxWarpsTc
    const int slices = p.tt / 16;
    const int mh = static_cast<int>(
        std::min<int64_t>(ceil_div(s.h, 16), std::max(1, kMaxWarpsTc / (p.NS * slices))));
    p.HG = 16 * mh;
    p.threads = 32 * mh * p.NS * slices;
    p.a_stride = p.HG + 8;
    tc_layout(p, s, sz);
    if (p.smem <= static_cast<size_t>(max_dynamic_smem(fn))) break;
  }
}

// The CUDA-core kernel's plan: head groups, tile, padded strides; a 16-token tile when the
// default one's shared memory does not fit.
void plan_cuda_cores(Plan& p, const TpaShape& s, DType dt, TpaStrategy strat, int sz) {
  p.HG = strat == TpaStrategy::bh ? 1 : static_cast<int>(std::min<int64_t>(s.h, 32));
  p.a_full = strat == TpaStrategy::bh && s.h <= 128;
  p.tt = strat == TpaStrategy::bh ? 64 : 32;
  p.threads = kCcThreads;
  const int64_t d4 = ceil_div(s.d, 4) * 4, e4 = ceil_div(s.e, 4) * 4;
  const int64_t pad = 16 / sz;  // one 16-byte step between rows: fewer bank conflicts
  p.q_stride = static_cast<int>(d4 + 4);
  p.bk_stride = static_cast<int>(round_up(d4, pad) + pad);
  p.bv_stride = static_cast<int>(round_up(e4, pad) + pad);
  p.a_stride = static_cast<int>(round_up(p.a_full ? s.h : p.HG, 8) + 8);
  cc_layout(p, s, sz);
  if (p.smem > static_cast<size_t>(max_dynamic_smem(kernel_for(p, dt)))) {
    p.tt = 16;
    cc_layout(p, s, sz);
  }
}

// bn: a block's even part of the tiles from which TpaOptions::fixed_share applies.
constexpr int64_t kFixedMinTiles = 16;

// bn's chunks of m: by default as many as fill the blocks resident on the device at once; and
// whether the merge can be fused into the main kernel.
void plan_chunks(Plan& p, const TpaShape& s, DType dt, const TpaOptions& opt) {
  const int per_sm = std::max(1, blocks_per_sm(kernel_for(p, dt), p.threads, p.smem));
  const int64_t slots = static_cast<int64_t>(per_sm) * device_attr(cudaDevAttrMultiProcessorCount);
  int64_t len = opt.chunk_len > 0 ? opt.chunk_len
                                  : ceil_div(s.m, std::max<int64_t>(1, slots / (s.b * p.ngroups)));
  len = std::max<int64_t>(len, ceil_div(s.m, kMaxChunks));  // the reduction's weights fit
  p.chunk_len = round_up(std::max<int64_t>(len, 1), p.tt);
  p.nchunks = static_cast<int>(ceil_div(s.m, p.chunk_len));
  if (p.nchunks == 1) p.chunk_len = s.m;
  // Tiles a block takes in fixed order before the counter: the option's share of its even part
  // when that part is at least kFixedMinTiles, leaving the counter at least the last round
  // below a share of 1; never fewer than the stages. (Measured: with 8 tiles a block or fewer
  // the counter's balance is worth more than its round trips.)
  const int64_t even = ceil_div(ceil_div(s.m, p.tt), p.nchunks);  // a block's even part of the tiles
  const double share = even >= kFixedMinTiles ? std::min(1.0, std::max(0.0, opt.fixed_share)) : 0.0;
  const int64_t fixed = static_cast<int64_t>(std::ceil(share * static_cast<double>(even)));
  p.fixed = static_cast<int>(std::max<int64_t>(p.stages, share < 1.0 ? std::min(fixed, even - 1) : fixed));
  // The fused merge needs the tile counters, every block resident at once (a cooperative
  // launch checks it) and its buffers inside the stages' shared memory.
  if (p.tc && opt.dynamic_tiles && opt.fused_merge && p.nchunks > 1 &&
      device_attr(cudaDevAttrCooperativeLaunch)) {
    const int per = static_cast<int>(ceil_div(p.HG, p.nchunks));
    const int64_t need = 4 * merge_smem_floats(per, p.nchunks, static_cast<int>(s.e), p.threads,
                                               s.e % 4 == 0 ? 4 : 1);
    p.fused = s.b * p.ngroups * p.nchunks <= slots && p.stage_off + need <= static_cast<int64_t>(p.smem);
  }
}

}  // namespace

Plan make_plan(const TpaShape& s, DType dt, TpaStrategy strat, const TpaOptions& opt) {
  Plan p;
  const int sz = dtype_size(dt);
  p.tc = dt != DType::f32 && strat != TpaStrategy::bh;
  if (p.tc) plan_tensor_cores(p, s, strat, opt, sz);
  else plan_cuda_cores(p, s, dt, strat, sz);
  const int limit = max_dynamic_smem(kernel_for(p, dt));
  if (p.smem > static_cast<size_t>(limit))
    throw KernelError("tpa_decode: d=" + std::to_string(s.d) + " e=" + std::to_string(s.e) +
                      " r=" + std::to_string(s.r) + " needs " + std::to_string(p.smem) +
                      " bytes of shared memory, a block can have " + std::to_string(limit));
  p.ngroups = static_cast<int>(ceil_div(s.h, p.HG));
  p.chunk_len = s.m;
  p.nchunks = 1;
  if (strat == TpaStrategy::bn) plan_chunks(p, s, dt, opt);
  return p;
}

WorkspaceLayout workspace_layout(const Plan& p, const TpaShape& s, const TpaOptions& opt) {
  WorkspaceLayout w;
  if (p.nchunks <= 1) return w;
  if (p.tc && opt.dynamic_tiles)
    w.ctr_bytes = static_cast<size_t>(round_up((p.fused ? 2 : 1) * s.b * p.ngroups * 4, 256));
  w.total = w.ctr_bytes + static_cast<size_t>(s.b * p.nchunks * s.h * (partial_row(static_cast<int>(s.e)) + 1)) *
                                 sizeof(float);
  return w;
}

}  // namespace tpa

void tpa_decode_check(const TpaShape& s, DType dtype) {
  (void)dtype;
  const std::string where = "tpa_decode (b=" + std::to_string(s.b) + " h=" + std::to_string(s.h) +
                            " r=" + std::to_string(s.r) + " d=" + std::to_string(s.d) +
                            " e=" + std::to_string(s.e) + " m=" + std::to_string(s.m) + "): ";
  if (s.b < 1 || s.h < 1 || s.r < 1 || s.d < 1 || s.e < 1 || s.m < 1)
    throw KernelError(where + "every size must be >= 1");
  if (s.r > 64) throw KernelError(where + "rank r must be <= 64");
  if (s.d > 256 || s.e > 256) throw KernelError(where + "d and e must be <= 256");
  if (s.b > 65535) throw KernelError(where + "b must be <= 65535");
  if (s.h > 65535) throw KernelError(where + "h must be <= 65535");
  if (s.m > (int64_t{1} << 40)) throw KernelError(where + "m too large");
}

}  // namespace opbench::kernels

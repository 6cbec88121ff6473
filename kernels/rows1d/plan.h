// The 1d row machinery, host side: a call described op-independently (Call), its geometry
// (Plan: unit width, threads per row, heads per tile, steps and tiles, the softmax-over-n
// strategy), the kernels' arguments from it (make_args) and the size checks every 1d op shares.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/args1d.h"
#include "kernels/common.h"
#include "kernels/rows1d/args.h"

namespace opbench::kernels::rows1d {

// One launch, described op-independently (the op files fill it from their public arguments).
struct Call {
  const char* op = "";
  DType dtype = DType::bf16;
  Act act = Act::none;
  bool seq = false;  // softmax over the sequence
  bool bwd = false;
  const void* x = nullptr;
  const void* dout = nullptr;
  void* out = nullptr;
  const float* theta = nullptr;
  int64_t th_sh = 0, th_sk = 0, offset = 0;
  int64_t B = 0, H = 0, N = 0;
  int D = 0;
  bool lrpe_layout = false;  // (b, n, h, d) rows; else (b, h, n, d)
  int piece = 0;             // elements per piece: d, or d / 2 for rotate
  int xhalf = 0, ohalf = 0;
  int orow_len = 0;          // elements per row of the output-shaped tensor
  void* ws = nullptr;
  size_t ws_bytes = 0;
  SeqStrategy strategy = SeqStrategy::automatic;
  cudaStream_t stream = nullptr;
};

inline int ilog2(int v) {
  int s = 0;
  while ((1 << s) < v) ++s;
  return s;
}

// Multiprocessors of the current device (cached per device).
inline int sm_count() {
  int dev = 0;
  OPBENCH_CUDA_CHECK(cudaGetDevice(&dev));
  static int cache[64] = {};
  if (dev >= 0 && dev < 64 && cache[dev] > 0) return cache[dev];
  int n = 0;
  OPBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev));
  if (dev >= 0 && dev < 64) cache[dev] = n;
  return n;
}

inline bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

struct Plan {
  int V = 1, U = 0, tpr_shift = 0, hb_shift = 0, ds = 1;
  bool br = false;      // row kernel: batch rows (a step's rows are batches at one s)
  int64_t bt = 1;       // row kernel: tiles along b (B, or groups of rpt batches with br)
  int64_t base = 1;     // tiles along s of one step each
  int steps = 1;        // row kernel: steps per tile
  int64_t tiles_s = 1;  // row kernel: tiles along s
  SeqStrategy strat = SeqStrategy::automatic;  // resolved to block or split when c.seq
  int cg_max_shift = 0; // block strategy: most column groups per row (>= 64 contiguous bytes)
  int cg_shift = 0;     // block strategy: column groups per row (set at launch, occupancy)
  int stats_steps = 1;  // split strategy: steps per chunk
  int nchunks = 1;      // split strategy: chunks along s
  size_t ws_floats = 0; // split strategy: statistics + partials
};

// Split strategy: chunks of n for the statistics pass: about `waves` x `slots` blocks (short
// blocks, so the last partial wave costs little), at most 64 chunks per column, >= 4 steps each.
inline void split_chunks(const Call& c, Plan& p, int64_t slots, int waves) {
  const int64_t hblks = c.H >> p.hb_shift;
  int64_t chunks = (slots * (waves < 1 ? 1 : waves)) / (c.B * hblks);
  const int64_t most = (p.base + 3) / 4 < 64 ? (p.base + 3) / 4 : 64;
  chunks = chunks > most ? most : chunks;
  chunks = chunks < 1 ? 1 : chunks;
  const int64_t ss = (p.base + chunks - 1) / chunks;
  p.stats_steps = int(ss);
  p.nchunks = int((p.base + ss - 1) / ss);
  const int nstat = c.bwd ? 2 : 1, nplane = c.bwd ? 3 : 2;
  p.ws_floats = size_t(nstat) * c.B * c.H * c.D + size_t(nplane) * c.B * c.H * size_t(p.nchunks) * c.D;
}

// Block strategy: the most column groups (a power of two <= the maximum) whose blocks are all
// resident at once (`slots` = blocks per SM x SMs); a second partial wave would double the time.
inline void block_groups(const Call& c, Plan& p, int64_t slots) {
  int cg = 1;
  while (cg * 2 <= (1 << p.cg_max_shift) && c.B * c.H * cg * 2 <= slots) cg *= 2;
  p.cg_shift = ilog2(cg);
}

// Softmax over n, resident strategy (seq_resident.cuh): a launch's geometry for `nt` threads a
// block (two teams of nt / 2 with `teams`, each covering whole chunks), `stages` stages of about
// `stage_bytes` of inputs each, rows cut into `cg` column groups; rpt rows per step; P pieces of
// x and Q of dout per unit (the backward stages both).
struct ResPlan {
  ResArgs r;
  int threads = 512;
  bool teams = true;
  int cg_shift = 0;     // a.tprc_shift = tpr_shift - cg_shift
  size_t smem = 0;      // dynamic shared memory per block
  size_t ws_bytes = 0;  // partial statistics, then the counters
  int64_t grid = 0;     // blocks (set at launch planning: every block resident)
  bool ok = false;
};
inline bool resident_geometry(const Call& c, const Plan& p, int rpt, int P, int Q, int nt, bool teams,
                              int stages, int64_t stage_bytes, int cg, ResPlan& rp) {
  const int vec = 16 / dtype_size(c.dtype);
  const int tpr = 1 << p.tpr_shift;
  const int tn = teams ? nt / 2 : nt;  // threads over a chunk
  if (p.V != vec || cg < 1 || cg > tpr || (cg & (cg - 1)) != 0 || stages < 2 || stages > 4) return false;
  const int tprc = tpr / cg, upt = 8 / p.V;
  if (tprc > tn) return false;
  const int np = P + (c.bwd ? Q : 0), nstat = c.bwd ? 3 : 2;
  const int64_t step_slots = int64_t(tn) * rpt * upt * np;
  const int64_t step_rows = int64_t(tn / tprc) * rpt;
  int64_t sps = stage_bytes / (16 * step_slots);
  const int64_t need = (c.N + step_rows - 1) / step_rows;
  sps = sps < 1 ? 1 : sps > need ? need : sps;
  ResArgs& r = rp.r;
  r.stages = stages;
  r.sps = int(sps);
  r.rows = sps * step_rows;
  r.G = int((c.N + r.rows - 1) / r.rows);
  r.cgs = 0;
  for (int k = 0; k < cg; ++k) r.cgs += k * tprc < p.U ? 1 : 0;  // groups holding units
  const int64_t items = c.B * c.H * r.cgs * r.G;
  if (items >= (int64_t(1) << 31)) return false;
  r.groups = uint32_t(c.B * c.H * r.cgs);
  r.items = uint32_t(items);
  r.div_g = FastDiv(uint32_t(r.G));
  r.div_cgs = FastDiv(uint32_t(r.cgs));
  r.div_h = FastDiv(uint32_t(c.H));
  r.ncg = tprc * upt * P * p.V;
  r.step_slots = int(step_slots);
  rp.threads = nt;
  rp.teams = teams;
  rp.cg_shift = ilog2(cg);
  rp.smem = size_t(stages) * sps * step_slots * 16 + size_t(nstat) * (tn / 32) * r.ncg * 4 +
            size_t(4) * r.ncg * 4;
  rp.ws_bytes = r.G > 1 ? size_t(r.items) * nstat * r.ncg * 4 + size_t(r.groups) * 4 : 0;
  return true;
}

// Whether a call takes 16-byte units (the piece a multiple of them, every tensor aligned).
inline bool vector_plan(const Call& c) {
  const int vec = 16 / dtype_size(c.dtype);
  return c.piece % vec == 0 && aligned16(c.x) && aligned16(c.out) && (!c.bwd || aligned16(c.dout));
}

// How an op runs its row kernel for one call: the most steps per tile, batch rows, and the L2
// prefetch of the next step. Each op chooses per variant from the measurements
// (docs/kernels.md, the 1d row machinery); Tuning1d overrides any of the three.
struct RowChoice {
  int max_steps = 16;
  bool batch_rows = true;
  bool prefetch = false;
  // Softmax over n, automatic strategy: resident for res_lo < n <= res_hi (where it measured
  // faster than block and split), else block or split.
  int64_t res_lo = 0, res_hi = 0;
};

// A call is "large" when x holds at least 64 MiB: there the short tiles with prefetch pay;
// below, launch and tile start-up costs dominate and the long-tile settings stay.
inline bool large_call(const Call& c) {
  return double(c.B) * c.H * c.N * c.D * dtype_size(c.dtype) >= double(64 << 20);
}

// Geometry of a call. rpt: rows per step of the op's kernels; br: batch rows (rpt batches at
// one s per step) for the row kernel; max_steps: the most steps per tile; softmax over n,
// automatic: resident for res_lo < n <= res_hi.
inline Plan make_plan(const Call& c, int rpt, bool br, int max_steps, int64_t res_lo = 0,
                      int64_t res_hi = 0) {
  Plan p;
  p.br = br;
  const int esz = dtype_size(c.dtype);
  const int vec = 16 / esz;
  p.V = vector_plan(c) ? vec : 1;
  p.U = c.piece / p.V;
  const int upt = 8 / p.V;
  const int per = (p.U + upt - 1) / upt;
  p.tpr_shift = ilog2(per);  // <= 5 for d <= 256
  const int rg = kThreads >> p.tpr_shift;
  const int sms = sm_count();
  if (c.lrpe_layout) {
    int hb = 1;
    while (hb * 2 <= rg && c.H % (hb * 2) == 0 && hb * 2 * c.piece <= kTab) hb *= 2;
    p.hb_shift = ilog2(hb);
  }
  p.ds = rg >> p.hb_shift;
  const int64_t hblks = c.H >> p.hb_shift;
  const int rpt_s = br ? 1 : rpt;  // rows per step along s
  p.bt = br ? (c.B + rpt - 1) / rpt : c.B;
  p.base = (c.N + int64_t(p.ds) * rpt_s - 1) / (int64_t(p.ds) * rpt_s);
  // Row kernel: up to max_steps steps per tile while keeping >= tile_blocks_per_sm (48)
  // blocks per SM, about 16 waves: the last partial wave costs little, longer tiles amortize
  // the theta table and give the prefetch a longer run.
  const Tuning1d& tu = tuning_1d();
  const int64_t per_sm = tu.tile_blocks_per_sm > 0 ? tu.tile_blocks_per_sm : 1;
  int64_t steps = (p.bt * hblks * p.base) / (per_sm * sms);
  const int64_t most = max_steps > 0 ? max_steps : 1;
  steps = steps < 1 ? 1 : (steps > most ? most : steps);
  p.steps = int(steps);
  p.tiles_s = (p.base + steps - 1) / steps;
  if (c.seq) {
    const int tpr = 1 << p.tpr_shift;
    int tprc_min = 1;
    while (tprc_min < tpr && tprc_min * p.V * esz < 64) tprc_min *= 2;
    p.cg_max_shift = ilog2(tpr / tprc_min);
    p.strat = c.strategy;
    if (p.strat == SeqStrategy::automatic) {
      // resident in the op's measured range of n (one read of the inputs; where it does not fit,
      // split); block: one launch and no buffer, when b * h * groups fills the SMs and n is
      // short; split: full occupancy in both passes otherwise. Measured (H100, b 12, h 12, d 128,
      // bf16): block wins at n = 256 by ~8 us (2 launches fewer), split at n = 4096 by 5-25%;
      // the crossover lies at n ~ 500-800 (act forward ~2000).
      const bool fills = (c.B * c.H) << p.cg_max_shift >= sms;
      if (c.N > res_lo && c.N <= res_hi) p.strat = SeqStrategy::resident;
      else p.strat = fills && c.N <= 512 ? SeqStrategy::block : SeqStrategy::split;
    }
  }
  return p;
}

inline Args make_args(const Call& c, const Plan& p) {
  Args a;
  a.x = c.x;
  a.dout = c.dout;
  a.out = c.out;
  a.theta = c.theta;
  a.th_sh = c.th_sh;
  a.th_sk = c.th_sk;
  a.offset = c.offset;
  a.B = c.B;
  a.H = c.H;
  a.N = c.N;
  a.D = c.D;
  a.U = p.U;
  a.xhalf = c.xhalf;
  a.ohalf = c.ohalf;
  if (c.lrpe_layout) {
    a.xsb = c.N * c.H * c.D, a.xss = c.H * c.D, a.xsh = c.D;
    a.osb = c.N * c.H * c.orow_len, a.oss = c.H * c.orow_len, a.osh = c.orow_len;
  } else {
    a.xsb = c.H * c.N * c.D, a.xsh = c.N * c.D, a.xss = c.D;
    a.osb = c.H * c.N * c.orow_len, a.osh = c.N * c.orow_len, a.oss = c.orow_len;
  }
  a.tpr_shift = p.tpr_shift;
  a.tprc_shift = p.tpr_shift;
  a.hb_shift = p.hb_shift;
  a.steps = p.steps;
  a.tiles_s = p.tiles_s;
  a.h_fast = c.lrpe_layout ? 1 : 0;
  a.ncols = c.B * c.H * c.D;
  a.nchunks = p.nchunks;
  a.cs = stream_stores();
  return a;
}

// Shared validation of the sizes every 1d op takes (throws KernelError with a one-line reason).
inline void check_common(const Call& c) {
  const std::string op = c.op;
  if (c.B < 1 || c.H < 1 || c.N < 1)
    throw KernelError(op + ": b, h and n must be >= 1 (got b=" + std::to_string(c.B) +
                      ", h=" + std::to_string(c.H) + ", n=" + std::to_string(c.N) + ")");
  if (c.x == nullptr || c.out == nullptr || (c.bwd && c.dout == nullptr))
    throw KernelError(op + ": null tensor pointer");
  if (c.B * c.H * c.N > (int64_t(1) << 40))
    throw KernelError(op + ": too many rows (b * h * n > 2^40)");
}

}  // namespace opbench::kernels::rows1d

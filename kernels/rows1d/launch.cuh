// The 1d row machinery, host dispatch of one call (act softmax, lrpe_cosine, lrpe_rotate) to its
// kernels: storage type x unit width x activation x direction, then the row kernel (elementwise
// or feature softmax) or a strategy for softmax over the sequence (softmax_seq.cuh,
// seq_resident.cuh); and the workspace a call needs, from the same plan.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/args1d.h"
#include "kernels/common.cuh"
#include "kernels/rows1d/args.h"
#include "kernels/rows1d/plan.h"
#include "kernels/rows1d/row_kernel.cuh"
#include "kernels/rows1d/seq_resident.cuh"
#include "kernels/rows1d/softmax_seq.cuh"

namespace opbench::kernels::rows1d {

inline unsigned grid_of(int64_t blocks, const char* op) {
  if (blocks < 1 || blocks > 0x7fffffffLL)
    throw KernelError(std::string(op) + ": too many blocks for one launch (" +
                      std::to_string(blocks) + ")");
  return static_cast<unsigned>(blocks);
}

// Resident blocks per SM of a kernel (256 threads), asked once per kernel.
template <class K>
int occupancy(K kernel) {
  int n = 0;
  OPBENCH_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, kThreads, 0));
  if (n < 1) throw KernelError("a 1d kernel cannot run 256 threads per block on this device");
  return n;
}
template <class OP, typename T, int V, bool BWD>
int stats_slots() {
  static const int occ = occupancy(seq_stats_kernel<OP, T, V, BWD, true>);
  return occ * sm_count();
}
template <class OP, typename T, int V, bool BWD>
int block_slots() {
  static const int occ = occupancy(seq_block_kernel<OP, T, V, BWD, true>);
  return occ * sm_count();
}

// Softmax over n, resident strategy: blocks per SM of its kernel for a plan (the kernel's
// shared-memory limit raised to the device's once).
template <class OP, typename T, int V, bool BWD, bool TEAMS>
int resident_occupancy_k(const ResPlan& rp) {
  const auto kernel = seq_resident_kernel<OP, T, V, BWD, TEAMS>;
  static const bool raised = [kernel] {
    int dev = 0, optin = 0;
    OPBENCH_CUDA_CHECK(cudaGetDevice(&dev));
    OPBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    cudaFuncAttributes fa{};
    OPBENCH_CUDA_CHECK(cudaFuncGetAttributes(&fa, kernel));
    OPBENCH_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            optin - int(fa.sharedSizeBytes)));
    return true;
  }();
  (void)raised;
  int n = 0;
  OPBENCH_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, rp.threads, rp.smem));
  return n;
}
template <class OP, typename T, int V, bool BWD>
int resident_occupancy(const ResPlan& rp) {
  return rp.teams ? resident_occupancy_k<OP, T, V, BWD, true>(rp)
                  : resident_occupancy_k<OP, T, V, BWD, false>(rp);
}

// The resident plan of a call: Tuning1d's res_* fields, else two teams of 256 threads (128 where
// a step of 256 does not fit the stages) and 3 stages of 64 KiB, with the widest column group
// (segments of >= 32 bytes) whose merge loads at most 8 floats a thread (else the narrowest);
// res_cg is capped at the row's threads. ok is false when no geometry fits: the vector path only,
// and a group's chunks no more than the resident blocks.
template <class OP, typename T, int V, bool BWD>
ResPlan resident_plan(const Call& c, const Plan& p) {
  const Tuning1d& tu = tuning_1d();
  constexpr int kRpt = BWD ? OP::kRptB : OP::kRptF;
  const bool teams = tu.res_teams != 0;
  const int stages = tu.res_stages > 0 ? tu.res_stages : 3;
  const int64_t stage_bytes = int64_t(tu.res_stage_kb > 0 ? tu.res_stage_kb : 64) << 10;
  const int tpr = 1 << p.tpr_shift;
  const int want_cg = tu.res_cg > 0 ? (tu.res_cg < tpr ? tu.res_cg : tpr) : 0;
  ResPlan best;
  for (int nt : {512, 256}) {
    if (tu.res_threads > 0 && nt != tu.res_threads) continue;
    const int tn = teams ? nt / 2 : nt;
    for (int cg = 1; cg <= tpr; cg *= 2) {
      if (want_cg > 0 ? cg != want_cg : cg > 1 && (tpr / cg) * 16 < 32) continue;
      ResPlan rp;
      if (!resident_geometry(c, p, kRpt, OP::P, OP::Q, nt, teams, stages, stage_bytes, cg, rp)) continue;
      const int occ = resident_occupancy<OP, T, V, BWD>(rp);
      const int64_t slots = int64_t(occ) * sm_count();
      if (occ < 1 || rp.r.G > slots) continue;
      rp.grid = rp.r.items < slots ? rp.r.items : slots;
      rp.ok = true;
      best = rp;
      if (int64_t(rp.r.G) * rp.r.ncg * (BWD ? 3 : 2) <= 8 * int64_t(tn)) break;
    }
    if (best.ok) break;
  }
  return best;
}

template <class OP, typename T, int V, bool BWD>
void launch_resident(const Call& c, const ResPlan& rp, Args a) {
  a.tprc_shift = a.tpr_shift - rp.cg_shift;
  ResArgs r = rp.r;
  if (rp.ws_bytes > 0) {
    if (c.ws_bytes < rp.ws_bytes)
      throw KernelError(std::string(c.op) + ": workspace of " + std::to_string(c.ws_bytes) +
                        " bytes, softmax over n (resident) needs " + std::to_string(rp.ws_bytes));
    r.partial = static_cast<float*>(c.ws);
    r.counters = reinterpret_cast<unsigned*>(r.partial + size_t(r.items) * (BWD ? 3 : 2) * r.ncg);
  }
  void* args[] = {&a, &r};
  const void* kernel = rp.teams ? reinterpret_cast<const void*>(seq_resident_kernel<OP, T, V, BWD, true>)
                                : reinterpret_cast<const void*>(seq_resident_kernel<OP, T, V, BWD, false>);
  OPBENCH_CUDA_CHECK(cudaLaunchCooperativeKernel(kernel, dim3(grid_of(rp.grid, c.op)), dim3(rp.threads),
                                                 args, rp.smem, c.stream));
  OPBENCH_LAUNCH_CHECK();
}

template <class OP, typename T, int V, Act A, Soft S, bool BWD>
void launch_rows(unsigned grid, cudaStream_t stream, const Args& a, bool pf, bool br = false) {
  if constexpr (OP::kAngle && S != Soft::seq && V > 1) {
    if (br) {
      if (pf) rows_kernel<OP, T, V, A, S, BWD, true, true><<<grid, kThreads, 0, stream>>>(a);
      else rows_kernel<OP, T, V, A, S, BWD, false, true><<<grid, kThreads, 0, stream>>>(a);
      OPBENCH_LAUNCH_CHECK();
      return;
    }
  }
  if (pf) rows_kernel<OP, T, V, A, S, BWD, true><<<grid, kThreads, 0, stream>>>(a);
  else rows_kernel<OP, T, V, A, S, BWD, false><<<grid, kThreads, 0, stream>>>(a);
  OPBENCH_LAUNCH_CHECK();
}

template <class OP, typename T, int V, bool BWD>
void launch_typed(const Call& c, Plan p, Args a, bool pf) {
  const int64_t hblks = c.H >> p.hb_shift;
  if (!c.seq) {
    const unsigned grid = grid_of(p.bt * hblks * p.tiles_s, c.op);
    const bool br = p.br;
    if (c.act == Act::softmax) {
      launch_rows<OP, T, V, Act::softmax, Soft::feat, BWD>(grid, c.stream, a, pf, br);
    } else if constexpr (OP::kElemRows) {
      switch (c.act) {
        case Act::none: launch_rows<OP, T, V, Act::none, Soft::elem, BWD>(grid, c.stream, a, pf, br); break;
        case Act::relu: launch_rows<OP, T, V, Act::relu, Soft::elem, BWD>(grid, c.stream, a, pf, br); break;
        case Act::sigmoid: launch_rows<OP, T, V, Act::sigmoid, Soft::elem, BWD>(grid, c.stream, a, pf, br); break;
        case Act::silu: launch_rows<OP, T, V, Act::silu, Soft::elem, BWD>(grid, c.stream, a, pf, br); break;
        default: throw KernelError(std::string(c.op) + ": unknown activation");
      }
    } else {
      throw KernelError(std::string(c.op) + ": elementwise activations use the flat kernel");
    }
    return;
  }
  if (p.strat == SeqStrategy::resident) {  // where it does not fit: split, unless asked for
    if constexpr (V > 1) {
      const ResPlan rp = resident_plan<OP, T, V, BWD>(c, p);
      if (rp.ok) return launch_resident<OP, T, V, BWD>(c, rp, a);
    }
    if (c.strategy == SeqStrategy::resident)
      throw KernelError(std::string(c.op) +
                        ": softmax over n, resident strategy: needs 16-byte units and a column "
                        "group's chunks on the resident blocks (n = " + std::to_string(c.N) + ")");
  }
  if (p.strat == SeqStrategy::block) {
    block_groups(c, p, block_slots<OP, T, V, BWD>());
    a.tprc_shift = p.tpr_shift - p.cg_shift;
    const unsigned grid = grid_of((c.B * c.H) << p.cg_shift, c.op);
    if (pf) seq_block_kernel<OP, T, V, BWD, true><<<grid, kThreads, 0, c.stream>>>(a);
    else seq_block_kernel<OP, T, V, BWD, false><<<grid, kThreads, 0, c.stream>>>(a);
    OPBENCH_LAUNCH_CHECK();
    return;
  }
  // split (also resident where it does not apply)
  split_chunks(c, p, stats_slots<OP, T, V, BWD>(), tuning_1d().split_waves);
  if (c.ws_bytes < p.ws_floats * 4)
    throw KernelError(std::string(c.op) + ": workspace of " + std::to_string(c.ws_bytes) +
                      " bytes, softmax over n (split) needs " + std::to_string(p.ws_floats * 4));
  float* ws = static_cast<float*>(c.ws);
  a.nchunks = p.nchunks;
  a.stats = ws;
  a.partial = ws + size_t(BWD ? 2 : 1) * a.ncols;
  const unsigned sgrid = grid_of(c.B * hblks * p.nchunks, c.op);
  if (pf) seq_stats_kernel<OP, T, V, BWD, true><<<sgrid, kThreads, 0, c.stream>>>(a, p.stats_steps);
  else seq_stats_kernel<OP, T, V, BWD, false><<<sgrid, kThreads, 0, c.stream>>>(a, p.stats_steps);
  OPBENCH_LAUNCH_CHECK();
  seq_combine_kernel<BWD><<<grid_of((a.ncols + kThreads - 1) / kThreads, c.op), kThreads, 0,
                            c.stream>>>(a, ws);
  OPBENCH_LAUNCH_CHECK();
  launch_rows<OP, T, V, Act::softmax, Soft::seq, BWD>(grid_of(c.B * hblks * p.tiles_s, c.op),
                                                      c.stream, a, pf);
}

// Workspace bytes of softmax over n for this plan (0 for the other cases): the resident
// strategy's partials and counters, the split strategy's statistics and partials.
template <class OP, typename T, int V>
size_t seq_bytes(const Call& c, Plan p) {
  if (!c.seq || p.strat == SeqStrategy::block) return 0;
  if constexpr (V > 1) {
    if (p.strat == SeqStrategy::resident) {
      const ResPlan rp = c.bwd ? resident_plan<OP, T, V, true>(c, p) : resident_plan<OP, T, V, false>(c, p);
      if (rp.ok) return rp.ws_bytes;
    }
  }
  split_chunks(c, p, c.bwd ? stats_slots<OP, T, V, true>() : stats_slots<OP, T, V, false>(),
               tuning_1d().split_waves);
  return p.ws_floats * 4;
}

template <class OP, typename T>
void launch_t(const Call& c, const Plan& p, const Args& a, bool pf) {
  constexpr int kVec = 16 / sizeof(T);
  if (p.V == kVec) {
    if (c.bwd) launch_typed<OP, T, kVec, true>(c, p, a, pf);
    else launch_typed<OP, T, kVec, false>(c, p, a, pf);
  } else {
    if (c.bwd) launch_typed<OP, T, 1, true>(c, p, a, pf);
    else launch_typed<OP, T, 1, false>(c, p, a, pf);
  }
}

template <class OP, typename T>
size_t bytes_t(const Call& c, const Plan& p) {
  constexpr int kVec = 16 / sizeof(T);
  return p.V == kVec ? seq_bytes<OP, T, kVec>(c, p) : seq_bytes<OP, T, 1>(c, p);
}

// The op's choice for this call with Tuning1d's overrides applied. Batch rows (one angle
// evaluation per step serves several batches) only for the lrpe row kernels on the vector path
// (the scalar path keeps rows along s), by default only with at least two batches.
template <class OP>
RowChoice choice_for(const Call& c) {
  RowChoice rc = OP::choose(c.bwd, c.act, c.seq, large_call(c));
  const Tuning1d& tu = tuning_1d();
  if (tu.prefetch >= 0) rc.prefetch = tu.prefetch != 0;
  if (tu.max_steps > 0) rc.max_steps = tu.max_steps;
  const bool can = OP::kAngle && !c.seq && vector_plan(c);
  rc.batch_rows = can && (tu.batch_rows < 0 ? rc.batch_rows && c.B >= 2 : tu.batch_rows != 0);
  return rc;
}

template <class OP>
Plan plan_for(const Call& c, const RowChoice& rc) {
  return make_plan(c, rows_per_step<OP>(c.bwd, rc.batch_rows, !c.seq && c.act == Act::softmax,
                                        c.dtype == DType::f32),
                   rc.batch_rows, rc.max_steps, rc.res_lo, rc.res_hi);
}

template <class OP>
size_t plan_bytes(const Call& c) {
  const Plan p = plan_for<OP>(c, choice_for<OP>(c));
  switch (c.dtype) {
    case DType::f32: return bytes_t<OP, float>(c, p);
    case DType::f16: return bytes_t<OP, __half>(c, p);
    case DType::bf16: return bytes_t<OP, __nv_bfloat16>(c, p);
  }
  return 0;
}

// Workspace bytes a call needs (softmax over n with the split or resident strategy; 0
// otherwise). Does not depend on pointer alignment: the larger of the vector and the scalar plan.
template <class OP>
size_t workspace_bytes(Call c) {
  if (!c.seq) return 0;
  c.x = c.out = nullptr;  // aligned: the vector plan where the sizes allow it
  c.dout = nullptr;
  const size_t bv = plan_bytes<OP>(c);
  c.x = reinterpret_cast<const void*>(uintptr_t(1));  // misaligned: the scalar plan
  const size_t bs = plan_bytes<OP>(c);
  return bv > bs ? bv : bs;
}

template <class OP>
void launch(const Call& c) {
  check_common(c);
  const RowChoice rc = choice_for<OP>(c);
  const bool pf = rc.prefetch;
  const Plan p = plan_for<OP>(c, rc);
  const Args a = make_args(c, p);
  switch (c.dtype) {
    case DType::f32: launch_t<OP, float>(c, p, a, pf); break;
    case DType::f16: launch_t<OP, __half>(c, p, a, pf); break;
    case DType::bf16: launch_t<OP, __nv_bfloat16>(c, p, a, pf); break;
  }
}

}  // namespace opbench::kernels::rows1d

// tpa_decode host: a call's plan (tile, pipeline stages, head groups, shared-memory layout,
// chunks of m, fused merge) for one shape, dtype, strategy and options on the current device,
// the kernel it runs and the layout of bn's workspace. Made once per TpaPlan (launch.cu).
#pragma once
#include <cstddef>
#include <cstdint>

#include "kernels/common.h"
#include "kernels/tpa_decode.h"
#include "kernels/tpa_decode/kernels.h"

namespace opbench::kernels::tpa {

struct Plan {
  bool tc = false;
  int tt = 64, stages = 2;
  int HG = 1, ngroups = 1, NS = 1, threads = 256;
  bool a_full = false;
  int q_stride = 0, bk_stride = 0, bv_stride = 0, a_stride = 0, d_pad = 0, e_pad = 0;
  size_t aqt_off = 0, stage_off = 0, qin_off = 0, smem = 0;  // shared-memory layout (bytes)
  int64_t chunk_len = 1;
  int nchunks = 1;
  int fixed = 0;       // bn with tile counters: tiles a block takes in fixed order first
  bool fused = false;  // bn, tensor cores: the main kernel merges the partials (cooperative)
};

// The plan of a call: the strategy's tile x stages (the first that fits the shared memory),
// head groups and warps, the shared-memory layout, and for bn the chunks of m (the default
// fills the device) and whether the main kernel merges the partials. Throws KernelError when the
// shape needs more shared memory than a block can have.
Plan make_plan(const TpaShape& s, DType dt, TpaStrategy strat, const TpaOptions& opt);

// The main kernel of a plan.
KernelFn kernel_for(const Plan& p, DType dt);

// bn's workspace: the work counters first (tensor cores with dynamic tiles: one per batch and
// head group, 256-byte aligned: every call finds them at the same place), then the float32
// partials: o and l [b][chunks][h][partial_row(e)], m [b][chunks][h].
struct WorkspaceLayout {
  size_t ctr_bytes = 0, total = 0;
};
WorkspaceLayout workspace_layout(const Plan& p, const TpaShape& s, const TpaOptions& opt);

}  // namespace opbench::kernels::tpa

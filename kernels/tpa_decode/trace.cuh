// tpa_decode device side of the timeline trace: the stamp buffer and tpa_stamp (no-ops unless
// built with -DOPBENCH_TPA_TRACE). The fields and tpa_trace_take: trace.h.
#pragma once
#include <cstddef>

#include "kernels/tpa_decode/trace.h"

namespace opbench::kernels::tpa {

// Timeline trace (builds with -DOPBENCH_TPA_TRACE only; kernels_md_tpa_bench --trace): thread 0
// of each block stamps %globaltimer (ns) at fixed points into g_tpa_trace, slot = (batch, head
// group) x chunks + chunk (the tensor-core kernel) or kTpaTraceReduce + block (reduction).
#ifdef OPBENCH_TPA_TRACE
__device__ unsigned long long g_tpa_trace[kTpaTraceSlots * kTpaTraceFields];
__device__ __forceinline__ void tpa_stamp(int slot, int k) {
  if (threadIdx.x != 0 || slot >= kTpaTraceSlots) return;
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  g_tpa_trace[static_cast<size_t>(slot) * kTpaTraceFields + k] = t;
}
#else
__device__ __forceinline__ void tpa_stamp(int, int) {}
#endif

}  // namespace opbench::kernels::tpa

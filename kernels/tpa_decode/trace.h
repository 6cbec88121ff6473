// tpa_decode timeline trace, host side (a build with -DOPBENCH_TPA_TRACE only; used by
// kernels_md_tpa_bench --trace): the fields each block stamps (%globaltimer ns) and
// tpa_trace_take, which copies the stamps out. The device side: trace.cuh.
#pragma once
#include <vector>

namespace opbench::kernels {

// The main tensor-core kernel, at slot (batch, head group) x chunks + chunk:
enum TpaTraceField : int {
  kTrEntry,           // entry
  kTrQReady,          // q built and the other stages issued
  kTrFirstTile,       // its first tile landed
  kTrLoopDone,        // its loop done
  kTrSlicesMerged,    // its token slices merged
  kTrEnd,             // end
  kTrGroupComplete,   // fused merge: its group's partials complete
  kTrArrive,          // fused merge: its partial out, arriving
  kTrQInputs,         // the q inputs landed
  kTrQBuilt,          // q built
  kTrPartialWritten,  // fused merge: thread 0's share of the partial written
  kTpaTraceFields
};
// The reduction kernel, at slot kTpaTraceReduce + block:
enum TpaTraceReduceField : int { kTrRedEntry, kTrRedWaited /* after the PDL wait */, kTrRedEnd };
// tpa_trace_take copies it out and zeroes it (synchronizes).
constexpr int kTpaTraceSlots = 8192, kTpaTraceReduce = 4096;
#ifdef OPBENCH_TPA_TRACE
void tpa_trace_take(std::vector<unsigned long long>& out);
#endif

}  // namespace opbench::kernels

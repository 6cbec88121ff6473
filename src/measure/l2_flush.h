// Flushing the L2 between timed calls by reading a buffer larger than it. Torch-free.
//
// A memset of the buffer (what triton.testing.do_bench does with zero_()) evicts the timed
// call's data too, but leaves up to an L2's worth of dirty lines that the next call pays to
// write back (measured on the H100: 6-11 us on calls of 70-250 us,
// docs/findings/2026-11-25-l2-flush-h100.md).
// Reading the buffer instead leaves only clean lines: the next call starts with a cold L2 and
// pays only for its own bytes.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

namespace opbench {

// Reads `bytes` (a multiple of 16) at `buf` (16-byte aligned) on `stream` with every
// multiprocessor; writes nothing (a store of an impossible value keeps the loads). Throws
// std::runtime_error for a misaligned buffer or a failed CUDA call.
void l2_flush_read(void* buf, size_t bytes, cudaStream_t stream);

}  // namespace opbench

// The CPU threads a sweep times with (Timing::threads), pinned before anything runs.
#pragma once

namespace opbench {

// Pins LibTorch's intra-op and inter-op pools to `threads` and sets OMP_NUM_THREADS to it, which
// the exporter of the compiled packages inherits: Inductor writes the exporting process's thread
// count into each CPU package (`#pragma omp parallel num_threads(N)`), so a package runs with the
// count it was exported with, whatever the process that loads it has set (the package cache key
// holds the count). `threads` as resolve_device_defaults left it; 0 (or less) is LibTorch's own
// (nothing pinned). Returns the count to record (0: LibTorch's own).
int pin_threads(int threads);

}  // namespace opbench

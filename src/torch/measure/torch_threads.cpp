// Pinning LibTorch's thread pools (threads.hpp).
#include "torch/measure/threads.hpp"

#include <ATen/Parallel.h>
#include <c10/util/Exception.h>

#include <cstdlib>

#include "config/config.hpp"

namespace opbench {

int pin_threads(int threads) {
  if (threads <= 0) return 0;
  setenv("OMP_NUM_THREADS", std::to_string(threads).c_str(), 1);
  at::set_num_threads(threads);
  try {
    at::set_num_interop_threads(threads);
  } catch (const c10::Error&) {
    // the inter-op pool already started (a second sweep in one process): it keeps its size
  }
  return threads;
}

}  // namespace opbench

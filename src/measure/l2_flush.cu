// The read flush (l2_flush.h): a grid-stride read of 16-byte words, eight blocks of 512 threads
// per multiprocessor (1056 on an H100), the words XOR-ed into a value that is stored only if it equals a constant
// no buffer of ours holds there (so the compiler keeps the loads and nothing is written).
#include "measure/l2_flush.h"

#include <cstdint>
#include <stdexcept>
#include <string>

namespace opbench {
namespace {

__global__ void __launch_bounds__(512) l2_flush_read_kernel(const int4* p, size_t n, int* sink) {
  int acc = 0;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    const int4 v = __ldcg(p + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x7f3a9c11) *sink = acc;
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("l2_flush_read: ") + what + ": " + cudaGetErrorString(e));
}

}  // namespace

void l2_flush_read(void* buf, size_t bytes, cudaStream_t stream) {
  if (bytes < 16) return;
  if (reinterpret_cast<uintptr_t>(buf) % 16 != 0 || bytes % 16 != 0)
    throw std::runtime_error("l2_flush_read: the buffer must be 16-byte aligned and a multiple of 16 bytes");
  int dev = 0, sms = 0;
  check(cudaGetDevice(&dev), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "cudaDeviceGetAttribute");
  l2_flush_read_kernel<<<8 * sms, 512, 0, stream>>>(static_cast<const int4*>(buf), bytes / 16,
                                                   static_cast<int*>(buf));
  check(cudaGetLastError(), "launch");
}

}  // namespace opbench

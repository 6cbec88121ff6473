// tpa_decode host: the device queries of the plan (device.h), with their caches.
#include "kernels/tpa_decode/device.h"

#include <map>
#include <mutex>
#include <tuple>
#include <utility>

namespace opbench::kernels::tpa {

int device_attr(cudaDeviceAttr attr) {
  int dev = 0, v = 0;
  OPBENCH_CUDA_CHECK(cudaGetDevice(&dev));
  OPBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&v, attr, dev));
  return v;
}

int max_dynamic_smem(KernelFn fn) {
  cudaFuncAttributes fa{};
  OPBENCH_CUDA_CHECK(cudaFuncGetAttributes(&fa, reinterpret_cast<const void*>(fn)));
  return device_attr(cudaDevAttrMaxSharedMemoryPerBlockOptin) - static_cast<int>(fa.sharedSizeBytes);
}

void allow_max_smem(KernelFn fn) {
  static std::mutex mu;
  static std::map<std::pair<const void*, int>, bool> done;
  int dev = 0;
  OPBENCH_CUDA_CHECK(cudaGetDevice(&dev));
  std::lock_guard<std::mutex> lock(mu);
  const auto key = std::make_pair(reinterpret_cast<const void*>(fn), dev);
  if (done.count(key)) return;
  OPBENCH_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(fn),
                                          cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          max_dynamic_smem(fn)));
  done[key] = true;
}

int blocks_per_sm(KernelFn fn, int threads, size_t smem) {
  allow_max_smem(fn);
  static std::mutex mu;
  static std::map<std::tuple<const void*, int, size_t, int>, int> cache;
  int dev = 0;
  OPBENCH_CUDA_CHECK(cudaGetDevice(&dev));
  const auto key = std::make_tuple(reinterpret_cast<const void*>(fn), threads, smem, dev);
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  int n = 0;
  OPBENCH_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, fn, threads, smem));
  cache[key] = n;
  return n;
}

}  // namespace opbench::kernels::tpa

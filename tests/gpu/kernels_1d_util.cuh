// Helpers shared by kernels_1d_test.cu and kernels_1d_bench.cu (no torch): device buffers,
// a seeded device-side fill with normal-like values, storage <-> double conversion on the host.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/common.h"

namespace k1d {

using opbench::kernels::DType;

inline void check(cudaError_t e, const char* what, int line) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "CUDA error at line %d: %s: %s\n", line, what, cudaGetErrorString(e));
    std::exit(3);
  }
}
#define K1D_CHECK(call) ::k1d::check((call), #call, __LINE__)

inline bool have_gpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

inline int esize(DType t) { return opbench::kernels::dtype_size(t); }
inline const char* dname(DType t) {
  return t == DType::f32 ? "fp32" : t == DType::f16 ? "fp16" : "bf16";
}

// A growable device buffer.
struct DevBuf {
  void* p = nullptr;
  size_t cap = 0;
  void* get(size_t bytes) {
    if (bytes > cap) {
      if (p) K1D_CHECK(cudaFree(p));
      p = nullptr;
      K1D_CHECK(cudaMalloc(&p, bytes));
      cap = bytes;
    }
    return p;
  }
  ~DevBuf() {
    if (p) cudaFree(p);
  }
};

// Normal-like value (mean 0, variance 1, in [-3, 3]) of element i under `seed`: a splitmix64
// hash, three 21-bit uniforms, their centred and scaled sum (exact in float).
__host__ __device__ inline float rnd(uint64_t seed, uint64_t i) {
  uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  const double u = double(z & 0x1FFFFF) + double((z >> 21) & 0x1FFFFF) + double((z >> 42) & 0x1FFFFF);
  return float((u * 0x1p-21 - 1.5) * 2.0);
}

template <typename T>
__global__ void fill_kernel(T* p, int64_t n, uint64_t seed) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const float v = rnd(seed, uint64_t(i));
    if constexpr (sizeof(T) == 4) p[i] = v;
    else if constexpr (std::is_same_v<T, __half>) p[i] = __float2half_rn(v);
    else p[i] = __float2bfloat16_rn(v);
  }
}

inline void fill(void* p, DType t, int64_t n, uint64_t seed) {
  const int blocks = 1024;
  if (t == DType::f32) fill_kernel<float><<<blocks, 256>>>(static_cast<float*>(p), n, seed);
  else if (t == DType::f16) fill_kernel<__half><<<blocks, 256>>>(static_cast<__half*>(p), n, seed);
  else fill_kernel<__nv_bfloat16><<<blocks, 256>>>(static_cast<__nv_bfloat16*>(p), n, seed);
  K1D_CHECK(cudaGetLastError());
}

// Storage element (raw bytes) -> double.
inline double to_double(const unsigned char* p, DType t) {
  if (t == DType::f32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, p, 2);
  if (t == DType::bf16) {
    const uint32_t u = uint32_t(h) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  const int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  double v;
  if (e == 0) v = std::ldexp(double(m), -24);
  else if (e == 31) v = m ? NAN : INFINITY;
  else v = std::ldexp(double(1024 + m), e - 25);
  return s ? -v : v;
}

// Copy `rows` rows of `cols` elements, `stride` elements apart, from device to doubles.
inline void download(std::vector<double>& dst, const void* src, DType t, int64_t rows,
                     int64_t cols, int64_t stride) {
  const size_t es = size_t(esize(t));
  std::vector<unsigned char> raw(size_t(rows * cols) * es);
  K1D_CHECK(cudaMemcpy2D(raw.data(), cols * es, src, stride * es, cols * es, rows,
                         cudaMemcpyDeviceToHost));
  dst.resize(size_t(rows * cols));
  for (size_t i = 0; i < dst.size(); ++i) dst[i] = to_double(raw.data() + i * es, t);
}

// theta (h, d) of the benchmarks: rotary frequencies 10000^(-k / d), the same for every head.
inline std::vector<float> rotary_theta(int64_t h, int64_t d) {
  std::vector<float> th(size_t(h * d));
  for (int64_t i = 0; i < h; ++i)
    for (int64_t k = 0; k < d; ++k) th[size_t(i * d + k)] = float(std::pow(10000.0, -double(k) / d));
  return th;
}

}  // namespace k1d

// An experiment, not part of the build: act's softmax over the sequence (x of S slabs (n, d),
// bf16, each column normalised over n) from thread-block clusters. A cluster of C blocks takes
// a column group of W bytes of a slab; each block copies n / C rows of it into shared memory
// (cp.async), reduces their column statistics within warps and over warps, the cluster merges
// the blocks' statistics through distributed shared memory, and each block writes its rows'
// outputs from shared memory: x read once. `Variant`: one group per cluster; `PVariant`:
// persistent clusters walking the groups with the next groups' loads in flight (STAGES
// buffers). Checked against a float64 column softmax; timed with a 256 MiB write between
// samples (median of 25), beside a device-to-device copy of x (the one-pass floor).
//   nvcc -O3 -arch=sm_90a -std=c++17 experiments/seq_cluster.cu -o seq_cluster && ./seq_cluster
#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <map>

namespace cg = cooperative_groups;
#define CK(...) do { cudaError_t e = (__VA_ARGS__); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)

using T = __nv_bfloat16;
constexpr int kThreads = 256;

__device__ __forceinline__ void cp16(void* s, const void* g) {
  unsigned a = (unsigned)__cvta_generic_to_shared(s);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(a), "l"(g));
}
__device__ __forceinline__ void st_cs(void* p, uint4 v) {
  asm volatile("st.global.cs.v4.u32 [%0], {%1,%2,%3,%4};\n" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w));
}
__device__ __forceinline__ void merge(float& m, float& l, float m2, float l2) {
  float mm = fmaxf(m, m2);
  l = (m == -INFINITY ? 0.f : l * __expf(m - mm)) + (m2 == -INFINITY ? 0.f : l2 * __expf(m2 - mm));
  m = mm;
}

template <int C, int W>
__global__ void __launch_bounds__(kThreads) seq_cluster(const T* __restrict__ x, T* __restrict__ y, int n, int d, int rpb) {
  constexpr int TPR = W / 16, RPP = kThreads / TPR, COLS = W / 2, WARPS = kThreads / 32;
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = (int)cluster.block_rank();
  const int group = blockIdx.x / C;
  const int gps = d * 2 / W;
  const int slab = group / gps, cgi = group % gps;
  extern __shared__ __align__(16) unsigned char smem[];
  float2* part = reinterpret_cast<float2*>(smem);                 // [COLS] this block's (m, l)
  float2* fin = part + COLS;                                       // [COLS] the group's
  float2* wpart = fin + COLS;                                      // [WARPS][COLS]
  uint4* data = reinterpret_cast<uint4*>(smem + 1024 + WARPS * COLS * 8);
  const int row0 = rank * rpb;
  const int rows = max(0, min(rpb, n - row0));
  const size_t base = (size_t)slab * n * d + (size_t)row0 * d + cgi * COLS;
  const int sub = threadIdx.x % TPR, r0 = threadIdx.x / TPR;
  for (int i = r0; i < rows; i += RPP) cp16(&data[i * TPR + sub], x + base + (size_t)i * d + sub * 8);
  asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;\n" ::: "memory");
  float m[8], l[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) m[j] = -INFINITY, l[j] = 0.f;
  for (int i = r0; i < rows; i += RPP) {
    uint4 u = data[i * TPR + sub];
    const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&u);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      float2 f = __bfloat1622float2(h[j]);
      m[2 * j] = fmaxf(m[2 * j], f.x);
      m[2 * j + 1] = fmaxf(m[2 * j + 1], f.y);
    }
  }
  for (int i = r0; i < rows; i += RPP) {
    uint4 u = data[i * TPR + sub];
    const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&u);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      float2 f = __bfloat1622float2(h[j]);
      l[2 * j] += __expf(f.x - m[2 * j]);
      l[2 * j + 1] += __expf(f.y - m[2 * j + 1]);
    }
  }
#pragma unroll
  for (int off = TPR; off < 32; off *= 2)
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      float m2 = __shfl_xor_sync(0xffffffffu, m[j], off), l2 = __shfl_xor_sync(0xffffffffu, l[j], off);
      merge(m[j], l[j], m2, l2);
    }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane < TPR)
#pragma unroll
    for (int j = 0; j < 8; ++j) wpart[warp * COLS + lane * 8 + j] = make_float2(m[j], l[j]);
  __syncthreads();
  if (threadIdx.x < COLS) {
    float mm = -INFINITY, ll = 0.f;
    for (int w = 0; w < WARPS; ++w) merge(mm, ll, wpart[w * COLS + threadIdx.x].x, wpart[w * COLS + threadIdx.x].y);
    part[threadIdx.x] = make_float2(mm, ll);
  }
  cluster.sync();
  // thread t: column t / C, rank t % C
  for (int t = threadIdx.x; t < COLS * C; t += kThreads) {
    const int col = t / C, rk = t % C;
    float2 p = cluster.map_shared_rank(part, rk)[col];
    float mm = p.x, ll = p.y;
#pragma unroll
    for (int off = 1; off < C; off *= 2) {
      float m2 = __shfl_xor_sync(0xffffffffu, mm, off), l2 = __shfl_xor_sync(0xffffffffu, ll, off);
      merge(mm, ll, m2, l2);
    }
    if (rk == 0) fin[col] = make_float2(mm, 1.f / ll);
  }
  asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
  __syncthreads();
  float inv[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) { float2 f = fin[sub * 8 + j]; m[j] = f.x; inv[j] = f.y; }
  for (int i = r0; i < rows; i += RPP) {
    uint4 u = data[i * TPR + sub];
    __nv_bfloat162* h = reinterpret_cast<__nv_bfloat162*>(&u);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      float2 f = __bfloat1622float2(h[j]);
      h[j] = __floats2bfloat162_rn(__expf(f.x - m[2 * j]) * inv[2 * j], __expf(f.y - m[2 * j + 1]) * inv[2 * j + 1]);
    }
    st_cs(y + base + (size_t)i * d + sub * 8, u);
  }
  asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}


// persistent: each cluster walks groups cid, cid + nclusters, ...; STAGES buffers, loads of the
// next STAGES - 1 groups in flight while a group's statistics and outputs are made.
template <int C, int W, int STAGES, int NT>
__global__ void __launch_bounds__(NT) seq_cluster_p(const T* __restrict__ x, T* __restrict__ y, int n, int d, int rpb,
                                                          int ngroups, int nclusters) {
  constexpr int TPR = W / 16, RPP = NT / TPR, COLS = W / 2, WARPS = NT / 32;
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = (int)cluster.block_rank();
  const int cid = blockIdx.x / C;
  const int gps = d * 2 / W;
  extern __shared__ __align__(16) unsigned char smem[];
  float2* part = reinterpret_cast<float2*>(smem);  // [2][COLS]
  float2* fin = part + 2 * COLS;                   // [COLS]
  float2* wpart = fin + COLS;                      // [WARPS][COLS]
  uint4* bufs = reinterpret_cast<uint4*>(smem + 2048 + WARPS * COLS * 8);
  const size_t bufsz = (size_t)rpb * TPR;
  const int row0 = rank * rpb;
  const int rows = max(0, min(rpb, n - row0));
  const int sub = threadIdx.x % TPR, r0 = threadIdx.x / TPR;
  auto base = [&](int g) { return (size_t)(g / gps) * n * d + (size_t)row0 * d + (g % gps) * COLS + sub * 8; };
  auto load = [&](int g, uint4* buf) {
    if (g < ngroups) {
      const T* src = x + base(g);
      for (int i = r0; i < rows; i += RPP) cp16(&buf[i * TPR + sub], src + (size_t)i * d);
    }
    asm volatile("cp.async.commit_group;\n" ::: "memory");
  };
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) load(cid + s * nclusters, bufs + s * bufsz);
  int it = 0;
  for (int g = cid; g < ngroups; g += nclusters, ++it) {
    uint4* cur = bufs + (it % STAGES) * bufsz;
    asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2) : "memory");
    load(g + (STAGES - 1) * nclusters, bufs + ((it + STAGES - 1) % STAGES) * bufsz);
    float m[8], l[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) m[j] = -INFINITY, l[j] = 0.f;
    for (int i = r0; i < rows; i += RPP) {
      uint4 u = cur[i * TPR + sub];
      const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&u);
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        float2 f = __bfloat1622float2(h[j]);
        m[2 * j] = fmaxf(m[2 * j], f.x);
        m[2 * j + 1] = fmaxf(m[2 * j + 1], f.y);
      }
    }
    for (int i = r0; i < rows; i += RPP) {
      uint4 u = cur[i * TPR + sub];
      const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&u);
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        float2 f = __bfloat1622float2(h[j]);
        l[2 * j] += __expf(f.x - m[2 * j]);
        l[2 * j + 1] += __expf(f.y - m[2 * j + 1]);
      }
    }
#pragma unroll
    for (int off = TPR; off < 32; off *= 2)
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        float m2 = __shfl_xor_sync(0xffffffffu, m[j], off), l2 = __shfl_xor_sync(0xffffffffu, l[j], off);
        merge(m[j], l[j], m2, l2);
      }
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane < TPR)
#pragma unroll
      for (int j = 0; j < 8; ++j) wpart[warp * COLS + lane * 8 + j] = make_float2(m[j], l[j]);
    __syncthreads();
    float2* mine = part + (it & 1) * COLS;
    if (threadIdx.x < COLS) {
      float mm = -INFINITY, ll = 0.f;
      for (int w = 0; w < WARPS; ++w) merge(mm, ll, wpart[w * COLS + threadIdx.x].x, wpart[w * COLS + threadIdx.x].y);
      mine[threadIdx.x] = make_float2(mm, ll);
    }
    cluster.sync();
    for (int t = threadIdx.x; t < COLS * C; t += NT) {
      const int col = t / C, rk = t % C;
      float2 p = cluster.map_shared_rank(mine, rk)[col];
      float mm = p.x, ll = p.y;
#pragma unroll
      for (int off = 1; off < C; off *= 2) {
        float m2 = __shfl_xor_sync(0xffffffffu, mm, off), l2 = __shfl_xor_sync(0xffffffffu, ll, off);
        merge(mm, ll, m2, l2);
      }
      if (rk == 0) fin[col] = make_float2(mm, 1.f / ll);
    }
    __syncthreads();
    float inv[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) { float2 f = fin[sub * 8 + j]; m[j] = f.x; inv[j] = f.y; }
    T* dst = y + base(g);
    for (int i = r0; i < rows; i += RPP) {
      uint4 u = cur[i * TPR + sub];
      __nv_bfloat162* h = reinterpret_cast<__nv_bfloat162*>(&u);
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        float2 f = __bfloat1622float2(h[j]);
        h[j] = __floats2bfloat162_rn(__expf(f.x - m[2 * j]) * inv[2 * j], __expf(f.y - m[2 * j + 1]) * inv[2 * j + 1]);
      }
      st_cs(dst + (size_t)i * d, u);
    }
  }
  cluster.sync();
}

__global__ void naive(const T* x, float* y, int n, int d, int S) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= S * d) return;
  int s = c / d, k = c % d;
  const T* p = x + (size_t)s * n * d + k;
  float m = -INFINITY;
  for (int i = 0; i < n; ++i) m = fmaxf(m, __bfloat162float(p[(size_t)i * d]));
  double l = 0;
  for (int i = 0; i < n; ++i) l += exp((double)__bfloat162float(p[(size_t)i * d]) - m);
  for (int i = 0; i < n; ++i) y[(size_t)s * n * d + (size_t)i * d + k] = (float)(exp((double)__bfloat162float(p[(size_t)i * d]) - m) / l);
}

__global__ void fill(T* x, size_t N, unsigned seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < N; i += (size_t)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)(i * 2654435761u) ^ seed;
    h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
    x[i] = __float2bfloat16(((h & 0xffff) / 65536.f - 0.5f) * 8.f);
  }
}

template <int C, int W>
struct Variant {
  static size_t smem(int rpb) { return 1024 + (kThreads / 32) * (W / 2) * 8 + (size_t)rpb * W; }
  static cudaError_t launch(const T* x, T* y, int S, int n, int d, cudaStream_t st) {
    int rpb = (n + C - 1) / C;
    size_t sm = smem(rpb);
    auto k = seq_cluster<C, W>;
    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sm);
    if (C > 8) cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(C * S * (d * 2 / W));
    cfg.blockDim = dim3(kThreads);
    cfg.dynamicSmemBytes = sm;
    cfg.stream = st;
    cudaLaunchAttribute a[1];
    a[0].id = cudaLaunchAttributeClusterDimension;
    a[0].val.clusterDim.x = C; a[0].val.clusterDim.y = 1; a[0].val.clusterDim.z = 1;
    cfg.attrs = a; cfg.numAttrs = 1;
    return cudaLaunchKernelEx(&cfg, k, x, y, n, d, rpb);
  }
  static int clusters(int n) {
    int rpb = (n + C - 1) / C; size_t sm = smem(rpb);
    auto k = seq_cluster<C, W>;
    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sm);
    if (C > 8) cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    cudaLaunchConfig_t cfg = {}; cfg.gridDim = dim3(C * 64); cfg.blockDim = dim3(kThreads); cfg.dynamicSmemBytes = sm;
    cudaLaunchAttribute a[1]; a[0].id = cudaLaunchAttributeClusterDimension; a[0].val.clusterDim.x = C; a[0].val.clusterDim.y = 1; a[0].val.clusterDim.z = 1;
    cfg.attrs = a; cfg.numAttrs = 1;
    int c = -1; cudaError_t e = cudaOccupancyMaxActiveClusters(&c, k, &cfg);
    if (e != cudaSuccess) { printf("occ: %s\n", cudaGetErrorString(e)); cudaGetLastError(); }
    return c;
  }
};


template <int C, int W, int STAGES, int NT = 256>
struct PVariant {
  static size_t smem(int rpb) { return 2048 + (NT / 32) * (W / 2) * 8 + (size_t)STAGES * rpb * W; }
  static cudaLaunchConfig_t config(int blocks, size_t sm, cudaStream_t st, cudaLaunchAttribute* a) {
    auto k = seq_cluster_p<C, W, STAGES, NT>;
    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sm);
    if (C > 8) cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(blocks); cfg.blockDim = dim3(NT); cfg.dynamicSmemBytes = sm; cfg.stream = st;
    a[0].id = cudaLaunchAttributeClusterDimension;
    a[0].val.clusterDim.x = C; a[0].val.clusterDim.y = 1; a[0].val.clusterDim.z = 1;
    cfg.attrs = a; cfg.numAttrs = 1;
    return cfg;
  }
  static int clusters(int n) {
    int rpb = (n + C - 1) / C; size_t sm = smem(rpb);
    if (sm > 227 * 1024) return 0;
    cudaLaunchAttribute a[1];
    cudaLaunchConfig_t cfg = config(C * 64, sm, 0, a);
    int c = -1; cudaError_t e = cudaOccupancyMaxActiveClusters(&c, seq_cluster_p<C, W, STAGES, NT>, &cfg);
    if (e != cudaSuccess) { printf("occ: %s\n", cudaGetErrorString(e)); cudaGetLastError(); return 0; }
    return c;
  }
  static cudaError_t launch(const T* x, T* y, int S, int n, int d, cudaStream_t st) {
    static std::map<int, int> cache;
    if (!cache.count(n)) cache[n] = clusters(n);
    const int nc = cache[n];
    int rpb = (n + C - 1) / C; size_t sm = smem(rpb);
    int ngroups = S * (d * 2 / W);
    int ncl = std::min(nc, ngroups);
    cudaLaunchAttribute a[1];
    cudaLaunchConfig_t cfg = config(C * ncl, sm, st, a);
    return cudaLaunchKernelEx(&cfg, seq_cluster_p<C, W, STAGES, NT>, x, y, n, d, rpb, ngroups, ncl);
  }
};

static float median(std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

template <class F>
float timeit(F f, void* flush, size_t fb, int reps = 25) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> t;
  f(); CK(cudaDeviceSynchronize());
  for (int i = 0; i < reps; ++i) {
    cudaMemsetAsync(flush, i, fb);
    cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b); t.push_back(ms);
  }
  CK(cudaGetLastError());
  return median(t);
}

template <class V>
void check(int S, int n, int d) {
  size_t N = (size_t)S * n * d;
  T *x, *y; float* r;
  CK(cudaMalloc(&x, N * 2)); CK(cudaMalloc(&y, N * 2)); CK(cudaMalloc(&r, N * 4));
  fill<<<1024, 256>>>(x, N, 77 + n);
  naive<<<(S * d + 127) / 128, 128>>>(x, r, n, d, S);
  CK(V::launch(x, y, S, n, d, 0));
  CK(cudaDeviceSynchronize());
  std::vector<T> hy(N); std::vector<float> hr(N);
  cudaMemcpy(hy.data(), y, N * 2, cudaMemcpyDeviceToHost); cudaMemcpy(hr.data(), r, N * 4, cudaMemcpyDeviceToHost);
  double num = 0, den = 0, mx = 0, mr = 0;
  for (size_t i = 0; i < N; ++i) { double a = __bfloat162float(hy[i]), b = hr[i]; num += (a - b) * (a - b); den += b * b; mx = std::max(mx, fabs(a - b)); mr = std::max(mr, fabs(b)); }
  printf("check S=%d n=%d d=%d: norm err %.3e max err %.3e\n", S, n, d, sqrt(num / den), mx / mr);
  cudaFree(x); cudaFree(y); cudaFree(r);
}

int main(int argc, char** argv) {
  const int S = 144, d = 128;
  check<Variant<16, 32>>(3, 32768, 128); check<PVariant<16, 32, 2>>(144, 32768, 128); check<PVariant<16, 32, 2>>(2, 1000, 64);
  check<PVariant<8, 32, 3>>(5, 4097, 128); check<PVariant<16, 32, 3>>(7, 16384, 128); check<PVariant<16, 32, 3, 1024>>(6, 32768, 128); check<PVariant<16, 64, 3, 512>>(4, 3001, 128);
  size_t fb = 256u << 20; void* flush; CK(cudaMalloc(&flush, fb));
  for (int n : {32768, 16384}) {
    size_t N = (size_t)S * n * d;
    T *x, *y; CK(cudaMalloc(&x, N * 2)); CK(cudaMalloc(&y, N * 2));
    fill<<<1024, 256>>>(x, N, 5);
    float cp = timeit([&] { cudaMemcpyAsync(y, x, N * 2, cudaMemcpyDeviceToDevice); }, flush, fb);
    double bw = 2.0 * N * 2 / (cp * 1e-3) / 1e9;
    printf("n=%d |x|=%.3f GB copy %.4f ms (%.0f GB/s)\n", n, N * 2 / 1e9, cp, bw);
    auto run = [&](const char* name, auto launch, int clusters) {
      float t = timeit([&] { launch(x, y, S, n, d, (cudaStream_t)0); }, flush, fb);
      printf("  %-10s %.4f ms  %.1f%% of copy  (max active clusters %d)\n", name, t, 100 * cp / t, clusters);
    };
    run("C16 W32", Variant<16, 32>::launch, Variant<16, 32>::clusters(n));
    run("P16 W32 s2", PVariant<16, 32, 2>::launch, PVariant<16, 32, 2>::clusters(n));
    run("P16 W32 s2 t512", PVariant<16, 32, 2, 512>::launch, PVariant<16, 32, 2, 512>::clusters(n));
    run("P16 W32 s3", PVariant<16, 32, 3>::launch, PVariant<16, 32, 3>::clusters(n));
    run("P16 W32 s3 t512", PVariant<16, 32, 3, 512>::launch, PVariant<16, 32, 3, 512>::clusters(n));
    run("P16 W32 s3 t1024", PVariant<16, 32, 3, 1024>::launch, PVariant<16, 32, 3, 1024>::clusters(n));
    if (n <= 16384) run("P16 W64 s3 t512", PVariant<16, 64, 3, 512>::launch, PVariant<16, 64, 3, 512>::clusters(n));
    cudaFree(x); cudaFree(y);
  }
  return 0;
}

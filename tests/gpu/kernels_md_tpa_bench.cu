// Benchmark of kernels/lrpe_cosine_md and kernels/tpa_decode against their memory floors.
// Standalone (CUDA runtime only).
// Usage: kernels_md_tpa_bench [results.csv] [--quick] [--only md|tpa] [--md-small] [--profile] [--trace]
//   --quick    2d n=128 (md) and m=32768 (tpa) only
//   --md-small md's small calls (the reference sweeps' smallest sizes) with 1 to 12 batches per
//              thread, instead of the large shapes
//   --profile  one untimed-warm-up-free call per configuration (for ncu: -k regex:tpa_)
//   --trace    tpa: a timeline per configuration (block starts, q ready, first tile, loop end,
//              reduction) from %globaltimer stamps; needs a build with -DOPBENCH_TPA_TRACE
//              (tests/gpu/build_kernels.sh makes kernels_md_tpa_trace)
//
// Method: CUDA events around each call, a 256 MiB L2 flush between samples (bench_timer.cuh: a
// read, or a memset with OPBENCH_FLUSH=write), the median of many samples (p10/p90 printed as the spread). Peak bandwidth first: a 2 GiB
// device-to-device cudaMemcpy, read + write counted. Floors (bytes / peak):
//   lrpe_cosine_md (act none) fwd: read x once + write 2|x|; bwd: read do (2|x|) + write dx (|x|)
//   tpa_decode: |ak| + |av| + |bk| + |bv|
// Inputs are random (a hash of the index), never zeros.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/lrpe_cosine_md.h"
#include "kernels/tpa_decode.h"
#include "kernels/tpa_decode/trace.h"
#include "bench_timer.cuh"

namespace K = opbench::kernels;
using K::Act;
using K::DType;

#define CK(call)                                                                           \
  do {                                                                                     \
    cudaError_t e_ = (call);                                                               \
    if (e_ != cudaSuccess) {                                                               \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(e_));              \
      std::exit(3);                                                                        \
    }                                                                                      \
  } while (0)

namespace {

__global__ void fill_bf16(__nv_bfloat16* p, size_t n, uint32_t seed, float amp) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 2654435761u ^ seed;
    h ^= h >> 15; h *= 2246822519u; h ^= h >> 13; h *= 3266489917u; h ^= h >> 16;
    p[i] = __float2bfloat16((static_cast<float>(h) * 2.3283064e-10f * 2.f - 1.f) * amp);
  }
}

void fill(void* p, size_t n, uint32_t seed, float amp = 1.f) {
  fill_bf16<<<1024, 256>>>(static_cast<__nv_bfloat16*>(p), n, seed, amp);
  CK(cudaGetLastError());
}

__global__ void empty_kernel() {}
// Spins for `ns` nanoseconds of the global timer.
__device__ void spin_for(long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); while (t - t0 < static_cast<unsigned long long>(ns));
}
// Lets its dependents launch, then spins `ns` (0: empty).
__global__ void pdl_primary_kernel(long long ns) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
  if (ns > 0) spin_for(ns);
}
// Spins `ns` (0: empty), then waits for the kernel it depends on.
__global__ void pdl_secondary_kernel(long long ns) {
  if (ns > 0) spin_for(ns);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}
// Two kernels of `blocks` x `threads` each spinning `ns`, the second launched plain (attrs 0), as
// a programmatic dependent (1) or as a cooperative programmatic dependent (2).
void kernel_pair(unsigned blocks, unsigned threads, long long ns, unsigned attrs) {
  pdl_primary_kernel<<<blocks, threads>>>(ns);
  CK(cudaGetLastError());
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(blocks);
  cfg.blockDim = dim3(threads);
  cudaLaunchAttribute attr[2];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  attr[1].id = cudaLaunchAttributeCooperative;
  attr[1].val.cooperative = 1;
  cfg.attrs = attr;
  cfg.numAttrs = attrs;
  CK(cudaLaunchKernelEx(&cfg, pdl_secondary_kernel, ns));
}
// An empty kernel of 256 blocks, then an empty dependent one launched with PDL (the shape of
// tpa_decode's bn call without its work).
void pdl_pair() { kernel_pair(256, 256, 0, 1); }
// Two kernels of 8 blocks spinning 10 us each, the second launched plain (mode 0), as a
// programmatic dependent (1), or as a cooperative programmatic dependent (2): where the
// dependent overlaps the first, the pair takes ~10 us less.
void spin_pair(int mode) { kernel_pair(8, 32, 10000, static_cast<unsigned>(mode)); }

bool trace = false;  // --trace (a build with -DOPBENCH_TPA_TRACE): tpa timelines

#ifdef OPBENCH_TPA_TRACE
// The timeline of one configuration: 15 samples (flushed as timed), each traced; per sample, us
// after the first main block started; the medians over samples are printed. `chunks` blocks per
// (batch, head group) (consecutive slots) share a group: the earliest and latest of the groups'
// last loop ends show whether the tail is between groups (one work counter each) or within.
void trace_tpa(opbench::bench::FlushTimer& timer, const std::string& what, int64_t chunks,
               const std::function<void()>& f) {
  namespace K = opbench::kernels;
  // Per sample, one value of each column; the medians over the samples are printed.
  enum Col : int {
    kEvent, kStarts, kQInputs, kQBuilt, kQReady, kTile0, kLoopMin, kLoopMed, kLoopMax,
    kGroupMin, kGroupMax, kMerged, kArrive, kComplete, kEnd, kRedEntry, kRedWaited, kRedEnd,
    // fused merge, each block's own steps (median / max over the blocks): loop -> thread 0's share
    // of the partial written -> arrival (the block's partial out) -> group complete -> end
    kWriteMed, kWriteMax, kOutMed, kOutMax, kWaitMed, kWaitMax, kMergeMed, kMergeMax, kFused,
    kCols
  };
  std::vector<unsigned long long> tr;
  K::tpa_trace_take(tr);  // clear
  const int n = 15;
  std::vector<std::vector<double>> cols(kCols);
  for (int i = 0; i < n; ++i) {
    const double ev = timer.sample(f, i) * 1e3;
    K::tpa_trace_take(tr);
    auto field = [&](int slot, int k) { return tr[static_cast<size_t>(slot) * K::kTpaTraceFields + k]; };
    unsigned long long t0 = ~0ull;
    int nm = 0;
    for (int sl = 0; sl < K::kTpaTraceReduce; ++sl)
      if (field(sl, K::kTrEntry)) { t0 = std::min(t0, field(sl, K::kTrEntry)); ++nm; }
    if (nm == 0) { std::printf("trace %s: no stamps (not a trace build?)\n", what.c_str()); return; }
    auto us = [&](unsigned long long t) { return (static_cast<double>(t) - static_cast<double>(t0)) / 1e3; };
    // us after the block's own entry
    auto since_entry = [&](int sl, int k) { return us(field(sl, k)) - us(field(sl, K::kTrEntry)); };
    std::vector<double> start, q, qin, qb, first, loop, merged, end, group_end, ready, arrive;
    std::vector<double> d_write, d_out, d_wait, d_merge;
    for (int sl = 0; sl < K::kTpaTraceReduce; ++sl) {
      if (!field(sl, K::kTrEntry)) continue;
      const size_t g = static_cast<size_t>(sl / chunks);
      if (group_end.size() <= g) group_end.resize(g + 1, 0.0);
      group_end[g] = std::max(group_end[g], us(field(sl, K::kTrLoopDone)));
      start.push_back(us(field(sl, K::kTrEntry)));
      q.push_back(since_entry(sl, K::kTrQReady));
      first.push_back(since_entry(sl, K::kTrFirstTile));
      loop.push_back(us(field(sl, K::kTrLoopDone)));
      merged.push_back(us(field(sl, K::kTrSlicesMerged)) - us(field(sl, K::kTrLoopDone)));
      end.push_back(us(field(sl, K::kTrEnd)));
      if (field(sl, K::kTrGroupComplete)) ready.push_back(us(field(sl, K::kTrGroupComplete)));
      if (field(sl, K::kTrArrive)) arrive.push_back(us(field(sl, K::kTrArrive)));
      if (field(sl, K::kTrQInputs)) qin.push_back(since_entry(sl, K::kTrQInputs));
      if (field(sl, K::kTrQBuilt)) qb.push_back(since_entry(sl, K::kTrQBuilt));
      if (field(sl, K::kTrGroupComplete) && field(sl, K::kTrArrive) && field(sl, K::kTrPartialWritten)) {
        d_write.push_back(us(field(sl, K::kTrPartialWritten)) - us(field(sl, K::kTrLoopDone)));
        d_out.push_back(us(field(sl, K::kTrArrive)) - us(field(sl, K::kTrPartialWritten)));
        d_wait.push_back(us(field(sl, K::kTrGroupComplete)) - us(field(sl, K::kTrArrive)));
        d_merge.push_back(us(field(sl, K::kTrEnd)) - us(field(sl, K::kTrGroupComplete)));
      }
    }
    double r0 = 1e30, r1 = 0, r2 = 0;
    int nr = 0;
    for (int sl = K::kTpaTraceReduce; sl < K::kTpaTraceSlots; ++sl) {
      if (!field(sl, K::kTrRedEntry)) continue;
      ++nr;
      r0 = std::min(r0, us(field(sl, K::kTrRedEntry)));
      r1 = std::max(r1, us(field(sl, K::kTrRedWaited)));
      r2 = std::max(r2, us(field(sl, K::kTrRedEnd)));
    }
    // statistics of a list, 0 for an empty one
    auto med = [](std::vector<double> v) { std::sort(v.begin(), v.end()); return v.empty() ? 0 : v[v.size() / 2]; };
    auto mx = [](const std::vector<double>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); };
    auto mn = [](const std::vector<double>& v) { return v.empty() ? 0 : *std::min_element(v.begin(), v.end()); };
    double vals[kCols];
    vals[kEvent] = ev; vals[kStarts] = mx(start); vals[kQInputs] = med(qin); vals[kQBuilt] = med(qb);
    vals[kQReady] = med(q); vals[kTile0] = med(first);
    vals[kLoopMin] = mn(loop); vals[kLoopMed] = med(loop); vals[kLoopMax] = mx(loop);
    vals[kGroupMin] = mn(group_end); vals[kGroupMax] = mx(group_end); vals[kMerged] = med(merged);
    vals[kArrive] = mx(arrive); vals[kComplete] = mx(ready); vals[kEnd] = mx(end);
    vals[kRedEntry] = nr ? r0 : 0; vals[kRedWaited] = r1; vals[kRedEnd] = r2;
    vals[kWriteMed] = med(d_write); vals[kWriteMax] = mx(d_write); vals[kOutMed] = med(d_out);
    vals[kOutMax] = mx(d_out); vals[kWaitMed] = med(d_wait); vals[kWaitMax] = mx(d_wait);
    vals[kMergeMed] = med(d_merge); vals[kMergeMax] = mx(d_merge); vals[kFused] = d_write.empty() ? 0 : 1;
    for (int k = 0; k < kCols; ++k) cols[k].push_back(vals[k]);
  }
  for (auto& c : cols) std::sort(c.begin(), c.end());
  auto m = [&](int k) { return cols[k][n / 2]; };
  std::printf("trace %-44s event %.1f | starts <=%.1f | q inputs +%.1f | q built +%.1f | q ready +%.1f | tile0 +%.1f | "
              "loop done %.1f/%.1f/%.1f (groups %.1f..%.1f) | merge +%.1f | last arrival %.1f | "
              "groups complete %.1f | main end %.1f | reduce entry %.1f waited %.1f end %.1f (us)\n",
              what.c_str(), m(kEvent), m(kStarts), m(kQInputs), m(kQBuilt), m(kQReady), m(kTile0),
              m(kLoopMin), m(kLoopMed), m(kLoopMax), m(kGroupMin), m(kGroupMax), m(kMerged), m(kArrive),
              m(kComplete), m(kEnd), m(kRedEntry), m(kRedWaited), m(kRedEnd));
  if (m(kFused) > 0)
    std::printf("trace %-44s per block, median/max: loop -> partial written (thread 0) %.1f/%.1f | "
                "-> arrival %.1f/%.1f | -> group complete %.1f/%.1f | -> end %.1f/%.1f (us)\n",
                what.c_str(), m(kWriteMed), m(kWriteMax), m(kOutMed), m(kOutMax), m(kWaitMed), m(kWaitMax),
                m(kMergeMed), m(kMergeMax));
  std::fflush(stdout);
}
#else
void trace_tpa(opbench::bench::FlushTimer&, const std::string&, int64_t, const std::function<void()>&) {
  std::printf("trace: this binary was built without -DOPBENCH_TPA_TRACE\n");
}
#endif

// Median, p10, p90 of `reps` samples (ms), after `warm` untimed calls, each after an L2 flush.
bool profile_mode = false;  // --profile: one call per configuration, no warm-up

struct Timer {
  opbench::bench::FlushTimer t;
  std::vector<double> run(const std::function<void()>& fn, int reps, int warm = 3) {
    if (profile_mode) reps = 1, warm = 0;
    std::vector<double> v = t.sorted_samples(fn, reps, warm);
    auto pct = [&](double p) { return v[std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5))]; };
    return {pct(0.5), pct(0.1), pct(0.9)};
  }
};

struct Row {
  std::string kernel, config, version;
  double ms, p10, p90, floor_ms;
};
std::vector<Row> rows;

void report(const std::string& kernel, const std::string& config, const std::string& version,
            const std::vector<double>& t, double floor_ms) {
  rows.push_back({kernel, config, version, t[0], t[1], t[2], floor_ms});
  std::printf("%-14s %-34s %-22s %9.4f ms  [p10 %.4f p90 %.4f]  floor %.4f ms  %5.1f%%\n",
              kernel.c_str(), config.c_str(), version.c_str(), t[0], t[1], t[2], floor_ms,
              100.0 * floor_ms / t[0]);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const char* csv = nullptr;
  bool quick = false, md_small = false;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    else if (std::strcmp(argv[i], "--profile") == 0) profile_mode = true;
    else if (std::strcmp(argv[i], "--md-small") == 0) md_small = true;
    else if (std::strcmp(argv[i], "--trace") == 0) trace = true;
    else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
    else csv = argv[i];
  }
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::printf("no CUDA device\n");
    return 0;
  }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s, %d SMs, L2 %d MiB\n", prop.name, prop.multiProcessorCount,
              prop.l2CacheSize >> 20);
  Timer timer;

  // ---- peak bandwidth ----------------------------------------------------------------------
  double peak;  // bytes / ms
  {
    const size_t n = size_t(2) << 30;
    void *src, *dst;
    CK(cudaMalloc(&src, n));
    CK(cudaMalloc(&dst, n));
    fill(src, n / 2, 1);
    auto t = timer.run([&] { CK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice)); }, 10, 2);
    peak = 2.0 * n / t[0];
    std::printf("peak: 2 GiB D2D copy %.4f ms -> %.1f GB/s (read + write)\n", t[0], peak / 1e6);
    // For reference (not a floor): a kernel that only reads the 2 GiB, 16 bytes a thread.
    auto tr = timer.run([&] { opbench::l2_flush_read(src, n, nullptr); }, 10, 2);
    std::printf("read-only: 2 GiB read %.4f ms -> %.1f GB/s\n", tr[0], n / tr[0] / 1e6);
    CK(cudaFree(src));
    CK(cudaFree(dst));
  }

  // ---- lrpe_cosine_md ------------------------------------------------------------------------
  if (only.empty() || only == "md") {
    const int64_t B = 12, H = 12, D = 128;
    const int64_t maxL = 32768 + 10;
    const size_t xmax = size_t(B * H * maxL * D);
    void *x, *o, *dd, *dx, *theta, *cs, *sn, *ws;
    CK(cudaMalloc(&x, xmax * 2));
    CK(cudaMalloc(&o, xmax * 4));   // fwd output (2|x|)
    CK(cudaMalloc(&dd, xmax * 4));  // bwd grad_out (2|x|)
    CK(cudaMalloc(&dx, xmax * 2));
    CK(cudaMalloc(&theta, H * D * 4));
    CK(cudaMalloc(&cs, size_t(32768) * H * D * 4));
    CK(cudaMalloc(&sn, size_t(32768) * H * D * 4));
    CK(cudaMalloc(&ws, size_t(64) << 20));
    fill(x, xmax, 2);
    fill(dd, 2 * xmax, 3);
    struct G { int md; int64_t n; };
    std::vector<G> grids = {{1, 32768}, {2, 128}, {3, 32}};
    if (quick) grids = {{2, 128}};
    if (md_small) grids = {{1, 256}, {1, 512}, {1, 1024}, {2, 16}, {2, 32}, {3, 4}, {3, 8}};
    for (const G& g : grids) {
      for (int64_t l : {0, 10}) {
        if (md_small && l != 0) continue;
        K::LrpeMdShape s;
        s.b = B; s.h = H; s.l = l; s.md = g.md; s.d = D;
        for (int i = 0; i < g.md; ++i) s.n[i] = g.n;
        s.e = (D + g.md - 1) / g.md;
        // theta (h, e): 10000^(-k/e)
        std::vector<float> th(H * s.e);
        for (int64_t hh = 0; hh < H; ++hh)
          for (int64_t k = 0; k < s.e; ++k) th[hh * s.e + k] = std::pow(10000.f, -float(k) / s.e);
        CK(cudaMemcpy(theta, th.data(), th.size() * 4, cudaMemcpyHostToDevice));
        K::lrpe_cosine_md_build_cache(static_cast<float*>(theta), static_cast<float*>(cs),
                                      static_cast<float*>(sn), s, nullptr);
        CK(cudaDeviceSynchronize());
        const double xb = double(B * H * s.tokens() * D) * 2;
        const std::string cfg = std::to_string(g.md) + "d n=" + std::to_string(g.n) + " l=" +
                                std::to_string(l) + " bf16";
        const int reps = md_small ? 200 : 30;
        auto md_pair = [&](bool cache, const K::LrpeMdOptions& opt, const std::string& ver) {
          const float* cp = cache ? static_cast<float*>(cs) : nullptr;
          const float* sp = cache ? static_cast<float*>(sn) : nullptr;
          auto tf = timer.run([&] {
            K::lrpe_cosine_md_fwd(x, static_cast<float*>(theta), cp, sp, o, nullptr, 0, s,
                                  DType::bf16, Act::none, -1, nullptr, opt);
          }, reps);
          report("md fwd", cfg, ver, tf, 3 * xb / peak);
          auto tb = timer.run([&] {
            K::lrpe_cosine_md_bwd(x, dd, static_cast<float*>(theta), cp, sp, dx, nullptr, 0, s,
                                  DType::bf16, Act::none, -1, nullptr, opt);
          }, reps);
          report("md bwd", cfg, ver, tb, 3 * xb / peak);
        };
        // Explicit batches per thread, both providers (the default picks automatically).
        auto bpt_sweep = [&](std::initializer_list<int> bpts) {
          for (int bpt : bpts) {
            K::LrpeMdOptions ob;
            ob.batch_per_thread = bpt;
            md_pair(false, ob, "cuda bpt=" + std::to_string(bpt));
            md_pair(true, ob, "cuda_cache bpt=" + std::to_string(bpt));
          }
        };
        md_pair(false, {}, "cuda");
        md_pair(true, {}, "cuda_cache");
        if (md_small) {
          bpt_sweep({1, 2, 3, 4, 6, 12});
          continue;
        }
        {  // without the forward's L2 prefetch of the next round of batches (the default has it)
          K::LrpeMdOptions op;
          op.prefetch = 0;
          md_pair(false, op, "cuda no-pf");
          md_pair(true, op, "cuda_cache no-pf");
        }
        if (g.md == 2 && l == 0) {  // v1: no reuse of cos/sin across the batch
          K::LrpeMdOptions o1;
          o1.batch_per_thread = 1;
          md_pair(false, o1, "cuda bpt=1");
          bpt_sweep({4, 6});  // fewer batches per thread: more, shorter threads
        }
        // Other acts at one shape, for the record (floors per the .cu header).
        if (g.md == 2 && l == 10) {
          struct A { Act act; int dim; const char* name; double ffwd, fbwd; };
          for (A a : {A{Act::silu, -1, "silu", 3, 4}, A{Act::softmax, -1, "softmax-feat", 3, 4},
                      A{Act::softmax, -2, "softmax-seq", 3, 4}}) {
            const size_t wf = K::lrpe_cosine_md_workspace_bytes(s, a.act, a.dim, false);
            const size_t wb = K::lrpe_cosine_md_workspace_bytes(s, a.act, a.dim, true);
            if (std::max(wf, wb) > (size_t(64) << 20)) continue;
            auto tf = timer.run([&] {
              K::lrpe_cosine_md_fwd(x, static_cast<float*>(theta), nullptr, nullptr, o, ws, wf, s,
                                    DType::bf16, a.act, a.dim, nullptr);
            }, reps);
            report("md fwd", cfg, std::string("cuda ") + a.name, tf, a.ffwd * xb / peak);
            auto tb = timer.run([&] {
              K::lrpe_cosine_md_bwd(x, dd, static_cast<float*>(theta), nullptr, nullptr, dx, ws, wb,
                                    s, DType::bf16, a.act, a.dim, nullptr);
            }, reps);
            report("md bwd", cfg, std::string("cuda ") + a.name, tb, a.fbwd * xb / peak);
          }
        }
      }
    }
    {  // the same version timed again, minutes later: the spread between runs
      K::LrpeMdShape s;
      s.b = B; s.h = H; s.l = 10; s.md = 2; s.n[0] = s.n[1] = 128; s.d = D; s.e = 64;
      std::vector<float> th(H * s.e);
      for (int64_t hh = 0; hh < H; ++hh)
        for (int64_t k = 0; k < s.e; ++k) th[hh * s.e + k] = std::pow(10000.f, -float(k) / s.e);
      CK(cudaMemcpy(theta, th.data(), th.size() * 4, cudaMemcpyHostToDevice));
      const double xb = double(B * H * s.tokens() * D) * 2;
      auto tf = timer.run([&] {
        K::lrpe_cosine_md_fwd(x, static_cast<float*>(theta), nullptr, nullptr, o, nullptr, 0, s,
                              DType::bf16, Act::none, -1, nullptr);
      }, 30);
      report("md fwd", "2d n=128 l=10 bf16", "cuda (repeat)", tf, 3 * xb / peak);
      auto tb = timer.run([&] {
        K::lrpe_cosine_md_bwd(x, dd, static_cast<float*>(theta), nullptr, nullptr, dx, nullptr, 0,
                              s, DType::bf16, Act::none, -1, nullptr);
      }, 30);
      report("md bwd", "2d n=128 l=10 bf16", "cuda (repeat)", tb, 3 * xb / peak);
    }
    for (void* p : {x, o, dd, dx, theta, cs, sn, ws}) CK(cudaFree(p));
  }

  // ---- tpa_decode ----------------------------------------------------------------------------
  if (only.empty() || only == "tpa") {
    const int64_t H = 32, R = 16, D = 128, E = 128;
    const int64_t maxB = 32, maxM = 32768;
    void *aq, *ak, *av, *bq, *bk, *bv, *out, *ws;
    CK(cudaMalloc(&aq, maxB * H * R * 2));
    CK(cudaMalloc(&ak, maxB * maxM * H * 2));
    CK(cudaMalloc(&av, maxB * maxM * H * 2));
    CK(cudaMalloc(&bq, maxB * R * D * 2));
    CK(cudaMalloc(&bk, maxB * maxM * D * 2));
    CK(cudaMalloc(&bv, maxB * maxM * E * 2));
    CK(cudaMalloc(&out, maxB * H * E * 2));
    CK(cudaMalloc(&ws, size_t(256) << 20));
    fill(aq, maxB * H * R, 11); fill(ak, maxB * maxM * H, 12); fill(av, maxB * maxM * H, 13);
    fill(bq, maxB * R * D, 14); fill(bk, maxB * maxM * D, 15); fill(bv, maxB * maxM * E, 16);
    std::vector<int64_t> bs = {8, 32}, ms = {256, 2048, 4096, 16384, 32768};
    if (quick) ms = {32768};
    if (trace) ms = {256, 32768};
    for (int64_t b : bs)
      for (int64_t m : ms) {
        K::TpaShape s;
        s.b = b; s.h = H; s.r = R; s.d = D; s.e = E; s.m = m;
        const K::TpaScales sc = K::TpaScales::defaults(s);
        const double bytes = 2.0 * b * m * (2 * H + D + E);
        const std::string cfg = "b=" + std::to_string(b) + " m=" + std::to_string(m) + " bf16";
        // tile x stages (0: default), PDL, chunk length (0: default, one wave of blocks), bn's
        // dynamic tiles (the default) or equal static chunks, its fused merge (the default) or
        // the reduction kernel
        struct V {
          K::TpaStrategy st;
          int tile, stages;
          bool pdl;
          int64_t chunk;
          bool dyn = true, fused = true;
          double fixed = -1;  // bn's fixed share of each block's tiles before the counter (< 0: the default)
        };
        const auto bn = K::TpaStrategy::bn;
        std::vector<V> vs = {{K::TpaStrategy::b, 0, 0, true, 0}, {K::TpaStrategy::bh, 0, 0, true, 0},
                             {bn, 0, 0, true, 0},   {bn, 0, 0, true, 0, true, false},
                             {bn, 0, 0, false, 0, true, false},  {bn, 0, 0, true, 0, false},
                             {bn, 32, 2, true, 0},  {bn, 32, 4, true, 0},  {bn, 64, 3, true, 0},
                             {bn, 0, 0, true, 0, true, true, 0.0},  {bn, 0, 0, true, 0, true, false, 0.0},
                             {bn, 0, 0, true, 0, true, true, 0.75}, {bn, 0, 0, true, 0, true, true, 1.0},
                             {bn, 0, 0, true, 0}};  // the default again: the spread between runs
        if (m < 32768)  // shorter m: how bn hands out its tiles
          vs = {{bn, 0, 0, true, 0}, {bn, 0, 0, true, 0, true, true, 0.0}, {bn, 0, 0, true, 0, false},
                {bn, 0, 0, true, 0}};  // the default again (a configuration's first row can read slower)
        else {  // two waves of blocks, and chunks of 2048 tokens
          vs.push_back({bn, 0, 0, true, m * b / 512});
          vs.push_back({bn, 0, 0, true, m * b / 512, false});
          vs.push_back({bn, 0, 0, true, 2048});
        }
        if (trace) vs = {{bn, 0, 0, true, 0}, {bn, 0, 0, true, 0, true, true, 0.0}, {bn, 0, 0, true, 0, true, false},
                          {bn, 0, 0, true, 0, false}};
        for (const V& v : vs) {
          K::TpaOptions opt;
          opt.tile = v.tile;
          opt.stages = v.stages;
          opt.pdl = v.pdl;
          opt.chunk_len = v.chunk;
          opt.dynamic_tiles = v.dyn;
          opt.fused_merge = v.fused;
          if (v.fixed >= 0) opt.fixed_share = v.fixed;
          const K::TpaPlan plan(s, DType::bf16, v.st, opt);  // outside the timed calls
          const size_t wsb = plan.workspace_bytes();
          if (wsb > (size_t(256) << 20)) continue;
          // One workspace serves every plan: its counters are zero before a plan's first call
          // (another plan's partials may lie there; each call leaves its own counters zero).
          CK(cudaMemset(ws, 0, plan.counter_bytes()));
          const int64_t nch = plan.chunks();
          const auto call = [&] { plan.run(aq, ak, av, bq, bk, bv, out, ws, wsb, sc, nullptr); };
          auto t = timer.run(call, m >= 4096 ? 50 : 100);
          std::string ver = std::string("cuda_") + K::tpa_strategy_name(v.st);
          ver += v.tile ? " " + std::to_string(v.tile) + "x" + std::to_string(v.stages) : " dflt";
          if (!v.pdl) ver += " nopdl";
          if (!v.dyn) ver += " static";
          if (v.dyn && !v.fused) ver += " sep";
          if (v.dyn && v.fixed >= 0) ver += " fix" + std::to_string(static_cast<int>(v.fixed * 100 + 0.5));
          ver += " c" + std::to_string(nch);
          report("tpa", cfg, ver, t, bytes / peak);
          if (trace) trace_tpa(timer.t, cfg + " " + ver, nch, call);
        }
      }
    {  // calibration: a plain read of b = 8's bytes (one kernel), an empty launch, an empty PDL pair
      const double bytes8 = 2.0 * 8 * 32768 * (2 * H + D + E);
      auto t = timer.run([&] { opbench::l2_flush_read(bk, static_cast<size_t>(bytes8), nullptr); }, 50);
      report("tpa", "b=8 m=32768 bf16", "plain read, same bytes", t, bytes8 / peak);
      auto te = timer.run([&] { empty_kernel<<<1, 32>>>(); CK(cudaGetLastError()); }, 50);
      report("launch", "-", "empty kernel", te, 0);
      auto tc = timer.run([&] {  // the fused merge's launch: every block resident
        cudaLaunchConfig_t cfg{};
        cfg.gridDim = dim3(264);
        cfg.blockDim = dim3(256);
        cudaLaunchAttribute coop{};
        coop.id = cudaLaunchAttributeCooperative;
        coop.val.cooperative = 1;
        cfg.attrs = &coop;
        cfg.numAttrs = 1;
        CK(cudaLaunchKernelEx(&cfg, empty_kernel));
      }, 50);
      report("launch", "-", "264 x 256 empty, cooperative", tc, 0);
      auto tn = timer.run([&] { empty_kernel<<<264, 256>>>(); CK(cudaGetLastError()); }, 50);
      report("launch", "-", "264 x 256 empty", tn, 0);
      auto tp = timer.run([&] { pdl_pair(); }, 50);
      report("launch", "-", "empty kernel + PDL empty", tp, 0);
      for (int mode : {0, 1, 2}) {
        auto ts = timer.run([&] { spin_pair(mode); }, 50);
        report("launch", "-", mode == 0 ? "10 us spin, then 10 us spin" : mode == 1 ? "10 us spin + PDL 10 us spin"
                                                                                  : "10 us spin + PDL cooperative 10 us spin", ts, 0);
      }
      auto tw = timer.run([&] {
        empty_kernel<<<256, 256>>>();
        CK(cudaGetLastError());
        empty_kernel<<<256, 256>>>();
        CK(cudaGetLastError());
      }, 50);
      report("launch", "-", "2 x 256 empty blocks", tw, 0);
    }
    for (void* p : {aq, ak, av, bq, bk, bv, out, ws}) CK(cudaFree(p));
  }
  CK(cudaDeviceSynchronize());

  // ---- summary -------------------------------------------------------------------------------
  if (csv) {
    FILE* f = std::fopen(csv, "w");
    if (f) {
      std::fprintf(f, "kernel,config,version,median_ms,p10_ms,p90_ms,floor_ms,pct_floor\n");
      for (const Row& r : rows)
        std::fprintf(f, "%s,%s,%s,%.5f,%.5f,%.5f,%.5f,%.1f\n", r.kernel.c_str(), r.config.c_str(),
                     r.version.c_str(), r.ms, r.p10, r.p90, r.floor_ms, 100 * r.floor_ms / r.ms);
      std::fclose(f);
    }
  }
  std::printf("\n| kernel | config | version | ms | %% floor |\n|---|---|---|---|---|\n");
  for (const Row& r : rows)
    std::printf("| %s | %s | %s | %.4f | %.1f |\n", r.kernel.c_str(), r.config.c_str(),
                r.version.c_str(), r.ms, 100 * r.floor_ms / r.ms);
  return 0;
}

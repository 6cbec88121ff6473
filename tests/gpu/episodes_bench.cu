// Where does a short kernel's time move between measurements? The harness measures each point
// once (one episode: ~100 ms of samples after a warm-up); at n = 256 two episodes of the same
// kernel differ by up to ~1 us on 11-24 us calls while the samples inside one episode agree to
// ~0.1 us. This benchmark repeats episodes of one call and changes one thing between them:
//   same     nothing (the same flush buffer and tensors, episodes back to back)
//   flush    a new 256 MiB flush buffer per episode (the harness allocates one per point)
//   tensors  new input and output tensors per episode (new addresses; the old ones stay
//            allocated until the end, so the allocator cannot hand the same memory back)
//   both     both
// and prints each episode's median and the spread of the episode medians.
// --gaps instead places act's backward inputs apart on purpose: x, then a spacer of k x 2 MiB,
// then do and dx (k = 0 .. 15, each layout allocated afresh and timed, twice), to see whether
// the time follows the distance between the two tensors read side by side.
// Usage: episodes_bench [--episodes N] [--samples N] [--gaps]; OPBENCH_FLUSH / OPBENCH_SAMPLES
// as the other kernel benchmarks (bench_timer.cuh; the harness's way is write + stream).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernels/act.h"
#include "kernels/lrpe_cosine.h"
#include "tests/gpu/bench_timer.cuh"
#include "tests/gpu/kernels_1d_util.cuh"

using opbench::kernels::Act;
using opbench::kernels::ActArgs;
using opbench::kernels::DType;
using opbench::kernels::LrpeArgs;

namespace {

constexpr int64_t B = 12, H = 12, D = 128;

struct Case {
  std::string name;
  bool cosine;  // lrpe_cosine, else act
  Act act;
  bool bwd;
  int64_t n;
};

// One call's tensors: x, do (output-shaped), out; theta for lrpe_cosine.
struct Tensors {
  void *x = nullptr, *g = nullptr, *o = nullptr;
  float* th = nullptr;
  explicit Tensors(int64_t n) {
    const int64_t nx = B * H * n * D;
    K1D_CHECK(cudaMalloc(&x, size_t(nx) * 2));
    K1D_CHECK(cudaMalloc(&g, size_t(2 * nx) * 2));
    K1D_CHECK(cudaMalloc(&o, size_t(2 * nx) * 2));
    k1d::fill(x, DType::bf16, nx, 11);
    k1d::fill(g, DType::bf16, 2 * nx, 12);
    const std::vector<float> t = k1d::rotary_theta(H, D);
    K1D_CHECK(cudaMalloc(&th, t.size() * 4));
    K1D_CHECK(cudaMemcpy(th, t.data(), t.size() * 4, cudaMemcpyHostToDevice));
  }
  ~Tensors() {
    cudaFree(x), cudaFree(g), cudaFree(o), cudaFree(th);
  }
};

std::function<void()> call_of(const Case& c, const Tensors& t, ActArgs& aa, LrpeArgs& la) {
  if (!c.cosine) {
    aa.dtype = DType::bf16, aa.act = c.act, aa.b = B, aa.h = H, aa.n = c.n, aa.d = D;
    aa.x = t.x, aa.dout = t.g, aa.out = t.o;
    if (c.bwd) return [&aa] { opbench::kernels::act_backward(aa); };
    return [&aa] { opbench::kernels::act_forward(aa); };
  }
  la.dtype = DType::bf16, la.act = c.act, la.b = B, la.n = c.n, la.h = H, la.d = D;
  la.x = t.x, la.theta = t.th, la.theta_sh = D, la.theta_sk = 1, la.dout = t.g, la.out = t.o;
  if (c.bwd) return [&la] { opbench::kernels::lrpe_cosine_backward(la); };
  return [&la] { opbench::kernels::lrpe_cosine_forward(la); };
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// --gaps: act backward (bf16, b 12, h 12, d 128) with x and do k x 2 MiB apart.
void run_gaps(int samples) {
  opbench::bench::FlushTimer timer;
  std::printf("gaps: act bwd | n | spacer MiB | do - x (MiB) | dx - do (MiB) | median us (first, second layout)\n");
  for (Act act : {Act::relu, Act::silu})
    for (int64_t n : {256, 512, 1024}) {
      const size_t bytes = size_t(B * H * n * D) * 2;
      std::vector<double> meds;
      for (int k = 0; k < 16; ++k) {
        double m[2] = {0, 0};
        long long dgx = 0, dog = 0;
        for (int rep = 0; rep < 2; ++rep) {
          void *x = nullptr, *gap = nullptr, *g = nullptr, *o = nullptr;
          K1D_CHECK(cudaMalloc(&x, bytes));
          if (k > 0) K1D_CHECK(cudaMalloc(&gap, size_t(k) << 21));
          K1D_CHECK(cudaMalloc(&g, bytes));
          K1D_CHECK(cudaMalloc(&o, bytes));
          k1d::fill(x, DType::bf16, int64_t(bytes / 2), 11);
          k1d::fill(g, DType::bf16, int64_t(bytes / 2), 12);
          ActArgs a;
          a.dtype = DType::bf16, a.act = act, a.b = B, a.h = H, a.n = n, a.d = D;
          a.x = x, a.dout = g, a.out = o;
          m[rep] = 1e3 * median(timer.sorted_samples([&a] { opbench::kernels::act_backward(a); }, samples, 10));
          dgx = (reinterpret_cast<char*>(g) - reinterpret_cast<char*>(x)) >> 20;
          dog = (reinterpret_cast<char*>(o) - reinterpret_cast<char*>(g)) >> 20;
          cudaFree(o), cudaFree(g), cudaFree(gap), cudaFree(x);
        }
        meds.push_back(m[0]);
        meds.push_back(m[1]);
        std::printf("gaps: %s | %lld | %d | %lld | %lld | %.2f %.2f\n", act == Act::relu ? "relu" : "silu",
                    static_cast<long long>(n), 2 * k, dgx, dog, m[0], m[1]);
        std::fflush(stdout);
      }
      const auto [lo, hi] = std::minmax_element(meds.begin(), meds.end());
      std::printf("gaps: %s n = %lld: min %.2f max %.2f spread %.2f us\n", act == Act::relu ? "relu" : "silu",
                  static_cast<long long>(n), *lo, *hi, *hi - *lo);
    }
}


}  // namespace

int main(int argc, char** argv) {
  int episodes = 10, samples = 100;
  bool gaps = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--episodes") == 0 && i + 1 < argc) episodes = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--samples") == 0 && i + 1 < argc) samples = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--gaps") == 0) gaps = true;
    else {
      std::fprintf(stderr, "usage: episodes_bench [--episodes N] [--samples N] [--gaps]\n");
      return 2;
    }
  }
  if (!k1d::have_gpu()) {
    std::printf("no CUDA device: nothing to measure\n");
    return 0;
  }
  if (gaps) {
    run_gaps(samples);
    return 0;
  }
  const std::vector<Case> cases = {
      {"act relu fwd", false, Act::relu, false, 256},
      {"act sigmoid bwd", false, Act::sigmoid, true, 256},
      {"act relu fwd", false, Act::relu, false, 512},
      {"lrpe_cosine silu bwd", true, Act::silu, true, 256},
  };
  const char* modes[] = {"same", "flush", "tensors", "both"};
  std::printf("case | n | change between episodes | episode medians (us) | min | max | spread\n");
  for (const Case& c : cases)
    for (int mode = 0; mode < 4; ++mode) {
      const bool new_flush = mode == 1 || mode == 3, new_tensors = mode >= 2;
      std::vector<std::unique_ptr<Tensors>> kept;  // every episode's tensors, freed at the end
      kept.push_back(std::make_unique<Tensors>(c.n));
      auto timer = std::make_unique<opbench::bench::FlushTimer>();
      std::vector<double> med;
      for (int e = 0; e < episodes; ++e) {
        if (new_tensors && e > 0) kept.push_back(std::make_unique<Tensors>(c.n));
        if (new_flush && e > 0) {
          timer.reset();
          timer = std::make_unique<opbench::bench::FlushTimer>();
        }
        ActArgs aa;
        LrpeArgs la;
        auto f = call_of(c, *kept.back(), aa, la);
        med.push_back(1e3 * median(timer->sorted_samples(f, samples, 10)));
      }
      std::printf("%s | %lld | %s |", c.name.c_str(), static_cast<long long>(c.n), modes[mode]);
      for (double m : med) std::printf(" %.2f", m);
      const auto [lo, hi] = std::minmax_element(med.begin(), med.end());
      std::printf(" | %.2f | %.2f | %.2f\n", *lo, *hi, *hi - *lo);
      std::fflush(stdout);
    }
  return 0;
}

// Correctness of kernels/lrpe_cosine_md and kernels/tpa_decode against float64 CPU references
// computed from the formulas of OPS.md. CUDA runtime + GoogleTest only (no torch).
//
// Every check draws fresh random inputs, poisons outputs (and workspaces) with NaN bytes before
// the call, and compares by ||out - ref|| / ||ref||: < 1e-5 for fp32, < 1e-2 for bf16/fp16;
// any non-finite output fails. The references take the inputs after rounding to the storage
// dtype. LRPE angles follow the spec: the float32 product float(c) * theta, then sin/cos in
// float64. Skips (GTEST_SKIP) when no CUDA device is present; OPBENCH_TEST_QUICK=1 keeps only
// the small shapes (for compute-sanitizer runs).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/lrpe_cosine_md.h"
#include "kernels/tpa_decode.h"

namespace {

using opbench::kernels::Act;
using opbench::kernels::DType;
namespace K = opbench::kernels;

#define CK(call)                                                                           \
  do {                                                                                     \
    cudaError_t e_ = (call);                                                               \
    if (e_ != cudaSuccess)                                                                 \
      throw std::runtime_error(std::string(#call) + ": " + cudaGetErrorString(e_));       \
  } while (0)

bool has_gpu() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return n > 0;
}
#define REQUIRE_GPU() \
  if (!has_gpu()) GTEST_SKIP() << "no CUDA device"

bool quick() {
  const char* q = std::getenv("OPBENCH_TEST_QUICK");
  return q != nullptr && q[0] == '1';
}

const char* dname(DType t) { return t == DType::f32 ? "fp32" : t == DType::f16 ? "fp16" : "bf16"; }
double tol(DType t) { return t == DType::f32 ? 1e-5 : 1e-2; }

// ---- host storage conversions -------------------------------------------------------------
std::vector<uint8_t> to_storage(DType t, const std::vector<double>& v) {
  std::vector<uint8_t> out(v.size() * K::dtype_size(t));
  for (size_t i = 0; i < v.size(); ++i) {
    const float f = static_cast<float>(v[i]);
    if (t == DType::f32) {
      std::memcpy(out.data() + 4 * i, &f, 4);
    } else if (t == DType::f16) {
      const __half h = __float2half_rn(f);
      std::memcpy(out.data() + 2 * i, &h, 2);
    } else {
      const __nv_bfloat16 h = __float2bfloat16_rn(f);
      std::memcpy(out.data() + 2 * i, &h, 2);
    }
  }
  return out;
}
std::vector<double> from_storage(DType t, const std::vector<uint8_t>& b) {
  const size_t n = b.size() / K::dtype_size(t);
  std::vector<double> out(n);
  for (size_t i = 0; i < n; ++i) {
    if (t == DType::f32) {
      float f;
      std::memcpy(&f, b.data() + 4 * i, 4);
      out[i] = f;
    } else if (t == DType::f16) {
      __half h;
      std::memcpy(&h, b.data() + 2 * i, 2);
      out[i] = __half2float(h);
    } else {
      __nv_bfloat16 h;
      std::memcpy(&h, b.data() + 2 * i, 2);
      out[i] = __bfloat162float(h);
    }
  }
  return out;
}

// Random values, rounded through the storage dtype (returned as the rounded values).
std::mt19937_64& rng() {
  static std::mt19937_64 g(20241122);
  return g;
}
std::vector<double> randn(size_t n, double sd = 1.0) {
  std::normal_distribution<double> nd(0.0, sd);
  std::vector<double> v(n);
  for (auto& x : v) x = nd(rng());
  return v;
}
std::vector<double> rounded(DType t, const std::vector<double>& v) {
  return from_storage(t, to_storage(t, v));
}

// ---- device buffers ---------------------------------------------------------------------
struct Dev {
  void* p = nullptr;
  size_t bytes = 0;
  explicit Dev(size_t n) : bytes(n) { CK(cudaMalloc(&p, n ? n : 1)); }
  ~Dev() { cudaFree(p); }
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;
  void put(const std::vector<uint8_t>& b, size_t offset = 0) {
    CK(cudaMemcpy(static_cast<uint8_t*>(p) + offset, b.data(), b.size(), cudaMemcpyHostToDevice));
  }
  void poison() { CK(cudaMemset(p, 0xFF, bytes)); }  // NaN in every float format
  std::vector<uint8_t> get(size_t n, size_t offset = 0) const {
    std::vector<uint8_t> b(n);
    CK(cudaMemcpy(b.data(), static_cast<const uint8_t*>(p) + offset, n, cudaMemcpyDeviceToHost));
    return b;
  }
};

// Relative error; fails on any non-finite value.
void expect_close(const std::vector<double>& got, const std::vector<double>& ref, double tolerance,
                  const std::string& what) {
  ASSERT_EQ(got.size(), ref.size()) << what;
  double num = 0, den = 0;
  size_t bad = 0, first_bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) {
      if (bad++ == 0) first_bad = i;
      continue;
    }
    num += (got[i] - ref[i]) * (got[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " non-finite outputs, first at " << first_bad;
  const double rel = std::sqrt(num / (den > 0 ? den : 1e-300));
  EXPECT_LT(rel, tolerance) << what << ": relative error " << rel;
}

// =============================================================================================
// lrpe_cosine_md
struct MdCase {
  int64_t b, h, l;
  int md;
  int64_t n[3];
  int64_t d, e;
};

K::LrpeMdShape shape_of(const MdCase& c) {
  K::LrpeMdShape s;
  s.b = c.b; s.h = c.h; s.l = c.l; s.md = c.md;
  for (int i = 0; i < 3; ++i) s.n[i] = c.n[i];
  s.d = c.d; s.e = c.e;
  return s;
}

std::string md_name(const MdCase& c) {
  std::string g;
  for (int i = 0; i < c.md; ++i) g += (i ? "x" : "") + std::to_string(c.n[i]);
  return "b" + std::to_string(c.b) + " h" + std::to_string(c.h) + " grid " + g + " l" +
         std::to_string(c.l) + " d" + std::to_string(c.d) + " e" + std::to_string(c.e);
}

struct MdVariant {
  Act act;
  int act_dim;
  const char* name;
};
const MdVariant kMdVariants[] = {
    {Act::none, -1, "none"},       {Act::relu, -1, "relu"},
    {Act::sigmoid, -1, "sigmoid"}, {Act::silu, -1, "silu"},
    {Act::softmax, -1, "softmax-feature"}, {Act::softmax, -2, "softmax-sequence"},
};

// Angle of (token s, head hh, feature j): the float32 product of the spec.
double md_angle(const MdCase& c, const std::vector<float>& theta, int64_t s, int64_t hh, int64_t j) {
  if (s < c.l) return 0.0;
  int64_t g = s - c.l;
  int64_t coord[3] = {0, 0, 0};
  for (int ax = c.md - 1; ax >= 0; --ax) {
    coord[ax] = g % c.n[ax];
    g /= c.n[ax];
  }
  const float a = static_cast<float>(coord[j / c.e]) * theta[hh * c.e + j % c.e];
  return static_cast<double>(a);
}

double sigm(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// softmax of x (b, h, L, d) along features (dim -1) or tokens (dim -2).
std::vector<double> softmax_ref(const MdCase& c, int64_t L, const std::vector<double>& x, int dim) {
  std::vector<double> o(x.size());
  const int64_t d = c.d;
  for (int64_t bh = 0; bh < c.b * c.h; ++bh) {
    const double* xs = x.data() + bh * L * d;
    double* os = o.data() + bh * L * d;
    if (dim == -1) {
      for (int64_t s = 0; s < L; ++s) {
        double m = -INFINITY, sum = 0;
        for (int64_t j = 0; j < d; ++j) m = std::max(m, xs[s * d + j]);
        for (int64_t j = 0; j < d; ++j) sum += std::exp(xs[s * d + j] - m);
        for (int64_t j = 0; j < d; ++j) os[s * d + j] = std::exp(xs[s * d + j] - m) / sum;
      }
    } else {
      for (int64_t j = 0; j < d; ++j) {
        double m = -INFINITY, sum = 0;
        for (int64_t s = 0; s < L; ++s) m = std::max(m, xs[s * d + j]);
        for (int64_t s = 0; s < L; ++s) sum += std::exp(xs[s * d + j] - m);
        for (int64_t s = 0; s < L; ++s) os[s * d + j] = std::exp(xs[s * d + j] - m) / sum;
      }
    }
  }
  return o;
}

std::vector<double> md_ref_fwd(const MdCase& c, const MdVariant& v, const std::vector<double>& x,
                               const std::vector<float>& theta) {
  const int64_t L = c.l + c.n[0] * (c.md > 1 ? c.n[1] : 1) * (c.md > 2 ? c.n[2] : 1);
  std::vector<double> xa(x.size());
  if (v.act == Act::softmax) {
    xa = softmax_ref(c, L, x, v.act_dim);
  } else {
    for (size_t i = 0; i < x.size(); ++i) {
      const double t = x[i];
      xa[i] = v.act == Act::relu ? (t > 0 ? t : 0)
            : v.act == Act::sigmoid ? sigm(t)
            : v.act == Act::silu ? t * sigm(t) : t;
    }
  }
  std::vector<double> o(2 * x.size());
  for (int64_t bi = 0; bi < c.b; ++bi)
    for (int64_t hh = 0; hh < c.h; ++hh)
      for (int64_t s = 0; s < L; ++s)
        for (int64_t j = 0; j < c.d; ++j) {
          const double a = md_angle(c, theta, s, hh, j);
          const int64_t r = (bi * c.h + hh) * L + s;
          o[r * 2 * c.d + j] = xa[r * c.d + j] * std::cos(a);
          o[r * 2 * c.d + c.d + j] = xa[r * c.d + j] * std::sin(a);
        }
  return o;
}

std::vector<double> md_ref_bwd(const MdCase& c, const MdVariant& v, const std::vector<double>& x,
                               const std::vector<double>& dout, const std::vector<float>& theta) {
  const int64_t L = c.l + c.n[0] * (c.md > 1 ? c.n[1] : 1) * (c.md > 2 ? c.n[2] : 1);
  std::vector<double> g(x.size());
  for (int64_t bi = 0; bi < c.b; ++bi)
    for (int64_t hh = 0; hh < c.h; ++hh)
      for (int64_t s = 0; s < L; ++s)
        for (int64_t j = 0; j < c.d; ++j) {
          const double a = md_angle(c, theta, s, hh, j);
          const int64_t r = (bi * c.h + hh) * L + s;
          g[r * c.d + j] = dout[r * 2 * c.d + j] * std::cos(a) + dout[r * 2 * c.d + c.d + j] * std::sin(a);
        }
  std::vector<double> dx(x.size());
  if (v.act == Act::softmax) {
    const std::vector<double> o = softmax_ref(c, L, x, v.act_dim);
    const int64_t d = c.d;
    for (int64_t bh = 0; bh < c.b * c.h; ++bh) {
      const int64_t base = bh * L * d;
      if (v.act_dim == -1) {
        for (int64_t s = 0; s < L; ++s) {
          double dot = 0;
          for (int64_t j = 0; j < d; ++j) dot += o[base + s * d + j] * g[base + s * d + j];
          for (int64_t j = 0; j < d; ++j) {
            const int64_t i = base + s * d + j;
            dx[i] = o[i] * g[i] - o[i] * dot;
          }
        }
      } else {
        for (int64_t j = 0; j < d; ++j) {
          double dot = 0;
          for (int64_t s = 0; s < L; ++s) dot += o[base + s * d + j] * g[base + s * d + j];
          for (int64_t s = 0; s < L; ++s) {
            const int64_t i = base + s * d + j;
            dx[i] = o[i] * g[i] - o[i] * dot;
          }
        }
      }
    }
  } else {
    for (size_t i = 0; i < x.size(); ++i) {
      const double t = x[i], sg = sigm(t);
      dx[i] = v.act == Act::relu ? (t > 0 ? g[i] : 0)
            : v.act == Act::sigmoid ? g[i] * sg * (1 - sg)
            : v.act == Act::silu ? g[i] * sg * (1 + t * (1 - sg)) : g[i];
    }
  }
  return dx;
}

// theta like rotary frequencies, perturbed so every head and feature differs.
// theta_scale > 1 pushes angles past 65536 (the double-precision reduction path).
std::vector<float> make_theta(const MdCase& c, double theta_scale) {
  std::uniform_real_distribution<double> u(0.5, 1.5);
  std::vector<float> th(c.h * c.e);
  for (int64_t hh = 0; hh < c.h; ++hh)
    for (int64_t k = 0; k < c.e; ++k)
      th[hh * c.e + k] = static_cast<float>(
          theta_scale * std::pow(10000.0, -static_cast<double>(k) / c.e) * u(rng()));
  return th;
}

// One fwd or bwd check of one variant. misalign: shift x/out/dout by one element (scalar path).
void md_check(const MdCase& c, DType dt, const MdVariant& v, bool cache, bool bwd, bool misalign,
              K::LrpeMdOptions opt = {}, double theta_scale = 1.0) {
  const std::string what = std::string(bwd ? "bwd " : "fwd ") + dname(dt) + " " + v.name +
                           (cache ? " cache " : " compute ") + md_name(c) +
                           (misalign ? " misaligned" : "") +
                           (opt.batch_per_thread ? " bpt" + std::to_string(opt.batch_per_thread) : "") +
                           (opt.prefetch == 0 ? " no-prefetch" : "") +
                           (theta_scale != 1.0 ? " theta*" + std::to_string(theta_scale) : "");
  SCOPED_TRACE(what);
  const K::LrpeMdShape s = shape_of(c);
  const int64_t L = s.tokens();
  const int64_t nx = c.b * c.h * L * c.d;
  const size_t es = K::dtype_size(dt);
  const size_t shift = misalign ? es : 0;

  const std::vector<double> x = rounded(dt, randn(nx));
  const std::vector<float> theta = make_theta(c, theta_scale);
  Dev dx_in(nx * es + 16), dth(theta.size() * 4);
  dx_in.put(to_storage(dt, x), shift);
  CK(cudaMemcpy(dth.p, theta.data(), theta.size() * 4, cudaMemcpyHostToDevice));
  const void* xp = static_cast<uint8_t*>(dx_in.p) + shift;

  const int64_t N = s.grid_tokens();
  Dev cos_t(cache ? N * c.h * c.d * 4 : 4), sin_t(cache ? N * c.h * c.d * 4 : 4);
  if (cache) {
    cos_t.poison();
    sin_t.poison();
    K::lrpe_cosine_md_build_cache(static_cast<float*>(dth.p), static_cast<float*>(cos_t.p),
                                  static_cast<float*>(sin_t.p), s, nullptr);
  }
  const float* cp = cache ? static_cast<float*>(cos_t.p) : nullptr;
  const float* sp = cache ? static_cast<float*>(sin_t.p) : nullptr;
  const size_t wsb = K::lrpe_cosine_md_workspace_bytes(s, v.act, v.act_dim, bwd);
  Dev ws(wsb);
  ws.poison();

  if (!bwd) {
    Dev out(2 * nx * es + 16);
    out.poison();
    void* op = static_cast<uint8_t*>(out.p) + shift;
    K::lrpe_cosine_md_fwd(xp, static_cast<float*>(dth.p), cp, sp, op, ws.p, wsb, s, dt, v.act,
                          v.act_dim, nullptr, opt);
    CK(cudaDeviceSynchronize());
    const std::vector<double> got = from_storage(dt, out.get(2 * nx * es, shift));
    expect_close(got, md_ref_fwd(c, v, x, theta), tol(dt), what);
  } else {
    const std::vector<double> dout = rounded(dt, randn(2 * nx));
    Dev dd(2 * nx * es + 16), dxo(nx * es + 16);
    dd.put(to_storage(dt, dout), shift);
    dxo.poison();
    void* gp = static_cast<uint8_t*>(dxo.p) + shift;
    K::lrpe_cosine_md_bwd(xp, static_cast<uint8_t*>(dd.p) + shift, static_cast<float*>(dth.p), cp,
                          sp, gp, ws.p, wsb, s, dt, v.act, v.act_dim, nullptr, opt);
    CK(cudaDeviceSynchronize());
    const std::vector<double> got = from_storage(dt, dxo.get(nx * es, shift));
    expect_close(got, md_ref_bwd(c, v, x, dout, theta), tol(dt), what);
  }
}

std::vector<MdCase> md_cases() {
  std::vector<MdCase> cs = {
      {2, 3, 10, 3, {3, 5, 7}, 96, 32},   // 3d odd grid, d = 96
      {1, 1, 1, 2, {1, 1, 1}, 16, 8},     // 2d grid (1, 1), one extra token, d = 16
      {2, 2, 0, 1, {1, 1, 1}, 64, 64},    // n = 1
      {1, 2, 1, 1, {37, 1, 1}, 128, 128}, // 1d
      {2, 1, 10, 2, {5, 4, 1}, 256, 128}, // d = 256
      {1, 2, 0, 3, {4, 3, 2}, 128, 43},   // e * 3 = 129 >= 128
      {1, 1, 3, 2, {6, 6, 1}, 64, 40},    // e wider than ceil(d / 2)
      {6, 2, 10, 2, {3, 3, 1}, 64, 32},   // b = 6: batch loop remainder
      {1, 3, 2, 1, {9, 1, 1}, 20, 20},    // d = 20: vector path for fp32, scalar for 16-bit
  };
  if (!quick()) cs.push_back({1, 2, 10, 1, {3000, 1, 1}, 64, 64});  // long 1d: angles to 3e3
  return cs;
}

void md_suite(DType dt) {
  for (const MdCase& c : md_cases())
    for (const MdVariant& v : kMdVariants)
      for (bool cache : {false, true})
        for (bool bwd : {false, true}) md_check(c, dt, v, cache, bwd, false);
}

TEST(LrpeCosineMd, Fp32AllActs) {
  REQUIRE_GPU();
  md_suite(DType::f32);
}
TEST(LrpeCosineMd, Bf16AllActs) {
  REQUIRE_GPU();
  md_suite(DType::bf16);
}
TEST(LrpeCosineMd, Fp16AllActs) {
  REQUIRE_GPU();
  md_suite(DType::f16);
}

// Unaligned pointers take the scalar path; explicit batches per thread split b unevenly.
TEST(LrpeCosineMd, ScalarPathAndBatchSplits) {
  REQUIRE_GPU();
  const MdCase c{5, 2, 10, 3, {3, 5, 7}, 64, 22};
  for (DType dt : {DType::f32, DType::bf16, DType::f16})
    for (const MdVariant& v : kMdVariants)
      for (bool bwd : {false, true}) {
        K::LrpeMdOptions o2, o4;
        o2.batch_per_thread = 2;
        o4.batch_per_thread = 4;
        md_check(c, dt, v, false, bwd, true);
        md_check(c, dt, v, true, bwd, false, o2);
        md_check(c, dt, v, false, bwd, false, o4);
        K::LrpeMdOptions pf;  // all 5 batches a thread, rounds of 4, without the prefetch
        pf.batch_per_thread = 5;
        pf.prefetch = 0;
        md_check(c, dt, v, true, bwd, false, pf);
        pf.prefetch = -1;  // the default: forward prefetches the next round
        md_check(c, dt, v, false, bwd, false, pf);
      }
}

// Angles past 65536 take the double-precision argument reduction.
TEST(LrpeCosineMd, LargeAngles) {
  REQUIRE_GPU();
  const MdCase c{1, 2, 3, 1, {2000, 1, 1}, 32, 32};
  for (DType dt : {DType::f32, DType::bf16})
    for (bool cache : {false, true})
      for (bool bwd : {false, true}) md_check(c, dt, kMdVariants[0], cache, bwd, false, {}, 200.0);
}

TEST(LrpeCosineMd, RejectsBadShapes) {
  K::LrpeMdShape s;
  s.md = 2; s.n[0] = 3; s.n[1] = 5; s.d = 64; s.e = 16;  // 2 * 16 < 64
  EXPECT_THROW(K::lrpe_cosine_md_check(s, Act::none, -1), K::KernelError);
  s.e = 32;
  EXPECT_NO_THROW(K::lrpe_cosine_md_check(s, Act::none, -1));
  EXPECT_THROW(K::lrpe_cosine_md_check(s, Act::softmax, 1), K::KernelError);
  s.md = 4;
  EXPECT_THROW(K::lrpe_cosine_md_check(s, Act::none, -1), K::KernelError);
  s.md = 2; s.l = -1;
  EXPECT_THROW(K::lrpe_cosine_md_check(s, Act::none, -1), K::KernelError);
}

// =============================================================================================
// tpa_decode
struct TpaCase {
  int64_t b, h, r, d, e, m;
  float scale_mult = 1.f;  // multiplies the default scale (sharper softmax)
  int64_t chunk_len = 0;   // bn chunk override
};

std::string tpa_name(const TpaCase& c) {
  return "b" + std::to_string(c.b) + " h" + std::to_string(c.h) + " r" + std::to_string(c.r) +
         " d" + std::to_string(c.d) + " e" + std::to_string(c.e) + " m" + std::to_string(c.m) +
         (c.scale_mult != 1.f ? " scale*" + std::to_string(c.scale_mult) : "") +
         (c.chunk_len ? " chunk" + std::to_string(c.chunk_len) : "");
}

std::vector<double> tpa_ref(const TpaCase& c, const K::TpaScales& sc, const std::vector<double>& aq,
                            const std::vector<double>& ak, const std::vector<double>& av,
                            const std::vector<double>& bq, const std::vector<double>& bk,
                            const std::vector<double>& bv) {
  std::vector<double> o(c.b * c.h * c.e, 0.0), q(c.d), sc_t(c.m);
  for (int64_t bi = 0; bi < c.b; ++bi)
    for (int64_t hh = 0; hh < c.h; ++hh) {
      for (int64_t k = 0; k < c.d; ++k) {
        double acc = 0;
        for (int64_t r = 0; r < c.r; ++r) acc += aq[(bi * c.h + hh) * c.r + r] * bq[(bi * c.r + r) * c.d + k];
        q[k] = sc.scale_q * acc;
      }
      double mx = -INFINITY;
      for (int64_t t = 0; t < c.m; ++t) {
        double dot = 0;
        const double* kr = bk.data() + (bi * c.m + t) * c.d;
        for (int64_t k = 0; k < c.d; ++k) dot += q[k] * kr[k];
        sc_t[t] = static_cast<double>(sc.scale) * sc.scale_k * ak[(bi * c.m + t) * c.h + hh] * dot;
        mx = std::max(mx, sc_t[t]);
      }
      double sum = 0;
      double* orow = o.data() + (bi * c.h + hh) * c.e;
      for (int64_t t = 0; t < c.m; ++t) {
        const double p = std::exp(sc_t[t] - mx);
        sum += p;
        const double w = p * av[(bi * c.m + t) * c.h + hh];
        const double* vr = bv.data() + (bi * c.m + t) * c.e;
        for (int64_t k = 0; k < c.e; ++k) orow[k] += w * vr[k];
      }
      for (int64_t k = 0; k < c.e; ++k) orow[k] *= sc.scale_v / sum;
    }
  return o;
}

void tpa_check(const TpaCase& c, DType dt, K::TpaStrategy st, K::TpaOptions opt = {}) {
  opt.chunk_len = c.chunk_len;
  const std::string what = std::string(dname(dt)) + " " + K::tpa_strategy_name(st) + " " +
                           tpa_name(c) +
                           (opt.tile ? " tile" + std::to_string(opt.tile) + "x" + std::to_string(opt.stages) : "") +
                           (opt.dynamic_tiles ? "" : " static") + (opt.fused_merge ? "" : " reduction kernel") +
                           (opt.fixed_share != K::TpaOptions{}.fixed_share ? " fixed share " + std::to_string(opt.fixed_share) : "");
  SCOPED_TRACE(what);
  K::TpaShape s;
  s.b = c.b; s.h = c.h; s.r = c.r; s.d = c.d; s.e = c.e; s.m = c.m;
  K::TpaScales sc = K::TpaScales::defaults(s);
  sc.scale *= c.scale_mult;
  if (c.scale_mult != 1.f) { sc.scale_k = 1.25f; sc.scale_v = 0.75f; }
  const size_t es = K::dtype_size(dt);
  const auto aq = rounded(dt, randn(c.b * c.h * c.r));
  const auto ak = rounded(dt, randn(c.b * c.m * c.h));
  const auto av = rounded(dt, randn(c.b * c.m * c.h));
  const auto bq = rounded(dt, randn(c.b * c.r * c.d));
  const auto bk = rounded(dt, randn(c.b * c.m * c.d));
  const auto bv = rounded(dt, randn(c.b * c.m * c.e));
  Dev daq(aq.size() * es), dak(ak.size() * es), dav(av.size() * es), dbq(bq.size() * es),
      dbk(bk.size() * es), dbv(bv.size() * es), dout(c.b * c.h * c.e * es);
  daq.put(to_storage(dt, aq)); dak.put(to_storage(dt, ak)); dav.put(to_storage(dt, av));
  dbq.put(to_storage(dt, bq)); dbk.put(to_storage(dt, bk)); dbv.put(to_storage(dt, bv));
  const K::TpaPlan plan(s, dt, st, opt);
  const size_t wsb = plan.workspace_bytes();
  EXPECT_EQ(wsb, K::tpa_decode_workspace_bytes(s, dt, st, opt));
  Dev ws(wsb);
  ws.poison();  // the partials must all be written ...
  const size_t cb = plan.counter_bytes();
  if (cb) CK(cudaMemset(ws.p, 0, cb));  // ... and the work counters start at zero
  const auto ref = tpa_ref(c, sc, aq, ak, av, bq, bk, bv);
  // Three times with the same workspace: a call must leave its counters ready for the next one
  // (the fused merge's barrier words alternate between two values). The first call through
  // tpa_decode (a plan of its own), the others through the kept plan. All but the counters is
  // poisoned again before each call: nothing a call reads may be left from the one before.
  for (int call = 0; call < 3; ++call) {
    SCOPED_TRACE(call == 0 ? "first call" : "call " + std::to_string(call + 1) + ", same workspace");
    dout.poison();
    if (call > 0) {
      const auto keep = ws.get(cb);
      ws.poison();
      ws.put(keep);
    }
    if (call == 0)
      K::tpa_decode(daq.p, dak.p, dav.p, dbq.p, dbk.p, dbv.p, dout.p, ws.p, wsb, s, sc, dt, st, nullptr, opt);
    else
      plan.run(daq.p, dak.p, dav.p, dbq.p, dbk.p, dbv.p, dout.p, ws.p, wsb, sc, nullptr);
    CK(cudaDeviceSynchronize());
    const auto got = from_storage(dt, dout.get(c.b * c.h * c.e * es));
    expect_close(got, ref, tol(dt), what);
    // Every counter word back to zero but for the top bit (the fused merge's barrier words flip
    // it every call).
    const auto counters = ws.get(cb);
    for (size_t i = 0; i + 4 <= cb; i += 4) {
      uint32_t w = 0;
      std::memcpy(&w, counters.data() + i, 4);
      EXPECT_EQ(w & 0x7fffffffu, 0u) << "counter word " << i / 4 << " not reset after the call";
    }
  }
}

std::vector<TpaCase> tpa_cases() {
  std::vector<TpaCase> cs = {
      {1, 1, 1, 64, 96, 1},          // m = 1, h = 1, r = 1, d != e
      {3, 3, 64, 96, 64, 7},         // r = 64, m = 7
      {2, 5, 3, 20, 12, 33},         // odd d, e, h: narrow and plain-load copies
      {1, 130, 2, 16, 16, 300},      // h = 130: several head groups
      {2, 8, 16, 64, 128, 300, 4.f, 64},  // sharper scores, forced chunks of 64
  };
  if (!quick()) {
    cs.push_back({2, 32, 16, 128, 128, 4097});       // the reference shape, m = 4097
    cs.push_back({2, 12, 16, 128, 256, 1000});       // e = 256, h = 12
    cs.push_back({1, 40, 8, 256, 32, 1000});         // d = 256, h = 40
    cs.push_back({1, 32, 16, 128, 128, 1000, 1.f, 100});  // chunk 100 -> rounded to the tile
  }
  return cs;
}

void tpa_suite(DType dt) {
  for (const TpaCase& c : tpa_cases())
    for (K::TpaStrategy st : {K::TpaStrategy::b, K::TpaStrategy::bh, K::TpaStrategy::bn})
      tpa_check(c, dt, st);
}

TEST(TpaDecode, Fp32AllStrategies) {
  REQUIRE_GPU();
  tpa_suite(DType::f32);
}
TEST(TpaDecode, Bf16AllStrategies) {
  REQUIRE_GPU();
  tpa_suite(DType::bf16);
}
TEST(TpaDecode, Fp16AllStrategies) {
  REQUIRE_GPU();
  tpa_suite(DType::f16);
}

// Every tensor-core tile/stage variant (bn with and without dynamic tiles), on odd and on
// reference-like shapes.
TEST(TpaDecode, TensorCoreVariants) {
  REQUIRE_GPU();
  // (m = 4097 in chunks of 512: tiles from the counters for several rounds after the fixed
  // ones, the last tile one token long; in chunks of 2048: 22 or 43 tiles a block, so the
  // default fixed share applies, the counter handing out the last rounds)
  std::vector<TpaCase> cs = {{2, 5, 3, 20, 12, 33}, {2, 32, 16, 128, 128, 777, 2.f, 128},
                             {2, 32, 16, 128, 128, 4097, 1.f, 512}, {2, 32, 16, 128, 128, 4097, 1.f, 2048}};
  if (!quick()) cs.push_back({1, 12, 16, 128, 256, 1000});
  for (const TpaCase& c : cs)
    for (DType dt : {DType::bf16, DType::f16})
      for (auto ts : {std::make_pair(64, 2), std::make_pair(64, 3), std::make_pair(64, 4),
                      std::make_pair(32, 2), std::make_pair(32, 4)})
        for (K::TpaStrategy st : {K::TpaStrategy::b, K::TpaStrategy::bn})
        for (int mode : {0, 1, 2, 3, 4}) {  // bn: counters + fused merge, counters + reduction
          // kernel, static chunks, every tile after the stages' from the counters (fused), no
          // tile from the counters (reduction kernel)
          if (st == K::TpaStrategy::b && mode > 0) continue;
          K::TpaOptions o;
          o.tile = ts.first;
          o.stages = ts.second;
          o.dynamic_tiles = mode != 2;
          o.fused_merge = mode == 0 || mode == 3;
          if (mode == 3) o.fixed_share = 0.0;
          if (mode == 4) o.fixed_share = 1.0;
          K::TpaShape s;
          s.b = c.b; s.h = c.h; s.r = c.r; s.d = c.d; s.e = c.e; s.m = c.m;
          SCOPED_TRACE("b=" + std::to_string(c.b) + " h=" + std::to_string(c.h) + " m=" + std::to_string(c.m) +
                       (dt == DType::bf16 ? " bf16" : " f16") + " tile " + std::to_string(ts.first) + "x" +
                       std::to_string(ts.second) + (st == K::TpaStrategy::b ? " b" : " bn") + " mode " +
                       std::to_string(mode));
          try {  // an explicit tile the device's shared memory cannot hold is refused: skip it
            K::tpa_decode_chunks(s, dt, st, o);
          } catch (const K::KernelError& err) {
            EXPECT_NE(std::string(err.what()).find("shared memory"), std::string::npos) << err.what();
            continue;
          }
          tpa_check(c, dt, st, o);
        }
}

// The split reduction without programmatic dependent launch, and with many chunks.
TEST(TpaDecode, SplitWithoutPdl) {
  REQUIRE_GPU();
  for (DType dt : {DType::f32, DType::bf16}) {
    K::TpaOptions o;
    o.pdl = false;
    tpa_check({2, 32, 16, 128, 128, 3000, 1.f, 32}, dt, K::TpaStrategy::bn, o);
    tpa_check({3, 7, 5, 40, 24, 999}, dt, K::TpaStrategy::bn, o);
  }
}

// The fused merge: chosen for the reference shape, not when asked not to, not without the tile
// counters, and not when the blocks do not fit on the device at once (one chunk of 64 tokens
// each: 512 blocks), where the reduction kernel merges 128 chunks.
TEST(TpaDecode, FusedMergeChoice) {
  REQUIRE_GPU();
  K::TpaShape s;
  s.b = 8; s.h = 32; s.r = 16; s.d = 128; s.e = 128; s.m = 32768;
  const auto bn = K::TpaStrategy::bn;
  K::TpaOptions o;
  EXPECT_TRUE(K::TpaPlan(s, DType::bf16, bn, o).fused());
  EXPECT_FALSE(K::TpaPlan(s, DType::f32, bn, o).fused());  // CUDA cores: the reduction kernel
  o.fused_merge = false;
  EXPECT_FALSE(K::TpaPlan(s, DType::bf16, bn, o).fused());
  o.fused_merge = true;
  o.dynamic_tiles = false;
  EXPECT_FALSE(K::TpaPlan(s, DType::bf16, bn, o).fused());
  o.dynamic_tiles = true;
  o.chunk_len = 64;
  s.b = 4; s.m = 8192;
  const K::TpaPlan many(s, DType::bf16, bn, o);
  EXPECT_EQ(many.chunks(), 128);
  EXPECT_FALSE(many.fused());
  tpa_check({4, 32, 16, 128, 128, 8192, 1.f, 64}, DType::bf16, bn, o);
}

TEST(TpaDecode, RejectsBadShapes) {
  K::TpaShape s;
  s.b = 2; s.h = 4; s.r = 65; s.d = 64; s.e = 64; s.m = 10;
  EXPECT_THROW(K::tpa_decode_check(s, DType::bf16), K::KernelError);
  s.r = 64;
  EXPECT_NO_THROW(K::tpa_decode_check(s, DType::bf16));
  s.d = 257;
  EXPECT_THROW(K::tpa_decode_check(s, DType::bf16), K::KernelError);
  s.d = 64; s.m = 0;
  EXPECT_THROW(K::tpa_decode_check(s, DType::bf16), K::KernelError);
}

}  // namespace

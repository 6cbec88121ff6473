// Correctness of our 1d CUDA kernels (kernels/act/, lrpe_cosine/, lrpe_rotate/) against a
// float64 CPU reference computed from the formulas of OPS.md (the angle (offset + s) * theta
// rounded to float32, as OPS.md defines it and the torch baseline computes it), through the torch-free launch API.
//
// Every check: fresh random inputs (a new seed, filled on the device, read back exactly), the
// output and the workspace poisoned with NaN before the call, then
//   rel = ||out - ref|| / ||ref||  < 1e-2 (bf16, fp16), < 1e-5 (fp32); any NaN/inf fails.
// Coverage: n in {1, 7, 1000, 4097} x d in {16, 64, 96, 128, 256} x every act variant (none,
// relu, sigmoid, silu, softmax over d, softmax over n with every strategy) x fwd/bwd x
// bf16/fp16/fp32 x the three ops; b, h > 1 with every theta broadcast; offset > 0; the scalar
// path (d not a multiple of the vector, misaligned pointers); fp32 angles at n = 32768 with
// large offsets; the benchmark shape (b 12, h 12, n 32768, d 128, bf16) on sampled (b, h) slabs;
// and the one-line errors for bad input. GPU test: skipped when no CUDA device is present.
// Seed: K1D_SEED=<n> to reproduce a run (printed at start). OPBENCH_TUNING_1D="key=value,..."
// (kernels/args1d.h, the Tuning1d field names, as a sweep takes it) checks every kernel under
// another tuning, e.g. prefetch=0 (every kernel without its L2 prefetch) or feat_kernel=0.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <sstream>

#include "kernels/act.h"
#include "kernels/lrpe_cosine.h"
#include "kernels/lrpe_rotate.h"
#include "kernels_1d_util.cuh"

namespace {

using opbench::kernels::Act;
using opbench::kernels::ActArgs;
using opbench::kernels::DType;
using opbench::kernels::KernelError;
using opbench::kernels::LrpeArgs;
using opbench::kernels::SeqStrategy;

enum class Op { act, cos, rot };
const char* op_name(Op o) { return o == Op::act ? "act" : o == Op::cos ? "lrpe_cosine" : "lrpe_rotate"; }

struct Variant {
  Act act;
  bool seq;
  const char* name;
};
const Variant kVariants[] = {{Act::none, false, "none"},       {Act::relu, false, "relu"},
                             {Act::sigmoid, false, "sigmoid"}, {Act::silu, false, "silu"},
                             {Act::softmax, false, "softmax_d"}, {Act::softmax, true, "softmax_n"}};
const DType kDtypes[] = {DType::bf16, DType::f16, DType::f32};
const SeqStrategy kSeqStrategies[] = {SeqStrategy::block, SeqStrategy::split, SeqStrategy::resident};

struct Case {
  Op op = Op::act;
  DType dt = DType::bf16;
  Act act = Act::none;
  bool seq = false;
  bool bwd = false;
  int64_t b = 1, h = 1, n = 1, d = 16;
  int theta_mode = 0;  // 0: theta (h, k); 1: (1, k) broadcast over heads; 2: (h, 1)
  int64_t offset = 0;
  SeqStrategy strat = SeqStrategy::automatic;
  bool misalign = false;  // pointers one element past a 16-byte boundary
  int slabs = 0;          // 0: check every (b, h); else this many sampled (b, h) slabs
};

std::string describe(const Case& c) {
  std::ostringstream s;
  s << op_name(c.op) << " " << (c.bwd ? "bwd" : "fwd") << " " << k1d::dname(c.dt) << " act=";
  s << (c.act == Act::softmax ? (c.seq ? "softmax_n" : "softmax_d")
        : c.act == Act::none  ? "none"
        : c.act == Act::relu  ? "relu"
        : c.act == Act::sigmoid ? "sigmoid" : "silu");
  if (c.seq) s << "(" << opbench::kernels::seq_strategy_name(c.strat) << ")";
  s << " b=" << c.b << " h=" << c.h << " n=" << c.n << " d=" << c.d;
  if (c.op != Op::act) s << " theta_mode=" << c.theta_mode << " offset=" << c.offset;
  if (c.misalign) s << " misaligned";
  return s.str();
}

// $OPBENCH_TUNING_1D, applied before any test (both values of every shipped choice are tested
// this way, e.g. prefetch=0 and prefetch=1; the default, -1, picks per variant).
const char* const g_tuning = [] {
  const char* spec = std::getenv("OPBENCH_TUNING_1D");
  if (spec) {
    const std::string err = opbench::kernels::apply_tuning_1d(spec, opbench::kernels::tuning_1d());
    if (!err.empty()) {
      std::fprintf(stderr, "kernels_1d_test: OPBENCH_TUNING_1D: %s\n", err.c_str());
      std::exit(2);
    }
  }
  return spec ? spec : "";
}();

uint64_t g_seed = 0;
uint64_t next_seed() {
  if (g_seed == 0) {
    const char* e = std::getenv("K1D_SEED");
    g_seed = e ? std::strtoull(e, nullptr, 10)
               : uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
    std::printf("[kernels_1d_test] K1D_SEED=%llu OPBENCH_TUNING_1D='%s'\n",
                static_cast<unsigned long long>(g_seed), g_tuning);
  }
  g_seed = g_seed * 6364136223846793005ull + 1442695040888963407ull;
  return g_seed;
}

// ---------------------------------------------------------------------------------------------
// float64 reference on one (b, h) slab: n rows of d features (x), rows of `orow` (output-shaped).

double sig(double v) { return 1.0 / (1.0 + std::exp(-v)); }

// The op's angle: (offset + s) * theta in float32 (OPS.md), the product rounded to float.
double f32_angle(int64_t pos, double th) {
  const float p = static_cast<float>(pos) * static_cast<float>(th);
  return p;
}

// Softmax of a slab along the features (per row) or the sequence (per column).
void softmax_ref(bool seq, int64_t n, int64_t d, const std::vector<double>& x,
                 std::vector<double>& o) {
  o.assign(size_t(n * d), 0.0);
  const int64_t outer = seq ? d : n, inner = seq ? n : d;
  for (int64_t a = 0; a < outer; ++a) {
    auto at = [&](int64_t i) { return seq ? size_t(i * d + a) : size_t(a * d + i); };
    double m = -INFINITY, l = 0;
    for (int64_t i = 0; i < inner; ++i) m = std::max(m, x[at(i)]);
    for (int64_t i = 0; i < inner; ++i) l += std::exp(x[at(i)] - m);
    for (int64_t i = 0; i < inner; ++i) o[at(i)] = std::exp(x[at(i)] - m) / l;
  }
}

void act_fwd_ref(Act a, bool seq, int64_t n, int64_t d, const std::vector<double>& x,
                 std::vector<double>& y) {
  if (a == Act::softmax) return softmax_ref(seq, n, d, x, y);
  y.resize(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    y[i] = a == Act::relu ? (v > 0 ? v : 0) : a == Act::sigmoid ? sig(v) : a == Act::silu ? v * sig(v) : v;
  }
}

void act_bwd_ref(Act a, bool seq, int64_t n, int64_t d, const std::vector<double>& x,
                 const std::vector<double>& g, std::vector<double>& dx) {
  dx.resize(x.size());
  if (a == Act::softmax) {
    std::vector<double> o;
    softmax_ref(seq, n, d, x, o);
    const int64_t outer = seq ? d : n, inner = seq ? n : d;
    for (int64_t q = 0; q < outer; ++q) {
      auto at = [&](int64_t i) { return seq ? size_t(i * d + q) : size_t(q * d + i); };
      double dot = 0;
      for (int64_t i = 0; i < inner; ++i) dot += o[at(i)] * g[at(i)];
      for (int64_t i = 0; i < inner; ++i) dx[at(i)] = o[at(i)] * (g[at(i)] - dot);
    }
    return;
  }
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i], s = sig(v);
    dx[i] = a == Act::relu      ? (v > 0 ? g[i] : 0)
            : a == Act::sigmoid ? g[i] * s * (1 - s)
            : a == Act::silu    ? g[i] * s * (1 + v * (1 - s))
                                : g[i];
  }
}

// Reference output of one slab (fwd: output-shaped rows; bwd: dx rows).
void op_ref(const Case& c, int64_t n, int64_t d, int64_t offset, const std::vector<double>& th,
            const std::vector<double>& x, const std::vector<double>& g, std::vector<double>& out) {
  const int64_t half = d / 2;
  if (!c.bwd) {
    std::vector<double> xa;
    act_fwd_ref(c.act, c.seq, n, d, x, xa);
    if (c.op == Op::act) {
      out = xa;
      return;
    }
    const int64_t orow = c.op == Op::cos ? 2 * d : d;
    out.assign(size_t(n * orow), 0.0);
    for (int64_t s = 0; s < n; ++s) {
      if (c.op == Op::cos) {
        for (int64_t k = 0; k < d; ++k) {
          const double ang = f32_angle(offset + s, th[size_t(k)]);
          out[size_t(s * orow + k)] = xa[size_t(s * d + k)] * std::cos(ang);
          out[size_t(s * orow + d + k)] = xa[size_t(s * d + k)] * std::sin(ang);
        }
      } else {
        for (int64_t k = 0; k < half; ++k) {
          const double ang = f32_angle(offset + s, th[size_t(k)]), co = std::cos(ang), si = std::sin(ang);
          const double x1 = xa[size_t(s * d + k)], x2 = xa[size_t(s * d + half + k)];
          out[size_t(s * d + k)] = x1 * co - x2 * si;
          out[size_t(s * d + half + k)] = x1 * si + x2 * co;
        }
      }
    }
    return;
  }
  std::vector<double> gg(static_cast<size_t>(n * d));
  if (c.op == Op::act) {
    gg = g;
  } else {
    const int64_t orow = c.op == Op::cos ? 2 * d : d;
    for (int64_t s = 0; s < n; ++s) {
      if (c.op == Op::cos) {
        for (int64_t k = 0; k < d; ++k) {
          const double ang = f32_angle(offset + s, th[size_t(k)]);
          gg[size_t(s * d + k)] =
              g[size_t(s * orow + k)] * std::cos(ang) + g[size_t(s * orow + d + k)] * std::sin(ang);
        }
      } else {
        for (int64_t k = 0; k < half; ++k) {
          const double ang = f32_angle(offset + s, th[size_t(k)]), co = std::cos(ang), si = std::sin(ang);
          const double d1 = g[size_t(s * d + k)], d2 = g[size_t(s * d + half + k)];
          gg[size_t(s * d + k)] = d1 * co + d2 * si;
          gg[size_t(s * d + half + k)] = -d1 * si + d2 * co;
        }
      }
    }
  }
  act_bwd_ref(c.act, c.seq, n, d, x, gg, out);
}

// ---------------------------------------------------------------------------------------------

struct Result {
  double rel = 0;
  int64_t nonfinite = 0;
  int64_t checked = 0;
};

k1d::DevBuf g_x, g_g, g_o, g_th, g_ws;

Result run_case(const Case& c, uint64_t seed) {
  const int64_t B = c.b, H = c.h, N = c.n, D = c.d;
  const int es = k1d::esize(c.dt);
  const int64_t K = c.op == Op::rot ? D / 2 : D;
  const int64_t orow = c.op == Op::cos ? 2 * D : D;
  const int64_t nx = B * H * N * D, no = B * H * N * orow;
  const int64_t pad = c.misalign ? 1 : 0;
  char* X = static_cast<char*>(g_x.get(size_t(nx + 8) * es));
  char* G = c.bwd ? static_cast<char*>(g_g.get(size_t(no + 8) * es)) : nullptr;
  const int64_t nout = c.bwd ? nx : no;
  char* O = static_cast<char*>(g_o.get(size_t(nout + 8) * es));
  void* x = X + pad * es;
  void* g = c.bwd ? G + pad * es : nullptr;
  void* o = O + pad * es;
  k1d::fill(x, c.dt, nx, seed);
  if (c.bwd) k1d::fill(g, c.dt, no, seed ^ 0xABCDEF);
  K1D_CHECK(cudaMemset(O, 0xFF, size_t(nout + 8) * es));  // NaN in every dtype

  // theta: 10000^(-k/K)-like frequencies with a random perturbation, in (0, 1].
  const int64_t th_rows = c.theta_mode == 1 ? 1 : H, th_cols = c.theta_mode == 2 ? 1 : K;
  std::vector<float> theta(static_cast<size_t>(th_rows * th_cols));
  for (int64_t r = 0; r < th_rows; ++r)
    for (int64_t k = 0; k < th_cols; ++k) {
      const double base = c.theta_mode == 2 ? 1.0 / double(r + 1) : std::pow(10000.0, -double(k) / double(K));
      const double jitter = 1.0 + 0.08 * k1d::rnd(seed ^ 0x7777, uint64_t(r * th_cols + k));
      theta[size_t(r * th_cols + k)] = float(std::min(1.0, base * jitter));
    }
  const int64_t th_sh = th_rows == 1 ? 0 : th_cols, th_sk = th_cols == 1 ? 0 : 1;
  float* th_dev = nullptr;
  if (c.op != Op::act) {
    th_dev = static_cast<float*>(g_th.get(theta.size() * sizeof(float)));
    K1D_CHECK(cudaMemcpy(th_dev, theta.data(), theta.size() * sizeof(float), cudaMemcpyHostToDevice));
  }

  if (c.op == Op::act) {
    ActArgs a;
    a.dtype = c.dt, a.act = c.act, a.act_dim = c.seq ? -2 : -1;
    a.b = B, a.h = H, a.n = N, a.d = D;
    a.x = x, a.dout = g, a.out = o;
    a.strategy = c.strat;
    a.workspace_bytes = opbench::kernels::act_workspace_bytes(a, c.bwd);
    a.workspace = a.workspace_bytes ? g_ws.get(a.workspace_bytes) : nullptr;
    if (a.workspace) K1D_CHECK(cudaMemset(a.workspace, 0xFF, a.workspace_bytes));
    if (c.bwd) opbench::kernels::act_backward(a);
    else opbench::kernels::act_forward(a);
  } else {
    LrpeArgs a;
    a.dtype = c.dt, a.act = c.act, a.act_dim = c.seq ? 1 : -1;
    a.b = B, a.n = N, a.h = H, a.d = D, a.offset = c.offset;
    a.x = x, a.theta = th_dev, a.theta_sh = th_sh, a.theta_sk = th_sk;
    a.dout = g, a.out = o;
    a.strategy = c.strat;
    const bool rot = c.op == Op::rot;
    a.workspace_bytes = rot ? opbench::kernels::lrpe_rotate_workspace_bytes(a, c.bwd)
                            : opbench::kernels::lrpe_cosine_workspace_bytes(a, c.bwd);
    a.workspace = a.workspace_bytes ? g_ws.get(a.workspace_bytes) : nullptr;
    if (a.workspace) K1D_CHECK(cudaMemset(a.workspace, 0xFF, a.workspace_bytes));
    if (rot) c.bwd ? opbench::kernels::lrpe_rotate_backward(a) : opbench::kernels::lrpe_rotate_forward(a);
    else c.bwd ? opbench::kernels::lrpe_cosine_backward(a) : opbench::kernels::lrpe_cosine_forward(a);
  }
  K1D_CHECK(cudaGetLastError());
  K1D_CHECK(cudaDeviceSynchronize());

  // The (b, h) slabs to check.
  std::vector<std::pair<int64_t, int64_t>> slabs;
  if (c.slabs == 0) {
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h) slabs.push_back({b, h});
  } else {
    slabs.push_back({B - 1, H - 1});
    std::mt19937_64 r(seed);
    while (int(slabs.size()) < c.slabs) slabs.push_back({int64_t(r() % B), int64_t(r() % H)});
  }
  Result res;
  double num = 0, den = 0;
  std::vector<double> xs, gs, os, ref;
  for (auto [b, h] : slabs) {
    // Row (b, s = 0, h) offsets and row strides, in elements.
    int64_t x0, xs_stride, o0, o_stride;
    if (c.op == Op::act) {
      x0 = (b * H + h) * N * D, xs_stride = D;
      o0 = (b * H + h) * N * orow, o_stride = orow;
    } else {
      x0 = (b * N * H + h) * D, xs_stride = H * D;
      o0 = (b * N * H + h) * orow, o_stride = H * orow;
    }
    k1d::download(xs, static_cast<char*>(x) + x0 * es, c.dt, N, D, xs_stride);
    if (c.bwd) {
      k1d::download(gs, static_cast<char*>(g) + o0 * es, c.dt, N, orow, o_stride);
      k1d::download(os, static_cast<char*>(o) + x0 * es, c.dt, N, D, xs_stride);
    } else {
      k1d::download(os, static_cast<char*>(o) + o0 * es, c.dt, N, orow, o_stride);
    }
    std::vector<double> th(static_cast<size_t>(K));
    for (int64_t k = 0; k < K; ++k) th[size_t(k)] = theta[size_t(h * th_sh + k * th_sk)];
    op_ref(c, N, D, c.offset, th, xs, gs, ref);
    for (size_t i = 0; i < ref.size(); ++i) {
      if (!std::isfinite(os[i])) ++res.nonfinite;
      num += (os[i] - ref[i]) * (os[i] - ref[i]);
      den += ref[i] * ref[i];
    }
    res.checked += int64_t(ref.size());
  }
  // A zero reference (softmax over n = 1 has a zero gradient): the absolute error instead.
  res.rel = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  return res;
}

double tol(DType t) { return t == DType::f32 ? 1e-5 : 1e-2; }

struct Tally {
  int checks = 0, fails = 0;
  double worst[3] = {0, 0, 0};  // by dtype: bf16, fp16, fp32
  void report(const char* what) const {
    std::printf("[kernels_1d_test] %s: %d checks, %d failed; worst rel bf16 %.3g fp16 %.3g fp32 %.3g\n",
                what, checks, fails, worst[0], worst[1], worst[2]);
  }
};

void expect_case(const Case& c, Tally& t) {
  const Result r = run_case(c, next_seed());
  ++t.checks;
  const int di = c.dt == DType::bf16 ? 0 : c.dt == DType::f16 ? 1 : 2;
  const bool ok = r.nonfinite == 0 && r.rel < tol(c.dt);  // NaN rel fails too
  if (r.rel > t.worst[di] || std::isnan(r.rel)) t.worst[di] = r.rel;
  if (!ok) {
    ++t.fails;
    ADD_FAILURE() << describe(c) << ": rel " << r.rel << " (tol " << tol(c.dt) << "), "
                  << r.nonfinite << " non-finite of " << r.checked;
  }
}

#define REQUIRE_GPU() \
  if (!k1d::have_gpu()) GTEST_SKIP() << "no CUDA device"

// The n x d grid for one op: every dtype, act variant (both strategies for softmax over n), mode.
void grid_for(Op op, Tally& t) {
  const int64_t ns[] = {1, 7, 1000, 4097};
  const int64_t ds[] = {16, 64, 96, 128, 256};
  for (DType dt : kDtypes)
    for (const Variant& v : kVariants)
      for (bool bwd : {false, true})
        for (int64_t n : ns)
          for (int64_t d : ds) {
            Case c;
            c.op = op, c.dt = dt, c.act = v.act, c.seq = v.seq, c.bwd = bwd;
            c.n = n, c.d = d;
            c.offset = op == Op::act ? 0 : 37;
            c.theta_mode = int((n + d) % 3);
            if (v.seq) {
              for (SeqStrategy st : kSeqStrategies) {
                c.strat = st;
                expect_case(c, t);
              }
            } else {
              expect_case(c, t);
            }
          }
}

TEST(Kernels1d, ActGrid) {
  REQUIRE_GPU();
  Tally t;
  grid_for(Op::act, t);
  t.report("act grid");
}

// act's softmax over d on both paths (its own feature-softmax kernel and the rows1d row
// kernel), every dtype: row lengths of 1 to 32 units (d 16 .. 256), n not a multiple of the
// rows per block, and d = 96 (not a power of two of units: always the row kernel).
TEST(Kernels1d, ActFeatureSoftmaxPaths) {
  REQUIRE_GPU();
  const opbench::kernels::Tuning1d saved = opbench::kernels::tuning_1d();
  Tally t;
  for (int own : {0, 1})
    for (DType dt : kDtypes)
      for (bool bwd : {false, true})
        for (int64_t n : {int64_t(1), int64_t(7), int64_t(1000)})
          for (int64_t d : {16, 64, 96, 128, 256}) {
            auto& tu = opbench::kernels::tuning_1d();
            tu = saved;
            tu.feat_kernel = own;
            Case c;
            c.op = Op::act, c.dt = dt, c.act = Act::softmax, c.seq = false, c.bwd = bwd;
            c.b = 2, c.h = 3, c.n = n, c.d = d;
            expect_case(c, t);
          }
  opbench::kernels::tuning_1d() = saved;
  t.report("act feature softmax paths");
}

TEST(Kernels1d, LrpeCosineGrid) {
  REQUIRE_GPU();
  Tally t;
  grid_for(Op::cos, t);
  t.report("lrpe_cosine grid");
}

TEST(Kernels1d, LrpeRotateGrid) {
  REQUIRE_GPU();
  Tally t;
  grid_for(Op::rot, t);
  t.report("lrpe_rotate grid");
}

// b, h > 1 (tiles of several heads, batch offsets), every theta broadcast, both strategies.
TEST(Kernels1d, BatchHeadsBroadcast) {
  REQUIRE_GPU();
  Tally t;
  struct S { int64_t b, h, n, d; } shapes[] = {{2, 12, 77, 64}, {3, 3, 300, 128}, {2, 4, 513, 96}, {1, 16, 33, 256}};
  for (Op op : {Op::act, Op::cos, Op::rot})
    for (const S& s : shapes)
      for (const Variant& v : kVariants)
        for (bool bwd : {false, true})
          for (int tm = 0; tm < (op == Op::act ? 1 : 3); ++tm) {
            Case c;
            c.op = op, c.dt = (s.n % 2) ? DType::bf16 : DType::f32, c.act = v.act, c.seq = v.seq;
            c.bwd = bwd, c.b = s.b, c.h = s.h, c.n = s.n, c.d = s.d, c.theta_mode = tm;
            c.offset = 5 + tm;
            if (v.seq) {
              for (SeqStrategy st : kSeqStrategies) {
                c.strat = st;
                expect_case(c, t);
              }
            } else {
              expect_case(c, t);
            }
          }
  t.report("batch/heads/broadcast");
}

// The scalar path: d not a multiple of the 16-byte vector, and misaligned pointers.
TEST(Kernels1d, ScalarPath) {
  REQUIRE_GPU();
  Tally t;
  for (Op op : {Op::act, Op::cos, Op::rot})
    for (DType dt : kDtypes)
      for (const Variant& v : kVariants)
        for (bool bwd : {false, true}) {
          Case c;
          c.op = op, c.dt = dt, c.act = v.act, c.seq = v.seq, c.bwd = bwd;
          c.b = 2, c.h = 3, c.n = 129, c.offset = 3;
          c.d = op == Op::rot ? 34 : 20;  // rotate: halves of 17
          expect_case(c, t);
          c.d = op == Op::rot ? 250 : 249;
          c.n = 9;
          expect_case(c, t);
          c.d = 128, c.n = 65, c.misalign = true;
          expect_case(c, t);
        }
  t.report("scalar path");
}

// A small set covering every kernel kind (vector bf16 / fp32 and scalar paths, each act, both
// strategies, both modes): cheap enough to run under compute-sanitizer.
TEST(Kernels1d, Sanitize) {
  REQUIRE_GPU();
  Tally t;
  for (Op op : {Op::act, Op::cos, Op::rot})
    for (int path = 0; path < 3; ++path)
      for (const Variant& v : kVariants)
        for (bool bwd : {false, true})
          for (SeqStrategy st : kSeqStrategies) {
            if (!v.seq && st != SeqStrategy::block) continue;
            if (path == 2 && st == SeqStrategy::resident) continue;  // 16-byte units only
            Case c;
            c.op = op, c.act = v.act, c.seq = v.seq, c.bwd = bwd, c.strat = st;
            c.dt = path == 1 ? DType::f32 : DType::bf16;
            c.b = 2, c.h = 4, c.n = 70, c.d = path == 2 ? (op == Op::rot ? 34 : 20) : 96;
            c.offset = 9, c.theta_mode = 1;
            expect_case(c, t);
          }
  t.report("sanitize subset");
}

// Restores the process-wide tuning when a test that changes it ends (also on a failure).
struct TuningGuard {
  const opbench::kernels::Tuning1d saved = opbench::kernels::tuning_1d();
  ~TuningGuard() { opbench::kernels::tuning_1d() = saved; }
};

// Softmax over n, resident strategy under its tunings: chunks of one step (so that the odd n
// below cut a group into up to 65 chunks, the last one partial), every column-group count,
// 256 and 512 threads, 2 to 4 stages, two warp teams or one; d = 96 leaves column groups
// without units; both layouts.
TEST(Kernels1d, ResidentTunings) {
  REQUIRE_GPU();
  const TuningGuard guard;
  const opbench::kernels::Tuning1d& saved = guard.saved;
  Tally t;
  struct Tu { int cg, threads, stages, kb, teams; } tus[] = {
      {1, 512, 2, 1, 0}, {2, 256, 2, 1, 1}, {4, 256, 4, 1, 0}, {8, 256, 3, 1, 1}, {-1, 512, 3, 8, 1},
      {-1, 512, 2, 1, 1}, {-1, -1, -1, -1, 0}, {-1, -1, -1, -1, -1}};
  struct S { int64_t b, h, n, d; } shapes[] = {{2, 3, 1000, 128}, {1, 2, 4097, 96}, {3, 1, 333, 64}, {1, 2, 2049, 256}};
  for (const Tu& tu : tus)
    for (Op op : {Op::act, Op::cos, Op::rot})
      for (const S& sh : shapes)
        for (bool bwd : {false, true}) {
          auto& g = opbench::kernels::tuning_1d();
          g = saved;
          g.res_cg = tu.cg, g.res_threads = tu.threads, g.res_stages = tu.stages, g.res_stage_kb = tu.kb;
          g.res_teams = tu.teams;
          Case c;
          // float32 with the planned tuning only (a step of 512 threads of float32 backward
          // rows does not fit the shared memory)
          const bool f32 = (sh.n + sh.d) % 3 == 0 && tu.threads < 0;
          c.op = op, c.dt = f32 ? DType::f32 : (sh.n % 2 ? DType::bf16 : DType::f16);
          c.act = Act::softmax, c.seq = true, c.bwd = bwd, c.strat = SeqStrategy::resident;
          c.b = sh.b, c.h = sh.h, c.n = sh.n, c.d = sh.d, c.offset = 11, c.theta_mode = int(sh.n % 3);
          expect_case(c, t);
        }
  t.report("resident tunings");
}

// fp32 at large positions (angles up to ~1e6 rad): sin/cos of the float32 angle, range-reduced.
TEST(Kernels1d, LargeAnglesFp32) {
  REQUIRE_GPU();
  Tally t;
  for (Op op : {Op::cos, Op::rot})
    for (int64_t offset : {int64_t(12345), int64_t(1000000)})
      for (Act a : {Act::none, Act::silu})
        for (bool bwd : {false, true}) {
          Case c;
          c.op = op, c.dt = DType::f32, c.act = a, c.bwd = bwd;
          c.b = 1, c.h = 2, c.n = 32768, c.d = 64, c.offset = offset;
          expect_case(c, t);
        }
  t.report("large angles fp32");
}

// The benchmark's shape (steps > 1 per tile, many waves), checked on sampled (b, h) slabs.
TEST(Kernels1d, BenchShapeSlabs) {
  REQUIRE_GPU();
  Tally t;
  struct V2 { Act act; bool seq; SeqStrategy st; } vs[] = {
      {Act::relu, false, SeqStrategy::automatic}, {Act::silu, false, SeqStrategy::automatic},
      {Act::softmax, false, SeqStrategy::automatic}, {Act::softmax, true, SeqStrategy::block},
      {Act::softmax, true, SeqStrategy::split}, {Act::softmax, true, SeqStrategy::resident}};
  for (Op op : {Op::act, Op::cos, Op::rot})
    for (const V2& v : vs)
      for (bool bwd : {false, true}) {
        Case c;
        c.op = op, c.dt = DType::bf16, c.act = v.act, c.seq = v.seq, c.strat = v.st, c.bwd = bwd;
        c.b = 12, c.h = 12, c.n = 32768, c.d = 128, c.offset = 0, c.slabs = 2;
        expect_case(c, t);
      }
  t.report("bench shape (2 slabs each)");
}

template <class F>
void expect_error(F f, const char* needle) {
  try {
    f();
    ADD_FAILURE() << "no KernelError; expected one mentioning '" << needle << "'";
  } catch (const KernelError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "multi-line: " << e.what();
  }
}

TEST(Kernels1d, Errors) {
  REQUIRE_GPU();
  void* buf = g_x.get(1 << 20);
  float* th = static_cast<float*>(g_th.get(1 << 16));
  ActArgs a;
  a.dtype = DType::bf16, a.b = 1, a.h = 1, a.n = 4, a.d = 300, a.x = buf, a.out = buf;
  a.act = Act::softmax, a.act_dim = -1;
  expect_error([&] { opbench::kernels::act_forward(a); }, "d <= 256");
  a.d = 64, a.act_dim = 1;
  expect_error([&] { opbench::kernels::act_forward(a); }, "act_dim");
  a.act_dim = -1, a.n = 0;
  expect_error([&] { opbench::kernels::act_forward(a); }, ">= 1");
  a.n = 4, a.act_dim = -2, a.strategy = SeqStrategy::split, a.workspace = nullptr, a.workspace_bytes = 0;
  expect_error([&] { opbench::kernels::act_forward(a); }, "workspace");
  LrpeArgs l;
  l.dtype = DType::f16, l.b = 1, l.n = 4, l.h = 2, l.d = 97, l.x = buf, l.out = buf, l.theta = th;
  expect_error([&] { opbench::kernels::lrpe_rotate_forward(l); }, "even");
  l.d = 64, l.offset = -1;
  expect_error([&] { opbench::kernels::lrpe_cosine_forward(l); }, "offset");
  l.offset = 0, l.act = Act::softmax, l.act_dim = -2;
  expect_error([&] { opbench::kernels::lrpe_cosine_forward(l); }, "act_dim");
  l.act = Act::none, l.theta = nullptr;
  expect_error([&] { opbench::kernels::lrpe_rotate_backward(l); }, "theta");
  l.theta = th, l.dout = nullptr;
  expect_error([&] { opbench::kernels::lrpe_cosine_backward(l); }, "null");
  // The resident strategy asked for where it cannot run (single elements: d = 20 in bf16).
  a.act = Act::softmax, a.act_dim = -2, a.d = 20, a.n = 64, a.strategy = SeqStrategy::resident;
  a.workspace_bytes = opbench::kernels::act_workspace_bytes(a, false);
  a.workspace = a.workspace_bytes ? g_ws.get(a.workspace_bytes) : nullptr;
  expect_error([&] { opbench::kernels::act_forward(a); }, "resident");
}

}  // namespace

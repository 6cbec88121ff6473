// The eager baselines (baselines/eager) against independent float64 references written from
// docs/ops.md's formulas in plain loops, forward and backward, fp32 and bf16 storage; directly and
// through the Provider interface (prepare + Call).
#include <ATen/record_function.h>
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>

#include <cmath>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "baselines/eager/eager.h"
#include "ops/op.hpp"

namespace {

using opbench::Call;
using opbench::Inputs;
using opbench::Params;
using opbench::Provider;
using Vec = std::vector<double>;

struct Dtype {
  at::ScalarType type;
  const char* name;
  double tol;  // relative error (2-norm) allowed against float64
};
// The baselines compute in the storage dtype: a bf16 result carries the roundings of every op
// in its chain (up to ~4 on one element: sigmoid's backward rounds s, 1 - s and two products),
// each up to the unit roundoff u = 2^-8. So bf16 is allowed 5u (the small cases' norms are
// dominated by a few elements); fp32 stays tight.
const double kBf16Roundoff = 1.0 / 256;
const Dtype kDtypes[] = {{at::kFloat, "fp32", 1e-5}, {at::kBFloat16, "bf16", 5 * kBf16Roundoff}};
const char* const kActs[] = {"none", "relu", "sigmoid", "silu", "softmax"};

// ---------------------------------------------------------------- helpers

Vec to_vec(const at::Tensor& t) {
  const at::Tensor c = t.detach().to(at::kCPU, at::kDouble).contiguous();
  return Vec(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

// ||got - ref|| / ||ref|| after checking the shape and dtype.
double rel_err(const at::Tensor& got, const Vec& ref, const std::vector<int64_t>& shape,
               at::ScalarType dtype) {
  EXPECT_EQ(got.sizes().vec(), shape);
  EXPECT_EQ(got.scalar_type(), dtype);
  const Vec g = to_vec(got);
  EXPECT_EQ(g.size(), ref.size());
  if (g.size() != ref.size()) return 1e30;
  double num = 0, den = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    num += (g[i] - ref[i]) * (g[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  EXPECT_GT(den, 0.0);
  return std::sqrt(num / den);
}

at::Tensor randn(const std::vector<int64_t>& shape, at::ScalarType dtype) {
  return at::randn(shape, at::kFloat).to(dtype);
}
at::Tensor rand_theta(int64_t rows, int64_t cols) {
  return at::rand({rows, cols}, at::kFloat) * 1.5 + 0.05;
}

const Provider& provider(const std::string& op, const std::string& name) {
  if (const Provider* p = opbench::find_provider(op, name)) return *p;
  throw std::runtime_error("no provider " + op + "/" + name);
}

at::Tensor run_fwd(const std::string& op, const std::string& name, Params p,
                   const std::vector<at::Tensor>& tensors) {
  p.set("mode", std::string("fwd"));
  Inputs in;
  in.tensors = tensors;
  const Call call = provider(op, name).prepare(p, in);
  const std::vector<at::Tensor> out = call();
  EXPECT_EQ(out.size(), 1u);
  return out.at(0);
}

// Runs the bwd call twice (the graph is retained) and checks both give the same dx.
at::Tensor run_bwd(const std::string& op, Params p, const std::vector<at::Tensor>& tensors,
                   const at::Tensor& grad_out) {
  p.set("mode", std::string("bwd"));
  Inputs in;
  in.tensors = tensors;
  in.grad_out = grad_out;
  const Call call = provider(op, "torch").prepare(p, in);
  const std::vector<at::Tensor> first = call();
  const std::vector<at::Tensor> second = call();
  EXPECT_EQ(first.size(), 1u);
  EXPECT_EQ(second.size(), 1u);
  EXPECT_TRUE(at::equal(first.at(0), second.at(0)));
  EXPECT_FALSE(tensors[0].requires_grad());
  EXPECT_FALSE(tensors[0].grad().defined());
  return first.at(0);
}

Params act_params(const std::string& act, int64_t act_dim) {
  Params p;
  p.set("act", act);
  p.set("act_dim", act_dim);
  return p;
}

// The ATen ops a call runs (RecordFunction callbacks), each with the dtypes and sizes of its
// tensor inputs (0-dim ones, the wrapped scalars of `t * 0.5`, left out) and its int arguments.
struct OpCall {
  std::string name;
  std::vector<at::ScalarType> dtypes;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<int64_t> ints;
};
thread_local std::vector<OpCall>* g_recorded = nullptr;

std::unique_ptr<at::ObserverContext> record_op(const at::RecordFunction& fn) {
  if (g_recorded == nullptr) return nullptr;
  OpCall call{fn.name(), {}, {}, {}};
  for (const c10::IValue& v : fn.inputs()) {
    if (v.isTensor() && v.toTensor().defined() && v.toTensor().dim() > 0) {
      call.dtypes.push_back(v.toTensor().scalar_type());
      call.shapes.push_back(v.toTensor().sizes().vec());
    } else if (v.isInt()) {
      call.ints.push_back(v.toInt());
    }
  }
  g_recorded->push_back(std::move(call));
  return nullptr;
}

std::vector<OpCall> recorded_ops(const std::function<void()>& f) {
  std::vector<OpCall> ops;
  g_recorded = &ops;
  const at::CallbackHandle handle =
      at::addThreadLocalCallback(at::RecordFunctionCallback(record_op).needsInputs(true));
  f();
  at::removeCallback(handle);
  g_recorded = nullptr;
  return ops;
}

// Every tensor the recorded ops read has dtype `want`.
void expect_only_dtype(const std::vector<OpCall>& ops, at::ScalarType want) {
  EXPECT_FALSE(ops.empty());
  for (const OpCall& op : ops)
    for (at::ScalarType t : op.dtypes) EXPECT_EQ(t, want) << op.name;
}

// ---------------------------------------------------------------- float64 references

double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

int64_t stride_of(const std::vector<int64_t>& dims, int axis) {
  int64_t s = 1;
  for (size_t a = axis + 1; a < dims.size(); ++a) s *= dims[a];
  return s;
}

// Calls fn(first, stride, len) once per line along `axis`.
template <class Fn>
void for_lines(const std::vector<int64_t>& dims, int axis, Fn fn) {
  int64_t total = 1;
  for (int64_t v : dims) total *= v;
  const int64_t stride = stride_of(dims, axis), len = dims[axis];
  for (int64_t i = 0; i < total; ++i)
    if ((i / stride) % len == 0) fn(i, stride, len);
}

Vec ref_act(const Vec& x, const std::vector<int64_t>& dims, const std::string& act, int axis) {
  Vec o(x.size());
  if (act == "softmax") {
    for_lines(dims, axis, [&](int64_t i0, int64_t st, int64_t len) {
      double mx = -INFINITY, sum = 0;
      for (int64_t t = 0; t < len; ++t) mx = std::max(mx, x[i0 + t * st]);
      for (int64_t t = 0; t < len; ++t) sum += std::exp(x[i0 + t * st] - mx);
      for (int64_t t = 0; t < len; ++t) o[i0 + t * st] = std::exp(x[i0 + t * st] - mx) / sum;
    });
    return o;
  }
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    if (act == "none") o[i] = v;
    else if (act == "relu") o[i] = v >= 0 ? v : 0;
    else if (act == "sigmoid") o[i] = sigmoid(v);
    else if (act == "silu") o[i] = v * sigmoid(v);
    else throw std::runtime_error("ref_act: " + act);
  }
  return o;
}

Vec ref_act_bwd(const Vec& x, const Vec& dout, const std::vector<int64_t>& dims,
                const std::string& act, int axis) {
  Vec dx(x.size());
  if (act == "softmax") {
    const Vec o = ref_act(x, dims, act, axis);
    for_lines(dims, axis, [&](int64_t i0, int64_t st, int64_t len) {
      double s = 0;
      for (int64_t t = 0; t < len; ++t) s += o[i0 + t * st] * dout[i0 + t * st];
      for (int64_t t = 0; t < len; ++t) {
        const int64_t i = i0 + t * st;
        dx[i] = o[i] * dout[i] - o[i] * s;
      }
    });
    return dx;
  }
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i], g = dout[i];
    if (act == "none") dx[i] = g;
    else if (act == "relu") dx[i] = v >= 0 ? g : 0;
    else if (act == "sigmoid") dx[i] = g * sigmoid(v) * (1 - sigmoid(v));
    else if (act == "silu") dx[i] = g * sigmoid(v) * (1 + v * (1 - sigmoid(v)));
    else throw std::runtime_error("ref_act_bwd: " + act);
  }
  return dx;
}

int axis_of(int64_t act_dim, size_t rank) {
  return static_cast<int>(act_dim < 0 ? act_dim + static_cast<int64_t>(rank) : act_dim);
}

// theta, possibly broadcast: (rows, cols) with rows in {1, h}, cols in {1, k}.
struct Theta {
  Vec v;
  int64_t rows, cols;
  explicit Theta(const at::Tensor& t) : v(to_vec(t)), rows(t.size(0)), cols(t.size(1)) {}
  double at(int64_t h, int64_t k) const {
    return v[(rows == 1 ? 0 : h) * cols + (cols == 1 ? 0 : k)];
  }
};
// docs/ops.md: the angle is a float32 product of the position and theta.
double angle32(int64_t pos, double theta) {
  return static_cast<double>(static_cast<float>(pos) * static_cast<float>(theta));
}

struct Lrpe1d {
  int64_t b, n, h, d, offset;
  std::string act;
  int64_t act_dim;  // -1 or 1
  int64_t at(int64_t bi, int64_t s, int64_t hi, int64_t k, int64_t width) const {
    return ((bi * n + s) * h + hi) * width + k;
  }
  std::vector<int64_t> dims() const { return {b, n, h, d}; }
  int axis() const { return axis_of(act_dim, 4); }
};

Vec ref_cosine(const Lrpe1d& c, const Vec& x, const Theta& th) {
  const Vec xa = ref_act(x, c.dims(), c.act, c.axis());
  Vec o(x.size() * 2);
  for (int64_t bi = 0; bi < c.b; ++bi)
    for (int64_t s = 0; s < c.n; ++s)
      for (int64_t hi = 0; hi < c.h; ++hi)
        for (int64_t k = 0; k < c.d; ++k) {
          const double a = angle32(c.offset + s, th.at(hi, k));
          const double v = xa[c.at(bi, s, hi, k, c.d)];
          o[c.at(bi, s, hi, k, 2 * c.d)] = v * std::cos(a);
          o[c.at(bi, s, hi, c.d + k, 2 * c.d)] = v * std::sin(a);
        }
  return o;
}

Vec ref_cosine_bwd(const Lrpe1d& c, const Vec& x, const Vec& dout, const Theta& th) {
  Vec dxa(x.size());
  for (int64_t bi = 0; bi < c.b; ++bi)
    for (int64_t s = 0; s < c.n; ++s)
      for (int64_t hi = 0; hi < c.h; ++hi)
        for (int64_t k = 0; k < c.d; ++k) {
          const double a = angle32(c.offset + s, th.at(hi, k));
          dxa[c.at(bi, s, hi, k, c.d)] = dout[c.at(bi, s, hi, k, 2 * c.d)] * std::cos(a) +
                                         dout[c.at(bi, s, hi, c.d + k, 2 * c.d)] * std::sin(a);
        }
  return ref_act_bwd(x, dxa, c.dims(), c.act, c.axis());
}

Vec ref_rotate(const Lrpe1d& c, const Vec& x, const Theta& th) {
  const Vec xa = ref_act(x, c.dims(), c.act, c.axis());
  const int64_t half = c.d / 2;
  Vec o(x.size());
  for (int64_t bi = 0; bi < c.b; ++bi)
    for (int64_t s = 0; s < c.n; ++s)
      for (int64_t hi = 0; hi < c.h; ++hi)
        for (int64_t k = 0; k < half; ++k) {
          const double a = angle32(c.offset + s, th.at(hi, k));
          const double x1 = xa[c.at(bi, s, hi, k, c.d)], x2 = xa[c.at(bi, s, hi, half + k, c.d)];
          o[c.at(bi, s, hi, k, c.d)] = x1 * std::cos(a) - x2 * std::sin(a);
          o[c.at(bi, s, hi, half + k, c.d)] = x1 * std::sin(a) + x2 * std::cos(a);
        }
  return o;
}

Vec ref_rotate_bwd(const Lrpe1d& c, const Vec& x, const Vec& dout, const Theta& th) {
  const int64_t half = c.d / 2;
  Vec dxa(x.size());
  for (int64_t bi = 0; bi < c.b; ++bi)
    for (int64_t s = 0; s < c.n; ++s)
      for (int64_t hi = 0; hi < c.h; ++hi)
        for (int64_t k = 0; k < half; ++k) {
          const double a = angle32(c.offset + s, th.at(hi, k));
          const double d1 = dout[c.at(bi, s, hi, k, c.d)];
          const double d2 = dout[c.at(bi, s, hi, half + k, c.d)];
          dxa[c.at(bi, s, hi, k, c.d)] = d1 * std::cos(a) + d2 * std::sin(a);
          dxa[c.at(bi, s, hi, half + k, c.d)] = -d1 * std::sin(a) + d2 * std::cos(a);
        }
  return ref_act_bwd(x, dxa, c.dims(), c.act, c.axis());
}

struct LrpeMd {
  int64_t b, h, d, l, e;
  std::vector<int64_t> grid;
  std::string act;
  int64_t act_dim;  // -1 or -2
  int64_t N() const {
    int64_t v = 1;
    for (int64_t s : grid) v *= s;
    return v;
  }
  int64_t L() const { return l + N(); }
  std::vector<int64_t> dims() const { return {b, h, L(), d}; }
  int axis() const { return axis_of(act_dim, 4); }
  int64_t at(int64_t bi, int64_t hi, int64_t t, int64_t j, int64_t width) const {
    return ((bi * h + hi) * L() + t) * width + j;
  }
  // The angle of token t (extra tokens first), feature j.
  double angle(const Theta& th, int64_t hi, int64_t t, int64_t j) const {
    if (t < l) return 0;
    int64_t s = t - l;
    std::vector<int64_t> c(grid.size());
    for (size_t a = grid.size(); a-- > 0;) {
      c[a] = s % grid[a];
      s /= grid[a];
    }
    return angle32(c[j / e], th.at(hi, j % e));
  }
};

Vec ref_md(const LrpeMd& c, const Vec& x, const Theta& th) {
  const Vec xa = ref_act(x, c.dims(), c.act, c.axis());
  Vec o(x.size() * 2);
  for (int64_t bi = 0; bi < c.b; ++bi)
    for (int64_t hi = 0; hi < c.h; ++hi)
      for (int64_t t = 0; t < c.L(); ++t)
        for (int64_t j = 0; j < c.d; ++j) {
          const double a = c.angle(th, hi, t, j), v = xa[c.at(bi, hi, t, j, c.d)];
          o[c.at(bi, hi, t, j, 2 * c.d)] = v * std::cos(a);
          o[c.at(bi, hi, t, c.d + j, 2 * c.d)] = v * std::sin(a);
        }
  return o;
}

Vec ref_md_bwd(const LrpeMd& c, const Vec& x, const Vec& dout, const Theta& th) {
  Vec dxa(x.size());
  for (int64_t bi = 0; bi < c.b; ++bi)
    for (int64_t hi = 0; hi < c.h; ++hi)
      for (int64_t t = 0; t < c.L(); ++t)
        for (int64_t j = 0; j < c.d; ++j) {
          const double a = c.angle(th, hi, t, j);
          dxa[c.at(bi, hi, t, j, c.d)] = dout[c.at(bi, hi, t, j, 2 * c.d)] * std::cos(a) +
                                         dout[c.at(bi, hi, t, c.d + j, 2 * c.d)] * std::sin(a);
        }
  return ref_act_bwd(x, dxa, c.dims(), c.act, c.axis());
}

// tpa_decode, straight from the formulas: o (b, 1, h, e).
Vec ref_tpa(const std::vector<at::Tensor>& in, double scale, double scale_q, double scale_k,
            double scale_v) {
  const int64_t b = in[0].size(0), h = in[0].size(2), r = in[0].size(3), m = in[1].size(1),
                d = in[3].size(3), e = in[5].size(2);
  const Vec aq = to_vec(in[0]), ak = to_vec(in[1]), av = to_vec(in[2]), bq = to_vec(in[3]),
            bk = to_vec(in[4]), bv = to_vec(in[5]);
  Vec o(b * h * e);
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t hi = 0; hi < h; ++hi) {
      Vec q(d, 0.0), score(m), k(d), v(e);
      for (int64_t j = 0; j < d; ++j) {
        for (int64_t ri = 0; ri < r; ++ri)
          q[j] += aq[(bi * h + hi) * r + ri] * bq[(bi * r + ri) * d + j];
        q[j] *= scale_q;
      }
      double mx = -INFINITY;
      for (int64_t t = 0; t < m; ++t) {
        double dot = 0;
        for (int64_t j = 0; j < d; ++j) {
          k[j] = scale_k * ak[(bi * m + t) * h + hi] * bk[(bi * m + t) * d + j];
          dot += q[j] * k[j];
        }
        score[t] = scale * dot;
        mx = std::max(mx, score[t]);
      }
      double sum = 0;
      for (int64_t t = 0; t < m; ++t) sum += std::exp(score[t] - mx);
      for (int64_t t = 0; t < m; ++t) {
        const double p = std::exp(score[t] - mx) / sum;
        for (int64_t c = 0; c < e; ++c) {
          const double vv = scale_v * av[(bi * m + t) * h + hi] * bv[(bi * m + t) * e + c];
          o[(bi * h + hi) * e + c] += p * vv;
        }
      }
    }
  return o;
}

// ---------------------------------------------------------------- reference self-checks

// The float64 references are only as good as their formulas: check the backward ones
// against a central finite difference of the forward ones.
TEST(EagerReference, BackwardFormulasMatchFiniteDifferences) {
  at::manual_seed(11);
  const Lrpe1d c{1, 3, 2, 4, 2, "softmax", 1};
  const Vec x = to_vec(randn({1, 3, 2, 4}, at::kFloat));
  const Theta th(rand_theta(2, 4));
  const Theta thr(rand_theta(2, 2));
  const LrpeMd md{1, 2, 6, 1, 2, {2, 2, 1}, "silu", -2};
  const Vec xm = to_vec(randn({1, 2, 5, 6}, at::kFloat));
  const Theta thm(rand_theta(2, 2));
  struct Case {
    std::function<Vec(const Vec&)> f;
    std::function<Vec(const Vec&, const Vec&)> df;
    Vec x;
  };
  std::vector<Case> cases;
  for (const char* act : kActs) {
    for (int axis : {1, 3}) {
      const std::vector<int64_t> dims = {1, 3, 2, 4};
      cases.push_back({[=](const Vec& v) { return ref_act(v, dims, act, axis); },
                       [=](const Vec& v, const Vec& g) { return ref_act_bwd(v, g, dims, act, axis); },
                       x});
    }
  }
  cases.push_back({[&](const Vec& v) { return ref_cosine(c, v, th); },
                   [&](const Vec& v, const Vec& g) { return ref_cosine_bwd(c, v, g, th); }, x});
  cases.push_back({[&](const Vec& v) { return ref_rotate(c, v, thr); },
                   [&](const Vec& v, const Vec& g) { return ref_rotate_bwd(c, v, g, thr); }, x});
  cases.push_back({[&](const Vec& v) { return ref_md(md, v, thm); },
                   [&](const Vec& v, const Vec& g) { return ref_md_bwd(md, v, g, thm); }, xm});
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    SCOPED_TRACE("case " + std::to_string(ci));
    const Case& k = cases[ci];
    const Vec o = k.f(k.x);
    Vec g(o.size());
    for (size_t i = 0; i < g.size(); ++i) g[i] = std::sin(1.0 + 0.7 * i);
    const Vec dx = k.df(k.x, g);
    ASSERT_EQ(dx.size(), k.x.size());
    for (size_t i = 0; i < k.x.size(); ++i) {
      const double eps = 1e-6;
      Vec xp = k.x, xm2 = k.x;
      xp[i] += eps;
      xm2[i] -= eps;
      const Vec op = k.f(xp), om = k.f(xm2);
      double fd = 0;
      for (size_t j = 0; j < g.size(); ++j) fd += g[j] * (op[j] - om[j]) / (2 * eps);
      EXPECT_NEAR(dx[i], fd, 1e-6 * (1 + std::fabs(fd))) << "element " << i;
    }
  }
}

// ---------------------------------------------------------------- act

TEST(EagerAct, ForwardAndBackwardMatchFloat64) {
  at::manual_seed(1);
  for (const Dtype& dt : kDtypes)
    for (const char* act : kActs)
      for (int64_t act_dim : {-1, -2})
        for (auto [n, d] : {std::pair<int64_t, int64_t>{5, 16}, {9, 8}}) {
          std::ostringstream tr;
          tr << dt.name << " act " << act << " dim " << act_dim << " n " << n << " d " << d;
          SCOPED_TRACE(tr.str());
          const std::vector<int64_t> shape = {2, 3, n, d};
          const at::Tensor x = randn(shape, dt.type), g = randn(shape, dt.type);
          const Vec xv = to_vec(x), gv = to_vec(g);
          const int axis = axis_of(act_dim, 4);
          const Vec ref = ref_act(xv, shape, act, axis);
          const Params p = act_params(act, act_dim);

          EXPECT_LT(rel_err(opbench::eager::act_forward(x, act, act_dim), ref, shape, dt.type),
                    dt.tol);
          EXPECT_LT(rel_err(run_fwd("act", "torch", p, {x}), ref, shape, dt.type), dt.tol);
          const Vec dref = ref_act_bwd(xv, gv, shape, act, axis);
          EXPECT_LT(rel_err(run_bwd("act", p, {x}, g), dref, shape, dt.type), dt.tol);
        }
}

// The reference runs relu / sigmoid / silu on x itself: no float32 copy in either direction.
TEST(EagerAct, ElementwiseActsStayInTheStorageDtype) {
  const at::Tensor x = randn({2, 3, 5, 8}, at::kBFloat16), g = randn({2, 3, 5, 8}, at::kBFloat16);
  for (const char* act : {"relu", "sigmoid", "silu"}) {
    SCOPED_TRACE(act);
    const Params p = act_params(act, -1);
    expect_only_dtype(recorded_ops([&] { run_fwd("act", "torch", p, {x}); }), at::kBFloat16);
    expect_only_dtype(recorded_ops([&] { run_bwd("act", p, {x}, g); }), at::kBFloat16);
  }
}

TEST(EagerAct, NoneIsIdentityWithoutCopy) {
  const at::Tensor x = randn({2, 3, 5, 8}, at::kBFloat16);
  EXPECT_TRUE(opbench::eager::act_forward(x, "none", -1).is_same(x));
  EXPECT_TRUE(run_fwd("act", "torch", act_params("none", -1), {x}).is_same(x));
  const at::Tensor g = randn({2, 3, 5, 8}, at::kBFloat16);
  const at::Tensor dx = run_bwd("act", act_params("none", -1), {x}, g);
  EXPECT_TRUE(at::equal(dx, g));
}

TEST(EagerAct, ForwardCallRunsWithoutGrad) {
  const at::Tensor x = at::randn({2, 3, 5, 8}).requires_grad_();
  for (const char* act : {"relu", "silu", "softmax"}) {
    SCOPED_TRACE(act);
    EXPECT_FALSE(run_fwd("act", "torch", act_params(act, -2), {x}).requires_grad());
    // The function itself is differentiable.
    EXPECT_TRUE(opbench::eager::act_forward(x, act, -2).requires_grad());
  }
}

TEST(EagerAct, RejectsBadArguments) {
  const at::Tensor x = at::randn({2, 3, 5, 8});
  EXPECT_THROW(opbench::eager::act_forward(x, "gelu", -1), std::invalid_argument);
  Params p = act_params("softmax", 1);
  p.set("mode", std::string("fwd"));
  Inputs in;
  in.tensors = {x};
  EXPECT_THROW(provider("act", "torch").prepare(p, in), std::invalid_argument);
  p = act_params("relu", -1);
  p.set("mode", std::string("bwd"));
  EXPECT_THROW(provider("act", "torch").prepare(p, in), std::invalid_argument);  // no grad_out
  p.set("mode", std::string("both"));
  EXPECT_THROW(provider("act", "torch").prepare(p, in), std::invalid_argument);
}

// ---------------------------------------------------------------- lrpe_cosine / lrpe_rotate

struct ThetaShape {
  bool full_rows, full_cols;
};
const ThetaShape kThetaShapes[] = {{true, true}, {false, true}, {true, false}};

// Runs one 1d LRPE op (cosine or rotate) over dtypes, acts, offsets and theta shapes.
void check_lrpe_1d(const std::string& op) {
  const bool rotate = op == "lrpe_rotate";
  at::manual_seed(rotate ? 3 : 2);
  int variant = 0;
  for (const Dtype& dt : kDtypes)
    for (const char* act : kActs)
      for (int64_t act_dim : {-1, 1}) {
        if (std::string(act) != "softmax" && act_dim == 1) continue;
        for (int64_t offset : {0, 3, 100})
          for (const ThetaShape& ts : kThetaShapes) {
            const int64_t n = 5 + variant % 5, d = variant % 2 ? 8 : 16;
            ++variant;
            const Lrpe1d c{2, n, 3, d, offset, act, act_dim};
            std::ostringstream tr;
            tr << op << " " << dt.name << " act " << act << " dim " << act_dim << " offset "
               << offset << " n " << n << " d " << d << " theta rows " << ts.full_rows
               << " cols " << ts.full_cols;
            SCOPED_TRACE(tr.str());
            const int64_t tcols = rotate ? d / 2 : d;
            const at::Tensor x = randn({2, n, 3, d}, dt.type);
            const at::Tensor theta = rand_theta(ts.full_rows ? 3 : 1, ts.full_cols ? tcols : 1);
            const std::vector<int64_t> oshape = {2, n, 3, rotate ? d : 2 * d};
            const at::Tensor g = randn(oshape, dt.type);
            const Vec xv = to_vec(x), gv = to_vec(g);
            const Theta th(theta);
            const Vec ref = rotate ? ref_rotate(c, xv, th) : ref_cosine(c, xv, th);
            const Vec dref =
                rotate ? ref_rotate_bwd(c, xv, gv, th) : ref_cosine_bwd(c, xv, gv, th);

            Params p = act_params(act, act_dim);
            p.set("offset", offset);
            const at::Tensor direct =
                rotate ? opbench::eager::lrpe_rotate_forward(x, theta, offset, act, act_dim)
                       : opbench::eager::lrpe_cosine_forward(x, theta, offset, act, act_dim);
            EXPECT_LT(rel_err(direct, ref, oshape, dt.type), dt.tol);
            EXPECT_LT(rel_err(run_fwd(op, "torch", p, {x, theta}), ref, oshape, dt.type),
                      dt.tol);
            EXPECT_LT(rel_err(run_bwd(op, p, {x, theta}, g), dref, c.dims(), dt.type), dt.tol);
          }
      }
}

TEST(EagerLrpeCosine, ForwardAndBackwardMatchFloat64) { check_lrpe_1d("lrpe_cosine"); }
TEST(EagerLrpeRotate, ForwardAndBackwardMatchFloat64) { check_lrpe_1d("lrpe_rotate"); }

TEST(EagerLrpe, OffsetDefaultsToZero) {
  const at::Tensor x = at::randn({2, 5, 3, 8}), theta = rand_theta(3, 8);
  const at::Tensor with0 = run_fwd("lrpe_cosine", "torch",
                                   [] { Params p = act_params("none", -1); p.set("offset", int64_t{0}); return p; }(),
                                   {x, theta});
  EXPECT_TRUE(at::equal(run_fwd("lrpe_cosine", "torch", act_params("none", -1), {x, theta}), with0));
}

TEST(EagerLrpe, RejectsBadShapes) {
  namespace e = opbench::eager;
  const at::Tensor x = at::randn({2, 5, 3, 7});
  EXPECT_THROW(e::lrpe_rotate_forward(x, rand_theta(3, 3), 0, "none", -1),
               std::invalid_argument);  // odd d
  EXPECT_THROW(e::lrpe_cosine_forward(x, rand_theta(2, 7), 0, "none", -1),
               std::invalid_argument);  // theta rows
  EXPECT_THROW(e::lrpe_cosine_forward(x, rand_theta(3, 7), -1, "none", -1),
               std::invalid_argument);  // offset
  EXPECT_THROW(e::lrpe_cosine_forward(x, rand_theta(3, 7), 0, "softmax", -2),
               std::invalid_argument);  // act_dim
}

// ---------------------------------------------------------------- lrpe_cosine_md

struct MdCase {
  std::vector<int64_t> grid;
  int64_t l, d, theta_cols;  // theta_cols 0: e = ceil(d / k)
};

void check_md(const MdCase& mc, const Dtype& dt, const std::string& act, int64_t act_dim,
              const ThetaShape& ts, bool via_provider) {
  const int64_t k = static_cast<int64_t>(mc.grid.size());
  const int64_t e = mc.theta_cols > 0 ? mc.theta_cols : (mc.d + k - 1) / k;
  const LrpeMd c{2, 3, mc.d, mc.l, e, mc.grid, act, act_dim};
  const at::Tensor x = randn(c.dims(), dt.type);
  const at::Tensor theta = rand_theta(ts.full_rows ? 3 : 1, ts.full_cols ? e : 1);
  const std::vector<int64_t> oshape = {2, 3, c.L(), 2 * mc.d};
  const at::Tensor g = randn(oshape, dt.type);
  const Vec xv = to_vec(x), gv = to_vec(g);
  const Theta th(theta);
  const Vec ref = ref_md(c, xv, th), dref = ref_md_bwd(c, xv, gv, th);

  const at::Tensor direct =
      opbench::eager::lrpe_cosine_md_forward_grid(x, theta, mc.grid, mc.l, act, act_dim);
  EXPECT_LT(rel_err(direct, ref, oshape, dt.type), dt.tol);
  if (via_provider) {
    Params p = act_params(act, act_dim);
    p.set("md", k);
    p.set("n", mc.grid[0]);
    p.set("l", mc.l);
    EXPECT_LT(rel_err(run_fwd("lrpe_cosine_md", "torch", p, {x, theta}), ref, oshape, dt.type),
              dt.tol);
    EXPECT_LT(rel_err(run_bwd("lrpe_cosine_md", p, {x, theta}, g), dref, c.dims(), dt.type),
              dt.tol);
  } else {
    // Backward of the grid helper through autograd directly.
    const at::Tensor leaf = x.detach().requires_grad_();
    const at::Tensor o =
        opbench::eager::lrpe_cosine_md_forward_grid(leaf, theta, mc.grid, mc.l, act, act_dim);
    const at::Tensor dx = torch::autograd::grad({o}, {leaf}, {g}).at(0);
    EXPECT_LT(rel_err(dx, dref, c.dims(), dt.type), dt.tol);
  }
}

TEST(EagerLrpeCosineMd, CubeForwardAndBackwardMatchFloat64) {
  at::manual_seed(4);
  const MdCase cubes[] = {{{7}, 0, 8, 0},       {{7}, 2, 16, 0},     {{3, 3}, 0, 16, 0},
                          {{3, 3}, 2, 8, 0},    {{2, 2, 2}, 0, 8, 0}, {{2, 2, 2}, 2, 16, 0},
                          {{3, 3, 3}, 2, 8, 0}, {{2, 2, 2}, 2, 8, 4}};
  int variant = 0;
  for (const Dtype& dt : kDtypes)
    for (const MdCase& mc : cubes)
      for (const char* act : kActs)
        for (int64_t act_dim : {-1, -2}) {
          if (std::string(act) != "softmax" && act_dim == -2) continue;
          const ThetaShape& ts = kThetaShapes[variant++ % 3];
          std::ostringstream tr;
          tr << dt.name << " md " << mc.grid.size() << " n " << mc.grid[0] << " l " << mc.l
             << " d " << mc.d << " theta_cols " << mc.theta_cols << " act " << act << " dim "
             << act_dim << " theta rows " << ts.full_rows << " cols " << ts.full_cols;
          SCOPED_TRACE(tr.str());
          if (mc.theta_cols > 0 && !ts.full_cols) continue;  // e comes from theta's shape
          check_md(mc, dt, act, act_dim, ts, /*via_provider=*/true);
        }
}

TEST(EagerLrpeCosineMd, NonCubeGridMatchesFloat64) {
  at::manual_seed(5);
  const MdCase grids[] = {{{2, 3}, 0, 8, 0},    {{3, 2}, 2, 16, 0}, {{2, 1, 3}, 2, 8, 0},
                          {{3, 2, 2}, 0, 16, 0}, {{1, 4}, 1, 8, 0},  {{4, 2, 3}, 2, 8, 5}};
  for (const Dtype& dt : kDtypes)
    for (const MdCase& mc : grids)
      for (const char* act : {"none", "silu", "softmax"})
        for (int64_t act_dim : {-1, -2}) {
          if (std::string(act) != "softmax" && act_dim == -2) continue;
          std::ostringstream tr;
          tr << dt.name << " grid";
          for (int64_t s : mc.grid) tr << " " << s;
          tr << " l " << mc.l << " d " << mc.d << " act " << act << " dim " << act_dim;
          SCOPED_TRACE(tr.str());
          check_md(mc, dt, act, act_dim, kThetaShapes[0], /*via_provider=*/false);
        }
}

TEST(EagerLrpeCosineMd, ExtraTokensGetNoPosition) {
  const at::Tensor x = at::randn({1, 2, 3 + 4, 8}), theta = rand_theta(2, 4);
  const at::Tensor o =
      opbench::eager::lrpe_cosine_md_forward(x, theta, 2, 2, 3, "none", -1);
  EXPECT_TRUE(at::equal(o.narrow(2, 0, 3).narrow(3, 0, 8), x.narrow(2, 0, 3)));
  EXPECT_TRUE(at::equal(o.narrow(2, 0, 3).narrow(3, 8, 8), at::zeros({1, 2, 3, 8})));
}

TEST(EagerLrpeCosineMd, RejectsBadShapes) {
  namespace e = opbench::eager;
  const at::Tensor x = at::randn({2, 3, 2 + 9, 8});
  EXPECT_NO_THROW(e::lrpe_cosine_md_forward(x, rand_theta(3, 4), 2, 3, 2, "none", -1));
  EXPECT_THROW(e::lrpe_cosine_md_forward(x, rand_theta(3, 4), 2, 3, 1, "none", -1),
               std::invalid_argument);  // l + N != tokens
  EXPECT_THROW(e::lrpe_cosine_md_forward(x, rand_theta(3, 3), 2, 3, 2, "none", -1),
               std::invalid_argument);  // e * md < d
  EXPECT_THROW(e::lrpe_cosine_md_forward(x, rand_theta(3, 4), 4, 3, 2, "none", -1),
               std::invalid_argument);  // md
  EXPECT_THROW(e::lrpe_cosine_md_forward(x, rand_theta(3, 4), 2, 3, 2, "softmax", 1),
               std::invalid_argument);  // act_dim
}

// ---------------------------------------------------------------- tpa_decode

std::vector<at::Tensor> tpa_inputs(int64_t b, int64_t m, int64_t h, int64_t r, int64_t d,
                                   int64_t e, at::ScalarType dtype) {
  return {randn({b, 1, h, r}, dtype), randn({b, m, h}, dtype), randn({b, m, h}, dtype),
          randn({b, 1, r, d}, dtype), randn({b, m, d}, dtype), randn({b, m, e}, dtype)};
}

TEST(EagerTpaDecode, BothProvidersMatchFloat64) {
  at::manual_seed(6);
  for (const Dtype& dt : kDtypes)
    for (int64_t m : {7, 1, 13})
      for (const char* name : {"torch", "torch_naive"}) {
        SCOPED_TRACE(std::string(dt.name) + " " + name + " m " + std::to_string(m));
        const int64_t b = 2, h = 3, r = 3, d = 8, e = 6;
        const std::vector<at::Tensor> in = tpa_inputs(b, m, h, r, d, e, dt.type);
        const Vec ref = ref_tpa(in, 1.0 / std::sqrt(8.0), 1.0 / 3.0, 1, 1);
        Params p;
        p.set("batch", b);
        p.set("head", h);
        p.set("rank", r);
        p.set("dim", d);
        p.set("dim_v", e);
        p.set("m", m);
        EXPECT_LT(rel_err(run_fwd("tpa_decode", name, p, in), ref, {b, 1, h, e}, dt.type),
                  dt.tol);
      }
}

// The reference's arrangement, not only its values: with bf16 inputs every tensor either form
// touches is bf16, and its one softmax runs over the last dimension of a (b, h, 1, m) tensor.
TEST(EagerTpaDecode, StorageDtypeAndSoftmaxOverTheLastDimension) {
  const int64_t b = 2, m = 7, h = 3, r = 4, d = 8, e = 6;
  const std::vector<at::Tensor> in = tpa_inputs(b, m, h, r, d, e, at::kBFloat16);
  for (const char* name : {"torch", "torch_naive"}) {
    SCOPED_TRACE(name);
    const std::vector<OpCall> ops = recorded_ops([&] { run_fwd("tpa_decode", name, {}, in); });
    expect_only_dtype(ops, at::kBFloat16);
    int softmaxes = 0;
    for (const OpCall& op : ops) {
      if (op.name != "aten::softmax") continue;
      ++softmaxes;
      ASSERT_EQ(op.shapes.size(), 1u);
      EXPECT_EQ(op.shapes[0], (std::vector<int64_t>{b, h, 1, m}));
      ASSERT_FALSE(op.ints.empty());
      EXPECT_TRUE(op.ints[0] == -1 || op.ints[0] == 3) << "softmax dim " << op.ints[0];
    }
    EXPECT_EQ(softmaxes, 1);
  }
}

TEST(EagerTpaDecode, ExplicitScales) {
  at::manual_seed(7);
  const std::vector<at::Tensor> in = tpa_inputs(2, 7, 3, 3, 8, 6, at::kFloat);
  const opbench::eager::TpaScales s{0.7, 0.2, 1.5, 0.5};
  const Vec ref = ref_tpa(in, 0.7, 0.2, 1.5, 0.5);
  namespace e = opbench::eager;
  EXPECT_LT(rel_err(e::tpa_decode_forward(in[0], in[1], in[2], in[3], in[4], in[5], s), ref,
                    {2, 1, 3, 6}, at::kFloat),
            1e-5);
  EXPECT_LT(rel_err(e::tpa_decode_naive_forward(in[0], in[1], in[2], in[3], in[4], in[5], s),
                    ref, {2, 1, 3, 6}, at::kFloat),
            1e-5);
}

TEST(EagerTpaDecode, ForwardOnlyAndShapeChecks) {
  const std::vector<at::Tensor> in = tpa_inputs(2, 7, 3, 3, 8, 6, at::kFloat);
  Params p;
  p.set("mode", std::string("bwd"));
  Inputs inputs;
  inputs.tensors = in;
  inputs.grad_out = at::randn({2, 1, 3, 6});
  EXPECT_THROW(provider("tpa_decode", "torch").prepare(p, inputs), std::invalid_argument);
  EXPECT_THROW(provider("tpa_decode", "torch_naive").prepare(p, inputs), std::invalid_argument);
  namespace e = opbench::eager;
  EXPECT_THROW(e::tpa_decode_forward(in[0], in[1], in[2], in[3], in[4].narrow(2, 0, 7), in[5]),
               std::invalid_argument);  // bk d != bq d
  EXPECT_THROW(e::tpa_decode_forward(in[0], in[1].narrow(1, 0, 6), in[2], in[3], in[4], in[5]),
               std::invalid_argument);  // ak m
}

// ---------------------------------------------------------------- the provider list

// Every op's eager providers (its OpSpec's torch and torch_naive) are registered, documented
// and run anywhere; nothing else registers here (this test links the eager baselines alone).
TEST(EagerProviders, EveryOpHasItsEagerProviders) {
  size_t declared = 0;
  for (const opbench::OpSpec* op : opbench::all_ops())
    for (const auto& [name, help] : op->providers) {
      if (name != "torch" && name != "torch_naive") continue;
      ++declared;
      const Provider* p = opbench::find_provider(op->name, name);
      ASSERT_NE(p, nullptr) << op->name << "/" << name;
      EXPECT_FALSE(p->help.empty());
      EXPECT_EQ(p->unavailable(at::Device(at::kCPU)), "");
      EXPECT_EQ(p->unavailable(at::Device(at::kCUDA, 0)), "");
    }
  EXPECT_GE(declared, opbench::all_ops().size());
  EXPECT_EQ(opbench::all_providers().size(), declared);
}

}  // namespace

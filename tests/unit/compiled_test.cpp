// The torch_compile baselines (baselines/compiled) on the CPU: packages exported by
// scripts/export_aoti.py (real AOTInductor compiles, tens of seconds each), run from C++ at two
// x values each (one package per table: the x axis is dynamic) and compared with independent
// ATen computations written here from docs/ops.md; the on-disk cache; the failure paths.
// Uses a fresh cache folder ($OPBENCH_CACHE_DIR) per run.
#include <ftw.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <torch/csrc/inductor/aoti_package/model_package_loader.h>

#include "baselines/compiled/compiled.h"
#include "baselines/compiled/exporter.h"
#include "ops/op.hpp"

namespace {

// POSIX, not std::filesystem: libtorch.so exports its own std::filesystem functions, which
// take the place of libstdc++'s in this binary (remove_all crashes).
bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}
int64_t mtime_ns(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return -1;
  return int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}
std::string base_name(const std::string& path) { return path.substr(path.find_last_of('/') + 1); }
std::string dir_name(const std::string& path) { return path.substr(0, path.find_last_of('/')); }
void remove_tree(const std::string& dir) {
  ::nftw(
      dir.c_str(),
      [](const char* p, const struct stat*, int, struct FTW*) { return ::remove(p); }, 16,
      FTW_DEPTH | FTW_PHYS);
}
using opbench::Call;
using opbench::CompileOutcome;
using opbench::CompileRequest;
using opbench::Inputs;
using opbench::Params;
using opbench::Provider;
using opbench::Value;

// A fresh cache folder for this run, removed at exit unless OPBENCH_TEST_KEEP_CACHE is set.
class CacheEnv : public ::testing::Environment {
 public:
  void SetUp() override {
    char tmpl[] = "/tmp/opbench-compiled-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir = tmpl;
    ::setenv("OPBENCH_CACHE_DIR", dir.c_str(), 1);
  }
  void TearDown() override {
    if (!std::getenv("OPBENCH_TEST_KEEP_CACHE")) remove_tree(dir);
  }
  static std::string dir;
};
std::string CacheEnv::dir;
const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new CacheEnv);

double rel_err(const at::Tensor& got, const at::Tensor& ref) {
  EXPECT_EQ(got.sizes(), ref.sizes());
  if (got.sizes() != ref.sizes()) return 1e30;
  const at::Tensor g = got.to(at::kDouble), r = ref.to(at::kDouble);
  return ((g - r).norm() / r.norm()).item<double>();
}

const Provider& provider(const std::string& op, const std::string& name) {
  if (const Provider* p = opbench::find_provider(op, name)) return *p;
  throw std::runtime_error("no provider " + op + "/" + name);
}

// The points (everything but x) of the packages the tests export.
Params rotate_fwd() {  // lrpe_rotate silu fp32 b=1 h=2 d=16, offset 3
  return Params({{"batch", Value(int64_t(1))}, {"head", Value(int64_t(2))},
                 {"dim", Value(int64_t(16))}, {"offset", Value(int64_t(3))},
                 {"act", Value(std::string("silu"))}, {"act_dim", Value(int64_t(-1))},
                 {"dtype", Value(std::string("fp32"))}, {"mode", Value(std::string("fwd"))},
                 {"metric", Value(std::string("speed"))}});
}
Params act_bwd(const std::string& act, int64_t act_dim) {
  return Params({{"batch", Value(int64_t(2))}, {"head", Value(int64_t(3))},
                 {"dim", Value(int64_t(16))}, {"act", Value(act)}, {"act_dim", Value(act_dim)},
                 {"dtype", Value(std::string("fp32"))}, {"mode", Value(std::string("bwd"))},
                 {"metric", Value(std::string("speed"))}});
}
Params md2_fwd() {  // lrpe_cosine_md 2d, 2 extra tokens, theta (h, ceil(d / 2))
  return Params({{"batch", Value(int64_t(1))}, {"head", Value(int64_t(2))},
                 {"dim", Value(int64_t(6))}, {"md", Value(int64_t(2))}, {"l", Value(int64_t(2))},
                 {"theta_dim", Value(int64_t(0))}, {"act", Value(std::string("none"))},
                 {"act_dim", Value(int64_t(-1))}, {"dtype", Value(std::string("fp32"))},
                 {"mode", Value(std::string("fwd"))}, {"metric", Value(std::string("speed"))}});
}

const std::vector<int64_t> kRotateN = {8, 33, 64};
const std::vector<int64_t> kActN = {5, 16};
const std::vector<int64_t> kMdN = {2, 3, 5};

std::vector<CompileRequest> requests() {
  return {
      {"lrpe_rotate", "torch_compile", rotate_fwd(), "n", kRotateN, "cpu"},
      {"act", "torch_compile", act_bwd("silu", -1), "n", kActN, "cpu"},
      {"act", "torch_compile", act_bwd("softmax", -2), "n", kActN, "cpu"},
      {"lrpe_cosine_md", "torch_compile", md2_fwd(), "n", kMdN, "cpu"},
  };
}

struct FirstCompile {
  std::vector<CompileOutcome> outcomes;
  double seconds = 0;
  size_t progress_calls = 0;
};

// The first compile of the test packages (once per run, whatever the test order).
const FirstCompile& first_compile() {
  static const FirstCompile fc = [] {
    FirstCompile f;
    const auto t0 = std::chrono::steady_clock::now();
    f.outcomes = opbench::compile_packages(
        requests(), 2, [&](size_t done, size_t total, const CompileOutcome& o) {
          ++f.progress_calls;
          EXPECT_LE(done, total);
          std::printf("[compile %zu/%zu] %s %s %.1f s%s%s\n", done, total, o.key.c_str(),
                      o.cached ? "cached" : "built", o.seconds, o.error.empty() ? "" : ": ",
                      o.error.c_str());
        });
    f.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("first compile of %zu packages: %.1f s\n", f.outcomes.size(), f.seconds);
    return f;
  }();
  return fc;
}

Call prepare(const std::string& op, Params p, const std::string& x_name, int64_t x,
             const std::vector<at::Tensor>& tensors, const at::Tensor& grad_out = {}) {
  p.set(x_name, x);
  Inputs in;
  in.tensors = tensors;
  in.grad_out = grad_out;
  return provider(op, "torch_compile").prepare(p, in);
}

// ---------------------------------------------------------------- independent references

at::Tensor rotate_ref(const at::Tensor& x, const at::Tensor& theta, int64_t offset) {
  const at::Tensor xa = x * at::sigmoid(x);  // silu
  const int64_t n = x.size(1), half = x.size(3) / 2;
  const at::Tensor pos = at::arange(n, at::kDouble).add(offset).view({n, 1, 1});
  const at::Tensor angle = pos * theta.to(at::kDouble).unsqueeze(0);  // (n, h, d/2)
  const at::Tensor c = at::cos(angle), s = at::sin(angle);
  const at::Tensor x1 = xa.narrow(-1, 0, half).to(at::kDouble);
  const at::Tensor x2 = xa.narrow(-1, half, half).to(at::kDouble);
  return at::cat({x1 * c - x2 * s, x1 * s + x2 * c}, -1);
}

at::Tensor silu_bwd_ref(const at::Tensor& x, const at::Tensor& g) {
  const at::Tensor xd = x.to(at::kDouble), s = at::sigmoid(xd);
  return g.to(at::kDouble) * s * (1 + xd * (1 - s));
}

at::Tensor softmax_bwd_ref(const at::Tensor& x, const at::Tensor& g, int64_t dim) {
  const at::Tensor xd = x.to(at::kDouble);
  const at::Tensor e = at::exp(xd - std::get<0>(xd.max(dim, true)));
  const at::Tensor o = e / e.sum(dim, true);
  const at::Tensor gd = g.to(at::kDouble);
  return o * gd - o * (o * gd).sum(dim, true);
}

// Element by element from docs/ops.md: grid token s = l + i*n + j has coordinates (i, j); feature f
// uses axis f / e and theta column f % e; extra tokens get angle 0.
at::Tensor md2_ref(const at::Tensor& x, const at::Tensor& theta, int64_t n, int64_t l) {
  const int64_t h = x.size(1), T = x.size(2), d = x.size(3), e = theta.size(1);
  at::Tensor angle = at::zeros({h, T, d}, at::kDouble);
  auto a = angle.accessor<double, 3>();
  const at::Tensor th = theta.to(at::kDouble);
  auto t = th.accessor<double, 2>();
  for (int64_t hh = 0; hh < h; ++hh)
    for (int64_t s = 0; s < n * n; ++s)
      for (int64_t f = 0; f < d; ++f) {
        const int64_t c = f / e == 0 ? s / n : s % n;
        a[hh][l + s][f] = double(c) * t[hh][f % e];
      }
  const at::Tensor xd = x.to(at::kDouble);
  return at::cat({xd * at::cos(angle), xd * at::sin(angle)}, -1);
}

// docs/ops.md's tpa_decode in float64, element by element over the batch: q = aq bq / r;
// score[h, t] = ak[t, h] <q[h], bk[t]> / sqrt(d); p = softmax over t; o[h] = sum_t p av[t, h] bv[t].
at::Tensor tpa_ref(const std::vector<at::Tensor>& in) {
  const at::Tensor aq = in[0].to(at::kDouble), ak = in[1].to(at::kDouble), av = in[2].to(at::kDouble);
  const at::Tensor bq = in[3].to(at::kDouble), bk = in[4].to(at::kDouble), bv = in[5].to(at::kDouble);
  const int64_t r = aq.size(3), d = bq.size(3);
  std::vector<at::Tensor> out;
  for (int64_t b = 0; b < aq.size(0); ++b) {
    const at::Tensor q = aq[b][0].matmul(bq[b][0]) / double(r);           // (h, d)
    const at::Tensor score = q.matmul(bk[b].t()) * ak[b].t() / std::sqrt(double(d));  // (h, m)
    const at::Tensor p = at::softmax(score, -1);
    out.push_back((p * av[b].t()).matmul(bv[b]).unsqueeze(0));            // (1, h, e)
  }
  return at::stack(out);  // (b, 1, h, e)
}

Params tpa_fwd(int64_t batch) {  // tpa_decode fp32 h=2 r=2 d=e=4
  return Params({{"batch", Value(batch)}, {"head", Value(int64_t(2))}, {"rank", Value(int64_t(2))},
                 {"dim", Value(int64_t(4))}, {"dim_v", Value(int64_t(0))},
                 {"dtype", Value(std::string("fp32"))}, {"mode", Value(std::string("fwd"))},
                 {"metric", Value(std::string("speed"))}});
}

// ---------------------------------------------------------------- tests

// Every compiled provider an OpSpec declares is registered, with its table work; nothing else
// registers here (this test links the compiled baselines alone).
TEST(Compiled, EveryDeclaredCompiledProviderRegistered) {
  size_t declared = 0;
  for (const opbench::OpSpec* op : opbench::all_ops())
    for (const auto& [name, help] : op->providers) {
      if (name != "torch_compile" && name != "torch_naive_compile") continue;
      ++declared;
      const Provider* p = opbench::find_provider(op->name, name);
      ASSERT_NE(p, nullptr) << op->name << "/" << name;
      EXPECT_NE(p->table_work, nullptr) << op->name << "/" << name;
    }
  EXPECT_GE(declared, opbench::all_ops().size());
  EXPECT_EQ(opbench::all_providers().size(), declared);
}

TEST(Compiled, AvailableOnCpu) {
  EXPECT_EQ(provider("act", "torch_compile").unavailable(at::Device(at::kCPU)), "");
}

TEST(Compiled, KeyNamesWhatChangesTheCode) {
  auto key = [](const std::string& op, Params p, std::vector<int64_t> xs) {
    return opbench::compiled::package_key({op, "torch_compile", p, "n", xs, "cpu"});
  };
  const std::string k = key("act", act_bwd("silu", -1), {5, 16});
  EXPECT_EQ(k, key("act", act_bwd("silu", -1), {7}));  // x values are not in the key
  Params other_metric = act_bwd("silu", -1);
  other_metric.set("metric", std::string("memory"));
  EXPECT_EQ(k, key("act", other_metric, {5}));
  EXPECT_NE(k, key("act", act_bwd("relu", -1), {5}));
  EXPECT_NE(k, key("act", act_bwd("silu", -2), {5}));
  Params fp16 = act_bwd("silu", -1);
  fp16.set("dtype", std::string("fp16"));
  EXPECT_NE(k, key("act", fp16, {5}));
  Params wider = act_bwd("silu", -1);
  wider.set("dim", int64_t(32));
  EXPECT_NE(k, key("act", wider, {5}));
  // Inductor settings of an experiment make another package; empty is unset.
  ::setenv("OPBENCH_AOTI_CONFIGS", R"({"aot_inductor.compile_wrapper_opt_level": "O0"})", 1);
  EXPECT_NE(k, key("act", act_bwd("silu", -1), {5}));
  ::setenv("OPBENCH_AOTI_CONFIGS", "", 1);
  EXPECT_EQ(k, key("act", act_bwd("silu", -1), {5}));
  ::unsetenv("OPBENCH_AOTI_CONFIGS");
  EXPECT_THROW(opbench::compiled::package_key({"act", "torch_naive_compile", act_bwd("silu", -1),
                                               "n", {5}, "cpu"}),
               std::runtime_error);
}

TEST(Compiled, ExportsDynamicPackagesInParallel) {
  const FirstCompile& fc = first_compile();
  ASSERT_EQ(fc.outcomes.size(), requests().size());
  EXPECT_EQ(fc.progress_calls, requests().size());
  for (const CompileOutcome& o : fc.outcomes) {
    EXPECT_EQ(o.error, "") << o.key;
    EXPECT_FALSE(o.cached) << o.key;
    EXPECT_GT(o.seconds, 0.0) << o.key;
    // One dynamic package serves the whole x range of the table.
    EXPECT_EQ(base_name(o.path).rfind("dyn-", 0), 0u) << o.path;
    EXPECT_TRUE(exists(o.path)) << o.path;
    EXPECT_TRUE(exists(o.path.substr(0, o.path.size() - 4) + ".log")) << o.path;
    EXPECT_EQ(base_name(dir_name(o.path)), o.key);
    if (!exists(o.path)) continue;
    auto meta = torch::inductor::AOTIModelPackageLoader::load_metadata_from_package(o.path, "model");
    EXPECT_EQ(meta["opbench_dynamic"], "1") << o.path;
    EXPECT_EQ(meta["opbench_key"], o.key) << o.path;
    EXPECT_EQ(meta["opbench_x_name"], "n") << o.path;
    // Where its time went, the shared vector ISA checks among the stages.
    std::ifstream stages(o.path.substr(0, o.path.size() - 4) + ".stages.json");
    const std::string text((std::istreambuf_iterator<char>(stages)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("\"isa_s\""), std::string::npos) << text;
    const opbench::compiled::ExportStages st = opbench::compiled::read_stages(o.path);
    EXPECT_TRUE(st.known) << o.path;
    EXPECT_NE(st.words(o.seconds).find(", ISA checks "), std::string::npos) << st.words(o.seconds);
  }
  // torch.export alone fails on softmax's backward: the graph was captured by make_fx.
  EXPECT_EQ(torch::inductor::AOTIModelPackageLoader::load_metadata_from_package(
                fc.outcomes[2].path, "model")["opbench_trace"],
            "make_fx");
  EXPECT_EQ(base_name(fc.outcomes[0].path), "dyn-8-64.pt2");
}

TEST(Compiled, SecondCompileHitsTheCache) {
  const FirstCompile& fc = first_compile();
  std::map<std::string, int64_t> stamps;
  for (const auto& o : fc.outcomes)
    if (o.error.empty()) stamps[o.path] = mtime_ns(o.path);
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<CompileOutcome> again = opbench::compile_packages(requests(), 2, nullptr);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(again.size(), fc.outcomes.size());
  for (size_t i = 0; i < again.size(); ++i) {
    EXPECT_EQ(again[i].error, "");
    EXPECT_TRUE(again[i].cached);
    EXPECT_EQ(again[i].seconds, 0.0);
    EXPECT_EQ(again[i].key, fc.outcomes[i].key);
    EXPECT_EQ(again[i].path, fc.outcomes[i].path);
  }
  for (const auto& [path, stamp] : stamps) EXPECT_EQ(mtime_ns(path), stamp) << path;
  EXPECT_LT(s, 2.0) << "a cached compile must not run the exporter";
  std::printf("cached compile: %.3f s (first: %.1f s)\n", s, fc.seconds);
}

TEST(Compiled, LrpeRotateForwardAtTwoSequenceLengths) {
  ASSERT_EQ(first_compile().outcomes[0].error, "");
  at::manual_seed(1);
  const at::Tensor theta = at::rand({2, 8}) * 1.5 + 0.05;
  for (int64_t n : {int64_t(8), int64_t(33)}) {
    const at::Tensor x = at::randn({1, n, 2, 16});
    const Call call = prepare("lrpe_rotate", rotate_fwd(), "n", n, {x, theta});
    const std::vector<at::Tensor> out = call();
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].scalar_type(), at::kFloat);
    EXPECT_LT(rel_err(out[0], rotate_ref(x, theta, 3)), 1e-5) << "n=" << n;
    EXPECT_LT(rel_err(call()[0], rotate_ref(x, theta, 3)), 1e-5) << "second call, n=" << n;
  }
}

TEST(Compiled, ActBackwardAtTwoSequenceLengths) {
  ASSERT_EQ(first_compile().outcomes[1].error, "");
  ASSERT_EQ(first_compile().outcomes[2].error, "");
  at::manual_seed(2);
  for (int64_t n : kActN) {
    const at::Tensor x = at::randn({2, 3, n, 16}), g = at::randn({2, 3, n, 16});
    const Call silu = prepare("act", act_bwd("silu", -1), "n", n, {x}, g);
    EXPECT_LT(rel_err(silu()[0], silu_bwd_ref(x, g)), 1e-5) << "silu n=" << n;
    // softmax over the sequence (the make_fx route: torch.export alone fails on it)
    const Call sm = prepare("act", act_bwd("softmax", -2), "n", n, {x}, g);
    EXPECT_LT(rel_err(sm()[0], softmax_bwd_ref(x, g, -2)), 1e-5) << "softmax n=" << n;
  }
}

TEST(Compiled, GridTokensAreDynamic) {
  ASSERT_EQ(first_compile().outcomes[3].error, "");
  at::manual_seed(3);
  const at::Tensor theta = at::rand({2, 3}) * 1.5 + 0.05;  // e = ceil(6 / 2)
  for (int64_t n : {int64_t(2), int64_t(5)}) {
    const at::Tensor x = at::randn({1, 2, 2 + n * n, 6});
    const Call call = prepare("lrpe_cosine_md", md2_fwd(), "n", n, {x, theta});
    EXPECT_LT(rel_err(call()[0], md2_ref(x, theta, n, 2)), 1e-5) << "n=" << n;
  }
}

TEST(Compiled, PrepareExportsAPointOnItsOwn) {
  // No compile_packages for this point: prepare exports a static package for it.
  Params p = act_bwd("relu", -1);
  p.set("mode", std::string("fwd"));
  at::manual_seed(4);
  const at::Tensor x = at::randn({2, 3, 7, 16});
  const auto t0 = std::chrono::steady_clock::now();
  const Call call = prepare("act", p, "n", 7, {x});
  std::printf("prepare with its own export: %.1f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  EXPECT_LT(rel_err(call()[0], at::relu(x)), 1e-6);
  CompileRequest r{"act", "torch_compile", p, "n", {7}, "cpu"};
  EXPECT_TRUE(exists(CacheEnv::dir + "/" + opbench::compiled::package_key(r) +
                         "/static-7.pt2"));
  const std::vector<CompileOutcome> again = opbench::compile_packages({r}, 1, nullptr);
  EXPECT_TRUE(again.at(0).cached);
}

TEST(Compiled, StaticFallbackWhenTheAxisCannotBeDynamic) {
  // offset changes no tensor size: the dynamic export fails, one static package per value.
  Params p = rotate_fwd();
  p.set("n", int64_t(6));
  const CompileRequest r{"lrpe_rotate", "torch_compile", p, "offset", {4, 1}, "cpu"};
  const std::vector<CompileOutcome> out = opbench::compile_packages({r}, 2, nullptr);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].error, "");
  EXPECT_FALSE(out[0].cached);
  const std::string dir = CacheEnv::dir + "/" + out[0].key;
  EXPECT_EQ(out[0].path, dir);  // several packages: the key's folder
  EXPECT_TRUE(exists(dir + "/static-1.pt2"));
  EXPECT_TRUE(exists(dir + "/static-4.pt2"));
  EXPECT_FALSE(exists(dir + "/dyn-1-4.pt2"));
  std::ifstream log(dir + "/dyn-1-4.log");
  const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("no tensor size depends on offset"), std::string::npos) << text;
  auto meta = torch::inductor::AOTIModelPackageLoader::load_metadata_from_package(
      dir + "/static-4.pt2", "model");
  EXPECT_EQ(meta["opbench_dynamic"], "0");
  EXPECT_EQ(meta["opbench_x_min"], "4");
  EXPECT_NE(meta["opbench_dynamic_error"].find("no tensor size depends"), std::string::npos);
  at::manual_seed(5);
  const at::Tensor theta = at::rand({2, 8}) * 1.5 + 0.05;
  const at::Tensor x = at::randn({1, 6, 2, 16});
  for (int64_t offset : {int64_t(1), int64_t(4)}) {
    const Call call = prepare("lrpe_rotate", p, "offset", offset, {x, theta});
    EXPECT_LT(rel_err(call()[0], rotate_ref(x, theta, offset)), 1e-5) << "offset=" << offset;
  }
  EXPECT_TRUE(opbench::compile_packages({r}, 2, nullptr).at(0).cached);
}

TEST(Compiled, ExportFailureIsOneLine) {
  Params p = act_bwd("silu", -1);
  p.set("act", std::string("bogus"));
  // The same request twice: one export, both get its outcome.
  const CompileRequest r{"act", "torch_compile", p, "n", {4, 9}, "cpu"};
  size_t calls = 0;
  const std::vector<CompileOutcome> out = opbench::compile_packages(
      {r, r}, 2, [&](size_t, size_t, const CompileOutcome&) { ++calls; });
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(calls, 2u);
  EXPECT_NE(out[0].error.find("unknown act 'bogus'"), std::string::npos) << out[0].error;
  EXPECT_EQ(out[0].error.find('\n'), std::string::npos);
  EXPECT_EQ(out[1].error, out[0].error);
  EXPECT_FALSE(out[0].cached);
  // prepare reports the same reason (remembered: no second export).
  const at::Tensor x = at::randn({2, 3, 4, 16});
  try {
    prepare("act", p, "n", 4, {x}, at::randn({2, 3, 4, 16}));
    ADD_FAILURE() << "prepare did not throw";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown act 'bogus'"), std::string::npos) << e.what();
  }
}

TEST(Compiled, ExportTimeoutKillsTheExporter) {
  ::setenv("OPBENCH_EXPORT_TIMEOUT", "1", 1);
  Params p = act_bwd("sigmoid", -1);
  p.set("mode", std::string("fwd"));
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<CompileOutcome> out =
      opbench::compile_packages({{"act", "torch_compile", p, "n", {3, 9}, "cpu"}}, 1, nullptr);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ::unsetenv("OPBENCH_EXPORT_TIMEOUT");
  EXPECT_NE(out.at(0).error.find("ran past $OPBENCH_EXPORT_TIMEOUT (1 s)"), std::string::npos)
      << out[0].error;
  EXPECT_LT(s, 10.0);
  EXPECT_FALSE(exists(CacheEnv::dir + "/" + out[0].key + "/dyn-3-9.pt2"));
}

TEST(Compiled, BrokenPythonIsUnavailable) {
  const char* old = std::getenv("OPBENCH_PYTHON");
  const std::string saved = old ? old : "";
  ::setenv("OPBENCH_PYTHON", "/nonexistent/bin/python", 1);
  const std::string why = provider("act", "torch_compile").unavailable(at::Device(at::kCPU));
  EXPECT_NE(why.find("/nonexistent/bin/python"), std::string::npos) << why;
  EXPECT_NE(why.find("not usable"), std::string::npos) << why;
  EXPECT_EQ(why.find('\n'), std::string::npos);
  const std::vector<CompileOutcome> out = opbench::compile_packages(
      {{"act", "torch_compile", act_bwd("silu", -1), "n", {4}, "cpu"}}, 1, nullptr);
  EXPECT_EQ(out.at(0).error, why);
  EXPECT_THROW(prepare("act", act_bwd("silu", -1), "n", 4, {at::randn({2, 3, 4, 16})},
                       at::randn({2, 3, 4, 16})),
               std::runtime_error);
  // A python without torch.
  ::setenv("OPBENCH_PYTHON", "/usr/bin/true", 1);
  EXPECT_NE(opbench::compiled::unavailable("cpu").find("not usable"), std::string::npos);
  if (old)
    ::setenv("OPBENCH_PYTHON", saved.c_str(), 1);
  else
    ::unsetenv("OPBENCH_PYTHON");
  EXPECT_EQ(opbench::compiled::unavailable("cpu"), "");
  if (!at::hasCUDA()) {
    EXPECT_NE(opbench::compiled::unavailable("cuda:0"), "");  // this python sees no GPU
  }
}

// Two tpa_decode tables differing in batch alone: one package dynamic over m and batch
// (OpSpec::shared_axes), checked against eager by the exporter at the extremes, serving both
// tables' points here against float64 references.
TEST(Compiled, TpaDecodeBatchesShareOnePackage) {
  const std::vector<int64_t> ms = {3, 6};
  const std::vector<CompileOutcome> out = opbench::compile_packages(
      {{"tpa_decode", "torch_compile", tpa_fwd(2), "m", ms, "cpu"},
       {"tpa_decode", "torch_compile", tpa_fwd(3), "m", ms, "cpu"}},
      2, nullptr);
  ASSERT_EQ(out.size(), 2u);
  ASSERT_EQ(out[0].error, "");
  ASSERT_EQ(out[1].error, "");
  EXPECT_EQ(out[0].path, out[1].path);
  EXPECT_EQ(base_name(out[0].path), "dyn-3-6.batch-2-3.pt2");
  auto meta = torch::inductor::AOTIModelPackageLoader::load_metadata_from_package(out[0].path, "model");
  EXPECT_EQ(meta["opbench_dynamic"], "1");
  EXPECT_EQ(meta["opbench_shared"], "batch");
  EXPECT_EQ(meta["opbench_shared_batch_min"], "2");
  EXPECT_EQ(meta["opbench_shared_batch_max"], "3");
  EXPECT_EQ(meta["opbench_x_min"], "3");
  EXPECT_EQ(meta["opbench_x_max"], "6");
  at::manual_seed(6);
  for (int64_t b : {int64_t(2), int64_t(3)})
    for (int64_t m : {int64_t(3), int64_t(5), int64_t(6)}) {
      const std::vector<at::Tensor> in = {at::randn({b, 1, 2, 2}), at::randn({b, m, 2}), at::randn({b, m, 2}),
                                          at::randn({b, 1, 2, 4}), at::randn({b, m, 4}), at::randn({b, m, 4})};
      const Call call = prepare("tpa_decode", tpa_fwd(b), "m", m, in);
      EXPECT_LT(rel_err(call()[0], tpa_ref(in)), 1e-5) << "batch=" << b << " m=" << m;
    }
}

}  // namespace

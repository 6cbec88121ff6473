// The check against the truth (record/check_rule.hpp, record/check_note.hpp,
// torch/measure/torch_check.hpp) on the CPU:
// the rule on synthetic outputs, every op's torch provider at odd shapes in bf16, fp16 and fp32
// (it passes, and is checked itself), faulty fake providers (one wrong element, a wrong scale,
// a dropped tail block: torch's output with the fault planted) failing wherever the fault
// shows, and OPBENCH_PLANT's parsing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "record/check_note.hpp"
#include "record/check_rule.hpp"
#include "ops/op.hpp"
#include "torch/measure/torch_check.hpp"
#include "torch/measure/torch_executor.hpp"
#include "torch/measure/torch_plant.hpp"

namespace {

using namespace opbench;

// ---------------------------------------------------------------- faulty fake providers

const char* const kOps[] = {"act", "lrpe_cosine", "lrpe_rotate", "lrpe_cosine_md", "tpa_decode"};
const std::map<std::string, Plant::Kind> kFaults = {
    {"fault_element", Plant::element}, {"fault_scale", Plant::scale}, {"fault_tail", Plant::tail}};

// Torch's output with a fault planted: what a kernel with that bug would return.
const ProviderRegistration faulty([] {
  std::vector<Provider> out;
  for (const char* op : kOps)
    for (const auto& [name, kind] : kFaults) {
      Provider p;
      p.op = op;
      p.name = name;
      p.unavailable = [](const at::Device&) { return std::string(); };
      p.prepare = [op = std::string(op), kind = kind](const Params& params, const Inputs& in) {
        return planted({Plant{"*", kind, 0}}, "", find_provider(op, "torch")->prepare(params, in));
      };
      out.push_back(p);
    }
  return out;
});

// ---------------------------------------------------------------- the rule, synthetic outputs

// The truth, a reference code's output off it by `ref_noise` (relative), and two outputs:
// one off by the same amount (other values), one off by three times as much.
TEST(CheckRule, SyntheticOutputs) {
  at::manual_seed(7);
  const at::Tensor truth = at::randn({64, 257}, at::kDouble);
  const Truth t = make_truth({truth});
  auto off_by = [&](double relative) { return truth + relative * at::randn_like(truth); };
  for (const char* dtype : {"bf16", "fp16", "fp32"}) {
    // above the floor, so that the reference code's error sets the tolerance
    const double e = 4 * check_floor(dtype);
    const OutputErrors ref = output_errors({off_by(e)}, t);
    const OutputErrors same = output_errors({off_by(e)}, t);
    const OutputErrors thrice = output_errors({off_by(3 * e)}, t);
    EXPECT_NEAR(ref.norm, e, 0.1 * e) << dtype;
    EXPECT_TRUE(check_passes(dtype, {same.norm, same.max, ref.norm, ref.max})) << dtype;
    EXPECT_FALSE(check_passes(dtype, {thrice.norm, thrice.max, ref.norm, ref.max})) << dtype;
    // a reference code exact in the storage dtype: the floor decides
    const OutputErrors small = output_errors({off_by(check_floor(dtype) / 8)}, t);
    EXPECT_TRUE(check_passes(dtype, {small.norm, small.max, 0, 0})) << dtype;
  }
}

TEST(CheckRule, FloorsAndTolerance) {
  EXPECT_DOUBLE_EQ(check_floor("bf16"), 1.0 / 128);
  EXPECT_DOUBLE_EQ(check_floor("fp16"), 1.0 / 1024);
  EXPECT_DOUBLE_EQ(check_floor("fp32"), 1.0 / 65536);
  EXPECT_THROW(check_floor("fp8"), std::invalid_argument);
  EXPECT_DOUBLE_EQ(check_tolerance("bf16", 0.012), 0.024);
  EXPECT_DOUBLE_EQ(check_tolerance("bf16", 0.001), 1.0 / 128);
  EXPECT_DOUBLE_EQ(check_tolerance("bf16", -1), 1.0 / 128);  // unknown: the floor
}

// One wrong element among many: the norm dilutes it, the largest element's error does not.
TEST(CheckRule, LocalFaultFailsOnTheLargestElement) {
  const at::Tensor truth = at::ones({1 << 20}, at::kDouble);
  at::Tensor out = truth.clone();
  out[12345] = 2.0;
  const OutputErrors e = output_errors({out}, make_truth({truth}));
  EXPECT_LT(e.norm, 1e-3);
  EXPECT_DOUBLE_EQ(e.max, 1.0);
  EXPECT_FALSE(check_passes("bf16", {e.norm, e.max, 0, 0}));
}

TEST(CheckRule, NanAndShapes) {
  const at::Tensor truth = at::ones({4}, at::kDouble);
  at::Tensor out = truth.clone();
  out[1] = NAN;
  const OutputErrors e = output_errors({out}, make_truth({truth}));
  EXPECT_FALSE(check_passes("fp32", {e.norm, e.max, 0, 0}));
  EXPECT_THROW(output_errors({at::ones({5}, at::kDouble)}, make_truth({truth})), std::runtime_error);
  EXPECT_THROW(output_errors({truth, truth}, make_truth({truth})), std::runtime_error);
}

TEST(CheckRule, NoteShowsBothErrors) {
  Result r;
  set_check(r, {0.05, 0.4, 0.012, 0.03}, true);
  const std::string note = check_note(r, "bf16");
  EXPECT_NE(note.find("error 0.05 (reference code 0.012, tolerance 0.024)"), std::string::npos) << note;
  EXPECT_NE(note.find("largest element 0.4 (reference code 0.03, tolerance 0.06)"), std::string::npos) << note;
  Result old;  // stored before the reference figures
  old.rel_err = 0.02;
  EXPECT_EQ(check_note(old, "bf16"), "relative error 0.02 over tolerance");
}

TEST(Check, OneReferencePerOp) {
  for (const OpSpec* op : all_ops()) {
    int references = 0;
    for (const auto& p : all_providers()) references += p.op == op->name && p.reference ? 1 : 0;
    EXPECT_EQ(references, 1) << op->name;
    ASSERT_NE(find_reference(op->name), nullptr) << op->name;
  }
}

TEST(Check, ReferenceDtype) {
  EXPECT_EQ(reference_dtype(at::Device("cpu"), at::kBFloat16), at::kDouble);
  EXPECT_EQ(reference_dtype(at::Device("cpu"), at::kFloat), at::kDouble);
  EXPECT_EQ(reference_dtype(at::Device("cuda:0"), at::kBFloat16), at::kFloat);
  EXPECT_EQ(reference_dtype(at::Device("cuda:0"), at::kHalf), at::kFloat);
  EXPECT_EQ(reference_dtype(at::Device("cuda:0"), at::kFloat), at::kDouble);
}

// ---------------------------------------------------------------- odd shapes, through the executor

// Odd shapes of every op: primes, sizes no block divides, one head, d odd, dim_v != dim.
std::vector<std::pair<std::string, Params>> odd_cases() {
  std::vector<std::pair<std::string, Params>> out;
  const int64_t one = 1, three = 3, d = 37;
  auto add = [&](const std::string& op, std::map<std::string, Value> v) { out.push_back({op, Params(std::move(v))}); };
  for (const char* mode : {"fwd", "bwd"}) {
    for (int64_t n : {1, 131}) {
      for (const char* act : {"none", "relu", "sigmoid", "silu", "softmax"})
        add("act", {{"batch", one}, {"head", three}, {"n", n}, {"dim", d}, {"act", act}, {"act_dim", int64_t{-1}},
                    {"mode", mode}});
      for (const char* act : {"none", "silu", "softmax"}) {
        add("lrpe_cosine", {{"batch", int64_t{2}}, {"head", three}, {"n", n}, {"dim", d}, {"offset", int64_t{5}},
                            {"act", act}, {"act_dim", int64_t{-1}}, {"mode", mode}});
        add("lrpe_rotate", {{"batch", one}, {"head", one}, {"n", n}, {"dim", int64_t{38}}, {"offset", three},
                            {"act", act}, {"act_dim", int64_t{-1}}, {"mode", mode}});
      }
    }
    // softmax over the sequence
    add("act", {{"batch", int64_t{2}}, {"head", one}, {"n", int64_t{131}}, {"dim", int64_t{5}}, {"act", "softmax"},
                {"act_dim", int64_t{-2}}, {"mode", mode}});
    for (const char* op : {"lrpe_cosine", "lrpe_rotate"})
      add(op, {{"batch", one}, {"head", three}, {"n", int64_t{13}}, {"dim", int64_t{38}}, {"act", "softmax"},
               {"act_dim", one}, {"mode", mode}});
    // grids of 7, 7 x 7 + 3 and 3 x 3 x 3 tokens
    add("lrpe_cosine_md", {{"batch", one}, {"head", three}, {"n", int64_t{7}}, {"dim", d}, {"md", one},
                           {"act", "silu"}, {"mode", mode}});
    add("lrpe_cosine_md", {{"batch", one}, {"head", one}, {"n", int64_t{7}}, {"dim", d}, {"md", int64_t{2}},
                           {"l", three}, {"act", "softmax"}, {"act_dim", int64_t{-2}}, {"mode", mode}});
    add("lrpe_cosine_md", {{"batch", one}, {"head", three}, {"n", three}, {"dim", d}, {"md", three},
                           {"act", "softmax"}, {"act_dim", int64_t{-1}}, {"mode", mode}});
  }
  for (int64_t m : {1, 97, 1009})
    for (int64_t h : {1, 5})
      add("tpa_decode", {{"batch", three}, {"head", h}, {"rank", int64_t{7}}, {"dim", d}, {"dim_v", int64_t{53}}, {"m", m}});
  return out;
}

Point make_point(const std::string& op, const Params& p, const std::string& dtype, const std::string& provider) {
  const OpSpec* spec = find_op(op);
  Params all = p;
  all.set("dtype", dtype);
  all.set("metric", "speed");
  Point pt;
  pt.op = op;
  pt.params = spec->with_defaults(all);
  spec->validate(pt.params);
  pt.x_name = spec->x_axes.front();
  pt.x_value = pt.params.i(pt.x_name);
  pt.title = spec->default_title(pt.params);
  pt.provider = pt.label = provider;
  return pt;
}

Timing quick_timing() {
  Timing t;
  t.warmup_ms = 0.05;
  t.rep_ms = 0.1;
  t.rounds = 1;
  t.flush_l2 = L2Flush::none;
  return t;
}

std::string describe(const Point& p, const Result& r) {
  return p.title + " " + p.x_name + "=" + std::to_string(p.x_value) + " " + p.provider + ": " +
         (r.ok() ? check_note(r, p.params.s("dtype")) : r.error);
}

TorchExecutor& cpu() {
  static TorchExecutor ex("cpu");
  return ex;
}

// Every op's torch provider (and torch_naive) at odd shapes: checked, and within tolerance.
TEST(Check, CorrectOutputsPassAtOddShapes) {
  size_t checked = 0;
  for (const char* dtype : {"bf16", "fp16", "fp32"})
    for (const auto& [op, p] : odd_cases())
      for (const char* provider : {"torch", "torch_naive"}) {
        if (!find_provider(op, provider)) continue;
        const Point pt = make_point(op, p, dtype, provider);
        const Result r = cpu().measure(pt, quick_timing());
        ASSERT_TRUE(r.ok()) << describe(pt, r);
        EXPECT_GE(r.rel_err, 0) << describe(pt, r);
        EXPECT_GE(r.ref_err, 0) << describe(pt, r);
        EXPECT_FALSE(r.check_failed) << describe(pt, r);
        checked++;
      }
  EXPECT_GT(checked, 150u);
  std::printf("%zu points checked, every one within tolerance\n", checked);
}

// The element count of a point's output (the tail fault shows where 256 does not divide it).
int64_t output_elements(const Point& p) { return numel(find_op(p.op)->output_shape(p.params)); }

// The faults fail at every odd shape where they show: one wrong element and a wrong scale
// everywhere, a dropped tail block where the output is no whole number of 256 blocks.
TEST(Check, PlantedFaultsFailWhereTheyShow) {
  size_t failed = 0, planted = 0;
  for (const char* dtype : {"bf16", "fp16", "fp32"})
    for (const auto& [op, p] : odd_cases())
      for (const auto& [name, kind] : kFaults) {
        ++planted;
        const Point pt = make_point(op, p, dtype, name);
        const Result r = cpu().measure(pt, quick_timing());
        ASSERT_TRUE(r.ok()) << describe(pt, r);
        const bool shows = kind != Plant::tail || output_elements(pt) % 256 != 0;
        EXPECT_EQ(r.check_failed, shows) << describe(pt, r);
        failed += r.check_failed ? 1 : 0;
      }
  EXPECT_GT(failed, 400u);
  std::printf("%zu of %zu points with a planted fault failed the check\n", failed, planted);
}

// The issue the rule answers: at a small odd head count and rank, dim_v != dim and m ~ 1000,
// an output more accurate than torch's bf16 one (the reference code in float32, rounded once)
// differs from torch's by more than the old fixed 1e-2, and passes against the truth.
TEST(Check, MoreAccurateThanTorchPasses) {
  const Params p = Params({{"batch", int64_t{4}}, {"head", int64_t{3}}, {"rank", int64_t{5}}, {"dim", int64_t{64}},
                           {"dim_v", int64_t{96}}, {"m", int64_t{1021}}});
  const Point pt = make_point("tpa_decode", p, "bf16", "torch");
  const Inputs& in = cpu().inputs_for(pt);
  auto as = [&](at::ScalarType t) {
    Inputs wide;
    for (const auto& x : in.tensors) wide.tensors.push_back(x.to(t));
    return wide;
  };
  const Provider* torch = find_provider("tpa_decode", "torch");
  const at::Tensor once = torch->prepare(pt.params, as(at::kFloat))()[0].to(at::kBFloat16);
  const at::Tensor bf16 = torch->prepare(pt.params, in)()[0];
  const at::Tensor truth = torch->prepare(pt.params, as(at::kDouble))()[0];
  EXPECT_GT(output_errors({once}, make_truth({bf16})).norm, 1e-2) << "over the old fixed tolerance against torch's bf16 output";
  const Result r = cpu().measure(pt, quick_timing());  // the reference code's figures for this cell
  EXPECT_GT(r.ref_err, 5e-3) << "torch's own bf16 error";
  const OutputErrors e = output_errors({once}, make_truth({truth}));
  EXPECT_TRUE(check_passes("bf16", {e.norm, e.max, r.ref_err, r.ref_max_err})) << e.norm << " " << e.max;
  std::printf("torch's own error %.3g (largest element %.3g); float32 rounded once: %.3g against torch, %.3g "
              "(largest element %.3g) against the truth\n",
              r.ref_err, r.ref_max_err, output_errors({once}, make_truth({bf16})).norm, e.norm, e.max);
}

// A memory point's peak holds nothing of the check: measured after the speed points of its
// cell (the truth computed and held), it equals the peak measured first.
TEST(Check, MemoryPeakHoldsNoTruth) {
  const Params p = Params({{"batch", int64_t{2}}, {"head", int64_t{3}}, {"n", int64_t{257}}, {"dim", int64_t{64}},
                           {"act", "silu"}, {"act_dim", int64_t{-1}}, {"mode", "fwd"}});
  Point mem = make_point("act", p, "fp32", "torch");
  mem.params.set("metric", "memory");
  TorchExecutor ex("cpu");
  const double alone = ex.measure(mem, quick_timing()).samples.at(0);
  const Result speed = ex.measure(make_point("act", p, "fp32", "torch"), quick_timing());
  ASSERT_GE(speed.rel_err, 0);
  EXPECT_EQ(ex.measure(mem, quick_timing()).samples.at(0), alone);
}

// The CPU's speed points carry the control workload's median; memory points none.
TEST(Check, CpuSpeedPointsCarryTheControl) {
  const Params p = Params({{"batch", int64_t{2}}, {"head", int64_t{3}}, {"n", int64_t{64}}, {"dim", int64_t{64}},
                           {"act", "relu"}, {"act_dim", int64_t{-1}}, {"mode", "fwd"}});
  const Result r = cpu().measure(make_point("act", p, "fp32", "torch"), quick_timing());
  ASSERT_EQ(r.control.size(), 1u);
  EXPECT_GT(r.control[0], 0);
  EXPECT_LT(r.control[0], 100);
  Point mem = make_point("act", p, "fp32", "torch");
  mem.params.set("metric", "memory");
  EXPECT_TRUE(cpu().measure(mem, quick_timing()).control.empty());
}

// The reference provider's own point takes the reference code's figures without being called
// again, unless a fault is planted in its call; any other provider's call runs.
TEST(Check, ReferenceCodeIsNotCalledTwice) {
  const Params p = Params({{"batch", int64_t{2}}, {"head", int64_t{3}}, {"n", int64_t{67}}, {"dim", int64_t{64}},
                           {"act", "softmax"}, {"act_dim", int64_t{-2}}, {"mode", "bwd"}});
  const Point torch_point = make_point("act", p, "bf16", "torch");
  const Inputs& in = cpu().inputs_for(torch_point);
  const Call torch = find_provider("act", "torch")->prepare(torch_point.params, in);
  int calls = 0;
  const Call counted = [&] { ++calls; return torch(); };
  const at::Device dev("cpu");
  ReferenceCheck check;
  Result plain;
  EXPECT_TRUE(check.check(torch_point, "cell", in, dev, counted, /*plain=*/true, plain));
  EXPECT_EQ(calls, 0);
  EXPECT_GT(plain.rel_err, 0);
  EXPECT_EQ(plain.rel_err, plain.ref_err);
  EXPECT_EQ(plain.max_err, plain.ref_max_err);
  Result other;
  EXPECT_TRUE(check.check(make_point("act", p, "bf16", "fault_scale"), "cell", in, dev, counted, true, other));
  EXPECT_EQ(calls, 1);
  ReferenceCheck again;
  Result faulted;
  const Call scaled = planted({Plant{"*", Plant::scale, 0}}, "", counted);
  EXPECT_TRUE(again.check(torch_point, "cell", in, dev, scaled, /*plain=*/false, faulted));
  EXPECT_EQ(calls, 2);
  EXPECT_TRUE(faulted.check_failed);
  EXPECT_TRUE(alters_output(parse_plants("torch:scale"), "torch"));
  EXPECT_FALSE(alters_output(parse_plants("torch:slow=0.3"), "torch"));
  EXPECT_FALSE(alters_output(parse_plants("cuda:element"), "torch"));
}

// ---------------------------------------------------------------- OPBENCH_PLANT

TEST(Plant, Parse) {
  const auto plants = parse_plants("torch:slow=0.3,*:element,cuda_b:tail,cuda:scale");
  ASSERT_EQ(plants.size(), 4u);
  EXPECT_EQ(plants[0].kind, Plant::slow);
  EXPECT_DOUBLE_EQ(plants[0].slow_fraction, 0.3);
  EXPECT_EQ(plants[1].provider, "*");
  EXPECT_EQ(plants[2].kind, Plant::tail);
  EXPECT_EQ(plants[3].kind, Plant::scale);
  for (const char* bad : {"", "torch", ":element", "torch:wrong", "torch:slow=", "torch:slow=-1", "torch:slow=x",
                          "torch:slow=0.3@", "torch:slow=0.3@x", "torch:slow=0.3@-1", "torch:slow=0.3@100"})
    EXPECT_THROW(parse_plants(bad), InputError) << bad;
}

TEST(Plant, OneRoundProcess) {
  const auto plants = parse_plants("torch:slow=1@1,cuda:scale");
  ASSERT_EQ(plants.size(), 2u);
  EXPECT_EQ(plants[0].kind, Plant::slow);
  EXPECT_EQ(plants[0].process, 1);
  EXPECT_EQ(plants[1].process, -1);
  EXPECT_DOUBLE_EQ(planted_stretch(plants_in_process(plants, 1), "torch"), 2.0);
  EXPECT_DOUBLE_EQ(planted_stretch(plants_in_process(plants, 0), "torch"), 1.0);
  EXPECT_EQ(plants_in_process(plants, 0).size(), 1u);  // the unbound plant acts everywhere
}

TEST(Plant, FaultsLeaveTheOutputAlone) {
  const at::Tensor x = at::arange(300, at::kFloat);
  const at::Tensor keep = x.clone();
  const at::Tensor tail = plant_fault(x, Plant::tail);
  EXPECT_TRUE(at::equal(x, keep));  // a call that returns its input gets it back unchanged
  EXPECT_TRUE(at::equal(tail.narrow(0, 0, 256), x.narrow(0, 0, 256)));
  const double rms = x.pow(2).mean().sqrt().item<double>();
  EXPECT_TRUE(at::allclose(tail.narrow(0, 256, 44), at::full({44}, rms)));
  EXPECT_TRUE(at::allclose(plant_fault(x, Plant::scale), x * 1.05));
  EXPECT_EQ((plant_fault(x, Plant::element) != x).sum().item<int64_t>(), 1);
}

TEST(Plant, OnlyTheNamedProvider) {
  int calls = 0;
  const Call call = [&]() -> std::vector<at::Tensor> {
    ++calls;
    return {at::ones({3})};
  };
  const std::vector<Plant> plants = parse_plants("cuda:scale");
  EXPECT_TRUE(at::equal(planted(plants, "torch", call)()[0], at::ones({3})));
  EXPECT_TRUE(at::allclose(planted(plants, "cuda", call)()[0], at::ones({3}) * 1.05));
  EXPECT_EQ(calls, 2);
}

}  // namespace

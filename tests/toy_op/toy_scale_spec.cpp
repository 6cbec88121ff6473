// toy_scale: o = scale * x, x (b, n, d) -> o, same shape. A test-only op, laid out as a real op's
// files are (docs/adding-an-op.md): this file is its src/ops/<op>.cpp, toy_scale_eager.cpp
// its baselines/eager/ function and provider, toy_scale.yaml its configs/<op>.yaml. Linked only
// into opbench_toy (tests/CMakeLists.txt), which tests/cli/toy_op_test.sh sweeps on the CPU.
// Minimal bytes: forward 2|x| (read x, write o), backward 2|x| (read do, write dx).
#include "ops/op.hpp"

namespace opbench {

namespace {

OpSpec make_spec() {
  OpSpec s;
  s.name = "toy_scale";
  s.help = "a test-only op: o = scale * x; x (b, n, d)";
  s.axes = {axis_int("batch", 2, "b"), axis_int("n", std::nullopt, "sequence"), axis_int("dim", 16, "d"),
            axis_int("scale", 2, "the factor")};
  for (auto& a : common_axes()) s.axes.push_back(a);  // dtype, mode, metric
  s.modes = {"fwd", "bwd"};
  s.x_axes = {"n"};
  s.providers = {{"torch", "LibTorch eager"}};
  s.title = "{op}-{metric}-{mode}-batch{batch}-dim{dim}-scale{scale}-{dtype}";
  s.validate = [](const Params& p) {
    if (p.i("scale") > 1000) throw AxisError("scale", "toy_scale takes a scale up to 1000");
  };
  s.inputs = [](const Params& p) {
    return std::vector<TensorSpec>{{"x", {p.i("batch"), p.i("n"), p.i("dim")}, true, Fill::Normal, true}};
  };
  s.output_shape = [](const Params& p) { return std::vector<int64_t>{p.i("batch"), p.i("n"), p.i("dim")}; };
  s.min_bytes = [](const Params& p) {
    return 2.0 * double(p.i("batch")) * p.i("n") * p.i("dim") * dtype_bytes(p.s("dtype"));
  };
  return s;
}

const OpRegistration registration(make_spec);

}  // namespace

}  // namespace opbench

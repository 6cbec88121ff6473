// act: an activation, optionally along a dimension. x (b, h, n, d) -> o, same shape.
// Minimal bytes: forward 2|x| (none: 0, the identity returns x), backward 3|x| (none: 0).
#include "ops/op.hpp"

namespace opbench {

namespace {

OpSpec make_spec() {
  OpSpec s;
  s.name = "act";
  s.help = "activation (none, relu, sigmoid, silu, softmax over d or n); x (b, h, n, d)";
  s.axes = {axis_int("batch", 12, "b"), axis_int("head", 12, "h"), axis_int("n", std::nullopt, "sequence"),
            axis_int("dim", 128, "d")};
  for (auto& a : act_axes(-1)) s.axes.push_back(a);
  for (auto& a : common_axes()) s.axes.push_back(a);
  s.modes = {"fwd", "bwd"};
  s.x_axes = {"n"};
  s.providers = {{"cuda", "our CUDA kernels"}, {"torch", "LibTorch eager"}, {"torch_compile", "TorchInductor, compiled ahead of time (AOTInductor)"}};
  s.validate = [](const Params& p) { validate_act(p, {-1, -2}); };
  s.title = std::string("{op}-{metric}-{mode}-batch{batch}-head{head}-dim{dim}-") + kActTitle + "-{dtype}";
  s.inputs = [](const Params& p) {
    return std::vector<TensorSpec>{
        {"x", {p.i("batch"), p.i("head"), p.i("n"), p.i("dim")}, true, Fill::Normal, true}};
  };
  s.output_shape = [](const Params& p) {
    return std::vector<int64_t>{p.i("batch"), p.i("head"), p.i("n"), p.i("dim")};
  };
  s.min_bytes = [](const Params& p) {
    double x = double(p.i("batch")) * p.i("head") * p.i("n") * p.i("dim") * dtype_bytes(p.s("dtype"));
    if (p.s("act") == "none") return 0.0;
    return p.s("mode") == "fwd" ? 2 * x : 3 * x;
  };
  return s;
}

const OpRegistration registration(make_spec);

}  // namespace

}  // namespace opbench

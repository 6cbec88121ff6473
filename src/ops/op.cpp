// Axis helpers shared by the op specs.
#include "ops/op.hpp"

#include <stdexcept>

namespace opbench {

const AxisSpec* OpSpec::axis(const std::string& n) const {
  for (const auto& a : axes)
    if (a.name == n) return &a;
  return nullptr;
}

int dtype_bytes(const std::string& dtype) {
  if (dtype == "fp32") return 4;
  if (dtype == "bf16" || dtype == "fp16") return 2;
  throw AxisError("dtype", "unknown dtype '" + dtype + "' (bf16, fp16 or fp32)");
}

int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (auto s : shape) n *= s;
  return n;
}

AxisSpec axis_int(std::string name, std::optional<int64_t> fallback, std::string help,
                  bool positive) {
  AxisSpec a;
  a.name = std::move(name);
  a.kind = AxisKind::Int;
  if (fallback) a.fallback = Value(*fallback);
  a.positive = positive;
  a.help = std::move(help);
  return a;
}

AxisSpec axis_word(std::string name, std::optional<std::string> fallback,
                   std::vector<std::string> choices, std::string help) {
  AxisSpec a;
  a.name = std::move(name);
  a.kind = AxisKind::Word;
  if (fallback) a.fallback = Value(*fallback);
  a.choices = std::move(choices);
  a.help = std::move(help);
  return a;
}

std::vector<AxisSpec> common_axes() {
  return {
      axis_word("dtype", "bf16", {"bf16", "fp16", "fp32"}, "storage dtype"),
      axis_word("mode", "fwd", {"fwd", "bwd"}, "forward, or the input gradient"),
      axis_word("metric", "speed", {"speed", "memory"}, "time per call (ms) or peak memory (MiB)"),
  };
}

std::vector<AxisSpec> act_axes(int64_t default_act_dim) {
  return {
      axis_word("act", "none", {"none", "relu", "sigmoid", "silu", "softmax"}, "activation"),
      axis_int("act_dim", default_act_dim, "softmax dimension", /*positive=*/false),
  };
}

void validate_act(const Params& p, const std::vector<int64_t>& allowed_dims) {
  if (p.s("act") != "softmax") return;
  int64_t d = p.i("act_dim");
  for (auto a : allowed_dims)
    if (a == d) return;
  std::string list;
  for (auto a : allowed_dims) list += (list.empty() ? "" : " or ") + std::to_string(a);
  throw AxisError("act_dim", "softmax over dim " + std::to_string(d) + " is not supported (" +
                                 list + ")");
}

std::string act_title(const Params& p) {
  std::string t = "-act_" + p.s("act");
  if (p.s("act") == "softmax") t += "-dim_" + std::to_string(p.i("act_dim"));
  return t;
}

}  // namespace opbench

namespace opbench {

double x_bytes(const Params& p) {
  return double(p.i("batch")) * p.i("head") * p.i("n") * p.i("dim") * dtype_bytes(p.s("dtype"));
}

OpSpec lrpe_1d_base(const std::string& name, int64_t theta_div) {
  OpSpec s;
  s.name = name;
  s.axes = {axis_int("batch", 12, "b"), axis_int("head", 12, "h"), axis_int("n", std::nullopt, "sequence"),
            axis_int("dim", 128, "d"), axis_int("offset", 0, "position of the first token", false)};
  for (auto& a : act_axes(-1)) s.axes.push_back(a);
  for (auto& a : common_axes()) s.axes.push_back(a);
  s.modes = {"fwd", "bwd"};
  s.x_axes = {"n"};
    s.providers = {{"cuda", "our CUDA kernels"}, {"torch", "LibTorch eager"}, {"torch_compile", "TorchInductor, compiled ahead of time (AOTInductor)"}};
  s.validate = [](const Params& p) {
    if (p.i("offset") < 0) throw AxisError("offset", "must be >= 0");
    validate_act(p, {-1, 1});
  };
  s.default_title = [name](const Params& p) {
    return name + "-" + p.s("metric") + "-" + p.s("mode") + "-batch" + std::to_string(p.i("batch")) +
           "-head" + std::to_string(p.i("head")) + "-dim" + std::to_string(p.i("dim")) + act_title(p) +
           "-" + p.s("dtype");
  };
  s.inputs = [theta_div](const Params& p) {
    return std::vector<TensorSpec>{
        {"x", {p.i("batch"), p.i("n"), p.i("head"), p.i("dim")}, true, Fill::Normal, true},
        {"theta", {p.i("head"), p.i("dim") / theta_div}, false, Fill::Theta, false}};
  };
  return s;
}

}  // namespace opbench

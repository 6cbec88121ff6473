// Axis helpers shared by the op specs.
#include "ops/op.hpp"

#include <stdexcept>

#include "ops/title.hpp"

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

const char* const kActTitle = "act_{act}{?act=softmax:-dim_{act_dim}}";

const char* fill_name(Fill f) {
  switch (f) {
    case Fill::Uniform01: return "uniform01";
    case Fill::Theta: return "theta";
    default: return "normal";
  }
}

std::string OpSpec::default_title(const Params& p) const { return TitleTemplate(title).render(name, p); }

Params OpSpec::with_defaults(Params p) const {
  for (const auto& a : axes)
    if (!p.has(a.name) && a.fallback) p.set(a.name, *a.fallback);
  for (const auto& x : x_axes)
    if (!p.has(x)) p.set(x, int64_t(1));
  return p;
}

bool OpSpec::parse_title(const std::string& text, Params* out) const {
  auto accept = [&](const Params& spelt) {
    try {
      const Params full = with_defaults(spelt);
      if (default_title(full) != text) return false;
      validate(full);
      return true;
    } catch (const std::exception&) {
      return false;
    }
  };
  return TitleTemplate(title).parse(text, name, [this](const std::string& a) { return axis(a); }, accept, out);
}

}  // namespace opbench

namespace opbench {

double x_bytes(const Params& p) {
  return double(p.i("batch")) * p.i("head") * p.i("n") * p.i("dim") * dtype_bytes(p.s("dtype"));
}

double lrpe_min_bytes(const Params& p, double x_size, int64_t out_parts) {
  if (p.s("mode") == "fwd") return double(1 + out_parts) * x_size;
  return p.s("act") == "none" ? double(1 + out_parts) * x_size : double(2 + out_parts) * x_size;
}

OpSpec lrpe_1d_base(const std::string& name, int64_t theta_div, int64_t out_parts) {
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
  s.title = std::string("{op}-{metric}-{mode}-batch{batch}-head{head}-dim{dim}-") + kActTitle + "-{dtype}";
  s.inputs = [theta_div](const Params& p) {
    return std::vector<TensorSpec>{
        {"x", {p.i("batch"), p.i("n"), p.i("head"), p.i("dim")}, true, Fill::Normal, true},
        {"theta", {p.i("head"), p.i("dim") / theta_div}, false, Fill::Theta, false}};
  };
  s.output_shape = [out_parts](const Params& p) {
    return std::vector<int64_t>{p.i("batch"), p.i("n"), p.i("head"), out_parts * p.i("dim")};
  };
  s.min_bytes = [out_parts](const Params& p) { return lrpe_min_bytes(p, x_bytes(p), out_parts); };
  return s;
}

}  // namespace opbench

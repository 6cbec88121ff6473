// lrpe_cosine_md: cosine LRPE over a 1d/2d/3d grid with l extra tokens (no position).
// x (b, h, l + N, d), N = n^md (a cube of side n); theta (h, e) float32, e * md >= d
// (default e = ceil(d / md)). angle[s, h, j] = c_{j / e}(s) * theta[h, j % e]; extra tokens 0.
// o = concat(xa cos, xa sin) -> (b, h, l + N, 2d), xa = act(x) over all l + N tokens.
// Minimal bytes as lrpe_cosine: forward 3|x|; backward 3|x| (+|x| when the act needs x).
#include <limits>

#include "ops/op.hpp"

namespace opbench {

static int64_t md_tokens(const Params& p) {
  int64_t n = p.i("n"), N = 1;
  for (int64_t k = 0; k < p.i("md"); ++k) N *= n;
  return N;
}

static int64_t md_theta_width(const Params& p) {
  int64_t e = p.i("theta_dim");
  return e > 0 ? e : (p.i("dim") + p.i("md") - 1) / p.i("md");
}

namespace {

OpSpec make_spec() {
  OpSpec s;
  s.name = "lrpe_cosine_md";
  s.help = "cosine LRPE over a 1d/2d/3d grid (side n) with l extra tokens; x (b, h, l + n^md, d)";
  s.axes = {axis_int("batch", 12, "b"), axis_int("head", 12, "h"),
            axis_int("n", std::nullopt, "grid side (N = n^md tokens)"), axis_int("dim", 128, "d"),
            axis_int("md", 1, "grid dims (1, 2 or 3)"), axis_int("l", 0, "extra tokens", false),
            axis_int("theta_dim", 0, "theta width e (0: ceil(d / md))", false)};
  for (auto& a : act_axes(-1)) s.axes.push_back(a);
  for (auto& a : common_axes()) s.axes.push_back(a);
  s.modes = {"fwd", "bwd"};
  s.x_axes = {"n"};
  s.providers = {{"cuda", "our CUDA kernels, angle per element"}, {"cuda_cache", "our CUDA kernels, cached cos/sin table"}, {"torch", "LibTorch eager"}, {"torch_compile", "TorchInductor, compiled ahead of time (AOTInductor)"}};
  s.validate = [](const Params& p) {
    int64_t md = p.i("md");
    if (md < 1 || md > 3) throw AxisError("md", "must be 1, 2 or 3, got " + std::to_string(md));
    if (p.i("l") < 0) throw AxisError("l", "must be >= 0");
    if (p.i("theta_dim") < 0) throw AxisError("theta_dim", "must be >= 0");
    if (md_theta_width(p) * md < p.i("dim"))
      throw AxisError("theta_dim", "theta too small: e * md = " +
                                       std::to_string(md_theta_width(p) * md) + " < dim " +
                                       std::to_string(p.i("dim")));
    double tokens = 1;
    for (int64_t k = 0; k < md; ++k) tokens *= double(p.i("n"));
    if (tokens + p.i("l") > double(std::numeric_limits<int32_t>::max()))
      throw AxisError("n", "grid of " + std::to_string(tokens) + " tokens is too large");
    validate_act(p, {-1, -2});
  };
  // the reference documents name this op md_lrpe_cosine, and leave the act out when none
  s.title = std::string("md_lrpe_cosine-{metric}-{mode}-batch{batch}-head{head}-dim{dim}{?act!=none:-") +
            kActTitle + "}-{dtype}-{md}d-l{l}";
  s.inputs = [](const Params& p) {
    return std::vector<TensorSpec>{
        {"x", {p.i("batch"), p.i("head"), p.i("l") + md_tokens(p), p.i("dim")}, true, Fill::Normal, true},
        {"theta", {p.i("head"), md_theta_width(p)}, false, Fill::Theta, false}};
  };
  s.output_shape = [](const Params& p) {
    return std::vector<int64_t>{p.i("batch"), p.i("head"), p.i("l") + md_tokens(p), 2 * p.i("dim")};
  };
  s.min_bytes = [](const Params& p) {
    double x = double(p.i("batch")) * p.i("head") * (p.i("l") + md_tokens(p)) * p.i("dim") *
               dtype_bytes(p.s("dtype"));
    return lrpe_min_bytes(p, x, 2);
  };
  return s;
}

const OpRegistration registration(make_spec);

}  // namespace

}  // namespace opbench

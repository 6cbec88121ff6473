// toy_scale's eager function and its "torch" provider: what baselines/eager/<op>.cpp and the
// registration in baselines/eager/providers.cpp hold for a real op (here in one file, as the
// op is the tests' own). The provider is the op's reference: its code, run on inputs upcast to
// float32 (float64 on the CPU), is the truth every provider's output is checked against.
#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "baselines/eager/eager.h"
#include "torch/providers/provider.hpp"

namespace opbench {

namespace {

// The op as a PyTorch user writes it: float32 inside (wider with wider inputs), the result in
// x's dtype.
at::Tensor toy_scale_forward(const at::Tensor& x, int64_t scale) {
  return (x.to(eager::at_least_float32(x)) * double(scale)).to(x.scalar_type());
}

Provider toy_scale_torch() {
  Provider pr;
  pr.op = "toy_scale";
  pr.name = "torch";
  pr.help = "LibTorch eager: scale * x in float32, cast back";
  pr.unavailable = [](const at::Device&) { return std::string(); };
  pr.reference = true;
  pr.prepare = [](const Params& p, const Inputs& in) {
    const int64_t scale = p.i("scale");
    return eager::prepare_unary("toy_scale", p, in,
                                [scale](const at::Tensor& x) { return toy_scale_forward(x, scale); });
  };
  return pr;
}

const ProviderRegistration registration([] { return std::vector<Provider>{toy_scale_torch()}; });

}  // namespace

}  // namespace opbench

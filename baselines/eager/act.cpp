// act: an activation, optionally along a dimension (docs/ops.md "act").
#include <stdexcept>

#include "eager.h"

namespace opbench {
namespace eager {

void check_act(const char* op, const std::string& act, int64_t act_dim,
               const std::vector<int64_t>& allowed_dims) {
  if (act != "none" && act != "relu" && act != "sigmoid" && act != "silu" &&
      act != "softmax")
    throw std::invalid_argument(std::string(op) + ": unknown act '" + act + "'");
  if (act != "softmax") return;
  for (int64_t d : allowed_dims)
    if (d == act_dim) return;
  std::string allowed;
  for (int64_t d : allowed_dims) allowed += (allowed.empty() ? "" : ", ") + std::to_string(d);
  throw std::invalid_argument(std::string(op) + ": softmax act_dim " + std::to_string(act_dim) +
                              " is not one of " + allowed);
}

at::Tensor act_forward(const at::Tensor& x, const std::string& act, int64_t act_dim) {
  // The elementwise acts: ATen evaluates bf16/fp16 in float32 and rounds once.
  if (act == "none") return x;
  if (act == "relu") return at::relu(x);
  if (act == "sigmoid") return at::sigmoid(x);
  if (act == "silu") return at::silu(x);
  if (act == "softmax") {
    // F.softmax(x, dim, dtype=torch.float32).to(x.dtype)
    return at::softmax(x, act_dim, at_least_float32(x)).to(x.scalar_type());
  }
  throw std::invalid_argument("act: unknown act '" + act + "'");
}

}  // namespace eager
}  // namespace opbench

// The ops opbench knows: one line each.
#include "ops/op.hpp"

namespace opbench {

const OpSpec& act_op();
const OpSpec& lrpe_cosine_op();
const OpSpec& lrpe_rotate_op();
const OpSpec& lrpe_cosine_md_op();
const OpSpec& tpa_decode_op();

const std::vector<const OpSpec*>& all_ops() {
  static const std::vector<const OpSpec*> ops = {
      &act_op(),
      &lrpe_cosine_op(),
      &lrpe_rotate_op(),
      &lrpe_cosine_md_op(),
      &tpa_decode_op(),
  };
  return ops;
}

const OpSpec* find_op(const std::string& name) {
  for (auto* op : all_ops())
    if (op->name == name) return op;
  return nullptr;
}

}  // namespace opbench

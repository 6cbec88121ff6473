// The ops linked into this build: each registers itself from its own file (OpRegistration).
#include <algorithm>
#include <memory>

#include "ops/op.hpp"

namespace opbench {

namespace {

std::vector<std::function<OpSpec()>>& makers() {
  static std::vector<std::function<OpSpec()>> m;
  return m;
}

}  // namespace

OpRegistration::OpRegistration(std::function<OpSpec()> make) { makers().push_back(std::move(make)); }

const std::vector<const OpSpec*>& all_ops() {
  // Built on first use (after every registration has run), in name order.
  static const std::vector<std::unique_ptr<const OpSpec>> specs = [] {
    std::vector<std::unique_ptr<const OpSpec>> v;
    for (const auto& make : makers()) v.push_back(std::make_unique<const OpSpec>(make()));
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a->name < b->name; });
    return v;
  }();
  static const std::vector<const OpSpec*> ops = [] {
    std::vector<const OpSpec*> v;
    for (const auto& s : specs) v.push_back(s.get());
    return v;
  }();
  return ops;
}

const OpSpec* find_op(const std::string& name) {
  for (auto* op : all_ops())
    if (op->name == name) return op;
  return nullptr;
}

}  // namespace opbench

// The providers linked into this build: each family registers itself (ProviderRegistration).
#include <algorithm>

#include "torch/providers/provider.hpp"

namespace opbench {

namespace {

std::vector<std::function<std::vector<Provider>()>>& makers() {
  static std::vector<std::function<std::vector<Provider>()>> m;
  return m;
}

}  // namespace

ProviderRegistration::ProviderRegistration(std::function<std::vector<Provider>()> make) {
  makers().push_back(std::move(make));
}

const std::vector<Provider>& all_providers() {
  static const std::vector<Provider> all = [] {
    std::vector<Provider> v;
    for (const auto& make : makers())
      for (auto& p : make()) v.push_back(std::move(p));
    std::stable_sort(v.begin(), v.end(), [](const Provider& a, const Provider& b) {
      return a.op != b.op ? a.op < b.op : a.name < b.name;
    });
    return v;
  }();
  return all;
}

const Provider* find_provider(const std::string& op, const std::string& name) {
  for (const auto& p : all_providers())
    if (p.op == op && p.name == name) return &p;
  return nullptr;
}

const Provider* find_reference(const std::string& op) {
  for (const auto& p : all_providers())
    if (p.op == op && p.reference) return &p;
  return nullptr;
}

}  // namespace opbench

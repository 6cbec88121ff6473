// The providers linked into this build: one line per family.
#include "providers/provider.hpp"

#include "baselines/compiled/compiled.h"
#include "baselines/eager/eager.h"
#ifdef OPBENCH_WITH_CUDA
#include "kernels/providers.h"
#endif

namespace opbench {

const std::vector<Provider>& all_providers() {
  static const std::vector<Provider> all = [] {
    std::vector<Provider> v;
    auto add = [&](std::vector<Provider> ps) {
      for (auto& p : ps) v.push_back(std::move(p));
    };
    add(eager_providers());
    add(compiled_providers());
#ifdef OPBENCH_WITH_CUDA
    add(cuda_providers_1d());
    add(cuda_providers_md_tpa());
#endif
    return v;
  }();
  return all;
}

const Provider* find_provider(const std::string& op, const std::string& name) {
  for (const auto& p : all_providers())
    if (p.op == op && p.name == name) return &p;
  return nullptr;
}

}  // namespace opbench
